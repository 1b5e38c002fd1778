"""segment.py: the value segment's layout and its validation
(docs/segment-format.md §2, §7), over any buffer: a mapping of
/dev/shm/pbus.NAME (table.py) or the bytes of a test vector.

parse() checks a segment exactly as §7 says, in its order, and refuses one
that fails a check with SegmentError naming the check (magic, version,
region-inside ...); it never raises anything else, whatever the bytes
(tests/python/fuzz_segment.py). What it returns describes every parameter
(names, types, units, limits, enumerators, where its slot is); values are
read by table.py with the read protocol (§4.1), and decoded by
decode_stored() as §2.6 and §2.8 say.
"""
from __future__ import annotations

import struct
from dataclasses import dataclass, field
from typing import Any

from .errors import SegmentError

MAGIC = b"PARAMBUS"
FORMAT_VERSION = 2
HEADER_SIZE = 256
DESCRIPTOR_SIZE = 128

TYPES = {1: "bool", 2: "int8", 3: "int16", 4: "int32", 5: "int64", 6: "uint8", 7: "uint16",
         8: "uint32", 9: "uint64", 10: "float", 11: "double", 12: "string", 13: "bytes", 14: "enum"}
SIZES = {"bool": 1, "int8": 1, "int16": 2, "int32": 4, "int64": 8, "uint8": 1, "uint16": 2,
         "uint32": 4, "uint64": 8, "float": 4, "double": 8, "enum": 4}
FORMATS = {"bool": "B", "int8": "b", "int16": "h", "int32": "i", "int64": "q", "uint8": "B",
           "uint16": "H", "uint32": "I", "uint64": "Q", "float": "f", "double": "d", "enum": "i"}
FLAG_BITS = ((1, "readonly"), (2, "persistent"), (4, "noread"), (8, "nosubscriptions"))
CLASSES = ("constant", "rare", "setting", "live")
STATES = ("creating", "live", "closed", "replaced")
HAS_MIN, HAS_MAX, HAS_STEP, HAS_DEFAULT = 16, 32, 64, 128
NO_ENUM = 0xFFFFFFFF

# Header fields (§2.1) that readers use after opening.
STATE_OFFSET = 52
SAVE_COUNT_OFFSET = 216
# The wake segment (§3).
WAKE_NOTIFY, WAKE_ANY_WAITERS, WAKE_PARAM_WAITERS, WAKE_WAITERS = 64, 68, 72, 128


def wake_turns_offset(count: int) -> int:
    """T: where the turns start in the wake segment (§3)."""
    return (128 + 4 * count + 7) // 8 * 8


def wake_need(count: int) -> int:
    """W: the bytes of the wake segment that @count parameters use (§3)."""
    return wake_turns_offset(count) + 8 * count


@dataclass
class ParamLayout:
    """One parameter as its descriptor (§2.2) describes it."""
    index: int
    name: str
    type: str                # "double", "int16[]" ...
    element: str             # the scalar type ("string", "bytes" for those)
    is_array: bool
    unit: str
    description: str
    group: str
    flags: frozenset[str]
    update_class: str
    value_size: int
    element_size: int
    slot_offset: int
    copy_stride: int
    copy_count: int
    min: Any = None
    max: Any = None
    step: Any = None
    default: "bytes | None" = None
    enumerators: list[tuple[str, int]] = field(default_factory=list)   # (label, value) in declaration order
    labels: dict[int, str] = field(default_factory=dict)        # value -> the first label with it

    @property
    def scalar(self) -> bool:
        return not self.is_array and self.element not in ("string", "bytes")


@dataclass
class SegmentLayout:
    """A validated value segment's header and parameters."""
    size: int
    instance: str
    interface: str
    version: tuple[int, int]
    schema_hash: int
    instance_id: int
    param_count: int
    enum_count: int
    owner_pid: int
    owner_start: int
    created_ns: int
    wake_id: int
    wake_size: int
    params: list[ParamLayout]


def _limit(type_name: str, bits: int) -> Any:
    if type_name in ("float", "double"):
        return struct.unpack("<d", struct.pack("<Q", bits))[0]
    if type_name.startswith("int"):
        return struct.unpack("<q", struct.pack("<Q", bits))[0]
    return bits


