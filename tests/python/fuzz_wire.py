#!/usr/bin/env python3
"""fuzz_wire.py: parambus.wire's frame reader and body decoders: any bytes
give frames and fields or a ProtocolError, and a decoded body encodes back
to the same bytes. Seeds: every frame of tests/vectors/socket-frames.txt."""
import _fuzz

with _fuzz.atheris.instrument_imports():
    from parambus import wire
    from parambus.errors import ProtocolError


def seeds():
    out = []
    with open(_fuzz.VECTORS + "/socket-frames.txt") as f:
        cur = ""
        for line in f:
            if line.startswith("hex "):
                cur += line[4:].strip().replace(" ", "")
            elif not line.strip() and cur:
                out.append(bytes.fromhex(cur))
                cur = ""
        if cur:
            out.append(bytes.fromhex(cur))
    return out


def one_input(data: bytes) -> None:
    reader = wire.FrameReader(4096)
    reader.feed(data)
    while True:
        try:
            f = reader.next()
        except ProtocolError:
            return
        if f is None:
            return
        try:
            fields = f.decode()
        except ProtocolError:
            continue
        again = wire.encode_body(f.type, fields)
        assert again == f.body, (f, again.hex(), f.body.hex())


_fuzz.seed(seeds())
_fuzz.run(one_input)
