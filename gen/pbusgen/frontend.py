"""Front end: text of one file -> syntax tree (syntax.py).

Two grammars (grammar/franca.lark, grammar/fdepl.lark), parsed with lark's
LALR parser and its contextual lexer; neither the parse nor the building of
the syntax tree recurses, so nesting depth is not limited here. This module
knows nothing of other files: imports are followed by loader.py. Syntax
errors become one line, `file:line:column: error: found <token>, expected
<what>`.
"""

import re
from functools import lru_cache
from importlib import resources
from typing import Any, List, Optional

from lark import Lark, Token, Transformer_NonRecursive, Tree, v_args
from lark.exceptions import (UnexpectedCharacters, UnexpectedInput,
                             UnexpectedToken, VisitError)

from . import syntax as S
from .errors import GenError, Location, shown


# --- grammar and error messages --------------------------------------------

@lru_cache(maxsize=None)
def _parser(name: str) -> Lark:
    text = resources.files("pbusgen").joinpath(f"grammar/{name}.lark") \
        .read_text(encoding="utf-8")
    return Lark(text, parser="lalr", lexer="contextual",
                propagate_positions=True, maybe_placeholders=False)


# How terminals that are not plain keywords read in an error message.
_TERMINAL_NAMES = {
    "NAME": "identifier",
    "INT": "integer",
    "HEX": "integer",
    "BIN": "integer",
    "FLOAT": "number",
    "STRING": "string",
    "ANNOTATION": "annotation '<** ... **>'",
    "WILDCARD": "'.*'",
    "OR_OP": "'||'",
    "AND_OP": "'&&'",
    "EQ_OP": "'==' or '!='",
    "REL_OP": "'<', '<=', '>' or '>='",
    "ADD_OP": "'+' or '-'",
    "MUL_OP": "'*' or '/'",
    "UNARY_OP": "'!' or '-'",
    "ERROR": "'error'",
    "$END": "end of file",
}


def _describe_terminal(parser: Lark, name: str) -> str:
    if name in _TERMINAL_NAMES:
        return _TERMINAL_NAMES[name]
    try:
        pattern = parser.get_terminal(name).pattern
    except KeyError:
        return name
    if pattern.type == "str":
        return f"'{pattern.value}'"
    return name.lower()


def _describe_expected(parser: Lark, names) -> str:
    words = sorted({_describe_terminal(parser, n) for n in names})
    if not words:
        return "nothing"
    if len(words) == 1:
        return words[0]
    return "one of " + ", ".join(words)


def _show_token(tok: Token) -> str:
    """A token as it reads in an error message: quoted, one line, short."""
    if tok.type == "ANNOTATION":
        return "annotation '<** ... **>'"
    value = tok.value
    cut = value.split("\n", 1)[0]
    if len(cut) > 40:
        cut = cut[:40]
    if cut != value:
        cut += "..."
    return "'" + "".join(c if c.isprintable() else repr(c)[1:-1] for c in cut) + "'"


def _end_of(path: str, text: str) -> Location:
    """The position just after the last character."""
    last = text.rsplit("\n", 1)[-1]
    return Location(path, text.count("\n") + 1, len(last) + 1)


def _syntax_error(parser: Lark, path: str, text: str,
                  exc: UnexpectedInput) -> GenError:
    if isinstance(exc, UnexpectedToken):
        tok = exc.token
        if tok.type == "$END":
            found = "end of file"
            loc = _end_of(path, text)
        else:
            found = _show_token(tok)
            loc = Location(path, tok.line, tok.column)
        expected = _describe_expected(parser, exc.expected)
    elif isinstance(exc, UnexpectedCharacters):
        found = f"character '{exc.char}'" if exc.char.isprintable() \
            else f"character {exc.char!r}"
        loc = Location(path, exc.line, exc.column)
        expected = _describe_expected(parser, exc.allowed or ())
    else:   # UnexpectedEOF
        found = "end of file"
        loc = _end_of(path, text)
        expected = _describe_expected(parser, exc.expected)
    return GenError(loc, f"found {found}, expected {expected}")


# Characters that open a string, per grammar.
_QUOTES = {"franca": "\"'", "fdepl": "\""}


