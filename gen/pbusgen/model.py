"""The resolved model: what the back ends read.

Built once by resolver.py (Franca elements) and params.py (parameters), then
checked by checks.py. Every name a back end needs is computed here, once:
fully qualified Franca names, parameter names and indexes, and every C
identifier. Back ends only format what they find.
"""

from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Union

from .errors import Location


# --- Franca types ----------------------------------------------------------

@dataclass(eq=False)
class BasicType:
    name: str               # Franca name: "Int8", "String", ...
    token: str              # schema type token: "int8", "string", ...

    def __str__(self) -> str:
        return self.name


BASIC_TYPES: Dict[str, BasicType] = {
    name: BasicType(name, token) for name, token in (
        ("Int8", "int8"), ("UInt8", "uint8"), ("Int16", "int16"),
        ("UInt16", "uint16"), ("Int32", "int32"), ("UInt32", "uint32"),
        ("Int64", "int64"), ("UInt64", "uint64"), ("Boolean", "bool"),
        ("Float", "float"), ("Double", "double"), ("String", "string"),
        ("ByteBuffer", "bytes"),
        # Franca's placeholder for a type not (yet) known: no values, no
        # representation; a parameter of this type is refused (params.py)
        ("undefined", "undefined"))
}

# Value range of each integer type token.
INT_RANGES = {
    "int8": (-2**7, 2**7 - 1), "uint8": (0, 2**8 - 1),
    "int16": (-2**15, 2**15 - 1), "uint16": (0, 2**16 - 1),
    "int32": (-2**31, 2**31 - 1), "uint32": (0, 2**32 - 1),
    "int64": (-2**63, 2**63 - 1), "uint64": (0, 2**64 - 1),
}


@dataclass(eq=False)
class IntegerType:
    """Franca `Integer(lower, upper)`; None is minInt / maxInt."""

    lower: Optional[int]
    upper: Optional[int]

    def __str__(self) -> str:
        if self.lower is None and self.upper is None:
            return "Integer"
        lo = "minInt" if self.lower is None else str(self.lower)
        hi = "maxInt" if self.upper is None else str(self.upper)
        return f"Integer({lo},{hi})"


@dataclass(eq=False)
class Enumerator:
    name: str
    value: int
    desc: Optional[str]
    loc: Location
    c_name: str = ""        # PREFIX_ENUM_LABEL, set when the enum is used


@dataclass(eq=False)
class EnumType:
    fqn: str
    name: str
    loc: Location
    base: Optional["EnumType"]
    enumerators: List[Enumerator]   # inherited first
    desc: Optional[str]
    c_type: str = ""        # prefix_enum_name (the C enum tag), set when used
    c_guard: str = ""       # PREFIX_TYPE_ENUM_NAME_DEFINED, its #ifndef guard
    java_name: str = ""     # OutputState (nested Java enum), set when used

    def __str__(self) -> str:
        return self.fqn


@dataclass(eq=False)
class Field:
    name: str
    type: "Type"
    desc: Optional[str]
    loc: Location


@dataclass(eq=False)
class StructType:
    fqn: str
    name: str
    loc: Location
    base: Optional["StructType"]
    polymorphic: bool
    fields: List[Field]             # inherited first
    desc: Optional[str]

    def __str__(self) -> str:
        return self.fqn


@dataclass(eq=False)
class UnionType:
    fqn: str
    name: str
    loc: Location
    base: Optional["UnionType"]
    fields: List[Field]
    desc: Optional[str]

    def __str__(self) -> str:
        return self.fqn


@dataclass(eq=False)
class MapType:
    fqn: str
    name: str
    loc: Location
    key: "Type"
    value: "Type"
    desc: Optional[str]

    def __str__(self) -> str:
        return self.fqn


@dataclass(eq=False)
class ArrayType:
    fqn: Optional[str]              # None for an implicit `T[]`
    name: Optional[str]
    loc: Location
    element: "Type"
    desc: Optional[str] = None

    def __str__(self) -> str:
        return self.fqn or f"{self.element}[]"


