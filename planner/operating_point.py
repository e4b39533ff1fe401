"""The operating point of one general-pool replica, solved once, by Little's law at the engine's own pace.

    running batch N = rate x time a request holds its slot(N)
    time held(N)    = its prefill chunk steps + (output - 1) x TPOT(N)
    TPOT(N)         = (decode step(N) + scheduler) / (1 - prefill interference(N))     planner.slo's model

An engine frees a slot when it stops generating: how fast a person reads the stream does not hold it (the
users x duty arithmetic of the Capacity page is the worked design's conservative sizing figure, not what the
engine runs). N is bounded by max-num-seqs and by the KV pool; past either, or past the prefill slot's
capacity, the replica has no steady state and the result names the limit that binds and the change that
lifts it. The SLO budget, the engine configuration, the failure table, the cost and the simulator check all
read this one point. Headroom is stated against the replica's capacity under the SLO: the highest rate at
which it still meets both targets (what `max-rate` measures with the simulator).

The worked 10-QPS design's hand relation (TPOT = step / (1 - prefill share), no overlap of prefill and
decode) is kept beside it as `seed_relation`, reproduced as the seed works it.
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from functools import cached_property, partial
from typing import Any, NamedTuple, TypeVar

from pydantic import BaseModel, ConfigDict, PrivateAttr, computed_field

from planner.brief import Brief, ObjectiveKind
from planner.cached import CachingModel
from planner.errors import BriefError
from planner.fmt import num, pct
from planner.memo import BoundedMemo
from planner.numerics import bracket_root, false_position, lowest_crossing, root_in_bracket
from planner.pools import Pools
from planner.replica import GB, ReplicaShape
from planner.slo import Pace, engine, full_batch_admission_rate, judged_p95s_ms, latency_point, pace
from planner.speculative import SpecSwitch, spec_switch
from planner.step_model import speculative_step_time_s, step_time_s
from planner.trusted import trusted

__all__ = [
    "JUST_PAST",
    "SEQS_HEADROOM",
    "Limit",
    "OperatingPoint",
    "SeedRelation",
    "context_tokens",
    "full_batch",
    "max_num_seqs_for",
    "max_num_seqs_meeting",
    "operating_point",
    "probed_around_capacity",
    "reached_at_capacity",
    "running_in_general_pool",
    "seed_capacity_rate",
    "seed_prefill_s",
    "seed_relation",
    "seed_tpot_ms",
    "slo_capacity_rate",
    "solve_running_batch",
    "steady_state",
]

_BISECTIONS = 40  # halvings of the batch range: far below any figure shown
_CAPACITY_TOLERANCE = 1e-4  # of the capacity rate: below any figure shown
_CAPACITY_PROBE = 4.0  # req/s per replica where the search starts
_CAPACITY_CEILING = 1e7  # req/s per replica: the search stops doubling past it


class Limit(StrEnum):
    """What stops a replica from keeping up with its load."""

    slots = "slots"  # max-num-seqs: every batch slot is taken and requests queue without bound
    kv = "kv"  # the KV pool: the running sequences' context does not fit
    prefill = "prefill"  # the prefill slot: prompts arrive faster than their chunk steps clear
    batched_tokens = "batched_tokens"  # max-num-batched-tokens: the decode batch the load needs leaves no room for prompts

    @property
    def words(self) -> str:
        """The limit named for a reader (the value is a code name)."""
        return _LIMIT_NAMES[self]


_LIMIT_NAMES = {
    Limit.slots: "max-num-seqs",
    Limit.kv: "the KV pool",
    Limit.prefill: "the prefill slot",
    Limit.batched_tokens: "max-num-batched-tokens",
}


class _Model(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class SeedRelation(_Model):
    """The worked designs' hand relation: TPOT = step(N) / (1 - prefill share), N = rate x (prefill + (out - 1) TPOT)."""

    prefill_ms_per_request: float
    prefill_share: float
    prefill_saturation_rate_per_s: float
    in_flight: float
    in_flight_ideal: float
    tpot_ms: float
    tpot_ideal_ms: float
    kv_in_use_gb: float
    kv_in_use_ideal_gb: float
    capacity_rate_per_s: float  # where this TPOT reaches the ITL target
    capacity_rate_ideal_per_s: float
    arithmetic: dict[str, str]


class OperatingPoint(CachingModel):
    """One general-pool replica at the share of the peak it carries (long-context and spare nodes excluded)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    general_replicas: int
    rate_per_replica_per_s: float
    in_flight: float  # sequences running (Little's law at the engine's pace); inf with no steady state
    engine_time_s: float  # how long a request holds its slot
    decode_step_ms: float
    tpot_ms: float
    prefill_slot_busy: float
    interference: float
    kv_in_use_gb: float  # replica-wide
    kv_capacity_gb: float
    memory_used_gb: float
    memory_total_gb: float
    max_running: float  # the most sequences the replica can run: max-num-seqs or the KV pool, the smaller
    capacity_rate_per_s: float  # highest rate meeting the SLO (both targets, as the brief states them)
    capacity_reached: str  # what the plan has there: the p95s that reach their targets, or the loss of a steady state
    load_vs_capacity: float
    headroom: float  # capacity / rate - 1
    stable: bool
    limit: Limit | None  # what binds when there is no steady state
    fix: str  # the smallest change that restores a steady state ("" when stable)
    # the engine setting `fix` names, as `plan --set` takes it ({}: it names nodes only)
    fix_overrides: dict[str, int]
    _seed: _SeedInputs | None = PrivateAttr(default=None)  # what seed_relation is worked out from (None: a re-plan's)
    _words: Callable[[OperatingPoint], dict[str, str]] = PrivateAttr()  # what the arithmetic is written from

    # The worked design's relation (its own solves and words) and the figures' arithmetic are worked out the first time
    # they are read (the Capacity page, the JSON, the document), not for every plan and re-plan.

    @computed_field  # type: ignore[prop-decorator]
    @cached_property
    def seed_relation(self) -> SeedRelation | None:
        """The worked design's hand relation (None in re-plans, which do not show it)."""
        return seed_relation(*self._seed) if self._seed is not None else None

    @computed_field  # type: ignore[prop-decorator]
    @cached_property
    def arithmetic(self) -> dict[str, str]:
        """Each figure's arithmetic in words, written on first read."""
        return self._words(self)

    def reworded(self, update: dict[str, Any], words: Callable[[OperatingPoint], dict[str, str]]) -> OperatingPoint:
        """A copy with `update` applied whose arithmetic is written by `words` (on first read): a design whose figures
        replace the point's (a disaggregated design's decode pool)."""
        copy = self.model_copy(update=update)
        copy._words = words
        return copy


class _SeedInputs(NamedTuple):
    """What OperatingPoint.seed_relation is worked out from."""

    brief: Brief
    shape: ReplicaShape
    rate: float  # req/s a replica


def running_in_general_pool(op: OperatingPoint) -> float:
    """Sequences the whole general pool runs at the engine's pace: one replica's running batch x its replicas."""
    return op.in_flight * op.general_replicas


def context_tokens(brief: Brief) -> tuple[float, float]:
    """(read, held) context per sequence in the worked designs' sizing arithmetic: the brief's KV-sizing context,
    else input + output/2 and input + output."""
    w = brief.workload
    if w.kv_context_tokens is not None:
        return w.kv_context_tokens, w.kv_context_tokens
    return w.input_tokens_mean + w.output_tokens_mean / 2, w.input_tokens_mean + w.output_tokens_mean


PaceFn = Callable[[float], Pace]

SEQS_HEADROOM = 0.20  # max-num-seqs above the running batch: bursts, a lost node, slower replies
SEQS_STEP = 8  # max-num-seqs rounds up to a multiple of this (vLLM's CUDA-graph batch sizes)


def max_num_seqs_for(running: float) -> int:
    """The max-num-seqs that holds `running` sequences with SEQS_HEADROOM, rounded up to SEQS_STEP."""
    return max(math.ceil(running * (1 + SEQS_HEADROOM) / SEQS_STEP) * SEQS_STEP, SEQS_STEP)


def max_num_seqs_meeting(brief: Brief, shape: ReplicaShape, rate: float, running: float) -> int:
    """max_num_seqs_for(running), raised SEQS_STEP at a time while the wait for a batch slot keeps p95 TTFT over its
    target at `rate` a replica (a fifth of requests wait at 32 slots for 26 running, 5% at 36); that value where the
    slot wait is negligible before the TTFT meets (the slots are not what misses) or more slots only preempt."""
    first = max_num_seqs_for(running)
    if brief.objective.kind is not ObjectiveKind.latency or not math.isfinite(running):
        return first
    top = max(kv_running_limit(brief, shape), first)
    seqs = first
    while seqs <= top:
        p = latency_point(brief, shape, rate, running, max_num_seqs=seqs)
        if p.ttft_p95_ms <= brief.slo.ttft_p95_ms:
            return seqs
        if p.admission_busy < _SLOT_WAIT_NEGLIGIBLE:
            return first
        seqs += SEQS_STEP
    return first


