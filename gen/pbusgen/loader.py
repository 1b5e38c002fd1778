"""Front end, across files: read a .fidl or .fdepl and every .fidl it imports.

An import names a file relative to the importing file's directory, then
relative to each `-I` directory in order. Files are loaded once each (by
real path), in depth-first order starting with the file given; an import
cycle is an error that names the whole chain.
"""

import os
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Sequence, Tuple

from . import deep, syntax as S
from .errors import GenError, Location, shown
from .frontend import parse_fdepl, parse_fidl

# The deployment specification is built into pbus-gen (deployment.py). A
# .fdepl may still import a specification file for the benefit of Franca's
# own tools: any import that is not a .fidl is taken as such and not read.
SPEC_NAME = "parambus.deployment"


@dataclass
class Sources:
    """Everything the front end read, in load order."""

    fidl_files: List[S.FidlFile] = field(default_factory=list)
    fdepl: Optional[S.FdeplFile] = None
    # FidlFile.path -> the FidlFiles it imports, in import order
    imports: Dict[str, List[S.FidlFile]] = field(default_factory=dict)
    # Import node id -> the file it names
    import_targets: Dict[int, S.FidlFile] = field(default_factory=dict)

    @property
    def file_names(self) -> List[str]:
        """Base names of every input file, for the generated banner: the
        .fidl files in load order, then the .fdepl."""
        names: List[str] = []
        for f in self.fidl_files:
            names.append(os.path.basename(f.path))
        if self.fdepl is not None:
            names.append(os.path.basename(self.fdepl.path))
        out: List[str] = []
        for n in names:
            if n not in out:
                out.append(n)
        return out


def _read(path: str, loc: Optional[Location]) -> str:
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as exc:
        raise GenError(loc, f"cannot read '{path}': {exc.strerror}") from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[:exc.start].count(b"\n") + 1
        col = exc.start - (data.rfind(b"\n", 0, exc.start) + 1) + 1
        raise GenError(Location(path, line, col),
                       "found a byte that is not UTF-8, expected UTF-8 text") from None


class Loader:
    def __init__(self, include_dirs: Sequence[str] = ()):
        self.include_dirs = list(include_dirs)
        self.sources = Sources()
        self._by_real: Dict[str, S.FidlFile] = {}
        self._stack: List[Tuple[str, str]] = []     # (real path, shown path)

    def _find(self, uri: str, importer: str, loc: Location) -> str:
        if os.path.isabs(uri):
            candidates = [uri]
        else:
            candidates = [os.path.normpath(os.path.join(os.path.dirname(importer), uri))]
            candidates += [os.path.normpath(os.path.join(d, uri)) for d in self.include_dirs]
        for c in candidates:
            if os.path.isfile(c):
                return c
        # shown(): an import string may hold a line break; a message is one line
        where = ", ".join(f"'{shown(c, 4096)}'" for c in candidates)
        raise GenError(loc, f"imported file '{shown(uri, 4096)}' not found "
                            f"(looked for {where})")

    def load_fidl(self, path: str, loc: Optional[Location] = None) -> S.FidlFile:
        real = os.path.realpath(path)
        for i, (r, _) in enumerate(self._stack):
            if r == real:
                chain = [os.path.basename(shown) for _, shown in self._stack[i:]]
                chain.append(os.path.basename(path))
                raise GenError(loc, "import cycle " + " -> ".join(chain))
        if real in self._by_real:
            return self._by_real[real]
        text = _read(path, loc)
        deep.at(Location(path, 1, 1), f"file '{shown(path, 4096)}'")
        parsed = parse_fidl(text, path)
        self._by_real[real] = parsed
        self.sources.fidl_files.append(parsed)
        self._stack.append((real, path))
        imported = []
        for imp in parsed.imports:
            target = self._find(imp.uri, path, imp.loc)
            child = self.load_fidl(target, imp.loc)
            self.sources.import_targets[id(imp)] = child
            imported.append(child)
        self._stack.pop()
        self.sources.imports[parsed.path] = imported
        return parsed

    def load_fdepl(self, path: str) -> S.FdeplFile:
        text = _read(path, None)
        parsed = parse_fdepl(text, path)
        self.sources.fdepl = parsed
        for uri, loc in parsed.imports:
            if uri.endswith(".fidl"):
                self.load_fidl(self._find(uri, path, loc), loc)
        if not self.sources.fidl_files:
            raise GenError(Location(path, 1, 1),
                           "deployment imports no .fidl file, expected "
                           "'import \"NAME.fidl\"'")
        return parsed


def load(path: str, include_dirs: Sequence[str] = ()) -> Sources:
    """Load a .fidl or .fdepl file and all the .fidl files it needs."""
    loader = Loader(include_dirs)
    if path.endswith(".fdepl"):
        loader.load_fdepl(path)
    else:
        loader.load_fidl(path)
    return loader.sources
