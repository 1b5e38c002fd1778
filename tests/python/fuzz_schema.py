#!/usr/bin/env python3
"""fuzz_schema.py: parambus.schema's parser of compiled schemas: any text
gives a Schema or a SchemaError, and every value of a parsed schema's
parameters that encodes decodes back. Seeds: the test schemas."""
import _fuzz

with _fuzz.atheris.instrument_imports():
    from parambus.schema import BadValue, Schema, decode_value, encode_value
    from parambus.errors import SchemaError


def seeds():
    out = []
    for path in (_fuzz.TOP + "/tests/cli/fixtures/test.pbs", _fuzz.VECTORS + "/segment.pbs",
                 _fuzz.VECTORS + "/segment-edge.pbs"):
        with open(path, "rb") as f:
            out.append(f.read())
    return out


def one_input(data: bytes) -> None:
    text = data.decode("utf-8", "surrogateescape")
    try:
        s = Schema(text)
    except SchemaError:
        return
    for p in s.params:
        for v in (0, 1, -1, 1.5, "OFF", "x", b"\x00", [1, 2]):
            try:
                raw = encode_value(p.type, v, p.enum)
            except BadValue:
                continue
            decode_value(p.type, raw, p.enum)


_fuzz.seed(seeds())
_fuzz.run(one_input)