_SLOT_WAIT_NEGLIGIBLE = 1e-3  # P(a request waits for a batch slot) below which more slots cannot help its TTFT


def solve_running_batch(rate: float, pace_at: PaceFn, limit: float) -> tuple[float, Limit | None]:
    """N with N = rate x pace(N).engine_time_s, N <= limit; (inf, the limit that binds) when there is none.

    rate x time held(N) - N falls through zero once (the step grows with N far slower than N); past the batch
    where prompts no longer fit beside the decode tokens (max-num-batched-tokens) the time held is unbounded.
    """
    n, binding, _ = _solve(rate, pace_at, limit)
    return n, binding


def _solve(rate: float, pace_at: PaceFn, limit: float, hints: Sequence[float] = ()) -> tuple[float, Limit | None, float]:
    """solve_running_batch, and how near the rate is to the most the replica holds in steady state (negative with
    one, positive without, about linear in the rate near it: the larger of the excess at the top batch over that
    batch and the prefill slot's busy share at the solution less one). `hints`: batches the root is likely close to
    whose paces are cheap (a search's solutions at the nearest rates, their pace terms in hand): each on the root's
    side narrows the bracket the root is found in, to the same tolerance in fewer new paces."""
    if rate <= 0:
        return 0.0, None, -1.0
    first = pace_at(min(1.0, limit))
    if not math.isfinite(first.engine_time_s):
        return math.inf, Limit.prefill, math.inf
    if first.prefill_slot_busy >= 1:
        return math.inf, Limit.prefill, _past(first.prefill_slot_busy - 1)

    def excess(n: float) -> float:
        held = pace_at(n).engine_time_s
        return rate * held - n if math.isfinite(held) else math.inf

    top, held_top = _held_top(pace_at, limit)
    at_top = rate * held_top - top if math.isfinite(held_top) else math.inf
    if at_top > 0 and top < limit:  # the time held climbs without bound just below the token budget, not before it
        top, at_top = _holding_below(excess, min(1.0, limit), top, at_top)
    if at_top > 0:
        return math.inf, (Limit.slots if top == limit else Limit.batched_tokens), _past(at_top / top)
    low = min(1.0, limit)  # the first batch's pace is in hand: the root lies above it unless the rate is a trickle
    at_low = rate * first.engine_time_s - low
    if at_low <= 0:
        low, at_low = 0.0, excess(0.0)
        if at_low <= 0:
            return 0.0, None, -1.0
    high, at_high = top, at_top
    for x in hints:  # each on its side of the root narrows the bracket
        if low < x < high:
            at_x = excess(x)
            low, at_low, high, at_high = (x, at_x, high, at_high) if at_x > 0 else (low, at_low, x, at_x)
    # excess is smooth in N (no jump below the top): stop once the chord puts the root within xtol; its curve (the step
    # grows with N) is followed in fewer paces with Anderson-Björck's weights. The steps are part of the answer: a root is
    # good to xtol (up to ~1e-8 of the batch) and the capacity search's branch tests carry such a difference into the
    # plan (measured: every search root moved by 1e-8 moves 2,533 figures over the presets and perturbations, the worst
    # by 2.4e-5). Starts tried: the root interpolated from the nearest rates' roots, evaluated first (226 -> 273 excess
    # evaluations over the presets' searches: the hints' chord lands as close); inverse quadratic steps (218)
    n = root_in_bracket(excess, low, high, xtol=1e-9 * max(top, 1.0), f_low=at_low, f_high=at_high, smooth=True, anderson_bjorck=True)
    busy = pace_at(n).prefill_slot_busy
    near = max(at_top / top, busy - 1)
    if busy >= 1:  # the decode tokens riding in each chunk step slow prompts past the arrivals
        return math.inf, Limit.prefill, _past(near)
    return n, None, min(near, -_SATURATION_EPS)


def _nearness_at_ends(rate: float, pace_at: PaceFn, limit: float, peaks: tuple[float, ...] = ()) -> float | None:
    """_solve's measure of how near `rate` is to saturation, from the paces at the first batch, at `limit` and at the
    `peaks` (_slot_peaks) alone, no root (their rate-free terms are kept on the engine: each costs a few flops) where
    those settle it; None where the solve is needed. Past saturation where the batch at `limit` does not hold the load;
    steady, with the limit's excess over the limit as the measure, where the prefill slot is no busier at the limit and
    at the peaks than that excess + 1: its share at the root, a batch below the limit, is no higher, so the excess is
    the larger of the measure's two terms. The solve is needed where the token budget caps the batch below `limit`,
    where a trickle's root lies below one sequence, and where the slot's share may be the larger term."""
    if rate <= 0:
        return -1.0
    first = pace_at(min(1.0, limit))
    if not math.isfinite(first.engine_time_s):
        return math.inf
    if first.prefill_slot_busy >= 1:
        return _past(first.prefill_slot_busy - 1)
    at_top = pace_at(limit)
    if not math.isfinite(at_top.engine_time_s):  # the token budget's cap lies below the limit
        return None
    over = (rate * at_top.engine_time_s - limit) / limit
    if over > 0:
        return _past(over)
    busiest = at_top.prefill_slot_busy
    for n in peaks:
        busiest = max(busiest, pace_at(n).prefill_slot_busy)
    if rate * first.engine_time_s <= min(1.0, limit) or busiest - 1 > over:
        return None
    return min(over, -_SATURATION_EPS)


def _slot_peaks(spec: SpecSwitch | None, limit: float) -> tuple[float, ...]:
    """The batches below `limit` besides it where a prompt's time on the prefill slot may peak. That time grows with
    the batch: more chunks (less room beside the batch), each step's KV reads, per-sequence costs and decode compute
    (the all-reduce's share of a prompt token may fall a little where its algorithm changes, far less than those grow);
    except where speculation (`spec`) stops (its steps, longer than plain ones, end there): the last batch it runs at."""
    return (spec.off_above_batch,) if spec is not None and 1 <= spec.off_above_batch < limit else ()


_BUDGET_SCAN = 8  # batches tried below the token budget's top, evenly spaced, for one that holds the load


def _holding_below(excess: Callable[[float], float], low: float, top: float, at_top: float) -> tuple[float, float]:
    """The highest of _BUDGET_SCAN batches evenly spaced below the budget's `top` that holds the load (excess <= 0), with
    its excess: the load may settle well below where prompts run out of room (a root of a non-monotone excess); (top,
    at_top) when none does."""
    for k in range(_BUDGET_SCAN - 1, 0, -1):
        n = low + (top - low) * k / _BUDGET_SCAN
        at_n = excess(n)
        if at_n <= 0:
            return n, at_n
    return top, at_top


def _held_top(pace_at: PaceFn, limit: float) -> tuple[float, float]:
    """The largest running batch up to `limit` whose time held is finite, and that time (s): `limit`, or, where the
    token budget (max-num-batched-tokens) leaves prompts no room beside that many, the most it leaves room beside."""
    held = pace_at(limit).engine_time_s
    if math.isfinite(held):
        return limit, held
    low, high, held_low = min(1.0, limit), limit, math.nan
    for _ in range(_BISECTIONS):
        mid = (low + high) / 2
        held_mid = pace_at(mid).engine_time_s
        low, high, held_low = (mid, high, held_mid) if math.isfinite(held_mid) else (low, mid, held_low)
    return low, (pace_at(low).engine_time_s if math.isnan(held_low) else held_low)


def batch_on(brief: Brief, shape: ReplicaShape, rate: float, pace_at: PaceFn, near: float) -> tuple[float, int | None]:
    """What a plan hands its SLO budget at `rate` on the engine `pace_at` describes (the brief's replica under other
    engine limits, e.g. a trade-off curve's max-num-batched-tokens): the running batch it solves (inf without a steady
    state) and, where the token budget binds, the whole sequences it runs (full_batch's; else None). `near`: a batch
    the root is likely close to (the brief's own): secant steps from it settle in a few paces where the load is steady
    (_near_root), the full solve otherwise."""
    limit, _ = _limit_of(brief, shape)
    found = _near_root(rate, pace_at, limit, near)
    if found is not None:
        return found, None
    n, binding = solve_running_batch(rate, pace_at, limit)
    if binding is not Limit.batched_tokens:
        return n, None
    top, _ = _held_top(pace_at, limit)
    return n, int(top if top == limit else max(float(math.floor(top)), 1.0))