@dataclass(eq=False)
class TypedefType:
    fqn: str
    name: str
    loc: Location
    actual: "Type"
    desc: Optional[str]

    def __str__(self) -> str:
        return self.fqn


Type = Union[BasicType, IntegerType, EnumType, StructType, UnionType,
             MapType, ArrayType, TypedefType]


def unalias(t: "Type") -> "Type":
    """The type a chain of typedefs names."""
    while isinstance(t, TypedefType):
        t = t.actual
    return t


# --- constants, interfaces -------------------------------------------------

@dataclass(frozen=True)
class EnumValue:
    """The value of an enumerator used in an expression."""

    enum: EnumType
    name: str
    value: int


@dataclass(eq=False)
class Constant:
    fqn: str
    name: str
    type: Type
    value: Any      # int, float, bool, str, EnumValue, list, dict
    desc: Optional[str]
    loc: Location


@dataclass(eq=False)
class Argument:
    name: str
    type: Type
    desc: Optional[str]
    loc: Location


@dataclass(eq=False)
class Method:
    name: str
    selector: Optional[str]
    fire_and_forget: bool
    in_args: List[Argument]
    out_args: List[Argument]
    error: Optional[EnumType]
    desc: Optional[str]
    loc: Location
    callable_by: Optional[str] = None   # deployment CallableBy: a group name
    error_desc: Optional[str] = None    # `<** @description **>` before `error`
    # SCPI (scpi.py): the deployment's ScpiKeyword and ScpiAccess as
    # written, where they were given, and the scpi.MethodCommand once checked
    scpi_keyword: Optional[str] = None
    scpi_access: Optional[str] = None
    scpi_origins: Dict[str, Location] = field(default_factory=dict)
    scpi: Any = None


@dataclass(eq=False)
class Broadcast:
    name: str
    selector: Optional[str]
    selective: bool
    out_args: List[Argument]
    desc: Optional[str]
    loc: Location


@dataclass(eq=False)
class Attribute:
    name: str
    type: Type
    readonly: bool
    no_read: bool
    no_subscriptions: bool
    desc: Optional[str]
    loc: Location
    interface: "Interface"


@dataclass(eq=False)
class ContractVariable:
    name: str
    type: Type
    value: Any                      # its initializer's value, or None
    loc: Location


@dataclass(eq=False)
class Transition:
    """`on <trigger> <element> [guard] -> target { action }`. Guard and
    action are kept as written (syntax.py expressions and statements): they
    run against a live interface, nothing here evaluates them."""

    trigger: str                    # call, respond, error, signal, set, update
    element: Union[Method, Broadcast, Attribute]
    guard: Any                      # syntax.Expr or None
    target: "State"
    action: Any                     # syntax.Block or None
    loc: Location


@dataclass(eq=False)
class State:
    name: str
    desc: Optional[str]
    loc: Location
    transitions: List[Transition] = field(default_factory=list)


@dataclass(eq=False)
class Contract:
    variables: List[ContractVariable]
    initial: State
    states: List[State]
    loc: Location


@dataclass(eq=False)
class TypeCollection:
    fqn: str
    version: Optional[tuple]
    types: List[Type]
    constants: List[Constant]
    desc: Optional[str]
    loc: Location


@dataclass(eq=False)
class Interface:
    fqn: str
    name: str
    package: str
    version: tuple                  # (major, minor); (0, 0) when not given
    base: Optional["Interface"]
    manages: List["Interface"]
    attributes: List[Attribute]     # own ones only
    methods: List[Method]
    broadcasts: List[Broadcast]
    constants: List[Constant]
    types: List[Type]
    has_contract: bool
    desc: Optional[str]
    loc: Location
    contract: Optional[Contract] = None

    def all_methods(self) -> List[Method]:
        """Inherited methods first, then own: their index order."""
        return [m for i in self._chain() for m in i.methods]

    def all_broadcasts(self) -> List[Broadcast]:
        """Inherited broadcasts first, then own: their index order."""
        return [b for i in self._chain() for b in i.broadcasts]

    def _chain(self) -> List["Interface"]:
        """The root of the extends chain first, this interface last."""
        chain = []
        itf: Optional[Interface] = self
        while itf is not None:          # a loop: a chain may be long
            chain.append(itf)
            itf = itf.base
        return chain[::-1]

    def all_attributes(self) -> List[Attribute]:
        """Inherited attributes first, then own, in declaration order."""
        return [a for i in self._chain() for a in i.attributes]



