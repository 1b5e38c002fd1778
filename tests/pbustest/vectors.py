"""vectors.py: the frame test vectors (tests/vectors/socket-frames.txt,
rpc-frames.txt), read as their header comment says: entries of a name,
kind, type, id, fields (JSON) and the frame's hex."""
import json

from .check import Failure


def load_vectors(path):
    entries, cur = [], None
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            line = line.rstrip("\n")
            if line.startswith("#"):
                continue
            if not line:
                cur = None
                continue
            key, _, rest = line.partition(" ")
            if key == "frame":
                cur = {"name": rest, "hex": "", "line": n}
                entries.append(cur)
            elif cur is None:
                raise Failure(f"{path}:{n}: {key} outside an entry")
            elif key == "hex":
                cur["hex"] += rest.replace(" ", "")
            elif key in ("fields", "typed"):
                cur[key] = json.loads(rest)
            elif key in ("kind", "note"):
                cur[key] = rest
            elif key == "type":
                num, name = rest.split(" ")
                cur["type"], cur["type_name"] = int(num), name
            elif key == "id":
                cur["id"] = int(rest)
            else:
                raise Failure(f"{path}:{n}: unknown key {key!r}")
    for e in entries:
        e["bytes"] = bytes.fromhex(e["hex"])
    return entries


def fields_from_json(type_, j):
    """A vector's JSON fields as protocol.py's dict (bytes from hex)."""
    f = dict(j)
    if "schema_hash" in f:
        f["schema_hash"] = int(f["schema_hash"], 16)
    if "data" in f:
        f["data"] = bytes.fromhex(f["data"])
    for key in ("args",):
        if key in f:
            f[key] = bytes.fromhex(f[key])
    for key in ("values", "writes"):
        if key in f:
            f[key] = [dict(v, value=bytes.fromhex(v["value"])) for v in f[key]]
    return f
