"""Prefill/decode disaggregation: a prefill pool and a decode pool sized separately, the KV moved between them.

The general pool's nodes split in two. A prefill replica runs prompts only: its steps carry no decode tokens, so a
prompt's time is its own chunk steps (planner.step_model), and prompts queue FCFS for it (M/G/1, Poisson arrivals
spread over the prefill replicas). When a prompt's KV is done it moves to a decode replica over the network:
bytes = prompt tokens x the KV bytes of one token across the whole model; time = a fixed set-up + bytes / (the
GPUs sending in parallel x each GPU's link x the achieved fraction). A decode replica then runs pure decode steps
(no prefill chunk rides in them), its running batch from Little's law at its own pace.

    TTFT = fixed request path + prefill-pool wait + the prompt's prefill steps + KV transfer + the first decode step
    ITL  = a pure decode step at the decode pool's batch (+ the scheduler)

It beats chunked prefill on the same GPUs when chunked prefill's ITL is dominated by the steps that carry a prompt
chunk and the split matches the prefill:decode GPU time; it does not when the split leaves one pool short (whole
nodes rarely divide the work exactly, and disaggregation adds no throughput) or the transfer takes a real share of
the TTFT budget. `comparison` states both on the same brief.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from functools import cached_property, partial
from typing import NamedTuple

from pydantic import BaseModel, ConfigDict, PrivateAttr, computed_field

from planner.brief import Brief, ItlMetric, KvPrecision, ObjectiveKind
from planner.capacity import Capacity
from planner.catalog import gpu_spec
from planner.errors import BriefError
from planner.fmt import num, pct, times
from planner.grid_search import LastAnswers, bisection_bracket, question_key
from planner.lengths import length_cv2
from planner.memo import BoundedMemo
from planner.numerics import root_in_bracket
from planner.operating_point import JUST_PAST, Limit, OperatingPoint, reached_at_capacity
from planner.pools import Pools
from planner.replica import GB, ReplicaShape, shape_of
from planner.slo import AtMaxBatch, SloBudget, WaterfallStep
from planner.step_model import chunk_pairs, step_time_s
from planner.trusted import trusted
from planner.verdict import InfeasibleDesign, Problem
from planner.written import Written

__all__ = [
    "DisaggAnalysis",
    "DisaggComparison",
    "PoolsJudged",
    "SplitP95s",
    "SplitPoint",
    "apply_disaggregation",
    "capacity_scale",
    "clear_above",
    "decode_batch_words",
    "disaggregated_operating_point",
    "disaggregation_analysis",
    "kv_transfer_s",
    "link_gbps_per_gpu",
    "meets_by_capacity",
    "multi_node_problems",
    "pools_meet",
    "prefill_brief",
    "prefill_time_s",
    "short_pools",
    "split_p95s",
    "splits_summary",
]

P95_Z = 1.645  # a Poisson batch's p95: mean + 1.645 sqrt(mean)
KV_CONNECTOR = "NixlConnector"  # vLLM's KV connector over NIXL (UCX / RDMA)


class _Model(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class DisaggComparison(_Model):
    """Disaggregated against chunked prefill on the same GPUs (the aggregated design of the same brief)."""

    chunked_ttft_p95_ms: float
    chunked_itl_p95_ms: float
    chunked_tpot_p95_ms: float
    chunked_meets_slo: bool
    disaggregated_ttft_p95_ms: float
    disaggregated_itl_p95_ms: float
    disaggregated_tpot_p95_ms: float
    disaggregated_meets_slo: bool
    balanced_prefill_nodes: int  # the split that matches the prefill:decode GPU time of the aggregated design
    beats_chunked: bool
    verdict: str


class SplitPoint(_Model):
    """The same GPUs split another way: how many prefill nodes, and what the design then gives."""

    prefill_nodes: int
    prefill_busy: float
    decode_batch: float  # inf: the decode pool cannot keep up
    ttft_p95_ms: float
    itl_p95_ms: float
    meets_slo: bool


class DisaggAnalysis(Written):
    prefill_nodes: int
    decode_nodes: int
    prefill_tp: int
    decode_tp: int
    prefill_replicas: int
    decode_replicas: int
    kv_bytes_per_token: float  # the whole model's KV of one token
    kv_transfer_mb_mean: float
    link_gb_per_s: float  # per replica pair: the sending GPUs x each GPU's link x the achieved fraction (GB/s)
    transfer_ms_mean: float
    transfer_ms_p95: float
    prefill_rate_per_replica_per_s: float
    prefill_service_ms_mean: float
    prefill_busy: float
    prefill_wait_ms_mean: float
    prefill_wait_ms_p95: float
    prefill_stage_ms_mean: float
    prefill_stage_ms_p95: float
    decode_rate_per_replica_per_s: float
    decode_batch: float
    decode_step_ms: float
    decode_step_p95_ms: float
    decode_kv_fraction: float
    stable: bool
    ttft_p50_ms: float
    ttft_p95_ms: float
    itl_p50_ms: float
    itl_p95_ms: float
    tpot_p50_ms: float
    tpot_p95_ms: float
    ttft_waterfall: tuple[WaterfallStep, ...]
    itl_waterfall: tuple[WaterfallStep, ...]
    comparison: DisaggComparison
    problems: tuple[Problem, ...]
    kv_transfer_flag: str  # the --kv-transfer-config value both pools run
    capacity_scale: float = math.nan  # the multiple of the peak at which the two pools stop meeting the SLO
    binding_pool: str = ""  # the pool that misses first there: prefill (TTFT) or decode (ITL)
    _other_splits: Callable[[], tuple[SplitPoint, ...]] | None = PrivateAttr(default=None)  # None: a re-plan skips them

    @property
    def split_words(self) -> str:
        """The split in words (the arithmetic's `split`, the SLO budget's basis): the general pool's nodes, each pool's
        and its replicas."""
        return (
            f"{self.prefill_nodes + self.decode_nodes} general-pool nodes = {self.prefill_nodes} prefill (TP={self.prefill_tp},"
            f" {self.prefill_replicas} replicas) + {self.decode_nodes} decode (TP={self.decode_tp}, {self.decode_replicas} replicas)"
        )

    # Every other split of the nodes is a trade-off curve for the plan's own pages: worked out the first time it is read
    # (the SLO budget page, the conclusion, the JSON), as the SLO budget's curves are, not for every plan a slider makes.

    @computed_field  # type: ignore[prop-decorator]
    @cached_property
    def splits(self) -> tuple[SplitPoint, ...]:
        """Every split of the general pool (at most MAX_SPLITS, evenly spaced): where it stops paying (empty in a
        re-plan that skips the curves)."""
        return () if self._other_splits is None else self._other_splits()


def prefill_brief(brief: Brief) -> Brief:
    """The brief of one prefill-pool replica: its TP and step budget."""
    d = brief.disaggregation
    changes: dict[str, object] = {}
    if d.prefill_tp is not None:
        changes["deployment.tp"] = d.prefill_tp
    if d.prefill_max_num_batched_tokens is not None:
        changes["deployment.max_num_batched_tokens"] = d.prefill_max_num_batched_tokens
    return brief.with_changes(changes) if changes else brief


def _prefill_shape(brief: Brief) -> ReplicaShape:
    """The prefill replica; a TP that cannot form one is named as the prefill pool's."""
    try:
        return shape_of(prefill_brief(brief))
    except InfeasibleDesign as exc:
        named = tuple(
            p.model_copy(
                update={"field": "disaggregation.prefill_tp", "change": p.change.replace("deployment.tp", "disaggregation.prefill_tp")}
            )
            for p in exc.problems
        )
        raise InfeasibleDesign(named) from None


def multi_node_problems(brief: Brief, shape: ReplicaShape) -> tuple[Problem, ...]:
    """Disaggregation splits the general pool by whole nodes, each pool's replicas inside a node: a replica that spans
    nodes (pipeline stages, or a TP/EP group wider than a node) has no split this model can state."""
    if not brief.disaggregation.enabled:
        return ()
    decode_field = "deployment.pp" if shape.pp > 1 else "deployment.ep"
    for pool, field, pool_shape in (("decode", decode_field, shape), ("prefill", "disaggregation.prefill_tp", _prefill_shape(brief))):
        if pool_shape.replica_nodes > 1:
            return (
                Problem(
                    field=field,
                    problem=(
                        f"disaggregation splits whole nodes between a prefill and a decode pool; a {pool} replica spans"
                        f" {pool_shape.replica_nodes} nodes (PP={pool_shape.pp}, {pool_shape.gpus} GPUs a stage)"
                    ),
                    change="keep each pool's replica within one node (deployment.pp 1, TP x EP at most the node's GPUs), or turn disaggregation off",
                ),
            )
    return ()


