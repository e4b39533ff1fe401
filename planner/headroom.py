"""Headroom: how many times the peak traffic the design carries before its verdict turns, and which limit turns it.

Each limit is one of the verdict's own rules, found as the traffic multiple at which it reaches its bound:
- the general pool: a replica's load against its capacity under the SLO (the rate at which it stops meeting both
  targets, what `max-rate` measures); that capacity does not depend on the load, so the multiple is capacity / load;
- the long-context pool: its busy share reaches 100% (its batch grows with the load, so found by bisection);
- the worked design's sizing arithmetic (users x duty): the fleet's utilization reaches 100%, and the KV cache
  fills at the sizing batch. These are the seed's linear figures: conservative where they come before the SLO capacity,
  optimistic where a replica meets its SLO capacity first (sizing_words says which); they bind only when nothing else
  does first.
The headroom is the smallest of them, so traffic x2 that misses never sits under a headroom above 2.
"""

from __future__ import annotations

import math
from collections.abc import Callable

from pydantic import BaseModel, ConfigDict, PrivateAttr

from planner.architecture import long_context_utilization
from planner.brief import Brief, ObjectiveKind
from planner.capacity import Demand, utilization_at
from planner.core import CapacityReadCore, CoreDesign, PoolsReadCore, capacity_read, same_but_fleet_and_traffic, verdict_core
from planner.errors import BriefError
from planner.failures import Scenario, judged, n_plus_one, needs_n_plus_one, scenario_overrides
from planner.fmt import down, num, pct, times
from planner.grid_search import LastAnswers, around_guess, bisection_bracket, first_meeting, question_key
from planner.kv_tiers import kv_tier_analysis
from planner.mechanisms import resolve
from planner.multimodal import with_image_tokens
from planner.objective import ObjectiveAnalysis, duration_text, objective_analysis, rollout_makespan_s
from planner.replica import ReplicaShape, shape_of
from planner.trusted import trusted

__all__ = ["Headroom", "PoolLimit", "headroom", "long_context_utilization_at", "pools_multiple", "scaled_demand", "sizing_words"]

_BISECTIONS = 50  # halvings of the multiple's bracket: far below any figure shown
_MAX_MULTIPLE = 1e6  # a limit not reached by this multiple of the traffic is not a limit
_TIERS_WHY = "the KV tiers' hit rate falls as the traffic grows, so the traffic is scaled and re-planned"
_MAX_PROMPTS = 10_000_000  # a rollout batch's largest stated size (planner.brief)
_REPLAN_BISECTIONS = 9  # re-plans that narrow a re-planned limit to 1/512 of its bracket: below the three figures shown
# a design as its limits read it: worked out, or (one node lost) read on an SLO capacity or on a disaggregated design's pools
_Limited = CoreDesign | CapacityReadCore | PoolsReadCore


class PoolLimit(BaseModel):
    """One limit of the verdict: the traffic multiple at which it is reached."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    key: str  # general, long_context, sizing_utilization, sizing_kv, or replanned (a hit rate that follows the load)
    name: str  # what happens at the bound, in words ("the long-context pool fills")
    multiple: float  # x the brief's peak traffic at which it is reached (unbounded: never)
    arithmetic: str


class Headroom(BaseModel):
    """How many times the peak traffic the design carries before a limit of its verdict is reached."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    multiple: float  # the smallest limit's multiple, rounded down to three figures: the headroom
    binding: str  # the limit reached first
    limits: tuple[PoolLimit, ...]
    text: str
    _n_plus_one_held: bool = PrivateAttr(default=False)  # the re-planned limit met the SLO with N+1 at a multiple >= 1

    @property
    def n_plus_one_held(self) -> bool:
        """The re-planned limit (a hit rate that follows the load) found the design meeting its SLO with N+1 at a
        traffic multiple of 1 or more: more traffic never helps (as its bisection takes), so it holds N+1 at the peak
        too, and plan() needs no one-node-lost re-plan of its own to say so."""
        return self._n_plus_one_held

    @property
    def long_context_pool(self) -> bool:
        """The design has a long-context pool that takes load (one of the limits)."""
        return any(lim.key == "long_context" for lim in self.limits)


