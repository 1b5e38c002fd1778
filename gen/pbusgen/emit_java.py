"""Back end: a typed Java class per interface (<Interface>.java).

The text lives in templates/java_class.java.j2; this module maps parameter
types onto the io.parambus API (ParamTable's getters, setters, readMany and
batch; the contract is docs/java.md's) and formats javadoc and literals.
Every identifier comes from the model (params.java_names()); the schema hash
comes from the schema back end through the command line, as for the C back
end.
"""

import textwrap
from functools import lru_cache
from typing import Dict, List, Tuple

import jinja2

from .model import EnumValue, JavaRecord, Model, Parameter

# scalar token -> (Java type, ParamTable getter expression with {t} the table
# and {i} the index, ParamTable setter, words on the Java type for javadoc)
_SCALARS: Dict[str, Tuple[str, str, str, str]] = {
    "bool": ("boolean", "{t}.getBoolean({i})", "setBoolean", "bool"),
    "int8": ("byte", "(byte) {t}.getInt({i})", "setInt", "int8"),
    "int16": ("short", "(short) {t}.getInt({i})", "setInt", "int16"),
    "int32": ("int", "{t}.getInt({i})", "setInt", "int32"),
    "int64": ("long", "{t}.getLong({i})", "setLong", "int64"),
    "uint8": ("int", "{t}.getInt({i})", "setInt", "uint8, as an int (0 to 255)"),
    "uint16": ("int", "{t}.getInt({i})", "setInt", "uint16, as an int (0 to 65535)"),
    "uint32": ("long", "{t}.getLong({i})", "setLong", "uint32, as a long (0 to 4294967295)"),
    "uint64": ("long", "{t}.getLong({i})", "setLong",
               "uint64, as a long holding its 64 bits (read it with "
               "Long.toUnsignedString(), Long.compareUnsigned() ...)"),
    "float": ("float", "{t}.getFloat({i})", "setFloat", "float"),
    "double": ("double", "{t}.getDouble({i})", "setDouble", "double"),
    "string": ("String", "{t}.getString({i})", "setString", "string (UTF-8)"),
    "bytes": ("byte[]", "{t}.getBytes({i})", "setBytes", "bytes"),
}

# array element token -> (Java array type, ParamTable getter, setter, the
# Sample decoder helper of the generated class, words for javadoc)
_ARRAYS: Dict[str, Tuple[str, str, str, str, str]] = {
    "bool": ("boolean[]", "getBooleanArray", "setBooleanArray", "booleans", "bool[]"),
    "int8": ("byte[]", "getByteArray", "setByteArray", "bytes", "int8[]"),
    "uint8": ("byte[]", "getByteArray", "setByteArray", "bytes",
              "uint8[], as a byte[] holding each element's bits "
              "(Byte.toUnsignedInt())"),
    "int16": ("short[]", "getShortArray", "setShortArray", "shorts", "int16[]"),
    "uint16": ("short[]", "getShortArray", "setShortArray", "shorts",
               "uint16[], as a short[] holding each element's bits "
               "(Short.toUnsignedInt())"),
    "int32": ("int[]", "getIntArray", "setIntArray", "ints", "int32[]"),
    "uint32": ("int[]", "getIntArray", "setIntArray", "ints",
               "uint32[], as an int[] holding each element's bits "
               "(Integer.toUnsignedLong())"),
    "int64": ("long[]", "getLongArray", "setLongArray", "longs", "int64[]"),
    "uint64": ("long[]", "getLongArray", "setLongArray", "longs",
               "uint64[], as a long[] holding each element's bits "
               "(Long.toUnsignedString())"),
    "float": ("float[]", "getFloatArray", "setFloatArray", "floats", "float[]"),
    "double": ("double[]", "getDoubleArray", "setDoubleArray", "doubles", "double[]"),
}

# How a record getter decodes one Sample ({s}) of a scalar leaf.
_SAMPLE_SCALARS = {
    "bool": "{s}.bits() != 0",
    "int8": "(byte) {s}.bits()",
    "int16": "(short) {s}.bits()",
    "int32": "(int) {s}.bits()",
    "int64": "{s}.bits()",
    "uint8": "(int) ({s}.bits() & 0xFFL)",
    "uint16": "(int) ({s}.bits() & 0xFFFFL)",
    "uint32": "{s}.bits() & 0xFFFFFFFFL",
    "uint64": "{s}.bits()",
    "float": "Float.intBitsToFloat((int) {s}.bits())",
    "double": "Double.longBitsToDouble({s}.bits())",
    "string": "string({s})",
    "bytes": "bytes({s})",
}

_TRUSTED = ("written by the table's trusted writers only (its owner's user and "
            "pbusd's --group, docs/security.md)")


def _num(v) -> str:
    """A limit, step or default as written in the deployment: 30, not 30.0."""
    if isinstance(v, float) and v.is_integer() and abs(v) < 1e16:
        return str(int(v))
    return str(v)


