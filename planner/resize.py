"""Fleet sizes found by re-planning: the fewest nodes at which `plan --set hardware.nodes=N` (with any other overrides)
meets its SLO, so a cost lever or a verdict's fix names a fleet that works rather than one a rule of thumb suggests.

More nodes never hurt a design (the general pool takes them; spare and long-context pools keep their size), so a
bisection over the node count finds the fewest; the answer is re-planned, so it holds by construction.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from pydantic import BaseModel, ConfigDict

from planner.brief import MAX_NODES, Brief, ObjectiveKind
from planner.core import (
    LONG_CONTEXT_NODES_LIMIT,
    CapacityReadCore,
    CoreDesign,
    PoolsReadCore,
    capacity_read,
    capacity_read_core,
    long_context_nodes_needed,
    long_pool_carries,
    pools_meet_at,
    pools_read_core,
    read_by_pools,
    replan,
    request_path_ms,
    verdict_core,
    verdict_read,
    worked_out,
)
from planner.disagg import PoolsJudged, short_pools
from planner.errors import BriefError
from planner.failures import (
    Scenario,
    lost_by_a_pool,
    lost_read,
    n_plus_one_check,
    needs_n_plus_one,
    read_check,
    scenario_overrides,
)
from planner.figures import resolve as path_value
from planner.fmt import pct
from planner.grid_search import LastAnswers, Probe, confirmed, first_meeting, question_key
from planner.mechanisms import resolve
from planner.verdict import Problem

__all__ = [
    "FleetFix",
    "fewest_nodes_meeting",
    "fleet_fix",
    "fleet_overrides",
    "goal_words",
    "headroom_fix",
    "keeps_headroom",
    "long_context_nodes_needed",
    "meets",
    "split_meeting",
]


def meets(brief: Brief) -> bool:
    """Whether the brief's design is feasible and meets its SLO (its deadline for a batch job) with the N+1 its
    availability target asks for, as `plan` judges it."""
    return meets_check(brief)[0]


def meets_check(brief: Brief) -> tuple[bool, float]:
    """meets, and the margin of the re-plan that decides it (failures.verdict_margin; the one-node-lost re-plan's when
    the design itself meets): the hint a grid search over fleet sizes steers by."""
    try:
        core = verdict_read(resolve(brief))  # as plan() does: image tokens, the KV tiers' hit rate
        holds, margin = read_check(core)
    except BriefError:  # cannot be computed at all: weights do not fit, fewer nodes than a replica spans
        return False, math.inf
    if not holds:
        return False, margin
    # the core is read only where a spare replaces the lost node of a design that is not disaggregated: a pools read has none
    holds, lost_margin = n_plus_one_check(brief, core if isinstance(core, CoreDesign) else None)
    return holds, max(margin, lost_margin)


def keeps_headroom(brief: Brief) -> tuple[bool, float]:
    """Whether the brief's design keeps the capacity its slo.headroom states above the peak: its pools' SLO capacity
    (headroom.pools_multiple) at least (1 + headroom) x the peak, as plan() judges it; and that multiple. (True, inf)
    when the brief states none or is judged on a deadline."""
    if brief.slo.headroom is None or brief.objective.kind is not ObjectiveKind.latency:
        return True, math.inf
    try:
        resolved = resolve(brief)
        core = worked_out(resolved) or _with_capacity(resolved)
    except BriefError:
        return False, math.nan
    multiple = _pools_multiple(core)
    return _multiple_keeps(brief, multiple), multiple


def _with_capacity(brief: Brief) -> CoreDesign | PoolsReadCore:
    """The brief (resolved) with the SLO capacity its pools' multiple reads: a disaggregated latency design's two pools
    read with their SLO-capacity search (core.pools_read_core: the multiple is the re-plan's to the bit, without the
    aggregated replica's solve and SLO budget), else re-planned with its SLO-capacity search."""
    return pools_read_core(brief, with_capacity=True) if read_by_pools(brief) else replan(brief)


def _pools_multiple(core: CoreDesign | CapacityReadCore | PoolsReadCore) -> float:
    from planner.headroom import pools_multiple  # planner.headroom builds on this module's fleet searches

    return pools_multiple(core)


def _multiple_keeps(brief: Brief, multiple: float) -> bool:
    """The pools' SLO capacity, `multiple` x the peak, keeps the brief's stated slo.headroom above it."""
    return multiple >= 1 + (brief.slo.headroom or 0.0)


def _meets(brief: Brief, headroom: bool, margin: bool = True) -> tuple[bool, float]:
    """meets_check, and with `headroom` the stated slo.headroom kept too (its margin: the log of the capacity the
    headroom asks for over what the pools keep, > 0 where they fall short). Without `margin`, for a caller that reads
    the verdict alone: _meets_verdict's, and a nan margin."""
    if not margin:
        return _meets_verdict(brief, headroom), math.nan
    holds, margin_of = meets_check(brief)
    if not (holds and headroom) or brief.slo.headroom is None:
        return holds, margin_of
    if _pools_keep_headroom(brief):
        return True, margin_of
    kept, multiple = keeps_headroom(brief)
    if kept:
        return True, margin_of
    short = math.log((1 + brief.slo.headroom) / multiple) if multiple > 0 else math.inf
    return False, short if math.isfinite(short) else math.inf


def _meets_verdict(brief: Brief, headroom: bool) -> bool:
    """_meets's verdict without the margins a search steers by, its checks each only where the ones before hold and
    the cheaper first: the design's own verdict (meets_check's), with `headroom` the stated slo.headroom (on the
    verdict's core where its pools tell it, _keeps_headroom), N+1 last (its one-node-lost designs: a disaggregated
    design's two)."""
    try:
        core = verdict_read(resolve(brief))
        holds, _ = read_check(core)
    except BriefError:  # as meets_check: the design cannot be computed at all
        return False
    if not holds or (headroom and not _keeps_headroom(brief)):
        return False
    return n_plus_one_check(brief, core if isinstance(core, CoreDesign) else None)[0]


def _keeps_headroom(brief: Brief) -> bool:
    """keeps_headroom's verdict: told by the pools on the verdict's core where they keep the stated headroom clearly
    (_pools_keep_headroom) or miss it clearly (_pools_miss_headroom), else by its multiple."""
    if _pools_keep_headroom(brief):
        return True
    return not _pools_miss_headroom(brief) and keeps_headroom(brief)[0]


_ABOVE_HEADROOM = 1e-6  # how far past (1 + headroom) x the peak the pools are asked to meet the SLO, or to miss it below


def _pools_keep_headroom(brief: Brief) -> bool:
    """keeps_headroom for a disaggregated brief without a long-context pool, from the verdict's core and one evaluation
    of its pools (core.pools_meet_at: read on the core's SLO capacity where it was searched) instead of a re-plan with the SLO-capacity search: True when the two pools still
    meet the SLO a millionth above (1 + slo.headroom) x the peak. The capacity search's bisection then ends above
    (1 + headroom) too (within 2e-9 of the multiple where they stop), so its multiple keeps the headroom. False
    when it cannot tell (keeps_headroom decides, and gives the multiple a margin reads)."""
    core = _headroom_pools_core(brief)
    return core is not None and pools_meet_at(core, _headroom_rate(brief, core, 1 + _ABOVE_HEADROOM))


def _pools_miss_headroom(brief: Brief) -> bool:
    """keeps_headroom's miss, told as _pools_keep_headroom tells its keep: True when the two pools miss the SLO a
    millionth below (1 + slo.headroom) x the peak. The capacity search's multiple is one at which they meet (more load
    never helps them), so it lies below (1 + headroom) too. False when it cannot tell."""
    core = _headroom_pools_core(brief)
    return core is not None and not pools_meet_at(core, _headroom_rate(brief, core, 1 - _ABOVE_HEADROOM))


def _headroom_pools_core(brief: Brief) -> CoreDesign | PoolsReadCore | None:
    """The verdict's core of a brief whose stated slo.headroom its two pools' SLO capacity alone judges: a disaggregated
    latency design (read by its pools) that states one, without a long-context pool (its limit counts too); else None."""
    dep = brief.deployment
    if brief.slo.headroom is None or brief.objective.kind is not ObjectiveKind.latency or not brief.disaggregation.enabled:
        return None
    if dep.long_context_nodes > 0 and brief.workload.long_context_share > 0:
        return None
    try:
        core = verdict_read(resolve(brief))
    except BriefError:
        return None
    return core if _pools_judge(core) else None


def _headroom_rate(brief: Brief, core: CoreDesign | PoolsReadCore, nudge: float) -> float:
    """The rate the brief's stated slo.headroom asks its pools (`core`, its verdict's) to carry, (1 + headroom) x the
    peak, times `nudge`."""
    return core.demand.request_rate_per_s * (1 + (brief.slo.headroom or 0.0)) * nudge


def _general_nodes(brief: Brief) -> int:
    """The general pool's nodes: the fleet without its spare and long-context pools (a disaggregated design splits them)."""
    dep = brief.deployment
    return brief.hardware.nodes - dep.spare_nodes - dep.long_context_nodes


def _prefill_share(brief: Brief) -> float:
    """The share of the general pool the brief gives its prefill pool (12 of 16 nodes: 0.75)."""
    return brief.disaggregation.prefill_nodes / max(_general_nodes(brief), 1)


@lru_cache(maxsize=256)
def split_meeting(brief: Brief, share: float | None = None, headroom: bool = False, margin: bool = True) -> tuple[int | None, float]:
    """A disaggregated brief on its fleet: the prefill-pool size at which it meets its SLO with the N+1 its availability
    asks for, as `plan --set disaggregation.prefill_nodes=P` judges it, and that re-plan's margin. The split nearest
    `share` of the general pool (the stated brief's, by default) is tried first, then the ones next to it outwards, so
    the answer keeps the briefed balance as closely as the fleet allows. (None, the margin at `share`) when no split
    of the general pool meets. With `headroom`, a split also keeps the stated slo.headroom (keeps_headroom).

    A split whose prefill pool misses on its own rules out every split with fewer prefill nodes, one whose decode pool
    does every split with more (_short_pools); such a split is not re-planned, and the search stops when the two sides
    meet: the splits skipped would all have missed. Nor is a split whose two pools miss together at the load it must
    carry (its re-plan's verdict is theirs), or whose pools miss with a node lost where N+1 is asked (_loses_a_node).
    Without `margin`, for a caller that reads the split alone, each split's verdict is _meets_verdict's and the margin
    nan. Cached (emptied with the planner's caches): fleet_overrides asks it again of the fleet a search found."""
    general = _general_nodes(brief)
    if general < 2:
        return None, _meets(brief, headroom, margin)[1]
    at = min(max(round(general * (_prefill_share(brief) if share is None else share)), 1), general - 1)
    order = sorted(range(1, general), key=lambda p: (abs(p - at), p))[:_SPLIT_TRIES]  # nearest first; of two as near, fewer on prefill
    nearest = brief.with_changes({"disaggregation.prefill_nodes": at})
    holds, first_margin = _meets(nearest, headroom, margin)
    if holds:
        return at, first_margin
    try:  # the nearest split's core, as _meets read it: its replica, pools, load and fixed path are every split's
        fleet: CoreDesign | PoolsReadCore | None = verdict_read(resolve(nearest))
    except BriefError:
        fleet = None
    fewest, most = 1, general - 1  # the splits not ruled out yet
    loses_a_node: Callable[[int], bool] | None = None  # read from the fleet less a node, once a split is re-planned
    for prefill in order:
        if not fewest <= prefill <= most:
            continue
        pools = _short_pools(prefill, fleet, headroom)
        if pools.prefill_short:
            fewest = prefill + 1
        if pools.decode_short:
            most = prefill - 1
        if prefill == at or not pools.meets:
            continue  # re-planned above, or it misses
        split = brief.with_changes({"disaggregation.prefill_nodes": prefill})
        loses_a_node = _loses_a_node(split) if loses_a_node is None else loses_a_node
        if loses_a_node(prefill):
            continue
        holds, split_margin = _meets(split, headroom, margin)
        if holds:
            return prefill, split_margin
    return None, first_margin


_TELLS_NOTHING = PoolsJudged(prefill_short=False, decode_short=False, meets=True)


def _short_pools(prefill_nodes: int, fleet: CoreDesign | PoolsReadCore | None, headroom: bool) -> PoolsJudged:
    """disagg.short_pools for the split with `prefill_nodes` of the fleet `fleet` is a core of (another split's: the
    replica, the pools, the load and the fixed request path do not depend on it), at the load the split must carry: the
    peak (meets_check: the verdict's SLO), or (1 + slo.headroom) x the peak with `headroom` (keeps_headroom: the pools'
    SLO capacity, where the capacity search finds the two pools stop meeting the SLO). Tells nothing (no pool short,
    the pools meet) without a core, for a deadline brief, or with speculative decoding (its ITL is not the decode
    pool's step)."""
    if fleet is None or not _pools_judge(fleet):
        return _TELLS_NOTHING
    stated = fleet.brief.slo.headroom
    multiple = 1 + stated if headroom and stated is not None else 1.0  # the load the capacity search tests, or the peak
    # the core's SLO budget keeps the aggregated budget's point: its fixed request path is the one the pools' TTFT adds
    rate = fleet.demand.request_rate_per_s * multiple
    return short_pools(fleet.brief, fleet.shape, fleet.pools, rate, request_path_ms(fleet), prefill_nodes)


def _pools_judge(core: CoreDesign | PoolsReadCore) -> bool:
    """A core's verdict on the SLO is its two pools' (disagg.short_pools's `meets` at the peak): a disaggregated
    latency design without speculative decoding (core.read_by_pools; a pools read always)."""
    return isinstance(core, PoolsReadCore) or (core.disaggregation is not None and read_by_pools(core.brief))


def _loses_a_node(split: Brief) -> Callable[[int], bool]:
    """Whether the split with n prefill nodes of `split`'s fleet misses N+1 on its pools alone: n_plus_one_check
    re-plans the fleet less a node at n prefill nodes and, where no spare replaces it, at n less the lost nodes (the
    prefill pool losing it); a split whose pools miss the peak in either misses. Read on the core of `split`'s own
    N+1 re-plan (which _meets works out next for it); False where it cannot tell or N+1 is not asked for."""

    def never(n: int) -> bool:
        return False

    if not needs_n_plus_one(split):
        return never
    try:
        lost = verdict_read(resolve(split.with_changes(scenario_overrides(split, Scenario.one_node_lost))))
    except BriefError:
        return never
    if not _pools_judge(lost):
        return never
    gone = lost_by_a_pool(split, Scenario.one_node_lost)

    def misses(n: int) -> bool:
        return not _short_pools(n, lost, headroom=False).meets or (
            gone > 0 and n - gone >= 1 and not _short_pools(n - gone, lost, headroom=False).meets
        )

    return misses


def fleet_overrides(brief: Brief, nodes: int, changes: dict[str, Any] | None = None, headroom: bool = False) -> dict[str, Any]:
    """The `plan --set` paths of the brief with `changes` on `nodes` nodes: the node count, and for a disaggregated
    design the split that meets there (split_meeting, the brief's share first; its own share when none does)."""
    overrides: dict[str, Any] = {"hardware.nodes": nodes}
    if not brief.disaggregation.enabled:
        return overrides
    base = brief.with_changes(changes) if changes else brief
    try:
        prefill, _ = split_meeting(base.with_changes(overrides), _prefill_share(base), headroom, margin=False)
    except BriefError:
        return overrides
    return overrides if prefill is None else overrides | {"disaggregation.prefill_nodes": prefill}


def fewest_nodes_meeting(brief: Brief, changes: dict[str, Any] | None = None, limit: int = MAX_NODES, headroom: bool = False) -> int | None:
    """The fewest nodes (at most `limit`) at which the brief with `changes` meets its SLO with its spare and long-context
    pools whole, or None when `limit` nodes do not. Starts from the SLO capacity's prediction where a core the plan
    worked out gives it (_capacity_guess), else from last time's answer: two re-plans of the verdict alone when it is
    the answer; else grows the fleet to a bracket and searches it (planner.grid_search): at most about 2 log2(nodes)
    re-plans, fewer where the margin guides.
    A disaggregated design meets at a fleet size when some split of its general pool does (split_meeting: a fleet kept
    at the brief's prefill nodes loses its decode pool as it shrinks); fleet_overrides gives that split. With
    `headroom`, the fleet also keeps the stated slo.headroom (keeps_headroom). A disaggregated design's confirmation
    reads each size's verdict alone (_SplitVerdicts: no margin, nor the checks that only work one out)."""
    base = brief.with_changes(changes) if changes else brief
    share = _prefill_share(base) if base.disaggregation.enabled else None

    def ok(nodes: int) -> tuple[bool, float]:
        sized = base.with_changes({"hardware.nodes": nodes})
        if share is None:
            return _meets(sized, headroom)
        try:
            prefill, margin = split_meeting(sized, share, headroom)
        except BriefError:
            return False, math.inf
        return prefill is not None, margin

    low = base.deployment.spare_nodes + base.deployment.long_context_nodes  # fewer would drop those pools
    question = question_key("fewest_nodes_headroom" if headroom else "fewest_nodes", base, limit)
    last = LastAnswers.get(question)
    start = min(max(brief.hardware.nodes, low + 1), limit)
    probe = _Remembered(ok, {})
    if last is None and start == limit and not probe(limit)[0]:  # a smaller fleet asked for: none, when its limit misses
        return None
    same_general = brief if changes and set(changes) <= _OTHER_POOLS else base  # a brief with the base's general pool
    known = _core_at(same_general, start, replanned=False)  # the core the plan worked out, if it is one
    guess = _capacity_guess(base, known, headroom) if known is not None else None
    verdicts = _SplitVerdicts(base, share, headroom) if share is not None else None
    read = verdicts or (_read_first(probe, base, known, headroom) if known is not None else probe)
    nodes = confirmed(read, guess if guess is not None else last, low, limit)  # else last time's: two re-plans if right
    if nodes is None:
        for asked in verdicts.asked if verdicts is not None else ():
            probe(asked)  # the confirmation's sizes again, with the margins the search steers by
        bracket = _bracket(probe, low, limit, start)
        if bracket is None:
            return None
        (low, margin_low), (high, margin_high) = bracket
        wide = high - low > _WIDE  # a prediction from a re-plan (its SLO-capacity search) pays where the bracket is wide
        core = _core_at(same_general, high, replanned=True) if wide else None
        guess = _capacity_guess(base, core, headroom) if core is not None else None
        nodes = first_meeting(probe, low, high, margin_low, margin_high, guess)
    LastAnswers.keep(question, nodes)
    return nodes


_WIDE = 64  # a bracket of more fleet sizes than this starts from the SLO capacity's prediction (one capacity search)


@dataclass(frozen=True)
class _SplitVerdicts:
    """A disaggregated fleet search's probe for a confirmation, which reads only whether a fleet size meets: whether
    some split of `base` on it does (split_meeting without the margins, which fleet_overrides then asks again), the
    sizes asked kept in order (`asked`) for the search that goes on where the confirmation does not end it."""

    base: Brief
    share: float
    headroom: bool
    asked: list[int] = field(default_factory=list)

    def __call__(self, nodes: int) -> tuple[bool, float]:
        self.asked.append(nodes)
        try:
            prefill, _ = split_meeting(self.base.with_changes({"hardware.nodes": nodes}), self.share, self.headroom, margin=False)
        except BriefError:
            return False, math.nan
        return prefill is not None, math.nan


@dataclass(frozen=True)
class _Remembered:
    """A fleet search's probe, each fleet size re-planned once: a search continues from what a confirmation learnt."""

    ok: Probe
    seen: dict[int, tuple[bool, float]]

    def __call__(self, nodes: int) -> tuple[bool, float]:
        if nodes not in self.seen:
            self.seen[nodes] = self.ok(nodes)
        return self.seen[nodes]


def _bracket(probe: _Remembered, low: int, limit: int, start: int) -> tuple[tuple[int, float], tuple[int, float]] | None:
    """((a fleet that fails, its margin), (a larger one that holds, its margin)) in [low, limit], or None when `limit`
    does not hold (`probe` fails at `low`). From the fleets already probed (the largest that failed, the smallest that
    held); with none that held, fleets grow until one does: doubling from `start` (the brief's own fleet) when nothing
    was probed, else a node past the largest that failed, then 2, 4, ... (a prediction a few nodes short)."""
    margin_low = math.inf
    failed = [n for n, (holds, _) in probe.seen.items() if not holds]
    held = [n for n, (holds, _) in probe.seen.items() if holds]
    if failed:
        low = max(failed)
        margin_low = probe.seen[low][1]
    if held:
        return (low, margin_low), (min(held), probe.seen[min(held)][1])
    high, step = (min(low + 1, limit), 1) if failed else (start, start)
    holds, margin_high = probe(high)
    while not holds:
        if high >= limit:
            return None
        flat = math.isfinite(margin_high) and margin_high == margin_low  # the larger fleet did not move the margin
        low, margin_low = high, margin_high  # more nodes never hurt: the answer is above a fleet that misses
        high = limit if flat else min(high + step, limit)  # flat: whether any fleet meets is asked of the largest first
        step *= 2
        holds, margin_high = probe(high)
    return (low, margin_low), (high, margin_high)


_OTHER_POOLS = frozenset({"deployment.long_context_nodes", "deployment.spare_nodes"})  # sizes beside the general pool's


def _core_at(same_general: Brief, nodes: int, replanned: bool) -> CoreDesign | None:
    """`same_general` (a brief with the general pool of the one searched) planned at `nodes` with its SLO capacity: the
    plan's own core when that is the one; else, with `replanned`, a re-plan (None without one, or where it cannot run)."""
    try:
        resolved = resolve(same_general.with_changes({"hardware.nodes": nodes}))
        return worked_out(resolved) or (replan(resolved) if replanned else None)
    except BriefError:
        return None


def _capacity_guess(base: Brief, core: CoreDesign, headroom: bool) -> int | None:
    """The fleet the SLO capacity predicts for `base`: its spare and long-context pools, plus the general pool a replica
    needs to carry no more than its SLO capacity with the nodes an N+1 availability target's lost node takes from it
    (the node, where no spare replaces it, and the rest of a multi-node replica it stops); with `headroom`, at least the general pool that keeps the stated slo.headroom above the peak with every node up
    (the two are judged apart: meets_check, keeps_headroom). The general pool's need is read from `core`, a brief with
    the same general pool planned (_core_at; the brief before its other pools were resized carries the same general
    pool); None without a prediction. Where a search starts: the re-plans decide."""
    load = core.operating_point.load_vs_capacity
    if not 0 < load < math.inf:
        return None
    general = core.pools.general_nodes  # x load: the general pool's nodes at which a replica carries its SLO capacity
    others = base.deployment.spare_nodes + base.deployment.long_context_nodes
    # as the one-node-lost row loses them (failures._nodes_lost)
    lost = lost_by_a_pool(base, Scenario.one_node_lost) + core.shape.replica_nodes - 1 if needs_n_plus_one(base) else 0
    needed = math.ceil(general * load) + lost  # the SLO at the peak with a node lost
    if headroom:  # and the stated headroom above the peak with every node up (not both at once)
        needed = max(needed, math.ceil(general * load * (1 + (base.slo.headroom or 0.0))))
    return others + needed


def _read_first(probe: Probe, base: Brief, known: CoreDesign, headroom: bool = False) -> Probe:
    """`probe` (_meets at a fleet size) for a confirmation, which reads only whether the fleet meets: read on `known`'s
    SLO capacity where that tells (core.capacity_read: the design, and its one-node-lost design where N+1 is asked;
    with `headroom`, the stated slo.headroom kept too: the pools' multiple read on that capacity, core.capacity_read_core,
    is the one keeps_headroom's re-plan gives; judged before N+1, whose one-node-lost design is not read where it
    misses), else re-planned. A read's margin is nan: a search that goes on steers by the re-plans alone."""

    def read_or_probe(nodes: int) -> tuple[bool, float]:
        sized = base.with_changes({"hardware.nodes": nodes})
        try:
            resolved = resolve(sized)
            read = capacity_read_core(known, resolved) if headroom else None
            holds = capacity_read(known, resolved) if not headroom else (read.meets if read is not None else None)
        except BriefError:  # as meets_check: the design cannot be computed at all
            return False, math.nan
        if holds and read is not None:  # the headroom before N+1: read on the same design, where N+1 reads another
            holds = _multiple_keeps(sized, _pools_multiple(read))
        if holds and needs_n_plus_one(sized):
            holds = lost_read(sized, known)
        return (holds, math.nan) if holds is not None else probe(nodes)

    return read_or_probe


class FleetFix(BaseModel):
    """The change that makes a design that misses meet its SLO, found by re-planning: an engine setting a verdict
    problem names where that alone meets (no node added), else the smallest fleet that does."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    nodes: int
    long_context_nodes: int
    overrides: dict[str, Any]  # as `plan --set` takes them: the brief with these meets its SLO
    text: str
    fleet: str  # the fleet the fix's figures are on, in words ("the 1012 nodes that meet the SLO with N+1")
    setting: bool = False  # the fix changes engine settings on the brief's own nodes, not the fleet
    prefill_nodes: int | None = None  # a disaggregated design's fleet: the nodes of it on prefill (the split that meets there)


def _sets(overrides: dict[str, Any]) -> str:
    return " ".join(f"--set {path}={value}" for path, value in overrides.items())


def _setting_fix(brief: Brief, problems: tuple[Problem, ...]) -> FleetFix | None:
    """The engine settings the verdict's problems name (Problem.overrides), where changing them alone meets, re-planned:
    each problem's alone in the verdict's order, then all of them together; None when none does (nodes, then)."""
    named = [p.overrides for p in problems if p.overrides]
    together = {path: value for overrides in named for path, value in overrides.items()}
    tries = [*named, *([together] if len(named) > 1 else [])]
    for overrides in tries:
        try:
            changed = brief.with_changes(overrides)
        except BriefError:  # a value the brief refuses (out of range): not a change that can be made
            continue
        if not meets(changed):
            continue
        now = ", ".join(f"{path} {path_value(brief, path)} -> {value}" for path, value in overrides.items())
        return FleetFix(
            nodes=brief.hardware.nodes,
            long_context_nodes=brief.deployment.long_context_nodes,
            overrides=overrides,
            text=f"{now} on the same {brief.hardware.nodes} nodes meets {goal_words(brief)}, no node added: plan {_sets(overrides)} meets it",
            fleet=f"these {brief.hardware.nodes} nodes with {', '.join(f'{path}={value}' for path, value in overrides.items())}",
            setting=True,
        )
    return None


_SPLIT_TRIES = 16  # prefill-pool sizes tried upward from the one the prefill load needs


def _prefill_split_fix(brief: Brief) -> FleetFix | None:
    """A disaggregated design whose prefill pool cannot keep up is fixed by moving nodes from its decode pool, not by
    adding nodes (they go to the decode pool): the fewest prefill nodes at the brief's fleet that meet, re-planned, from
    the count its prefill load needs upward; None when the prefill pool is not short or no split up to the tries meets.
    A split whose two pools miss the peak on the brief's own core (_short_pools) is not re-planned, and once its decode
    pool misses on its own the search stops: every split with more prefill nodes misses too."""
    if not brief.disaggregation.enabled:
        return None
    try:
        core = verdict_core(resolve(brief))
    except BriefError:
        return None
    dis = core.disaggregation
    if dis is None or dis.prefill_busy < 1:
        return None
    per_node = dis.prefill_replicas / max(dis.prefill_nodes, 1)
    need = math.ceil(dis.prefill_busy * dis.prefill_replicas / per_node)  # busy x replicas: the replicas the load fills
    top = dis.prefill_nodes + dis.decode_nodes - 1
    for prefill in range(max(need, dis.prefill_nodes + 1), min(need + _SPLIT_TRIES, top + 1)):
        pools = _short_pools(prefill, core, headroom=False)
        if pools.decode_short:
            return None
        if not pools.meets:
            continue
        overrides: dict[str, Any] = {"disaggregation.prefill_nodes": prefill}
        if meets(brief.with_changes(overrides)):
            return FleetFix(
                nodes=brief.hardware.nodes,
                long_context_nodes=brief.deployment.long_context_nodes,
                overrides=overrides,
                fleet=f"these {brief.hardware.nodes} nodes, {prefill} of them in the prefill pool",
                text=(
                    f"{prefill} of the {dis.prefill_nodes + dis.decode_nodes} general-pool nodes to the prefill pool ({dis.prefill_nodes} now),"
                    f" the fewest that meet {goal_words(brief)}: plan --set disaggregation.prefill_nodes={prefill} meets it"
                ),
            )
    return None


def _long_pool_carries(brief: Brief) -> bool:
    """The brief's own long-context pool carries its share: if not, no fleet size meets (more nodes go to the general
    pool, the long-context pool keeps its size), so the fleet search is not run."""
    dep = brief.deployment
    return dep.long_context_nodes == 0 or brief.workload.long_context_share <= 0 or long_pool_carries(brief, dep.long_context_nodes)


def _delta(nodes: int) -> str:
    return f"{nodes} more" if nodes >= 0 else f"{-nodes} fewer"


def headroom_fix(brief: Brief) -> FleetFix | None:
    """The fewest nodes (a disaggregated design: with the split searched) that meet the SLO with the N+1 the brief asks
    for and keep its stated slo.headroom, re-planned; None when it states none or no fleet up to MAX_NODES keeps it."""
    stated = brief.slo.headroom
    if stated is None:
        return None
    nodes = fewest_nodes_meeting(brief, headroom=True)
    if nodes is None:
        return None
    overrides = fleet_overrides(brief, nodes, headroom=True)
    split = overrides.get("disaggregation.prefill_nodes")
    words = f", {split} prefill" if split is not None else ""
    goal = f"{goal_words(brief)} and keep {pct(stated)} above the peak with every node up"
    return FleetFix(
        nodes=nodes,
        long_context_nodes=brief.deployment.long_context_nodes,
        overrides=overrides,
        prefill_nodes=split,
        text=f"{nodes} nodes{words}, the fewest that keep it with every node up: plan {_sets(overrides)}",
        fleet=f"the {nodes} nodes that meet {goal}",
    )


def goal_words(brief: Brief) -> str:
    """What a re-planned fleet meets, in words: the SLO or a job's deadline, with N+1 where the availability asks."""
    goal = "the SLO" if brief.objective.kind is ObjectiveKind.latency else "its deadline"
    return f"{goal} with N+1" if needs_n_plus_one(brief) else goal


