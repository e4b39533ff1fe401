"""The few numerical routines the latency model needs: the regularized incomplete gamma function and its inverse,
and a bracketing root finder. All our own, on numpy and the math module only.

Why our own: `python -m planner plan` must start within 0.3 s of a bare interpreter (issue 17). Importing
scipy.special for gammainc and gammaincinv cost ~150-190 ms of every plan's start-up (it pulls in
scipy._lib.array_api_compat, numpy.testing and numpy.f2py), and scipy.optimize for brentq another ~130 ms (linalg,
sparse and more). SciPy stays a test-time reference: tests/test_numerics.py checks these against it.

The incomplete gamma P(a, x) is the standard method (Numerical Recipes, 3rd ed., section 6.2, gser and gcf; DLMF
8.7.1 and 8.9.2): the power series near and below x = a, and the continued fraction for Q = 1 - P beyond it,
evaluated by the modified Lentz method. NR switches at x = a + 1, where both converge fast; we switch further out,
where each costs the same in Python (the series' terms are all positive, so it keeps P's relative accuracy past
a + 1; only Q itself would lose it, and nothing here asks for a Q below 1e-16). The prefactor x^a e^-x / Gamma(a) is
exp(a (ln(1 + t) - t)) sqrt(a / 2 pi) / exp(stirlerr(a)), t = x / a - 1, for a large shape (DiDonato and Morris, ACM
TOMS 12 (1986), their function rcomp), so a shape of 1e4 keeps ~2e-14 relative accuracy (~2e-11 from
a ln x - x - ln Gamma(a), whose terms reach 1e5). The array form takes, for every element, the term count its
slowest element needs (found first with the scalar form): the series' terms all at once in logarithms, the fraction
from its deepest level up, so a call is a handful of whole-array numpy calls. The scalar form at a large shape (a >= 100)
within 10% of its mean takes Temme's uniform asymptotic expansion instead (DLMF 8.12.3-10): ~90 multiply-adds where the
series' terms grow as sqrt(a) (~400 for an Erlang C of ~2,500 slots).

The inverse is Numerical Recipes' invgammp (section 6.2.1): a start from Wilson-Hilferty's cube (a > 1) or the
small-x power law (a <= 1), then Halley steps to ~1e-14 relative, or until the error is within P's own rounding.

The root finder: regula falsi with the Illinois correction and a bisection guard.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from functools import lru_cache

import numpy as np
import numpy.typing as npt

__all__ = [
    "bracket_root",
    "false_position",
    "gamma_density_array",
    "gamma_p",
    "gamma_p_array",
    "gamma_p_inverse",
    "gamma_p_inverse_array",
    "gamma_p_row_sums",
    "gamma_p_slopes",
    "gamma_p_value",
    "gamma_sums",
    "lowest_crossing",
    "poisson_pmf_cdf",
    "root_in_bracket",
]

_EPS = 2.3e-16  # a series term or a fraction's step below this, relative to the sum, changes nothing
_TINY = 1e-300  # the modified Lentz method's stand-in for a zero denominator
_MAX_TERMS = 100_000  # never reached: a shape of 1e4 needs ~1,000 terms at x = a
_STIRLING_SHAPE = 10.0  # from here up, the prefactor is computed by Stirling's series (DiDonato-Morris)
_SERIES_BLOCK_ELEMENTS = 1 << 20  # rows of the array series are done in blocks of at most this many terms
_LOG_SQRT_2PI = 0.5 * math.log(2 * math.pi)


@lru_cache(maxsize=8192)
def gamma_p(a: float, x: float) -> float:
    """Regularized lower incomplete gamma P(a, x): the CDF at x of a gamma with shape a > 0 and unit scale.

    Cached: a plan asks for ~4,000-8,000 distinct points ~4 times each (the prompt-service moments of the same
    engines, re-evaluated), and a hit costs ~0.1 us against ~1-5 us to sum the series."""
    if x <= 0:
        return 0.0
    if a >= _TEMME_SHAPE and (1 - _TEMME_SPAN) * a <= x <= (1 + _TEMME_SPAN) * a < math.inf:  # a large finite shape near its mean
        return _temme_p(a, x)
    if x < a + 1 + _SCALAR_SERIES_REACH:  # the usual case first (false for nan and infinity)
        return math.exp(_log_prefactor(a, x)) * _series_terms(a, x)[0]
    if x == math.inf:
        return 1.0
    if math.isnan(x):
        return math.nan
    return 1.0 - math.exp(_log_prefactor(a, x)) * _fraction_terms(a, x)[0]


def poisson_pmf_cdf(mean: float, n: int) -> tuple[float, float]:
    """(P(N = n), P(N <= n)) for N Poisson with this mean, n at or above it: n's gamma prefactor over the mean, and
    1 - P(n + 1, mean) (on the series: the mean sits below n + 1, so P is under ~1/2 and 1 - P keeps its accuracy)."""
    return math.exp(_log_prefactor(n + 1, mean)) / mean, 1 - gamma_p(n + 1, mean)


def gamma_p_array(a: float, x: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    """gamma_p over an array of x (any shape), one shape a: 0 where x <= 0 (a new array the caller may change). Not
    cached: a cold plan asks for the same array again about once in fifty (its copy, bytes and hash cost more)."""
    return _gamma_p_array(a, x)


def gamma_sums(a: float, x: npt.NDArray[np.float64], largest: float) -> tuple[float, float, float]:
    """Over a 1-d array of positive x, none above `largest`: the sums of P(a, x), of its slope (the density) and of the
    density's slope, in one pass. The series' terms are those `largest` needs (a caller evaluating many arrays under
    one bound counts them once); the density is the series' own prefactor over x, its slope the density times
    ((a - 1) / x - 1). Beyond the series' reach, gamma_p_array and gamma_density_array."""
    if x.size == 1:  # one point (every prompt the same length): on floats
        return gamma_p_slopes(a, float(x[0]))
    terms = _series_count(a, largest) if largest < a + 1 + _ARRAY_SERIES_REACH else 0
    if terms == 0 or x.size * terms > _SERIES_BLOCK_ELEMENTS:
        p, density = gamma_p_array(a, x), gamma_density_array(a, x)
        return float(p.sum()), float(density.sum()), float(density @ ((a - 1) / x - 1))
    inverse = 1 / x
    if a < _STIRLING_SHAPE:  # the prefactor joins the series as its term 0 (_prefactor_series_block)
        block = _prefactor_series_block(a, x, terms)
        density = block[:, 0] * inverse
        density_sum = float(_add_all(density))
        return float(_add_all(block, axis=None)) / a, density_sum, (a - 1) * float(density @ inverse) - density_sum
    log_x = np.log(x)
    total = _series_totals(a, log_x, terms)
    prefactor = np.exp(_log_prefactor_array(a, x, log_x))
    density = prefactor * inverse
    return float(prefactor @ (1 + total)) / a, float(density.sum()), float(density @ ((a - 1) * inverse - 1))


