"""gen.py: what the pbus-gen tests (tests/gen/) share: the stages of the
generator up to the checked model, and where the fixtures and the golden
files are. pbusgen comes from the checkout's gen/ (tests/pytest.ini's
pythonpath), not from an installed copy.

Golden files are compared byte for byte; UPDATE_GOLDEN=1 rewrites them.
"""

import os
import subprocess
import sys
from pathlib import Path

from pbusgen import checks, deep, loader, params, resolver
from pbusgen.errors import Diagnostics

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "gen" / "fixtures"
GOLDEN = ROOT / "tests" / "gen" / "golden"


def build(path, interface=None, prefix=None, include=()):
    """Run the stages up to the checked model, as the command line does (in
    deep.run's thread); returns (model, diagnostics)."""
    diag = Diagnostics()

    def stages():
        sources = loader.load(str(path), list(include))
        r = resolver.resolve(sources, diag)
        model = params.build_model(r, sources, interface, prefix, diag)
        checks.check(model)
        return model
    return deep.run(stages), diag


def write(directory: Path, files: dict) -> None:
    for name, text in files.items():
        p = directory / name
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text, encoding="utf-8")


def update_golden() -> bool:
    return os.environ.get("UPDATE_GOLDEN") == "1"


def run_pbus_gen(*args):
    """This checkout's pbus-gen (python -m pbusgen from gen/) run with @args,
    as the build runs it; Failure with its stderr unless it succeeds."""
    from .check import check
    r = subprocess.run([sys.executable, "-m", "pbusgen", *map(str, args)], capture_output=True, text=True,
                       env=dict(os.environ, PYTHONPATH=str(ROOT / "gen")), timeout=60)
    check(r.returncode == 0, f"pbus-gen {' '.join(map(str, args))}: {r.stderr.strip()}")
