"""_owner.py: whom this process trusts to own an instance (security.md,
"Who is trusted"; segment-format.md §1, socket-protocol.md §1): root, its
own effective uid, or a user named in $PBUS_OWNER (a comma-separated list
of user names or numeric uids). And whether a process is alive
(segment-format.md §4.3, "Who is dead")."""
from __future__ import annotations

import os
import pwd


def trusted_uids() -> set[int]:
    uids = {0, os.geteuid()}
    for item in filter(None, (s.strip() for s in os.environ.get("PBUS_OWNER", "").split(","))):
        if item.isdigit():
            uids.add(int(item))
        else:
            try:
                uids.add(pwd.getpwnam(item).pw_uid)
            except KeyError:
                pass  # an unknown user trusts nobody more
    return uids


def trusted(uid: int) -> bool:
    return uid in trusted_uids()


def describe_trusted() -> str:
    extra = os.environ.get("PBUS_OWNER")
    return f"root, uid {os.geteuid()}" + (f" or $PBUS_OWNER ({extra})" if extra else " or a user named in $PBUS_OWNER")


def process_alive(pid: int, start: int) -> bool:
    """Whether process @pid with start token @start (the low 30 bits of
    /proc/PID/stat's field 22; 0: unknown) lives (segment-format.md §4.3)."""
    if pid == 0:
        return False
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            line = f.read()
    except FileNotFoundError:
        return False
    except OSError:
        try:
            os.kill(pid, 0)
            return True
        except PermissionError:
            return True
        except OSError:
            return False
    rest = line[line.rindex(b")") + 2:].split()
    state = rest[0]
    if state == b"X":
        return False
    if state == b"Z":
        try:
            with open(f"/proc/{pid}/status") as f:
                for s in f:
                    if s.startswith("Threads:") and int(s.split()[1]) <= 1:
                        return False
        except (OSError, ValueError):
            return False
    # Field 22 (starttime) is the 20th after the command's ')'.
    if start and (int(rest[19]) & ((1 << 30) - 1)) != start:
        return False
    return True
