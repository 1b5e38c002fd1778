"""pbus-gen, the parambus schema compiler.

The pipeline, one module per stage:

    frontend (grammar -> syntax tree) -> loader (imports across files)
    -> resolver (one fully resolved model; every name computed once)
    -> checks -> back ends (emit_schema, emit_c, emit_java, emit_rpc)

The command line (cli.py) only wires the stages together.
"""

__version__ = "0.1.0"