def prefill_time_s(shape: ReplicaShape, prompt_tokens: float, cached_tokens: float, budget: int) -> float:
    """A prompt alone on a prefill replica: its uncached tokens in chunks of the step budget, each step's time from
    the step model (its tokens, one sequence, the KV read so far, the chunk's attention pairs)."""
    done, left, total = cached_tokens, max(prompt_tokens - cached_tokens, 1.0), 0.0
    k = shape.step.values()
    while left > 0:
        take = min(left, float(budget))
        total += step_time_s(k, take, 1.0, done + take, chunk_pairs(done, take))
        done += take
        left -= take
    return total


def link_gbps_per_gpu(brief: Brief) -> float:
    """The network each GPU sends KV over (Gb/s): the brief's, else the GPU's scale-out NIC from the catalog."""
    given = brief.disaggregation.kv_link_gbps_per_gpu
    return given if given is not None else gpu_spec(brief.hardware.gpu).scale_out_gb_per_s * 8  # x8: bytes to bits


def kv_transfer_s(brief: Brief, prompt_tokens: float, kv_bytes_per_token: float, sending_gpus: int) -> float:
    """Moving a prompt's KV to the decode pool: set-up + bytes / (GPUs in parallel x link x efficiency)."""
    d = brief.disaggregation
    link_bytes_per_s = sending_gpus * link_gbps_per_gpu(brief) / 8 * 1e9 * d.transfer_efficiency  # /8: bits to bytes
    return d.transfer_latency_ms / 1e3 + prompt_tokens * kv_bytes_per_token / link_bytes_per_s


def _wait_quantile_s(busy: float, wait_mean_s: float, q: float) -> float:
    """M/G/1 wait quantile: zero with probability 1 - busy, else exponential with mean wait / busy."""
    if busy <= 0 or busy <= 1 - q:
        return 0.0
    return wait_mean_s / busy * math.log(busy / (1 - q))


MAX_SPLITS = 24


def _splits(
    brief: Brief, shape: ReplicaShape, split: _Split, pools: Pools, rate_per_s: float, chunked: SloBudget
) -> tuple[SplitPoint, ...]:
    """The design at each split of the general pool's nodes (the brief's own included); `split`: the brief's own, whose
    prompt service and transfer every split shares."""
    count = pools.general_nodes - 1
    if count < 1:
        return ()
    step = max(1, math.ceil(count / MAX_SPLITS))
    own = min(brief.disaggregation.prefill_nodes, count)
    points = []
    for n in sorted({*range(1, count + 1, step), own}):
        load = _at_load(brief, shape, pools, _moved(split, n, pools, shape), rate_per_s, chunked.point.fixed_ms)
        points.append(
            trusted(
                SplitPoint,
                prefill_nodes=n,
                prefill_busy=load.busy,
                decode_batch=load.batch,
                ttft_p95_ms=load.ttft_p95_ms,
                itl_p95_ms=load.itl_p95_ms,
                meets_slo=load.meets,
            )
        )
    return tuple(points)


def _prefill_more(need_nodes: int, general_nodes: int) -> str:
    """The busy prefill pool's change: the nodes it needs, and when they leave the general pool no decode node, that
    the fleet grows (the change that fixes it names the fleet and its split)."""
    if need_nodes < general_nodes:
        return f"give the prefill pool more nodes (at least {need_nodes})"
    return (
        f"add nodes: the prefill pool needs at least {need_nodes}, more than the {general_nodes}-node general pool holds"
        " beside a decode pool; the change that fixes it names the fleet and its split"
    )


class _Split(NamedTuple):
    """A split of the general pool's nodes, whatever the load: each pool's replicas, and a prompt's prefill steps and KV
    transfer on them (seconds)."""

    pshape: ReplicaShape  # a prefill replica
    budget: int  # a prefill step's tokens
    prefill_nodes: int
    decode_nodes: int
    p_replicas: int
    d_replicas: int
    mean_prompt: float  # tokens
    p95_prompt: float  # tokens, capped at the TTFT's input cap
    cv2: float  # the prompt length's squared coefficient of variation
    service: float  # a mean prompt's prefill steps, its cached tokens skipped
    stage_mean: float  # the mean covered prompt's (capped at the TTFT's input cap)
    stage_p95: float
    sending: int  # the GPUs a replica sends its KV from in parallel
    transfer_mean: float
    transfer_p95: float


def _split_of(brief: Brief, shape: ReplicaShape, pools: Pools) -> _Split:
    """The brief's split of the general pool (its prefill nodes, one node at least left to decode). A prefill pool with
    neither its own TP nor its own step budget runs the decode pool's replica, `shape`. Kept by the brief, the replica
    and the general pool's nodes (all it reads of the pools), emptied with the planner's caches: a plan reads one
    fleet's split 3-5 times (its analysis, its capacity search, the headroom's fleet search)."""
    key = (brief, shape.replica_key, pools.general_nodes)
    split = _SPLITS.get(key)
    if split is None:
        split = _worked_split(brief, shape, pools)
        _SPLITS.keep(key, split)
    return split


_SPLITS: BoundedMemo[tuple[object, ...], _Split] = BoundedMemo(128)


def _worked_split(brief: Brief, shape: ReplicaShape, pools: Pools) -> _Split:
    """_split_of worked out."""
    d, w, dep = brief.disaggregation, brief.workload, brief.deployment
    pshape = shape if prefill_brief(brief) is brief else _prefill_shape(brief)
    budget = d.prefill_max_num_batched_tokens or dep.max_num_batched_tokens
    prefill_nodes, decode_nodes, p_replicas, d_replicas = _nodes_and_replicas(d.prefill_nodes, pools, shape, pshape)
    hit = brief.effective_hit_rate
    cap_tokens = float(brief.slo.ttft_input_cap_tokens)
    mean_prompt = min(w.input_tokens_mean, float(dep.max_model_len))
    p95_prompt = min(w.input_tokens_p95, cap_tokens, float(dep.max_model_len))
    covered = min(mean_prompt, cap_tokens)
    sending = min(pshape.tp, shape.tp)  # each GPU sends its heads' share; a smaller side bounds the parallel links
    return _Split(
        pshape=pshape,
        budget=budget,
        prefill_nodes=prefill_nodes,
        decode_nodes=decode_nodes,
        p_replicas=p_replicas,
        d_replicas=d_replicas,
        mean_prompt=mean_prompt,
        p95_prompt=p95_prompt,
        cv2=length_cv2(w.input_tokens_mean, w.input_tokens_p95),
        service=prefill_time_s(pshape, mean_prompt, mean_prompt * hit, budget),
        stage_mean=prefill_time_s(pshape, covered, covered * hit, budget),
        stage_p95=prefill_time_s(pshape, p95_prompt, p95_prompt * hit, budget),
        sending=sending,
        transfer_mean=kv_transfer_s(brief, mean_prompt, shape.kv_bytes_per_token, sending),
        transfer_p95=kv_transfer_s(brief, p95_prompt, shape.kv_bytes_per_token, sending),
    )


def _nodes_and_replicas(prefill_nodes: int, pools: Pools, shape: ReplicaShape, pshape: ReplicaShape) -> tuple[int, int, int, int]:
    """(prefill nodes, decode nodes, prefill replicas, decode replicas) of a split that asks for `prefill_nodes` of the
    general pool's nodes: one node at least is left to decode."""
    prefill = min(prefill_nodes, max(pools.general_nodes - 1, 0))
    decode = pools.general_nodes - prefill
    return prefill, decode, max(prefill * pshape.replicas_per_node, 1), max(decode * shape.replicas_per_node, 1)


def _moved(split: _Split, prefill_nodes: int, pools: Pools, shape: ReplicaShape) -> _Split:
    """The split of the same general pool with `prefill_nodes` on prefill: a prompt's service and transfer do not depend
    on it, only the pools' nodes and replicas (as _split_of gives them for a brief with that many prefill nodes)."""
    prefill, decode, p_replicas, d_replicas = _nodes_and_replicas(prefill_nodes, pools, shape, split.pshape)
    return split._replace(prefill_nodes=prefill, decode_nodes=decode, p_replicas=p_replicas, d_replicas=d_replicas)


