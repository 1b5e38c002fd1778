# SPDX-License-Identifier: MIT
"""targets: does a benchmark figure meet its target? One rule for every
runner (docs/benchmarks.md): a target is an operator and a limit, and a
figure that was not measured (None) meets nothing and misses nothing: its
verdict is None ("not measured"), which the runners print as MISSED and
write to JSON as null. Python 3 standard library only.
"""
import operator

OPERATORS = {">=": operator.ge, ">": operator.gt, "==": operator.eq, "<": operator.lt, "<=": operator.le}


def met(value, op, limit):
    """True or False; None if @value was not measured."""
    if value is None:
        return None
    return OPERATORS[op](value, limit)


def met_text(value, target):
    """met() of a target written as text, e.g. ">= 0.8"."""
    op, limit = target.split()
    return met(value, op, float(limit))
