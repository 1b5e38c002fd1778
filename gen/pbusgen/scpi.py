"""SCPI: the keys `ScpiKeyword`, `ScpiAccess`, `ScpiEnum` of parameters,
`ScpiKeyword` and `ScpiAccess` of methods, their checks, the compiled
command tree and the command reference.

check(model) parses every parameter's keyword into a Command (its nodes,
optional ones marked, the numeric suffixes), checks it against its parameter
(access, arrays, enumerator mnemonics) and then across the schema: two
parameters whose keywords can match one header with overlapping access are
an error at the second one's `ScpiKeyword`. render_tree() writes the tree
file that pbus-scpi loads (format: docs/scpi.md), render_reference() the
instrument's command reference in Markdown. Both are deterministic.

The rules (SCPI-99 volume 1, chapter 6): a node is a mnemonic whose
upper-case head is its short form and the whole its long form; a header
matches if each node is given as its short or its long form, in any case;
a node in brackets may be left out; a numeric suffix written on a node is
fixed (`OUTPut2`), and a node without one is the same as suffix 1; `#` takes
any suffix from 1 to the array's length and addresses that element.
"""

import re
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Tuple

from .errors import GenError, Location, shown
from .model import (INT_RANGES, BasicType, EnumType, EnumValue, IntegerType, Method, Model,
                    Parameter, unalias)

TREE_FORMAT = "pbus-scpi-tree"
TREE_VERSION = 2
MAX_MNEMONIC = 12           # SCPI-99 6.2.1: at most 12 characters
MAX_NODES = 12
MAX_OPTIONAL = 6            # 64 header forms at most per keyword
MAX_SUFFIX = 999999
ANY_SUFFIX = None           # Node.suffix of `#`
INTEGER_ELEMENTS = set(INT_RANGES) | {"enum"}

_NODE = re.compile(r"([A-Z]+)([a-z]*)(#|[1-9][0-9]*)?")
_ENUM_MNEMONIC = re.compile(r"[A-Z][A-Z0-9_]*[a-z0-9_]*")
_FIRST = re.compile(r"\[([^\[\]:]*):\]|:?([^\[\]:]*)")
_NEXT = re.compile(r"\[:([^\[\]:]*)\]|:([^\[\]:]*)")
_AFTER_OPTIONAL_FIRST = re.compile(r"(\x00)?([^\[\]:]+)")

# Parameter units that have a SCPI suffix unit (IEEE 488.2 7.7.3.4, SCPI-99
# volume 1 chapter 7.3): parameter unit -> SCPI unit mnemonic.
SUFFIX_UNITS = {"V": "V", "A": "A", "W": "W", "Hz": "HZ", "s": "S", "Ohm": "OHM",
                "ohm": "OHM", "\u03a9": "OHM", "degC": "CEL", "\u00b0C": "CEL",
                "%": "PCT", "dB": "DB", "J": "J", "F": "F", "H": "H"}
# SI prefixes a parameter unit may carry ("mV" is V with a factor 1e-3).
UNIT_PREFIXES = {"p": "1e-12", "n": "1e-9", "u": "1e-6", "\u00b5": "1e-6", "m": "1e-3",
                 "k": "1e3", "M": "1e6", "G": "1e9"}


@dataclass(frozen=True)
class Node:
    long: str                   # "VOLTage": the case marks the short form
    suffix: Optional[int]       # the fixed suffix (1 when none written), None: `#`
    written_suffix: bool        # a suffix was written ("OUTPut1", "OUTPut#")
    optional: bool

    @property
    def short(self) -> str:
        return re.match(r"[A-Z]*", self.long).group(0)

    def forms(self) -> Tuple[str, ...]:
        return tuple(sorted({self.short, self.long.upper()}))

    def text(self) -> str:
        if self.suffix is ANY_SUFFIX:
            return self.long + "#"
        return self.long + (str(self.suffix) if self.written_suffix else "")