def _near_root(rate: float, pace_at: PaceFn, limit: float, near: float) -> float | None:
    """The root _solve finds, by secant steps on rate x time held(N) - N from `near`, where they settle within
    _NEAR_STEPS paces on a steady state _solve also has: the batch at `limit` holds the load (or its time held is
    unbounded, the token budget's cap, below which _solve looks) and the prefill slot keeps up there; None otherwise."""
    if not (rate > 0 and math.isfinite(near) and limit >= 1):
        return None
    held_top = pace_at(limit).engine_time_s
    if math.isfinite(held_top) and rate * held_top > limit:  # no steady state up to the limit: _solve's verdict
        return None
    x0 = min(max(near, 1.0), limit)
    f0 = rate * pace_at(x0).engine_time_s - x0
    x1 = min(max(x0 + f0, 1.0), limit)  # one fixed-point step: the time held moves slowly with the batch
    for _ in range(_NEAR_STEPS):
        at = pace_at(x1)
        f1 = rate * at.engine_time_s - x1
        if not (math.isfinite(f1) and math.isfinite(f0)):
            return None
        if abs(f1) <= 1e-9 * max(x1, 1.0):
            return x1 if at.prefill_slot_busy < 1 else None
        x2 = x1 - f1 * (x1 - x0) / (f1 - f0) if f1 != f0 else x1 + f1
        if not 0 < x2 <= limit:
            return None
        x0, f0, x1 = x1, f1, x2
    return None


_NEAR_STEPS = 8  # secant steps _near_root takes before it leaves the root to the full solve


def full_batch(brief: Brief, shape: ReplicaShape, rate: float) -> float:
    """The batch a replica without a steady state runs, full at the limit that binds: max-num-seqs or what the KV pool
    holds, or, where max-num-batched-tokens leaves prompts no room beside that many, the whole sequences it does."""
    limit, _ = _limit_of(brief, shape)
    top, _ = _held_top(_pace_fn(brief, shape, rate), limit)
    return top if top == limit else max(float(math.floor(top)), 1.0)


_SATURATION_EPS = 1e-300  # keeps the measure's sign strict: zero is neither side


def _past(measure: float) -> float:
    return max(measure, _SATURATION_EPS)


def _pace_fn(brief: Brief, shape: ReplicaShape, rate: float) -> PaceFn:
    eng = engine(brief, shape)
    return lambda n: eng.pace(rate, n)


def kv_running_limit(brief: Brief, shape: ReplicaShape) -> float:
    """Sequences whose running context fits the replica's KV pool."""
    return shape.kv_capacity_tokens / brief.running_context_tokens


def _limit_of(brief: Brief, shape: ReplicaShape) -> tuple[float, Limit]:
    kv = kv_running_limit(brief, shape)
    seqs = float(brief.deployment.max_num_seqs)
    return (seqs, Limit.slots) if seqs <= kv else (kv, Limit.kv)


def _steady(brief: Brief, shape: ReplicaShape, rate: float) -> tuple[float, Limit | None]:
    n, binding, _ = _steady_paces(brief, shape, rate)
    return n, binding


def _steady_paces(brief: Brief, shape: ReplicaShape, rate: float) -> tuple[float, Limit | None, dict[float, Pace]]:
    """_steady, and the paces the solve worked out by running batch (the solution's among them: its last check)."""
    _, which = _limit_of(brief, shape)
    n, binding, _, paces = _solved(brief, shape, rate)
    return n, (which if binding is Limit.slots else binding), paces


class _Solved(NamedTuple):
    """One running-batch solve at a rate (_solve's answer) and the paces it worked out, by running batch."""

    running_batch: float
    binding: Limit | None
    nearness: float  # to the most the replica holds in steady state: negative with one
    paces: dict[float, Pace]


def _solved(brief: Brief, shape: ReplicaShape, rate: float, seen: _SearchSolves | None = None) -> _Solved:
    """_solve at `rate` on the brief's own engine, worked out once per engine and rate: the capacity search's saturation
    measure and its probe at the same rate, the operating point of each core design and the clause at the capacity all
    ask for the same solves. Kept on the engine (bounded), which lives as long as its replica. `seen`: the solves a
    search has made so far (this one's added): the solve starts from the batches they worked out (_SearchSolves.hints),
    so its answer follows from the search's own probes, not from which solves the engine kept before."""
    eng = engine(brief, shape)
    key = ("solve", rate)
    solved: _Solved | None = eng.memo.get(key)
    if solved is None:
        limit, _ = _limit_of(brief, shape)
        paces: dict[float, Pace] = {}

        def kept(n: float) -> Pace:
            at = paces.get(n)
            if at is None:
                at = paces[n] = eng.pace(rate, n)
            return at

        if len(eng.memo) >= _SOLVES_PER_ENGINE:
            eng.memo.clear()
        solved = eng.memo[key] = _Solved(*_solve(rate, kept, limit, seen.hints(rate) if seen else ()), paces)
    if seen is not None:
        seen.add(rate, solved)
    return solved


@dataclass
class _SearchSolves:
    """The running-batch solves a capacity search has made: the root at each rate solved, and every batch their paces
    were worked out at, sorted (those batches' rate-free pace terms are kept on the engine: a solve at another rate
    evaluates its excess there for a few flops, where a new batch works out a step and a prompt's service)."""

    roots: dict[float, float] = field(default_factory=dict)
    batches: list[float] = field(default_factory=list)

    def add(self, rate: float, solved: _Solved) -> None:
        self.roots[rate] = solved.running_batch
        self.batches = sorted({*self.batches, *solved.paces})

    def hints(self, rate: float) -> tuple[float, ...]:
        """Batches the root at `rate` is likely close to, for _solve's bracket: the two batches worked out on either side
        of where the roots at the nearest rates below and above with a steady state put it (the batch grows about
        linearly with the rate), then those roots (the root lies between them)."""
        steady = [(r, n) for r, n in self.roots.items() if math.isfinite(n)]
        below = max([at for at in steady if at[0] < rate], default=None)
        above = min([at for at in steady if at[0] > rate], default=None)
        near = [at for at in (below, above) if at is not None]
        if len(near) == 2:
            (r_below, n_below), (r_above, n_above) = near
            guess = n_below + (n_above - n_below) * (rate - r_below) / (r_above - r_below)
        elif near:
            ((r_near, n_near),) = near
            guess = n_near * rate / r_near
        else:
            return ()
        nearest = tuple(n for _, n in near)
        i = bisect.bisect(self.batches, guess)
        return (*self.batches[max(i - 1, 0) : i + 1], *nearest)


_SOLVES_PER_ENGINE = 256


def steady_state(brief: Brief, shape: ReplicaShape, rate: float) -> tuple[float, Limit | None]:
    """The running batch at `rate` per replica, and the limit that binds when there is no steady state: the solve
    operating_point() starts from, without the figures around it."""
    return _steady(brief, shape, rate)


def _slo_margin(brief: Brief, shape: ReplicaShape, rate: float) -> float:
    """log of the worse of p95 TTFT / target and the judged p95 ITL / target at `rate`: <= 0 meets both."""
    return _margin_of(brief, _p95s_at(brief, shape, rate))


_UNKNOWN = (math.nan, math.nan)  # p95s not worked out yet


def _p95s_at(brief: Brief, shape: ReplicaShape, rate: float, known: tuple[float, float] = _UNKNOWN) -> tuple[float, float]:
    """(p95 TTFT, the judged p95) in ms of one replica at `rate` (inf, inf without a steady state); a p95 `known` (not
    nan: the capacity search worked it out there) is not worked out again."""
    if not (math.isnan(known[0]) or math.isnan(known[1])):
        return known
    return _filled(brief, shape, rate, _steady(brief, shape, rate)[0], known)[0]


def _filled(
    brief: Brief, shape: ReplicaShape, rate: float, n: float, known: tuple[float, float], needed: tuple[bool, bool] = (True, True)
) -> tuple[tuple[float, float], float]:
    """The p95s `known` at `rate` (nan: not worked out there), with those `needed` and not known worked out (n running:
    inf without a steady state), and the share of token gaps on mixed steps where the token gap's p95 was worked out
    here (judged_p95s_ms), else nan."""
    missing = (needed[0] and math.isnan(known[0]), needed[1] and math.isnan(known[1]))
    if not any(missing):
        return known, math.nan
    worked = judged_p95s_ms(engine(brief, shape), brief, rate, n, missing) if math.isfinite(n) else (math.inf, math.inf, math.nan)
    return ((worked[0] if missing[0] else known[0]), (worked[1] if missing[1] else known[1])), worked[2]


def _margin_of(brief: Brief, p95s_ms: tuple[float, float]) -> float:
    """_slo_margin from the p95s (slo.slo_margin's ratio: the worse of each p95 over its target)."""
    ttft_ms, judged_ms = p95s_ms
    worst = max(ttft_ms / brief.slo.ttft_p95_ms, judged_ms / brief.slo.itl_p95_ms)
    return math.log(worst) if math.isfinite(worst) and worst > 0 else _NO_STEADY_MARGIN