def _unterminated(text: str, quotes: str) -> Optional[tuple]:
    """(offset, "comment" | "string" | "annotation") of the first comment,
    string or annotation that the text opens and never closes, if any. The
    lexer cannot match such a token at all, and would report the character
    it stopped at ('/', '"', '<') as if it stood alone."""
    i = 0
    n = len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            end = text.find("\n", i)
            i = n if end < 0 else end + 1
        elif text.startswith("/*", i):
            end = text.find("*/", i + 2)
            if end < 0:
                return i, "comment"
            i = end + 2
        elif text.startswith("<**", i):
            end = text.find("**>", i + 3)
            if end < 0:
                return i, "annotation"
            i = end + 3
        elif c in quotes:           # may span lines, as in Franca
            k = i + 1
            while k < n and text[k] != c:
                k += 2 if text[k] == "\\" else 1
            if k >= n:
                return i, "string"
            i = k + 1
        else:
            i += 1
    return None


def _offset(text: str, exc: UnexpectedInput) -> int:
    if isinstance(exc, UnexpectedToken) and exc.token.type != "$END":
        return exc.token.start_pos
    if isinstance(exc, UnexpectedCharacters):
        return exc.pos_in_stream
    return len(text)


def _parse(grammar: str, path: str, text: str) -> Tree:
    parser = _parser(grammar)
    try:
        return parser.parse(text)
    except UnexpectedInput as exc:
        open_end = _unterminated(text, _QUOTES[grammar])
        if open_end is not None and open_end[0] <= _offset(text, exc):
            pos, what = open_end
            line = text.count("\n", 0, pos) + 1
            column = pos - (text.rfind("\n", 0, pos) + 1) + 1
            raise GenError(Location(path, line, column),
                           f"unterminated {what}") from None
        raise _syntax_error(parser, path, text, exc) from None


# --- shared token helpers -------------------------------------------------

def _name(tok: Token) -> str:
    """An identifier without Franca's keyword escape `^`."""
    return tok.value[1:] if tok.value.startswith("^") else tok.value


_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "b": "\b", "f": "\f",
            "0": "\0", "\\": "\\", "\"": "\"", "'": "'"}


def _unquote(tok: Token, path: str) -> str:
    body = tok.value[1:-1]
    out = []
    i = 0
    while i < len(body):
        c = body[i]
        if c != "\\":
            out.append(c)
            i += 1
            continue
        nxt = body[i + 1]
        if nxt in _ESCAPES:
            out.append(_ESCAPES[nxt])
            i += 2
        elif nxt == "u" and re.fullmatch(r"[0-9a-fA-F]{4}", body[i + 2:i + 6]):
            out.append(chr(int(body[i + 2:i + 6], 16)))
            i += 6
        else:
            raise GenError(Location(path, tok.line, tok.column),
                           f"unknown escape '\\{shown(nxt)}' in string")
    return "".join(out)


_TAG = re.compile(r"(?<![\\\w])@([A-Za-z_][\w-]*)[ \t]*:")


def parse_annotation_block(text: str) -> List[S.Annotation]:
    """`<** @tag: text @other: more **>` -> annotations, in order. Text runs
    to the next `@tag:`; its whitespace (line breaks included) is collapsed
    to single spaces. Untagged leading text counts as a description."""
    body = text[3:-3]
    parts = _TAG.split(body)
    out = []

    def clean(s: str) -> str:
        s = s.replace("\\@", "@").replace("\\*", "*").replace("\\\\", "\\")
        return " ".join(s.split())

    lead = clean(parts[0])
    if lead:
        out.append(S.Annotation("description", lead))
    for i in range(1, len(parts), 2):
        out.append(S.Annotation(parts[i], clean(parts[i + 1])))
    return out


class _Marker:
    """Stand-in for a keyword-only rule (`[]`, `public`, `selective`, ...)."""

    def __init__(self, kind: str, value: Any = None, loc: Optional[Location] = None):
        self.kind = kind
        self.value = value
        self.loc = loc


def _num(tok: Token) -> Any:
    t = tok.type
    v = tok.value
    if t == "INT":
        return int(v)
    if t == "HEX":
        return int(v, 16)
    if t == "BIN":
        return int(v[2:], 2)
    if t == "FLOAT":
        return float(v.rstrip("fFdD"))
    raise AssertionError(t)


# --- Franca IDL -----------------------------------------------------------