@dataclass
class Command:
    parameter: Optional[Parameter]  # None for a method's command
    keyword: str
    loc: Location
    nodes: List[Node]
    access: str                 # query, set, both
    element_suffix: bool        # a `#` node addresses an array element
    suffix_unit: Optional[str] = None
    unit_factor: str = "1"
    mnemonics: List[Tuple[int, str]] = field(default_factory=list)  # (value, MNEMonic)
    method: Optional["MethodCommand"] = None

    @property
    def name(self) -> str:
        return self.parameter.name if self.parameter else self.method.name

    @property
    def what(self) -> str:
        """How errors name the command's owner."""
        return f"'{self.name}'" if self.parameter else f"method '{self.name}'"

    @property
    def count(self) -> int:
        return (self.parameter.count or 0) if self.parameter else 0

    def paths(self) -> List[Tuple[Node, ...]]:
        """Every header form, all optional nodes present first."""
        optional = [i for i, n in enumerate(self.nodes) if n.optional]
        out = []
        for mask in range(1 << len(optional)):
            left_out = {optional[j] for j in range(len(optional)) if mask >> j & 1}
            out.append(tuple(n for i, n in enumerate(self.nodes) if i not in left_out))
        return out


def _key_loc(p: Parameter, key: str) -> Location:
    return p.origins.get(key) or p.loc


def parse_keyword(text: str, loc: Location, where: str) -> Tuple[List[Node], bool]:
    """The nodes of a keyword and whether it ends in `?` (query only)."""
    def bad(why: str):
        raise GenError(loc, f"'ScpiKeyword' of {where}: \"{shown(text)}\" {why}")

    body, query = (text[:-1], True) if text.endswith("?") else (text, False)
    if not body:
        bad("is empty")
    nodes: List[Node] = []
    pos = 0
    while pos < len(body):
        after_first = len(nodes) == 1 and nodes[0].optional and body[pos - 1] == "]"
        m = (_FIRST if pos == 0 else
             _AFTER_OPTIONAL_FIRST if after_first else _NEXT).match(body, pos)
        if m is None or m.end() == pos:
            bad(f"is not a SCPI keyword at character {pos + 1}: expected ':NODE' or "
                "'[:NODE]' (or '[NODE:]' first)")
        optional = m.group(1) is not None
        name = m.group(1) if optional else m.group(2)
        nm = _NODE.fullmatch(name)
        if nm is None:
            bad(f"has a node '{shown(name)}' that is not a SCPI mnemonic (its short "
                "form in upper case, the rest of its long form in lower case, then "
                "an optional numeric suffix or '#')")
        long = nm.group(1) + nm.group(2)
        if len(long) > MAX_MNEMONIC:
            bad(f"has a node '{long}' of {len(long)} letters, above the limit of "
                f"{MAX_MNEMONIC}")
        suffix_text = nm.group(3)
        if suffix_text == "#":
            suffix: Optional[int] = ANY_SUFFIX
        elif suffix_text:
            suffix = int(suffix_text)
            if suffix > MAX_SUFFIX:
                bad(f"has a suffix {suffix} above the limit of {MAX_SUFFIX}")
        else:
            suffix = 1
        nodes.append(Node(long, suffix, suffix_text is not None, optional))
        pos = m.end()
    if len(nodes) > MAX_NODES:
        bad(f"has {len(nodes)} nodes, above the limit of {MAX_NODES}")
    if all(n.optional for n in nodes):
        bad("has no node that is not optional")
    if sum(n.optional for n in nodes) > MAX_OPTIONAL:
        bad(f"has more than {MAX_OPTIONAL} optional nodes")
    if sum(n.suffix is ANY_SUFFIX for n in nodes) > 1:
        bad("has more than one '#' suffix")
    return nodes, query


def _enum_mnemonics(p: Parameter, where: str) -> List[Tuple[int, str]]:
    """(value, mnemonic) of each enumerator: ScpiEnum's LABEL=MNEMonic pairs,
    the others their label in upper case (whole, no short form)."""
    assert p.enum is not None
    given: Dict[str, str] = {}
    loc = _key_loc(p, "ScpiEnum")
    labels = {e.name for e in p.enum.enumerators}
    if p.scpi_enum is not None:
        for pair in p.scpi_enum.replace(",", " ").split():
            label, eq, mnemonic = pair.partition("=")
            if not eq or not label or not mnemonic:
                raise GenError(loc, f"'ScpiEnum' of {where}: found '{shown(pair)}', "
                                    "expected LABEL=MNEMonic")
            if label not in labels:
                raise GenError(loc, f"'ScpiEnum' of {where}: no enumerator '{shown(label)}' "
                                    f"in {p.enum.fqn}")
            if label in given:
                raise GenError(loc, f"'ScpiEnum' of {where}: enumerator '{label}' is "
                                    "given twice")
            given[label] = mnemonic
    out: List[Tuple[int, str]] = []
    seen: Dict[str, str] = {}
    for e in p.enum.enumerators:
        mnemonic = given.get(e.name, e.name.upper())
        origin = "ScpiEnum" if e.name in given else "its label"
        at = loc if e.name in given else _key_loc(p, "ScpiKeyword")
        if not _ENUM_MNEMONIC.fullmatch(mnemonic) or len(mnemonic) > MAX_MNEMONIC:
            raise GenError(at, f"enumerator '{e.name}' of {where}: mnemonic "
                               f"'{shown(mnemonic)}' (from {origin}) is not a SCPI "
                               f"mnemonic of at most {MAX_MNEMONIC} characters (upper-case "
                               "short form, then lower case); give one with "
                               "ScpiEnum = \"LABEL=MNEMonic\"")
        short = re.match(r"[A-Z0-9_]*", mnemonic).group(0)
        for form in {short, mnemonic.upper()}:
            if form in seen:
                raise GenError(at, f"enumerator '{e.name}' of {where}: mnemonic "
                                   f"'{mnemonic}' can be read as '{seen[form]}' ({form})")
        for form in {short, mnemonic.upper()}:
            seen[form] = mnemonic
        out.append((e.value, mnemonic))
    return out