_NO_STEADY_MARGIN = math.inf  # an unbounded latency: the capacity search bisects towards where it starts
REACHES_TARGET = 0.95  # a p95 at this share of its target or more at the capacity rate is one that binds there
JUST_PAST = 1 + 4 * _CAPACITY_TOLERANCE  # a rate just past the capacity, beyond the search's bracket


def reached_at_capacity(brief: Brief, at_ms: tuple[float, float], past_ms: tuple[float, float] | Callable[[], tuple[float, float]]) -> str:
    """What the plan has at the capacity rate, a clause in words, from (p95 TTFT, the judged p95) there and just past it:
    the p95s that reach their targets there and not before (the one nearer its target first), else the jump past it.
    `past_ms` may be a function that works those out: it is asked only where no p95 reaches its target at the capacity
    (a solve and two quantiles the usual clause does not read)."""
    targets = (brief.slo.ttft_p95_ms, brief.slo.itl_p95_ms)
    names = ("p95 TTFT", f"p95 {brief.slo.itl_metric.value.upper()}")
    order = sorted(range(2), key=lambda i: -at_ms[i] / targets[i])
    reached = [i for i in order if at_ms[i] >= REACHES_TARGET * targets[i]]
    if reached:
        parts = (
            f"{names[i]} {'reaches its' if k == 0 else 'its'} {num(targets[i], 'ms')} target ({num(at_ms[i], 'ms')})"
            for k, i in enumerate(reached)
        )
        return f"there {' and '.join(parts)}, not before"
    under = ", ".join(f"{names[i]} {num(at_ms[i], 'ms')} of {num(targets[i], 'ms')}" for i in order)
    past_ms = past_ms() if callable(past_ms) else past_ms
    if not all(math.isfinite(v) for v in past_ms):
        return f"both p95s stay under their targets up to it ({under}); just past it the replica loses its steady state (the queue grows without bound)"
    jumped = " and ".join(f"{names[i]} to {num(past_ms[i], 'ms')}" for i in order if past_ms[i] > targets[i])
    return f"both p95s stay under their targets up to it ({under}); just past it they jump: {jumped}"


def _reached(brief: Brief, shape: ReplicaShape, capacity: float, at_capacity_ms: tuple[float, float] | None) -> str:
    """reached_at_capacity for one replica of `shape` at its SLO capacity ("" where there is no such rate), with the
    p95s there when the search has them in hand."""
    if not 0 < capacity < _CAPACITY_CEILING:
        return ""
    at = _p95s_at(brief, shape, capacity, at_capacity_ms or _UNKNOWN)
    return reached_at_capacity(brief, at, lambda: _p95s_at(brief, shape, capacity * JUST_PAST))


def slo_capacity_rate(brief: Brief, shape: ReplicaShape) -> float:
    """Highest rate per replica at which it meets both targets (0 when even a trickle misses one).

    It depends on the replica and the traffic's shape, not on the fleet or the load: re-plans that only move
    nodes or traffic (failure scenarios) reuse it.
    """
    return _slo_capacity(brief, shape)[0]


def _slo_capacity(brief: Brief, shape: ReplicaShape) -> tuple[float, str]:
    """slo_capacity_rate and what is reached there (_reached), each worked out once: the rate once a capacity key, the
    clause once a key and first-token path (a KV reload's or an adapter load's share follows the fleet and the load,
    which the key leaves out, and the clause states the p95s of the brief that asks)."""
    path = engine(brief, shape).extra_ttft_s
    key = _capacity_key(brief, shape, path)
    at_capacity = None
    kept = _CAPACITIES.get(key)  # one lookup: the key hashes the brief's sections
    if kept is None:
        if len(_CAPACITIES) >= _CAPACITY_CACHE_SIZE:
            _CAPACITIES.clear()
        capacity, at_capacity, probed = _capacity_search(brief, shape)
        kept = _CAPACITIES[key] = (capacity, {}, probed)
    capacity, reached, _ = kept
    if path not in reached:
        reached[path] = _reached(brief, shape, capacity, at_capacity)
    return capacity, reached[path]


def probed_around_capacity(brief: Brief, shape: ReplicaShape) -> ProbedBounds | None:
    """The highest rate the SLO-capacity search of this replica and traffic's shape found both p95s meeting at, and the
    lowest it found one over at (a p95 rises with the rate, as the search takes it: every rate up to the first meets,
    every rate from the second misses); None where that search is not kept."""
    kept = _CAPACITIES.get(_capacity_key(brief, shape, engine(brief, shape).extra_ttft_s))
    return kept[2] if kept is not None else None


class ProbedBounds(NamedTuple):
    """The capacity search's probes nearest its answer on each side (probed_around_capacity)."""

    met_rate_per_s: float  # the highest rate probed where both p95s meet (-inf: none)
    missed_rate_per_s: float  # the lowest rate probed where a p95 is over its target (inf: none)


_CAPACITIES: dict[tuple[object, ...], tuple[float, dict[float, str], ProbedBounds]] = {}  # key -> (rate, clause by
# first-token extra, the probes around the rate)
_CAPACITY_CACHE_SIZE = 512


def _capacity_key(brief: Brief, shape: ReplicaShape, extra_ttft_s: float) -> tuple[object, ...]:
    """Everything slo_capacity_rate reads: the replica (not how many) and the brief's shape of traffic, limits and SLO,
    and the mechanisms that add to the first token's path (KV tiers, the vision encoder, adapter loads: `extra_ttft_s`,
    the p95 request's, as the engine has it)."""
    w, dep = brief.workload, brief.deployment
    lengths = (w.input_tokens_mean, w.input_tokens_p95, w.output_tokens_mean, w.output_tokens_p95, w.kv_context_tokens)
    limits = (dep.max_num_seqs, dep.max_num_batched_tokens, dep.chunked_prefill, dep.max_model_len)
    return (
        shape.replica_key,  # not how many: the load's share changes with that, not the capacity
        lengths,
        brief.effective_hit_rate,
        limits,
        brief.slo,
        brief.latency,
        brief.speculative,
        brief.kv_tiers,
        brief.multimodal,
        brief.lora,
        extra_ttft_s,  # a KV reload's share follows the tiers' capacity, which grows with the nodes
    )


def _capacity_search(brief: Brief, shape: ReplicaShape) -> tuple[float, tuple[float, float] | None, ProbedBounds]:
    """The SLO capacity rate, the p95s there (each probe's p95s kept: a capacity inside the search's range is one
    of its probes, which may have worked out one p95 only, the other nan or the bound _clause_p95s puts in its place;
    None otherwise) and the probes nearest it on each side (probed_around_capacity)."""
    probed: dict[float, tuple[float, float]] = {}
    met, missed = -math.inf, math.inf  # the highest rate probed meeting both targets, the lowest with one over
    shares: dict[float, float] = {}  # the share of token gaps on mixed steps where the token gap's p95 was worked out
    solved = _SearchSolves()  # the next solves start from the batches those before worked out
    targets = (brief.slo.ttft_p95_ms, brief.slo.itl_p95_ms)
    limit, _ = _limit_of(brief, shape)
    eng = engine(brief, shape)
    peaks = _slot_peaks(eng.spec, limit)

    def saturation(rate: float) -> float:
        """_solve's nearness at `rate`: from the paces at a few batches where those settle it (_nearness_at_ends),
        else by the running-batch solve (kept for a probe at the same rate)."""
        at_ends = _nearness_at_ends(rate, partial(eng.pace, rate), limit, peaks)
        return at_ends if at_ends is not None else _solved(brief, shape, rate, solved).nearness

    def probe(rate: float, needed: tuple[bool, bool] = (True, True)) -> tuple[tuple[float, float], float]:
        """The p95s at `rate` (those `needed` at least; nan for one not worked out there) and its distance from
        saturation; each p95 worked out is kept, for the clause on what is reached at the capacity."""
        n, _, near, _ = _solved(brief, shape, rate, solved)
        probed[rate], share = _filled(brief, shape, rate, n, probed.get(rate, _UNKNOWN), needed)
        if not math.isnan(share):
            shares[rate] = share
        return probed[rate], near

    def overs(rate: float, needed: tuple[bool, ...] = (True, True)) -> tuple[float, float]:
        """How far each p95 is over its target (<= 0 meets): the TTFT's (p95 / target - 1) x the rate's distance from
        saturation (its queue's wait climbs like 1 / that distance: near-linear in the rate there), the token gap's
        p95 / target - 1 (a step's cost grows about linearly with the batch). A p95 not `needed` (it meets at a higher
        rate already) is not worked out: -inf."""
        nonlocal met, missed
        (ttft_ms, judged_ms), near = probe(rate, (needed[0], needed[1]))
        if near >= 0:
            missed = rate if rate < missed else missed
            return math.inf, math.inf
        ttft_over = (ttft_ms / targets[0] - 1) * -near if needed[0] else -math.inf
        judged_over = judged_ms / targets[1] - 1 if needed[1] else -math.inf
        if ttft_over > 0 or judged_over > 0:  # kept as missed, or met (a p95 not needed meets at a higher rate)
            missed = rate if rate < missed else missed
        elif ttft_over <= 0 and judged_over <= 0:
            met = rate if rate > met else met
        return ttft_over, judged_over

    def margin(rate: float) -> float:
        nonlocal met, missed
        worst = _margin_of(brief, probe(rate)[0])
        if worst > 0:
            missed = rate if rate < missed else missed
        elif worst <= 0:
            met = rate if rate > met else met
        return worst

    def knees(rate: float) -> tuple[float, float]:
        """Each p95's knee coordinate at a rate probed (lowest_crossing's `knees`): the token gap's p95 sits on the
        decode steps while the share of gaps on mixed steps is under 1 - its quantile, and climbs (or jumps) past it:
        ln(share / _KNEE_SHARE), near-linear in the rate (the share grows about as a power of it); nan for the TTFT and
        where the share was not worked out."""
        share = shares.get(rate, math.nan)
        return math.nan, math.log(share / _KNEE_SHARE) if share > 0 else math.nan

    capacity = _capacity_rate_search(saturation, overs, margin, knees)
    return capacity, _clause_p95s(probed, capacity, targets), ProbedBounds(met, missed)