def parse(buf: Any, instance: "str | None" = None) -> SegmentLayout:
    """Validate the segment in @buf (bytes, or a memoryview of a mapping) as
    §7 says, in its order, and describe it; SegmentError naming the first
    check it fails. @instance: the name the header's instance must have
    (§7 check 29); None skips that check."""
    image = memoryview(buf).cast("B") if not isinstance(buf, (bytes, bytearray)) else buf
    size = len(image)

    def need(ok: bool, check: str, what: str) -> None:
        if not ok:
            raise SegmentError(check, f"not a valid parambus segment ({check}: {what})")

    def u32(off: int) -> int:
        return int(struct.unpack_from("<I", image, off)[0])

    def u64(off: int) -> int:
        return int(struct.unpack_from("<Q", image, off)[0])

    def inside(off: int, length: int, total: int) -> bool:
        return off <= total and length <= total - off

    need(size >= HEADER_SIZE, "size", f"{size} bytes, shorter than the {HEADER_SIZE}-byte header")
    need(bytes(image[0:8]) == MAGIC, "magic", f"magic {bytes(image[0:8])!r}")
    need(u32(8) == FORMAT_VERSION, "version", f"format version {u32(8)}, this reader reads {FORMAT_VERSION}")
    need(u32(12) == HEADER_SIZE, "header-size", f"header_size {u32(12)}")
    need(u64(16) == size, "segment-size", f"segment_size {u64(16)}, the file has {size} bytes")
    need(u32(48) == DESCRIPTOR_SIZE, "descriptor-size", f"descriptor_size {u32(48)}")
    count, enum_count = u32(40), u32(44)
    need(count <= 65535, "param-count", f"param_count {count}")
    name_field = bytes(image[152:216])
    need(0 in name_field, "instance-terminated", "no NUL in the instance name")
    wake_size = u64(224)
    need(wake_need(count) <= wake_size <= wake_need(count) + 65536, "wake-size", f"wake_size {wake_size}")
    descs, enums, enumerators, pool, pool_size, slots, slots_size, aux = (
        u64(o) for o in (56, 64, 72, 80, 88, 96, 104, 112))
    need(inside(descs, 128 * count, size) and inside(enums, 16 * enum_count, size)
         and inside(pool, pool_size, size) and inside(slots, slots_size, size)
         and inside(aux, 16 * count, size), "region-inside", "a region ends beyond the segment")
    need(descs % 8 == 0 and enums % 8 == 0 and enumerators % 8 == 0 and slots % 64 == 0 and aux % 64 == 0,
         "region-aligned", "a region's offset is misaligned")
    need(pool_size > 0, "strings-size", "strings_size 0")

    def string(off: int, length: int, what: str) -> str:
        need(inside(off, length + 1, pool_size) and image[pool + off + length] == 0
             and 0 not in bytes(image[pool + off:pool + off + length]), "string", f"{what} is not a valid string")
        return bytes(image[pool + off:pool + off + length]).decode("utf-8", "replace")

    interface = string(u32(136), u32(140), "the interface name")
    records = []
    total = 0
    for e in range(enum_count):
        name_off, name_len, first, n = struct.unpack_from("<IIII", image, enums + 16 * e)
        string(name_off, name_len, f"enum record {e}'s name")
        need(first == total and n > 0, "enum-record", f"enum record {e}: first {first}, count {n}")
        total += n
        records.append((first, n))
    need(inside(enumerators, 16 * total, size), "enumerators-inside", "the enumerators end beyond the segment")
    enumerator_list = []
    for k in range(total):
        value, label_off, label_len, _ = struct.unpack_from("<iIII", image, enumerators + 16 * k)
        enumerator_list.append((string(label_off, label_len, f"enumerator {k}'s label"), value))

    params = []
    for i in range(count):
        d = descs + 128 * i
        name = string(u32(d), u32(d + 4), f"parameter {i}'s name")
        need(u32(d + 4) >= 1, "name-length", f"parameter {i} has an empty name")
        unit = string(u32(d + 8), u32(d + 12), f"{name}'s unit")
        description = string(u32(d + 16), u32(d + 20), f"{name}'s description")
        group = string(u32(d + 24), u32(d + 28), f"{name}'s group")
        default_off, default_len = u32(d + 88), u32(d + 92)
        need(inside(default_off, default_len, pool_size), "default-inside", f"{name}'s default")
        code, update_class = image[d + 32], image[d + 33]
        flags = struct.unpack_from("<H", image, d + 34)[0]
        value_size, element_size, enum_index = u32(d + 36), u32(d + 40), u32(d + 44)
        slot, stride, slot_size, copies = u64(d + 48), u32(d + 56), u32(d + 60), u32(d + 100)
        array = bool(code & 0x80)
        element = code & 0x7F
        need(element in TYPES and (not array or element <= 11), "type", f"{name}: type code {code:#x}")
        need(update_class <= 3, "update-class", f"{name}: update class {update_class}")
        need(1 <= value_size <= 65536, "value-size", f"{name}: value_size {value_size}")
        need(default_len <= value_size, "default-length", f"{name}: default of {default_len} bytes")
        need(stride == (16 + value_size + 7) // 8 * 8, "copy-stride", f"{name}: copy_stride {stride}")
        need(copies == (4 if value_size > 256 else 2), "copy-count", f"{name}: copy_count {copies}")
        need(slot_size >= 16 + copies * stride, "slot-size", f"{name}: slot_size {slot_size}")
        need(slot % 64 == 0, "slot-aligned", f"{name}: slot_offset {slot}")
        need(inside(slot, slot_size, size) and slot >= slots and slot + slot_size <= slots + slots_size,
             "slot-inside", f"{name}: the slot lies outside the slots")
        type_name = TYPES[element]
        if type_name in ("string", "bytes"):
            need(element_size == 1, "element-size", f"{name}: element_size {element_size}")
        else:
            need(element_size == SIZES[type_name] and value_size % element_size == 0
                 and (array or value_size == element_size), "element-size", f"{name}: element_size {element_size}")
        need(enum_index < enum_count if type_name == "enum" else enum_index == NO_ENUM, "enum-index",
             f"{name}: enum_index {enum_index}")
        p = ParamLayout(
            index=i, name=name, type=type_name + ("[]" if array else ""), element=type_name, is_array=array,
            unit=unit, description=description, group=group,
            flags=frozenset(n for bit, n in FLAG_BITS if flags & bit), update_class=CLASSES[update_class],
            value_size=value_size, element_size=element_size, slot_offset=slot, copy_stride=stride,
            copy_count=copies,
            min=_limit(type_name, u64(d + 64)) if flags & HAS_MIN else None,
            max=_limit(type_name, u64(d + 72)) if flags & HAS_MAX else None,
            step=_limit(type_name, u64(d + 80)) if flags & HAS_STEP else None,
            default=bytes(image[pool + default_off:pool + default_off + default_len]) if flags & HAS_DEFAULT else None)
        if type_name == "enum":
            first, n = records[enum_index]
            p.enumerators = enumerator_list[first:first + n]
            for label, value in p.enumerators:
                p.labels.setdefault(value, label)
        params.append(p)
    header_name = name_field.split(b"\0")[0]
    if instance is not None:
        need(header_name == instance.encode(), "instance",
             f"the header names instance '{header_name.decode('utf-8', 'replace')}', not '{instance}'")
    return SegmentLayout(
        size=size, instance=header_name.decode("utf-8", "replace"), interface=interface,
        version=(u32(144), u32(148)), schema_hash=u64(24), instance_id=u64(32), param_count=count,
        enum_count=enum_count, owner_pid=u32(120), owner_start=u32(124), created_ns=u64(128),
        wake_id=u32(220), wake_size=wake_size, params=params)


def decoder(p: ParamLayout) -> "Any":
    """decode_stored() for @p, with what does not depend on the bytes
    decided once (a table read calls it on every read)."""
    if p.element == "string":
        return lambda stored: stored.decode("utf-8", "replace")
    if p.element == "bytes":
        return bytes
    if p.scalar:
        unpack = struct.Struct("<" + FORMATS[p.element]).unpack
        if p.element == "bool":
            return lambda stored: unpack(stored)[0] != 0
        if p.element == "enum":
            labels = p.labels
            return lambda stored: labels.get(unpack(stored)[0], unpack(stored)[0])
        return lambda stored: unpack(stored)[0]
    return lambda stored: decode_stored(p, stored)


def decode_stored(p: ParamLayout, stored: bytes) -> Any:
    """A value from its stored bytes (at most value_size of them), as §2.6
    and §2.8 say a reader decodes it: bool any non-zero byte true, arrays
    whole elements only, strings with U+FFFD for ill-formed UTF-8, an enum
    value without a label as its number."""
    if p.element == "string":
        return stored.decode("utf-8", "replace")
    if p.element == "bytes":
        return bytes(stored)
    size = p.element_size
    n = len(stored) // size
    items = list(struct.unpack_from(f"<{n}{FORMATS[p.element]}", stored))
    if p.element == "bool":
        items = [x != 0 for x in items]
    elif p.element == "enum":
        items = [p.labels.get(x, x) for x in items]
    return items if p.is_array else items[0]