def _suffix_unit(unit: Optional[str]) -> Tuple[Optional[str], str]:
    if unit is None:
        return None, "1"
    if unit in SUFFIX_UNITS:
        return SUFFIX_UNITS[unit], "1"
    if len(unit) > 1 and unit[0] in UNIT_PREFIXES and unit[1:] in SUFFIX_UNITS:
        return SUFFIX_UNITS[unit[1:]], UNIT_PREFIXES[unit[0]]
    return None, "1"


def _command(p: Parameter) -> Command:
    where = f"'{p.name}'"
    loc = _key_loc(p, "ScpiKeyword")
    nodes, query_mark = parse_keyword(p.scpi_keyword, loc, where)
    default = "set" if p.no_read else "query" if p.readonly else "both"
    access = p.scpi_access or ("query" if query_mark else default)
    aloc = _key_loc(p, "ScpiAccess")
    if query_mark and access != "query":
        raise GenError(aloc, f"'ScpiAccess' of {where}: {access}, but the keyword "
                             f"\"{shown(p.scpi_keyword)}\" ends in '?' (query only)")
    if p.readonly and access != "query":
        raise GenError(aloc if p.scpi_access else loc,
                       f"'ScpiAccess' of {where}: {access} on a readonly attribute; "
                       "only 'query' applies")
    if p.no_read and access != "set":
        raise GenError(aloc if p.scpi_access else loc,
                       f"'ScpiAccess' of {where}: {access} on a noRead attribute; "
                       "only 'set' applies")
    element = any(n.suffix is ANY_SUFFIX for n in nodes)
    if element and not p.is_array:
        raise GenError(loc, f"'ScpiKeyword' of {where}: '#' addresses an array "
                            f"element, and {where} is of type {p.type}")
    unit, factor = _suffix_unit(p.unit)
    cmd = Command(p, p.scpi_keyword, loc, nodes, access, element, unit, factor)
    if p.enum is not None:
        cmd.mnemonics = _enum_mnemonics(p, where)
    return cmd


# --- methods ----------------------------------------------------------------------

@dataclass
class MethodArg:
    name: str
    token: str                  # bool, int8 … uint64, integer:LO:HI, float, double,
                                # string, bytes, enum
    mnemonics: List[Tuple[int, str]] = field(default_factory=list)  # enum: (value, MNEMONIC)
    desc: Optional[str] = None
    franca: str = ""            # the Franca type as written, for the reference


@dataclass
class MethodCommand:
    method: Method
    name: str                   # as the schema names it ("describe:short")
    index: int                  # on the wire (docs/methods.md §3)
    in_args: List[MethodArg]
    out_args: List[MethodArg]
    errors: List[Tuple[int, str]]   # the error enumeration's (value, LABEL)
    command: Optional[Command] = None


# The Franca types a SCPI value carries (a method's arguments), by the kind
# of their token.
SCALAR_WORDS = ("Boolean, integers, Float, Double, String, ByteBuffer and "
                "enumerations")