def _clause_p95s(probed: dict[float, tuple[float, float]], capacity: float, targets: tuple[float, float]) -> tuple[float, float] | None:
    """The p95s the capacity search worked out at `capacity` (None: not a rate it probed), for the clause on what is
    reached there (reached_at_capacity). Where one was not worked out there (it met at a higher rate) and the other
    reaches REACHES_TARGET of its target, the first stands as its least value at the higher rates probed when that is
    under REACHES_TARGET of its target: it is no higher at the capacity (a p95 rises with the rate, as the search takes
    it), so the clause names the other alone and the p95 it would work out is not needed."""
    at = probed.get(capacity)
    if at is None:
        return None
    for i, other in ((0, 1), (1, 0)):
        if math.isnan(at[i]) and at[other] >= REACHES_TARGET * targets[other]:
            above = math.inf
            for rate, p95s in probed.items():
                if rate > capacity and p95s[i] < above:  # a nan (not worked out there) is never less
                    above = p95s[i]
            if above < REACHES_TARGET * targets[i]:
                at = (above, at[1]) if i == 0 else (at[0], above)
    return at


def _capacity_rate_search(
    saturation: Callable[[float], float],
    overs: Callable[[float, tuple[bool, ...]], tuple[float, float]],
    margin: Callable[[float], float],
    knees: Callable[[float], tuple[float, float]] | None = None,
) -> float:
    """The highest rate at which both p95s meet their targets, to _CAPACITY_TOLERANCE (`overs`: how far each is over
    its target, <= 0 where it meets; `margin`: the worse of them as a log ratio, for a replica steady at any rate).

    The p95s meet their targets up to a rate at or short of where the replica loses its steady state (the queues grow
    without bound): that rate is narrowed first, on the saturation measure (a few paces a probe where the batch at the
    limit settles it, else one running-batch solve; no latency quantiles), and the p95s are looked at on the way, at each steady rate near it (_toward_saturation): the first where
    one is over ends the narrowing. Below it the two p95s are followed each on its own (the worse of the two changes
    hands close to where it crosses: a kink that chord steps cross slowly) and the lower crossing is the answer (`knees`:
    where each p95 leaves a flat stretch, lowest_crossing's)."""
    # a fixed start: the answer depends on the replica, not on who asked first
    low = high = _CAPACITY_PROBE
    s_low = s_high = saturation(_CAPACITY_PROBE)
    if s_low < 0:
        # the measure is about rate / saturation - 1: where it says saturation is (a measure of -1, no load at all: doubled)
        high = _CAPACITY_PROBE / (1 + s_low) if s_low > -1 else 2 * _CAPACITY_PROBE
        s_high = saturation(high)
        while s_high < 0:
            low, s_low = high, s_high
            high *= 2
            if high > _CAPACITY_CEILING:
                return _margin_search(margin, _CAPACITY_PROBE)  # steady at any rate: the latency alone says where
            s_high = saturation(high)
    else:
        descended = _descend(saturation, low, s_low, 4, lambda s: s > 0)
        if descended is None:
            return 0.0
        low, s_low, high, s_high = descended
    meets, (steady, at_steady), past = _toward_saturation(saturation, overs, (low, s_low), (high, s_high))
    if max(at_steady) <= 0:  # both p95s meet a percent short of saturation: the capacity lies this close to it
        meets = (steady, at_steady)
        steady, _ = bracket_root(saturation, steady, past, xtol=_CAPACITY_TOLERANCE * high)
        at_steady = overs(steady, _BOTH)
        if max(at_steady) <= 0:
            return steady
        return lowest_crossing(overs, meets, (steady, at_steady), 0.0, _CAPACITY_TOLERANCE, knees=knees)
    # below a rate where a p95 meets it meets too: only those still over at the high end are worked out from here
    for share in _SHORT_OF_SATURATION:  # a p95 unbounded near saturation: a chord needs a finite end short of it
        short = steady * (1 - share)
        if not math.isinf(max(at_steady)) or (meets is not None and short <= meets[0]):
            break
        at_short = overs(short, _over(at_steady))
        if max(at_short) <= 0:
            return lowest_crossing(overs, (short, at_short), (steady, at_steady), 0.0, _CAPACITY_TOLERANCE, knees=knees)
        steady, at_steady = short, at_short
    if meets is not None:  # a steady rate near saturation met both targets: the crossing lies above it
        return lowest_crossing(overs, meets, (steady, at_steady), 0.0, _CAPACITY_TOLERANCE, knees=knees)
    below_at, (steady, at_steady), walked = _walk_down(overs, (steady, at_steady))
    if below_at is not None:
        return lowest_crossing(overs, below_at, (steady, at_steady), 0.0, _CAPACITY_TOLERANCE, walked, knees)
    below = min(low, steady / 2)
    at_below = overs(below, _over(at_steady))
    if max(at_below) > 0:
        down = _descend(lambda rate: overs(rate, _over(at_steady)), below, at_below, 2, lambda v: max(v) > 0)
        if down is None:
            return 0.0
        below, at_below, steady, at_steady = down
    return lowest_crossing(overs, (below, at_below), (steady, at_steady), 0.0, _CAPACITY_TOLERANCE, knees=knees)


_Probe = tuple[float, tuple[float, float]]  # a rate and how far each p95 is over its target there


def _toward_saturation(
    saturation: Callable[[float], float],
    overs: Callable[[float, tuple[bool, ...]], tuple[float, float]],
    low_at: tuple[float, float],
    high_at: tuple[float, float],
) -> tuple[_Probe | None, _Probe, float]:
    """Narrows the saturation bracket [low, high] (the measure < 0 at low, > 0 at high) by regula falsi (Illinois, a
    bisection whenever three steps have not halved it), looking at both p95s at each steady end within
    _NEAR_SATURATION of saturation: until one is over there (that end is then the crossing's high end: the p95s need
    not be followed closer to saturation) or the bracket is within _SATURATION_FIRST. Returns the highest rate seen to
    meet both targets (None: none looked at), the last steady end with its p95s, and the bracket's end past saturation."""
    (low, s_low), (high, s_high) = low_at, high_at
    meets: _Probe | None = None
    looked = False  # the p95s at the bracket's steady end are in hand
    w_low, w_high, kept = s_low, s_high, 0  # each end's measure as the chord weighs it
    checkpoint, steps = high - low, 0
    xtol = _SATURATION_FIRST * high
    while True:
        near_enough = s_low >= -_NEAR_SATURATION or high - low <= xtol
        if near_enough and not looked:
            at_low = overs(low, _BOTH)
            if max(at_low) > 0:
                return meets, (low, at_low), high
            meets, looked = (low, at_low), True
        if high - low <= xtol:
            assert meets is not None  # looked at just above
            return meets, meets, high
        steps += 1
        slow = steps == 3 and high - low > checkpoint / 2
        if steps == 3:
            checkpoint, steps = high - low, 0
        # a chord step lands at least xtol / 2 inside the bracket: a root next to an end is then closed in one step
        x = (low + high) / 2 if slow else min(max(false_position(low, high, w_low, w_high), low + xtol / 2), high - xtol / 2)
        s_x = saturation(x)
        if s_x > 0:
            w_low = w_low / 2 if kept == -1 else w_low  # Illinois: an end kept twice is weighed half
            high, s_high, w_high, kept = x, s_x, s_x, -1
        else:
            w_high = w_high / 2 if kept == +1 else w_high
            low, s_low, w_low, kept, looked = x, s_x, s_x, +1, False