def scaled_demand(dem: Demand, multiplier: float) -> Demand:
    """Demand at `multiplier` x the traffic: every rate and the generating count scale with the users (or the rate).
    Built without validation (planner.trusted), its arithmetic left unwritten (an empty dict)."""
    scaled = trusted(
        Demand,
        request_rate_per_s=dem.request_rate_per_s * multiplier,
        turn_period_s=dem.turn_period_s,
        generating_sequences=dem.generating_sequences * multiplier,
        input_tokens_per_s=dem.input_tokens_per_s * multiplier,
        output_tokens_per_s=dem.output_tokens_per_s * multiplier,
        prefill_tokens_per_s_after_cache=dem.prefill_tokens_per_s_after_cache * multiplier,
    )
    scaled._text = dict
    return scaled


def _crossing(value_at: Callable[[float], float], at_peak: float, past: float = math.inf) -> float:
    """The multiple at which an increasing `value_at(multiple)` reaches 1 (0 when already over at any load,
    unbounded when not reached by _MAX_MULTIPLE): _BISECTIONS halvings of [0, the first doubling over it], with the
    midpoints the values already worked out decide left untested (grid_search.bisection_bracket: about 15 sizing
    passes instead of 52). `at_peak`: value_at(1), the design's own figure (not worked out again). `past`: a multiple
    the caller needs the crossing only at or under (a limit that comes first there): one whose value there is under 1
    lies past it (the bisection's answer tests over 1, so above it) and is not searched (inf)."""

    def test(multiple: float) -> tuple[bool, float]:
        value = value_at(multiple)
        return value < 1, value - 1

    if past < math.inf and value_at(past) < 1:
        return math.inf

    high, below = 1.0, None
    is_below, margin = at_peak < 1, at_peak - 1
    while is_below:
        below = (high, margin)
        high *= 2
        if high > _MAX_MULTIPLE:
            return math.inf
        is_below, margin = test(high)
    return bisection_bracket(test, 0.0, high, _BISECTIONS, below, (high, margin))[1]


def long_context_utilization_at(core: _Limited, multiple: float) -> float:
    """The long-context pool's busy share at `multiple` x the peak traffic (0 without the pool)."""
    replicas = core.shape.replicas_in(core.pools.long_context_nodes)
    if not replicas:
        return core.long_context_utilization if multiple > 0 else 0.0  # 0, or unbounded when its nodes hold no replica
    return long_context_utilization(core.brief, core.shape, scaled_demand(core.demand, multiple), replicas)


def _general_limit(core: _Limited) -> PoolLimit:
    op = core.operating_point
    pool = "the decode and prefill pools reach their" if core.disaggregation is not None else "the general pool reaches its"
    load = op.load_vs_capacity  # a replica's load / the rate at which it stops meeting the SLO
    multiple = 1 / load if load > 0 else (math.inf if load == 0 else math.nan)
    return trusted(
        PoolLimit,
        key="general",
        name=f"{pool} SLO capacity",
        multiple=multiple,
        arithmetic=(
            f"{num(op.capacity_rate_per_s, 'req/s')} a replica meets the SLO up to / {num(op.rate_per_replica_per_s, 'req/s')}"
            f" it carries = {times(multiple)}"
            if core.disaggregation is None
            else f"the pools run at {pct(load)} of their capacity under the SLO: {times(multiple)}"
        ),
    )