def _method_arg(arg, where: str, loc: Location) -> MethodArg:
    t = unalias(arg.type)
    out = MethodArg(arg.name, "", desc=arg.desc, franca=str(arg.type))
    if isinstance(t, BasicType) and t.token != "undefined":
        out.token = t.token
    elif isinstance(t, IntegerType):
        lo = "" if t.lower is None else str(t.lower)
        hi = "" if t.upper is None else str(t.upper)
        out.token = f"integer:{lo}:{hi}"
    elif isinstance(t, EnumType):
        out.token = "enum"
        seen: Dict[str, str] = {}
        for e in t.enumerators:
            mnemonic = e.name.upper()
            if not _ENUM_MNEMONIC.fullmatch(mnemonic) or len(mnemonic) > MAX_MNEMONIC:
                raise GenError(loc, f"'ScpiKeyword' of {where}: enumerator '{e.name}' of "
                                    f"argument '{arg.name}' ({t.fqn}): its mnemonic "
                                    f"'{shown(mnemonic)}' (the label in upper case) is "
                                    f"not a SCPI mnemonic of at most {MAX_MNEMONIC} "
                                    "characters")
            if mnemonic in seen:
                raise GenError(loc, f"'ScpiKeyword' of {where}: enumerators "
                                    f"'{seen[mnemonic]}' and '{e.name}' of argument "
                                    f"'{arg.name}' have the same mnemonic '{mnemonic}'")
            seen[mnemonic] = e.name
            out.mnemonics.append((e.value, mnemonic))
    else:
        raise GenError(loc, f"'ScpiKeyword' of {where}: argument '{arg.name}' is of "
                            f"type {arg.type}, which no SCPI value carries (only "
                            f"{SCALAR_WORDS})")
    return out


def _method_command(m: Method, index: int) -> Command:
    name = m.name + (f":{m.selector}" if m.selector else "")
    where = f"method '{name}'"
    loc = m.scpi_origins.get("ScpiKeyword") or m.loc
    aloc = m.scpi_origins.get("ScpiAccess") or loc
    nodes, query_mark = parse_keyword(m.scpi_keyword, loc, where)
    if any(n.suffix is ANY_SUFFIX for n in nodes):
        raise GenError(loc, f"'ScpiKeyword' of {where}: '#' addresses an array element, "
                            "and a method has none")
    access = m.scpi_access or ("query" if query_mark or m.out_args else "set")
    if query_mark and access != "query":
        raise GenError(aloc, f"'ScpiAccess' of {where}: {access}, but the keyword "
                             f"\"{shown(m.scpi_keyword)}\" ends in '?' (query only)")
    if access == "query" and (not m.out_args or m.fire_and_forget):
        why = "is fireAndForget (no reply)" if m.fire_and_forget else "has no out-arguments"
        raise GenError(aloc, f"'ScpiAccess' of {where}: query, but the method {why} to "
                             "answer; use 'set'")
    in_args = [_method_arg(a, where, loc) for a in m.in_args]
    # A set command discards the reply: any out-argument will do.
    out_args = ([_method_arg(a, where, loc) for a in m.out_args]
                if access == "query" else [])
    errors = [(e.value, e.name) for e in m.error.enumerators] if m.error else []
    mc = MethodCommand(m, name, index, in_args, out_args, errors)
    cmd = Command(None, m.scpi_keyword, loc, nodes, access, False, method=mc)
    mc.command = cmd
    m.scpi = mc
    return cmd


def _suffixes_meet(a: Node, an: int, b: Node, bn: int) -> bool:
    """Whether a header node can carry a suffix both nodes accept (an, bn:
    the array lengths of their parameters, for `#`)."""
    if a.suffix is ANY_SUFFIX and b.suffix is ANY_SUFFIX:
        return True
    if a.suffix is ANY_SUFFIX:
        return 1 <= b.suffix <= an
    if b.suffix is ANY_SUFFIX:
        return 1 <= a.suffix <= bn
    return a.suffix == b.suffix


def _meet(a: Tuple[Node, ...], ac: Command, b: Tuple[Node, ...], bc: Command) -> bool:
    if len(a) != len(b):
        return False
    an, bn = ac.count, bc.count
    return all(set(x.forms()) & set(y.forms()) and _suffixes_meet(x, an, y, bn)
               for x, y in zip(a, b))


def _example(path: Tuple[Node, ...]) -> str:
    return ":".join(n.short + ("1" if n.suffix is ANY_SUFFIX else
                               str(n.suffix) if n.written_suffix else "") for n in path)


# The status registers a parameter may drive (SCPI-99 chapter 9) and the key
# of each; the names as the tree file writes them.
STATUS_KEYS = (("ScpiQuestionable", "questionable"), ("ScpiOperation", "operation"))


