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