# --- parameters ------------------------------------------------------------

@dataclass(eq=False)
class HwBinding:
    """How pbus-hwd connects a parameter to a device (docs/deployment-spec.md,
    "Hardware bindings"). Every key of the binding's kind holds its value,
    defaults filled in; the keys of other kinds are None. Choices keep their
    deployment spelling ("pull_up"); the schema back end writes them."""

    kind: str                       # gpio_output, gpio_input, i2c_register, pwm_duty
    loc: Location                   # the HwBinding key
    device: str = ""
    line: Union[str, int, None] = None  # a line name (str) or offset (int)
    active_low: Optional[bool] = None
    bias: Optional[str] = None
    drive: Optional[str] = None
    edges: Optional[str] = None
    debounce_us: Optional[int] = None
    address: Optional[int] = None
    register: Optional[int] = None
    width: Optional[int] = None
    byte_order: Optional[str] = None
    signed: Optional[bool] = None
    rate_hz: Optional[float] = None
    channel: Optional[int] = None
    period_ns: Optional[int] = None
    polarity: Optional[str] = None
    scale: Optional[float] = None
    offset: Optional[float] = None


@dataclass(eq=False)
class Parameter:
    index: int
    name: str                       # "limits.voltage"
    type: str                       # schema token: "double", "int32[]", ...
    element: str                    # scalar token ("int32" for "int32[]")
    is_array: bool
    size: Optional[int] = None      # string / bytes
    count: Optional[int] = None     # arrays
    enum: Optional[EnumType] = None
    unit: Optional[str] = None
    min: Any = None
    max: Any = None
    step: Any = None
    default: Any = None             # bool, int, float, str, bytes, EnumValue, list
    readonly: bool = False
    persistent: bool = False
    no_read: bool = False
    no_subscriptions: bool = False
    update_class: str = "setting"
    group: Optional[str] = None
    desc: Optional[str] = None
    hw: Optional[HwBinding] = None  # a hardware binding, if the deployment has one
    # Deadband / MaxRateHz: how a subscriber that shows the value subscribes
    deadband: Optional[float] = None
    max_rate_hz: Optional[float] = None
    # SCPI (scpi.py): the keys as written; scpi.check() fills `scpi`
    scpi_keyword: Optional[str] = None
    scpi_access: Optional[str] = None   # "query", "set", "both" when written
    scpi_enum: Optional[str] = None
    # "ScpiQuestionable" / "ScpiOperation" -> the status register bit it drives
    scpi_status: Dict[str, int] = field(default_factory=dict)
    scpi_questionable_level: Optional[str] = None   # "minor" (default), "major", "invalid"
    scpi: Any = None                    # a scpi.Command once checked
    # Fleet (fleet.py): the Fleet* keys as written; fleet.check() fills
    # `fleet` (a fleet.Publication, defaults from the update class)
    fleet_keys: Dict[str, Any] = field(default_factory=dict)
    fleet: Any = None
    attribute: Optional[Attribute] = None
    franca_type: Optional[Type] = None
    loc: Optional[Location] = None  # the Franca attribute or field
    # where each deployment key was given: key -> Location
    origins: Dict[str, Location] = field(default_factory=dict)
    # C identifiers
    c_name: str = ""                # "limits_voltage"
    c_index: str = ""               # "PSU_LIMITS_VOLTAGE"
    c_getter: str = ""              # "psu_get_limits_voltage"
    c_setter: str = ""              # "psu_set_limits_voltage" ("" if readonly)
    c_publisher: str = ""           # "psu_publish_measured_voltage" (readonly only)
    c_capacity: str = ""            # "PSU_STATUS_TEXT_MAX_SIZE" (strings, bytes),
                                    # "PSU_X_MAX_COUNT" (arrays), else ""
    # Java identifiers (members of the generated class)
    java_index: str = ""            # "LIMITS_VOLTAGE"
    java_getter: str = ""           # "getLimitsVoltage"
    java_setter: str = ""           # "setLimitsVoltage" ("" if readonly)
    java_capacity: str = ""         # "STATUS_TEXT_MAX_SIZE", "X_MAX_COUNT", else ""

    @property
    def flags(self) -> List[str]:
        out = []
        if self.readonly:
            out.append("readonly")
        if self.persistent:
            out.append("persistent")
        if self.no_read:
            out.append("noread")
        if self.no_subscriptions:
            out.append("nosubscriptions")
        return out


