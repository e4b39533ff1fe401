"""The first point of an integer grid at which a monotone verdict holds, found with as few re-plans as the verdict's
margin allows.

The hit-rate floor (planner.failures) and the fewest nodes that meet the SLO (planner.resize) ask the same question:
on a grid of 0.1% hit-rate steps or of node counts, where does `plan --set` start meeting its SLO? Each probe is a
re-plan, so the probes count. A plain bisection takes log2(width) of them. The re-plan that gives the verdict also
gives its margin (how far the p95s are from their targets), which changes smoothly along the grid: a secant through
the bracket's two margins predicts where the verdict flips, and probing that point and its neighbour on the other
side usually closes the bracket in two or three probes. The answer is still the grid point where the verdict itself
flips (the margin only chooses where to look), so it is the one a bisection finds: the verdict flips once along
the grid.
"""

from __future__ import annotations

import math
from collections.abc import Callable

__all__ = ["Probe", "first_meeting", "slo_margin_of"]

Probe = Callable[[int], tuple[bool, float]]  # grid point -> (the verdict holds there, its margin: <= 0 holds, inf: none)


def first_meeting(probe: Probe, low: int, high: int, margin_low: float, margin_high: float) -> int:
    """The smallest grid point in (low, high] at which `probe` holds, given it fails at `low`, holds at `high` and
    flips once in between (margins: the probe's at both ends; an infinite one gives no hint).

    Regula falsi on the grid with the Illinois correction (an end kept twice weighs half), and a bisection whenever
    three probes have not halved the bracket, the margins give no hint or the last probe's did not move (a margin set
    by something the grid does not change), as numerics.bracket_root steps."""
    kept = 0  # the end the last probe kept: -1 low, +1 high
    flat = False
    checkpoint, steps = high - low, 0
    while high - low > 1:
        steps += 1
        slow = steps == 3 and high - low > checkpoint / 2
        if steps == 3:
            checkpoint, steps = high - low, 0
        guess = None if slow or flat else _secant_point(low, high, margin_low, margin_high)
        at = (low + high) // 2 if guess is None else guess
        holds, margin = probe(at)
        flat = margin == (margin_high if holds else margin_low)  # the margin did not move: it says nothing here
        if holds:
            high, margin_high = at, margin
            margin_low = margin_low / 2 if kept == -1 else margin_low
            kept = -1
        else:
            low, margin_low = at, margin
            margin_high = margin_high / 2 if kept == +1 else margin_high
            kept = +1
    return high


def _secant_point(low: int, high: int, margin_low: float, margin_high: float) -> int | None:
    """The grid point strictly inside (low, high) at or just past where the chord through the margins crosses zero
    (the first point predicted to hold); None when the margins give no hint (infinite, or not on either side of 0)."""
    if not (math.isfinite(margin_low) and math.isfinite(margin_high)) or not margin_high <= 0 < margin_low:
        return None
    crossing = low + (high - low) * margin_low / (margin_low - margin_high)
    return min(max(math.ceil(crossing), low + 1), high - 1)


def slo_margin_of(ttft_p95_ms: float, ttft_target_ms: float, judged_itl_p95_ms: float, itl_target_ms: float) -> float:
    """log of the worse of p95 TTFT / target and the judged p95 gap / target: <= 0 meets both (inf: no figure)."""
    worst = max(ttft_p95_ms / ttft_target_ms, judged_itl_p95_ms / itl_target_ms)
    return math.log(worst) if math.isfinite(worst) and worst > 0 else math.inf
