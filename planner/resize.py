"""Fleet sizes found by re-planning: the fewest nodes at which `plan --set hardware.nodes=N` (with any other overrides)
meets its SLO, so a cost lever or a verdict's fix names a fleet that works rather than one a rule of thumb suggests.

More nodes never hurt a design (the general pool takes them; spare and long-context pools keep their size), so a
bisection over the node count finds the fewest; the answer is re-planned, so it holds by construction.
"""

from __future__ import annotations

from typing import Any

from planner.brief import MAX_NODES, Brief
from planner.core import verdict_only
from planner.errors import BriefError
from planner.failures import judged
from planner.mechanisms import resolve

__all__ = ["fewest_nodes_meeting", "meets"]


def meets(brief: Brief) -> bool:
    """Whether the brief's design is feasible and meets its SLO (its deadline for a batch job), as `plan` judges it."""
    try:
        verdict, _ = judged(verdict_only(resolve(brief)))  # as plan() does: image tokens, the KV tiers' hit rate
    except BriefError:  # cannot be computed at all: weights do not fit, fewer nodes than a replica spans
        return False
    return verdict.feasible and verdict.meets_slo


def fewest_nodes_meeting(brief: Brief, changes: dict[str, Any] | None = None, limit: int = MAX_NODES) -> int | None:
    """The fewest nodes (at most `limit`) at which the brief with `changes` meets its SLO with its spare and long-context
    pools whole, or None when `limit` nodes do not. Doubles from the brief's own fleet, then bisects: about
    2 log2(nodes) re-plans of the verdict alone."""
    base = brief.with_changes(changes) if changes else brief

    def ok(nodes: int) -> bool:
        return meets(base.with_changes({"hardware.nodes": nodes}))

    low = base.deployment.spare_nodes + base.deployment.long_context_nodes  # fewer would drop those pools
    high = min(max(brief.hardware.nodes, low + 1), limit)
    while not ok(high):
        if high >= limit:
            return None
        high = min(high * 2, limit)
    while high - low > 1:
        mid = (low + high) // 2
        low, high = (low, mid) if ok(mid) else (mid, high)
    return high