def _long_context_limit(core: _Limited, past: float = math.inf) -> PoolLimit | None:
    """The long-context pool's busy share reaching 100% (`past`: as _crossing takes it)."""
    if core.pools.long_context_nodes == 0 or core.brief.workload.long_context_share <= 0:
        return None
    busy = core.long_context_utilization
    multiple = 0.0 if not math.isfinite(busy) else _crossing(lambda m: long_context_utilization_at(core, m), busy, past)
    return trusted(
        PoolLimit,
        key="long_context",
        name="the long-context pool fills",
        multiple=multiple,
        arithmetic=(
            f"{pct(busy)} busy at the peak; its batch grows with the load,"
            f" x{num(1 / busy) if busy > 0 else 'unbounded'} if it scaled linearly"
        ),
    )


def pools_multiple(core: _Limited) -> float:
    """The traffic multiple at which the design's serving pools reach their SLO capacity (the general pool, or the
    decode and prefill pools, and the long-context pool): the capacity it keeps above the peak, N+1 and the sizing
    arithmetic aside. A stated slo.headroom is judged against it (planner.design, planner.resize)."""
    limits = [_general_limit(core), *([lc] if (lc := _long_context_limit(core)) is not None else [])]
    known = [lim.multiple for lim in limits if not math.isnan(lim.multiple)]
    return min(known) if known else math.nan


def _sizing_limits(core: _Limited, past: float = math.inf) -> list[PoolLimit]:
    """The worked design's sizing rules the verdict applies: fleet utilization and the KV cache at the sizing batch
    (`past`: as _crossing takes it)."""
    brief, shape, cap = core.brief, core.shape, core.capacity
    if brief.workload.rate_given:  # utilization = load / a capacity that does not depend on the load
        util_multiple = 1 / cap.utilization if cap.utilization > 0 else math.inf
    else:  # the decode batch grows with the load: re-run the arithmetic at each multiple
        util_multiple = _crossing(lambda m: utilization_at(brief, shape, scaled_demand(core.demand, m)), cap.utilization, past)
    limits = [
        trusted(
            PoolLimit,
            key="sizing_utilization",
            name="the sizing utilization reaches 100%",
            multiple=util_multiple,
            arithmetic=f"{pct(cap.utilization)} at the peak, the worked design's sizing arithmetic",
        )
    ]
    if cap.kv_fraction > 0:
        limits.append(
            trusted(
                PoolLimit,
                key="sizing_kv",
                name="the KV cache fills at the sizing batch",
                multiple=1 / cap.kv_fraction,
                arithmetic=f"{pct(cap.kv_fraction)} of the KV cache at the sizing batch",
            )
        )
    return limits


def _at_traffic(stated: Brief, multiple: float) -> Brief:
    """The stated brief with its peak traffic scaled, as `plan --set workload.users=...` (or request_rate) gives it
    (the brief itself at a multiple of 1)."""
    if multiple == 1:
        return stated
    w = stated.workload
    if w.rate_given:
        assert w.request_rate is not None
        return stated.with_changes({"workload.request_rate": w.request_rate * multiple})
    assert w.users is not None
    return stated.with_changes({"workload.users": max(int(w.users * multiple), 1)})


def _load(stated: Brief) -> float:
    """The peak traffic _at_traffic scales: the request rate, or the users at their duty cycle."""
    w = stated.workload
    return w.request_rate if w.rate_given and w.request_rate is not None else (w.users or 0) * w.duty_cycle


