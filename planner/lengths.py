"""Prompt and reply lengths: a gamma distribution fitted to a mean and a 95th percentile.

The simulator draws its requests from the same distribution (planner.sim_workload), so both sides of the
cross-check see the same prompts. planner.numerics has the regularized incomplete gamma function and its inverse.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from functools import lru_cache

from planner.numerics import gamma_p, gamma_p_inverse, root_in_bracket

__all__ = ["clamped_moments", "gamma_cdf", "gamma_quantile", "length_cv2", "share_above", "size_biased_mean"]


def gamma_cdf(shape: float, x: float) -> float:
    """Regularized lower incomplete gamma P(shape, x): the CDF of a unit-scale gamma."""
    return gamma_p(shape, x) if x > 0 else 0.0


def gamma_quantile(shape: float, p: float) -> float:
    """x with P(shape, x) = p (unit scale)."""
    return gamma_p_inverse(shape, p)


@lru_cache(maxsize=1024)
def length_cv2(mean: float, p95: float) -> float:
    """Squared coefficient of variation of a gamma distribution with this mean and 95th percentile (0: fixed).

    p95 / mean = gammaincinv(k, 0.95) / k falls smoothly with the gamma shape k from its peak (5.83 at k = 0.088) to 1;
    CV^2 = 1 / k. A ratio past the peak is more skew than a gamma has: it gets the most skewed (CV^2 11.4).

    The shape is the root in ln k of 0.95 - P(k, ratio x k): the same sign as p95 / mean - ratio (under 0.95 of a shape
    lies below ratio x its mean exactly where its p95 lies above it), one incomplete gamma a step where the ratio's
    own root takes an inversion (3-4)."""
    ratio = p95 / mean
    if ratio <= 1.0 + 1e-9:
        return 0.0

    def excess(log_shape: float) -> float:
        shape = math.exp(log_shape)
        return 0.95 - gamma_p(shape, ratio * shape)

    (low, ratio_low), (high, ratio_high) = _ENDS
    if ratio_low <= ratio or ratio_high >= ratio:  # beyond the ratios a gamma in these shapes has: the nearer end
        return 1 / _SHAPES[0] if ratio_low <= ratio else 1 / _SHAPES[1]
    (low, at_low), (high, at_high) = _bracket_near(excess, _wilson_hilferty_log_shape(ratio), (low, None), (high, None))
    return math.exp(-root_in_bracket(excess, low, high, xtol=1e-13, f_low=at_low, f_high=at_high, smooth=True))


def _wilson_hilferty_log_shape(ratio: float) -> float:
    """ln k where Wilson-Hilferty's cube puts p95 / mean at `ratio`: p95 / k ~ (1 - s^2 / 9 + z s / 3)^3, s = 1 / sqrt(k),
    a quadratic in s (its smaller root: k large as the ratio nears 1); nan past the ratio ~4.7 where it has none. It
    sits just below the true shape: by 0.08 at k = 0.5, 0.03 at 1, 1e-4 at 100 (in ln k)."""
    u = ratio ** (1 / 3)
    discriminant = 9 * _Z95 * _Z95 - 36 * (u - 1)
    if discriminant < 0:
        return math.nan
    s = (3 * _Z95 - math.sqrt(discriminant)) / 2
    return -2 * math.log(s) if s > 0 else math.nan


_Z95 = 1.6448536269514722  # the standard normal's 95th percentile


def _bracket_near(
    excess: Callable[[float], float], start: float, low_at: tuple[float, float | None], high_at: tuple[float, float | None]
) -> tuple[tuple[float, float | None], tuple[float, float | None]]:
    """A bracket of excess's root (falling in ln k) around `start`, inside the given one: `start` and a point 0.05 / k
    above or below it (Wilson-Hilferty's error is under half that), the step doubled until the sign changes; the given
    bracket when there is no start (an end's excess None where not worked out)."""
    (low, at_low), (high, at_high) = low_at, high_at
    if not low < start < high:
        return low_at, high_at
    at_start = excess(start)
    step = 0.05 * math.exp(-start)
    if at_start > 0:  # the root is above the start
        low, at_low = start, at_start
        while (x := start + step) < high and (at_x := excess(x)) > 0:
            low, at_low, step = x, at_x, step * 2
        return (low, at_low), ((x, at_x) if x < high else (high, at_high))
    high, at_high = start, at_start
    while (x := start - step) > low and (at_x := excess(x)) <= 0:
        high, at_high, step = x, at_x, step * 2
    return ((x, at_x) if x > low else (low, at_low)), (high, at_high)


def _p95_over_mean(log_shape: float) -> float:
    """p95 / mean of a gamma of shape e^log_shape."""
    shape = math.exp(log_shape)
    return gamma_quantile(shape, 0.95) / shape


_SHAPES = (0.0881, 1e4)  # gamma shapes from the ratio's peak up: over them the ratio falls, so one shape has each
# (ln shape, p95 / mean) at the two ends, worked out once: the same for every brief, and the shape 1e4's inversion
# sums ~1,000 series terms a step (a third of a length_cv2 call)
_ENDS = tuple((math.log(shape), _p95_over_mean(math.log(shape))) for shape in _SHAPES)


def share_above(mean: float, p95: float, tokens: float) -> float:
    """The share of lengths longer than `tokens`: the tail of the gamma this mean and p95 give."""
    cv2 = length_cv2(mean, p95)
    if cv2 <= 0:  # every length is the mean
        return 1.0 if mean > tokens else 0.0
    return 1 - gamma_cdf(1 / cv2, tokens / (mean * cv2))


def size_biased_mean(mean: float, cv2: float) -> float:
    """E[L^2] / E[L]: the mean length of the item in progress when items are held in proportion to their length."""
    return mean * (1 + cv2)


def _full_moments(shape: float, scale: float, log_gammas_up: tuple[float, float, float]) -> tuple[float, float, float]:
    """E[Y^n] for Y gamma(shape, scale), n = 1, 2, 3: scale^n Gamma(shape + n) / Gamma(shape) (`log_gammas_up`: ln
    Gamma(shape + 1) and _cdfs_up's next two)."""
    log_scale, log_gamma = math.log(scale), math.lgamma(shape)
    return (
        math.exp(log_scale + log_gammas_up[0] - log_gamma),
        math.exp(2 * log_scale + math.lgamma(shape + 2) - log_gamma),
        math.exp(3 * log_scale + math.lgamma(shape + 3) - log_gamma),
    )


def _log_gammas_up(shape: float) -> tuple[float, float, float]:
    """ln Gamma(a + 1) for a = shape, shape + 1, shape + 2: what _cdfs_up divides by (the same for every z)."""
    return math.lgamma(shape + 1), math.lgamma(shape + 1 + 1), math.lgamma(shape + 2 + 1)


def _cdfs_up(shape: float, z: float, at_shape: float, log_gammas_up: tuple[float, float, float]) -> tuple[float, float, float]:
    """P(shape + n, z) for n = 1, 2, 3 from P(shape, z) (`at_shape`), by P(a + 1, z) = P(a, z) - z^a e^-z / Gamma(a + 1):
    three exponentials instead of three incomplete gammas (the error stays below 1e-16 of P(shape, z))."""
    if z <= 0:
        return 0.0, 0.0, 0.0
    if math.isinf(z):
        return 1.0, 1.0, 1.0
    log_z = math.log(z)
    p1 = max(at_shape - math.exp(shape * log_z - z - log_gammas_up[0]), 0.0)
    p2 = max(p1 - math.exp((shape + 1) * log_z - z - log_gammas_up[1]), 0.0)
    p3 = max(p2 - math.exp((shape + 2) * log_z - z - log_gammas_up[2]), 0.0)
    return p1, p2, p3


@lru_cache(maxsize=4096)
def clamped_moments(mean: float, cv2: float, floor: float, ceiling: float) -> tuple[float, float, float]:
    """E[Z], E[Z^2], E[Z^3] of Z = max(min(Y, ceiling), floor), Y gamma with this mean and CV^2 (fixed when CV^2 = 0).

    Cached: a plan asks for the same prompt-service moments ~5 times (the same engine at the same batch, re-evaluated
    by the solves around it)."""
    if cv2 <= 0 or mean <= 0 or floor >= ceiling:
        z = max(min(mean, ceiling), floor)
        return z, z * z, z**3
    shape, scale, log_gammas_up, full, ceiling_up, above_terms = _below_ceiling(mean, cv2, ceiling)
    # gamma_p itself: gamma_cdf's 0 at x <= 0 is gamma_p's too (a call fewer each)
    at_floor = gamma_p(shape, floor / scale) if floor > 0 else 0.0
    floor_up = _cdfs_up(shape, floor / scale, at_floor, log_gammas_up)  # E[Y^n; Y <= x] = E[Y^n] P(shape + n, x / scale)
    # E[Z^n] = floor^n P(Y <= floor) + E[Y^n; floor < Y <= ceiling] + ceiling^n P(Y > ceiling), n = 1, 2, 3
    return (
        floor * at_floor + full[0] * (ceiling_up[0] - floor_up[0]) + above_terms[0],
        floor**2 * at_floor + full[1] * (ceiling_up[1] - floor_up[1]) + above_terms[1],
        floor**3 * at_floor + full[2] * (ceiling_up[2] - floor_up[2]) + above_terms[2],
    )


_Moments = tuple[float, float, float]
_BelowCeiling = tuple[float, float, _Moments, _Moments, _Moments, _Moments]


@lru_cache(maxsize=256)
def _below_ceiling(mean: float, cv2: float, ceiling: float) -> _BelowCeiling:
    """What clamped_moments works out whatever the floor: (shape, scale, _log_gammas_up, the full moments, the
    _cdfs_up at the ceiling, ceiling^n P(Y > ceiling)). Cached: where a prompt token costs the same beside every decode
    batch (no all-reduce time to share out), a plan's solves ask for one ceiling at a new floor each new batch."""
    shape, scale = 1 / cv2, mean * cv2
    at_ceiling = gamma_p(shape, ceiling / scale) if math.isfinite(ceiling) else 1.0
    log_gammas_up = _log_gammas_up(shape)
    ceiling_up = _cdfs_up(shape, ceiling / scale, at_ceiling, log_gammas_up)
    above = 1 - at_ceiling
    above_terms = (ceiling * above, ceiling**2 * above, ceiling**3 * above) if above > 0 else (0.0, 0.0, 0.0)
    return shape, scale, log_gammas_up, _full_moments(shape, scale, log_gammas_up), ceiling_up, above_terms