def _walk_down(
    overs: Callable[[float, tuple[bool, ...]], tuple[float, float]], high_at: _Probe
) -> tuple[_Probe | None, _Probe, list[_Probe]]:
    """From a rate where a p95 is over its target, the steps down to the first rate where both meet, each guessed from
    what is in hand (a chord from far below creeps up on a p95 that turns up steeply just before its crossing): first
    each p95's own guess (_first_guess), then for each p95 still over, its secant through the last two rates, reached
    _WALK_REACH times as far (a p95 curves up toward saturation: its secant from above falls short of the crossing).
    Returns (the rate that meets with its overs, or None: _WALK_STEPS rates still over, or a secant that more than halves
    the rate, which halvings serve as well; the lowest rate seen over, with its overs; the walk's own rates over before
    that one, with the token gap's overs alone, the TTFT's nan). The crossing's first pole fit for the token gap may pass
    through those (offline-batch: a probe fewer); not through the rate the walk starts from, near saturation, where the
    gap's p95 may sit on its plateau, far from the crossing's curve; nor the TTFT's (measured: no probe fewer)."""
    high, at_high = high_at
    walked: list[_Probe] = []
    rate = min(_first_guess(high, at_high))
    for _ in range(_WALK_STEPS):
        at_rate = overs(rate, _over(at_high))
        if max(at_rate) <= 0:
            return (rate, at_rate), (high, at_high), walked
        if high < high_at[0]:  # not the rate the walk starts from
            walked.append((high, (math.nan, at_high[1])))
        guess = min(_secant_guess((high, v_high), (rate, v)) for v_high, v in zip(at_high, at_rate, strict=True) if v > 0)
        high, at_high = rate, at_rate
        step = rate - _WALK_REACH * (rate - guess)
        if step <= rate / 2:  # the crossing is far below, or the p95 no guide to it: halvings from here
            break
        rate = step
    return None, (high, at_high), walked


def _first_guess(rate: float, at: tuple[float, float]) -> tuple[float, ...]:
    """Where each p95 over its target at `rate` may meet it: the TTFT a percent lower (its queue's wait takes off in the
    last few percent before saturation, where it crosses), the token gap as close when it is within _GAP_NEAR of its
    target (it climbs as steeply there), else at rate / sqrt(p95 / target) (its step grows more slowly than the load);
    half the rate for an unbounded p95."""
    ttft_over, gap_over = at
    guesses = []
    if ttft_over > 0:
        guesses.append(rate * (1 - _FIRST_STEP) if math.isfinite(ttft_over) else rate / 2)
    if gap_over > 0:
        if gap_over < _GAP_NEAR:
            guesses.append(rate * (1 - _FIRST_STEP))
        else:
            guesses.append(rate / math.sqrt(1 + gap_over) if math.isfinite(gap_over) else rate / 2)
    return tuple(guesses)


def _secant_guess(high_at: tuple[float, float], low_at: tuple[float, float]) -> float:
    """Where the secant through a p95's overs at two rates (both over) crosses 0; half the lower rate where the overs do
    not fall with the rate or one is unbounded."""
    (high, v_high), (low, v_low) = high_at, low_at
    if not (math.isfinite(v_high) and math.isfinite(v_low) and v_high > v_low):
        return low / 2
    return low - v_low * (high - low) / (v_high - v_low)


_FIRST_STEP = 0.01  # of the rate: the walk's first step down for a p95 that crosses close below
_GAP_NEAR = 0.1  # a token gap's p95 / target - 1 under which it crosses close below, as the TTFT does
_WALK_REACH = 1.5  # the walk's step as a multiple of the secant's
_WALK_STEPS = 4  # rates the walk tries before it hands over to halvings
_NEAR_SATURATION = 0.15  # of the saturation measure (about rate / saturation - 1): steady rates this close have their p95s looked at


def _over(values: tuple[float, ...]) -> tuple[bool, ...]:
    """Which of the p95s' overs are over 0: the p95s a lower rate needs worked out (the others meet there too)."""
    return tuple(v > 0 for v in values)


def _descend(
    f: Callable[[float], _V], rate: float, value: _V, factor: float, over: Callable[[_V], bool]
) -> tuple[float, _V, float, _V] | None:
    """From `rate`, whose `value` is `over`, divided by `factor` until it is not: (that rate, its value, the last rate
    over, its value); None below _LOWEST_RATE (nothing meets). Two divisions still over, _LOWEST_RATE is tried once: a
    replica that misses even a trickle's target is told in one probe, not in the ~20 divisions down to it."""
    high, at_high = rate, value
    divisions = 0
    while over(value):
        high, at_high = rate, value
        rate /= factor
        if rate < _LOWEST_RATE:
            return None
        divisions += 1
        if divisions == _FLOOR_AFTER and rate > _LOWEST_RATE and over(f(_LOWEST_RATE)):
            return None
        value = f(rate)
    return rate, value, high, at_high


_FLOOR_AFTER = 2  # divisions _descend makes before it asks whether even _LOWEST_RATE is over


def _margin_search(margin: Callable[[float], float], probe: float) -> float:
    """The highest rate whose margin meets: doubled from `probe` until it fails, quartered until it meets, then
    narrowed to _CAPACITY_TOLERANCE of the end that meets (the answer lies above it)."""
    low = high = probe
    m_low = m_high = margin(probe)
    while m_high <= 0:
        low, m_low = high, m_high
        high *= 2
        if high > _CAPACITY_CEILING:
            return high
        m_high = margin(high)
    if m_low > 0:
        descended = _descend(margin, low, m_low, 4, lambda m: m > 0)
        if descended is None:
            return 0.0
        low, m_low, high, m_high = descended
    meets, _ = bracket_root(margin, low, high, xtol=_CAPACITY_TOLERANCE * low, f_low=m_low, f_high=m_high)
    return meets  # the bracket's end that meets the SLO: its other end may be past a jump to an unbounded latency


_BOTH = (True, True)  # both p95s worked out
_KNEE_SHARE = 1 - 0.95  # the share of token gaps on mixed steps past which the token gap's p95 leaves the decode steps
_SATURATION_FIRST = 1e-2  # of the rate: how closely saturation is found before the p95s are looked at
_SHORT_OF_SATURATION = (1e-3, 1e-2, 0.1)  # of the rate: where a p95 unbounded at saturation is looked at next
_V = TypeVar("_V")  # a probe's value: a margin, a saturation measure or the p95s' overs
_LOWEST_RATE = 1e-6  # req/s per replica: a replica that meets nothing above it has no capacity


def operating_point(
    brief: Brief, shape: ReplicaShape, pools: Pools, request_rate: float, with_capacity: bool = True, with_seed: bool = True
) -> OperatingPoint:
    """One general-pool replica carrying its share of the peak `request_rate` (req/s, the whole fleet's).

    Re-plans skip what they do not read: `with_capacity=False` the SLO-capacity search (its fields are then NaN, and
    a fix that adds nodes does not count them), `with_seed=False` the worked design's relation."""
    rate = pools.general_rate_per_replica(request_rate)
    limit, _ = _limit_of(brief, shape)
    n, binding, paces = _steady_paces(brief, shape, rate)
    stable = binding is None
    held = n if stable else (full_batch(brief, shape, rate) if binding is Limit.batched_tokens else limit)
    # without a steady state the full batch admits prompts only as fast as its sequences finish: their interference
    admitted = rate if stable else full_batch_admission_rate(engine(brief, shape), rate, held)
    at = paces[held] if stable and held in paces else pace(brief, shape, admitted, held)
    if not stable:  # the prefill slot's load is the offered prompts', as the SLO budget's (the queue in front grows)
        at = at._replace(prefill_slot_busy=rate * at.slot_service_ms / 1e3)
    capacity, reached = _slo_capacity(brief, shape) if with_capacity else (math.nan, "")
    kv_gb = n * brief.running_context_tokens * shape.kv_bytes_per_token / GB
    kv_cap_gb = shape.kv_capacity_tokens * shape.kv_bytes_per_token / GB
    weights_gb = shape.weights_bytes / GB
    fix, fix_overrides = ("", {}) if stable else _fix(brief, shape, pools, request_rate, binding, capacity)
    point = trusted(
        OperatingPoint,
        general_replicas=pools.general_replicas,
        rate_per_replica_per_s=rate,
        in_flight=n,
        engine_time_s=at.engine_time_s,  # without a steady state: a running request's, the batch full at the limit
        decode_step_ms=at.decode_step_ms,
        tpot_ms=at.tpot_ms,  # the SLO budget's TPOT p50 at the same batch: the full batch's without a steady state
        prefill_slot_busy=at.prefill_slot_busy,
        interference=at.interference,
        kv_in_use_gb=kv_gb,
        kv_capacity_gb=kv_cap_gb,
        memory_used_gb=weights_gb + kv_gb,
        memory_total_gb=shape.gpu.memory_gb * shape.gpus,
        max_running=limit,
        capacity_rate_per_s=capacity,
        capacity_reached=reached,
        load_vs_capacity=rate / capacity if capacity > 0 else math.inf,
        headroom=capacity / rate - 1 if rate > 0 else math.inf,
        stable=stable,
        limit=binding,
        fix=fix,
        fix_overrides=fix_overrides,
    )
    point._seed = _SeedInputs(brief, shape, rate) if with_seed else None
    point._words = _PointText(brief, shape, pools, request_rate, at, limit if stable else held, admitted)
    return point