def _check_status(p: Parameter) -> None:
    where = f"'{p.name}'"
    if "ScpiQuestionableLevel" in p.origins and "ScpiQuestionable" not in p.scpi_status:
        raise GenError(p.origins["ScpiQuestionableLevel"],
                       f"'ScpiQuestionableLevel' of {where} needs 'ScpiQuestionable' "
                       "in the same section")
    for key in p.scpi_status:
        loc = _key_loc(p, key)
        if p.no_read or p.no_subscriptions:
            raise GenError(loc, f"'{key}' of {where}: pbus-scpi follows the parameter "
                                "through a subscription, and it is "
                                f"{'noRead' if p.no_read else 'noSubscriptions'}")
    if "ScpiOperation" in p.scpi_status:
        if p.is_array or (p.element != "bool" and p.element not in INTEGER_ELEMENTS):
            raise GenError(_key_loc(p, "ScpiOperation"),
                           f"'ScpiOperation' of {where}: the bit follows a Boolean, "
                           f"integer or enumeration value, and {where} is of type {p.type}")


def status_condition(p: Parameter, key: str) -> str:
    """What sets the bit that `key` gives: an alarm status at least this
    one, or ('nonzero') the value itself."""
    if key == "ScpiOperation":
        return "nonzero"
    return p.scpi_questionable_level or "minor"


# The commands pbus-scpi adds to every tree (docs/scpi.md, "The daemon";
# pbus-scpi/execute.c scpi_tree_text_with_builtins()): keyword and access.
# A schema keyword may not take their headers. The test
# scpi-daemon/generator-knows-the-daemons-commands checks the daemon has each.
BUILTIN_COMMANDS = tuple(
    [("SYSTem:ERRor[:NEXT]", "query"), ("SYSTem:ERRor:COUNt", "query"),
     ("SYSTem:VERSion", "query"), ("STATus:PRESet", "set")] +
    [(f"STATus:{reg}{part}", access)
     for reg in ("QUEStionable", "OPERation")
     for part, access in (("[:EVENt]", "query"), (":CONDition", "query"), (":ENABle", "both"),
                          (":PTRansition", "both"), (":NTRansition", "both"))])


def _check_builtins(commands: List[Command]) -> None:
    """A keyword that could name one of pbus-scpi's own commands, or that
    puts another mnemonic where theirs is, is an error at the keyword."""
    builtins = []
    for keyword, access in BUILTIN_COMMANDS:
        nodes, _ = parse_keyword(keyword, None, "pbus-scpi")
        builtins.append((keyword, access, Command(None, keyword, None, nodes, access, False)))
    for cmd in commands:
        mine = {"query", "set"} if cmd.access == "both" else {cmd.access}
        for keyword, access, b in builtins:
            theirs = {"query", "set"} if access == "both" else {access}
            for path in cmd.paths():
                for bpath in b.paths():
                    for i, (n, m) in enumerate(zip(path, bpath)):
                        same_parent = all(x.long.upper() == y.long.upper() and
                                          x.suffix == y.suffix
                                          for x, y in zip(path[:i], bpath[:i]))
                        if (same_parent and n.suffix == m.suffix and n.long != m.long and
                                set(n.forms()) & set(m.forms())):
                            raise GenError(cmd.loc, f"'ScpiKeyword' of {cmd.what}: "
                                                    f"node '{n.long}' has a form of node "
                                                    f"'{m.long}' of pbus-scpi's own command "
                                                    f"'{keyword}'")
                    if (mine & theirs and len(path) == len(bpath) and
                            all(set(x.forms()) & set(y.forms()) and x.suffix == y.suffix
                                for x, y in zip(path, bpath))):
                        raise GenError(cmd.loc, f"'ScpiKeyword' of {cmd.what}: "
                                                f"\"{shown(cmd.keyword)}\" matches the header "
                                                f"'{_example(path)}' of pbus-scpi's own "
                                                f"command '{keyword}'")


