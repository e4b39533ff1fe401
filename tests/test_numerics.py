"""planner.numerics against SciPy (a test dependency only: the planner does not import it)."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from scipy.special import gammainc, gammaincinv

from planner.numerics import (
    _TEMME_COEFFICIENTS,
    _TEMME_SHAPE,
    _TEMME_SPAN,
    _fraction_terms,
    _log_prefactor,
    _series_terms,
    bracket_root,
    gamma_p,
    gamma_p_array,
    gamma_p_inverse,
    gamma_p_inverse_array,
    gamma_p_row_sums,
    lowest_crossing,
    root_in_bracket,
)
from planner.operating_point import _CAPACITY_PROBE, _CAPACITY_TOLERANCE, _margin_search

pytestmark = pytest.mark.unit

# The shapes the planner can ask for, log-spaced (and more): lengths.length_cv2 searches k in [0.088, 1e4] (CV^2 = 1 / k), the
# prompt-service moments take k + 1..3, the M/G/1 wait's tail shape is at most 1e3.
SHAPES = tuple(float(a) for a in np.geomspace(1e-3, 1e4, 29))
# quantiles spanning each distribution, the planner's p95 among them
QUANTILES = (1e-9, 1e-7, 1e-5, 1e-3, 0.01, 0.05, 0.1, 0.25, 0.5, 0.75, 0.9, 0.95, 0.99, 0.999, 1 - 1e-5, 1 - 1e-7, 1 - 1e-9)
P_RTOL, P_ATOL = 1e-10, 1e-14  # relative, or absolute where P is tiny


def _points(a: float) -> np.ndarray:
    """x at every quantile (those that underflow to 0 dropped), around the method's switches (a + 1, a + 11, a + 41),
    and far into the upper tail."""
    quantiles = gammaincinv(a, np.array(QUANTILES))
    switches = np.array([a + 1, a + 11, a + 41]) * np.array([[1 - 1e-9], [1.0], [1 + 1e-9]])
    return np.concatenate([quantiles[quantiles > 0], switches.ravel(), [a * 0.5, a, a * 2, a + 200, a * 10 + 1000]])


@pytest.mark.parametrize("a", SHAPES)
def test_incomplete_gamma_matches_scipy(a: float):
    xs = _points(a)
    reference = gammainc(a, xs)
    ours = np.array([gamma_p(a, float(x)) for x in xs])
    np.testing.assert_allclose(ours, reference, rtol=P_RTOL, atol=P_ATOL)
    np.testing.assert_allclose(gamma_p_array(a, xs), reference, rtol=P_RTOL, atol=P_ATOL)


@pytest.mark.parametrize("a", SHAPES)
def test_scalar_and_array_forms_agree(a: float):
    xs = _points(a)
    scalar = np.array([gamma_p(a, float(x)) for x in xs])
    np.testing.assert_allclose(gamma_p_array(a, xs), scalar, rtol=1e-12, atol=1e-16)
    grid = np.concatenate([[-1.0, 0.0], xs]).reshape(1, -1).repeat(2, axis=0)  # any shape; 0 at and below zero
    assert gamma_p_array(a, grid).shape == grid.shape
    np.testing.assert_allclose(gamma_p_array(a, grid)[1], [0.0, 0.0, *scalar], rtol=1e-12, atol=1e-16)


@pytest.mark.parametrize("a", SHAPES)
def test_inverse_round_trips_and_matches_scipy(a: float):
    for q in QUANTILES:
        x = gamma_p_inverse(a, q)
        expected = float(gammaincinv(a, q))
        if expected < 1e-300:  # the quantile underflows (a = 1e-3, q < 0.5: x ~ q^1000): no x to compare
            assert x < 1e-300
            continue
        assert float(gammainc(a, x)) == pytest.approx(q, rel=1e-10)
        if q <= 0.999:  # above, p's own rounding (1e-16 of Q ~ 1e-9) moves x by ~1e-9 relative in both
            assert x == pytest.approx(expected, rel=1e-10)


@pytest.mark.parametrize("a", SHAPES)
def test_array_inverse_is_the_scalar_inverse(a: float):
    """The TTFT model's equal-probability prompt lengths (planner.slo) come from the array form: it must give the scalar
    form's quantiles, and SciPy's, at every quantile whose x does not underflow."""
    qs = np.array([q for q in QUANTILES if float(gammaincinv(a, q)) > 1e-300])
    xs = gamma_p_inverse_array(a, qs)
    assert gammainc(a, xs) == pytest.approx(qs, rel=1e-10)
    body = qs <= 0.999  # above, P's rounding near 1 moves x by up to ~1e-7 (test_inverse_round_trips_and_matches_scipy)
    assert xs[body] == pytest.approx([gamma_p_inverse(a, float(q)) for q in qs[body]], rel=1e-11)
    assert xs[body] == pytest.approx(gammaincinv(a, qs[body]), rel=1e-10)


@pytest.mark.parametrize("a", tuple(float(a) for a in np.geomspace(0.05, 1e4, 15)))
def test_the_inverses_stop_within_their_tolerance_on_the_ttft_grid(a: float):
    """The TTFT model's grid (48 equal-probability points of a gamma truncated at 50-99.9%): both inverses, which stop
    once their Halley steps say the error left is under half the tolerance (_halley_settled), give SciPy's quantiles
    to 1e-13 (their tolerance is 1e-14 of x; SciPy's own error is of that order)."""
    for covered in (0.5, 0.84, 0.99, 0.999):
        qs = (np.arange(48) + 0.5) / 48 * covered
        expected = gammaincinv(a, qs)
        np.testing.assert_allclose(gamma_p_inverse_array(a, qs), expected, rtol=1e-13, atol=0)
        np.testing.assert_allclose([gamma_p_inverse(a, float(q)) for q in qs], expected, rtol=1e-13, atol=0)


@pytest.mark.parametrize("a", (10.0, 37.5, 1e3, 1e4))
def test_far_below_a_large_shape(a: float):
    """x / a below double precision's 1e-16 (a tiny gap or cap over the length scale): P is tiny, not an error, and
    the prefactor keeps its accuracy where x / a - 1 rounds to -1."""
    xs = np.array([5e-324, 1e-300, a * 1e-17, a * 1e-9, a * 1e-3, a * 0.3])
    reference = gammainc(a, xs)
    ours = np.array([gamma_p(a, float(x)) for x in xs])
    np.testing.assert_allclose(ours, reference, rtol=P_RTOL, atol=P_ATOL)
    np.testing.assert_allclose(gamma_p_array(a, xs), reference, rtol=P_RTOL, atol=P_ATOL)


def _temme_coefficients(rows: int, terms: int) -> list[list[Fraction]]:
    """Temme's d_kn exactly (DLMF 8.12.9-10): lambda - 1 = mu(eta) from mu - ln(1 + mu) = eta^2 / 2 term by term, then
    c_0 = 1 / mu - 1 / eta and c_k = c_k-1' / eta + (-1)^k g_k / mu (g_k: Stirling's series for Gamma, DLMF 5.11.4),
    each c_k's 1 / eta terms cancelling (asserted: a check of the recurrence and of g_k)."""
    size = terms + 2 * rows + 2
    mu = [Fraction(0), Fraction(1)] + [Fraction(0)] * (size - 2)

    def times(p: list[Fraction], q: list[Fraction]) -> list[Fraction]:
        return [sum((p[i] * q[n - i] for i in range(n + 1)), Fraction(0)) for n in range(size)]

    for n in range(2, size - 1):  # eta^(n+1)'s coefficient of mu - ln(1 + mu) with mu_n = 0 (mu^2 / 2 adds mu_n)
        power, total = mu, Fraction(0)
        for j in range(2, n + 2):
            power = times(power, mu)
            total += (-1) ** j * power[n + 1] / j
        mu[n] = -total
    over_eta = mu[1:]  # mu / eta; its reciprocal v: 1 / mu = sum_n v_n eta^(n-1)
    v = [Fraction(1)] + [Fraction(0)] * (len(over_eta) - 1)
    for n in range(1, len(v)):
        v[n] = -sum((over_eta[i] * v[n - i] for i in range(1, n + 1)), Fraction(0))
    g = [Fraction(1), Fraction(1, 12), Fraction(1, 288), Fraction(-139, 51840), Fraction(-571, 2488320), Fraction(163879, 209018880)]
    c = [v[1:]]
    for k in range(1, rows):
        previous = c[-1]
        assert previous[1] + (-1) ** k * g[k] * v[0] == 0  # the 1 / eta terms cancel
        c.append([n * previous[n] + (-1) ** k * g[k] * v[n - 1] for n in range(2, len(previous))])
    return [row[:terms] for row in c]


def test_temme_coefficients_are_the_exact_recurrence():
    rows, terms = len(_TEMME_COEFFICIENTS), len(_TEMME_COEFFICIENTS[0])
    exact = _temme_coefficients(rows, terms)
    assert exact[0][:4] == [Fraction(-1, 3), Fraction(1, 12), Fraction(-2, 135), Fraction(1, 864)]  # DLMF 8.12.11
    assert [list(row) for row in _TEMME_COEFFICIENTS] == [[float(d) for d in row] for row in exact]


def _series_or_fraction(a: float, x: float) -> float:
    """P(a, x) as gamma_p worked it out before Temme's expansion: the series to x = a + 11, the fraction beyond."""
    if x < a + 11:
        return math.exp(_log_prefactor(a, x)) * _series_terms(a, x)[0]
    return 1 - math.exp(_log_prefactor(a, x)) * _fraction_terms(a, x)[0]


@pytest.mark.parametrize("a", (_TEMME_SHAPE, 129.3, 257.0, 500.0, 1e3, 2505.0, 1e4))
def test_temme_expansion_matches_scipy_and_the_series(a: float):
    """A large shape near its mean (gamma_p's Temme expansion): within 1e-14 of SciPy (3e-14 at a = 1e4) and of the
    series it replaces to 1e-14 up to a = 1,000 (~x a's relative rounding's effect, P's condition number ~sqrt(a)
    x its density: 2e-14 at 2,505 and 8e-14 at 1e4, where the series and SciPy differ as much); just outside the
    span, the series or the fraction as before."""
    xs = a * np.linspace(1 - _TEMME_SPAN, 1 + _TEMME_SPAN, 201)
    ours = np.array([gamma_p(a, float(x)) for x in xs])
    np.testing.assert_allclose(ours, gammainc(a, xs), rtol=3e-14 if a > 5e3 else 1e-14, atol=0)
    before = np.array([_series_or_fraction(a, float(x)) for x in xs])
    np.testing.assert_allclose(ours, before, rtol=1e-14 if a <= 1e3 else 1e-13, atol=0)
    for x in (a * (1 - _TEMME_SPAN) * (1 - 1e-12), a * (1 + _TEMME_SPAN) * (1 + 1e-12)):
        assert gamma_p(a, x) == _series_or_fraction(a, x)


def test_temme_expansion_at_the_erlang_c_of_a_large_engine():
    """The Erlang C wait of moe-deepseek's 2,504 slots asks P(2,505, offered) at offered ~0.96-1.0 of the slots: within
    1e-14 of the series there."""
    for offered in (2414.5904094646426, 2427.858598170239, 2497.949892057693, 2504.0):
        assert gamma_p(2505.0, offered) == pytest.approx(_series_or_fraction(2505.0, offered), rel=1e-14, abs=0)


@pytest.mark.parametrize("a", (1e-3, 0.5, 1.0, 7.3, 1e4, math.inf))
def test_edges(a: float):
    assert gamma_p(a, 0.0) == 0.0 and gamma_p(a, -1.0) == 0.0 and gamma_p(a, math.inf) == 1.0
    assert math.isnan(gamma_p(a, math.nan))
    edges = gamma_p_array(a, np.array([-1.0, 0.0, math.inf, math.nan]))
    assert edges[:3].tolist() == [0.0, 0.0, 1.0] and math.isnan(edges[3])
    assert gamma_p_array(a, np.array([])).shape == (0,)
    assert gamma_p_inverse(a, 0.0) == 0.0 and gamma_p_inverse(a, 1.0) == math.inf


@pytest.mark.parametrize("a", (0.05, 0.84, 2.9, 9.9, 10.0, 37.5))
def test_row_sums_are_the_rows_of_the_array_form(a: float):
    """gamma_p_row_sums (the TTFT model's CDF at many t: each row the waits of the prompts done by one t) sums each row
    of gamma_p_array, 0 where x is 0, to 1e-13: its one series block (BLAS' sums) and its all-zero shortcut."""
    waits = np.linspace(-a - 5, a + 5, 48)
    x = np.maximum(waits[np.newaxis, :] + np.array([[-3 * a - 20], [0.0], [2.0], [a]]), 0.0)  # row 0 all zero
    expected = gamma_p_array(a, x).sum(axis=1)
    np.testing.assert_allclose(gamma_p_row_sums(a, x), expected, rtol=1e-13, atol=0)
    assert gamma_p_row_sums(a, np.zeros((3, 48))).tolist() == [0.0, 0.0, 0.0]


def test_exponential_closed_form():
    """a = 1: P = 1 - e^-x exactly, and its inverse -ln(1 - p): a check that needs no reference library."""
    xs = np.array([1e-8, 0.1, 1.0, 2.0, 5.0, 30.0, 60.0])
    np.testing.assert_allclose(gamma_p_array(1.0, xs), -np.expm1(-xs), rtol=1e-13)
    for p in (1e-6, 0.3, 0.95):
        assert gamma_p_inverse(1.0, p) == pytest.approx(-math.log1p(-p), rel=1e-13)


def test_root_in_bracket_finds_roots_and_jumps():
    assert root_in_bracket(lambda x: x * x - 2, 0, 2, 1e-12) == pytest.approx(math.sqrt(2), abs=1e-11)
    assert root_in_bracket(lambda x: math.log(x) - 1, 0.1, 100, 1e-12) == pytest.approx(math.e, abs=1e-11)
    jump = root_in_bracket(lambda x: -1.0 if x < 0.3 else 1.0, 0, 1, 1e-9)  # a step: the jump is the answer
    assert jump == pytest.approx(0.3, abs=1e-8)
    with pytest.raises(ValueError):
        root_in_bracket(lambda x: x + 1, 0, 1, 1e-9)


def test_bracket_root_keeps_each_end_on_its_side_of_a_jump():
    """A jump to infinity (a latency that stops being bounded): the low end still meets, the high end does not."""

    def f(x: float) -> float:
        return x - 0.7 if x < 0.3 else math.inf

    low, high = bracket_root(f, 0.0, 1.0, 1e-9)
    assert f(low) < 0 < f(high) and high - low <= 1e-9
    assert low == pytest.approx(0.3, abs=1e-8)
    assert bracket_root(lambda x: x - 0.5, 0.0, 0.5, 1e-9) == (0.5, 0.5)  # an end that is a root is both ends


def test_a_smooth_root_stops_once_the_chord_puts_it_within_xtol():
    """The running-batch solve's f (rate x time held(N) - N): nearly linear, so its chord steps land on the root from
    one side; `smooth` stops there instead of spending steps to close the bracket, at the same root."""
    calls: list[float] = []

    def excess(n: float) -> float:
        calls.append(n)
        return 30.0 * (0.8 + 0.004 * n + 1e-5 * n * n) - n

    bracketed = root_in_bracket(excess, 1.0, 160.0, 1e-9 * 160)
    closing = len(calls)
    calls.clear()
    smooth = root_in_bracket(excess, 1.0, 160.0, 1e-9 * 160, smooth=True)
    assert len(calls) < closing  # the same root for fewer evaluations
    assert smooth == pytest.approx(bracketed, abs=2e-9 * 160) and abs(excess(smooth)) < 1e-6
    with pytest.raises(ValueError):
        root_in_bracket(lambda x: x + 1, 0, 1, 1e-9, smooth=True)


def test_lowest_crossing_follows_the_function_that_crosses_first():
    """Two p95s over their targets: a near-flat one crossing at 0.6 and a steep one (a queue near saturation, a pole
    at 1) crossing at 0.9, and one that jumps to infinity at 0.95. The answer is the first crossing, each end on its
    side, whichever of them is the worse at the bracket's high end."""

    def fs(x: float, needed: tuple[bool, ...] = (True, True, True)) -> tuple[float, ...]:
        values = (0.05 * (x - 0.6), 0.1 / (1 - x) - 1 if x < 1 else math.inf, -1.0 if x < 0.95 else math.inf)
        return tuple(v if want else -math.inf for v, want in zip(values[-len(needed) :], needed, strict=True))

    found = lowest_crossing(fs, (0.0, fs(0.0)), (0.99, fs(0.99)), 1e-9)
    assert found <= 0.6 < found + 1e-9
    steep = lowest_crossing(fs, (0.0, fs(0.0, (True, True))), (0.99, fs(0.99, (True, True))), 1e-9)
    assert steep <= 0.9 < steep + 1e-9
    jump = lowest_crossing(fs, (0.0, fs(0.0, (True,))), (0.99, fs(0.99, (True,))), 1e-9)
    assert jump <= 0.95 < jump + 1e-9 and fs(jump)[2] < 0


def test_a_root_a_chord_approaches_from_one_side_is_closed_by_a_half_tolerance_step():
    """A replica's saturation measure (about linear, slightly convex): the chord steps approach its root from below
    and keep landing there; once one lands within xtol / 2 of the bracket's low end, the next steps xtol / 2 past it
    and closes the bracket (it took two more steps, a bisection among them)."""
    calls: list[float] = []

    def measure(x: float) -> float:
        calls.append(x)
        return (x - 0.55) * (1.8 + 0.5 * (x - 0.55))

    low, high = bracket_root(measure, 0.25, 1.0, 1e-2)
    assert low <= 0.55 < high and high - low <= 1e-2
    assert len(calls) <= 6  # 8 before


def test_lowest_crossing_closes_a_smooth_crossing_and_bisects_a_jump():
    """A smooth crossing (a queue's p95 near its pole) is closed once a step that meets proves the root within xtol / 2
    above it, in a few steps; a flat function that jumps over 0 is bisected after two stalled chord steps, not crept up
    on from an end (every step of the bisection, bar the stalled ones, halves the bracket)."""
    calls: list[float] = []

    def pole(x: float, needed: tuple[bool, ...] = (True,)) -> tuple[float, ...]:
        calls.append(x)
        return (0.1 / (1 - x) - 0.9,)  # crosses at x = 8 / 9

    found = lowest_crossing(pole, (0.0, pole(0.0)), (0.99, pole(0.99)), 1e-6)
    assert found <= 8 / 9 < found + 1e-6 and pole(found)[0] <= 0
    assert len(calls) <= 9  # 10 before
    calls.clear()

    def jump(x: float, needed: tuple[bool, ...] = (True,)) -> tuple[float, ...]:
        calls.append(x)
        return (-0.7 + 0.01 * x,) if x < 0.3 else (0.8 + 0.01 * x,)

    found = lowest_crossing(jump, (0.0, jump(0.0)), (1.0, jump(1.0)), 1e-6)
    assert found <= 0.3 < found + 1e-6
    assert len(calls) - 2 <= math.ceil(math.log2(1 / 1e-6)) + 3  # bisection's 20 steps and the stalled chords


@pytest.mark.parametrize("capacity", [0.37, 10.0, 29.1, 5e4])
def test_a_capacity_found_on_the_margin_alone_is_within_its_tolerance_of_the_answer(capacity: float):
    """A replica steady at any rate is searched on its SLO margin alone: the rate found meets and lies within
    _CAPACITY_TOLERANCE of the answer (of the answer, not of the bracket's end past it)."""
    found = _margin_search(lambda rate: math.log(rate / capacity) if rate > 0 else -math.inf, _CAPACITY_PROBE)
    assert capacity * (1 - _CAPACITY_TOLERANCE) <= found <= capacity


def test_lowest_crossing_leaves_a_flat_stretch_by_the_chord_to_the_high_end():
    """A token gap's p95 / target - 1: flat (the decode step) up to its knee, then a concave climb to a plateau (rag's
    shape). A step that meets on the flat stretch says nothing of the climb's bend: the next step is the chord to the
    high end's own value, not a pole fit or an Anderson-Björck weight through the flat points, which put it next to the
    high end (9 steps before, 7 now); the answer meets and lies within the tolerance of the crossing."""
    calls: list[float] = []

    def knee(x: float, needed: tuple[bool, ...] = (True,)) -> tuple[float, ...]:
        calls.append(x)
        return (-0.78 + 0.01 * x + (2.6 * math.tanh(4 * (x - 1.4)) if x > 1.4 else 0.0),)

    crossing = root_in_bracket(lambda x: knee(x)[0], 1.4, 1.99, 1e-12)
    calls.clear()
    found = lowest_crossing(knee, (0.8, knee(0.8)), (1.99, knee(1.99)), 0.0, 1e-4)
    assert len(calls) - 2 <= 7
    assert found <= crossing <= found * (1 + 1e-4) and knee(found)[0] <= 0


def test_lowest_crossing_closes_a_jump_at_a_knee_on_the_knee_coordinate():
    """A token gap's p95 / target - 1 that jumps over 0 where the share of gaps on mixed steps passes 5% (qps10-tp4's
    shape with a tight ITL target: flat at the decode step, then the mixed step's floor): chords and bisections of the
    p95 close in on the jump in 16 steps; on the share's smooth coordinate ln(share / 5%) (`knees`) in 6. Both
    answers meet and lie within the tolerance under the jump."""

    def share(x: float) -> float:
        return 0.0394 * (x / 4) ** 1.6

    def gap(x: float, needed: tuple[bool, ...] = (True,)) -> tuple[float, ...]:
        calls.append(x)
        return (0.143 + 0.001 * x if share(x) > 0.05 else -0.71 + 0.002 * x,)

    jump = 4 * (0.05 / 0.0394) ** (1 / 1.6)
    for knees, most in ((None, 16), (lambda x: (math.log(share(x) / 0.05),), 6)):
        calls: list[float] = []
        found = lowest_crossing(gap, (4.0, gap(4.0)), (9.58, gap(9.58)), 0.0, 1e-4, knees=knees)
        assert len(calls) - 2 <= most
        assert gap(found)[0] <= 0 and found <= jump <= found * (1 + 1e-4)


def test_lowest_crossing_climbs_past_a_knee_from_the_knee_itself():
    """rag's shape (flat to its knee at 1.4, then a concave climb) with the share's coordinate (`knees`, rising as a
    power of x): the step goes to the knee, not the flat chord's point under it, and the pole fits past it start from
    the knee at the flat value: 6 steps (7 without the coordinate); the answer meets and lies within the tolerance."""

    def gap(x: float, needed: tuple[bool, ...] = (True,)) -> tuple[float, ...]:
        calls.append(x)
        return (-0.78 + 0.01 * x + (2.6 * math.tanh(4 * (x - 1.4)) if x > 1.4 else 0.0),)

    calls: list[float] = []
    crossing = root_in_bracket(lambda x: gap(x)[0], 1.4, 1.99, 1e-12)
    calls.clear()
    found = lowest_crossing(gap, (0.8, gap(0.8)), (1.99, gap(1.99)), 0.0, 1e-4, knees=lambda x: (1.6 * math.log(x / 1.4),))
    assert len(calls) - 2 <= 6
    assert found <= crossing <= found * (1 + 1e-4) and gap(found)[0] <= 0


def test_the_array_inverse_and_sums_reduce_as_numpys_methods(monkeypatch: pytest.MonkeyPatch):
    """gamma_p_inverse_array, gamma_p_array and gamma_p_row_sums take their max, min, all and any with the ufuncs'
    reductions (no Python-level wrappers) and skip np.where where no element is halved: the same arrays, to the bit, as
    with numpy's methods and np.where on every step, over every shape and quantile here (tiny shapes halve)."""
    from planner import numerics

    rng = np.random.default_rng(3)

    def inverted(a: float, qs: np.ndarray) -> np.ndarray:  # the quantiles whose x does not underflow
        return qs[gammaincinv(a, qs) > 1e-300]

    cases = [(a, inverted(a, np.array(QUANTILES))) for a in SHAPES] + [(a, inverted(a, (np.arange(48) + 0.5) / 48 * 0.99)) for a in SHAPES]
    rows = [rng.gamma(1.5, 1.0, (3, 48)) * (rng.random((3, 48)) > 0.3) for _ in range(3)]

    def computed() -> list[np.ndarray]:
        return (
            [gamma_p_inverse_array(a, p) for a, p in cases]
            + [gamma_p_array(a, p) for a, p in cases]
            + [gamma_p_row_sums(1.3, x) for x in rows]
        )

    fast = computed()
    monkeypatch.setattr(numerics, "_largest_of", lambda x, axis=None: np.max(x))
    monkeypatch.setattr(numerics, "_smallest_of", lambda x, axis=None: np.min(x))
    monkeypatch.setattr(numerics, "_all_of", lambda x, axis=None: np.all(x))
    monkeypatch.setattr(numerics, "_any_of", lambda x, axis=None: True)  # np.where on every step
    for got, plain in zip(fast, computed(), strict=True):
        assert np.array_equal(got, plain, equal_nan=True)


@pytest.mark.parametrize("a", SHAPES)
def test_the_series_tables_are_the_cumulative_sums(a: float):
    """The series' exponent tables (cumulative log sums by np.add.accumulate, ones by fill) are np.cumsum's and
    np.ones' arrays, to the bit."""
    from planner.numerics import _ones, _prefactor_series_exponents, _series_exponents

    for terms in (1, 17, 128, 300):
        series = _series_exponents.__wrapped__(a, terms)
        assert np.array_equal(series[1], -np.cumsum(np.log(a + series[0])))
        prefactor = _prefactor_series_exponents.__wrapped__(a, terms)
        assert np.array_equal(prefactor[2, 1:], -(np.cumsum(np.log(prefactor[0, 1:])) + math.lgamma(a)))
        assert np.array_equal(_ones.__wrapped__(terms), np.ones(terms))