def _replanned_limit(core: CoreDesign, stated: Brief, guess: float, predicted: float = math.inf) -> tuple[PoolLimit, bool]:
    """Where the hit rate follows the load (derived from the KV tiers), the closed forms do not hold: the multiple at
    which the re-planned verdict turns, by bisection over `plan --set` with the scaled traffic (its margin jumps where
    the verdict turns, as the derived hit rate steps when the tiers fill, so it steers nothing). Where to look first:
    the traffic it turned at last time, else the closed forms' `predicted` turn (the pools' SLO capacity, N+1's) where it
    comes before the tiers overflow (the hit rate holds till then, so they hold), else just past where the tiers
    overflow (_hit_rate_turn); the two ends of the halvings' last bracket there usually decide every midpoint
    (grid_search.around_guess), the upper end first: a design that meets there meets at the lower end, where only its
    N+1 re-plan is made (resize.meets at each traffic, one re-plan fewer). A verdict is read on the design's own SLO
    capacity where the traffic leaves the hit rate and the replica as they are (core.capacity_read), else re-planned.
    Returns the limit, and whether a multiple tested (each 1 or more) met the SLO with N+1 (Headroom.n_plus_one_held)."""
    if not (core.verdict.feasible and core.verdict.meets_slo):
        missed = PoolLimit(key="replanned", name="the design misses its SLO", multiple=0.0, arithmetic="already at the brief's traffic")
        return missed, False
    low, high = 1.0, max(guess, 1.0)
    question, load = question_key("replanned_headroom", stated), _load(stated)
    last = LastAnswers.get(question)  # the traffic it turned at last time: a slider move turns it nearby

    def hint(low: float, high: float) -> float | None:  # where to look first: last time's turn, else just past the tiers'
        if last is not None:
            return last / load
        width = (high - low) / 2**_REPLAN_BISECTIONS
        closed = predicted if low < predicted < high else None  # the closed forms hold below the tiers' turn
        fallen = _hit_rate_fallen(stated, low)
        if fallen is None or (closed is not None and not fallen(min(closed + width, high))):
            return closed  # the tiers hold past the closed forms' turn (one look, not the turn's bisection)
        turn = _hit_rate_turn(fallen, low, high, width)
        if turn is None:
            return closed
        past_turn = min(turn + width, (turn + high) / 2)
        return closed if closed is not None and closed < past_turn else past_turn

    design_met: dict[float, bool] = {}  # the re-planned design's own verdict (N+1 aside) at the multiples tested
    scaled: dict[float, Brief] = {}  # the brief at each multiple tested (its verdict and its N+1 read the same one)

    def at_traffic(multiple: float) -> Brief:
        brief = scaled.get(multiple)
        if brief is None:
            brief = scaled[multiple] = _at_traffic(stated, multiple)
        return brief

    def design_meets(multiple: float) -> bool:
        """_meets_slo at the scaled traffic; known without a re-plan below a multiple where it met (more load only adds
        to the busy shares and the queues, as every bisection here takes)."""
        if any(met and multiple <= at for at, met in design_met.items()):
            return True
        design_met[multiple] = _meets_slo(at_traffic(multiple), core)
        return design_met[multiple]

    held: list[float] = []  # multiples at which the design met the SLO with N+1 (re-planned)

    def test(multiple: float) -> tuple[bool, float]:  # resize.meets; no margin: it jumps where the verdict turns
        meets = design_meets(multiple) and n_plus_one(at_traffic(multiple), core)
        if meets:
            held.append(multiple)
        return meets, math.nan

    def tested_around(low: float, high: float) -> tuple[tuple[float, float], tuple[float, float]]:
        guess = hint(low, high)  # the ends of the halvings' last bracket around it (`high` untested: only a bound)
        if guess is None:
            return (low, math.nan), (high, math.nan)
        # the upper end first: where the design meets there, only the lower end's N+1 re-plan is left to make
        return around_guess(test, low, high, _REPLAN_BISECTIONS, guess, high_first=True)

    below, above = tested_around(low, high)
    if above[0] == high:  # the bracket's end is not known to miss: double it until it does
        bracket = (low, high)
        while test(high)[0]:
            low, high = high, high * 2
            if high > _MAX_MULTIPLE:
                unbounded = PoolLimit(
                    key="replanned", name="no limit", multiple=math.inf, arithmetic="re-planned up to a million times the traffic"
                )
                return unbounded, bool(held)
        if (low, high) != bracket:
            below, above = tested_around(low, high)
    low, high = bisection_bracket(test, low, high, _REPLAN_BISECTIONS, below, above)
    LastAnswers.keep(question, high * load)
    if design_meets(high):  # the SLO holds there: what `meets` lost is N+1 (its one-node-lost re-plan misses)
        name, words = "N+1 is lost in the re-planned design", f"x{low:.5g} meets the SLO with N+1; at x{high:.5g} one node lost breaks it"
    else:
        name, words = "the re-planned design misses its SLO", f"x{low:.5g} meets the SLO, x{high:.5g} does not"
    return PoolLimit(key="replanned", name=name, multiple=high, arithmetic=f"{_TIERS_WHY}: {words}"), bool(held)