@dataclass(frozen=True)
class _PointText:
    """What OperatingPoint.arithmetic is written from besides the point's own figures."""

    brief: Brief
    shape: ReplicaShape
    pools: Pools
    request_rate: float  # req/s, the whole fleet's
    at: Pace  # the pace the figures are read at: the running batch's, or the full batch's without a steady state
    batch_limit: float  # the most sequences the load is quoted against: max_running, or the full batch the limit allows
    admitted: float  # req/s the batch takes prompts at: the rate, or as fast as the full batch's sequences finish

    def __call__(self, op: OperatingPoint) -> dict[str, str]:
        brief, shape, at = self.brief, self.shape, self.at
        rate, n, binding, capacity = op.rate_per_replica_per_s, op.in_flight, op.limit, op.capacity_rate_per_s
        kv_gb, kv_cap_gb, weights_gb = op.kv_in_use_gb, op.kv_capacity_gb, shape.weights_bytes / GB
        reached = op.capacity_reached
        return {
            "rate_per_replica_per_s": self.pools.general_rate_text(self.request_rate),
            "in_flight": _in_flight_text(brief, rate, at, n, self.batch_limit, binding),
            "tpot_ms": _tpot_text(brief, at, binding, self.admitted),
            "kv_in_use_gb": (
                f"{num(n)} running x {num(brief.running_context_tokens, 'tokens')} (mean prompt + half the reply in progress, size-biased)"
                f" x {num(shape.kv_bytes_per_token / 1024, 'KiB')} = {num(kv_gb, 'GB')} of the {num(kv_cap_gb, 'GB')} KV pool"
                f" ({pct(kv_gb / kv_cap_gb) if kv_cap_gb > 0 else 'none'})"
            ),
            "memory_used_gb": f"{num(weights_gb, 'GB')} weights + {num(kv_gb, 'GB')} KV = {num(weights_gb + kv_gb, 'GB')} of {num(op.memory_total_gb, 'GB')}",
            "capacity_rate_per_s": (
                f"the highest rate at which one replica still meets p95 TTFT <= {num(brief.slo.ttft_p95_ms, 'ms')} and p95"
                f" {brief.slo.itl_metric.value.upper()} <= {num(brief.slo.itl_p95_ms, 'ms')} (searched on the same model to 0.01%) = {num(capacity, 'req/s')}"
                f"{f': {reached}' if reached else ''}; the load is {pct(rate / capacity) if capacity > 0 else 'beyond it'}"
                + ("" if brief.objective.kind is ObjectiveKind.latency else " (targets for reference: the deadline judges this design)")
            ),
        }


def _tpot_text(brief: Brief, at: Pace, binding: Limit | None, admitted: float) -> str:
    """The TPOT's arithmetic: at the running batch, or, without a steady state, at the full batch the limit allows (the
    queue in front of it grows, not the time between a running sequence's tokens), its interference from the prompts
    that batch admits (`admitted` req/s: as fast as its sequences finish)."""
    step = (
        f"({num(at.decode_step_ms, 'ms')} decode step at {num(at.running_batch)} running + {num(brief.latency.scheduler_ms, 'ms')} scheduler)"
        f" / (1 - {pct(at.interference)} prefill interference) = {num(at.tpot_ms, 'ms')}"
    )
    if binding is None or not math.isfinite(at.tpot_ms):
        return step
    return (
        f"no steady state ({binding.words} binds: the queue grows without bound), a running sequence's step with the"
        f" batch full at {num(at.running_batch)}, taking prompts as its sequences finish ({num(admitted, 'req/s')}): {step}"
    )


def _in_flight_text(brief: Brief, rate: float, at: Pace, n: float, limit: float, binding: Limit | None) -> str:
    held = f"{num(at.slot_service_ms, 'ms')} of prefill steps + {num(brief.workload.output_tokens_mean - 1)} x {num(at.tpot_ms, 'ms')}"
    if binding is None:
        return f"{num(rate, 'req/s')} x ({held}) = {num(n)} sequences running (of at most {num(limit)})"
    if binding is Limit.prefill:
        return (
            f"no steady state: prompts need {num(rate, 'req/s')} x {num(at.slot_service_ms, 'ms')} = {pct(at.prefill_slot_busy)}"
            " of the prefill slot (or the interference leaves decode no time)"
        )
    return f"no steady state: even with {num(limit)} running ({binding.words} binds), {num(rate, 'req/s')} x ({held}) = {num(rate * at.engine_time_s)} would be needed"


def _fix(
    brief: Brief, shape: ReplicaShape, pools: Pools, request_rate: float, binding: Limit | None, capacity: float
) -> tuple[str, dict[str, int]]:
    """The smallest change that gives the replica a steady state: more batch slots when the KV allows, else nodes; with
    the engine setting it names, as `plan --set` takes it ({} when it names nodes only)."""
    rate = pools.general_rate_per_replica(request_rate)
    if binding is Limit.batched_tokens:
        budget = brief.deployment.max_num_batched_tokens
        uncached = brief.workload.input_tokens_mean * (1 - brief.effective_hit_rate)
        lifted = max(budget, brief.deployment.max_model_len)  # a budget that no longer binds: what batch the load keeps
        running, _ = solve_running_batch(
            rate, lambda n: pace(brief, shape, rate, n, max_num_batched_tokens=lifted), brief.deployment.max_num_seqs
        )
        if math.isfinite(running):
            need = 2 ** math.ceil(math.log2(running + uncached))  # a power of two, as the engine's budgets usually are
            change = {"deployment.max_num_batched_tokens": need}
            raise_it = f"raise deployment.max_num_batched_tokens from {budget} to ~{need} (the load keeps {num(running)} running, plus a mean prompt's {num(uncached)} uncached tokens)"
            return _setting_or_nodes(raise_it, _still_missing(brief, shape, rate, change)), change
        return (
            f"raise deployment.max_num_batched_tokens above {budget} (at least the running batch plus a mean prompt's"
            f" {num(uncached)} uncached tokens), or add nodes"
        ), {}
    if binding is Limit.slots:
        kv = kv_running_limit(brief, shape)
        lifted = int(kv)  # the batch cap raised to what the KV pool holds: the pace must not clamp at the old cap
        unbounded, _ = (
            solve_running_batch(rate, lambda n: pace(brief, shape, rate, n, max_num_seqs=lifted), kv)
            if kv > brief.deployment.max_num_seqs
            else (math.inf, None)
        )
        if math.isfinite(unbounded):
            need = max_num_seqs_meeting(brief, shape, rate, unbounded)
            change = {"deployment.max_num_seqs": need}
            raise_it = (
                f"raise deployment.max_num_seqs from {brief.deployment.max_num_seqs} to ~{need} (the load keeps {num(unbounded)} running)"
            )
            return _setting_or_nodes(raise_it, _still_missing(brief, shape, rate, change)), change
    if math.isnan(capacity):  # a re-plan read for its verdict skipped the SLO-capacity search that counts the nodes
        return "add nodes", {}
    nodes = nodes_for_capacity(brief, pools, request_rate, capacity, shape)
    if nodes is None:
        return "no fleet size fixes it: the replica misses the SLO at any load; change the replica (TP, precision, GPU) or the targets", {}
    return (
        f"add nodes: {nodes} in all ({nodes - brief.hardware.nodes} more) bring each general-pool replica under its {num(capacity, 'req/s')} SLO capacity",
        {},
    )


def _setting_or_nodes(raise_it: str, still_missing: str) -> str:
    """The setting's advice: it, or nodes; where the setting gives a steady state but a p95 still misses its target
    there, that it is not enough alone."""
    if not still_missing:
        return f"{raise_it}, or add nodes"
    return f"{raise_it} for a steady state, though alone that still misses ({still_missing}): add nodes"


def _still_missing(brief: Brief, shape: ReplicaShape, rate: float, change: dict[str, int]) -> str:
    """The p95s that miss their targets on a replica of the brief with `change` at `rate` a replica, in words, as its
    re-plan judges them ('' when both meet, or the brief is judged on a deadline)."""
    if brief.objective.kind is not ObjectiveKind.latency:
        return ""
    try:
        changed = brief.with_changes(change)
    except BriefError:
        return ""
    ttft_ms, judged_ms = _p95s_at(changed, shape, rate)
    slo = brief.slo
    misses = [
        f"p95 {name} {num(value, 'ms')} against its {num(target, 'ms')} target"
        for name, value, target in (("TTFT", ttft_ms, slo.ttft_p95_ms), (slo.itl_metric.value.upper(), judged_ms, slo.itl_p95_ms))
        if value > target
    ]
    return ", ".join(misses)


