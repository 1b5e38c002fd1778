"""The syntax tree: what the front end makes of one file, before any name is
resolved. Every node carries the Location of its first token; names are kept
exactly as written (with a Franca `^` escape removed).
"""

from dataclasses import dataclass, field
from typing import Any, List, Optional, Tuple, Union

from .errors import Location


@dataclass
class Annotation:
    tag: str            # "description", "author", ...
    text: str           # whitespace-normalised text after the colon


@dataclass
class Node:
    loc: Location


@dataclass
class Annotated(Node):
    annotations: List[Annotation] = field(default_factory=list, kw_only=True)

    def annotation(self, tag: str) -> Optional[str]:
        """The text of the first annotation with this tag, if any."""
        for a in self.annotations:
            if a.tag == tag:
                return a.text
        return None


# --- expressions (constants, enumerator values) ----------------------------

@dataclass
class Literal(Node):
    value: Any          # int, float, bool or str
    kind: str           # "int", "float", "bool", "string"


@dataclass
class Ref(Node):
    name: str           # as written, possibly dotted
    # `name->a->b`: the fields (or union members) read from its value
    fields: List[Tuple[str, Location]] = field(default_factory=list)


@dataclass
class Unary(Node):
    op: str
    operand: "Expr"


@dataclass
class Binary(Node):
    op: str
    left: "Expr"
    right: "Expr"


@dataclass
class StructInit(Node):
    fields: List[Tuple[str, Location, "Expr"]]


@dataclass
class ArrayInit(Node):
    items: List["Expr"]


@dataclass
class MapInit(Node):
    items: List[Tuple["Expr", "Expr"]]


@dataclass
class CurrentError(Node):
    """`errorval` (contracts): the error of the method being answered."""


@dataclass
class ErrorDefRef(Node):
    """`errordef.NAME` (contracts): an enumerator of that method's error."""
    name: str


Expr = Union[Literal, Ref, Unary, Binary, StructInit, ArrayInit, MapInit,
             CurrentError, ErrorDefRef]


# --- type references -------------------------------------------------------

@dataclass
class TypeRef(Node):
    """`name` for a named type (basic or derived); for `Integer`, name is
    "Integer" and the bounds are ints or None for minInt/maxInt/no range."""

    name: str
    lower: Optional[int] = None
    upper: Optional[int] = None
    lower_loc: Optional[Location] = None    # where each bound is written
    upper_loc: Optional[Location] = None


# --- declarations ----------------------------------------------------------

@dataclass
class Version(Node):
    major: int
    minor: int


@dataclass
class Field(Annotated):
    name: str
    type: TypeRef
    is_array: bool


@dataclass
class Enumerator(Annotated):
    name: str
    value: Optional[Expr]


@dataclass
class EnumerationDecl(Annotated):
    name: str
    base: Optional[Tuple[str, Location]]
    enumerators: List[Enumerator]


@dataclass
class StructDecl(Annotated):
    name: str
    base: Optional[Tuple[str, Location]]
    polymorphic: bool
    fields: List[Field]


@dataclass
class UnionDecl(Annotated):
    name: str
    base: Optional[Tuple[str, Location]]
    fields: List[Field]


@dataclass
class ArrayDecl(Annotated):
    name: str
    element: TypeRef


@dataclass
class MapDecl(Annotated):
    name: str
    key: TypeRef
    value: TypeRef


@dataclass
class TypedefDecl(Annotated):
    name: str
    actual: TypeRef


TypeDecl = Union[EnumerationDecl, StructDecl, UnionDecl, ArrayDecl, MapDecl,
                 TypedefDecl]


@dataclass
class ConstantDecl(Annotated):
    name: str
    type: TypeRef
    is_array: bool
    value: Expr


@dataclass
class Attribute(Annotated):
    name: str
    type: TypeRef
    is_array: bool
    readonly: bool = False
    no_read: bool = False
    no_subscriptions: bool = False


@dataclass
class Argument(Annotated):
    name: str
    type: TypeRef
    is_array: bool


@dataclass
class Method(Annotated):
    name: str
    selector: Optional[str]
    fire_and_forget: bool
    in_args: List[Argument]
    out_args: List[Argument]
    error_ref: Optional[Tuple[str, Location]] = None
    error_enum: Optional[EnumerationDecl] = None
    # `<** ... **>` before `error` (Franca's errorComment)
    error_annotations: List[Annotation] = field(default_factory=list)


@dataclass
class Broadcast(Annotated):
    name: str
    selector: Optional[str]
    selective: bool
    out_args: List[Argument]


@dataclass
class TypeCollectionDecl(Annotated):
    name: Optional[str]                     # None: anonymous
    version: Optional[Version]
    types: List[TypeDecl]
    constants: List[ConstantDecl]


# --- contracts -------------------------------------------------------------

@dataclass
class Declaration(Node):
    """A state variable of a contract: `Int32 n = 0`."""
    name: str
    type: TypeRef
    is_array: bool
    value: Optional[Expr]


@dataclass
class Trigger(Node):
    kind: str                   # call, respond, error, signal, set, update
    name: str                   # the method, broadcast or attribute
    selector: Optional[str]     # `m:selector` (methods and broadcasts)
    name_loc: Location


@dataclass
class Assignment(Node):
    target: Ref                 # a state variable, possibly `v->field`
    value: Expr


@dataclass
class Block(Node):
    statements: List["Statement"]


@dataclass
class IfStatement(Node):
    condition: Expr
    then: "Statement"
    otherwise: Optional["Statement"]


Statement = Union[Assignment, Block, IfStatement]


@dataclass
class Transition(Node):
    trigger: Trigger
    guard: Optional[Expr]
    target: str
    target_loc: Location
    action: Optional[Block]


@dataclass
class State(Annotated):
    name: str
    transitions: List[Transition]


@dataclass
class Contract(Node):
    variables: List[Declaration]
    initial: str
    initial_loc: Location
    states: List[State]


@dataclass
class InterfaceDecl(Annotated):
    name: str
    base: Optional[Tuple[str, Location]]
    manages: List[Tuple[str, Location]]
    version: Optional[Version]
    attributes: List[Attribute]
    methods: List[Method]
    broadcasts: List[Broadcast]
    constants: List[ConstantDecl]
    types: List[TypeDecl]
    has_contract: bool
    contract: Optional[Contract] = None


@dataclass
class Import(Node):
    uri: str
    namespace: Optional[str] = None         # None: `import model`
    wildcard: bool = False


@dataclass
class FidlFile:
    path: str                               # as displayed in messages
    package: str
    imports: List[Import]
    type_collections: List[TypeCollectionDecl]
    interfaces: List[InterfaceDecl]
    annotations: List[Annotation] = field(default_factory=list)


# --- deployment files ------------------------------------------------------

@dataclass
class DValue(Node):
    kind: str           # "string", "int", "float", "ident", "array"
    value: Any          # str, int, float, str, List[DValue]


@dataclass
class DProperty(Node):
    key: str
    value: DValue


@dataclass
class DSection(Node):
    kind: str                       # "attribute", "field", "method", ...
    name: Optional[str]
    items: List[Union["DSection", DProperty]]


@dataclass
class DDefine(Node):
    spec: str
    target_kind: str                # "interface", "typeCollection", ...
    target: str
    target_loc: Location
    items: List[Union[DSection, DProperty]]


@dataclass
class FdeplFile:
    path: str
    imports: List[Tuple[str, Location]]
    defines: List[DDefine]
