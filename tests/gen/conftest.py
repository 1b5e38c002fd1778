"""Shared helpers for the pbus-gen tests.

Run from the repository root: build/venv/bin/pytest tests/gen
Golden files are compared byte for byte; UPDATE_GOLDEN=1 rewrites them.
"""

import os
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = Path(__file__).resolve().parent / "fixtures"
GOLDEN = Path(__file__).resolve().parent / "golden"

sys.path.insert(0, str(ROOT / "gen"))

from pbusgen import checks, loader, params, resolver  # noqa: E402
from pbusgen.errors import Diagnostics, GenError  # noqa: E402


def build(path, interface=None, prefix=None, include=()):
    """Run the stages up to the checked model; returns (model, diagnostics)."""
    diag = Diagnostics()
    sources = loader.load(str(path), list(include))
    r = resolver.resolve(sources, diag)
    model = params.build_model(r, sources, interface, prefix, diag)
    checks.check(model)
    return model, diag


def write(directory: Path, files: dict) -> None:
    for name, text in files.items():
        p = directory / name
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text, encoding="utf-8")


@pytest.fixture
def error_of(tmp_path, monkeypatch):
    """error_of({name: text}, main) -> the one-line error for `main`, with
    file names relative to a temporary directory."""
    monkeypatch.chdir(tmp_path)

    def run(files: dict, main: str, **kw) -> str:
        write(tmp_path, files)
        with pytest.raises(GenError) as info:
            build(main, **kw)
        return str(info.value)
    return run


@pytest.fixture
def model_of(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)

    def run(files: dict, main: str, **kw):
        write(tmp_path, files)
        return build(main, **kw)[0]
    return run


def update_golden() -> bool:
    return os.environ.get("UPDATE_GOLDEN") == "1"
