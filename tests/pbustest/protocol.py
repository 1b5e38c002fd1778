"""protocol.py: the client side of pbusd's socket protocol, version 1, as
the conformance tests use it: a re-export of the parambus Python package
(python/parambus), which was written from docs/socket-protocol.md alone
(and, for the schema's text and the value encodings, docs/schema-format.md
and docs/segment-format.md §2.6) and shares no code with the C library.

- frames:   encode_frame() / FrameReader (parambus.wire);
- messages: encode_body() / decode_body() for every type of §3, fields as
            plain dicts (parambus.wire);
- values:   Schema with encode_value() / decode_value() (parambus.schema);
- Connection: one raw connection, request() returning a reply's fields
            and keeping the notifications (parambus.connection).

The package is imported from the checkout's python/ (or, for a copy made
for a test user, from the parambus folder beside this file: secutil).
"""
import os
import sys

_here = os.path.dirname(os.path.abspath(__file__))
# The checkout's package first (tests test this checkout), else a copy
# beside this file (a test user's copy), else an installed one.
for _candidate in (os.path.join(os.path.dirname(os.path.dirname(_here)), "python"), _here):
    if os.path.isfile(os.path.join(_candidate, "parambus", "__init__.py")):
        if _candidate not in sys.path:
            sys.path.insert(0, _candidate)
        break

from parambus.connection import Closed, Connection, socket_path  # noqa: E402,F401
from parambus.errors import (EACCES, EADDRINUSE, EBUSY, EINVAL, EIO, EMFILE, EMSGSIZE, ENOENT,  # noqa: E402,F401
                             ENOMEM, ENOSYS, EPERM, EPROTO, EPROTONOSUPPORT, ERANGE, ERRNAMES, ESTALE,
                             ETIMEDOUT, EUSERS, ProtocolError, ServerError, errname)
from parambus.schema import (INTEGER, SCALARS, Param, Schema, decode_value, encode_value,  # noqa: E402,F401
                             fnv1a64)
from parambus.wire import *  # noqa: E402,F401,F403
from parambus.wire import encode_str as _str  # noqa: E402,F401