class _FrancaBuilder(Transformer_NonRecursive):
    def __init__(self, path: str):
        super().__init__(visit_tokens=False)
        self.path = path

    def _loc(self, tok: Token) -> Location:
        return Location(self.path, tok.line, tok.column)

    def _meta_loc(self, meta) -> Location:
        return Location(self.path, getattr(meta, "line", 1),
                        getattr(meta, "column", 1))

    def _annotations(self, children) -> List[S.Annotation]:
        out = []
        for c in children:
            if isinstance(c, Token) and c.type == "ANNOTATION":
                out.extend(parse_annotation_block(c.value))
        return out

    @staticmethod
    def _names(children) -> List[Token]:
        return [c for c in children if isinstance(c, Token) and c.type == "NAME"]

    @staticmethod
    def _marker(children, kind: str) -> Optional[_Marker]:
        for c in children:
            if isinstance(c, _Marker) and c.kind == kind:
                return c
        return None

    @staticmethod
    def _of(children, cls) -> list:
        return [c for c in children if isinstance(c, cls)]

    # names and small pieces
    def fqn(self, children):
        return (".".join(_name(t) for t in children), self._loc(children[0]))

    def imported_fqn(self, children):
        names = self._names(children)
        wildcard = any(isinstance(c, Token) and c.type == "WILDCARD"
                       for c in children)
        return (".".join(_name(t) for t in names), wildcard,
                self._loc(names[0]))

    def array_mark(self, _):
        return _Marker("array")

    def public(self, _):
        return _Marker("public")

    def selective(self, _):
        return _Marker("selective")

    def fire_and_forget(self, _):
        return _Marker("fireAndForget")

    def selector(self, children):
        return _Marker("selector", _name(children[0]))

    def extends(self, children):
        return _Marker("extends", children[0])

    def manages(self, children):
        return _Marker("manages", list(children))

    def attr_flag(self, children):
        return _Marker("flag", children[0].value, self._loc(children[0]))

    def struct_modifier(self, children):
        if children[0].value == "polymorphic":
            return _Marker("polymorphic", None, self._loc(children[0]))
        return _Marker("extends", children[1])

    @v_args(meta=True)
    def version(self, meta, children):
        return S.Version(self._meta_loc(meta), int(children[0]), int(children[1]))

    # type references
    def named_type(self, children):
        name, loc = children[0]
        return S.TypeRef(loc, name)

    @v_args(meta=True)
    def integer_type(self, meta, children):
        loc = self._meta_loc(meta)
        if not children:
            return S.TypeRef(loc, "Integer")
        (lower, lower_loc), (upper, upper_loc) = children
        return S.TypeRef(loc, "Integer", lower, upper, lower_loc, upper_loc)

    @v_args(meta=True)
    def lower_bound(self, meta, children):
        c = children[0]
        value = None if isinstance(c, Token) else c     # minInt
        return (value, self._meta_loc(meta))

    upper_bound = lower_bound                           # maxInt: None

    def signed_int(self, children):
        value = _num(children[-1])
        return -value if len(children) == 2 else value

    # expressions
    def literal(self, children):
        tok = children[0]
        loc = self._loc(tok)
        if tok.type == "STRING":
            return S.Literal(loc, _unquote(tok, self.path), "string")
        if tok.type in ("TRUE", "FALSE"):
            return S.Literal(loc, tok.type == "TRUE", "bool")
        value = _num(tok)
        return S.Literal(loc, value, "float" if isinstance(value, float) else "int")

    def ref(self, children):
        name, loc = children[0]
        return S.Ref(loc, name, [(_name(t), self._loc(t)) for t in children[1:]])

    def binary(self, children):
        left, op, right = children
        return S.Binary(left.loc, op.value, left, right)

    def unary(self, children):
        op, operand = children
        return S.Unary(self._loc(op), op.value, operand)

    @v_args(meta=True)
    def struct_init(self, meta, children):
        return S.StructInit(self._meta_loc(meta), list(children))

    def field_init(self, children):
        return (_name(children[0]), self._loc(children[0]), children[1])

    @v_args(meta=True)
    def bracket_init(self, meta, children):
        loc = self._meta_loc(meta)
        items = list(children)
        pairs = [i for i in items if isinstance(i, tuple)]
        if pairs and len(pairs) != len(items):
            raise GenError(loc, "initializer mixes map entries 'key => value' "
                                "with array elements")
        if pairs:
            return S.MapInit(loc, pairs)
        return S.ArrayInit(loc, items)

    def bracket_item(self, children):
        if len(children) == 2:
            return (children[0], children[1])
        return children[0]

    # declarations
    def field(self, children):
        name = self._names(children)[-1]
        return S.Field(self._loc(name), _name(name), self._of(children, S.TypeRef)[0],
                       self._marker(children, "array") is not None,
                       annotations=self._annotations(children))

    def argument(self, children):
        f = self.field(children)
        return S.Argument(f.loc, f.name, f.type, f.is_array,
                          annotations=f.annotations)

    def enumerator(self, children):
        name = self._names(children)[0]
        values = [c for c in children if not isinstance(c, Token)]
        return S.Enumerator(self._loc(name), _name(name),
                            values[0] if values else None,
                            annotations=self._annotations(children))

    def enumeration(self, children):
        name = self._names(children)[0]
        base = self._marker(children, "extends")
        return S.EnumerationDecl(self._loc(name), _name(name),
                                 base.value if base else None,
                                 self._of(children, S.Enumerator),
                                 annotations=self._annotations(children))

    def struct(self, children):
        name = self._names(children)[0]
        bases = [c for c in children if isinstance(c, _Marker) and c.kind == "extends"]
        poly = [c for c in children if isinstance(c, _Marker) and c.kind == "polymorphic"]
        if len(bases) > 1:
            raise GenError(bases[1].value[1], f"struct '{_name(name)}' has two 'extends'")
        if len(poly) > 1:
            raise GenError(poly[1].loc, f"struct '{_name(name)}' says 'polymorphic' twice")
        return S.StructDecl(self._loc(name), _name(name),
                            bases[0].value if bases else None, bool(poly),
                            self._of(children, S.Field),
                            annotations=self._annotations(children))

    def union(self, children):
        name = self._names(children)[0]
        base = self._marker(children, "extends")
        return S.UnionDecl(self._loc(name), _name(name), base.value if base else None,
                           self._of(children, S.Field),
                           annotations=self._annotations(children))

    def array_type(self, children):
        name = self._names(children)[0]
        return S.ArrayDecl(self._loc(name), _name(name),
                           self._of(children, S.TypeRef)[0],
                           annotations=self._annotations(children))

    def map_type(self, children):
        name = self._names(children)[0]
        key, value = self._of(children, S.TypeRef)
        return S.MapDecl(self._loc(name), _name(name), key, value,
                         annotations=self._annotations(children))

    def typedef(self, children):
        name = self._names(children)[0]
        return S.TypedefDecl(self._loc(name), _name(name),
                             self._of(children, S.TypeRef)[0],
                             annotations=self._annotations(children))

    def constant(self, children):
        name = self._names(children)[0]
        value = children[-1]
        return S.ConstantDecl(self._loc(name), _name(name),
                              self._of(children, S.TypeRef)[0],
                              self._marker(children, "array") is not None, value,
                              annotations=self._annotations(children))

    def attribute(self, children):
        name = self._names(children)[-1]
        attr = S.Attribute(self._loc(name), _name(name),
                           self._of(children, S.TypeRef)[0],
                           self._marker(children, "array") is not None,
                           annotations=self._annotations(children))
        seen = set()
        for c in children:
            if isinstance(c, _Marker) and c.kind == "flag":
                if c.value in seen:
                    raise GenError(c.loc, f"attribute '{attr.name}' says "
                                          f"'{c.value}' twice")
                seen.add(c.value)
        attr.readonly = "readonly" in seen
        attr.no_read = "noRead" in seen
        attr.no_subscriptions = "noSubscriptions" in seen
        return attr

    def in_args(self, children):
        return ("in", self._of(children, S.Argument))

    def out_args(self, children):
        return ("out", self._of(children, S.Argument))

    def error_ref(self, children):
        ref = [c for c in children if isinstance(c, tuple)][0]
        return ("error_ref", (ref, self._annotations(children)))

    def error_enum(self, children):
        base = self._marker(children, "extends")
        keyword = [c for c in children if isinstance(c, Token) and c.type == "ERROR"][0]
        decl = S.EnumerationDecl(self._loc(keyword), "", base.value if base else None,
                                 self._of(children, S.Enumerator))
        return ("error_enum", (decl, self._annotations(children)))

    def _args(self, children, kind):
        for c in children:
            if isinstance(c, tuple) and c[0] == kind:
                return c[1]
        return None

    def method(self, children):
        name = self._names(children)[0]
        sel = self._marker(children, "selector")
        m = S.Method(self._loc(name), _name(name), sel.value if sel else None,
                     self._marker(children, "fireAndForget") is not None,
                     self._args(children, "in") or [],
                     self._args(children, "out") or [],
                     annotations=self._annotations(children))
        for kind in ("error_ref", "error_enum"):
            error = self._args(children, kind)
            if error is not None:
                setattr(m, kind, error[0])
                m.error_annotations = error[1]
        if m.error_enum is not None:
            m.error_enum.name = m.name + "Error"
            m.error_enum.annotations = m.error_annotations
        return m

    def broadcast(self, children):
        name = self._names(children)[0]
        sel = self._marker(children, "selector")
        return S.Broadcast(self._loc(name), _name(name), sel.value if sel else None,
                           self._marker(children, "selective") is not None,
                           self._args(children, "out") or [],
                           annotations=self._annotations(children))

    @v_args(meta=True)
    def current_error(self, meta, _):
        return S.CurrentError(self._meta_loc(meta))

    @v_args(meta=True)
    def error_def_ref(self, meta, children):
        return S.ErrorDefRef(self._meta_loc(meta), _name(children[0]))

    # contracts
    def declaration(self, children):
        name = self._names(children)[0]
        values = [c for c in children if isinstance(c, S.Node) and
                  not isinstance(c, S.TypeRef)]
        return S.Declaration(self._loc(name), _name(name),
                             self._of(children, S.TypeRef)[0],
                             self._marker(children, "array") is not None,
                             values[0] if values else None)

    def contract_vars(self, children):
        return _Marker("vars", list(children))

    @v_args(meta=True)
    def trigger(self, meta, children):
        names = self._names(children)
        return S.Trigger(self._meta_loc(meta), children[0].value, _name(names[0]),
                         _name(names[1]) if len(names) > 1 else None,
                         self._loc(names[0]))

    def guard(self, children):
        return _Marker("guard", children[0])

    @v_args(meta=True)
    def transition(self, meta, children):
        target = self._names(children)[0]
        guard = self._marker(children, "guard")
        action = self._of(children, S.Block)
        return S.Transition(self._meta_loc(meta), children[0],
                            guard.value if guard else None, _name(target),
                            self._loc(target), action[0] if action else None)

    def state(self, children):
        name = self._names(children)[0]
        return S.State(self._loc(name), _name(name), self._of(children, S.Transition),
                       annotations=self._annotations(children))

    @v_args(meta=True)
    def assignment(self, meta, children):
        name, loc = children[0]
        fields = [(_name(t), self._loc(t)) for t in self._names(children)]
        return S.Assignment(self._meta_loc(meta), S.Ref(loc, name, fields), children[-1])

    @v_args(meta=True)
    def if_statement(self, meta, children):
        return S.IfStatement(self._meta_loc(meta), children[0], children[1],
                             children[2] if len(children) > 2 else None)

    @v_args(meta=True)
    def block(self, meta, children):
        return S.Block(self._meta_loc(meta), list(children))

    @v_args(meta=True)
    def contract(self, meta, children):
        variables = self._marker(children, "vars")
        initial = self._names(children)[0]
        return S.Contract(self._meta_loc(meta), variables.value if variables else [],
                          _name(initial), self._loc(initial),
                          self._of(children, S.State))

    def type_collection(self, children):
        fqns = [c for c in children if isinstance(c, tuple)]
        version = self._of(children, S.Version)
        if fqns:
            name, loc = fqns[0]
        else:
            name, loc = None, Location(self.path, 1, 1)
            for c in children:
                if isinstance(c, S.Node):
                    loc = c.loc
                    break
        types = [c for c in children if isinstance(c, (
            S.EnumerationDecl, S.StructDecl, S.UnionDecl, S.ArrayDecl,
            S.MapDecl, S.TypedefDecl))]
        return S.TypeCollectionDecl(loc, name, version[0] if version else None,
                                    types, self._of(children, S.ConstantDecl),
                                    annotations=self._annotations(children))

    def interface(self, children):
        name = self._names(children)[0]
        base = self._marker(children, "extends")
        manages = self._marker(children, "manages")
        version = self._of(children, S.Version)
        types = [c for c in children if isinstance(c, (
            S.EnumerationDecl, S.StructDecl, S.UnionDecl, S.ArrayDecl,
            S.MapDecl, S.TypedefDecl))]
        contracts = self._of(children, S.Contract)
        if len(contracts) > 1:
            raise GenError(contracts[1].loc, f"interface '{_name(name)}' has a second "
                                             f"contract (first at {contracts[0].loc})")
        return S.InterfaceDecl(
            self._loc(name), _name(name), base.value if base else None,
            manages.value if manages else [], version[0] if version else None,
            self._of(children, S.Attribute), self._of(children, S.Method),
            self._of(children, S.Broadcast), self._of(children, S.ConstantDecl),
            types, bool(contracts), contracts[0] if contracts else None,
            annotations=self._annotations(children))

    @v_args(meta=True)
    def import_namespace(self, meta, children):
        namespace, wildcard, _ = children[0]
        uri = children[1]
        return S.Import(self._loc(uri), _unquote(uri, self.path), namespace, wildcard)

    def import_model(self, children):
        uri = children[0]
        return S.Import(self._loc(uri), _unquote(uri, self.path))

    def start(self, children):
        package = [c for c in children if isinstance(c, tuple)][0][0]
        return S.FidlFile(self.path, package, self._of(children, S.Import),
                          self._of(children, S.TypeCollectionDecl),
                          self._of(children, S.InterfaceDecl),
                          self._annotations(children))