def fleet_fix(brief: Brief, problems: tuple[Problem, ...] = ()) -> FleetFix | None:
    """The change that makes the brief meet its SLO: an engine setting one of its verdict's `problems` names, where that
    alone meets (it costs no node); else the fewest nodes at which it meets, its long-context pool grown first when that
    pool alone cannot carry its share at any fleet size; None when no fleet up to MAX_NODES does (the replica or the
    targets must change). A problem that corrects the brief's own statement of its traffic (a long-context share its
    prompt lengths contradict: _corrections) is applied before the fleet is searched, and the fix carries it."""
    setting = _setting_fix(brief, problems)
    if setting is not None:
        return setting
    corrected = _corrections(problems)
    if not corrected:
        return _resized_fix(brief)
    try:
        base = brief.with_changes(corrected)
    except BriefError:  # a value the brief refuses: the fleet is searched on the brief as stated
        return _resized_fix(brief)
    rest = tuple(p for p in problems if not _corrects(p))
    fix = _setting_fix(base, rest) or _resized_fix(base)
    return _with_correction(fix, brief, corrected) if fix is not None else None


def _corrects(problem: Problem) -> bool:
    """The problem's change corrects what the brief states of its traffic (workload.*), not a design choice."""
    return bool(problem.overrides) and all(path.startswith("workload.") for path in problem.overrides)


