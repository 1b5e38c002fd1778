"""The fixtures of the pbus-gen tests (their helpers: pbustest/gen.py).

Run from the repository root: build/venv/bin/python -m pytest tests/gen
"""

import pytest

from pbusgen.errors import GenError
from pbustest.gen import build, write


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