@dataclass(eq=False)
class CNames:
    """Identifiers of the generated C code that belong to no parameter."""

    prefix: str                     # "psu"
    upper: str                      # "PSU"
    guard: str                      # "PSU_PBUS_H"
    schema_hash: str                # "PSU_SCHEMA_HASH"
    param_count: str                # "PSU_PARAM_COUNT"
    schema_text: str                # "psu_schema_text"
    schema_length: str              # "psu_schema_length"
    index_enum: str                 # "psu_param_index" (enum tag)
    handle: str                     # "psu" (struct tag of the opened instance)
    open: str                       # "psu_open"
    close: str                      # "psu_close"
    table: str                      # "psu_table"
    param: str                      # "psu_param"
    describe_open_error: str        # "psu_describe_open_error"


@dataclass(eq=False)
class JavaComponent:
    """A component of a Java record: a leaf field (one parameter per use of
    the struct) or a nested struct (its own record)."""

    name: str                       # "referenceVoltage" (lowerCamelCase)
    field: Field
    record: Optional["JavaRecord"] = None   # a struct field
    leaf: Optional[Parameter] = None        # else: the leaf of the struct's first
                                            # use, for its type (every use has
                                            # the same one)


@dataclass(eq=False)
class JavaRecord:
    """The Java record of a struct that parameters hold (flattened)."""

    struct: StructType
    name: str                       # "Limits"
    components: List[JavaComponent]


@dataclass(eq=False)
class JavaStructAccess:
    """A struct attribute read and written whole, as its record."""

    attribute: Attribute
    record: JavaRecord
    parameters: List[Parameter]     # its leaves, in index (= component) order
    getter: str                     # "getLimits"
    setter: str                     # "setLimits" ("" if readonly)


@dataclass(eq=False)
class JavaNames:
    """Identifiers of the generated Java class that belong to no parameter."""

    package: str                    # "com.example.psu"
    class_name: str                 # "PowerSupply"
    path: str                       # "com/example/psu/PowerSupply.java"
    records: List[JavaRecord]       # first use first, outer before inner
    struct_access: List[JavaStructAccess]   # in attribute order
    # the fixed members, for the clash checks
    constants: tuple = ("SCHEMA_HASH", "PARAM_COUNT", "INTERFACE")
    methods: tuple = ("open", "checked", "table", "close", "samples", "string",
                      "bytes", "little", "booleans", "shorts", "ints", "longs",
                      "floats", "doubles")


@dataclass(eq=False)
class Model:
    interface: Interface
    parameters: List[Parameter]
    enums: List[EnumType]           # enums that parameters use, first use first
    source_files: List[str]         # base names, for the banner
    c: CNames
    types: Dict[str, Type]          # every named type, by fqn
    constants: Dict[str, Constant]  # every constant, by fqn
    interfaces: Dict[str, Interface]
    type_collections: Dict[str, TypeCollection]
    java: Optional[JavaNames] = None    # set by params.java_names() for --java