class _Load(NamedTuple):
    """The two pools of a split at one load: the figures the SLO is judged by (seconds, or ms as named)."""

    rate: float  # the general pool's requests per second
    p_rate: float  # a prefill replica's
    busy: float  # a prefill replica's busy share
    wait_mean: float  # the prefill-pool queue wait (M/G/1)
    wait_p50: float
    wait_p95: float
    d_rate: float  # a decode replica's requests per second
    batch: float  # a decode replica's running batch (Little's law); inf: the load needs more than max-num-seqs
    kv_fraction: float  # of a decode replica's KV cache, at that batch (a full one without a steady state)
    step_ms: float  # a pure decode step at the batch
    step_p95_ms: float  # and at the p95 batch
    ttft_p50_ms: float
    ttft_p95_ms: float
    itl_p50_ms: float
    itl_p95_ms: float
    stable: bool  # the prefill pool under 100% busy, the decode pool's batch within max-num-seqs and the KV cache
    meets: bool  # stable, and the p95 TTFT and ITL within their targets

    @property
    def decode_short(self) -> bool:
        """Prompts wait for a decode slot without bound: the decode batch the load needs does not fit."""
        return _decode_short(self.batch, self.kv_fraction)


def _decode_short(batch: float, kv_fraction: float) -> bool:
    """A decode replica with no steady state: the load needs more than max-num-seqs (batch inf) or its KV holds."""
    return not math.isfinite(batch) or kv_fraction > 1


_Pace = Callable[[float], tuple[float, float, float]]  # a decode replica's rate -> (batch, step ms, p95 step ms)


def _at_load(
    brief: Brief, shape: ReplicaShape, pools: Pools, split: _Split, rate_per_s: float, fixed_ms: float, pace: _Pace | None = None
) -> _Load:
    """The split's two pools at `rate_per_s` (the whole fleet's), `fixed_ms` the request path outside the engine
    (`pace`: the decode replica's, _decode_pace by default):

    TTFT = fixed + prefill-pool wait + the prompt's prefill steps + KV transfer + the first decode steps
    ITL  = a pure decode step at the decode pool's batch (+ the scheduler)"""
    w, dep = brief.workload, brief.deployment
    rate, p_rate, busy = _prefill_busy(pools, split, rate_per_s)

    # --- prefill pool: M/G/1 per replica, a prompt's service its own chunk steps --------------------------
    service = split.service
    prefill_stable = busy < 1
    second_moment = service**2 * (1 + split.cv2)  # service grows with the prompt: its CV^2 is the prompt's
    wait_mean = p_rate * second_moment / (2 * (1 - busy)) if prefill_stable else math.inf
    wait_p50 = _wait_quantile_s(busy, wait_mean, 0.5) if prefill_stable else math.inf
    wait_p95 = _wait_quantile_s(busy, wait_mean, 0.95) if prefill_stable else math.inf

    # --- decode pool: pure decode steps, the batch from Little's law ------------------------------------------
    d_rate = rate / split.d_replicas
    batch, step_ms, step_p95_ms = _decode_pace(brief, shape, d_rate) if pace is None else pace(d_rate)
    b = batch if math.isfinite(batch) else float(dep.max_num_seqs)  # with no steady state the batch stays full
    kv_fraction = b * (w.input_tokens_mean + w.output_tokens_mean) / shape.kv_capacity_tokens
    decode_short = _decode_short(batch, kv_fraction)  # prompts wait for a decode slot without bound
    stable = prefill_stable and not decode_short
    sched_ms = brief.latency.scheduler_ms
    slot_wait = math.inf if decode_short else 0.0
    ttft_p50 = fixed_ms + (wait_p50 + split.stage_mean + split.transfer_mean + slot_wait) * 1e3 + 1.5 * step_ms
    ttft_p95 = fixed_ms + (wait_p95 + split.stage_p95 + split.transfer_p95 + slot_wait) * 1e3 + 2 * step_p95_ms
    itl_p95 = step_p95_ms + sched_ms
    judged = brief.slo.itl_metric.judged(itl_p95, itl_p95)
    return _Load(
        rate=rate,
        p_rate=p_rate,
        busy=busy,
        wait_mean=wait_mean,
        wait_p50=wait_p50,
        wait_p95=wait_p95,
        d_rate=d_rate,
        batch=batch,
        kv_fraction=kv_fraction,
        step_ms=step_ms,
        step_p95_ms=step_p95_ms,
        ttft_p50_ms=ttft_p50,
        ttft_p95_ms=ttft_p95,
        itl_p50_ms=step_ms + sched_ms,
        itl_p95_ms=itl_p95,
        stable=stable,
        meets=stable and ttft_p95 <= brief.slo.ttft_p95_ms and judged <= brief.slo.itl_p95_ms,
    )


_MODEL_SHORT = 1e-9  # relative: how far under the steady state's bound the model's margin is taken (finite there)
_MODEL_XTOL = 1e-13  # relative: the model's crossing, well inside a capacity search's last bracket (2^-30)


def _linear_pace(brief: Brief, shape: ReplicaShape, batch_ref: float) -> _Pace:
    """_decode_pace with the decode step linear in the batch, as it is on the piece at `batch_ref` (the step model is
    piecewise linear: a max of the weights' and the GEMMs' time, a min of two all-reduce algorithms): Little's law
    batch = rate x (gaps x (step + scheduler) + 1.5 step) solved in closed form, the steps at that batch the step
    model's own. Only where a capacity search looks first (its tests run the root-find)."""
    w = brief.workload
    ctx, sched, top = brief.running_context_tokens, brief.latency.scheduler_ms / 1e3, float(brief.deployment.max_num_seqs)
    gaps = max(w.output_tokens_mean - 1, 0.0)
    k = shape.step.values()

    def step(batch: float) -> float:  # as _decode_pace's
        b = max(batch, 1.0)
        return step_time_s(k, b, b, b * ctx, 0.0)

    ref = min(max(batch_ref, 1.0), top) if math.isfinite(batch_ref) else top
    slope = (step(ref * (1 + _SLOPE_STEP)) - step(ref)) / (ref * _SLOPE_STEP)
    intercept = step(ref) - slope * ref

    def pace(d_rate: float) -> tuple[float, float, float]:
        room = 1 - d_rate * slope * (gaps + 1.5)
        batch = d_rate * (gaps * (intercept + sched) + 1.5 * intercept) / room if room > 0 else math.inf
        batch = batch if batch <= top else math.inf
        b = batch if math.isfinite(batch) else top
        return batch, step(b) * 1e3, step(b + P95_Z * math.sqrt(b)) * 1e3

    return pace


_SLOPE_STEP = 1e-3  # relative: the batch step the linear piece's slope is read over


def _prefill_busy(pools: Pools, split: _Split, rate_per_s: float) -> tuple[float, float, float]:
    """(the general pool's requests per second, a prefill replica's, its busy share) at `rate_per_s` (the fleet's)."""
    rate = rate_per_s * pools.general_share
    p_rate = rate / split.p_replicas
    return rate, p_rate, p_rate * split.service


def _decode_pace(brief: Brief, shape: ReplicaShape, d_rate: float) -> tuple[float, float, float]:
    """A decode replica at `d_rate` requests a second: (its running batch from Little's law on pure decode steps, inf
    when the load needs more than max-num-seqs; the step at that batch, at a full one without a steady state, and at
    its p95 batch, ms). Kept by the replica (whatever the fleet) and what the solve reads: a plan's capacity searches
    and other splits load the same decode pool alike (the design's, its prefill pool's loss, a fleet search's split)."""
    w = brief.workload
    ctx, sched, top = brief.running_context_tokens, brief.latency.scheduler_ms / 1e3, float(brief.deployment.max_num_seqs)
    gaps = max(w.output_tokens_mean - 1, 0.0)
    key = (shape.replica_key, ctx, sched, top, gaps, d_rate)
    kept = _DECODE_PACES.get(key)
    if kept is not None:
        return kept

    k = shape.step.values()

    def step(batch: float) -> float:  # shape.decode_step_s for a finite batch, its calls saved (8-10 a root-find)
        b = max(batch, 1.0)
        return step_time_s(k, b, b, b * ctx, 0.0)

    def excess(batch: float) -> float:
        step_s = step(batch)
        return d_rate * (gaps * (step_s + sched) + 1.5 * step_s) - batch

    excess_full = excess(top)
    batch = math.inf if excess_full > 0 else root_in_bracket(excess, 0.0, top, 1e-6, f_high=excess_full)
    b = batch if math.isfinite(batch) else top  # with no steady state the batch stays full at max-num-seqs
    pace = (batch, step(b) * 1e3, step(b + P95_Z * math.sqrt(b)) * 1e3)
    _DECODE_PACES.keep(key, pace)
    return pace


_DECODE_PACES: BoundedMemo[tuple[object, ...], tuple[float, float, float]] = BoundedMemo(512)  # emptied with the planner's caches


