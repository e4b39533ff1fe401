"""The few numerical routines the latency model needs: the regularized incomplete gamma function and its inverse
(SciPy's, in C), and a bracketing root finder.

The root finder is our own: importing scipy.optimize for brentq pulls in linalg, sparse and more, ~130 ms on every
`python -m planner plan` on top of scipy.special. Regula falsi with the Illinois correction and a bisection guard,
checked in tests/test_numerics.py.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
import numpy.typing as npt
from scipy.special import gammainc, gammaincinv

__all__ = ["gamma_p", "gamma_p_array", "gamma_p_inverse", "root_in_bracket"]


def gamma_p(a: float, x: float) -> float:
    """Regularized lower incomplete gamma P(a, x): the CDF at x of a gamma with shape a and unit scale."""
    if x <= 0:
        return 0.0
    return float(gammainc(a, x))


def gamma_p_array(a: float, x: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    """gamma_p over an array of x, one shape a."""
    return np.asarray(gammainc(a, np.maximum(np.asarray(x, dtype=np.float64), 0.0)), dtype=np.float64)


def gamma_p_inverse(a: float, p: float) -> float:
    """x with P(a, x) = p (unit scale)."""
    return float(gammaincinv(a, p))


def root_in_bracket(
    f: Callable[[float], float], low: float, high: float, xtol: float, f_low: float | None = None, f_high: float | None = None
) -> float:
    """A root of f in [low, high], where f(low) and f(high) differ in sign (f may jump: the point of the jump is
    returned), to within xtol. Regula falsi with the Illinois correction (superlinear on smooth f), and a bisection
    whenever three steps have not halved the bracket (steps and jumps) or an end's value is infinite (f beyond a
    jump to infinity says nothing about where the root is). f_low and f_high, when the caller has them, save two calls."""
    f_low = f(low) if f_low is None else f_low
    f_high = f(high) if f_high is None else f_high
    if f_low == 0:
        return low
    if f_high == 0:
        return high
    if (f_low > 0) == (f_high > 0):
        raise ValueError("root_in_bracket: f(low) and f(high) have the same sign")
    kept = 0  # the end the last step kept: -1 low, +1 high
    checkpoint, steps = high - low, 0
    for _ in range(_MAX_STEPS):
        if high - low <= xtol:
            break
        steps += 1
        slow = steps == 3 and high - low > checkpoint / 2
        if steps == 3:
            checkpoint, steps = high - low, 0
        x = (low + high) / 2 if slow else _false_position(low, high, f_low, f_high)
        fx = f(x)
        if fx == 0:
            return x
        if (fx > 0) == (f_high > 0):
            high, f_high = x, fx
            f_low = f_low / 2 if kept == -1 else f_low  # Illinois: an end kept twice weighs half
            kept = -1
        else:
            low, f_low = x, fx
            f_high = f_high / 2 if kept == +1 else f_high
            kept = +1
    return (low + high) / 2


_MAX_STEPS = 400


def _false_position(low: float, high: float, f_low: float, f_high: float) -> float:
    """Where the chord through the bracket's ends crosses zero; the midpoint when that is not strictly inside."""
    if not (math.isfinite(f_low) and math.isfinite(f_high)) or f_high == f_low:
        return (low + high) / 2
    x = (low * f_high - high * f_low) / (f_high - f_low)
    return x if low < x < high else (low + high) / 2
