"""Searches whose answer is fixed by a monotone test (a verdict, a busy share under 1), made with as few evaluations of
the test as its margin allows.

The hit-rate floor (planner.failures) and the fewest nodes that meet the SLO (planner.resize) ask where, on a grid of
0.1% hit-rate steps or of node counts, `plan --set` starts meeting its SLO; the headroom (planner.headroom) asks at
which traffic multiple a limit is reached, as a fixed number of halvings. Each test is a re-plan (or a sizing pass),
so the tests count. The re-plan that gives the verdict also gives its margin (how far the p95s are from their targets,
a busy share from 1), which changes smoothly: a secant through two margins predicts where the test flips, and a test
there usually settles the question in a few evaluations instead of log2(width). The answer is still where the test
itself flips (the margin only chooses where to look): the grid point a bisection finds, or the very bracket a
bisection of that many halvings ends with, since every midpoint it would test is decided by a test already made on
its side.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Hashable

from planner.brief import Brief
from planner.memo import BoundedMemo

__all__ = [
    "LastAnswers",
    "Probe",
    "Test",
    "around_guess",
    "bisection_bracket",
    "confirmed",
    "first_meeting",
    "question_key",
    "slo_margin_of",
]

Probe = Callable[[int], tuple[bool, float]]  # grid point -> (the verdict holds there, its margin: <= 0 holds, inf: none)


def first_meeting(probe: Probe, low: int, high: int, margin_low: float, margin_high: float, guess: int | None = None) -> int:
    """The smallest grid point in (low, high] at which `probe` holds, given it fails at `low`, holds at `high` and
    flips once in between (margins: the probe's at both ends; an infinite one gives no hint). `guess`: the answer
    last time the question was asked (LastAnswers) or a prediction, probed first, then up to _REACH points from it
    towards the flip.

    Inverse quadratic interpolation through the bracket's ends and the end last replaced when it falls inside, else
    regula falsi with the Illinois correction (an end kept twice weighs half); a bisection whenever three probes have
    not halved the bracket, the margins give no hint or the last probe's did not move (a margin set by something the
    grid does not change), as numerics.bracket_root steps."""
    kept = 0  # the end the last probe kept: -1 low, +1 high
    flat = False
    weight_low, weight_high = margin_low, margin_high  # the margins regula falsi uses (Illinois halves a kept end's)
    dropped: tuple[int, float] | None = None  # the bracket's end the last probe replaced, with its margin
    checkpoint, steps = high - low, 0
    pending = [] if guess is None else [guess]  # probes asked for before any prediction: the guess, then towards the flip
    start, direction = (guess or 0), 0
    while high - low > 1:
        if pending:
            at = pending.pop()
            if not low < at < high:
                continue
            holds, margin = probe(at)
            if at == start:
                direction = -1 if holds else +1  # towards the flip
            if holds == (direction == -1) and abs(at - start) <= _REACH:  # not past it yet: one step further
                pending.append(at + direction)
        else:
            steps += 1
            slow = steps == 3 and high - low > checkpoint / 2
            if steps == 3:
                checkpoint, steps = high - low, 0
            crossing = None
            if not (slow or flat):
                curved = _quadratic_crossing(low, high, margin_low, margin_high, dropped)
                crossing = curved if curved is not None else _secant_crossing(low, high, weight_low, weight_high)
            at = (low + high) // 2 if crossing is None else _probe_beside(low, high, crossing)
            holds, margin = probe(at)
        flat = margin == (margin_high if holds else margin_low)  # the margin did not move: it says nothing here
        if holds:
            dropped = (high, margin_high)
            high, margin_high, weight_high = at, margin, margin
            weight_low = weight_low / 2 if kept == -1 else weight_low
            kept = -1
        else:
            dropped = (low, margin_low)
            low, margin_low, weight_low = at, margin, margin
            weight_high = weight_high / 2 if kept == +1 else weight_high
            kept = +1
    return high


def confirmed(probe: Probe, guess: float | None, low: int, high: int) -> int | None:
    """The answer in (low, high] when it lies within _REACH grid points of `guess` (the last answer of the same
    question): a point that holds with the one below it failing (or being `low`, the bracket's excluded end), found
    by walking from the guess the way its probe points; None otherwise. With one flip, any search of (low, high] ends
    there, so a slider move that shifts the answer a step costs two or three probes instead of a search."""
    if guess is None or not low < int(guess) <= high:
        return None
    at = int(guess)
    if probe(at)[0]:  # the flip is at or below it
        for _ in range(_REACH):
            if at - 1 == low or not probe(at - 1)[0]:
                return at
            at -= 1
        return None
    for _ in range(_REACH):  # the flip is above it: the first point that holds
        at += 1
        if at > high:
            return None
        if probe(at)[0]:
            return at
    return None


_REACH = 2  # grid points a confirmation walks from the last answer before the search takes over


def _probe_beside(low: int, high: int, crossing: float) -> int:
    """The grid point to probe for a predicted crossing: the first one predicted to hold, or the one before it (predicted
    to fail) when the bracket's failing end is the farther, so a good prediction moves the far end next to the flip."""
    first = math.ceil(crossing)
    at = first - 1 if crossing - low > high - crossing else first
    return min(max(at, low + 1), high - 1)


def _quadratic_crossing(low: int, high: int, margin_low: float, margin_high: float, third: tuple[int, float] | None) -> float | None:
    """Where the inverse quadratic through the bracket's ends and a third point crosses zero, when strictly inside
    (low, high); None without three distinct finite margins, the ends' on either side of 0."""
    if third is None or not (math.isfinite(margin_low) and math.isfinite(margin_high) and math.isfinite(third[1])):
        return None
    if not margin_high <= 0 < margin_low:
        return None
    (x0, m0), (x1, m1), (x2, m2) = (low, margin_low), (high, margin_high), third
    if len({m0, m1, m2}) < 3:
        return None
    crossing = x0 * m1 * m2 / ((m0 - m1) * (m0 - m2)) + x1 * m0 * m2 / ((m1 - m0) * (m1 - m2)) + x2 * m0 * m1 / ((m2 - m0) * (m2 - m1))
    return crossing if low < crossing < high else None


def _secant_crossing(low: int, high: int, margin_low: float, margin_high: float) -> float | None:
    """Where the chord through the margins crosses zero; None when they give no hint (infinite, or not on either side
    of 0)."""
    if not (math.isfinite(margin_low) and math.isfinite(margin_high)) or not margin_high <= 0 < margin_low:
        return None
    return low + (high - low) * margin_low / (margin_low - margin_high)


def slo_margin_of(ttft_p95_ms: float, ttft_target_ms: float, judged_itl_p95_ms: float, itl_target_ms: float) -> float:
    """log of the worse of p95 TTFT / target and the judged p95 gap / target: <= 0 meets both (inf: no figure)."""
    worst = max(ttft_p95_ms / ttft_target_ms, judged_itl_p95_ms / itl_target_ms)
    return math.log(worst) if math.isfinite(worst) and worst > 0 else math.inf


Test = Callable[[float], tuple[bool, float]]  # x -> (x is below the crossing, a margin rising through 0 there: a hint)


def bisection_bracket(
    test: Test,
    low: float,
    high: float,
    halvings: int,
    below: tuple[float, float] | None = None,
    above: tuple[float, float] | None = None,
    guess: float | None = None,
) -> tuple[float, float]:
    """The bracket `halvings` halvings of [low, high] end with (each midpoint kept as the low end when `test` puts it
    below the crossing), testing only midpoints no test already made decides. `below` and `above`: a point already
    tested on each side with its margin (default: low and high, margins unknown). Where a midpoint is undecided, a
    regula-falsi point (Illinois-weighted) is tested first: near the crossing it decides it and most of the midpoints
    after it; after _CHORD_MISSES chord points that decided nothing (a margin that jumps), the midpoints alone.
    `guess`: where the crossing was last time (LastAnswers): the two ends of the last bracket around it are tested
    first, so a crossing still inside it leaves no midpoint undecided. A chord that closes in on the crossing from one
    side (a step under _CLOSE_IN final widths), or a test whose margin is 0 (the crossing itself), is followed by a test
    at the other end of the last bracket there, not by each midpoint on the way."""
    a, margin_a = below if below is not None else (low, math.nan)
    b, margin_b = above if above is not None else (high, math.nan)
    start, width = (low, high), (high - low) / 2**halvings
    if guess is not None and a < guess < b:  # the ends of the last bracket around it: with the crossing inside, done
        (a, margin_a), (b, margin_b) = around_guess(test, low, high, halvings, guess, (a, margin_a), (b, margin_b))
    weight_a, weight_b, kept = margin_a, margin_b, 0  # the margins regula falsi uses; kept: the side updated last
    misses = 0  # chord points that left their midpoint undecided: a margin that jumps there says little
    close = width * _CLOSE_IN  # a chord step shorter than this has about converged (the secant's error shrinks faster)
    converged = 0  # the side a chord point last moved by less than `close`: -1 a, +1 b (0: neither)
    extrapolated = False  # a crossing predicted from two chord points on one side was tested around (once a search)
    for _ in range(halvings):
        mid = (low + high) / 2
        tried = False
        while a < mid < b:
            chord = None if tried or misses >= _CHORD_MISSES else _chord_point(a, b, weight_a, weight_b)
            tried = True
            x = mid if chord is None else chord
            if chord is None and converged:  # the chord has closed in on the crossing from one side: test the other
                x = _beyond(start, halvings, a, b, converged, mid)  # end of its last bracket, not each midpoint on the way
                converged = 0
            ends = (a, margin_a), (b, margin_b)  # before the test: the end it replaces is the last point on its side
            is_below, margin = test(x)
            if is_below:
                converged = -1 if chord is not None and x - a < close else 0
                a, margin_a = x, margin
                weight_a, weight_b = margin, weight_b / 2 if kept == -1 else weight_b
                kept = -1
            else:
                converged = +1 if (chord is not None and b - x < close) or margin == 0 else 0  # 0: the crossing is at x
                b, margin_b = x, margin
                weight_a, weight_b = weight_a / 2 if kept == +1 else weight_a, margin
                kept = +1
            if chord is not None and not extrapolated:
                # a chord point and the last point on its side: the line through them crosses 0 near the crossing (off
                # by about the product of the two steps over the scale the margin bends on, here the search's whole
                # range), and where that is under a last bracket, the two ends of that bracket usually decide the rest
                before = ends[0] if is_below else ends[1]
                predicted = _secant_root(before, (x, margin))
                near = predicted is not None and abs(predicted - x) * abs(x - before[0]) < width * (start[1] - start[0])
                if predicted is not None and near and a < predicted < b:
                    extrapolated, converged = True, 0
                    (a, margin_a), (b, margin_b) = around_guess(test, *start, halvings, predicted, (a, margin_a), (b, margin_b))
                    weight_a, weight_b, kept = margin_a, margin_b, 0
            misses += chord is not None and a < mid < b  # it did not decide the midpoint: that is tested next
        low, high = (mid, high) if mid <= a else (low, mid)
    return low, high


def _secant_root(first: tuple[float, float], second: tuple[float, float]) -> float | None:
    """Where the line through two (x, margin) points crosses 0 (None: margins not finite, or equal)."""
    (x0, m0), (x1, m1) = first, second
    if not (math.isfinite(m0) and math.isfinite(m1)) or m0 == m1:
        return None
    return x1 - m1 * (x1 - x0) / (m1 - m0)


def around_guess(
    test: Test,
    low: float,
    high: float,
    halvings: int,
    guess: float,
    below: tuple[float, float] | None = None,
    above: tuple[float, float] | None = None,
    high_first: bool = False,
) -> tuple[tuple[float, float], tuple[float, float]]:
    """(the highest point tested below the crossing, the lowest above it; each with its margin), after testing the two
    ends of the bracket `halvings` halvings of [low, high] end with around `guess` and, when both fall on one side of
    the crossing, the far end of the bracket beside them on that side: a crossing in either leaves bisection_bracket
    no midpoint undecided. `below`, `above`: as bisection_bracket takes them (only points between them are tested).
    `high_first`: the bracket's upper end is tested first (for a test whose answer above tells it something below)."""
    start = (low, high)
    (a, margin_a), (b, margin_b) = below or (low, math.nan), above or (high, math.nan)
    if not a < guess < b:
        return (a, margin_a), (b, margin_b)
    width = (high - low) / 2**halvings

    def tested(x: float) -> bool:
        nonlocal a, margin_a, b, margin_b
        is_below, margin = test(x)
        if is_below:
            a, margin_a = x, margin
        else:
            b, margin_b = x, margin
        return is_below

    lo, hi = _final_bracket(start, halvings, guess, True)

    def crossing_under() -> bool:  # lo is above the crossing: the bracket under it is tested too
        if not (a < lo < b and not tested(lo)):
            return False
        under = _final_bracket(start, halvings, lo - width / 2, True)[0]
        if a < under < b:
            tested(under)
        return True

    def crossing_over() -> bool:  # hi is below the crossing: the bracket over it is tested too
        if not (a < hi < b and tested(hi)):
            return False
        over = _final_bracket(start, halvings, hi + width / 2, True)[1]
        if a < over < b:
            tested(over)
        return True

    if high_first:
        crossing_over() or crossing_under()
    else:
        crossing_under() or crossing_over()
    return (a, margin_a), (b, margin_b)


def _beyond(start: tuple[float, float], halvings: int, a: float, b: float, side: int, mid: float) -> float:
    """The end of the last bracket around the side a chord closed in on (`side` -1: a, that bracket's upper end; +1: b,
    its lower end): a test there decides every midpoint between. `mid` when that end is not inside (a, b)."""
    low, high = _final_bracket(start, halvings, a, True) if side < 0 else _final_bracket(start, halvings, b, False)
    end = high if side < 0 else low
    return end if a < end < b else mid


def _final_bracket(start: tuple[float, float], halvings: int, x: float, x_below: bool) -> tuple[float, float]:
    """The bracket the halvings of `start` end with when `x` tests below the crossing (`x_below`) or above it, each
    midpoint worked out as bisection_bracket works it out, so tests at its two ends decide every midpoint."""
    low, high = start
    for _ in range(halvings):
        mid = (low + high) / 2
        low, high = (mid, high) if (mid <= x if x_below else mid < x) else (low, mid)
    return low, high


_CHORD_MISSES = 8
_CLOSE_IN = 1024  # final bracket widths: a chord step within this many has closed in on the crossing


def _chord_point(a: float, b: float, margin_a: float, margin_b: float) -> float | None:
    """Where the chord through the two margins crosses 0, strictly inside (a, b); None when they give no hint."""
    if not (math.isfinite(margin_a) and math.isfinite(margin_b)) or not margin_a < 0 <= margin_b:
        return None
    x = (a * margin_b - b * margin_a) / (margin_b - margin_a)
    return x if a < x < b else None


# The last answer of each search by its question (question_key): where the next search of the same question probes
# first. A slider move asks the same questions of a brief a little changed, whose answers move little; the answer is
# still the one the search verifies, the hint only where it looks first. Emptied with the planner's caches.
LastAnswers: BoundedMemo[Hashable, float] = BoundedMemo(256)


_LOAD_FIELDS = frozenset({"users", "duty_cycle", "request_rate"})  # what the app's load sliders move


def question_key(search: str, brief: Brief, *more: Hashable) -> Hashable:
    """A search's question: its name, the brief without its load (a load slider asks the same question again) and
    whatever else it is asked with."""
    rest = tuple(getattr(brief, name) for name in type(brief).model_fields if name != "workload")
    load_free = tuple((name, value) for name, value in brief.workload if name not in _LOAD_FIELDS)
    return (search, rest, load_free, *more)