def disaggregation_analysis(
    brief: Brief, shape: ReplicaShape, pools: Pools, rate_per_s: float, chunked: SloBudget, cap: Capacity, *, splits: bool = True
) -> DisaggAnalysis:
    """The two pools at the brief's peak, the TTFT and ITL they give, and the comparison with chunked prefill
    (with `splits`, also every other split of the same nodes, worked out when first read)."""
    d, dep = brief.disaggregation, brief.deployment
    split = _split_of(brief, shape, pools)
    pshape, budget, prefill_nodes, decode_nodes = split.pshape, split.budget, split.prefill_nodes, split.decode_nodes
    p_replicas, d_replicas, mean_prompt, service = split.p_replicas, split.d_replicas, split.mean_prompt, split.service
    fixed = chunked.point.fixed_ms
    load = _at_load(brief, shape, pools, split, rate_per_s, fixed)
    rate, busy, batch, kv_fraction = load.rate, load.busy, load.batch, load.kv_fraction
    hit = brief.effective_hit_rate
    problems: list[Problem] = []
    if prefill_nodes != d.prefill_nodes or prefill_nodes == 0:
        problems.append(
            Problem(
                field="disaggregation.prefill_nodes",
                problem=f"{d.prefill_nodes} prefill nodes leave no decode pool in a {pools.general_nodes}-node general pool",
                change=f"set it below {pools.general_nodes}, or add nodes",
            )
        )
    if not busy < 1:
        problems.append(
            Problem(
                field="disaggregation.prefill_nodes",
                problem=f"the prefill pool is {pct(busy)} busy: {p_replicas} replicas cannot prefill {num(rate, 'req/s')}"
                f" of {num(mean_prompt * (1 - hit), 'tokens')} each ({num(service * 1e3, 'ms')} a prompt)",
                change=_prefill_more(math.ceil(rate * service / pshape.replicas_per_node), pools.general_nodes),
            )
        )
    if not math.isfinite(batch):
        problems.append(
            Problem(
                field="hardware.nodes",
                problem=f"a decode replica cannot keep up with {num(load.d_rate, 'req/s')}: the batch the load needs exceeds max-num-seqs ({dep.max_num_seqs})",
                change="give the decode pool more nodes (fewer prefill nodes, or more nodes in all)",
            )
        )
    b = batch if math.isfinite(batch) else float(dep.max_num_seqs)  # with no steady state the batch stays full at max-num-seqs
    if kv_fraction > 1:
        problems.append(
            Problem(
                field="workload.kv_context_tokens",
                problem=f"a decode replica's {num(b)} sequences{'' if math.isfinite(batch) else ' (a full batch)'} need {pct(kv_fraction)} of its KV cache",
                change="give the decode pool more nodes, or use FP8 KV"
                if brief.deployment.kv_cache is KvPrecision.bf16
                else "give the decode pool more nodes (its KV cache is FP8 already)",
            )
        )

    # --- the figures the waterfalls and the arithmetic show ---------------------------------------------------
    kv_token = shape.kv_bytes_per_token
    sending, transfer_mean, transfer_p95 = split.sending, split.transfer_mean, split.transfer_p95
    stage_mean, stage_p95 = split.stage_mean, split.stage_p95
    link = sending * link_gbps_per_gpu(brief) / 8 * d.transfer_efficiency
    p_rate, wait_mean, wait_p95, d_rate = load.p_rate, load.wait_mean, load.wait_p95, load.d_rate
    decode_short = load.decode_short
    step_ms, step_p95_ms = load.step_ms, load.step_p95_ms
    sched_ms = brief.latency.scheduler_ms
    ttft_p50, ttft_p95, itl_p50, itl_p95 = load.ttft_p50_ms, load.ttft_p95_ms, load.itl_p50_ms, load.itl_p95_ms
    stable, meets = load.stable, load.meets
    fixed_parts = tuple(s for s in chunked.ttft_waterfall if not s.component.startswith(("queue wait", "prefill")))
    ttft_waterfall = (
        *fixed_parts[:3],
        trusted(WaterfallStep, component="prefill-pool queue wait (mean)", ms=wait_mean * 1e3),
        trusted(WaterfallStep, component="prefill on the prefill pool, no decode in its steps (mean covered prompt)", ms=stage_mean * 1e3),
        trusted(WaterfallStep, component="KV transfer to the decode pool (mean prompt)", ms=transfer_mean * 1e3),
        *(
            [trusted(WaterfallStep, component="wait for a decode-pool batch slot (the decode pool cannot keep up)", ms=math.inf)]
            if decode_short
            else []
        ),
        trusted(WaterfallStep, component="first decode step on the decode pool (1.5 steps)", ms=1.5 * step_ms),
        *fixed_parts[3:],
    )
    itl_waterfall = (
        trusted(
            WaterfallStep,
            component=f"decode step at batch {num(b)}{'' if math.isfinite(batch) else ' (full: max-num-seqs)'}, pure decode on the decode pool",
            ms=step_ms,
        ),
        trusted(WaterfallStep, component="chunked-prefill interference: none, prompts run on the prefill pool", ms=0.0),
        trusted(WaterfallStep, component="scheduler and sampling", ms=float(sched_ms)),
    )
    comparison = _comparison(brief, pools, chunked, cap, ttft_p95, itl_p95, meets, stable, busy)
    analysis = DisaggAnalysis(
        prefill_nodes=prefill_nodes,
        decode_nodes=decode_nodes,
        prefill_tp=pshape.tp,
        decode_tp=shape.tp,
        prefill_replicas=p_replicas,
        decode_replicas=d_replicas,
        kv_bytes_per_token=kv_token,
        kv_transfer_mb_mean=mean_prompt * kv_token / 1e6,
        link_gb_per_s=link,
        transfer_ms_mean=transfer_mean * 1e3,
        transfer_ms_p95=transfer_p95 * 1e3,
        prefill_rate_per_replica_per_s=p_rate,
        prefill_service_ms_mean=service * 1e3,
        prefill_busy=busy,
        prefill_wait_ms_mean=wait_mean * 1e3,
        prefill_wait_ms_p95=wait_p95 * 1e3,
        prefill_stage_ms_mean=stage_mean * 1e3,
        prefill_stage_ms_p95=stage_p95 * 1e3,
        decode_rate_per_replica_per_s=d_rate,
        decode_batch=batch,
        decode_step_ms=step_ms,
        decode_step_p95_ms=step_p95_ms,
        decode_kv_fraction=kv_fraction,
        stable=stable,
        ttft_p50_ms=ttft_p50,
        ttft_p95_ms=ttft_p95,
        itl_p50_ms=itl_p50,
        itl_p95_ms=itl_p95,
        tpot_p50_ms=itl_p50,
        tpot_p95_ms=itl_p95,
        ttft_waterfall=ttft_waterfall,
        itl_waterfall=itl_waterfall,
        comparison=comparison,
        problems=tuple(problems),
        kv_transfer_flag='{"kv_connector": "' + KV_CONNECTOR + '", "kv_role": "kv_both"}',  # spaced: the printed command wraps
    )

    def text() -> dict[str, str]:
        return {
            "split": analysis.split_words,
            "prefill": f"{num(rate, 'req/s')} / {p_replicas} = {num(p_rate, 'req/s')} a prefill replica x {num(service * 1e3, 'ms')} a prompt"
            f" ({num(mean_prompt * (1 - hit), 'tokens')} uncached, steps of up to {budget}) = {pct(busy)} busy;"
            f" M/G/1 wait {num(wait_mean * 1e3, 'ms')} mean, {num(wait_p95 * 1e3, 'ms')} p95",
            "transfer": f"{num(mean_prompt, 'tokens')} x {num(kv_token / 1e3, 'kB')} = {num(mean_prompt * kv_token / 1e6, 'MB')}"
            f" / ({sending} GPUs x {num(link_gbps_per_gpu(brief), 'Gb/s')} x {pct(d.transfer_efficiency)} = {num(link, 'GB/s')})"
            f" + {num(d.transfer_latency_ms, 'ms')} = {num(transfer_mean * 1e3, 'ms')}",
            "decode": _decode_words(analysis, brief, rate),
            "splits": _splits_text(analysis.splits, pools.general_nodes),
            "ttft_p95": f"{num(fixed, 'ms')} fixed + {num(wait_p95 * 1e3, 'ms')} wait + {num(stage_p95 * 1e3, 'ms')} prefill"
            f" + {num(transfer_p95 * 1e3, 'ms')} transfer{' + an unbounded wait for a decode slot' if decode_short else ''}"
            f" + 2 x {num(step_p95_ms, 'ms')} decode = {num(ttft_p95, 'ms')}",
        }

    analysis._text = text
    if splits:
        analysis._other_splits = partial(_splits, brief, shape, split, pools, rate_per_s, chunked)
    return analysis


