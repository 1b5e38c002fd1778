"""parambus for Python (docs/python.md).

- Table(instance): the parameter table, read in place through mmap
  (table.py, segment.py);
- Client(instance): pbusd's socket protocol, blocking (client.py);
  parambus.aio.Client the same for asyncio (aio.py);
- Value, Status, Schema: what both give (schema.py);
- Error and its subclasses: every error raised (errors.py);
- wire, connection: the protocol's frames and a raw connection, for
  conformance tests and tools.
"""
from .client import Client, Subscription
from .errors import (AccessError, BusyError, ConnectionClosed, Error, InstanceGone, NotConnected, NotFoundError,
                     ProtocolError, RangeError, SchemaError, SchemaMismatch, SegmentError, ServerError, SetRefused,
                     Timeout, UntrustedOwner, ValueRefused)
from .schema import BadValue, Param, Schema, Status, UnknownParameter, Value
from .table import Table

__version__ = "0.1.0"
__all__ = ["Client", "Subscription", "Table", "Value", "Status", "Schema", "Param", "Error", "ProtocolError",
           "SchemaError", "ConnectionClosed", "NotConnected", "UntrustedOwner", "Timeout", "ServerError",
           "NotFoundError", "AccessError", "RangeError", "ValueRefused", "BusyError", "SchemaMismatch",
           "SetRefused", "SegmentError", "InstanceGone", "BadValue", "UnknownParameter"]
