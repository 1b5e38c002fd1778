"""errors.py: every error parambus raises is a parambus.Error.

An error's text is one line that names the problem (the parameter, the
instance, the socket, the server's own message). Errors that come from
pbusd carry its code (a negated Linux errno, socket-protocol.md §5) and its
message; the class says what kind of refusal it was, so that a caller can
catch what it can act on (RangeError, AccessError ...) and let the rest go.
"""
from __future__ import annotations

import errno as _errno
import os as _os

# socket-protocol.md §5: error codes, negated Linux errno numbers.
EPERM, ENOENT, EIO, ENOMEM, EACCES, EBUSY, EINVAL, EMFILE, ERANGE = -1, -2, -5, -12, -13, -16, -22, -24, -34
EPROTO, EUSERS, EMSGSIZE, EPROTONOSUPPORT, EADDRINUSE, ESTALE = -71, -87, -90, -93, -98, -116
ENOSYS, ETIMEDOUT = -38, -110
ERRNAMES = {EPERM: "EPERM", ENOENT: "ENOENT", EIO: "EIO", ENOMEM: "ENOMEM", EACCES: "EACCES", EBUSY: "EBUSY",
            EINVAL: "EINVAL", EMFILE: "EMFILE", ERANGE: "ERANGE", EPROTO: "EPROTO", EUSERS: "EUSERS",
            EMSGSIZE: "EMSGSIZE", EPROTONOSUPPORT: "EPROTONOSUPPORT", EADDRINUSE: "EADDRINUSE",
            ESTALE: "ESTALE", ENOSYS: "ENOSYS", ETIMEDOUT: "ETIMEDOUT"}


def errname(code: int) -> str:
    """EPERM for -1; the number itself for a code this version does not know."""
    return ERRNAMES.get(code, str(code))


def describe(code: int) -> str:
    """What a code means, in a few words (strerror of its errno)."""
    if code == ERANGE:
        return "value out of range"
    if code == EACCES:
        return "access denied (read-only, noread or nosubscriptions)"
    if code == EPERM:
        return "not allowed to write it"
    if code == EBUSY:
        return "busy: held by another writer; nothing was written"
    if code == ENOENT:
        return "no such parameter"
    if -code in _errno.errorcode:
        return _os.strerror(-code)
    return f"error {code}"


class Error(Exception):
    """The base of every error parambus raises."""


class ProtocolError(Error):
    """Bytes that do not follow the protocol: a malformed frame, body or
    schema text (from a server that is not pbusd, or a bug)."""


class SchemaError(ProtocolError):
    """A compiled schema's text that schema-format.md refuses."""


class ConnectionClosed(Error):
    """The server closed the connection (pbusd stopped or restarted)."""


class NotConnected(Error):
    """No pbusd serves the instance (no socket, or nobody listens on it),
    or it could not be reached again within the timeout."""


class UntrustedOwner(Error):
    """A socket or segment owned by a user who is not a trusted owner:
    not root, not this process's effective uid, not one named in
    $PBUS_OWNER (security.md)."""


class Timeout(Error, TimeoutError):
    """No reply within the client's timeout."""


class ServerError(Error):
    """An ERROR reply or a refusal from pbusd: .code (a negated errno,
    socket-protocol.md §5) and .message (the server's one line)."""

    def __init__(self, code: int, message: str) -> None:
        super().__init__(f"{errname(code)} ({code}): {message}")
        self.code, self.message = code, message


class NotFoundError(ServerError):
    """ENOENT: no such parameter (or subscription)."""


class AccessError(ServerError):
    """EACCES or EPERM: read-only, noread, or no right to write it."""


class RangeError(ServerError):
    """ERANGE: outside the parameter's limits, or not one of its enumerators."""


class ValueRefused(ServerError):
    """EINVAL or EMSGSIZE: a value of the wrong length or content."""


class BusyError(ServerError):
    """EBUSY: another writer held a parameter; nothing was written."""


class SchemaMismatch(ServerError):
    """ESTALE: the instance's schema is not the one the program was built for."""


_BY_CODE: dict[int, type[ServerError]] = {
    ENOENT: NotFoundError, EACCES: AccessError, EPERM: AccessError, ERANGE: RangeError, EINVAL: ValueRefused,
    EMSGSIZE: ValueRefused, EBUSY: BusyError, ESTALE: SchemaMismatch}


def server_error(code: int, message: str) -> ServerError:
    """The ServerError subclass for @code, carrying @message."""
    return _BY_CODE.get(code, ServerError)(code, message)


class SetRefused(ServerError):
    """A SET (an atomic batch) refused: nothing was written. .results holds
    each write's (name, code) in the order given, 0 for the writes that were
    fine; .code is the first refusal's code, and the message names the
    parameter refused and why."""

    def __init__(self, code: int, message: str, results: list[tuple[str, int]]) -> None:
        super().__init__(code, message)
        self.results = results


class SegmentError(Error):
    """A segment a reader must refuse (segment-format.md §7): .check is the
    name of the first check it fails (magic, version, region-inside ...)."""

    def __init__(self, check: str, message: str) -> None:
        super().__init__(message)
        self.check = check


class InstanceGone(Error):
    """The instance's segment was closed or replaced (pbusd stopped or
    restarted): open it again."""


_SET_BY_CODE: dict[type, type] = {}


def set_refused(code: int, message: str, results: list[tuple[str, int]]) -> SetRefused:
    """A SetRefused that is also the ServerError subclass of @code (a
    refused read-only write is an AccessError too, an out-of-range one a
    RangeError), so that either can be caught."""
    base = _BY_CODE.get(code)
    if base is None:
        return SetRefused(code, message, results)
    cls = _SET_BY_CODE.get(base)
    if cls is None:
        cls = type("SetRefused" + base.__name__.replace("Error", ""), (SetRefused, base),
                   {"__doc__": f"A SET refused with {base.__name__}'s code.", "__module__": __name__})
        _SET_BY_CODE[base] = cls
    made: SetRefused = cls(code, message, results)
    return made