def _decode_words(dis: DisaggAnalysis, brief: Brief, rate: float) -> str:
    """A decode replica's load, batch (Little's law) and step, in words; `rate`: the general pool's requests per second
    (the analysis's `decode` arithmetic, which a decode replica's operating point quotes)."""
    batch, sched_ms, step_ms = dis.decode_batch, brief.latency.scheduler_ms, dis.decode_step_ms
    gaps = max(brief.workload.output_tokens_mean - 1, 0.0)
    full = f"exceeds max-num-seqs {brief.deployment.max_num_seqs} (no steady state: the batch stays full)"
    return (
        f"{num(rate, 'req/s')} / {dis.decode_replicas} = {num(dis.decode_rate_per_replica_per_s, 'req/s')} a decode replica;"
        f" Little's law: batch = {num(dis.decode_rate_per_replica_per_s)} x ({num(gaps)} gaps x {num(step_ms + sched_ms, 'ms')} + 1.5 steps)"
        f" {f'= {num(batch)}' if math.isfinite(batch) else full}; a pure decode step {num(step_ms, 'ms')}, at the p95 batch"
        f" {num(dis.decode_step_p95_ms, 'ms')}"
    )


def _splits_text(points: tuple[SplitPoint, ...], nodes: int, n_plus_one: str = "") -> str:
    """Which splits of the general pool's nodes meet the SLO: where disaggregation stops paying on either side
    (`n_plus_one`: which of them keep N+1, splits_summary's words)."""
    ok = [p.prefill_nodes for p in points if p.meets_slo]
    if not points:
        return "no split: the general pool has one node"
    if not ok:
        return f"no split of the {nodes} nodes meets the SLO disaggregated"
    return (
        f"of the {nodes} general-pool nodes, {_node_range(ok)} on prefill meet the SLO{n_plus_one}; fewer leave"
        " the prefill pool over 100% busy (TTFT unbounded), more leave the decode pool short of batch slots or KV"
    )


def splits_summary(dis: DisaggAnalysis, brief: Brief) -> str:
    """The splits that meet the SLO (the arithmetic's `splits`) and, where the brief's availability target asks for N+1,
    which of them keep it: each re-planned with one node lost, as the failure table's row and the fleet searches judge
    it. Worked out where it is read (the conclusion, the SLO budget page), not in every re-plan's arithmetic."""
    from planner.failures import n_plus_one_check, needs_n_plus_one

    ok = [p.prefill_nodes for p in dis.splits if p.meets_slo]
    nodes = dis.prefill_nodes + dis.decode_nodes
    if not ok or not needs_n_plus_one(brief):
        return _splits_text(dis.splits, nodes)
    short = _short_with_a_node_lost(brief)
    kept = [n for n in ok if not short(n) and n_plus_one_check(brief.with_changes({"disaggregation.prefill_nodes": n}))[0]]
    lost = [n for n in ok if n not in kept]
    if not lost:
        words = ", each with N+1"
    elif not kept:
        words = ", none of them with N+1"
    else:
        run = kept == list(range(kept[0], kept[-1] + 1))
        words = f", {_node_range(kept) if run else ', '.join(map(str, kept))} of them with N+1"
    return _splits_text(dis.splits, nodes, words)


def _short_with_a_node_lost(brief: Brief) -> Callable[[int], bool]:
    """Whether the split with n prefill nodes loses N+1 to a pool short on its own (short_pools) once a node is lost
    and no spare steps in: the decode pool at n prefill nodes of the smaller general pool, or the prefill pool at n - 1,
    the two designs n_plus_one_check re-plans; read on the one-node-lost row's core (the failure table's, for the
    brief's own split). A split it names would be re-planned only to miss; False where it cannot tell."""
    from planner.core import verdict_core
    from planner.failures import Scenario, scenario_overrides
    from planner.mechanisms import resolve

    def never(n: int) -> bool:
        return False

    if brief.deployment.spare_nodes or brief.objective.kind is not ObjectiveKind.latency or brief.speculative.enabled:
        return never
    try:
        lost = verdict_core(resolve(brief.with_changes(scenario_overrides(brief, Scenario.one_node_lost))))
    except BriefError:
        return never
    if lost.disaggregation is None:
        return never
    rate, fixed_ms = lost.demand.request_rate_per_s, lost.slo.point.fixed_ms

    def sides(n: int) -> PoolsJudged:
        return short_pools(lost.brief, lost.shape, lost.pools, rate, fixed_ms, n)

    return lambda n: sides(n).decode_short or (n > 1 and sides(n - 1).prefill_short)


def _node_range(counts: list[int]) -> str:
    """10 to 13 for a run of counts, 11 for one."""
    return f"{counts[0]} to {counts[-1]}" if counts[-1] != counts[0] else f"{counts[0]}"


def _comparison(
    brief: Brief, pools: Pools, chunked: SloBudget, cap: Capacity, ttft_p95: float, itl_p95: float, meets: bool, stable: bool, busy: float
) -> DisaggComparison:
    share = cap.prefill_fraction / max(cap.prefill_fraction + cap.decode_fraction, 1e-12)
    balanced = min(max(round(pools.general_nodes * share), 1), max(pools.general_nodes - 1, 1))
    chunked_meets = chunked.ttft_ok and chunked.itl_ok
    chunked_judged = chunked.judged_itl_p95_ms
    beats = meets and (not chunked_meets or itl_p95 < chunked_judged) and ttft_p95 <= brief.slo.ttft_p95_ms
    mixed = chunked.point.mixed_step_share
    price = f" (the price: prompts queue for the {brief.disaggregation.prefill_nodes} prefill nodes' replicas instead of all {pools.general_nodes} nodes')"
    split = f"the split gives {brief.disaggregation.prefill_nodes} of {pools.general_nodes} nodes to prefill; the prefill:decode GPU time of the aggregated design ({pct(share)} prefill) balances at {balanced}"
    if beats:
        verdict = (
            f"disaggregation beats chunked prefill on the token gaps here: p95 ITL {num(itl_p95, 'ms')} against {num(chunked.itl_p95_ms, 'ms')}"
            f" ({pct(mixed)} of the aggregated replica's token gaps fall on a step carrying a prompt chunk); p95 TTFT"
            f" {num(ttft_p95, 'ms')} against {num(chunked.ttft_p95_ms, 'ms')}"
            f"{price if ttft_p95 > chunked.ttft_p95_ms else ''}; {split}"
        )
    elif not stable:
        verdict = (
            f"chunked prefill wins: the split leaves a pool short (prefill {pct(busy)} busy, or the decode batch does not fit); {split}"
        )
    else:
        verdict = (
            f"chunked prefill is as good or better: p95 ITL {num(chunked.itl_p95_ms, 'ms')} aggregated against {num(itl_p95, 'ms')},"
            f" p95 TTFT {num(chunked.ttft_p95_ms, 'ms')} against {num(ttft_p95, 'ms')}; disaggregation adds no throughput, only"
            f" removes prefill interference; {split}"
        )
    return DisaggComparison(
        chunked_ttft_p95_ms=chunked.ttft_p95_ms,
        chunked_itl_p95_ms=chunked.itl_p95_ms,
        chunked_tpot_p95_ms=chunked.tpot_p95_ms,
        chunked_meets_slo=chunked_meets,
        disaggregated_ttft_p95_ms=ttft_p95,
        disaggregated_itl_p95_ms=itl_p95,
        disaggregated_tpot_p95_ms=itl_p95,
        disaggregated_meets_slo=meets,
        balanced_prefill_nodes=balanced,
        beats_chunked=beats,
        verdict=verdict,
    )


def decode_batch_words(dis: DisaggAnalysis, max_num_seqs: int) -> str:
    """A decode replica's batch in words: 'a batch of 104', or the full batch when the load needs more."""
    if math.isfinite(dis.decode_batch):
        return f"a batch of {num(dis.decode_batch)}"
    return f"a full batch of {max_num_seqs} (max-num-seqs; the load needs more, so prompts wait for a slot without bound)"


