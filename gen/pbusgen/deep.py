"""Room for deep inputs: the stages run in a thread with a large stack.

The long chains an outside user writes (a constant expression of a thousand
terms, a thousand typedefs naming each other, a thousand `extends`) are
walked by loops, not by recursion. What stays recursive follows the input's
own nesting: a struct's fields inside a struct's fields, a constant defined
from a constant, an initializer inside an initializer. Python stops such a
descent after 1000 frames, which a valid file can need (structs 400 deep
take about 2,400), so run() gives the stages a thread of their own with a
stack of STACK_SIZE bytes and a recursion limit of RECURSION_LIMIT frames.

Deeper input still ends in RecursionError; run() turns it into the one-line
error of every other problem, `file:line:column: error: X is nested too
deeply`, where X is the element the stages were at, as each stage records
with at().
"""

import sys
import threading
from typing import Any, Callable, Optional

from .errors import GenError, Location

STACK_SIZE = 512 * 1024 * 1024      # reserved, not committed: pages are
                                    # touched only as deep as the input goes
RECURSION_LIMIT = 50_000            # frames; 10 KiB of stack each at most

_lock = threading.Lock()
_state = threading.local()


def at(loc: Optional[Location], what: str) -> None:
    """Record the element that the running stage works on ("type 'p.T.S'"),
    named if its processing turns out to be nested too deeply."""
    _state.place = (loc, what)


def run(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """fn(*args, **kwargs) in a thread with a large stack and a raised
    recursion limit; its result, or the exception it raised (a RecursionError
    becomes a GenError). The limit is raised for the duration of the call
    only. A call from inside fn runs fn directly."""
    if getattr(_state, "inside", False):
        return fn(*args, **kwargs)
    outcome: dict = {}

    def target() -> None:
        _state.inside = True
        _state.place = (None, "the input")
        try:
            outcome["value"] = fn(*args, **kwargs)
        except RecursionError:
            loc, what = _state.place
            outcome["error"] = GenError(loc, f"{what} is nested too deeply")
        except BaseException as exc:    # handed to the caller's thread
            outcome["error"] = exc
        finally:
            _state.inside = False

    with _lock:
        old_limit = sys.getrecursionlimit()
        try:
            old_stack = threading.stack_size(STACK_SIZE)
        except (ValueError, RuntimeError):      # no such stacks here:
            old_stack = None                    # the default one must do
        try:
            sys.setrecursionlimit(max(old_limit, RECURSION_LIMIT)
                                  if old_stack is not None else old_limit)
            worker = threading.Thread(target=target, name="pbus-gen", daemon=True)
            try:
                worker.start()
            except RuntimeError:        # no thread to be had: run here, as
                sys.setrecursionlimit(old_limit)    # deep as Python allows
                target()
            else:
                worker.join()
        finally:
            if old_stack is not None:
                threading.stack_size(old_stack)
            sys.setrecursionlimit(old_limit)
    if "error" in outcome:
        raise outcome["error"]
    return outcome["value"]
