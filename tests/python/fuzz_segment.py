#!/usr/bin/env python3
"""fuzz_segment.py: parambus.segment's validation of value segments: any
bytes give a layout or a SegmentError, and every parameter of an accepted
layout decodes whatever its copies hold (segment-format.md §2.8). Seeds:
the valid and invalid images of tests/vectors/."""
import os

import _fuzz

with _fuzz.atheris.instrument_imports():
    from parambus import segment
    from parambus.errors import SegmentError


def seeds():
    out = []
    for name in sorted(os.listdir(_fuzz.VECTORS)):
        if name.startswith("segment") and name.endswith(".hex"):
            with open(os.path.join(_fuzz.VECTORS, name)) as f:
                out.append(bytes.fromhex(f.read().replace("\n", "")))
    return out


def one_input(data: bytes) -> None:
    try:
        layout = segment.parse(data)
    except SegmentError:
        return
    for p in layout.params:
        seq = int.from_bytes(data[p.slot_offset:p.slot_offset + 8], "little")
        c = p.slot_offset + 16 + (seq & (p.copy_count - 1)) * p.copy_stride
        length = min(int.from_bytes(data[c + 12:c + 16], "little"), p.value_size)
        segment.decode_stored(p, data[c + 16:c + 16 + (p.value_size if p.scalar else length)])


_fuzz.seed(seeds())
_fuzz.run(one_input)
