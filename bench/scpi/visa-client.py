#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""visa-client.py: the pyvisa client of benchmark scenario 6's SCPI part
(docs/benchmarks.md): blocking queries through pyvisa with the pyvisa-py
backend, as a test engineer's script makes them.

    visa-client.py PORT SECONDS MESSAGE

Opens TCPIP::127.0.0.1::PORT::SOCKET (read and write termination LF),
makes one query of MESSAGE to warm up, then queries MESSAGE again and again
for SECONDS; prints {"messages": N, "seconds": S, "messages_per_s": R,
"reply_bytes": B} (B: the last response's length with its LF). Run by
bench/run-scpi.py with the venv's Python, pinned as it says.
"""
import json
import sys
import time

import pyvisa


def main():
    port, seconds, message = int(sys.argv[1]), float(sys.argv[2]), sys.argv[3]
    rm = pyvisa.ResourceManager("@py")
    inst = rm.open_resource(f"TCPIP::127.0.0.1::{port}::SOCKET", read_termination="\n",
                            write_termination="\n", timeout=10000)
    reply = inst.query(message)
    n = 0
    start = time.monotonic()
    end = start + seconds
    while True:
        reply = inst.query(message)
        n += 1
        t = time.monotonic()
        if t >= end:
            break
    inst.close()
    rm.close()
    s = t - start
    print(json.dumps({"messages": n, "seconds": round(s, 6), "messages_per_s": round(n / s, 1),
                      "reply_bytes": len(reply) + 1}))


if __name__ == "__main__":
    main()