def _lost_node_guess(core: CoreDesign) -> float:
    """Where N+1 is likely lost, from the closed forms: the general pool's SLO-capacity multiple with one node's replicas
    gone (a spare node replaces it: no loss). Only where the re-planned limit looks first; the re-plans decide."""
    pools, general = core.pools, _general_limit(core).multiple
    if core.brief.deployment.spare_nodes > 0 or pools.general_nodes < 2 or not math.isfinite(general):
        return general
    left = pools.general_replicas * (pools.general_nodes - 1) / pools.general_nodes
    return general * left / pools.general_replicas


def _hit_rate_fallen(stated: Brief, low: float) -> Callable[[float], bool] | None:
    """Whether at a traffic multiple a derived hit rate (the design's, and with one node lost when the availability
    asks for N+1) has fallen below its value at `low`, from the KV tiers' arithmetic alone (no re-plan); None when the
    rates at `low` cannot be worked out."""
    lost = needs_n_plus_one(stated)
    replicas: dict[int, ReplicaShape] = {}  # the design's and the one-node-lost design's: no traffic in them

    def hit_rate(which: int, brief: Brief) -> float:  # the rate resolve() derives from the tiers, the replica formed once
        if which not in replicas:
            replicas[which] = shape_of(brief)
        tiers = kv_tier_analysis(with_image_tokens(brief), replicas[which])
        return tiers.hit_rate if tiers is not None else brief.workload.prefix_hit_rate

    def rates(multiple: float) -> tuple[float, ...] | None:
        brief = _at_traffic(stated, multiple)
        briefs = (brief, brief.with_changes(scenario_overrides(brief, Scenario.one_node_lost))) if lost else (brief,)
        try:
            return tuple(hit_rate(which, b) for which, b in enumerate(briefs))
        except BriefError:
            return None

    at_low = rates(low)
    if at_low is None:
        return None
    start = at_low

    def fallen(multiple: float) -> bool:
        now = rates(multiple)
        return now is None or any(rate < was - _HIT_RATE_STEP for rate, was in zip(now, start, strict=True))

    return fallen


def _hit_rate_turn(fallen: Callable[[float], bool], low: float, high: float, width: float) -> float | None:
    """Where a re-planned limit is likely: the traffic multiple in (low, high] at which a derived hit rate first falls
    (_hit_rate_fallen), found to `width` by bisection. Past it the hit rate drops quickly as the tiers overflow, so the
    verdict turns just after; the re-plans still decide (None: no rate falls by `high`)."""
    if not fallen(high):
        return None
    while high - low > width:
        mid = (low + high) / 2
        low, high = (low, mid) if fallen(mid) else (mid, high)
    return low


_HIT_RATE_STEP = 1e-12  # a derived hit rate that moved less than this has not fallen


def _meets_slo(brief: Brief, known: CoreDesign) -> bool:
    """The re-planned design itself is feasible and meets its SLO (N+1 aside), as `plan --set` judges it: read on the
    SLO capacity of `known` where that tells (core.capacity_read), else re-planned."""
    try:
        resolved = resolve(brief)
        read = capacity_read(known, resolved)
        if read is not None:
            return read
        verdict, _ = judged(verdict_core(resolved))
    except BriefError:
        return False
    return verdict.feasible and verdict.meets_slo