def decode_pool_at_max_batch(brief: Brief, shape: ReplicaShape) -> AtMaxBatch:
    """A decode-pool replica with every batch slot taken (max-num-seqs), each sequence reading the brief's KV-sizing
    context: pure decode steps, no prompt chunk in any of them, so every gap is the same step."""
    w, seqs = brief.workload, brief.deployment.max_num_seqs
    context = w.kv_context_tokens or brief.running_context_tokens
    step_ms = shape.decode_step_s(float(seqs), context) * 1e3
    gap_ms = step_ms + brief.latency.scheduler_ms
    hold_s = (max(w.output_tokens_mean - 1, 0.0) * gap_ms + 1.5 * step_ms) / 1e3  # as disaggregation_analysis's Little's law
    rate = seqs / hold_s if hold_s > 0 else math.inf
    sched = f" + {num(brief.latency.scheduler_ms, 'ms')} scheduler" if brief.latency.scheduler_ms else ""
    return AtMaxBatch(
        batch=seqs,
        rate_per_replica_per_s=rate,
        context_tokens=context,
        decode_step_ms=step_ms,
        itl_p50_ms=gap_ms,
        itl_p95_ms=gap_ms,
        tpot_p50_ms=gap_ms,
        mixed_step_share=0.0,
        chunk_step_ms=None,
        arithmetic=(
            f"{seqs} sequences running on a decode-pool replica (max-num-seqs), each reading {num(context, 'tokens')} of KV:"
            f" a pure decode step {num(step_ms, 'ms')}{sched}: {num(gap_ms, 'ms')} between tokens, p50 and p95 alike (prompts are prefilled on the prefill pool, so no step carries a chunk);"
            f" the batch stays full at {num(rate, 'req/s')} per decode replica ({seqs} / {num(hold_s, 's')} a request holds its slot)"
        ),
    )


def apply_disaggregation(slo: SloBudget, analysis: DisaggAnalysis, brief: Brief, shape: ReplicaShape) -> SloBudget:
    """The SLO budget of the disaggregated design: its TTFT, ITL, TPOT and waterfalls replace the aggregated ones, and
    the full-batch bound is the decode pool's (the engine command is the decode pool's)."""
    judged = slo.itl_metric.judged(analysis.itl_p95_ms, analysis.tpot_p95_ms)
    fixed_ms = slo.point.fixed_ms
    budget = slo.with_full_batch(
        decode_pool_at_max_batch,
        {
            "ttft_p50_ms": analysis.ttft_p50_ms,
            "ttft_p95_ms": analysis.ttft_p95_ms,
            "ttft_mean_ms": sum(s.ms for s in analysis.ttft_waterfall),
            "itl_p50_ms": analysis.itl_p50_ms,
            "itl_p95_ms": analysis.itl_p95_ms,
            "tpot_p50_ms": analysis.tpot_p50_ms,
            "tpot_p95_ms": analysis.tpot_p95_ms,
            "ttft_ok": analysis.stable and analysis.ttft_p95_ms <= slo.ttft_target_ms,
            "itl_ok": judged <= slo.itl_target_ms,  # the running sequences' gaps, at a full batch when the decode pool is short
            "ttft_waterfall": analysis.ttft_waterfall,
            "itl_waterfall": analysis.itl_waterfall,
            "queue_model": "Disaggregated: prompts queue FCFS for a prefill-pool replica (M/G/1, a prompt's service its own chunk steps,"
            " no decode in them); the KV moves to a decode replica over the network; decode replicas run pure decode steps,"
            " their batch from Little's law.",
            "percentile_method": "TTFT p95: the M/G/1 wait's p95 (zero with probability 1 - busy, else exponential) + the p95 covered prompt's"
            " prefill and transfer + two decode steps at the p95 batch (a sum of p95s: conservative). ITL and TPOT: the pure decode"
            " step at the mean and the p95 batch (mean + 1.645 sqrt(mean)).",
            "basis": f"Prefill/decode disaggregation: {analysis.split_words}. Chunked prefill on the same nodes gives p95 TTFT"
            f" {num(analysis.comparison.chunked_ttft_p95_ms, 'ms')} and p95 ITL {num(analysis.comparison.chunked_itl_p95_ms, 'ms')}"
            f" ({'meets' if analysis.comparison.chunked_meets_slo else 'misses'} the SLO): the comparison with disaggregation.",
        },
    )
    return budget.reworded({}, lambda words: _pool_words(words, analysis, brief, fixed_ms))


def _pool_words(chunked: dict[str, str], dis: DisaggAnalysis, brief: Brief, fixed_ms: float) -> dict[str, str]:
    """The SLO budget's arithmetic of a disaggregated design: its TTFT, ITL and TPOT are the two pools' (from
    disaggregation_analysis's figures, as it sums them); the latency model's other words are the aggregated replica's,
    kept as the comparison and named so."""
    slo, sched = brief.slo, brief.latency.scheduler_ms
    b = dis.decode_batch if math.isfinite(dis.decode_batch) else float(brief.deployment.max_num_seqs)
    b_p95 = b + P95_Z * math.sqrt(b)
    wait_p50_ms = _wait_quantile_s(dis.prefill_busy, dis.prefill_wait_ms_mean / 1e3, 0.5) * 1e3
    decode_short = not math.isfinite(dis.decode_batch) or dis.decode_kv_fraction > 1
    slot = " + an unbounded wait for a decode slot" if decode_short else ""
    judges = "" if slo.itl_metric is ItlMetric.itl else " (the brief judges TPOT)"
    step, step_p95 = num(dis.decode_step_ms, "ms"), num(dis.decode_step_p95_ms, "ms")
    batch = decode_batch_words(dis, brief.deployment.max_num_seqs)
    mean_terms = " + ".join(f"{s.component} {num(s.ms)}" for s in dis.ttft_waterfall if s.ms)
    comparison = {k: f"chunked prefill on the same GPUs, the comparison (not this design's figure): {v}" for k, v in chunked.items()}
    pools = {
        "ttft_p50_ms": f"{num(fixed_ms, 'ms')} fixed + {num(wait_p50_ms, 'ms')} median prefill-pool wait (M/G/1, {pct(dis.prefill_busy)} busy)"
        f" + {num(dis.prefill_stage_ms_mean, 'ms')} prefill (mean covered prompt) + {num(dis.transfer_ms_mean, 'ms')} KV transfer{slot}"
        f" + 1.5 x {step} decode = {num(dis.ttft_p50_ms, 'ms')}",
        "ttft_mean_ms": f"{mean_terms} = {num(sum(s.ms for s in dis.ttft_waterfall), 'ms')}",
        "ttft_p95_ms": f"the p95 path on the two pools: {dis.arithmetic['ttft_p95']} vs target {num(slo.ttft_p95_ms, 'ms')}",
        "itl_p50_ms": f"a pure decode step on the decode pool at {batch}: {step} + {num(sched, 'ms')} scheduler = {num(dis.itl_p50_ms, 'ms')}"
        " (no step carries a prompt chunk: prompts are prefilled on the prefill pool)",
        "itl_p95_ms": f"the pure decode step at the p95 batch ({num(b)} + 1.645 x √{num(b)} = {num(b_p95)}): {step_p95}"
        f" + {num(sched, 'ms')} scheduler = {num(dis.itl_p95_ms, 'ms')} vs target {num(slo.itl_p95_ms, 'ms')}{judges}",
        "tpot_p50_ms": f"a reply's mean gap is the same pure decode step (no prompt chunk interferes): {step} + {num(sched, 'ms')}"
        f" = {num(dis.tpot_p50_ms, 'ms')}",
        "tpot_p95_ms": f"a reply's mean gap at the p95 batch ({num(b)} + 1.645 x √{num(b)} = {num(b_p95)}): the pure decode step {step_p95}"
        f" + {num(sched, 'ms')} = {num(dis.tpot_p95_ms, 'ms')}" + (f" vs target {num(slo.itl_p95_ms, 'ms')}{judges}" if judges else ""),
    }
    words = comparison | pools
    keys = [key for key in words if key != "ttft_p50_ms"]  # the p50 (the aggregated words have none) ahead of the mean
    keys.insert(keys.index("ttft_mean_ms"), "ttft_p50_ms")
    return {key: words[key] for key in keys}


# --- the two pools' operating point and capacity under the SLO ---------------------------------------------


def _binding_pool(load: _Load, brief: Brief) -> str:
    """The pool that misses first: the prefill queue for TTFT, the decode pool for the token gaps, or for every latency
    when it has no steady state (its batch slots or KV full: prompts wait for a slot without bound, the TTFT too)."""
    if load.busy >= 1:
        return "prefill"
    if load.decode_short or load.ttft_p95_ms <= brief.slo.ttft_p95_ms:
        return "decode"
    return "prefill"


_SCALE_BISECTIONS = 30  # halvings of the load multiple: far below any figure shown
_SCALE_CEILING = 1e4  # multiples of the peak: the search stops doubling past it


