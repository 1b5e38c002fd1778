"""pbustest: what the Python suites of tests/ share (importable through
tests/pytest.ini's pythonpath; tests/conftest.py turns it into fixtures).

- check:    Failure, check() and TIMEOUT, the suites' one kind of failed check;
- build:    Build, the programs of one CMake tree (build/dev, build/asan ...);
- daemon:   Daemon (a pbusd started ready through --notify-fd, stopped for
            sure), Daemons (every pbusd a suite started) and Instances
            (instance names unique to a run, with their folders);
- cli:      Context, running the `pbus` command line against an instance,
            and its helpers (one_line_error, LineReader, schema_hash ...);
- protocol: the client side of pbusd's socket protocol, written from
            docs/socket-protocol.md alone;
- server:   ServerContext and the frame-level helpers of the socket suites;
- secutil:  the unprivileged test users and code run as one of them;
- attacker: the attacker's programs (a fake server, a connection hoarder),
            run as a test user;
- gen:      what the pbus-gen tests share (the pipeline up to the model).

Python 3 standard library only (pytest is needed by tests/conftest.py, not
here), so that a test user can run attacker.py from a copy.
"""
