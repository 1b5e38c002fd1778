"""The command line: wires the stages together, nothing else.

    load (front end) -> resolve -> build model -> check -> emit

Exit status: 0 success, 1 an error in the input (one line on stderr naming
file:line:column), 2 a usage error.
"""

import argparse
import os
import sys
import tempfile
from typing import List, Optional

from . import (__version__, checks, deep, emit_c, emit_java, emit_rpc, emit_schema, fleet,
               loader, params, resolver, rpc, scpi)
from .errors import Diagnostics, GenError
from .naming import is_identifier, is_java_identifier

DESCRIPTION = """\
Compile a Franca interface (.fidl) and its parambus deployment (.fdepl) into
the compiled schema that pbusd loads (.pbs, docs/schema-format.md) and into
typed C bindings and a typed Java class.

FILE is a .fdepl, which names its .fidl through `import "NAME.fidl"`, or a
.fidl alone (then no deployment: no units, limits or defaults). Imports are
looked up next to the importing file, then in each -I DIR in order.
"""

EPILOG = """\
Every attribute of the interface (inherited ones first) becomes parameters in
declaration order; struct attributes are flattened to `attr.field` leaves.
Outputs are written only when their content changed, parent directories are
created, and output is deterministic (no dates, no absolute paths).

Exit status:
  0  success
  1  an error in the input, printed as `file:line:column: error: ...`
  2  a usage error (bad option)

Examples:
  pbus-gen --schema psu.pbs --c-header psu.h --c-source psu.c --prefix psu psu.fdepl
      the schema for pbusd and the C bindings (psu_get_voltage_setpoint(), ...)
  pbus-gen --scpi psu.scpi --scpi-reference scpi-psu.md psu.fdepl
      pbus-scpi's command tree and its reference for the instrument's manual
  pbus-gen --java gen-java psu.fdepl
      writes gen-java/com/example/psu/PowerSupply.java

Guides in docs/: generator.md, deployment-spec.md, schema-format.md, scpi.md,
fleet.md

Full documentation: man 1 pbus-gen
"""


class _HelpFormatter(argparse.RawDescriptionHelpFormatter):
    """argparse's help with the project's headings ("Usage:", "Options:"),
    the shape every parambus program's --help has and help2man reads into
    the man page (man/make-pages)."""

    def add_usage(self, usage, actions, groups, prefix=None):  # type: ignore[no-untyped-def]
        super().add_usage(usage, actions, groups, "Usage: ")

    def start_section(self, heading):  # type: ignore[no-untyped-def]
        super().start_section(heading[:1].upper() + heading[1:] if heading else heading)


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="pbus-gen", usage="%(prog)s [OPTIONS] FILE", description=DESCRIPTION, epilog=EPILOG,
        formatter_class=_HelpFormatter)
    p.add_argument("file", metavar="FILE",
                   help="the deployment (.fdepl) or interface (.fidl) to compile")
    p.add_argument("--schema", metavar="OUT.pbs",
                   help="write the compiled schema here ('-' for standard output)")
    p.add_argument("--c-header", metavar="OUT.h", help="write the C header here")
    p.add_argument("--c-source", metavar="OUT.c", help="write the C source here")
    p.add_argument("--rpc-header", metavar="OUT.h",
                   help="write the C header of the methods and broadcasts here")
    p.add_argument("--rpc-source", metavar="OUT.c",
                   help="write their client and server (and, without "
                        "--rpc-types-source, the types' codec) here")
    p.add_argument("--rpc-types-source", metavar="OUT.c",
                   help="write the codec of their argument types here, apart")
    p.add_argument("--scpi", metavar="OUT.scpi",
                   help="write the SCPI command tree that pbus-scpi loads here "
                        "(docs/scpi.md)")
    p.add_argument("--fleet", metavar="OUT.fleet",
                   help="write the fleet file that pbus-bridge loads here "
                        "(docs/fleet.md)")
    p.add_argument("--scpi-reference", metavar="OUT.md",
                   help="write the instrument's SCPI command reference (Markdown) here")
    p.add_argument("--java", metavar="DIR",
                   help="write the Java class of the interface under DIR, in the "
                        "folder of its package (DIR/com/example/psu/PowerSupply.java)")
    p.add_argument("--java-package", metavar="NAME",
                   help="package of the Java class (default: the Franca package in "
                        "lower case, e.g. com.example.psu)")
    p.add_argument("--prefix", metavar="NAME",
                   help="prefix of every generated C name (default: the interface "
                        "name in snake_case, e.g. power_supply)")
    p.add_argument("--interface", metavar="FQN",
                   help="the interface to compile, e.g. com.example.psu.PowerSupply "
                        "(needed only when the input holds several)")
    p.add_argument("-I", dest="include", metavar="DIR", action="append", default=[],
                   help="also look for imported files in DIR (repeatable)")
    p.add_argument("--check", action="store_true",
                   help="only check the input; write nothing")
    p.add_argument("--version", action="version", version=f"pbus-gen {__version__}")
    return p