def _deadline_limit(core: _Limited, goal: ObjectiveAnalysis) -> PoolLimit:
    """An offline job or a rollout batch is judged on its deadline, not on latency: its work can grow until its time
    reaches the deadline. A job's time grows with its tokens at the fleet's throughput; a rollout's makespan is its
    bulk's work or its straggler's decode, whichever is longer, so its multiple is found by re-working the objective
    with more prompts (the straggler barely grows with them)."""
    arithmetic = f"it takes {duration_text(goal.time_s, goal.kind)} of its {duration_text(goal.deadline_s, goal.kind)} deadline"
    if goal.kind is ObjectiveKind.throughput or not (0 < goal.time_s < math.inf):
        multiple = goal.deadline_s / goal.time_s if goal.time_s > 0 else math.inf
        return PoolLimit(key="deadline", name="it misses its deadline", multiple=multiple, arithmetic=arithmetic)
    prompts = core.brief.objective.batch_prompts

    def misses(count: int) -> tuple[bool, float]:  # and its margin: the log of the deadline over the time (<= 0 misses)
        time_s = rollout_makespan_s(core.brief, core.shape, core.memory, count)  # the brief with `count` prompts' time
        return time_s > goal.deadline_s, math.log(goal.deadline_s / time_s) if time_s > 0 else math.inf

    if goal.time_s > goal.deadline_s:  # `goal` is these prompts' objective: it misses already
        return PoolLimit(key="deadline", name="it misses its deadline", multiple=goal.deadline_s / goal.time_s, arithmetic=arithmetic)
    low, high = prompts, prompts * 2  # the objective alone is worked out again, not the design: cheap
    margin_low = math.log(goal.deadline_s / goal.time_s)
    missed, margin_high = misses(high)
    while not missed:
        if high >= _MAX_PROMPTS:
            return PoolLimit(key="deadline", name="it misses its deadline", multiple=math.inf, arithmetic=arithmetic)
        low, high, margin_low = high, _more_prompts(low, high, margin_low, margin_high), margin_high
        missed, margin_high = misses(high)
    # the time grows about linearly with the prompts: a secant through the margins finds the first count that misses
    # in a few tests instead of a bisection's log2(prompts) (grid_search.first_meeting: the same count)
    high = first_meeting(misses, low, high, margin_low, margin_high)
    low = high - 1
    return PoolLimit(
        key="deadline",
        name="it misses its deadline",
        multiple=high / prompts,
        arithmetic=f"{arithmetic}; a batch of {low:,} prompts still finishes in time, {high:,} does not",
    )


def _more_prompts(low: int, high: int, margin_low: float, margin_high: float) -> int:
    """The next rollout batch to work out when `low` and `high` prompts both finish in time (margins: the log of the
    deadline over the time): one past where the chord through their times reaches the deadline, as the time grows about
    linearly with the prompts; between one more than `high` and _GROWTH times it."""
    time_low, time_high = math.exp(-margin_low), math.exp(-margin_high)  # the times as shares of the deadline
    grown = min(high * _GROWTH, _MAX_PROMPTS)
    if not time_high > time_low:
        return grown
    reaches = high + (high - low) * (1 - time_high) / (time_high - time_low)
    return max(min(math.ceil(reaches) + 1, grown), high + 1)


_GROWTH = 8  # the most a rollout batch grows from one test to the next while it still finishes in time