def _jdoc(text: str, indent: int = 4, first: str = "", cont: str = "") -> str:
    """Javadoc lines (` * ...`) holding @text, wrapped before column 100;
    @first goes before the text ("<p>"), @cont before each line after the
    first (a tag's continuation)."""
    prefix = " " * indent + " * "
    lines = textwrap.wrap(first + text, width=100 - len(prefix), subsequent_indent=cont,
                          break_long_words=False, break_on_hyphens=False)
    return "\n".join((prefix + line).rstrip() for line in lines)


@lru_cache(maxsize=None)
def _env() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.PackageLoader("pbusgen", "templates"),
        undefined=jinja2.StrictUndefined, keep_trailing_newline=True,
        trim_blocks=True, lstrip_blocks=True, autoescape=False)
    env.filters["jdoc"] = _jdoc
    return env


def doc(text: str) -> str:
    """Text that is safe inside a javadoc comment, on one line: HTML and
    javadoc's own characters escaped, \\u (which javac reads even in
    comments) and the comment's end broken."""
    out = []
    for ch in " ".join(text.split()):
        if ch == "&":
            out.append("&amp;")
        elif ch == "<":
            out.append("&lt;")
        elif ch == ">":
            out.append("&gt;")
        elif ch == "@":
            out.append("&#64;")
        elif ch == "\\":
            out.append("&#92;")
        elif ch in "{}":
            out.append("&#123;" if ch == "{" else "&#125;")
        elif ch == "/" and out and out[-1] == "*":
            out.append("&#47;")
        else:
            out.append(ch)
    return "".join(out)


def _java_string(text: str) -> str:
    """A Java string literal (the names printed here are identifiers and
    dots; anything else is escaped all the same)."""
    out = ['"']
    for ch in text:
        o = ord(ch)
        if ch in "\\\"":
            out.append("\\" + ch)
        elif 0x20 <= o < 0x7F:
            out.append(ch)
        else:
            out.extend(f"\\u{u:04x}" for u in _utf16(ch))
    out.append('"')
    return "".join(out)


def _utf16(ch: str) -> List[int]:
    data = ch.encode("utf-16-be")
    return [int.from_bytes(data[i:i + 2], "big") for i in range(0, len(data), 2)]


def _value_text(p: Parameter, v) -> str:
    """A default value as the javadoc shows it."""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, EnumValue):
        return v.name
    if isinstance(v, str):
        return '"' + v + '"'
    if isinstance(v, bytes):
        return "0x" + v.hex() if v else "empty"
    return _num(v)


def _facts(p: Parameter, words: str) -> str:
    """The one-paragraph summary of a parameter: type, unit, limits, step,
    default, update class, flags, who writes it."""
    parts = [words if p.enum is None else f"enum {p.enum.fqn}"]
    if p.size is not None:
        parts.append(f"at most {p.size} bytes")
    if p.count is not None:
        parts.append(f"at most {p.count} elements")
    if p.unit:
        parts.append(f"unit {p.unit}")
    if p.min is not None and p.max is not None:
        parts.append(f"limits {_num(p.min)} to {_num(p.max)}")
    elif p.min is not None:
        parts.append(f"minimum {_num(p.min)}")
    elif p.max is not None:
        parts.append(f"maximum {_num(p.max)}")
    if p.step is not None:
        parts.append(f"step {_num(p.step)}")
    if p.default is not None:
        if p.is_array:
            parts.append("default {" + ", ".join(_value_text(p, v) for v in p.default) + "}")
        else:
            parts.append(f"default {_value_text(p, p.default)}")
    text = ", ".join(parts) + f"; update class {p.update_class}"
    flags = [f for f in p.flags if f != "readonly"]
    if flags:
        text += "; " + ", ".join(flags)
    if p.readonly:
        text += ("; read-only: written by the instrument (a table opened with "
                 "ParamTable.Access.PROVIDER)")
    elif p.group is not None:
        text += (f"; writable by the table's trusted writers and, through pbusd's "
                 f"socket, by group {p.group}")
    else:
        text += "; " + _TRUSTED
    return doc(text) + "."


def _type(p: Parameter):
    """(Java type, getter expression on `table`, setter call with `value`,
    javadoc words)."""
    i = p.java_index
    if p.is_array:
        jtype, get, set_, _, words = _ARRAYS[p.element]
        return jtype, f"table.{get}({i})", f"table.{set_}({i}, value)", words
    if p.element == "enum":
        e = p.enum.java_name
        return e, f"{e}.of(table.getInt({i}))", f"table.setInt({i}, value.value())", ""
    jtype, get, set_, words = _SCALARS[p.element]
    return (jtype, get.format(t="table", i=i), f"table.{set_}({i}, value)", words)


def _param_view(p: Parameter) -> dict:
    jtype, getter, setter, words = _type(p)
    return {"p": p, "jtype": jtype, "read": getter, "write": setter,
            "desc": doc(p.desc) if p.desc else "",
            "facts": _facts(p, words),
            "capacity": p.count if p.is_array else p.size}


def _leaf_java_type(p: Parameter) -> str:
    return _type(p)[0]