def check(model: Model) -> List[Command]:
    """Parse and check every parameter's and method's SCPI keys; returns the
    commands, the parameters' in parameter order (also kept as each
    parameter's `scpi`), then the methods' (each method's `scpi` is its
    MethodCommand)."""
    commands: List[Command] = []
    for p in model.parameters:
        _check_status(p)
        if p.scpi_keyword is None:
            for key in ("ScpiAccess", "ScpiEnum"):
                if key in p.origins:
                    raise GenError(p.origins[key], f"'{key}' of '{p.name}' needs "
                                                   "'ScpiKeyword' in the same section")
            continue
        p.scpi = _command(p)
        commands.append(p.scpi)
    for index, m in enumerate(model.interface.all_methods()):
        m.scpi = None
        if m.scpi_keyword is None:
            if "ScpiAccess" in m.scpi_origins:
                raise GenError(m.scpi_origins["ScpiAccess"], f"'ScpiAccess' of method "
                                                             f"'{m.name}' needs 'ScpiKeyword' "
                                                             "in the same section")
            continue
        commands.append(_method_command(m, index))
    # One place in the tree, one mnemonic: nodes under the same parent whose
    # forms overlap must be the same node ("VOLT" beside "VOLTage" is not),
    # or a header could not tell which of the two it names.
    places: Dict[Tuple, Tuple[str, Command]] = {}
    for cmd in commands:
        for path in cmd.paths():
            for i, n in enumerate(path):
                parent = tuple((m.long.upper(), m.suffix) for m in path[:i])
                for form in n.forms():
                    key = (parent, n.suffix, form)
                    seen = places.setdefault(key, (n.long, cmd))
                    if seen[0] != n.long:
                        raise GenError(cmd.loc, f"'ScpiKeyword' of {cmd.what}: "
                                                f"node '{n.long}' and node '{seen[0]}' of "
                                                f"{seen[1].what} ({seen[1].loc}) "
                                                f"are different mnemonics with the same "
                                                f"form '{form}'")
    # Conflicts: index every header form by its last node's forms.
    buckets: Dict[Tuple[int, str], List[Tuple[Tuple[Node, ...], Command]]] = {}
    for cmd in commands:
        mine = set()
        for path in cmd.paths():
            for form in path[-1].forms():
                bucket = buckets.setdefault((len(path), form), [])
                for other_path, other in bucket:
                    if other is cmd or id(other) in mine:
                        continue
                    both = {"query", "set"}
                    accesses = [both if c.access == "both" else {c.access}
                                for c in (cmd, other)]
                    if not accesses[0] & accesses[1]:
                        continue
                    if _meet(path, cmd, other_path, other):
                        raise GenError(cmd.loc, f"'ScpiKeyword' of {cmd.what}: "
                                                f"\"{shown(cmd.keyword)}\" and "
                                                f"\"{shown(other.keyword)}\" of "
                                                f"{other.what} ({other.loc}) "
                                                f"both match the header "
                                                f"'{_example(path)}'")
            for form in path[-1].forms():
                buckets[(len(path), form)].append((path, cmd))
    _check_builtins(commands)
    return commands


# --- the tree file (docs/scpi.md) ----------------------------------------------

def render_tree(model: Model, schema_hash: int) -> str:
    lines = [f"# AUTO-GENERATED by pbus-gen from {', '.join(model.source_files)}"
             " - do not edit (format: docs/scpi.md)",
             f"{TREE_FORMAT} {TREE_VERSION}",
             f"schema {schema_hash:016x}"]
    for p in model.parameters:
        cmd = p.scpi
        if cmd is None:
            continue
        line = f"param {p.index} {p.name} {p.type} {cmd.access} {p.count or 0}"
        if cmd.suffix_unit is not None:
            line += f" {cmd.suffix_unit} {cmd.unit_factor}"
        lines.append(line)
        for value, mnemonic in cmd.mnemonics:
            lines.append(f"enum {p.index} {value} {mnemonic}")
        for path in cmd.paths():
            lines.append(f"header {p.index} " + ":".join(n.text() for n in path))
    for m in model.interface.all_methods():
        mc = m.scpi
        if mc is None:
            continue
        lines.append(f"method {mc.index} {mc.name} {mc.command.access}")
        for direction, args in (("in", mc.in_args), ("out", mc.out_args)):
            for a in args:
                lines.append(f"{direction} {mc.index} {a.name} {a.token}")
                for value, mnemonic in a.mnemonics:
                    lines.append(f"enum {mc.index} {value} {mnemonic}")
        for value, label in mc.errors:
            lines.append(f"error {mc.index} {value} {label}")
        for path in mc.command.paths():
            lines.append(f"header {mc.index} " + ":".join(n.text() for n in path))
    for p in model.parameters:
        for key, register in STATUS_KEYS:
            if key in p.scpi_status:
                lines.append(f"status {register} {p.scpi_status[key]} {p.index} "
                             f"{status_condition(p, key)}")
    return "\n".join(lines) + "\n"


