"""Resolver, contracts: the names in an interface's contract.

A contract (Franca's FContract) declares state variables and a protocol
state machine: an initial state, and states whose transitions fire on an
event of the interface, under a guard, with an action. The resolver builds
the interface (methods, broadcasts, attributes) first; this module then
resolves its contract as Franca's scoping has it (FrancaIDLScopeProvider):

- state variables have distinct names, their types resolve and their
  initializers fit them;
- states have distinct names; `initial` and every transition's target name
  one of them;
- a trigger names a method (`call`, `respond`, `error`), a broadcast
  (`signal`) or an attribute (`set`, `update`) of the interface or of those
  it extends; a method or broadcast declared with a selector is named
  `name:selector`, as Franca's unique names are;
- a name in a guard or an action is, first match wins, a state variable, an
  argument of the trigger (its in arguments for `call`, out arguments for
  `respond` and `signal`), an attribute, then a constant or an enumerator
  (`Enum.LABEL`); `x->f` must name a field or member of x's type;
  `errordef.X` an enumerator of the error of the method that an `on error`
  trigger names; the target of an assignment is a state variable.

Guards and actions are kept as written: they run against a live interface,
so nothing here evaluates them or checks their types.
"""

from typing import Any, Dict, List, Optional, Tuple

from . import syntax as S
from .errors import GenError, Location
from .expressions import coerce, evaluate, field_of, operands
from .model import (Attribute, Broadcast, Contract, ContractVariable, EnumType,
                    Interface, Method, State, StructType, Transition, Type,
                    UnionType, unalias)


class _Context:
    """What the names of one transition's guard and action can mean."""

    def __init__(self, resolver, scope, typed: Dict[str, Tuple[str, Type]],
                 variables: Dict[str, ContractVariable], error: Optional[EnumType],
                 trigger: S.Trigger):
        self.resolver = resolver
        self.scope = scope
        self.typed = typed              # name -> (what it is, its type)
        self.variables = variables
        self.error = error              # the error of an `on error` trigger
        self.trigger = trigger


def resolve(resolver, itf: Interface, decl: S.Contract, scope) -> Contract:
    variables: Dict[str, ContractVariable] = {}
    for v in decl.variables:
        if v.name in variables:
            raise GenError(v.loc, f"duplicate state variable '{v.name}' (first at "
                                  f"{variables[v.name].loc})")
        t = resolver.type_ref(v.type, v.is_array, scope)
        value = None
        if v.value is not None:
            raw = evaluate(v.value, lambda n, loc: resolver.ref_value(n, loc, scope))
            value = coerce(raw, t, v.value.loc, f"state variable '{v.name}'")
        variables[v.name] = ContractVariable(v.name, t, value, v.loc)

    states: Dict[str, State] = {}
    for s in decl.states:
        if s.name in states:
            raise GenError(s.loc, f"duplicate state '{s.name}' (first at "
                                  f"{states[s.name].loc})")
        states[s.name] = State(s.name, s.annotation("description"), s.loc)

    def state(name: str, loc: Location) -> State:
        if name not in states:
            raise GenError(loc, f"unknown state '{name}' in the contract of "
                                f"'{itf.fqn}'")
        return states[name]

    initial = state(decl.initial, decl.initial_loc)
    attributes = {a.name: a for a in itf.all_attributes()}
    for s in decl.states:
        for tr in s.transitions:
            element, args, error = _trigger(tr.trigger, itf, attributes)
            typed: Dict[str, Tuple[str, Type]] = {}
            for v in variables.values():
                typed.setdefault(v.name, ("state variable", v.type))
            for a in args:
                typed.setdefault(a.name, ("argument", a.type))
            for a in attributes.values():
                typed.setdefault(a.name, ("attribute", a.type))
            ctx = _Context(resolver, scope, typed, variables, error, tr.trigger)
            if tr.guard is not None:
                _expression(tr.guard, ctx)
            if tr.action is not None:
                _statement(tr.action, ctx)
            states[s.name].transitions.append(Transition(
                tr.trigger.kind, element, tr.guard, state(tr.target, tr.target_loc),
                tr.action, tr.loc))
    return Contract(list(variables.values()), initial, list(states.values()), decl.loc)


