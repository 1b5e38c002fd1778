"""Locations and diagnostics shared by every stage.

Every error pbus-gen reports is one line: `file:line:column: error: text`.
Stages raise GenError on the first problem they find; the command line prints
it and exits with status 1. Warnings are collected and printed but do not
stop the run.
"""

from dataclasses import dataclass
from typing import List, Optional


def shown(text: str, limit: int = 40) -> str:
    """User text as it may appear inside a one-line message: control
    characters escaped, cut after `limit` characters."""
    out = "".join(c if c.isprintable() else repr(c)[1:-1] for c in text[:limit])
    return out + ("..." if len(text) > limit else "")


@dataclass(frozen=True)
class Location:
    """A position in an input file; line and column count from 1."""

    file: str
    line: int
    column: int

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.column}"


class GenError(Exception):
    """An error in the input (exit status 1)."""

    def __init__(self, location: Optional[Location], message: str):
        super().__init__(message)
        self.location = location
        self.message = message

    def __str__(self) -> str:
        if self.location is None:
            return f"error: {self.message}"
        return f"{self.location}: error: {self.message}"


@dataclass(frozen=True)
class Warning_:
    location: Optional[Location]
    message: str

    def __str__(self) -> str:
        if self.location is None:
            return f"warning: {self.message}"
        return f"{self.location}: warning: {self.message}"


class Diagnostics:
    """Collects warnings while the stages run."""

    def __init__(self) -> None:
        self.warnings: List[Warning_] = []

    def warn(self, location: Optional[Location], message: str) -> None:
        self.warnings.append(Warning_(location, message))