def headroom(
    core: CoreDesign,
    stated: Brief | None = None,
    goal: ObjectiveAnalysis | None = None,
    one_node_lost: _Limited | None = None,
    n_plus_one: bool = False,
) -> Headroom:
    """The headroom of a design: the smallest traffic multiple at which one of its verdict's limits is reached.
    `stated`: the brief as given, for a design whose hit rate follows the load (KV tiers): then the traffic is
    re-planned. `goal`: an offline job's or a rollout's objective, whose deadline is its verdict's only limit.
    `n_plus_one`: the availability target asks for N+1, so the verdict also turns where `one_node_lost` (the design
    with one node lost, the failure table's row; None when it cannot run at all) reaches a limit of its own."""
    limits = _limits(core)
    n_plus_one_held = False
    if goal is not None:
        limits = [_deadline_limit(core, goal), *([_n_plus_one_deadline(one_node_lost)] if n_plus_one else [])]
    elif stated is not None:
        guess = min((lim.multiple for lim in limits if not math.isnan(lim.multiple)), default=1.0)
        predicted = min(guess, _lost_node_guess(core) if n_plus_one else math.inf)  # the closed forms' turn at this hit rate
        replanned, n_plus_one_held = _replanned_limit(core, stated, guess, predicted)
        limits.insert(0, replanned)
    elif n_plus_one:
        limits.append(_n_plus_one_limit(one_node_lost, (core, limits)))
    known = [lim for lim in limits if not math.isnan(lim.multiple)]
    first = min(known, key=lambda lim: lim.multiple) if known else limits[0]
    multiple = down(first.multiple)
    load = "the work" if goal is not None else "the peak traffic"
    if first.multiple < 1:
        text = f"none: x{num(multiple)} {load} is where {first.name} ({first.arithmetic})"
    else:
        text = f"x{num(multiple)} {load}, then {first.name} ({first.arithmetic})"
    text += _stated_words(core, goal)
    others = [lim for lim in known if lim is not first and math.isfinite(lim.multiple)]
    if others:
        text += "; later " + ", ".join(f"{lim.name} at {times(lim.multiple)}" for lim in sorted(others, key=lambda lim: lim.multiple))
    result = trusted(Headroom, multiple=multiple, binding=first.name, limits=tuple(limits), text=text)
    result._n_plus_one_held = n_plus_one_held
    return result


def _stated_words(core: CoreDesign, goal: ObjectiveAnalysis | None) -> str:
    """Where the brief states an slo.headroom, what it is judged on (the pools' SLO capacity with every node up,
    pools_multiple, as the verdict judges it) and that multiple, so it is not read as the headroom's first limit."""
    wanted = core.brief.slo.headroom
    if wanted is None or goal is not None or core.brief.objective.kind is not ObjectiveKind.latency:
        return ""
    pools = pools_multiple(core)
    kept = "kept" if pools >= 1 + wanted else f"short of x{num(1 + wanted)}"
    return f"; the stated {pct(wanted)} headroom is judged on the pools' SLO capacity with every node up: {times(pools)}, {kept}"


def _limits(core: _Limited, first_only: bool = False, long_context_pool: PoolLimit | None = None) -> list[PoolLimit]:
    """The closed-form limits of a design's verdict: its pools' SLO capacity or busy share, the sizing rules.
    `first_only`: only the first is read (the smallest multiple; of equal ones the first listed): a crossing searched
    (the long-context pool's, the sizing utilization's) is searched only where it can come first, at or under the
    multiples of the limits worked out before it (its multiple inf where it lies past them). `long_context_pool`: the
    long-context pool's limit as another design with the same pool worked it out (_same_long_context_pool)."""
    general = _general_limit(core)
    past = math.inf
    if first_only:  # the closed forms' multiples: the general pool's, and the KV cache's at the sizing batch
        past = min(general.multiple, 1 / core.capacity.kv_fraction if core.capacity.kv_fraction > 0 else math.inf)
        past = math.inf if math.isnan(past) else past
    long_context = _long_context_limit(core, past) if long_context_pool is None else long_context_pool
    if long_context is not None and first_only and not math.isnan(long_context.multiple):
        past = min(past, long_context.multiple)
    return [general, *([long_context] if long_context is not None else []), *_sizing_limits(core, past)]


def _n_plus_one_deadline(lost: _Limited | None) -> PoolLimit:
    """A job's N+1: the work multiple at which the design with one node lost misses the deadline."""
    worked = objective_analysis(lost.brief, lost.shape, lost.memory) if lost is not None else None
    if lost is None or worked is None:
        return PoolLimit(key="n_plus_one", name="N+1 is lost", multiple=0.0, arithmetic="with one node lost the design cannot run at all")
    limit = _deadline_limit(lost, worked)
    nodes = lost.brief.hardware.nodes
    return limit.model_copy(
        update={
            "key": "n_plus_one",
            "name": "N+1 is lost",
            "arithmetic": f"one node lost leaves {nodes} node{'s' if nodes != 1 else ''}, where {limit.name}: {limit.arithmetic}",
        }
    )


