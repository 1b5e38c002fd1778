"""build.py: the programs of one CMake tree (build/dev, build/asan, ...)."""
import os

from .check import Failure


class Build:
    """Where the programs the suites run are in the tree @path."""

    def __init__(self, path):
        self.dir = os.path.abspath(path)
        self.pbus = self.path("tools", "pbus")
        self.pbusd = self.path("daemon", "pbusd")
        self.hwd = self.path("daemon", "pbus-hwd")
        self.hold_param = self.path("tests", "security", "hold-param")
        self.attack = self.path("tests", "security", "attack")
        self.psu_sim = self.path("examples", "psu", "psu-sim")
        self.psu_schema = self.path("examples", "psu", "psu.pbs")

    def path(self, *parts):
        return os.path.join(self.dir, *parts)

    def require(self, *programs):
        """Failure unless each of @programs is built (an executable file)."""
        for program in programs:
            if not os.access(program, os.X_OK):
                raise Failure(f"{program} not built")

    def __repr__(self):
        return f"Build({self.dir!r})"
