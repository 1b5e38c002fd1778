"""check.py: the one kind of failed check of every suite.

A test states what must hold with check(condition, message); a Failure's
message is the reason its FAIL line gives (tests/conftest.py). Any other
exception is a bug of the test or of the program under test, and fails the
test as well.
"""

TIMEOUT = 10  # seconds for any one command, start or wait of a program


class Failure(Exception):
    """A check that did not hold; its message says what was seen."""


def check(condition, message):
    if not condition:
        raise Failure(message)
