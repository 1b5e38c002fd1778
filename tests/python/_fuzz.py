"""_fuzz.py: what the Python fuzz targets share: the seed corpus (written
into an empty corpus folder) and atheris' set-up. Each target is run by
test_python.py::test_fuzz, or by hand:

    PYTHONPATH=python build/venv/bin/python tests/python/fuzz_wire.py -max_total_time=60 CORPUS_DIR
"""
import os
import sys

import atheris

TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
VECTORS = os.path.join(TOP, "tests", "vectors")


def seed(seeds):
    """Write @seeds (bytes) into the corpus folder given on the command
    line, if it is empty."""
    dirs = [a for a in sys.argv[1:] if not a.startswith("-") and os.path.isdir(a)]
    if dirs and not os.listdir(dirs[0]):
        for i, s in enumerate(seeds):
            with open(os.path.join(dirs[0], f"seed-{i}"), "wb") as f:
                f.write(s)


def run(one_input):
    atheris.Setup(sys.argv, one_input)
    atheris.Fuzz()