# --- the command reference --------------------------------------------------------

def _value(v) -> str:
    if isinstance(v, bool):
        return "ON" if v else "OFF"
    if isinstance(v, EnumValue):
        return v.name
    if isinstance(v, float):
        return repr(v) if not v.is_integer() or abs(v) >= 1e16 else str(int(v))
    if isinstance(v, bytes):
        return f"#{len(str(len(v)))}{len(v)}" + v.hex().upper() if v else "#10"
    if isinstance(v, str):
        return '"' + v.replace('"', '""') + '"'
    if isinstance(v, list):
        return ",".join(_value(x) for x in v)
    return str(v)


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _data(cmd: Command) -> str:
    p = cmd.parameter
    if p.enum is not None:
        return "|".join(m for _, m in cmd.mnemonics)
    if p.element == "bool":
        return "ON|OFF|1|0"
    if p.element == "string":
        return "<string>"
    if p.element == "bytes":
        return "<block>"
    word = "<number>" if p.element in ("float", "double") else "<integer>"
    if p.is_array and not cmd.element_suffix:
        word = f"{word}{{,{word}}}"
    return word if cmd.access == "query" else word + "|MIN|MAX|DEF"


def render_reference(model: Model) -> str:
    itf = model.interface
    commands = [p.scpi for p in model.parameters if p.scpi is not None]
    out = [f"<!-- AUTO-GENERATED by pbus-gen from {', '.join(model.source_files)}"
           " - do not edit -->",
           f"# SCPI command reference: {itf.fqn}", "",
           "Headers are case-insensitive. The upper-case part of each node is its "
           "short form, the whole node its long form; either is accepted. Nodes in "
           "brackets may be left out. `#` is a numeric suffix from 1 to the array's "
           "length: the element it addresses. A query (`?`) accepts `MIN`, `MAX` or "
           "`DEF` to read the limit or default instead of the value. Numbers accept "
           "the unit's suffix with a multiplier (`MV`, `KHZ`). The parser and the "
           "formats are described in docs/scpi.md.", "",
           "| Command | Access | Data | Unit |", "|---|---|---|---|"]
    methods = [m.scpi for m in itf.all_methods() if m.scpi is not None]
    for cmd in commands:
        unit = cmd.parameter.unit or ""
        out.append(f"| `{_cell(cmd.keyword)}` | {cmd.access} | `{_cell(_data(cmd))}` | "
                   f"{_cell(unit)} |")
    for mc in methods:
        data = _method_data(mc)
        out.append(f"| `{_cell(mc.command.keyword)}` | {mc.command.access} (method) | "
                   f"{'`' + _cell(data) + '`' if data else ''} | |")
    for cmd in commands:
        p = cmd.parameter
        out += ["", f"## `{cmd.keyword}`", ""]
        if p.desc:
            out += [" ".join(p.desc.split()), ""]
        keyword = cmd.keyword[:-1] if cmd.keyword.endswith("?") else cmd.keyword
        forms = []
        if cmd.access in ("set", "both"):
            forms.append(f"`{keyword} {_data(cmd)}`")
        if cmd.access in ("query", "both"):
            extra = "" if p.element in ("string", "bytes", "bool") or p.enum else \
                " [MIN|MAX|DEF]"
            forms.append(f"`{keyword}?{extra}`")
        short = ":".join(n.short + ("#" if n.suffix is ANY_SUFFIX else
                                    str(n.suffix) if n.written_suffix else "")
                         for n in cmd.nodes if not n.optional)
        out.append(f"- Forms: {', '.join(forms)}")
        out.append(f"- Shortest form: `{short}{'?' if cmd.access == 'query' else ''}`")
        out.append(f"- Parameter: `{p.name}` ({p.type}), {cmd.access}")
        if cmd.element_suffix:
            out.append(f"- Suffix `#`: element 1 to {p.count}")
        if p.unit:
            suffix = (f"; suffix `{cmd.suffix_unit}` with a multiplier" if cmd.suffix_unit
                      else "; no suffix accepted")
            out.append(f"- Unit: {p.unit}{suffix}")
        if p.min is not None or p.max is not None:
            rng = f"{_value(p.min) if p.min is not None else '-'} to " \
                  f"{_value(p.max) if p.max is not None else '-'}"
            if p.step is not None:
                rng += f", step {_value(p.step)}"
            out.append(f"- Range: {rng}")
        if p.enum is not None:
            pairs = ", ".join(f"`{m}` = {next(e.name for e in p.enum.enumerators if e.value == v)}"
                              for v, m in cmd.mnemonics)
            out.append(f"- Values: {pairs}")
        if p.default is not None:
            default = p.default
            if isinstance(default, EnumValue):
                default = next(m for v, m in cmd.mnemonics if v == default.value)
                out.append(f"- Default: `{default}`")
            else:
                out.append(f"- Default: `{_value(default)}`")
    for mc in methods:
        out += _method_reference(mc)
    out += _status_reference(model)
    return "\n".join(out) + "\n"