def nodes_for_capacity(brief: Brief, pools: Pools, request_rate: float, capacity_per_replica: float, shape: ReplicaShape) -> int | None:
    """The fewest nodes whose general pool carries its share of `request_rate` at or under each replica's SLO capacity
    (whole replicas: a multi-node replica's nodes come together)."""
    if capacity_per_replica <= 0:
        return None
    general = shape.nodes_for(math.ceil(request_rate * pools.general_share / capacity_per_replica - 1e-9))
    dep = brief.deployment  # the brief's own pools: a small fleet's clipped ones come back as it grows
    return max(general, 1) + dep.long_context_nodes + dep.spare_nodes


# --- the worked designs' hand relation ---------------------------------------------------------------


def _seed_in_flight(rate: float, prefill_s: float, output: float, step: Callable[[float], float]) -> float:
    share = rate * prefill_s
    if share >= 1:
        return math.inf

    def excess(n: float) -> float:
        return rate * (prefill_s + (output - 1) * step(n) / (1 - share)) - n

    high = 1.0
    at_high = excess(high)
    while at_high > 0:
        high *= 2
        if high > 1e9:
            return math.inf
        at_high = excess(high)
    at_zero = excess(0.0)
    if at_zero <= 0:
        return 0.0
    _, settled = bracket_root(excess, 0.0, high, xtol=_SEED_XTOL * high, f_low=at_zero, f_high=at_high)
    return settled  # the end where n in flight carries the rate (excess <= 0)


_SEED_XTOL = 1e-10  # relative: far below the figures' shown precision


def _seed_capacity(target_s: float, prefill_s: float, output: float, step: Callable[[float], float]) -> float:
    if step(1.0) > target_s:
        return 0.0

    def over(rate: float) -> float:
        """The step at the batch a TPOT of target_s would hold, over the target (> 0: beyond the capacity)."""
        share = rate * prefill_s
        if share >= 1:
            return math.inf
        return step(rate * (prefill_s + (output - 1) * target_s)) / (1 - share) - target_s

    high = 1 / prefill_s if prefill_s > 0 else 1e7
    at_high = over(high)
    if at_high <= 0:
        return high
    at_zero = over(0.0)
    if at_zero > 0:
        return 0.0
    within, _ = bracket_root(over, 0.0, high, xtol=_SEED_XTOL * high, f_low=at_zero, f_high=at_high)
    return within  # the end that holds the target: the step may jump past it between the two


def seed_prefill_s(brief: Brief, shape: ReplicaShape, hit_rate: float | None = None) -> float:
    """The worked relation's prefill time of a mean prompt: its uncached tokens at the replica's prefill rate."""
    hit = brief.effective_hit_rate if hit_rate is None else hit_rate
    return brief.workload.input_tokens_mean * (1 - hit) / shape.prefill_tokens_per_s


def _seed_real_step(brief: Brief, shape: ReplicaShape) -> Callable[[float], float]:
    """The real decode step at a batch, as the worked relation reads it (speculation's share where it is on)."""
    return _real_step(shape, context_tokens(brief)[0], spec_switch(brief, shape))


def _real_step(shape: ReplicaShape, read: float, switch: SpecSwitch | None) -> Callable[[float], float]:
    """_seed_real_step of a replica whose sequences read `read` tokens of KV a step, speculation by `switch`."""

    def real(n: float) -> float:
        plain = shape.decode_step_real_s(n, read)
        if switch is None or n > switch.off_above_batch or not math.isfinite(plain):
            return plain
        # speculation on at this batch: a token's share of the speculative step, against the engine's plain step
        b = max(n, 1.0)
        engine_plain = step_time_s(shape.step.values(), b, b, b * read, 0.0)
        spec = speculative_step_time_s(switch.constants, b, b, b * read, 0.0) / switch.tokens_per_step
        return plain * spec / engine_plain

    return real


def _seed_tpot_s(rate: float, prefill_s: float, output: float, step: Callable[[float], float]) -> float:
    n = _seed_in_flight(rate, prefill_s, output, step)
    return step(n) / (1 - rate * prefill_s) if math.isfinite(n) else math.inf


def seed_tpot_ms(brief: Brief, shape: ReplicaShape, rate: float) -> float:
    """seed_relation's tpot_ms alone (its other solves and its text left out): the worked relation's TPOT at `rate`."""
    return _seed_tpot_s(rate, seed_prefill_s(brief, shape), brief.workload.output_tokens_mean, _seed_real_step(brief, shape)) * 1e3


def seed_capacity_rate(brief: Brief, shape: ReplicaShape, hit_rate: float | None = None) -> float:
    """seed_relation's capacity_rate_per_s alone: where the worked relation's TPOT reaches the ITL target. It reads the
    replica (not how many), the prompt's prefill time, the reply, the context a step reads and speculation's switch:
    kept by those, it is worked out once for every core of a plan (its own, the one-node-lost re-plan's...)."""
    prefill_s = seed_prefill_s(brief, shape, hit_rate)
    read, _ = context_tokens(brief)
    switch = spec_switch(brief, shape)
    target_s, output = brief.slo.itl_p95_ms / 1e3, brief.workload.output_tokens_mean
    key = (shape.replica_key, target_s, prefill_s, output, read, switch)
    rate = _SEED_CAPACITIES.get(key)
    if rate is None:
        rate = _seed_capacity(target_s, prefill_s, output, _real_step(shape, read, switch))
        _SEED_CAPACITIES.keep(key, rate)
    return rate


_SEED_CAPACITIES: BoundedMemo[tuple[object, ...], float] = BoundedMemo(256)  # emptied with the planner's caches


def seed_relation(brief: Brief, shape: ReplicaShape, rate: float, hit_rate: float | None = None) -> SeedRelation:
    """The 10-QPS worked design's relation, as the seed works it (prefill and decode share the GPU without overlap)."""
    w = brief.workload
    read, held = context_tokens(brief)
    hit = brief.effective_hit_rate if hit_rate is None else hit_rate
    prefill_s = seed_prefill_s(brief, shape, hit_rate)
    share = rate * prefill_s
    target_s = brief.slo.itl_p95_ms / 1e3
    real = _seed_real_step(brief, shape)

    def ideal(n: float) -> float:
        return shape.decode_step_ideal_s(n, read)

    n_real = _seed_in_flight(rate, prefill_s, w.output_tokens_mean, real)
    n_ideal = _seed_in_flight(rate, prefill_s, w.output_tokens_mean, ideal)
    tpot_real = _seed_tpot_s(rate, prefill_s, w.output_tokens_mean, real)
    tpot_ideal = _seed_tpot_s(rate, prefill_s, w.output_tokens_mean, ideal)
    cap_real = _seed_capacity(target_s, prefill_s, w.output_tokens_mean, real)
    cap_ideal = _seed_capacity(target_s, prefill_s, w.output_tokens_mean, ideal)
    kv = held * shape.kv_bytes_per_token / GB
    return SeedRelation(
        prefill_ms_per_request=prefill_s * 1e3,
        prefill_share=share,
        prefill_saturation_rate_per_s=1 / prefill_s if prefill_s > 0 else math.inf,
        in_flight=n_real,
        in_flight_ideal=n_ideal,
        tpot_ms=tpot_real * 1e3,
        tpot_ideal_ms=tpot_ideal * 1e3,
        kv_in_use_gb=n_real * kv,
        kv_in_use_ideal_gb=n_ideal * kv,
        capacity_rate_per_s=cap_real,
        capacity_rate_ideal_per_s=cap_ideal,
        arithmetic={
            "prefill_ms_per_request": (
                f"{num(w.input_tokens_mean * (1 - hit))} uncached prompt tokens / {num(shape.prefill_tokens_per_s, 'tok/s')}"
                f" = {num(prefill_s * 1e3, 'ms')}; {num(rate, 'req/s')} x that = {pct(share)} of GPU time"
            ),
            "tpot_ms": f"step({num(n_real)}) {num(real(n_real) * 1e3, 'ms')} / (1 - {pct(share)}) = {num(tpot_real * 1e3, 'ms')} real, {num(tpot_ideal * 1e3, 'ms')} ideal",
            "in_flight": (
                f"{num(rate, 'req/s')} x ({num(prefill_s * 1e3, 'ms')} + {num(w.output_tokens_mean - 1)} x {num(tpot_real * 1e3, 'ms')})"
                f" = {num(n_real)} real ({num(n_ideal)} ideal)"
            ),
            "kv_in_use_gb": f"{num(n_real)} x {num(held, 'tokens')} x {num(shape.kv_bytes_per_token / 1024, 'KiB')} = {num(n_real * kv, 'GB')}",
            "capacity_rate_per_s": f"TPOT reaches {num(brief.slo.itl_p95_ms, 'ms')} at {num(cap_real, 'req/s')} real ({num(cap_ideal, 'req/s')} ideal)",
        },
    )
