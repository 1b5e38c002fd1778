"""_session.py: what the blocking and the asyncio clients share — turning
names and Python values into requests and replies into Values and errors,
against the schema the server sent. No I/O here."""
from __future__ import annotations

import os
import sys
from typing import Any, Iterable, Mapping

from .errors import describe, errname, set_refused
from .schema import Param, Schema, Value, encode_value, decode_value, status_of
from .wire import Fields, VERSION


class SubscriptionBase:
    """What a subscription of either client holds: its parameters, its
    deadband and interval, pbusd's id for it; fields() is its SUBSCRIBE."""

    def __init__(self, client: Any, params: list[Param], deadband: float, min_interval: float) -> None:
        self.client, self.params = client, params
        self.names = [p.name for p in params]
        self.deadband, self.min_interval = deadband, min_interval
        self.server_id = 0
        self.closed = False

    def fields(self) -> Fields:
        return {"min_interval_us": int(round(self.min_interval * 1e6)), "deadband": float(self.deadband),
                "indexes": [p.index for p in self.params]}


def forget(sub: SubscriptionBase, by_id: dict[int, Any], all_subs: list[Any]) -> bool:
    """Close @sub and drop it from a client's tables (by pbusd's id, and
    the list renewed on reconnect); False if it was closed already."""
    if sub.closed:
        return False
    sub.closed = True
    if sub in all_subs:
        all_subs.remove(sub)
    by_id.pop(sub.server_id, None)
    return True


def client_name(name: "str | None") -> str:
    n = name if name is not None else os.path.basename(sys.argv[0] or "python") or "python"
    return n.encode("utf-8")[:64].decode("utf-8", "ignore")


def hello_fields(name: "str | None", schema_hash: int) -> Fields:
    return {"min_version": VERSION, "max_version": VERSION, "schema_hash": schema_hash,
            "client_name": client_name(name)}


def params_of(schema: Schema, names: Iterable["str | int"]) -> list[Param]:
    out = []
    for n in names:
        out.append(schema.find(n) if isinstance(n, str) else schema[n])
    if not out:
        raise ValueError("no parameter named")
    return out


def to_value(schema: Schema, rec: Fields) -> Value:
    p = schema[rec["index"]]
    return Value(p.name, decode_value(p.type, rec["value"], p.enum), status_of(rec["status"]),
                 rec["timestamp_ns"], rec["seq"], p.unit, p.index)


def write_items(items: "Mapping[str, Any] | Iterable[tuple[str, Any]]") -> list[tuple[str, Any]]:
    return list(items.items()) if isinstance(items, Mapping) else list(items)


def set_fields(schema: Schema, items: list[tuple[str, Any]]) -> tuple[Fields, list[Param]]:
    params, writes = [], []
    for name, value in items:
        p = schema.find(name)
        try:
            raw = encode_value(p.type, value, p.enum)
        except ValueError as e:
            raise type(e)(f"{p.name}: {e}") from None
        params.append(p)
        writes.append({"index": p.index, "value": raw})
    if not writes:
        raise ValueError("nothing to set")
    return {"writes": writes}, params


def _limits(p: Param) -> str:
    lo, hi = p.keys.get("min"), p.keys.get("max")
    if lo is None and hi is None:
        return ""
    return f"; limits {lo if lo is not None else '-'} … {hi if hi is not None else '-'}"


def set_result(reply: Fields, params: list[Param], items: list[tuple[str, Any]]) -> dict[str, int]:
    """Each parameter's new version, or SetRefused naming the refused write."""
    results = reply["results"]
    if reply["result"] == 0 and all(r["result"] == 0 for r in results):
        return {p.name: r["seq"] for p, r in zip(params, results)}
    code = reply["result"] or next(r["result"] for r in results if r["result"])
    named = [(p.name, r["result"]) for p, r in zip(params, results)]
    first = next(((p, v, r) for p, (_, v), r in zip(params, items, results) if r["result"]), None)
    if first is None:
        message = f"set refused: {describe(code)} ({errname(code)})"
    else:
        p, v, r = first
        extra = _limits(p) if r["result"] == -34 else ""
        written = any(x["seq"] for x in results)
        message = (f"{p.name}={v!r}: {describe(r['result'])} ({errname(r['result'])}{extra})"
                   + ("" if written else "; nothing was written"))
    raise set_refused(code, message, named)