def _shown(trig: S.Trigger) -> str:
    return trig.name if trig.selector is None else f"{trig.name}:{trig.selector}"


def _trigger(trig: S.Trigger, itf: Interface, attributes: Dict[str, Attribute]):
    """(element, arguments in scope, error enumeration) of a trigger."""
    shown = _shown(trig)
    if trig.kind in ("set", "update"):
        if trig.name not in attributes:
            raise GenError(trig.name_loc, f"no attribute '{trig.name}' in interface "
                                          f"'{itf.fqn}'")
        return attributes[trig.name], [], None
    if trig.kind == "signal":
        elements: List[Any] = itf.all_broadcasts()
        word = "broadcast"
    else:
        elements = itf.all_methods()
        word = "method"
    found = [e for e in elements if (e.name, e.selector) == (trig.name, trig.selector)]
    if not found:
        raise GenError(trig.name_loc, f"no {word} '{shown}' in interface '{itf.fqn}'"
                       + (" (a method or broadcast declared with a selector is "
                          "named 'name:selector')"
                          if any(e.name == trig.name for e in elements) else ""))
    if len(found) > 1:
        raise GenError(trig.name_loc, f"{word} '{shown}' is declared {len(found)} "
                                      f"times in '{itf.fqn}'; give each a selector")
    element = found[0]
    if isinstance(element, Broadcast):
        return element, element.out_args, None
    m: Method = element
    args = {"call": m.in_args, "respond": m.out_args, "error": []}[trig.kind]
    return m, args, m.error if trig.kind == "error" else None


def _expression(expr: S.Expr, ctx: _Context) -> None:
    todo = [expr]
    while todo:                         # a loop: expressions may be long
        node = todo.pop()
        if isinstance(node, S.Ref):
            _reference(node, ctx)
        elif isinstance(node, S.ErrorDefRef):
            if ctx.trigger.kind != "error":
                raise GenError(node.loc, f"'errordef.{node.name}' needs an 'on error' "
                                         f"trigger, this one is 'on {ctx.trigger.kind}'")
            names = [e.name for e in ctx.error.enumerators] if ctx.error else []
            if node.name not in names:
                raise GenError(node.loc, f"method '{_shown(ctx.trigger)}' has no "
                                         f"error '{node.name}'")
        else:
            todo.extend(operands(node))


def _reference(ref: S.Ref, ctx: _Context) -> None:
    """Check that `ref` (with its `->` fields) names something."""
    if ref.name in ctx.typed:
        _, t = ctx.typed[ref.name]
        path = ref.name
        for name, loc in ref.fields:
            u = unalias(t)
            if not isinstance(u, (StructType, UnionType)):
                raise GenError(loc, f"'{path}' is of type {t}, which has no field "
                                    f"'{name}'")
            match = [f for f in u.fields if f.name == name]
            if not match:
                raise GenError(loc, f"'{path}' is a {u.fqn}, which has no field "
                                    f"'{name}'")
            t = match[0].type
            path += "->" + name
        return
    value = ctx.resolver.ref_value(ref.name, ref.loc, ctx.scope, what="state "
                                   "variable, argument, attribute, constant or "
                                   "enumerator")
    path = ref.name
    for name, loc in ref.fields:
        value = field_of(value, path, name, loc)
        path += "->" + name


def _statement(st: S.Statement, ctx: _Context) -> None:
    if isinstance(st, S.Block):
        for s in st.statements:
            _statement(s, ctx)
    elif isinstance(st, S.IfStatement):
        _expression(st.condition, ctx)
        _statement(st.then, ctx)
        if st.otherwise is not None:
            _statement(st.otherwise, ctx)
    else:
        target = st.target
        if target.name not in ctx.variables:
            raise GenError(target.loc, f"'{target.name}' is not a state variable of "
                                       "the contract; only those are assigned")
        _reference(target, ctx)
        _expression(st.value, ctx)
