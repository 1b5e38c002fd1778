#!/usr/bin/env python3
"""attacker.py: the attacker's programs, run as an unprivileged test user by
the socket attack tests (secutil.program() gives the argv), from copies
beside protocol.py; Python 3 standard library and protocol.py only.

    attacker.py fake-server SOCKET SCHEMA
        binds SOCKET and answers like pbusd (HELLO, SCHEMA_GET, SET, ...)
        with the schema SCHEMA; prints "listening", then a JSON line per
        frame received ({"conn": N, "type": "SET", ...}) and per connection
        closed ({"conn": N, "closed": true, "bytes": B}).
    attacker.py hoard SOCKET MAX
        connects and sends HELLO until the server refuses a connection (or
        MAX are held); prints one JSON line {"held": N, "refused": CODE,
        "message": TEXT}, then keeps them until its stdin closes.

hello() is also the tests' own handshake that tolerates a refusal.
"""
import json
import os
import select
import socket
import sys

try:
    from . import protocol as P
except ImportError:  # run as a program: protocol.py is beside this file
    import protocol as P


def _say(obj):
    print(json.dumps(obj), flush=True)


def fake_server(path, schema_path):
    """Answer like pbusd on @path, with the schema at @schema_path."""
    with open(schema_path, encoding="utf-8") as f:
        text = f.read()
    schema = P.Schema(text)
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path)
    os.chmod(path, 0o666)
    listener.listen(16)
    _say("listening")
    conns = {}  # socket -> [number, reader, bytes]
    serial = 0
    while True:
        ready = select.select([listener] + list(conns), [], [])[0]
        for s in ready:
            if s is listener:
                c, _ = listener.accept()
                serial += 1
                conns[c] = [serial, P.FrameReader(), 0]
                continue
            number, reader, count = conns[s]
            try:
                data = s.recv(65536)
            except OSError:
                data = b""
            if not data:
                _say({"conn": number, "closed": True, "bytes": count})
                del conns[s]
                s.close()
                continue
            conns[s][2] += len(data)
            reader.feed(data)
            while True:
                try:
                    frame = reader.next()
                except P.ProtocolError:
                    frame = None
                if frame is None:
                    break
                fields = {}
                try:
                    fields = P.decode_body(frame.type, frame.body)
                except P.ProtocolError:
                    pass
                report = {"conn": number, "type": P.typename(frame.type)}
                if frame.type == P.SET:
                    report["writes"] = [[w["index"], w["value"].hex()] for w in fields.get("writes", [])]
                _say(report)
                reply = None
                if frame.type == P.HELLO:
                    reply = P.encode_message(P.HELLO_REPLY, frame.id, {
                        "version": 1, "schema_hash": schema.hash, "param_count": len(schema.params),
                        "max_frame": P.DEFAULT_MAX_FRAME, "max_subscriptions": 64, "server_pid": os.getpid(),
                        "instance": os.path.basename(path)[:-len(".sock")],
                        "interface": schema.interface})
                elif frame.type == P.SCHEMA_GET:
                    reply = P.encode_message(P.SCHEMA, frame.id, {"text": text})
                elif frame.type == P.SET:
                    reply = P.encode_message(P.SET_REPLY, frame.id, {
                        "result": 0, "results": [{"result": 0, "seq": 1} for _ in fields.get("writes", [])]})
                elif frame.type == P.PING:
                    reply = P.encode_message(P.PONG, frame.id, {"data": frame.body})
                if reply is not None:
                    try:
                        s.sendall(reply)
                    except OSError:
                        pass


def hello(path, name):
    """Connect and shake hands: (connection, None), or (None, (code,
    message)) if the server refused. A refused connection gets its ERROR at
    once and is closed, perhaps before our HELLO is sent (§4: the client
    reads it even if sending failed)."""
    c = P.Connection(path, timeout=5.0)
    try:
        c.send(P.HELLO, {"min_version": 1, "max_version": 1, "schema_hash": 0, "client_name": name})
    except (BrokenPipeError, ConnectionResetError):
        pass
    try:
        f = c.recv_frame()
        fields = f.decode()
    except (P.Closed, P.ProtocolError, TimeoutError, OSError) as e:
        c.close()
        return None, (0, f"{type(e).__name__}: {e}")
    if f.type == P.ERROR:
        c.close()
        return None, (fields["code"], fields["message"])
    if f.type != P.HELLO_REPLY:
        c.close()
        return None, (0, f"unexpected {f!r}")
    c.hello_reply = fields
    return c, None


def hoard(path, most):
    """Connections with HELLO until one is refused or @most are held."""
    held, refused, message = [], None, ""
    while len(held) < most:
        try:
            c, error = hello(path, "hoard")
        except OSError as e:
            refused, message = -e.errno, str(e)
            break
        if error:
            refused, message = error
            break
        held.append(c)
    _say({"held": len(held), "refused": refused, "message": message})
    sys.stdin.read()  # until the test closes our stdin
    for c in held:
        c.close()


def main(argv):
    if len(argv) == 4 and argv[1] == "fake-server":
        fake_server(argv[2], argv[3])
    elif len(argv) == 4 and argv[1] == "hoard":
        hoard(argv[2], int(argv[3]))
    else:
        print(__doc__, file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
