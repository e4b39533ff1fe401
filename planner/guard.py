"""Planning that ends in a figure or in a BriefError naming a field, never in an arithmetic exception.

The brief's ranges keep the arithmetic finite for every preset; a combination of extreme values can still
overflow a float or divide by zero somewhere in the method. `checked` turns that into a BriefError naming
the field whose value, put back to the default brief's, makes the plan compute again.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, TypeVar

from planner.brief import Brief
from planner.errors import BriefError

__all__ = ["ARITHMETIC_ERRORS", "checked", "culprit"]

ARITHMETIC_ERRORS = (ArithmeticError, RecursionError)  # OverflowError, ZeroDivisionError, FloatingPointError
_T = TypeVar("_T")


def _leaves(data: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    flat: dict[str, Any] = {}
    for key, value in data.items():
        if isinstance(value, Mapping):
            flat.update(_leaves(value, f"{prefix}{key}."))
        else:
            flat[f"{prefix}{key}"] = value
    return flat


def _computes(run: Callable[[Brief], object], brief: Brief) -> bool:
    try:
        run(brief)
    except ARITHMETIC_ERRORS:
        return False
    except BriefError:
        return True  # computed far enough to give a verdict: the arithmetic was not the problem
    return True


def culprit(brief: Brief, run: Callable[[Brief], object]) -> str:
    """The first numeric field whose default value (the default brief's) makes `run` compute; 'brief' if none does."""
    defaults = _leaves(Brief().model_dump(mode="json"))
    for path, value in _leaves(brief.model_dump(mode="json")).items():
        default = defaults.get(path)
        if isinstance(value, bool) or not isinstance(value, int | float) or value == default or default is None:
            continue
        try:
            candidate = brief.with_changes({path: default})
        except BriefError:
            continue
        if _computes(run, candidate):
            return path
    return "brief"


def checked(run: Callable[[Brief], _T], brief: Brief) -> _T:
    """run(brief); an overflow or a division by zero becomes a BriefError naming the field that causes it."""
    try:
        return run(brief)
    except ARITHMETIC_ERRORS as exc:
        field = culprit(brief, run)
        reason = f"the figures do not compute with this value ({type(exc).__name__}: {str(exc)[:80]}); use a less extreme one"
        raise BriefError(field, reason) from None