_add_all = np.add.reduce  # ndarray.sum's own reduction (the same sums), without its two Python-level calls (~2 us)
# ndarray.max's, ndarray.min's and np.all's own reductions (the same values; axis=None over every element of an array of
# more than one dimension), without their Python-level calls (~1 us each: the array inversion's steps make several)
_largest_of, _smallest_of = np.maximum.reduce, np.minimum.reduce
_all_of, _any_of = np.logical_and.reduce, np.logical_or.reduce


def gamma_p_row_sums(a: float, x: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    """The sum of P(a, x) over each row of a 2-d array of x >= 0 (0 where x is 0): a shape under 10 with every x on
    the series in one block (_prefactor_series_block) of the positive x only (exp(-inf) takes numpy's slow path, ~20x
    a finite exponent's), else gamma_p_array's rows summed (each row 0 at once where every x is 0: no prompt has waited yet)."""
    largest = float(_largest_of(x, axis=None)) if x.size else 0.0
    if largest == 0:
        return np.zeros(x.shape[0])
    if a < _STIRLING_SHAPE and 0 < largest < a + 1 + _ARRAY_SERIES_REACH:
        terms = _series_count(a, largest)
        if x.size * terms <= _SERIES_BLOCK_ELEMENTS:
            flat = x.ravel()
            positive = flat > 0
            p = np.zeros(flat.shape)  # P(a, 0) = 0
            p[positive] = _row_sums(_prefactor_series_block(a, flat[positive], terms))
            return _row_sums(p.reshape(x.shape)) / a
    return _row_sums(gamma_p_array(a, x))


def _prefactor_series_block(a: float, x: npt.NDArray[np.float64], terms: int) -> npt.NDArray[np.float64]:
    """For a 1-d array of x (a < 10, on the series): row i holds x^a e^-x / Gamma(a) times the series' terms 0..terms
    (term 0 is 1), each exp((a + n) ln x - x - ln Gamma(a) - sum_k<=n ln(a + k)) in one pass: the row's sum is a P(a, x),
    its first element the prefactor (the density times x). Its exponents stay within ~100 for these shapes: ~1e-14
    relative, as the separate prefactor and series. The exponents are one matrix product, (ln x, x, 1) by the rows of
    _prefactor_series_exponents."""
    columns = np.empty((x.size, 3))
    np.log(x, out=columns[:, 0])
    columns[:, 1] = x
    columns[:, 2] = 1.0
    block = columns @ _prefactor_series_exponents(a, max(terms, _TABLE_TERMS))[:, : terms + 1]
    return np.exp(block, out=block)


@lru_cache(maxsize=256)
def _prefactor_series_exponents(a: float, terms: int) -> npt.NDArray[np.float64]:
    """The factors of ln x, x and 1 in the exponent of _prefactor_series_block's terms n = 0..terms: a + n, -1 and
    -(ln Gamma(a) + sum_k<=n ln(a + k)) (cached, as _series_exponents' rows, and built the same way: their values)."""
    exponents = np.empty((3, terms + 1))
    np.add(a, np.arange(terms + 1.0), out=exponents[0])
    exponents[1] = -1.0
    exponents[2, 0] = 0.0
    np.add.accumulate(np.log(exponents[0, 1:]), out=exponents[2, 1:])  # np.cumsum's sums, without its three Python calls
    exponents[2] += math.lgamma(a)
    np.negative(exponents[2], out=exponents[2])
    exponents.flags.writeable = False
    return exponents


def _row_sums(block: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    """The sum of each row of a 2-d array: a matrix-vector product with ones (BLAS; numpy's sum(axis=1) over short
    rows takes ~4x as long)."""
    return block @ _ones(block.shape[1])


@lru_cache(maxsize=64)
def _ones(size: int) -> npt.NDArray[np.float64]:
    """A read-only vector of ones (cached: a plan sums rows of a few lengths, each many times)."""
    ones = np.empty(size)
    ones.fill(1.0)  # np.ones's values, without its two Python calls
    ones.flags.writeable = False
    return ones


def gamma_p_value(a: float, x: float) -> float:
    """P(a, x) at one x > 0, not cached: gamma_p_slopes' value alone (a CDF's evaluations at points seen once, which
    would only crowd gamma_p's cache)."""
    return math.exp(_log_prefactor(a, x)) * _series_terms(a, x)[0] if x < a + 1 + _SCALAR_SERIES_REACH else gamma_p(a, x)


def gamma_p_slopes(a: float, x: float) -> tuple[float, float, float]:
    """P(a, x) at one x > 0 (gamma_p's value, not cached), its slope (the density) and the density's slope, with the
    math module (gamma_sums of one x: a handful of numpy calls on one-element arrays cost ~3x more): P from the prefactor
    it shares with the density, by the scalar series (gamma_p's, to its own convergence) or beyond its reach gamma_p's
    fraction."""
    prefactor = math.exp(_log_prefactor(a, x))
    p = prefactor * _series_terms(a, x)[0] if x < a + 1 + _SCALAR_SERIES_REACH else gamma_p(a, x)
    density = prefactor / x
    return p, density, density * ((a - 1) / x - 1)


@lru_cache(maxsize=1024)
def _series_count(a: float, largest: float) -> int:
    """Terms the series takes at x = largest (cached: one bound serves many arrays)."""
    return _series_terms(a, largest)[1]


def gamma_density_array(a: float, x: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    """The density x^(a-1) e^-x / Gamma(a) of a unit-scale gamma over an array of positive x: P(a, x)'s slope."""
    return np.asarray(np.exp(_log_prefactor_array(a, x, np.log(x))) / x)


def _gamma_p_array(a: float, x: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    """gamma_p_array's work.

    The series up to x = a + 1 + 40 (all its terms are positive, so P keeps its relative accuracy past a + 1),
    the continued fraction beyond, where it takes fewer than ~10 levels for a small shape: the planner's calls are
    ~1,000-2,000 arrays of ~50 points a plan, and the fraction's level-by-level loop near x = a + 1 (30-45 levels)
    would cost ~10x the series' few whole-array calls."""
    x = np.asarray(x, dtype=np.float64)
    reach = a + 1 + _ARRAY_SERIES_REACH
    if x.size and float(_smallest_of(x, axis=None)) > 0:
        largest = float(_largest_of(x, axis=None))
        if largest < reach:  # the planner's usual case: every x on the series
            return _series_p_array(a, x.ravel(), largest).reshape(x.shape)
    p = np.zeros(x.shape)
    kept = ~(x <= 0)  # the positive x, and any nan
    inside = x[kept]
    if inside.size == 0:
        return p
    largest = float(inside.max())
    if largest < reach:  # the planner's case: all on the series (false for a nan)
        p[kept] = _series_p_array(a, inside, largest)
        return p
    near, far = inside < reach, (inside >= reach) & (inside < math.inf)
    values = np.full(inside.shape, math.nan)
    if near.any():
        values[near] = _series_p_array(a, inside[near], float(inside[near].max()))
    if far.any():
        values[far] = _fraction_p_array(a, inside[far])
    values[inside == math.inf] = 1.0
    p[kept] = values
    return p


# How far past a + 1 the series is kept to. The scalar form: where a fraction level (~0.25 us) and a series term
# (~0.1 us) cost the same in all, ~15 levels against ~45 terms for a small shape (NR's split at a + 1 takes 60-75
# levels at a = 0.15-0.5). The array form: where the fraction needs under ~10 levels (~3 us each) for a small shape,
# against ~100 terms of the series, which cost little more than 10 in one whole-array pass.
_SCALAR_SERIES_REACH = 10.0
_ARRAY_SERIES_REACH = 40.0


def gamma_p_inverse(a: float, p: float) -> float:
    """x >= 0 with P(a, x) = p (unit scale): 0 at p = 0, infinity at p = 1 (Numerical Recipes' invgammp)."""
    if p <= 0:
        return 0.0
    if p >= 1:
        return math.inf
    a1 = a - 1
    log_gamma_a = math.lgamma(a)
    x = _inverse_start(a, p)
    if a > 1:
        log_a1 = math.log(a1)
        log_density_at_mode = a1 * (log_a1 - 1) - log_gamma_a
    last_step = math.nan
    for _ in range(_INVERSE_STEPS):
        if x <= 0:
            return 0.0
        error = gamma_p(a, x) - p
        if error == 0:
            return x
        log_density = (  # ln of the density x^(a-1) e^-x / Gamma(a); for a > 1 written around its mode a - 1
            log_density_at_mode - (x - a1) + a1 * (math.log(x) - log_a1) if a > 1 else -x + a1 * math.log(x) - log_gamma_a
        )
        log_newton = math.log(abs(error)) - log_density
        if log_newton > _LOG_MAX:  # the density vanishes here: no step can be trusted
            break
        newton = math.copysign(math.exp(log_newton), error)
        step = newton / (1 - 0.5 * min(1.0, newton * (a1 / x - 1)))  # Halley's correction from the density's slope
        x_next = x - step
        if x_next <= 0:
            x_next, step = 0.5 * x, math.nan  # overshot below zero: halve instead (a step the next is not judged by)
        if abs(x_next - x) <= _INVERSE_RTOL * x or abs(error) <= _P_ROUNDING * p or _halley_settled(abs(step) / x, abs(step / last_step)):
            return x_next
        x, last_step = x_next, step
    return x


def _halley_settled(relative_step: float, step_ratio: float) -> bool:
    """Whether a Halley step leaves x within the inverse's tolerance, from its size relative to x and to the step before
    (nan after a halving: not judged): close in (under 1e-4 of x) and shrinking (by 4x or more), the error it leaves is
    taken to shrink as Halley's does, cubically (e' = C e³, so C e² = e' / e, the steps' ratio r): to the step times r³.
    Under half the tolerance, the step is the last (one incomplete gamma fewer than a step under the tolerance takes:
    from 3e-3 and then 5e-9 of x the error left is ~1e-26). Farther out (a tiny shape's x spans decades) the steps
    say less."""
    return relative_step <= 1e-4 and step_ratio <= 0.25 and relative_step * step_ratio**3 <= _INVERSE_RTOL / 2


_INVERSE_STEPS = 40  # Halley converges cubically: 3-6 steps from the start below
_INVERSE_RTOL = 1e-14
# P's own rounding, relative (the series' and the prefactor's: ~2e-15 seen near p = 0.99): an error within it is noise,
# and the step it gives the last (past it, Halley's steps flip between two x a few ulps of P apart until the step cap)
_P_ROUNDING = 1e-14
_LOG_MAX = 700.0  # exp() of more overflows


def _inverse_start(a: float, p: float) -> float:
    """The first guess: Wilson-Hilferty's cube of a normal quantile (a > 1), else the power law P ~ c x^a near zero
    and the exponential tail beyond (Numerical Recipes 6.2.1)."""
    if a > 1:
        tail = p if p < 0.5 else 1 - p
        t = math.sqrt(-2 * math.log(tail))
        z = (2.30753 + t * 0.27061) / (1 + t * (0.99229 + t * 0.04481)) - t  # normal quantile (A&S 26.2.22)
        z = -z if p < 0.5 else z
        return max(1e-3, a * (1 - 1 / (9 * a) - z / (3 * math.sqrt(a))) ** 3)
    t = 1 - a * (0.253 + a * 0.12)  # ~P(a, 1)
    return (p / t) ** (1 / a) if p < t else 1 - math.log(1 - (p - t) / (1 - t))


def gamma_p_inverse_array(a: float, p: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    """gamma_p_inverse over a 1-d array of p, each strictly between 0 and 1, one shape a: the same start and Halley steps,
    every element at once (P and its density from one pass of whole-array calls a step, not a scalar series an
    element), until every element's step is within the scalar form's tolerance, or the steps say it is (_halley_settled
    on the largest step and steps' ratio: a bound for each element's)."""
    p = np.asarray(p, dtype=np.float64)
    a1 = a - 1
    x = _inverse_start_array(a, p)
    rounding = _P_ROUNDING * p  # P's own rounding at each p: an error within it is noise (the same bound every step)
    last_size = None
    for _ in range(_INVERSE_STEPS):
        value, density = _p_and_density_array(a, x)
        error = value - p
        newton = _newton_steps(error, density)
        bend = newton * (a1 / x - 1)  # Halley's correction from the density's slope, as gamma_p_inverse
        np.minimum(bend, 1.0, out=bend)
        moved = x - newton / (1 - 0.5 * bend)
        halved = ~(moved > 0)
        any_halved = bool(_any_of(halved, axis=None))  # the usual case is none: no np.where to keep every element as it is
        if any_halved:
            moved = np.where(halved, 0.5 * x, moved)  # overshot below zero: halve instead
        size = np.abs(moved - x)
        settled = bool(_all_of((size <= _INVERSE_RTOL * x) | (np.abs(error) <= rounding), axis=None)) or (
            last_size is not None
            and _halley_settled(float(_largest_of(size / x, axis=None)), float(_largest_of(size / np.maximum(last_size, _TINY), axis=None)))
        )
        # a halving is not a step the next is judged by
        x, last_size = moved, (np.where(halved, math.inf, size) if any_halved else size)
        if settled:
            break
    return np.asarray(x)


def _p_and_density_array(a: float, x: npt.NDArray[np.float64]) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]:
    """P(a, x) and its slope, the density, over a 1-d array of positive x: for a shape under 10 with every x on the
    series, one block (_prefactor_series_block: its rows' sums are a P(a, x), their first terms the density times x),
    else gamma_p_array and gamma_density_array."""
    largest = float(_largest_of(x))
    if a < _STIRLING_SHAPE and largest < a + 1 + _ARRAY_SERIES_REACH:
        terms = _series_count(a, largest)
        if x.size * terms <= _SERIES_BLOCK_ELEMENTS:
            block = _prefactor_series_block(a, x, terms)
            return _row_sums(block) / a, block[:, 0] / x
    return gamma_p_array(a, x), gamma_density_array(a, x)


def _newton_steps(error: npt.NDArray[np.float64], density: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    """Newton's steps error / density, 0 where the density vanishes (under 1e-300: no step can be trusted there, as
    gamma_p_inverse stops)."""
    if float(_smallest_of(density)) > _TINY:  # the usual case: one division
        return np.asarray(error / density)
    return np.where(density > _TINY, error / np.maximum(density, _TINY), 0.0)


def _inverse_start_array(a: float, p: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    """_inverse_start over an array of p."""
    if a > 1:
        lower = p < 0.5
        tail = np.where(lower, p, 1 - p)
        t = np.sqrt(-2 * np.log(tail))
        z = (2.30753 + t * 0.27061) / (1 + t * (0.99229 + t * 0.04481)) - t  # normal quantile (A&S 26.2.22)
        z = np.where(lower, -z, z)
        return np.asarray(np.maximum(1e-3, a * (1 - 1 / (9 * a) - z / (3 * math.sqrt(a))) ** 3))
    t = 1 - a * (0.253 + a * 0.12)  # ~P(a, 1)
    # each branch is computed for every p and kept where it holds: the tail's from p at least t, so that no logarithm
    # is of a negative (no np.errstate to hush it: ~5 us)
    tail = 1 - np.log(1 - (np.maximum(p, t) - t) / (1 - t))
    return np.asarray(np.where(p < t, (p / t) ** (1 / a), tail))


def _stirling_remainder(a: float) -> float:
    """ln Gamma(a) - ((a - 1/2) ln a - a + ln sqrt(2 pi)), by its asymptotic series for a >= 10 (error < 1e-13)."""
    if a < _STIRLING_SHAPE:
        return math.lgamma(a) - ((a - 0.5) * math.log(a) - a + _LOG_SQRT_2PI)
    r2 = 1 / (a * a)
    return (1 / 12 - r2 * (1 / 360 - r2 * (1 / 1260 - r2 * (1 / 1680 - r2 / 1188)))) / a


def _log_prefactor(a: float, x: float) -> float:
    """ln(x^a e^-x / Gamma(a))."""
    if a < _STIRLING_SHAPE:
        return a * math.log(x) - x - math.lgamma(a)
    t = (x - a) / a
    log_ratio = math.log(x) - math.log(a) if x < a / 2 else math.log1p(t)  # ln(x / a); log1p(t) is -1 at x << a
    return a * (log_ratio - t) + 0.5 * math.log(a) - _LOG_SQRT_2PI - _stirling_remainder(a)


def _log_prefactor_array(a: float, x: npt.NDArray[np.float64], log_x: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    """_log_prefactor over an array of x (log_x: its logarithms, which the caller has)."""
    if a < _STIRLING_SHAPE:
        return np.asarray(a * log_x - x - math.lgamma(a))
    t = (x - a) / a
    log_ratio = np.where(x < a / 2, log_x - math.log(a), np.log1p(np.maximum(t, -0.5)))  # as _log_prefactor
    return np.asarray(a * (log_ratio - t) + (0.5 * math.log(a) - _LOG_SQRT_2PI - _stirling_remainder(a)))


def _series_terms(a: float, x: float) -> tuple[float, int]:
    """The series sum_n x^n / (a (a+1) ... (a+n)) (DLMF 8.7.1 over x^a e^-x / Gamma(a)), and the terms it took."""
    term = total = 1 / a
    shape = a
    eps = _EPS  # a local: the loop is the scalar form's whole cost
    for n in range(1, _MAX_TERMS, 2):  # two terms an iteration (the loop's own cost is a third of a term's)
        shape += 1.0
        term *= x / shape
        total += term
        if term < total * eps:
            return total, n
        shape += 1.0
        term *= x / shape
        total += term
        if term < total * eps:
            return total, n + 1
    return total, _MAX_TERMS


def _fraction_terms(a: float, x: float) -> tuple[float, int]:
    """The continued fraction 1 / (x+1-a - 1(1-a) / (x+3-a - 2(2-a) / (x+5-a - ...))) for Q over the prefactor
    (DLMF 8.9.2 in Numerical Recipes' even form), by the modified Lentz method, and the levels it took."""
    b = x + 1 - a
    c = 1 / _TINY
    d = 1 / b
    h = d
    for i in range(1, _MAX_TERMS):
        an = -i * (i - a)
        b += 2.0
        d = an * d + b
        d = d if not -_TINY < d < _TINY else _TINY
        c = b + an / c
        c = c if not -_TINY < c < _TINY else _TINY
        d = 1 / d
        delta = d * c
        h *= delta
        if -_EPS <= delta - 1 <= _EPS:
            return h, i
    return h, _MAX_TERMS


def _temme_p(a: float, x: float) -> float:
    """P(a, x) for a large shape near its mean (a >= _TEMME_SHAPE, |x / a - 1| <= _TEMME_SPAN), by Temme's uniform
    asymptotic expansion (DLMF 8.12.3-10): P = erfc(-eta sqrt(a / 2)) / 2 - R, R = e^(-a eta^2 / 2) / sqrt(2 pi a)
    x sum_k c_k(eta) / a^k, where eta^2 / 2 = t - ln(1 + t), t = x / a - 1, and eta has t's sign. The c_k are their
    Taylor series in eta (_TEMME_COEFFICIENTS), by Horner's rule: ~90 multiply-adds whatever the shape, where the series
    takes ~6 sqrt(a) terms (~400 at a = 2,500: the Erlang C of a 2,504-slot engine). Within ~1e-15 of SciPy for a shape
    of 100-1,000 (tests/test_numerics.py; the series differs from both by up to ~1e-14 at 1,000 and ~2e-14 at 2,500,
    about what x's own rounding moves P by there)."""
    t = (x - a) / a
    series = 0.0
    for c in _LOG1PMX_DOWN:
        series = series * t + c
    half_eta2 = t * t * series  # t - ln(1 + t) by its series: no cancellation near t = 0
    eta = math.copysign(math.sqrt(2 * half_eta2), t)
    inverse_a = 1 / a
    total = 0.0
    for row in _TEMME_DOWN:  # c_5 first: Horner's rule in 1 / a over Horner's in eta
        c_k = 0.0
        for d in row:
            c_k = c_k * eta + d
        total = total * inverse_a + c_k
    remainder = math.exp(-a * half_eta2) / math.sqrt(2 * math.pi * a) * total
    return 0.5 * math.erfc(-eta * math.sqrt(0.5 * a)) - remainder


_TEMME_SHAPE = 100.0  # from here up, P near the mean is Temme's: six terms in 1 / a leave < 1e-17 at a = 100
_TEMME_SPAN = 0.1  # |x / a - 1| up to this: |eta| < 0.11, where twelve Taylor terms of each c_k leave < 1e-17
# t - ln(1 + t) = t^2 sum_j>=0 (-1)^j t^j / (j + 2): eighteen terms leave < 1e-18 of it at |t| = 0.1
_LOG1PMX_DOWN = tuple((-1) ** j / (j + 2) for j in range(17, -1, -1))  # highest power first, as Horner's rule takes them
# Temme's c_k(eta) = sum_n d_kn eta^n, k = 0..5, n = 0..11 (DLMF 8.12.9-10: c_0 = 1 / (lambda - 1) - 1 / eta, c_k =
# c_k-1' / eta + (-1)^k g_k / (lambda - 1), g_k Stirling's coefficients, lambda = x / a as a series in eta; worked out
# exactly in fractions by tests/test_numerics.py, which checks these against it)
_TEMME_COEFFICIENTS = (
    (
        -0.3333333333333333,
        0.08333333333333333,
        -0.014814814814814815,
        0.0011574074074074073,
        0.0003527336860670194,
        -0.0001787551440329218,
        3.919263178522438e-05,
        -2.185448510679992e-06,
        -1.85406221071516e-06,
        8.296711340953087e-07,
        -1.7665952736826078e-07,
        6.707853543401498e-09,
    ),
    (
        -0.001851851851851852,
        -0.003472222222222222,
        0.0026455026455026454,
        -0.0009902263374485596,
        0.00020576131687242798,
        -4.018775720164609e-07,
        -1.8098550334489977e-05,
        7.64916091608111e-06,
        -1.6120900894563446e-06,
        4.647127802807434e-09,
        1.378633446915721e-07,
        -5.752545603517705e-08,
    ),
    (
        0.004133597883597883,
        -0.0026813271604938273,
        0.0007716049382716049,
        2.0093878600823047e-06,
        -0.0001073665322636516,
        5.2923448829120125e-05,
        -1.2760635188618728e-05,
        3.423578734096138e-08,
        1.3721957309062934e-06,
        -6.298992138380055e-07,
        1.4280614206064242e-07,
        -2.0477098421990866e-10,
    ),
    (
        0.0006494341563786008,
        0.00022947209362139917,
        -0.0004691894943952557,
        0.00026772063206283885,
        -7.561801671883977e-05,
        -2.396505113867297e-07,
        1.1082654115347302e-05,
        -5.6749528269915965e-06,
        1.4230900732435883e-06,
        -2.7861080291528143e-11,
        -1.6958404091930278e-07,
        8.099464905388083e-08,
    ),
    (
        -0.0008618882909167117,
        0.0007840392217200666,
        -0.0002990724803031902,
        -1.4638452578843418e-06,
        6.641498215465122e-05,
        -3.968365047179435e-05,
        1.1375726970678419e-05,
        2.507497226237533e-10,
        -1.6954149536558305e-06,
        8.907507532205309e-07,
        -2.292934834000805e-07,
        2.956794137544049e-11,
    ),
    (
        -0.00033679855336635813,
        -6.972813758365857e-05,
        0.0002772753244959392,
        -0.00019932570516188847,
        6.797780477937208e-05,
        1.419062920643967e-07,
        -1.3594048189768693e-05,
        8.018470256334202e-06,
        -2.291481176508095e-06,
        -3.252473551298454e-10,
        3.4652846491085265e-07,
        -1.8447187191171344e-07,
    ),
)
_TEMME_DOWN = tuple(row[::-1] for row in _TEMME_COEFFICIENTS[::-1])  # c_5 first, each highest power first (Horner)


def _series_p_array(a: float, x: npt.NDArray[np.float64], largest: float) -> npt.NDArray[np.float64]:
    """P by the series for 0 < x: every element takes as many terms as the largest x needs (the terms x / (a + n)
    shrink slowest there). Term n is exp(n ln x - sum_k<=n ln(a + k)), all at once per block of rows: a cumulative
    product over the terms would be ~20x slower (numpy's accumulate does not vectorize), and the logarithms cost
    ~1e-14 relative for a small shape (~1e-12 at a = 1e4, where the exponents reach ~1e4)."""
    _, terms = _series_terms(a, largest)
    log_x = np.log(x)
    return np.asarray(np.exp(_log_prefactor_array(a, x, log_x)) * (1 + _series_totals(a, log_x, terms)) / a)


def _series_totals(a: float, log_x: npt.NDArray[np.float64], terms: int) -> npt.NDArray[np.float64]:
    """sum_n=1..terms x^n / ((a+1) ... (a+n)) at each x of a 1-d array (given by its logarithms), term n exp(n ln x -
    sum_k<=n ln(a + k)): the exponents of a block of rows one matrix product, (ln x, 1) by _series_exponents, and the
    rows' sums another (_row_sums)."""
    exponents = _series_exponents(a, max(terms, _TABLE_TERMS))[:, :terms]
    rows = max(_SERIES_BLOCK_ELEMENTS // terms, 1)
    total = np.empty(log_x.shape)
    for start in range(0, log_x.size, rows):
        columns = np.empty((min(rows, log_x.size - start), 2))
        columns[:, 0] = log_x[start : start + rows]
        columns[:, 1] = 1.0
        block = columns @ exponents
        total[start : start + rows] = _row_sums(np.exp(block, out=block))
    return total


@lru_cache(maxsize=256)
def _series_exponents(a: float, terms: int) -> npt.NDArray[np.float64]:
    """The factors of ln x and 1 in the exponent of the series' terms n = 1..terms: n and -sum_k<=n ln(a + k). Cached:
    a plan asks for a shape ~20 times, at term counts that move with its largest x; a caller asks for at least
    _TABLE_TERMS terms and takes the first it needs (the same values: the sums run term by term), so one table serves
    a shape's counts under that (~8 tables a cold plan would be ~3)."""
    exponents = np.empty((2, terms))
    exponents[0] = np.arange(1.0, terms + 1)
    np.add.accumulate(np.log(a + exponents[0]), out=exponents[1])  # np.cumsum's sums, without its three Python calls
    exponents[1] *= -1
    exponents.flags.writeable = False
    return exponents


_TABLE_TERMS = 128  # the least terms an exponent table is built with: a shape on the planner's series needs 15-90


def _fraction_p_array(a: float, x: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    """P = 1 - Q by the continued fraction for finite x >= a + 1, evaluated from its deepest level up: every element takes
    as many levels as the smallest x needs (the fraction converges slowest there), plus a margin of two."""
    _, levels = _fraction_terms(a, float(x.min()))
    base = x + (1 - a)
    tail = np.zeros(x.shape)
    for i in range(levels + _FRACTION_MARGIN, 0, -1):
        tail += base + 2 * i  # the level's denominator b_i plus the fraction below it
        np.divide(-i * (i - a), tail, out=tail)
    return np.asarray(1 - np.exp(_log_prefactor_array(a, x, np.log(x))) / (base + tail))


_FRACTION_MARGIN = 2


def root_in_bracket(
    f: Callable[[float], float],
    low: float,
    high: float,
    xtol: float,
    f_low: float | None = None,
    f_high: float | None = None,
    smooth: bool = False,
    anderson_bjorck: bool = False,
) -> float:
    """A root of f in [low, high], where f(low) and f(high) differ in sign (f may jump: the point of the jump is
    returned), to within xtol: the middle of bracket_root's last bracket."""
    low, high = bracket_root(f, low, high, xtol, f_low, f_high, smooth, anderson_bjorck)
    return (low + high) / 2


def bracket_root(
    f: Callable[[float], float],
    low: float,
    high: float,
    xtol: float,
    f_low: float | None = None,
    f_high: float | None = None,
    smooth: bool = False,
    anderson_bjorck: bool = False,
) -> tuple[float, float]:
    """[low, high] at most xtol wide around a root of f, each end on its own side (f(low) has the sign it had at the
    start, f(high) the other; one point where f is 0): a caller that must not cross a jump takes its side's end.
    Regula falsi with the Illinois correction (superlinear on smooth f), and a bisection whenever three steps have
    not halved the bracket (steps and jumps) or an end's value is infinite (f beyond a jump to infinity says nothing
    about where the root is). f_low and f_high, when the caller has them, save two calls. `smooth` (f has no jump in
    the bracket) also stops at a point the chord through the bracket's ends puts within xtol of the root: (x, x).
    `anderson_bjorck` (for a smooth f) weighs an end kept twice by 1 - f(new) / f(replaced), not a half (_kept_weight:
    fewer steps on a curved f)."""
    f_low = f(low) if f_low is None else f_low
    f_high = f(high) if f_high is None else f_high
    if f_low == 0:
        return low, low
    if f_high == 0:
        return high, high
    if (f_low > 0) == (f_high > 0):
        raise ValueError("bracket_root: f(low) and f(high) have the same sign")
    kept = 0  # the end the last step kept: -1 low, +1 high
    checkpoint, steps = high - low, 0
    for _ in range(_MAX_STEPS):
        if high - low <= xtol:
            break
        steps += 1
        slow = steps == 3 and high - low > checkpoint / 2 and not smooth  # Illinois alone converges on a smooth f
        if steps == 3:
            checkpoint, steps = high - low, 0
        # a chord step lands at least xtol / 2 inside the bracket: a root next to an end is then closed in one step
        x = (low + high) / 2 if slow else min(max(false_position(low, high, f_low, f_high), low + xtol / 2), high - xtol / 2)
        fx = f(x)
        if fx == 0 or (smooth and abs(fx) * (high - low) <= xtol * abs(f_high - f_low)):
            return x, x
        if (fx > 0) == (f_high > 0):
            f_low = f_low * _kept_weight(fx, f_high, anderson_bjorck) if kept == -1 else f_low
            high, f_high = x, fx
            kept = -1
        else:
            f_high = f_high * _kept_weight(fx, f_low, anderson_bjorck) if kept == +1 else f_high
            low, f_low = x, fx
            kept = +1
    return low, high


def lowest_crossing(
    fs: Callable[[float, tuple[bool, ...]], tuple[float, ...]],
    low_at: tuple[float, tuple[float, ...]],
    high_at: tuple[float, tuple[float, ...]],
    xtol: float,
    rtol: float = 0.0,
    history: Sequence[tuple[float, tuple[float, ...]]] = (),
    knees: Callable[[float], tuple[float, ...]] | None = None,
) -> float:
    """The highest x up to where the first of several functions (evaluated together: fs(x, needed) is one tuple, each
    f that is not `needed` may be given as -inf) rises above 0, to within xtol + rtol x the bracket's low end (a
    tolerance relative to the answer, which lies above that end): x in [low, high] with every f <= 0 at x, some f > 0
    within that tolerance above it. Every f is <= 0 at low and one is > 0 at high (each given with the values
    there); each is taken to rise and cross once, so one that is <= 0 at the high end is not needed again.

    bracket_root's steps, on each function that is over 0 at the bracket's high end: the next x is the lowest of their
    chord steps (Anderson-Björck-weighted), so the function that crosses first is followed on its own, not the kinked worse
    of them; a bisection whenever two steps have not halved the bracket (unless every function followed has a pole
    fit, below), the last two stalled (_stalled: a jump) or a value is infinite. A step that meets stops the search
    where a function is shown to cross within half the tolerance above it (_crossing_within), and each step aims a
    quarter of it short of the root it points at, so the step that lands near the root lands on the side that meets: a
    chord that converges from one side closes without the bisection and the half-tolerance step past it. From the third
    point on, a function's step is the root of the curve with a pole through its last three points where that lies in
    the bracket (_curved), else its chord; after a step that met on a flat stretch far below the crossing (_flat), the
    chord to the high end's own value (no pole fit, no bisection for it). `history`: points seen before the bracket (a nan
    value: that function not worked out there), oldest first, which the first pole fits may pass through.

    `knees`: each function's knee coordinate at an x evaluated (nan where not known): where it is <= 0 the function sits
    flat, where it is over 0 it may climb (a token gap's p95 once the share of gaps on mixed steps passes 1 - its
    quantile), smooth in x where the function may jump. The crossing of a function whose coordinate is <= 0 at the low
    end and over 0 at the high end lies at or past its knee: its step is its own where that lies past the knee, else
    the knee's on the coordinate (_KneeChord.step), and the knee's alone after a stalled step (a jump at the knee, which
    its own chords, flat then steep, creep up on); past the knee its pole fits start from the knee (_KneeChord.past)."""
    (low, f_low), (high, f_high) = low_at, high_at
    weights_low, weights_high = list(f_low), list(f_high)  # each end's values as the chords weigh them
    kept, stalled, flat = 0, 0, False
    checkpoint, steps = high - low, 0
    seen = [*history, low_at, high_at]
    knee = _KneeChord.inside(knees, low, high)
    for _ in range(_MAX_STEPS):
        tol = xtol + rtol * low
        if high - low <= tol:
            break
        steps += 1
        followed = [i for i, b in enumerate(weights_high) if b > 0]
        spanning = [i for i in followed if knee.spans(i)] if knee else []
        curves = [None if flat else _curved(knee.past(seen, i) if knee else seen, i, low, high) for i in followed]
        # two steps that did not halve the bracket are followed by a bisection unless every function has a pole fit
        # (or a knee's chord, which closes in on a smooth coordinate)
        slow = not spanning and (stalled >= 2 or (steps == 2 and high - low > checkpoint / 2 and None in curves and not flat))
        if steps == 2:
            checkpoint, steps = high - low, 0
        # each step aims a quarter of the tolerance short of the root it points at (a knee's: _KneeChord.step)
        aims = [
            (curve or false_position(low, high, weights_low[i], weights_high[i])) - tol / 4
            for i, curve in zip(followed, curves, strict=True)
        ]
        aims = [
            knee.step(i, low, high, tol, aim, stalled > 0) if knee and i in spanning else aim for i, aim in zip(followed, aims, strict=True)
        ]
        # a step lands at least tol / 2 inside the bracket: a root next to an end is then closed in one step
        x = (low + high) / 2 if slow else min(max(min(aims), low + tol / 2), high - tol / 2)
        fx = tuple(fs(x, tuple(w > 0 for w in weights_high)))
        seen.append((x, fx))
        met = max(fx) <= 0
        stalled = stalled + 1 if _stalled(fx, f_low if met else f_high, f_high) else 0  # steps in a row
        flat = stalled > 0 and met and _flat(fx, f_low, weights_high)  # a flat step is a stalled one
        if knee:
            knee.moved(x, met, kept)
        if met:
            if _crossing_within((low, f_low), (x, fx), (high, f_high), tol / 2):
                return x
            weights_high = list(f_high) if flat else _retained(weights_high, weights_low, fx) if kept == +1 else weights_high
            low, f_low, weights_low, kept = x, fx, list(fx), +1
        else:
            weights_low = _retained(weights_low, weights_high, fx) if kept == -1 else weights_low
            high, f_high, weights_high, kept = x, fx, list(fx), -1
    return low


class _KneeChord:
    """lowest_crossing's knee coordinates at the bracket's ends, weighed as regula falsi's with the Illinois correction
    (an end kept twice is weighed half): a smooth coordinate's root is closed in from both sides."""

    def __init__(
        self, knees: Callable[[float], tuple[float, ...]], low: list[float], high: list[float], at: dict[float, list[float]]
    ) -> None:
        self.knees = knees
        self.low = self.weights_low = low
        self.high = self.weights_high = high
        self.under = False  # the last step landed under a knee the bracket spans
        self.at = at  # the coordinates at each x the search evaluated

    @staticmethod
    def inside(knees: Callable[[float], tuple[float, ...]] | None, low: float, high: float) -> _KneeChord | None:
        """The knee coordinates of a bracket [low, high] inside which some function's knee lies (its coordinate <= 0 at
        low, over 0 at high), else None: a coordinate rises with x, so no knee comes to lie inside a narrower one."""
        if knees is None:
            return None
        at_low, at_high = list(knees(low)), list(knees(high))
        if not any(k <= 0 < h for k, h in zip(at_low, at_high, strict=True)):
            return None
        return _KneeChord(knees, at_low, at_high, {low: at_low, high: at_high})

    def past(self, seen: list[tuple[float, tuple[float, ...]]], i: int) -> list[tuple[float, tuple[float, ...]]]:
        """The points seen for function i's pole fits once the bracket's low end is past its knee: those on the climb
        beyond it, after the knee itself (where the coordinate's chord between the last flat point and the first past
        it crosses 0) at the last flat point's values: the climb starts there, and the flat points would bend the fit."""
        if not self.low[i] > 0:
            return seen
        climb: list[tuple[float, tuple[float, ...]]] = []
        last_flat = math.nan  # the highest point seen on the flat stretch (its coordinate <= 0)
        f_flat: tuple[float, ...] = ()  # and its values
        for x, f in seen:
            at = self.at.get(x)  # None: no coordinate there (a point before the bracket's knees were read)
            if at is None or not at[i] <= 0:
                climb.append((x, f))
            elif not x <= last_flat:  # the first flat point, or a higher one
                last_flat, f_flat = x, f
        first_past = min((x for x in self.at if x > last_flat and self.at[x][i] > 0), default=math.nan)
        if math.isnan(first_past):  # no flat point, or none under the climb
            return climb
        knee = false_position(last_flat, first_past, self.at[last_flat][i], self.at[first_past][i])
        return [(knee, f_flat), *climb]

    def spans(self, i: int) -> bool:
        """Whether function i's coordinate is <= 0 at the low end and over 0 at the high end: its knee is inside."""
        return self.low[i] <= 0 < self.high[i]

    def step(self, i: int, low: float, high: float, tol: float, own: float, stalled: bool) -> float:
        """Function i's step: its `own` step where that lies past its knee, else where the knee lies on its coordinate's
        chord, a quarter of the tolerance under it (the step lands on the flat side, where the function meets) or over
        it after a step that met under it; the knee alone after a `stalled` step (a function that jumps at its knee,
        closed in on from both sides, where its own chords creep in from above)."""
        knee = self._inverse_quadratic(i, low, high) or false_position(low, high, self.weights_low[i], self.weights_high[i])
        knee = knee + tol / 4 if self.under else knee - tol / 4
        return knee if stalled else max(knee, own)

    def _inverse_quadratic(self, i: int, low: float, high: float) -> float | None:
        """The knee on the quadratic in the coordinate through the last three points evaluated (Brent's inverse
        quadratic step: superlinear on a smooth coordinate), where that lies inside (low, high); None otherwise."""
        points = [(x, k[i]) for x, k in self.at.items()][-3:]
        if len(points) < 3 or len({k for _, k in points}) < 3 or not all(math.isfinite(k) for _, k in points):
            return None
        (x0, k0), (x1, k1), (x2, k2) = points
        root = x0 * k1 * k2 / ((k0 - k1) * (k0 - k2)) + x1 * k0 * k2 / ((k1 - k0) * (k1 - k2)) + x2 * k0 * k1 / ((k2 - k0) * (k2 - k1))
        return root if low < root < high else None

    def moved(self, x: float, met: bool, kept: int) -> None:
        """Takes the coordinates at x, the bracket's new low end (`met`) or high end; `kept`: the end the step before
        kept (-1 low, +1 high), as in lowest_crossing."""
        at_x = self.at[x] = list(self.knees(x))
        self.under = met and any(k <= 0 < h for k, h in zip(at_x, self.high, strict=True))
        if met:
            self.weights_high = [w / 2 for w in self.weights_high] if kept == +1 else self.weights_high
            self.low = self.weights_low = at_x
        else:
            self.weights_low = [w / 2 for w in self.weights_low] if kept == -1 else self.weights_low
            self.high = self.weights_high = at_x


def _curved(seen: Sequence[tuple[float, Sequence[float]]], i: int, low: float, high: float) -> float | None:
    """The root of f = a + b / (p - x) through the last three points seen of function i (a queue's p95 near its pole:
    the curve a chord creeps up on from one side), where it lies inside (low, high); None otherwise (a point not worked
    out, a straight line: no pole). The three may lie on one side of 0 (three steps that met on the way up a curve that
    turns up before its root): the root is then the curve's extrapolation, taken only inside the bracket."""
    points = [(x, f[i]) for x, f in seen[-3:] if math.isfinite(f[i])]
    if len(points) < 3:
        return None
    (x0, f0), (x1, f1), (x2, f2) = points
    try:
        k = (f0 - f1) * (x1 - x2) / ((f1 - f2) * (x0 - x1))  # = (p - x2) / (p - x0)
        pole = (k * x0 - x2) / (k - 1)
        b = (f0 - f1) * (pole - x0) * (pole - x1) / (x0 - x1)
        root = pole + b / (f0 - b / (pole - x0))  # a + b / (p - x) = 0
    except ZeroDivisionError:
        return None
    return root if low < root < high else None


def _crossing_within(
    low_at: tuple[float, Sequence[float]], x_at: tuple[float, Sequence[float]], high_at: tuple[float, Sequence[float]], reach: float
) -> bool:
    """Whether a function over 0 at the high end (<= 0 at low and x, low < x < high) crosses within `reach` above x, on
    the slower of its chords from x to each end: a function convex or concave over [low, high] rises at x at least that
    fast, so its root is no farther than that slope puts it (a jump shows as a flat chord, an infinite end as none)."""
    (low, f_low), (x, f_x), (high, f_high) = low_at, x_at, high_at
    for a, b, c in zip(f_low, f_x, f_high, strict=True):
        if c > 0 and math.isfinite(a) and math.isfinite(c):
            slope = min((b - a) / (x - low), (c - b) / (high - x))
            if slope > 0 and -b <= reach * slope:
                return True
    return False


def _stalled(new: Sequence[float], replaced: Sequence[float], at_high: Sequence[float]) -> bool:
    """Whether a step left every function followed (over 0 at the high end) on the side and at more than half the value
    of the end it replaces: a flat stretch before a jump, where chord steps only creep in from an end (bisect instead)."""
    followed = [(n, r) for n, r, h in zip(new, replaced, at_high, strict=True) if h > 0]
    return all(math.isfinite(r) and (n > 0) == (r > 0) and abs(n) > _STALLED * abs(r) for n, r in followed)


def _flat(new: Sequence[float], replaced: Sequence[float], at_high: Sequence[float]) -> bool:
    """Whether a step that meets left every function followed on a flat stretch far below its crossing: its value
    closed under _FLAT of its distance to 0 from the low end it replaces, and is still under -_FAR_BELOW (a p95 that has
    not begun to climb, as a token gap's below its knee). Three points there bend a pole fit, and Anderson-Björck's
    weight, toward the high end; the chord to the high end's own value does not."""
    # an infinite r (a function not worked out there) fails the second test
    return all(h <= 0 or (n < -_FAR_BELOW and n - r < _FLAT * -r) for n, r, h in zip(new, replaced, at_high, strict=True))


_FLAT = 0.05  # of a function's distance to 0: a step that meets and closes less of it stayed on a flat stretch
_FAR_BELOW = 0.25  # a function's value under which a flat stretch is far from its crossing
_STALLED = 0.5  # of the value at the end a step replaces: a step keeping more made too little progress


def _kept_weight(new: float, replaced: float, anderson_bjorck: bool) -> float:
    """The factor on the value of an end kept twice: a half (Illinois), or 1 - f(new) / f(the end it replaced)
    (Anderson-Björck: follows a curved smooth f into its root from one side in fewer steps), a half where that is not
    positive."""
    finite = replaced != 0 and math.isfinite(replaced) and math.isfinite(new)
    m = 1 - new / replaced if anderson_bjorck and finite else 0.5
    return m if m > 0 else 0.5


def _retained(kept: list[float], replaced: Sequence[float], new: Sequence[float]) -> list[float]:
    """An end's chord weights when the other end moves again: each scaled by Anderson-Björck's factor (_kept_weight)."""
    return [k * _kept_weight(n, r, anderson_bjorck=True) for k, r, n in zip(kept, replaced, new, strict=True)]


_MAX_STEPS = 400


def false_position(low: float, high: float, f_low: float, f_high: float) -> float:
    """Where the chord through the bracket's ends crosses zero; the midpoint when that is not strictly inside."""
    if not (math.isfinite(f_low) and math.isfinite(f_high)) or f_high == f_low:
        return (low + high) / 2
    x = (low * f_high - high * f_low) / (f_high - f_low)
    return x if low < x < high else (low + high) / 2