def write_if_changed(path: str, text: str) -> bool:
    """Write `text` to `path` unless it already holds exactly that; the
    write is atomic (temporary file, then rename). Returns True if written."""
    data = text.encode("utf-8")
    if os.path.islink(path) or (os.path.exists(path) and not os.path.isfile(path)):
        # /dev/stdout (a link, to a pipe, a terminal or a file), a device, a
        # link of the user's: written through, never read, and never
        # replaced by a rename (that would replace the link itself: a
        # rename onto /dev/stdout once turned it into a plain file).
        with open(path, "wb") as f:
            f.write(data)
        return True
    try:
        with open(path, "rb") as f:
            if f.read() == data:
                return False
    except OSError:
        pass
    directory = os.path.dirname(path) or "."
    os.makedirs(directory, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".pbus-gen-", dir=directory)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    return True


def main(argv: Optional[List[str]] = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    if not (args.file.endswith(".fidl") or args.file.endswith(".fdepl")):
        parser.error(f"FILE must end in .fidl or .fdepl: '{args.file}'")
    if args.prefix is not None and not is_identifier(args.prefix):
        parser.error(f"--prefix '{args.prefix}' is not a C identifier")
    if args.java_package is not None and not all(
            is_java_identifier(seg) for seg in args.java_package.split(".")):
        parser.error(f"--java-package '{args.java_package}' is not a Java package name")
    if args.java_package is not None and not args.java:
        parser.error("--java-package needs --java DIR")
    rpc_out = args.rpc_header or args.rpc_source or args.rpc_types_source
    table_out = (args.schema or args.c_header or args.c_source or args.java or args.scpi
                 or args.scpi_reference or args.fleet)
    if not args.check and not (table_out or rpc_out):
        parser.error("nothing to do: give --schema, --c-header, --c-source, --java, "
                     "--scpi, --scpi-reference, --fleet, --rpc-header, --rpc-source, "
                     "--rpc-types-source or --check")

    diag = Diagnostics()

    def front_and_middle():
        sources = loader.load(args.file, args.include)
        resolved = resolver.resolve(sources, diag)
        # Only the methods wanted: the attributes need not map to parameters.
        # A deployment makes the attributes parameters whatever is written,
        # so that the types both back ends name get the same C names.
        with_params = (bool(table_out) or args.check or not rpc_out
                       or args.file.endswith(".fdepl"))
        model = params.build_model(resolved, sources, args.interface, args.prefix, diag,
                                   with_parameters=with_params)
        checks.check(model)
        if args.java:
            params.java_names(model, args.java_package)
            checks.check_java(model)
        if rpc_out:
            return model, rpc.build(model)
        # The compiled schema carries the methods and broadcasts too
        # (docs/schema-format.md): the same numbering and types, without
        # the C names' checks when no C of them is written.
        itf = model.interface
        if table_out and (itf.all_methods() or itf.all_broadcasts()):
            return model, rpc.build(model, check_names=False)
        return model, None

    try:
        model, rpc_model = deep.run(front_and_middle)
    except GenError as exc:
        for w in diag.warnings:
            print(w, file=sys.stderr)
        print(exc, file=sys.stderr)
        return 1
    for w in diag.warnings:
        print(w, file=sys.stderr)
    if args.check:
        return 0

    outputs = []
    if rpc_model is not None and rpc_out:
        rpc_header_name = os.path.basename(args.rpc_header) if args.rpc_header \
            else f"{model.c.prefix}-rpc.h"
        header, source, types = emit_rpc.render(rpc_model, rpc_header_name,
                                                bool(args.rpc_types_source))
        if args.rpc_header:
            outputs.append((args.rpc_header, header))
        if args.rpc_source:
            outputs.append((args.rpc_source, source))
        if args.rpc_types_source:
            outputs.append((args.rpc_types_source, types))
    if not table_out:
        return _write(outputs)
    itf = model.interface
    schema_text = emit_schema.render(
        model, rpc_model if (itf.all_methods() or itf.all_broadcasts()) else None)
    if args.schema:
        outputs.append((args.schema, schema_text))
    if args.c_header or args.c_source:
        header_name = os.path.basename(args.c_header) if args.c_header \
            else f"{model.c.prefix}.h"
        header, source = emit_c.render(model, schema_text,
                                       emit_schema.schema_hash(schema_text), header_name)
        if args.c_header:
            outputs.append((args.c_header, header))
        if args.c_source:
            outputs.append((args.c_source, source))
    if args.scpi:
        outputs.append((args.scpi, scpi.render_tree(model,
                                                    emit_schema.schema_hash(schema_text))))
    if args.fleet:
        outputs.append((args.fleet, fleet.render(model, emit_schema.schema_hash(schema_text))))
    if args.scpi_reference:
        outputs.append((args.scpi_reference, scpi.render_reference(model)))
    if args.java:
        path, text = emit_java.render(model, emit_schema.schema_hash(schema_text))
        outputs.append((os.path.join(args.java, path), text))
    return _write(outputs)


def _write(outputs) -> int:
    for path, text in outputs:
        try:
            if path == "-":
                sys.stdout.write(text)
                sys.stdout.flush()
            else:
                write_if_changed(path, text)
        except OSError as exc:
            # The output's own name: exc.filename is None when the write or
            # the close failed (a full disk), or a temporary file's name.
            name = "standard output" if path == "-" else f"'{path}'"
            print(f"pbus-gen: cannot write {name}: {exc.strerror or exc}", file=sys.stderr)
            return 1
    return 0