def _corrections(problems: tuple[Problem, ...]) -> dict[str, Any]:
    """The overrides of the problems that correct the brief's own statement of its traffic (_corrects)."""
    return {path: value for p in problems if _corrects(p) for path, value in p.overrides.items()}


def _with_correction(fix: FleetFix, brief: Brief, corrected: dict[str, Any]) -> FleetFix:
    """A fix found on the corrected brief, stated against the brief as written: the correction first in its overrides
    and words, so `plan` with the fix's overrides alone meets."""
    overrides = corrected | fix.overrides
    now = ", ".join(f"{path} {path_value(brief, path)} -> {value}" for path, value in corrected.items())
    text = fix.text.replace(f"plan {_sets(fix.overrides)}", f"plan {_sets(overrides)}")
    return fix.model_copy(
        update={
            "overrides": overrides,
            "text": f"{now} (the brief's own figures give it), then {text}",
            "fleet": f"{fix.fleet}, with {now}",
        }
    )


def _resized_fix(brief: Brief) -> FleetFix | None:
    """fleet_fix past the engine settings: the prefill split on the brief's fleet, else the fewest nodes that meet, the
    long-context pool grown first when it alone cannot carry its share."""
    dep = brief.deployment
    long_context = dep.long_context_nodes
    split = _prefill_split_fix(brief)
    if split is not None:
        return split
    nodes = fewest_nodes_meeting(brief) if _long_pool_carries(brief) else None  # a disaggregated design: its split searched too
    if nodes is None:
        needed = long_context_nodes_needed(brief, LONG_CONTEXT_NODES_LIMIT)
        if needed is None or needed == long_context:
            return None
        long_context = needed
        nodes = fewest_nodes_meeting(brief, {"deployment.long_context_nodes": needed})
        if nodes is None:
            return None
    grown_pool = {"deployment.long_context_nodes": long_context} if long_context != dep.long_context_nodes else None
    overrides = fleet_overrides(brief, nodes, grown_pool)  # a disaggregated design: with the split that meets there
    grown = ""
    if grown_pool is not None:
        overrides["deployment.long_context_nodes"] = long_context
        grown = f"; {long_context} of them long-context, {dep.long_context_nodes} now"
    split = overrides.get("disaggregation.prefill_nodes")
    if split is not None and split != brief.disaggregation.prefill_nodes:
        grown += f"; {split} of them prefill, {brief.disaggregation.prefill_nodes} now"
    sets = _sets(overrides)
    return FleetFix(
        nodes=nodes,
        long_context_nodes=long_context,
        overrides=overrides,
        text=f"{nodes} nodes ({_delta(nodes - brief.hardware.nodes)}{grown}), the fewest that meet {goal_words(brief)}: plan {sets} meets it",
        fleet=f"the {nodes} nodes that meet {goal_words(brief)}",
        prefill_nodes=split,
    )
