"""Names of the generated C code, computed once for the model.

    prefix                  --prefix, or the interface name in snake_case
    <PREFIX>_<PARAM>        parameter index; PARAM is the parameter name in
                            upper case with dots turned into underscores
    <prefix>_get_<param>    getter; <param> is the name with dots turned into
    <prefix>_set_<param>    underscores, case kept
    enum <prefix>_<enum>    C enum of a Franca enumeration (<enum> in snake_case)
    <PREFIX>_<ENUM>_<LABEL> its enumerators
"""

import re

_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def snake(name: str) -> str:
    """CamelCase -> snake_case: PowerSupply -> power_supply,
    HTTPServer -> http_server, voltage_setpoint stays."""
    s = re.sub(r"([A-Z]+)([A-Z][a-z])", r"\1_\2", name)
    s = re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", s)
    return s.lower()


def is_identifier(name: str) -> bool:
    return _IDENT.fullmatch(name) is not None


def param_c_name(param_name: str) -> str:
    return param_name.replace(".", "_")


# --- Java ------------------------------------------------------------------
# The generated class (emit_java.py) for package P and interface I:
#
#     P                      --java-package, or the Franca package in lower case
#     I                      the class: the interface name as written
#     <PARAM>                parameter index: each dotted segment in upper
#                            snake_case, joined by _ (limits.voltage ->
#                            LIMITS_VOLTAGE, outputEnable -> OUTPUT_ENABLE)
#     get<Param>, set<Param> accessors: the segments' parts (split at _) with
#                            their first letter in upper case (getLimitsVoltage)
#     <PARAM>_MAX_SIZE,      capacity of a string or bytes parameter (bytes),
#     <PARAM>_MAX_COUNT      of an array (elements)
#     <Enum>, <Struct>       nested enum and record types: the Franca names
#     <field>                record components: lowerCamelCase of the field

JAVA_KEYWORDS = frozenset("""
    abstract assert boolean break byte case catch char class const continue
    default do double else enum extends final finally float for goto if
    implements import instanceof int interface long native new package private
    protected public return short static strictfp super switch synchronized
    this throw throws transient try void volatile while true false null _
""".split())

# Words Java forbids as type names only (restricted identifiers).
JAVA_TYPE_RESTRICTED = frozenset({"record", "var", "yield", "sealed", "permits"})

# Simple names the generated class refers to (imports, java.lang, and the
# first segment of the qualified names it writes): a nested type of the
# same name would shadow them.
JAVA_USED_TYPES = frozenset({
    "ParamTable", "ParambusException", "Sample", "String", "Object", "Override",
    "AutoCloseable", "RuntimeException", "Float", "Double", "Long", "Short",
    "Byte", "Integer", "java", "io"})

# Methods of java.lang.Object and java.lang.Record that a record component
# (an accessor of that name) or a generated method must not be.
JAVA_OBJECT_METHODS = frozenset({"getClass", "hashCode", "equals", "toString", "clone",
                                 "finalize", "notify", "notifyAll", "wait"})


def _parts(name: str):
    return [x for x in re.split(r"[._]", name) if x]


def java_upper_camel(name: str) -> str:
    """limits.voltage -> LimitsVoltage, voltage_setpoint -> VoltageSetpoint,
    outputEnable -> OutputEnable; a name without letters or digits stays."""
    parts = _parts(name)
    if not parts:
        return name
    return "".join(x[0].upper() + x[1:] for x in parts)


def java_lower_camel(name: str) -> str:
    """reference_voltage -> referenceVoltage; the first part as written."""
    parts = _parts(name)
    if not parts:
        return name
    return parts[0] + "".join(x[0].upper() + x[1:] for x in parts[1:])


def java_constant(name: str) -> str:
    """limits.voltage -> LIMITS_VOLTAGE, outputEnable -> OUTPUT_ENABLE."""
    return "_".join(snake(seg).upper() for seg in name.split("."))


def java_package(franca_package: str) -> str:
    """The default Java package: the Franca package in lower case."""
    return franca_package.lower()


def is_java_identifier(name: str) -> bool:
    return (re.fullmatch(r"[A-Za-z_$][A-Za-z0-9_$]*", name) is not None
            and name not in JAVA_KEYWORDS)