def _transform(builder: Transformer_NonRecursive, tree: Tree):
    try:
        return builder.transform(tree)
    except VisitError as exc:
        if isinstance(exc.orig_exc, GenError):
            raise exc.orig_exc from None
        raise


def parse_fidl(text: str, path: str) -> S.FidlFile:
    """Parse the text of a .fidl file; `path` is how messages name it."""
    return _transform(_FrancaBuilder(path), _parse("franca", path, text))


# --- deployment files -----------------------------------------------------

class _FdeplBuilder(Transformer_NonRecursive):
    def __init__(self, path: str):
        super().__init__(visit_tokens=False)
        self.path = path

    def _loc(self, tok: Token) -> Location:
        return Location(self.path, tok.line, tok.column)

    def fqn(self, children):
        return (".".join(_name(t) for t in children), self._loc(children[0]))

    def import_decl(self, children):
        return ("import", _unquote(children[0], self.path), self._loc(children[0]))

    def string(self, children):
        return S.DValue(self._loc(children[0]), "string",
                        _unquote(children[0], self.path))

    def ident(self, children):
        return S.DValue(self._loc(children[0]), "ident", _name(children[0]))

    def number(self, children):
        value = _num(children[-1])
        if len(children) == 2:
            value = -value
        return S.DValue(self._loc(children[0]),
                        "float" if isinstance(value, float) else "int", value)

    @v_args(meta=True)
    def array(self, meta, children):
        return S.DValue(Location(self.path, meta.line, meta.column), "array",
                        list(children))

    def property(self, children):
        key, value = children
        return S.DProperty(self._loc(key), _name(key), value)

    def section(self, children):
        kind = children[0]
        name = children[1] if len(children) > 1 and isinstance(children[1], Token) \
            else None
        items = [c for c in children if isinstance(c, (S.DSection, S.DProperty))]
        return S.DSection(self._loc(kind), _name(kind),
                          _name(name) if name is not None else None, items)

    def definition(self, children):
        (spec, spec_loc), kind = children[0], children[1]
        target, target_loc = children[2]
        items = [c for c in children[3:] if isinstance(c, (S.DSection, S.DProperty))]
        return S.DDefine(spec_loc, spec, _name(kind), target, target_loc, items)

    def start(self, children):
        imports = [(c[1], c[2]) for c in children if isinstance(c, tuple)]
        defines = [c for c in children if isinstance(c, S.DDefine)]
        return S.FdeplFile(self.path, imports, defines)


def parse_fdepl(text: str, path: str) -> S.FdeplFile:
    """Parse the text of a .fdepl file; `path` is how messages name it."""
    return _transform(_FdeplBuilder(path), _parse("fdepl", path, text))