class _PoolLoads:
    """The brief's two pools at m x the peak `rate_per_s`, each multiple worked out once: what a capacity search tests
    and what the capacity it finds reaches."""

    def __init__(self, brief: Brief, shape: ReplicaShape, pools: Pools, rate_per_s: float, fixed_ms: float) -> None:
        self._brief, self._shape, self._pools, self._rate_per_s, self._fixed_ms = brief, shape, pools, rate_per_s, fixed_ms
        self._split = _split_of(brief, shape, pools)  # the split's replicas and a prompt's service: the same at every load
        self._loads: dict[float, _Load] = {}

    def __call__(self, m: float) -> _Load:
        if m not in self._loads:
            self._loads[m] = _at_load(self._brief, self._shape, self._pools, self._split, self._rate_per_s * m, self._fixed_ms)
        return self._loads[m]

    def model_crossing(self, low: float, high: float) -> float:
        """Where a capacity search of (low, high] looks first (its tests decide): where the pools' margin crosses 0 on
        their closed forms with the decode batch from Little's law on the decode step's linear piece at the peak's
        batch (_linear_pace: no root-find, and the search's answer to ~1e-12 while the batch stays on that piece), up
        to where they lose their steady state, where the prefill pool's TTFT binds; else that bound (_steady_up_to),
        where the search looked first before. Where the token gap binds, its p95 climbs so slowly that the decode
        root-find's tolerance (1e-6 of a batch) can turn a test within a bracket or two of the crossing: the search
        then ends where the points it tests put it, so it keeps to those it tested before."""
        steady = _steady_up_to(self._brief, self._shape, self(1.0))
        top = min(high, steady * (1 - _MODEL_SHORT))  # the margin is finite up to the steady state's bound
        if not low < top:
            return steady
        pace = _linear_pace(self._brief, self._shape, self(1.0).batch)

        def margins(m: float) -> tuple[float, float]:
            load = _at_load(self._brief, self._shape, self._pools, self._split, self._rate_per_s * m, self._fixed_ms, pace)
            return _margins(self._brief, load)

        def margin(m: float) -> float:
            return max(margins(m))

        at_low, at_top = margin(low), margin(top)
        if not (at_low <= 0 < at_top and math.isfinite(at_top)):
            return steady
        crossing = root_in_bracket(margin, low, top, _MODEL_XTOL * top, at_low, at_top, smooth=True)
        ttft, gap = margins(crossing)
        return crossing if ttft >= gap else steady

    def meets(self, m: float) -> tuple[bool, float]:
        """Whether the pools meet the SLO at m x the peak, and _capacity_margin there: (False, inf) for a prefill pool
        at least 100% busy (_at_load's rule: no steady state) without the decode pool's root-find."""
        if m not in self._loads and _prefill_busy(self._pools, self._split, self._rate_per_s * m)[2] >= 1:
            return False, math.inf
        load = self(m)
        return load.meets, _capacity_margin(self._brief, load)


def _reached(brief: Brief, at: _PoolLoads, scale: float) -> str:
    """reached_at_capacity for the two pools at `scale` x the peak (their SLO capacity) and just past it."""

    def p95s(m: float) -> tuple[float, float]:
        load = at(m)
        if not load.stable:
            return math.inf, math.inf
        return load.ttft_p95_ms, brief.slo.itl_metric.judged(load.itl_p95_ms, load.itl_p95_ms)

    return reached_at_capacity(brief, p95s(scale), p95s(scale * JUST_PAST))


def capacity_scale(
    brief: Brief, shape: ReplicaShape, pools: Pools, rate_per_s: float, fixed_ms: float, at: _PoolLoads | None = None
) -> tuple[float, str]:
    """(m, pool): the multiple of the peak at which the two pools stop meeting the SLO, and the pool that binds there
    (the load scales both pools alike: the split is fixed). m = 0 when even a trickle misses. `fixed_ms`: the request
    path outside the engine the TTFT adds; `at`: the pools' loads (_PoolLoads) when the caller reads them too."""
    at = _PoolLoads(brief, shape, pools, rate_per_s, fixed_ms) if at is None else at
    test = at.meets  # below the capacity: the pools meet the SLO; the p95s' margin steers

    low, high, below = 0.0, 1.0, None
    holds, margin = test(high)
    while holds:
        low, high, below = high, high * 2, (high, margin)
        if high > _SCALE_CEILING:
            return high, "neither"
        holds, margin = test(high)
    if low == 0.0:
        holds_low, margin_low = test(1e-3)
        if not holds_low:
            return 0.0, _binding_pool(at(1e-3), brief)
        low, below = 1e-3, (1e-3, margin_low)
    question = question_key("disaggregated_capacity", brief)
    last = LastAnswers.get(question)  # the peak it crossed at last time (a load slider, traffic doubled): the same pools
    guess = at.model_crossing(low, high) if last is None or rate_per_s <= 0 else last / rate_per_s
    low, high = bisection_bracket(test, low, high, _SCALE_BISECTIONS, below, (high, margin), guess)  # as a bisection ends
    LastAnswers.keep(question, low * rate_per_s)
    return low, _binding_pool(at(high), brief)


_CLEAR_OF_CAPACITY = 1e-6  # relative: past a capacity search's last bracket (2^-29 at most) and its root-finds' noise


def meets_by_capacity(scale: float, multiple: float) -> bool | None:
    """Whether the two pools meet the SLO at `multiple` x the peak, as their SLO-capacity search's answer `scale`
    (capacity_scale) tells it: True clearly below it (they meet at `scale`), False clearly above (they miss at the top
    of its last bracket, and more load never helps); None near it, or where the search found no crossing (0, or past
    its ceiling: a bound only)."""
    if not 0 < scale <= _SCALE_CEILING:
        return None
    band = _CLEAR_OF_CAPACITY * max(scale, 1.0)
    if multiple < scale - band:
        return True
    return False if multiple > scale + band else None


def clear_above(scale: float) -> float:
    """A multiple clearly above a capacity search's answer `scale` (meets_by_capacity's band): pools that meet the SLO
    there have an SLO capacity above `scale`, whatever bracket their own search ends with (inf where `scale` is no
    crossing the search found, as meets_by_capacity takes it)."""
    return scale + _CLEAR_OF_CAPACITY * max(scale, 1.0) if 0 < scale <= _SCALE_CEILING else math.inf


def _steady_up_to(brief: Brief, shape: ReplicaShape, load: _Load) -> float:
    """The multiple of `load` past which the pools have no steady state (_at_load's rules in closed form: the prefill
    pool 100% busy, or the decode batch the load needs past max-num-seqs or the KV cache): where the capacity lies
    when the latency jumps to unbounded before it crosses a target. Only where a capacity search looks first: its
    tests decide."""
    w = brief.workload
    ctx, sched, gaps = brief.running_context_tokens, brief.latency.scheduler_ms / 1e3, max(w.output_tokens_mean - 1, 0.0)

    def rate_at(batch: float) -> float:  # the decode rate a replica carries with this batch running (Little's law)
        step = shape.decode_step_s(max(batch, 1.0), ctx)
        return batch / (gaps * (step + sched) + 1.5 * step)

    top = float(brief.deployment.max_num_seqs)
    kv_batch = shape.kv_capacity_tokens / (w.input_tokens_mean + w.output_tokens_mean)
    decode_rate = rate_at(min(top, kv_batch))
    prefill = 1 / load.busy if load.busy > 0 else math.inf
    decode = decode_rate / load.d_rate if load.d_rate > 0 else math.inf
    return min(prefill, decode)


def _capacity_margin(brief: Brief, load: _Load) -> float:
    """How far the two pools' p95s are over their targets (<= 0 meets; inf: no steady state), near-linear in the load
    so a capacity search's chords land near the crossing: the TTFT's (p95 / target - 1) x the prefill pool's idle share
    (its queue's wait climbs like 1 / that share), the token gap's p95 / target - 1 (a decode step grows about linearly
    with the batch)."""
    return max(_margins(brief, load))


def _margins(brief: Brief, load: _Load) -> tuple[float, float]:
    """_capacity_margin's two terms: the TTFT's and the token gap's (both inf without a steady state)."""
    if not load.stable:
        return math.inf, math.inf
    slo = brief.slo
    ttft_over = (load.ttft_p95_ms / slo.ttft_p95_ms - 1) * (1 - load.busy)
    return ttft_over, slo.itl_metric.judged(load.itl_p95_ms, load.itl_p95_ms) / slo.itl_p95_ms - 1


def pools_meet(brief: Brief, shape: ReplicaShape, pools: Pools, rate_per_s: float, fixed_ms: float) -> bool:
    """Whether the brief's two pools meet the SLO at `rate_per_s` (the whole fleet's), `fixed_ms` the request path
    outside the engine: the capacity search's test (capacity_scale)."""
    return _at_load(brief, shape, pools, _split_of(brief, shape, pools), rate_per_s, fixed_ms).meets