def _same_long_context_pool(a: _Limited, b: _Limited) -> bool:
    """Whether two designs' long-context pools take the same busy share at every traffic multiple
    (long_context_utilization_at: the brief's workload and hit rate, the replica, the demand and the pool's replicas):
    briefs the same but for the fleet's sizes and the traffic (core.same_but_fleet_and_traffic) with the same hit rate,
    the same replica and demand, and as many long-context nodes, busy alike at the peak."""
    return (
        a.long_context_utilization == b.long_context_utilization
        and a.shape.replica_key == b.shape.replica_key
        and a.pools.long_context_nodes == b.pools.long_context_nodes
        and (a.demand.request_rate_per_s, a.demand.generating_sequences) == (b.demand.request_rate_per_s, b.demand.generating_sequences)
        and a.brief.effective_hit_rate == b.brief.effective_hit_rate
        and same_but_fleet_and_traffic(a.brief, b.brief)
    )


def _n_plus_one_limit(lost: _Limited | None, design: tuple[_Limited, list[PoolLimit]] | None = None) -> PoolLimit:
    """The traffic multiple at which N+1 is lost: the design with one node lost (the same traffic) reaches a limit.
    `design`: the design's own core and limits, whose long-context pool's the lost design's is where the two pools are
    the same (a general-pool node lost: _same_long_context_pool), not searched again."""
    if lost is None:
        return trusted(
            PoolLimit, key="n_plus_one", name="N+1 is lost", multiple=0.0, arithmetic="with one node lost the design cannot run at all"
        )
    own = design is not None and _same_long_context_pool(design[0], lost)
    pool = next((lim for lim in design[1] if lim.key == "long_context"), None) if design is not None and own else None
    known = [lim for lim in _limits(lost, first_only=True, long_context_pool=pool) if not math.isnan(lim.multiple)]
    first = min(known, key=lambda lim: lim.multiple) if known else None
    if first is None:
        return trusted(
            PoolLimit,
            key="n_plus_one",
            name="N+1 is lost",
            multiple=math.nan,
            arithmetic="the design with one node lost has no limit to read",
        )
    return trusted(
        PoolLimit,
        key="n_plus_one",
        name="N+1 is lost",
        multiple=first.multiple,
        arithmetic=f"one node lost leaves {lost.brief.hardware.nodes} node{'s' if lost.brief.hardware.nodes != 1 else ''}, where {first.name}: {first.arithmetic}",
    )


def sizing_words(h: Headroom, utilization: float, sizing_multiple: float) -> str:
    """The worked design's sizing utilization in words, and which side it errs on: conservative where its linear load to
    100% comes before the SLO capacity, optimistic where a replica reaches its SLO capacity first (rag: 17.6% implies
    x5.67, the SLO capacity comes at x1.2 and N+1 is lost at x1.1)."""
    text = f"This is the worked design's sizing arithmetic: {pct(utilization)} of the fleet would reach 100% at {times(sizing_multiple)} if it scaled linearly"
    general = next((lim for lim in h.limits if lim.key == "general" and math.isfinite(lim.multiple)), None)
    if general is None:
        return f"{text}; the headroom is the first limit the verdict judges"
    if sizing_multiple <= general.multiple:
        return f"{text}, before {general.name} at {times(general.multiple)}: here it is the conservative figure; the headroom is the first limit the verdict judges"
    first = f" and {h.binding} at x{num(h.multiple)}" if h.binding != general.name else ""
    return (
        f"{text}, but {general.name} at {times(general.multiple)}{first}: here it is optimistic, not conservative;"
        " the headroom is the first limit the verdict judges"
    )