def _record_view(r: JavaRecord) -> dict:
    comps = []
    for c in r.components:
        if c.record is not None:
            jtype = c.record.name
        else:
            jtype = _leaf_java_type(c.leaf)
        desc = c.field.desc or ""
        comps.append({"name": c.name, "jtype": jtype,
                      "desc": doc(desc) if desc else f"field {doc(c.field.name)}"})
    return {"r": r, "components": comps,
            "has_array": any(c.leaf is not None and c.leaf.is_array for c in r.components),
            "desc": doc(r.struct.desc) if r.struct.desc else ""}


def _decode(rec: JavaRecord, leaves, helpers: set):
    """`new R(...)` from the samples s[k] of its leaves, depth first, as a
    tree: (head, [arguments]) with each argument text or a tree."""
    args: list = []
    for c in rec.components:
        if c.record is not None:
            args.append(_decode(c.record, leaves, helpers))
            continue
        k, p = next(leaves)
        s = f"s[{k}]"
        if p.is_array:
            helper = _ARRAYS[p.element][3]
            helpers.add(helper)
            args.append(f"{helper}({s})")
        elif p.element == "enum":
            args.append(f"{p.enum.java_name}.of((int) {s}.bits())")
        else:
            if p.element in ("string", "bytes"):
                helpers.add(p.element)
            args.append(_SAMPLE_SCALARS[p.element].format(s=s))
    return (f"new {rec.name}(", args)


def _flat(tree) -> str:
    if isinstance(tree, str):
        return tree
    head, args = tree
    return head + ", ".join(_flat(a) for a in args) + ")"


def _layout(tree, column: int, indent: int, tail: str) -> str:
    """@tree as Java text that starts at @column, followed by @tail: on one
    line if it fits before column 100, else one argument a line, 8 columns
    further in than @indent (the line's own indentation)."""
    flat = _flat(tree)
    if isinstance(tree, str) or column + len(flat) + len(tail) <= 100:
        return flat + tail
    head, args = tree
    inner = indent + 8
    lines = []
    for n, a in enumerate(args):
        end = "," if n < len(args) - 1 else ")" + tail
        lines.append(" " * inner + _layout(a, inner, inner, end))
    return head + "\n" + "\n".join(lines)


def _encode(rec: JavaRecord, path: str, leaves, out: List[str]) -> None:
    """The batch setter calls for the leaves of @rec, read from @path."""
    for c in rec.components:
        getter = f"{path}.{c.name}()"
        if c.record is not None:
            _encode(c.record, getter, leaves, out)
            continue
        p = next(leaves)
        if p.is_array:
            out.append(f".{_ARRAYS[p.element][2]}({p.java_index}, {getter})")
        elif p.element == "enum":
            out.append(f".setInt({p.java_index}, {getter}.value())")
        else:
            out.append(f".{_SCALARS[p.element][2]}({p.java_index}, {getter})")


def _struct_view(a, helpers: set) -> dict:
    leaves = a.parameters
    decode = _layout(_decode(a.record, iter(enumerate(leaves)), helpers),
                     len("        return "), 8, ";")
    indexes = ", ".join(p.java_index for p in leaves)
    if len("        table.readMany(new int[] {") + len(indexes) + len("}, s);") > 100:
        indexes = "\n" + ",\n".join(" " * 16 + p.java_index for p in leaves) + "\n" + " " * 8
    calls: List[str] = []
    _encode(a.record, "value", iter(leaves), calls)
    return {"a": a, "record": a.record.name,
            "has_enum": any(p.element == "enum" for p in leaves),
            "desc": doc(a.attribute.desc) if a.attribute.desc else "",
            "names": ", ".join(f"{{@code {p.name}}}" for p in leaves),
            "indexes": indexes,
            "count": len(leaves), "decode": decode, "encode": calls}


def render(model: Model, schema_hash: int) -> Tuple[str, str]:
    """(path of the class relative to the output folder, its text)."""
    j = model.java
    itf = model.interface
    helpers: set = set()
    structs = [_struct_view(a, helpers) for a in j.struct_access]
    ctx = {
        "banner": f"// AUTO-GENERATED by pbus-gen from "
                  f"{', '.join(model.source_files)} - do not edit",
        "j": j,
        "interface": itf,
        "interface_string": _java_string(itf.fqn),
        "interface_desc": doc(itf.desc) if itf.desc else "",
        "hash": f"0x{schema_hash:016x}L",
        "params": [_param_view(p) for p in model.parameters],
        "enums": [{"e": e, "desc": doc(e.desc) if e.desc else "",
                   "message": _java_string(f"): no enumerator of {e.fqn} has that value"),
                   "enumerators": [{"en": en, "desc": doc(en.desc) if en.desc else ""}
                                   for en in e.enumerators]}
                  for e in model.enums],
        "records": [_record_view(r) for r in j.records],
        "structs": structs,
        "helpers": sorted(helpers),
        "uses_sample": bool(structs),
    }
    return j.path, _env().get_template("java_class.java.j2").render(ctx)