class SplitP95s(NamedTuple):
    """A split's two pools at one load as a re-plan of that split reads them (split_p95s)."""

    stable: bool  # the prefill pool under 100% busy, the decode pool's batch within max-num-seqs and its KV cache
    meets: bool  # stable, and both p95s within their targets
    ttft_p95_ms: float
    itl_p95_ms: float  # a pure decode step's gap at the p95 batch: its ITL and TPOT alike
    decode_rate_per_replica_per_s: float


def split_p95s(brief: Brief, shape: ReplicaShape, pools: Pools, rate_per_s: float, fixed_ms: float, prefill_nodes: int) -> SplitP95s:
    """The two pools' steady state, whether they meet the SLO, and their p95s with `prefill_nodes` of the brief's general
    pool on prefill at `rate_per_s`: the figures a re-plan of that split reads of its pools (disaggregation_analysis at
    its own split, which differs from the brief's only in the pools' nodes and replicas: _moved)."""
    split = _moved(_split_of(brief, shape, pools), prefill_nodes, pools, shape)
    load = _at_load(brief, shape, pools, split, rate_per_s, fixed_ms)
    return SplitP95s(load.stable, load.meets, load.ttft_p95_ms, load.itl_p95_ms, load.d_rate)


class PoolsJudged(NamedTuple):
    """A split's two pools at one load, judged on their closed forms (short_pools)."""

    prefill_short: bool  # the prefill pool misses on its own: so does every split with fewer prefill nodes
    decode_short: bool  # the decode pool misses on its own: so does every split with more
    meets: bool  # both pools meet the SLO: a re-plan's verdict of the split at this load meets only if they do


def short_pools(
    brief: Brief, shape: ReplicaShape, pools: Pools, rate_per_s: float, fixed_ms: float, prefill_nodes: int | None = None
) -> PoolsJudged:
    """Whether each pool of the brief's split (or of the split with `prefill_nodes` on prefill) misses the SLO on its own
    at `rate_per_s`, whatever the other gives, and whether the two meet it together (_at_load: the verdict's SLO rule of
    a disaggregated design). The prefill pool: over 100% busy, or its part of the p95 TTFT (`fixed_ms` + queue wait +
    prefill + KV transfer, the decode steps left out) past the target; fewer prefill nodes only raise its busy share
    and wait. The decode pool: no steady state (the batch past max-num-seqs or the KV cache) or its p95 ITL past the
    target; more prefill nodes leave it fewer replicas for the same load. So on the same general pool and load, every
    split with fewer prefill nodes misses when the first holds, every split with more when the second does."""
    split, slo = _split_of(brief, shape, pools), brief.slo
    if prefill_nodes is not None:
        split = _moved(split, prefill_nodes, pools, shape)
    load = _at_load(brief, shape, pools, split, rate_per_s, fixed_ms)
    prefill_path_ms = fixed_ms + (load.wait_p95 + split.stage_p95 + split.transfer_p95) * 1e3
    prefill = not load.busy < 1 or prefill_path_ms > slo.ttft_p95_ms
    decode = load.decode_short or slo.itl_metric.judged(load.itl_p95_ms, load.itl_p95_ms) > slo.itl_p95_ms
    return PoolsJudged(prefill, decode, load.meets)


def disaggregated_operating_point(
    brief: Brief,
    shape: ReplicaShape,
    pools: Pools,
    rate_per_s: float,
    op: OperatingPoint,
    dis: DisaggAnalysis,
    chunked: SloBudget,
    cap: Capacity,
    with_capacity: bool = True,
) -> tuple[OperatingPoint, DisaggAnalysis]:
    """The operating point of a decode replica at its own load (Little's law on pure decode steps), its capacity under
    the SLO where the binding pool reaches its target; and the analysis with that capacity and the binding pool."""
    fixed_ms = chunked.point.fixed_ms
    at = _PoolLoads(brief, shape, pools, rate_per_s, fixed_ms) if with_capacity else None  # the search's, and what it reaches
    scale, pool = capacity_scale(brief, shape, pools, rate_per_s, fixed_ms, at) if at is not None else (math.nan, "")
    d_rate = dis.decode_rate_per_replica_per_s
    capacity = scale * d_rate
    ctx = brief.running_context_tokens
    batch = dis.decode_batch
    kv_gb = batch * ctx * shape.kv_bytes_per_token / GB
    weights_gb = shape.weights_bytes / GB
    sched = brief.latency.scheduler_ms
    limit = None
    if not dis.stable:
        limit = Limit.prefill if dis.prefill_busy >= 1 else (Limit.kv if dis.decode_kv_fraction > 1 else Limit.slots)
    reached = _reached(brief, at, scale) if at is not None and 0 < scale < _SCALE_CEILING else ""

    def words(point: OperatingPoint) -> dict[str, str]:
        """The decode replica's arithmetic (each of the aggregated point's figures replaced), written on first read."""
        full_past = reached != "" and at is not None and at(scale * JUST_PAST).decode_short  # the clause's own load just past it
        decode = (  # a decode pool whose batch runs full just past the capacity: its slots or KV bind, not its gaps
            "the decode pool's batch (max-num-seqs or its KV, full just past it)"
            if full_past
            else f"the decode pool ({brief.slo.itl_metric.value.upper()})"
        )
        which = {"prefill": "the prefill pool's queue (TTFT)", "decode": decode, "neither": "neither pool"}.get(pool, "")
        full = f"more than the {brief.deployment.max_num_seqs} sequences (max-num-seqs) a decode replica runs: no steady state"
        return {
            "rate_per_replica_per_s": f"{num(rate_per_s * pools.general_share, 'req/s')} / {dis.decode_replicas} decode replicas"
            f" = {num(d_rate, 'req/s')} a decode replica (the prefill pool: {num(dis.prefill_rate_per_replica_per_s, 'req/s')}"
            f" a prefill replica, {pct(dis.prefill_busy)} busy)",
            "in_flight": f"a decode replica, pure decode steps: {_decode_words(dis, brief, rate_per_s * pools.general_share)}",
            "tpot_ms": f"a pure decode step at {decode_batch_words(dis, brief.deployment.max_num_seqs)}: {num(dis.decode_step_ms, 'ms')}"
            f" + {num(sched, 'ms')} scheduler (no prefill interference: prompts run on the prefill pool)",
            "kv_in_use_gb": f"{num(batch)} running x {num(ctx, 'tokens')} x {num(shape.kv_bytes_per_token / 1024, 'KiB')}"
            f" = {num(kv_gb, 'GB')} of a decode replica's {num(point.kv_capacity_gb, 'GB')} KV pool"
            f" ({pct(kv_gb / point.kv_capacity_gb) if point.kv_capacity_gb > 0 else 'none'})"
            if math.isfinite(batch)
            else f"the load needs {full}",
            "memory_used_gb": f"{num(weights_gb, 'GB')} weights + {num(kv_gb, 'GB')} KV = {num(weights_gb + kv_gb, 'GB')} of a decode replica's"
            f" {num(point.memory_total_gb, 'GB')}"
            if math.isfinite(batch)
            else f"{num(weights_gb, 'GB')} weights + the KV of {full}",
            "capacity_rate_per_s": f"both pools scaled with the load (the split fixed): they meet p95 TTFT <= {num(brief.slo.ttft_p95_ms, 'ms')}"
            f" and p95 {brief.slo.itl_metric.value.upper()} <= {num(brief.slo.itl_p95_ms, 'ms')} up to {times(scale)} the peak,"
            f" {num(capacity, 'req/s')} a decode replica; {which} binds there (bisection over the two-pool model)",
        }

    point = op.reworded(
        {
            "general_replicas": dis.decode_replicas,
            "rate_per_replica_per_s": d_rate,
            "in_flight": batch,
            "engine_time_s": batch / d_rate if d_rate > 0 and math.isfinite(batch) else math.inf,
            "decode_step_ms": dis.decode_step_ms,
            "tpot_ms": dis.tpot_p50_ms,  # without a steady state: a decode replica's full batch, as its ITL waterfall has it
            "prefill_slot_busy": dis.prefill_busy,
            "interference": 0.0,
            "kv_in_use_gb": kv_gb,
            "memory_used_gb": weights_gb + kv_gb,
            "capacity_rate_per_s": capacity,
            "capacity_reached": reached,
            "load_vs_capacity": 1 / scale if scale > 0 else math.inf,
            "headroom": scale - 1 if scale > 0 else -1.0,
            "stable": dis.stable,
            "limit": limit,
            "fix": "" if dis.stable else "; ".join(p.change for p in dis.problems),
        },
        words,
    )
    return point, dis.model_copy(update={"capacity_scale": scale, "binding_pool": pool})