def _arg_data(a: MethodArg) -> str:
    if a.token == "enum":
        return "|".join(m for _, m in a.mnemonics)
    return {"bool": "ON|OFF|1|0", "string": "<string>", "bytes": "<block>",
            "float": "<number>", "double": "<number>"}.get(a.token, "<integer>")


def _method_data(mc: MethodCommand) -> str:
    return ",".join(_arg_data(a) for a in mc.in_args)


def _method_reference(mc: MethodCommand) -> List[str]:
    cmd, m = mc.command, mc.method
    out = ["", f"## `{cmd.keyword}`", ""]
    if m.desc:
        out += [" ".join(m.desc.split()), ""]
    keyword = cmd.keyword[:-1] if cmd.keyword.endswith("?") else cmd.keyword
    data = _method_data(mc)
    form = f"{keyword}{'?' if cmd.access == 'query' else ''}{' ' + data if data else ''}"
    short = ":".join(n.short + (str(n.suffix) if n.written_suffix else "")
                     for n in cmd.nodes if not n.optional)
    out.append(f"- Forms: `{form}`")
    out.append(f"- Shortest form: `{short}{'?' if cmd.access == 'query' else ''}`")
    if cmd.access == "query":
        out.append(f"- Method: `{mc.name}`, a query: the answer waits for its reply")
    else:
        out.append(f"- Method: `{mc.name}`, a setting that runs overlapped (its reply, "
                   "if any, is not answered; `*OPC`, `*OPC?` and `*WAI` wait for it)")
    for a in mc.in_args:
        desc = f": {' '.join(a.desc.split())}" if a.desc else ""
        out.append(f"- In: `{a.name}` ({a.franca}) `{_cell(_arg_data(a))}`{_cell(desc)}")
    for a in mc.out_args:
        desc = f": {' '.join(a.desc.split())}" if a.desc else ""
        out.append(f"- Answer: `{a.name}` ({a.franca}){_cell(desc)}")
    if mc.errors:
        bad = ", ".join(f"`{label}`" for _, label in mc.errors[1:])
        out.append(f"- Errors: {bad} queue -200 \"Execution error\" naming the enumerator "
                   f"(`{mc.errors[0][1]}` is success)")
    if m.callable_by:
        out.append(f"- Callable by: group `{m.callable_by}` (else -203 \"Command protected\")")
    return out


_LEVEL_WORDS = {"minor": "minor, major or invalid", "major": "major or invalid",
                "invalid": "invalid"}


def _status_reference(model: Model) -> List[str]:
    out = ["", "## Status reporting", "",
           "`STATus:QUEStionable` and `STATus:OPERation` (SCPI-99 chapter 9), each with "
           "`[:EVENt]?`, `:CONDition?`, `:ENABle`, `:PTRansition`, `:NTRansition`; "
           "`STATus:PRESet`. Their summaries are bits 3 (QUEStionable) and 7 "
           "(OPERation) of the status byte. The condition bits:", ""]
    rows = []
    for p in model.parameters:
        for key, register in STATUS_KEYS:
            if key in p.scpi_status:
                cond = status_condition(p, key)
                why = ("the value is not zero (ON)" if cond == "nonzero" else
                       f"the alarm status is {_LEVEL_WORDS[cond]}")
                rows.append((register, p.scpi_status[key], p.name, why))
    if not rows:
        return out[:-1] + [out[-1].replace(" The condition bits:", " No parameter drives "
                                           "a condition bit.")]
    out += ["| Register | Bit | Parameter | Set while |", "|---|---|---|---|"]
    for register, bit, name, why in sorted(rows, key=lambda r: (r[0] != "questionable", r[1])):
        word = "QUEStionable" if register == "questionable" else "OPERation"
        out.append(f"| {word} | {bit} ({1 << bit}) | `{name}` | {why} |")
    return out
