"""Step 5 of the method: the latency model of one general-pool replica, and the SLO budget built on it.

One model serves the operating point, the SLO budget, the failure table and the simulator check:
- Arrivals are Poisson at rate r (the general pool's requests / its replicas). Every prompt hits the
  prefix cache at the brief's rate, as the simulator's requests do.
- The running batch B comes from Little's law at the engine's own pace (planner.operating_point): a
  sequence holds its slot for its prefill steps and (output - 1) token gaps, not for how long a person
  takes to read the stream. A decode step reads each running sequence's own context: the mean prompt
  plus the size-biased half reply (long replies stay in the batch longer).
- Every engine step costs its fixed time (step overhead + scheduler) + max(compute of its tokens, the
  weight and KV bytes it reads), as in the simulator. Decode tokens come first in every step and a
  prompt's chunk (max-num-batched-tokens - B tokens) rides in the same step (vLLM's chunked prefill).
- Prompts queue FCFS for the prefill slot of the steps (M/G/1): a prompt holds the slot for its chunk
  steps; W = r E[S^2] / (2 (1 - rho)), plus half a step in progress; the wait's tail is a gamma with the
  M/G/1 wait's first two moments (Takacs). An Erlang C wait for a batch slot joins it near max-num-seqs.
- TTFT (end to end, the fixed request path included) is over the prompts the target covers (up to its
  input cap): the wait plus each prompt's own chunk steps, its percentiles from their convolution.
- ITL is the gap between consecutive tokens: a pure decode step, or a step that also carries a prefill
  chunk (longer); its percentiles come from that mixture. TPOT is a reply's mean gap: (decode step +
  scheduler) / (1 - interference), the interference being the time prompts' steps take beyond the
  decode steps they stand in for.
Checked against the simulator on the same basis: docs/crosscheck.md, tests/test_crosscheck.py.
"""

from __future__ import annotations

import math
import weakref
from bisect import bisect_left, bisect_right
from collections.abc import Callable, Iterable
from functools import cached_property, lru_cache, partial
from statistics import NormalDist
from typing import TYPE_CHECKING, Any, NamedTuple, TypeVar

import numpy as np
from pydantic import BaseModel, ConfigDict, PrivateAttr, computed_field

from planner.brief import Brief, ItlMetric, ObjectiveKind
from planner.fmt import num, pct
from planner.lengths import clamped_moments, length_cv2
from planner.mechanisms import ttft_terms, ttft_terms_s
from planner.multimodal import encoder_s_per_request
from planner.numerics import (
    bracket_root,
    gamma_p,
    gamma_p_array,
    gamma_p_inverse,
    gamma_p_inverse_array,
    gamma_p_row_sums,
    gamma_p_slopes,
    gamma_p_value,
    gamma_sums,
    poisson_pmf_cdf,
)
from planner.replica import ReplicaShape

if TYPE_CHECKING:
    from planner.speculative import SpecSwitch
from planner.step_model import (
    ROOFLINE,
    comm_part_s,
    communicates,
    compute_part_s,
    decode_step_function,
    speculative_step_time_s,
    speculative_step_times_s,
    step_time_s,
    step_times_s,
    weights_part_s,
)
from planner.trusted import trusted

__all__ = [
    "P95_Z",
    "AtMaxBatch",
    "LatencyPoint",
    "Pace",
    "SloBudget",
    "TradeoffPoint",
    "Turnover",
    "WaterfallStep",
    "batch_slot_words",
    "batched_tokens_tradeoff",
    "chunk_tradeoff_words",
    "engine",
    "full_batch_admission_rate",
    "full_batch_turnover",
    "judged_budget",
    "judged_p95s_ms",
    "latency_at",
    "latency_point",
    "length_cv2",
    "pace",
    "request_path_s",
    "slo_budget",
    "slo_margin",
]

P95_Z = 1.645  # standard normal 95th percentile
_MAX_SHARE = 0.999
_NORMAL = NormalDist()
_TTFT_POINTS = 48  # prompt lengths the TTFT distribution is evaluated at (equal-probability points)


class _Model(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class WaterfallStep(_Model):
    component: str
    ms: float


class TradeoffPoint(_Model):
    x: float  # the engine limit's value (tokens or sequences)
    ttft_p95_ms: float
    itl_p95_ms: float
    tpot_p95_ms: float  # each reply's mean gap, for briefs whose ITL target judges TPOT
    longest_step_ms: float  # one engine step carrying a full prefill chunk: the worst single token gap


class Pace(NamedTuple):
    """How fast one replica moves a request at a given load and running batch: what Little's law needs. A plain tuple,
    not a model: the running-batch solves build ~100 of them a plan, and none leaves the planner."""

    running_batch: float
    decode_step_ms: float  # a pure decode step at the running batch (fixed overhead included, scheduler not)
    slot_service_ms: float  # mean time a prompt's chunk steps take
    prefill_slot_busy: float  # rate x slot service
    interference: float  # share of time prompts' steps take beyond the decode steps they stand in for
    tpot_ms: float  # a reply's mean gap: (decode step + scheduler) / (1 - interference)
    engine_time_s: float  # how long a request holds its batch slot: its chunk steps + (output - 1) gaps


class LatencyPoint(_Model):
    """Every intermediate figure of the latency model at one load and one engine configuration."""

    rate_per_replica_per_s: float
    load_batch: float  # sequences the load keeps running (Little's law), before the max-num-seqs cap
    running_batch: float
    running_batch_p95: float
    context_tokens: float  # KV a running sequence's decode step reads, mean
    hold_s: float  # how long a sequence holds a batch slot
    decode_step_ms: float  # at the running batch
    decode_step_p95_ms: float  # at the p95 running batch
    scheduler_ms: float
    step_fixed_ms: float  # per engine step whatever it carries: fixed overhead + scheduler
    step_memory_ms: float  # the batch's weight and KV reads in a step (hidden under a prefill chunk's compute)
    hit_rate: float
    uncached_tokens_mean: float
    service_cv2: float
    prefill_service_ms: float  # mean uncached prompt / prefill throughput
    rho_prefill: float
    rho_decode: float
    rho: float
    slot_service_ms: float  # mean time a prompt holds the prefill slot: its chunk steps
    prefill_slot_busy: float  # utilization of the prefill slot prompts queue for
    prompt_wait_ms: float  # M/G/1 wait for the prompts ahead
    admission_wait_ms: float  # Erlang C wait for a batch slot, mean
    admission_busy: float  # P(a request waits for a batch slot); given a wait, exponential
    batch_slots: int  # the slots that wait runs on: max-num-seqs, or fewer where the KV pool holds fewer sequences
    step_wait_ms: float  # the rest of the step in progress when a prompt arrives
    queue_wait_ms: float
    queue_wait_p95_ms: float
    chunks_mean: float  # engine steps a mean prompt's chunks ride in
    cap_uncached_tokens: float
    chunk_tokens: float
    chunks: float
    prefill_stage_ms: float  # a prompt at the TTFT cap: its chunk steps
    prefill_covered_mean_ms: float  # the mean over the prompts the target covers
    fixed_ms: float
    ttft_mean_ms: float
    ttft_p50_ms: float
    ttft_p95_ms: float
    interfering_rate_per_s: float  # prompts a second whose steps interrupt decode: the offered rate, no faster than the
    # prefill slot serves them; without a steady state, the full batch's admissions (full_batch_admission_rate)
    rho_interference: float
    rho_interference_p95: float  # the share of the p95 TPOT beyond the p95 batch's decode gap (1 - gap p95 / TPOT p95)
    itl_interference_ms: float  # what interference adds to a reply's mean gap
    mixed_step_share: float  # share of token gaps that fall on a step carrying a prefill chunk
    mixed_step_ms: float  # mean such step
    itl_p50_ms: float  # gaps between consecutive tokens
    itl_p95_ms: float
    tpot_p50_ms: float  # a reply's mean gap
    tpot_p95_ms: float
    longest_step_ms: float


class AtMaxBatch(_Model):
    """The ITL with every batch slot taken (max-num-seqs running): the bound the configuration allows."""

    batch: int
    rate_per_replica_per_s: float  # the rate that keeps the batch full at the engine's pace
    context_tokens: float
    decode_step_ms: float
    itl_p50_ms: float  # gaps between consecutive tokens
    itl_p95_ms: float
    tpot_p50_ms: float  # a reply's mean gap
    mixed_step_share: float  # share of the gaps that fall on a step carrying a prefill chunk
    # a step carrying a mean prompt's uncached tokens beside the full batch, scheduler included; None where no prompt
    # rides in a decode step (a disaggregated design's decode pool)
    chunk_step_ms: float | None
    arithmetic: str


class SloBudget(_Model):
    """p50/p95 TTFT, ITL and TPOT against the targets, with their waterfalls, model and trade-off curves."""

    ttft_p50_ms: float
    ttft_p95_ms: float
    ttft_mean_ms: float
    itl_p50_ms: float
    itl_p95_ms: float
    tpot_p50_ms: float
    tpot_p95_ms: float
    ttft_target_ms: float
    itl_target_ms: float
    itl_metric: ItlMetric  # what the ITL target judges: per-token gaps or each reply's mean gap
    ttft_input_cap_tokens: int
    ttft_ok: bool
    itl_ok: bool
    ttft_waterfall: tuple[WaterfallStep, ...]
    itl_waterfall: tuple[WaterfallStep, ...]
    queue_model: str
    percentile_method: str
    basis: str
    point: LatencyPoint
    mechanisms: tuple[WaterfallStep, ...] = ()  # TTFT terms of the mechanisms a brief turns on: a KV reload, the encoder, an adapter load
    mechanisms_mean: tuple[WaterfallStep, ...] = ()  # the same as a mean request meets them (the mean path's, ttft_waterfall's)
    _curves: _Curves | None = PrivateAttr(default=None)  # what the curves are worked out from (None: a re-plan skips them)
    _text: tuple[Brief, LatencyPoint, str | Callable[[], str], tuple[WaterfallStep, ...]] = (
        PrivateAttr()
    )  # the arithmetic's: brief, point, basis (or what writes it), mean mechanisms
    # the words a design whose figures replace the point's writes over the point's (a disaggregated design's two pools)
    _rewords: tuple[Callable[[dict[str, str]], dict[str, str]], ...] = PrivateAttr(default=())

    @computed_field  # type: ignore[prop-decorator]
    @cached_property
    def arithmetic(self) -> dict[str, str]:
        """Each figure's arithmetic in words, written on first read (a re-plan's is never read)."""
        brief, point, basis, mean_mechanisms = self._text
        words = _arithmetic(brief, point, basis if isinstance(basis, str) else basis(), mean_mechanisms)
        for reword in self._rewords:
            words = reword(words)
        return words

    def reworded(self, update: dict[str, Any], reword: Callable[[dict[str, str]], dict[str, str]]) -> SloBudget:
        """A copy with `update` applied whose arithmetic is `reword` of this one's, written on first read: the words of
        the figures the update replaces, so each figure's arithmetic is the one that gives it."""
        copy = self.model_copy(update=update)
        copy.__dict__.pop("arithmetic", None)  # words already read are the ones replaced
        copy._rewords = (*self._rewords, reword)
        return copy

    # The full-batch bound and the trade-off curves (about 17 more latency points) are worked out the first time they
    # are read (the SLO budget page, the engine configuration, the JSON), not for every plan a slider move makes.

    @computed_field  # type: ignore[prop-decorator]
    @cached_property
    def at_max_batch(self) -> AtMaxBatch | None:
        """The per-token gaps with max-num-seqs running (the configuration's bound); None in re-plans that skip the curves."""
        c = self._curves
        return None if c is None else c.full_batch(c.brief, c.shape)

    @computed_field  # type: ignore[prop-decorator]
    @cached_property
    def tradeoff_batched_tokens(self) -> tuple[TradeoffPoint, ...]:
        """p95s against max-num-batched-tokens at the operating point (empty in re-plans that skip the curves)."""
        c = self._curves
        return () if c is None else batched_tokens_tradeoff(c.brief, c.shape, c.rate, c.load_batch, c.running_batch)

    @computed_field  # type: ignore[prop-decorator]
    @cached_property
    def tradeoff_max_num_seqs(self) -> tuple[TradeoffPoint, ...]:
        """p95s against max-num-seqs at the operating point (empty in re-plans that skip the curves)."""
        c = self._curves
        if c is None:
            return ()
        tokens = c.brief.deployment.max_num_batched_tokens
        return _tradeoff(
            [
                (v, latency_point(c.brief, c.shape, c.rate, c.load_batch, max_num_seqs=v, max_num_batched_tokens=max(tokens, v + 1)))
                for v in _max_num_seqs_values(c.brief.deployment.max_num_seqs, c.load_batch)
                if v <= tokens  # vLLM refuses more slots than the token budget (the brief does too)
            ]
        )

    @property
    def judged_itl_p95_ms(self) -> float:
        """The figure the ITL target judges (slo.itl_metric)."""
        return self.itl_metric.judged(self.itl_p95_ms, self.tpot_p95_ms)

    def with_full_batch(self, full_batch: Callable[[Brief, ReplicaShape], AtMaxBatch], update: dict[str, Any]) -> SloBudget:
        """A copy with `update` applied whose full-batch bound is `full_batch`'s (a disaggregated design's decode pool)."""
        copy = self.model_copy(update=update)
        copy.__dict__.pop("at_max_batch", None)  # a bound already read is the one replaced
        if self._curves is not None:
            copy._curves = self._curves._replace(full_batch=full_batch)
        return copy


class _Curves(NamedTuple):
    """The operating point the deferred curves of a SloBudget are worked out at."""

    brief: Brief
    shape: ReplicaShape
    rate: float  # per replica
    load_batch: float
    running_batch: float  # the operating point's
    full_batch: Callable[[Brief, ReplicaShape], AtMaxBatch]  # at_max_batch, or a disaggregated decode pool's


# --- the replica's step -----------------------------------------------------------------------------

_V = TypeVar("_V")


class _ByBatch(dict[float, _V]):
    """An engine's quantity by decode batch, each computed once: a load's evaluation asks for the same batch's step
    costs many times (the pace, the service moments, the waits, the quantiles). A table on the engine, looked up as
    `eng.step_at[batch]`: a hit is a plain dict subscript, no Python call (a plan makes ~300 lookups); a miss computes
    the value (dict.__missing__) by the engine's method. The table holds its engine weakly: no reference cycle, so an
    engine is freed with its replica, not left to the garbage collector. Bounded: a plan visits ~5,000-7,000 engine
    batches in all."""

    __slots__ = ("_compute", "_engine")

    def __init__(self, engine: _Engine, compute: Callable[[_Engine, float], _V]) -> None:
        super().__init__()
        self._engine = weakref.ref(engine)
        self._compute = compute  # an unbound _Engine method

    def __missing__(self, batch: float) -> _V:
        if len(self) >= _BY_BATCH_KEPT:
            self.clear()
        # the engine owns the table, so it is alive while the table is read (no typing.cast: a call a miss)
        value = self[batch] = self._compute(self._engine(), batch)  # type: ignore[arg-type]
        return value


_BY_BATCH_KEPT = 4096  # batches a table keeps


class _Engine:
    """The constants of one replica under one brief (engine limits and hit rate may be overridden)."""

    def __init__(
        self,
        brief: Brief,
        shape: ReplicaShape,
        hit_rate: float | None = None,
        max_num_seqs: int | None = None,
        max_num_batched_tokens: int | None = None,
        context_tokens: float | None = None,
    ) -> None:
        w, dep = brief.workload, brief.deployment
        # the step costs by decode batch (_ByBatch), each worked out on first lookup by the method of its name with a _
        self.step_at = _ByBatch(self, _Engine._step_at)
        self.service_moments = _ByBatch(self, _Engine._service_moments)
        self.pace_terms = _ByBatch(self, _Engine._pace_terms)
        self.shape = shape
        self.hit = brief.effective_hit_rate if hit_rate is None else hit_rate
        self.budget = dep.max_num_batched_tokens if max_num_batched_tokens is None else max_num_batched_tokens
        self.chunked = dep.chunked_prefill
        self.context = brief.running_context_tokens if context_tokens is None else context_tokens
        slots = dep.max_num_seqs if max_num_seqs is None else max_num_seqs
        # the batch the engine can run: its slots, or fewer where the KV pool holds fewer sequences at this context (the
        # engine preempts the rest, so they wait as if for a slot)
        self.seqs = max(min(slots, math.floor(shape.kv_capacity_tokens / self.context)), 1)
        self.sched_s = brief.latency.scheduler_ms / 1e3
        # KV reload from a tier, the vision encoder, an adapter load (none when off), each named (the SLO budget's
        # waterfall reads them), and what they add as the p95 and a mean request meet them
        self.ttft_terms = ttft_terms(brief, shape)
        self.extra_ttft_s, self.extra_ttft_mean_s = ttft_terms_s(self.ttft_terms)
        self.encoder_s = encoder_s_per_request(brief, shape)  # each prompt's images, encoded before its chunks (0: text)
        step = shape.step
        self.k = step.values()
        self.plain_step = decode_step_function(self.k, self.context)  # a plain decode step by batch (None: step_time_s)
        self.spec = _spec_switch(brief, shape)  # speculative decoding by batch (None: off)
        # the engine's whole decode step where it never falls as the batch grows (a plain step, no speculation's switch,
        # no negative constant: each of its sums, products, max and min rounds monotonically), else None
        self.rising_step = self.plain_step if self.spec is None and min(self.k) >= 0.0 else None
        self.communicates = communicates(self.k)  # a prompt token's share of the step's communication (_step_at)
        self.overhead_s = step.overhead_s
        self.fixed_s = self.overhead_s + self.sched_s  # per engine step, whatever it carries
        self.cv2 = length_cv2(w.input_tokens_mean, w.input_tokens_p95)
        self.uncached = w.input_tokens_mean * (1 - self.hit)
        self.mean_prompt = w.input_tokens_mean
        self.longest_uncached = (dep.max_model_len - 1) * (1 - self.hit)  # prompts are clipped at max-model-len
        self.longest_prompt = float(dep.max_model_len - 1)
        self.output = w.output_tokens_mean
        self.output_p95 = w.output_tokens_p95
        # A prompt token's GEMMs, its attention over the cached prefix and the uncached tokens before it, and the chunk's
        # read of its context's KV (one chunk: the prefix and itself). A prompt of L tokens has h L cached and (1 - h) L
        # uncached, so its attention, (1 - h) L x (h L + ((1 - h) L + 1) / 2) pairs, grows as L²: `quad_s` per uncached
        # token per prompt token. token_s is the mean over gamma lengths, E[U x cost(L)] / E[U] (E[L²] = mean² (1 + CV²)):
        # a long prompt's tokens cost more than a short one's, so the mean sits above the cost at the mean length.
        hit_tokens = w.input_tokens_mean * self.hit
        reads = 1 + hit_tokens / max(self.uncached, 1.0)
        lora = step.lora_s_per_token if step.lora_slots > 0 else 0.0  # the adapters' FLOPs (their kernels' floor is in base_s)
        self.quad_s = step.attn_s_per_pair * (self.hit + (1 - self.hit) / 2)
        self.quad_mean_s = self.quad_s * w.input_tokens_mean * (1 + self.cv2)  # E[L²] / E[L] per token
        self.quad_prompt_s = self.quad_s * self.mean_prompt  # a mean-length prompt's quadratic part, per token of it
        c = self.cv2  # E[x^n] of x = L / mean, n = 2, 3, 4 (work_cv2)
        self.length_moments = (1 + c, (1 + c) * (1 + 2 * c), (1 + c) * (1 + 2 * c) * (1 + 3 * c))
        self.token_s = step.gemm_s_per_token + lora + step.kv_s_per_token * reads + step.attn_s_per_pair / 2 + self.quad_mean_s
        # the part of that mean the long prompts' cached prefixes add beyond a mean-length prompt's (h mean CV² pairs):
        # a chunk the ITL quantile sees is a typical one, not the token-weighted mean (planner.slo's ITL model)
        self.long_prefix_s = step.attn_s_per_pair * self.hit * w.input_tokens_mean * self.cv2
        # uncached prompt tokens: gamma (shape k, scale); None when every prompt has the same length or is all cached
        self.gamma = (1 / self.cv2, self.uncached * self.cv2) if self.cv2 > 0 and self.uncached > 0 else None
        # what other modules work out on this engine and keep with it (planner.operating_point's solves by rate)
        self.memo: dict[tuple[object, ...], Any] = {}

    # A step with a decode batch b and c prompt tokens costs  base(b) + max(decode(b) + c x token(b), floor(b)):
    # base = fixed + the batch's KV reads, all-reduces and per-sequence costs; decode = the batch's GEMM compute;
    # floor = the weights the GEMMs read (a small step waits on them). At c = 0 this is step_model.step_time_s.

    def _step_at(self, batch: float) -> _StepAt:
        """The parts of a step beside a decode batch, worked out together once a batch: a new batch (a solve's, a
        probe's) asks for nearly all of them, and one lookup serves them all (the accessors below name each)."""
        b = max(batch, 1.0)
        engine_step, decode_step = self._whole_step_s(b)
        roofline_reads = b * self.context * self.k[ROOFLINE]  # KV reads join the floor only in a roofline step
        floor = weights_part_s(self.k, b, roofline_reads)
        decode_compute = compute_part_s(self.k, batch, batch)
        decode_compute_b = decode_compute if b == batch else compute_part_s(self.k, b, b)
        token_s = self.token_s
        if self.communicates:  # else no time to share (the share below is exactly 0): one GPU, one stage, or a free all-reduce
            chunk = max(min(self.uncached, self.room(batch)), 1.0)
            comm = comm_part_s(self.k, b + chunk) - comm_part_s(self.k, b)
            token_s += comm / chunk
        # _StepAt's fields in order: decode compute, floor, prompt token, engine step, base, decode step (s)
        base_s = engine_step + self.sched_s - max(decode_compute_b, floor)
        return _StepAt(decode_compute, floor, token_s, engine_step, base_s, decode_step)

    def _whole_step_s(self, b: float) -> tuple[float, float]:
        """(one whole decode step as the engine runs it at a batch b >= 1, a sequence's time per token in it):
        speculative (k drafts + the k + 1 verification) at or under the off threshold, the speculative step over the
        tokens it emits a sequence; else plain, the step itself."""
        spec = self.spec if self.spec is not None and b <= self.spec.off_above_batch else None
        if spec is not None:
            engine_step = speculative_step_time_s(spec.constants, b, b, b * self.context, 0.0)
            return engine_step, engine_step / spec.tokens_per_step
        plain = self.plain_step
        engine_step = plain(b) if plain is not None else step_time_s(self.k, b, b, b * self.context, 0.0)
        return engine_step, engine_step

    def prompt_token_s(self, batch: float) -> float:
        """A prompt token's cost in a step beside a decode batch: token_s and its share of the all-reduce bytes at the
        mean chunk's size (linear in the chunk: the algorithm the engine picks at that size)."""
        return self.step_at[batch].prompt_token_s

    def work_s(self, prompt_tokens: float | np.ndarray, token_s: float) -> float | np.ndarray:
        """The uncached tokens' compute of prompts of these lengths (chunk steps' fixed parts aside) beside a batch whose
        prompt_token_s is `token_s`: linear in the prompt's tokens, and quadratic in its attention over the prefix and
        itself. Its mean over the gamma lengths is uncached x token_s."""
        linear_s = token_s - self.quad_mean_s
        return (1 - self.hit) * prompt_tokens * (linear_s + self.quad_s * prompt_tokens)

    def work_cv2(self, token_s: float) -> float:
        """CV² of work_s over gamma prompt lengths L = x x mean, CV² c: a x + b x², E[x^n] = (1 + c)...(1 + (n-1) c)
        (token_s: the batch's prompt_token_s)."""
        a = token_s - self.quad_mean_s
        b = self.quad_prompt_s
        l2, l3, l4 = self.length_moments
        mean = a + b * l2
        second = a * a * l2 + 2 * a * b * l3 + b * b * l4
        return second / (mean * mean) - 1 if mean > 0 else 0.0

    def floor_s(self, batch: float) -> float:
        """The GEMMs' weight reads at a batch (a roofline step: and the batch's KV reads): the time a step cannot go
        below, however few tokens it computes."""
        return self.step_at[batch].floor_s

    def base_s(self, batch: float) -> float:
        """Everything of a step with this decode batch but its GEMMs, the scheduler time included."""
        return self.step_at[batch].base_s

    def decode_step_s(self, batch: float) -> float:
        """A pure decode step (planner.step_model.step_time_s), as the simulator costs it; with speculation on at this
        batch, a sequence's time per token: the speculative step over the tokens it emits a sequence. A batch whose
        step parts are not worked out (a load's p95 batch: it asks for this alone) gets the step alone, not kept."""
        at = self.step_at.get(batch)
        return at.decode_step_s if at is not None else self._whole_step_s(max(batch, 1.0))[1]

    def engine_step_s(self, batch: float) -> float:
        """One whole decode step as the engine runs it at this batch: speculative (k drafts + the k + 1 verification)
        at or under the off threshold, else plain. A prompt chunk rides in it and a prompt arriving waits for it."""
        return self.step_at[batch].engine_step_s

    def engine_steps_s(self, batches: np.ndarray) -> np.ndarray:
        """engine_step_s over an array of batches, in one pass (step_model.step_times_s)."""
        b = np.maximum(batches, 1.0)
        plain = step_times_s(self.k, b, b, b * self.context, 0.0)
        if self.spec is None:
            return plain
        spec = speculative_step_times_s(self.spec.constants, b, b, b * self.context, 0.0)
        return np.where(b <= self.spec.off_above_batch, spec, plain)

    def mixed_step_s(self, tokens: float | np.ndarray, chunks: float | np.ndarray, batch: float) -> float | np.ndarray:
        """`chunks` steps carrying `tokens` prompt tokens beside a decode batch (a chunk's compute hides the weight reads)."""
        at = self.step_at[batch]
        compute = tokens * at.prompt_token_s + chunks * at.decode_compute_s
        return chunks * at.base_s + np.maximum(compute, chunks * at.floor_s)

    def chunk_step_s(self, tokens: float, batch: float) -> float:
        """mixed_step_s of one step carrying `tokens` prompt tokens: the same arithmetic (x 1 is exact) with floats, no
        numpy call on scalars (~1 us)."""
        at = self.step_at[batch]
        return at.base_s + max(tokens * at.prompt_token_s + at.decode_compute_s, at.floor_s)

    def room(self, batch: float) -> float:
        """Prompt tokens a step has room for beside the decode batch."""
        return self.budget - batch if self.chunked else math.inf

    def _service_moments(self, batch: float) -> tuple[float, float, float, float]:
        """(chunks of a mean prompt, E[S], E[S^2], E[S^3]) of the time a prompt holds the prefill slot."""
        chunks = _prompt_chunks(self.uncached, self.room(batch))
        return chunks, *_prompt_service_moments(self, chunks, batch)

    def _pace_terms(self, batch: float) -> _PaceTerms:
        """What pace() needs at a running batch whatever the rate, worked out once a batch (a running-batch solve asks
        for the same batches at each rate it is solved at)."""
        chunks, s1, _, _ = self.service_moments[batch]
        step_s = self.step_at[batch].decode_step_s
        gap_s = step_s + self.sched_s
        return _PaceTerms(s1, step_s, gap_s, *_slot_terms(s1, chunks, gap_s))

    def pace(self, rate: float, load_batch: float) -> Pace:
        batch = min(load_batch, float(self.seqs))
        s1, step_s, gap_s, most_served, beyond_s = self.pace_terms[batch]
        interference = _served_share(rate, most_served, beyond_s)
        tpot_s = gap_s / (1 - interference) if interference < 1 else math.inf
        # Pace's fields in order: running batch, decode step (ms), slot service (ms), prefill slot busy, interference,
        # TPOT (ms), engine time (s)
        return Pace(batch, step_s * 1e3, s1 * 1e3, rate * s1, interference, tpot_s * 1e3, s1 + (self.output - 1) * tpot_s)


class _StepAt(NamedTuple):
    """The parts of a step beside one decode batch (s): _Engine.step_at's, each described by its accessor there."""

    decode_compute_s: float
    floor_s: float
    prompt_token_s: float
    engine_step_s: float
    base_s: float
    decode_step_s: float


class _PaceTerms(NamedTuple):
    """pace()'s terms at one running batch (s): what does not depend on the rate."""

    s1: float  # E[S]: a prompt's time on the prefill slot
    step_s: float  # the decode step
    gap_s: float  # ... and the scheduler: a token gap
    most_served: float  # prompts a second the slot serves back to back, 1 / E[S] (inf: E[S] is 0 or not finite)
    beyond_s: float  # a prompt's steps beyond the decode steps they stand in for (inf: E[S] is not finite)


def pace(brief: Brief, shape: ReplicaShape, rate: float, load_batch: float, **overrides: float | None) -> Pace:
    """The replica's pace at a rate and running batch (planner.operating_point solves Little's law with it)."""
    return _engine_of(brief, shape, **overrides).pace(rate, load_batch)  # type: ignore[arg-type]


def _slot_terms(s1: float, chunks: float, gap_s: float) -> tuple[float, float]:
    """The interference's terms that do not depend on the rate: (prompts a second the slot serves back to back, a
    prompt's steps beyond the decode steps they stand in for), each inf where E[S] = s1 is not finite."""
    if not math.isfinite(s1):
        return math.inf, math.inf
    return (1 / s1 if s1 > 0 else math.inf), max(s1 - chunks * gap_s, 0.0)


def _served_share(rate: float, most_served: float, beyond_s: float) -> float:
    """The interference from its terms (_slot_terms): share of time prompts' steps take beyond the decode steps they
    stand in for (a mixed step also emits the batch's tokens); an overloaded slot serves prompts back to back, no
    faster than 1 / E[S]: the rate the slot serves x each prompt's steps beyond the decode steps."""
    return min(rate, most_served) * beyond_s if beyond_s != math.inf else math.inf


# --- queueing pieces --------------------------------------------------------------------------------


def _erlang_c(offered: float, slots: int, hold_s: float) -> tuple[float, float]:
    """(P(wait), mean wait) for a batch slot (M/M/c, c = slots, offered load in sequences); (1, inf) when offered >=
    slots. Given a wait, it is exponential with mean hold / (slots - offered)."""
    if offered <= 0:
        return 0.0, 0.0
    if offered >= slots:
        return 1.0, math.inf
    at_slots, up_to_slots = poisson_pmf_cdf(offered, slots)
    blocking = at_slots / up_to_slots  # Erlang B: P(N = slots | N <= slots), N Poisson(offered)
    waiting = slots * blocking / (slots - offered * (1 - blocking))
    return waiting, waiting * hold_s / (slots - offered)


def _queue_wait(slot: float, prompt_wait_s: float, tail: float, admitted: float, admission_s: float) -> tuple[float, float, float]:
    """(P(wait), mean, gamma shape given a wait) of the prefill slot's M/G/1 wait (zero with probability 1 - slot, else
    gamma of shape `tail`) plus the batch slot's Erlang C wait (zero with probability 1 - admitted, else exponential),
    taken as independent: zero when both are, else a gamma with the sum's first two moments given it is not zero."""
    if admitted <= 0 or admission_s <= 0:
        return slot, prompt_wait_s, tail
    if not (math.isfinite(prompt_wait_s) and math.isfinite(admission_s)):
        return 1.0, math.inf, 1.0
    busy = 1 - (1 - min(max(slot, 0.0), 1.0)) * (1 - admitted)
    mean = prompt_wait_s + admission_s
    given = prompt_wait_s / slot if slot > 0 else 0.0  # the M/G/1 wait's mean given a wait; E[W^2] = slot x given^2 x (1 + 1/tail)
    second = slot * given * given * (1 + 1 / tail) + 2 * prompt_wait_s * admission_s + 2 * admission_s * admission_s / admitted
    return busy, mean, _shape_given_a_wait(mean, second, busy)


def _shape_given_a_wait(mean: float, second: float, p_wait: float) -> float:
    """Gamma shape of a wait given it is not zero, from its first two moments (`mean`, `second`) and P(wait): the
    conditional moments are theirs over P(wait); capped at 1e3 (a wait about fixed)."""
    m1, m2 = mean / p_wait, second / p_wait
    var = m2 - m1 * m1
    return min(m1 * m1 / var, 1e3) if var > 0 else 1e3


def _mg1_tail_shape(rate: float, rho: float, wait_s: float, third_s3: float) -> float:
    """Gamma shape of the M/G/1 wait given it is not zero, from its first two moments (Takacs).

    E[W^2] = 2 E[W]^2 + r E[S^3] / (3 (1 - rho)). Exponential (shape 1) for exponential service; wider for
    heavy-tailed prompts, narrower for fixed ones.
    """
    if not (0 < rho < 1) or wait_s <= 0:
        return 1.0
    w2 = 2 * wait_s**2 + rate * third_s3 / (3 * (1 - rho))
    return _shape_given_a_wait(wait_s, w2, rho)


def _prompt_service_moments(eng: _Engine, chunks: float, batch: float) -> tuple[float, float, float]:
    """E[S], E[S^2], E[S^3] of the time a prompt holds the prefill slot: _Engine.mixed_step_s of its uncached tokens,
    after its images' mean encoder time (a constant: the p95 request's own images are in the fixed TTFT path).

    S = a + max(min(Y, ceiling), floor), with Y = the prompt's work (_Engine.work_s: linear in its length and
    quadratic in its attention, taken as gamma with that mean and CV²), a = chunks x (base + the batch's
    decode compute), floor = chunks x (weight reads - decode compute), and ceiling = the uncached part of the longest
    prompt the pool admits (max-model-len). Chunks are those of a mean prompt: a long prompt's extra steps are left
    out while short prompts, which the engine packs several to a step, are each charged a whole step's floor; the
    two partly cancel (against the simulator's measured waits: docs/crosscheck.md).
    """
    if not math.isfinite(chunks):
        return math.inf, math.inf, math.inf
    at = eng.step_at[batch]
    decode_s = chunks * at.decode_compute_s
    floor = max(chunks * at.floor_s - decode_s, 0.0)
    token_s = at.prompt_token_s
    work_s = eng.uncached * token_s  # the mean of _Engine.work_s, with its CV² (a gamma fitted to both)
    ceiling_s = float(eng.work_s(eng.longest_prompt, token_s))
    z1, z2, z3 = clamped_moments(work_s, eng.work_cv2(token_s) if eng.cv2 > 0 else 0.0, floor, ceiling_s)
    a = chunks * at.base_s + decode_s + eng.encoder_s  # S = a + Z; the images' encoder holds the slot first
    return a + z1, a * a + 2 * a * z1 + z2, a**3 + 3 * a * a * z1 + 3 * a * z2 + z3


def _prompt_chunks(tokens: float, room: float) -> float:
    """Engine steps a prompt of `tokens` uncached tokens is prefilled over, `room` tokens a step."""
    if room <= 0:
        return math.inf
    return max(math.ceil(tokens / room), 1) if math.isfinite(room) and tokens > 0 else 1.0


# --- distributions ----------------------------------------------------------------------------------


@lru_cache(maxsize=1024)
def _covered_prompts(mean: float, cap_tokens: float, cv2: float) -> np.ndarray:
    """Equal-probability prompt lengths (tokens) of the prompts the TTFT target covers: the gamma truncated at the cap.
    Cached (read-only): the same for every load of one brief."""
    points = _covered_points(mean, cap_tokens, cv2)
    points.flags.writeable = False
    return points


def _covered_points(mean: float, cap_tokens: float, cv2: float) -> np.ndarray:
    if cv2 <= 0:
        return np.array([min(mean, cap_tokens)])
    k, scale = 1 / cv2, mean * cv2
    covered = gamma_p(k, cap_tokens / scale)
    if covered <= 1e-9:  # the cap sits below every prompt: the shortest prompts stand in
        return np.array([cap_tokens])
    p = (np.arange(_TTFT_POINTS) + 0.5) / _TTFT_POINTS * covered
    return gamma_p_inverse_array(k, p) * scale


def _stage_s(eng: _Engine, prompts: np.ndarray, batch: float) -> np.ndarray:
    """Each prompt's own chunk steps (_Engine.mixed_step_s over the prompts, with each prompt's own work), at a batch
    that leaves a step room (_wait asks only there). Where the longest prompt's uncached tokens fit that room (most
    presets' loads), every prompt rides in one step: the step's parts are added as they are (1 x a part is the part),
    with no chunk counts and no products by an array of ones."""
    room = eng.room(batch)
    at = eng.step_at[batch]
    work = np.asarray(eng.work_s(prompts, at.prompt_token_s))
    if float(np.maximum.reduce(prompts)) * (1 - eng.hit) <= room:  # the longest's uncached tokens (np.max's value, called directly)
        return np.asarray(at.base_s + np.maximum(work + at.decode_compute_s, at.floor_s))
    chunks = np.maximum(np.ceil(prompts * (1 - eng.hit) / room), 1.0)  # room is finite: an infinite one fits every prompt
    return np.asarray(chunks * at.base_s + np.maximum(work + chunks * at.decode_compute_s, chunks * at.floor_s))


def _ttft_quantile_s(stages: np.ndarray, busy: float, wait_mean_s: float, tail_shape: float, q: float) -> float:
    """q-quantile of stage + W over the covered prompts; W is zero with probability 1 - busy, else gamma.

    The CDF jumps by (1 - busy) / n at each prompt's own stage time and is smooth between: it is evaluated at every
    stage time at once to find the interval (or the jump) holding q, then inverted inside that smooth interval.
    Cached by value: the solves around an operating point ask for the same quantile again (a third of a plan's)."""
    return _ttft_quantile_cached(stages.tobytes(), busy, wait_mean_s, tail_shape, q)


@lru_cache(maxsize=4096)
def _ttft_quantile_cached(stage_bytes: bytes, busy: float, wait_mean_s: float, tail_shape: float, q: float) -> float:
    stages = np.frombuffer(stage_bytes).copy()  # a copy sorted in place: np.sort's values, without its two Python calls
    stages.sort()  # ascending, as _stage_s gives them (longer prompts, more steps)
    if not math.isfinite(wait_mean_s):
        return math.inf
    busy = min(max(busy, 0.0), 1.0)
    if busy <= 0 or wait_mean_s <= 0:
        return float(np.quantile(stages, q)) if stages.size > 1 else float(stages[0])
    scale = wait_mean_s / busy / tail_shape

    def at(t: np.ndarray) -> np.ndarray:
        """The CDF at each t: the prompts whose own steps are done by t, (1 - busy) each, and the wait's P of each (0
        for those not done: no wait fits)."""
        gap = t[:, np.newaxis] - stages[np.newaxis, :]
        reached = stages.searchsorted(t, side="right")  # gap >= 0: the stages (ascending) up to t; ~1 us, count_nonzero's ~10
        waited = gamma_p_row_sums(tail_shape, np.maximum(gap, 0.0) / scale)
        return np.asarray(((1 - busy) * reached + busy * waited) / stages.size)

    shortest = float(stages[0])

    def rows_under(top: float) -> Callable[[float], tuple[float, float, float]]:
        """at(t) for one t up to `top`, with its first two derivatives there (between the jumps): the gamma only
        where the wait is positive, its series as long as the longest wait up to `top` needs."""
        largest = (top - shortest) / scale
        ascending = stages.tolist()

        def row(t: float) -> tuple[float, float, float]:
            reached = (1 - busy) * bisect_right(ascending, t)  # the prompts whose own steps are done by t
            waiting = bisect_left(ascending, t)  # ... of which these have waited a while: t - stage > 0
            if waiting == 0:
                return reached / stages.size, 0.0, 0.0
            waited, density, bend = gamma_sums(tail_shape, (t - stages[:waiting]) / scale, largest)
            share = busy / stages.size
            return (reached + busy * waited) / stages.size, share * density / scale, share * bend / (scale * scale)

        return row

    longest = float(stages[-1])

    def rows_past(top: float) -> Callable[[float], tuple[float, float, float]]:
        """rows_under(top)'s rows where t is past the longest prompt's own steps (the tail's: _halley_invert keeps t
        inside its bracket, which starts there): every prompt done and waiting, so neither is counted a row."""
        largest = (top - shortest) / scale
        done = (1 - busy) * stages.size
        share = busy / stages.size

        def row(t: float) -> tuple[float, float, float]:
            waited, density, bend = gamma_sums(tail_shape, (t - stages) / scale, largest)
            return (done + busy * waited) / stages.size, share * density / scale, share * bend / (scale * scale)

        return row

    def tail() -> float:
        """q beyond the longest prompt's own steps: in the smooth tail of the wait, between its bounds. There the CDF is
        (1 - busy) + busy x the mean of P(shape, (t - stage) / scale) over the stages, so it lies between that with
        every stage at the shortest and at the longest: q is reached the wait's own quantile past a stage between the
        two (the prompts' spread). Halley's start: w scale past their mean s̄ (P(shape, w) the share of q the wait
        must give), less the stages' spread's second-order term: at t = s̄ + w scale + d the mean of P(shape, w + (d -
        (stage - s̄)) / scale) is P(w) + P'(w) d / scale + P''(w) (d² + var) / (2 scale²) to second order, at P(w) where
        d ~ -(P''(w) / P'(w)) var / (2 scale), P'' / P' = (shape - 1) / w - 1 (the density's log slope)."""
        wait = gamma_p_inverse(tail_shape, (q - (1 - busy)) / busy)
        waited = wait * scale
        low, high = max(shortest + waited, longest), longest + waited
        xtol = (wait_mean_s / busy * 4 + 1e-6) * 1e-7  # as over the range this tail was searched in before
        mean = float(np.add.reduce(stages)) / stages.size  # np.mean's value, without its dispatch (nor ndarray.sum's wrapper)
        deviations = stages - mean
        spread = float(deviations @ deviations) / stages.size  # the stages' variance
        start = min(max(mean + waited - ((tail_shape - 1) / wait - 1) * spread / (2 * scale), low), high)
        return _halley_invert(rows_past(high), q, (low, math.nan), (high, math.nan), start, xtol) if high > low else high

    # at the longest prompt's own steps the CDF is at most (1 - busy) + busy x P(shape, (longest - shortest) / scale)
    # (every wait counted from the shortest stage): where that is clearly under q, no stage point reaches it
    if (1 - busy) + busy * gamma_p(tail_shape, (longest - shortest) / scale) < q * (1 - 1e-12):
        return tail()
    distinct = np.empty(stages.size, dtype=bool)  # np.unique's points, from the stages already in order
    distinct[0] = True
    np.not_equal(stages[1:], stages[:-1], out=distinct[1:])
    points = stages[distinct]
    done = stages.searchsorted(points, side="right")  # prompts whose own steps are done by each point
    first, at_points = _first_reaching(at, points, done / stages.size, busy, q)
    if first < 0:
        return tail()
    # just below the point: without the jump of (1 - busy) / n a prompt done there (their waits' P is 0 there either way)
    at_high = float(at_points[first]) - (1 - busy) * float(done[first] - done[first - 1]) / stages.size if first > 0 else q
    if first > 0 and at_high >= q:  # crossed in the smooth stretch before
        low, high = float(points[first - 1]), float(points[first])
        return _halley_invert(rows_under(high), q, (low, float(at_points[first - 1])), (high, at_high))
    return float(points[first])  # q falls inside the jump at this prompt's own stage time


def _first_reaching(
    at: Callable[[np.ndarray], np.ndarray], points: np.ndarray, reached: np.ndarray, busy: float, q: float
) -> tuple[int, np.ndarray]:
    """The first of `points` where the CDF `at` reaches q (-1: none), and the CDF at the points it evaluated (nan at
    the others). It evaluates only where the CDF can change its mind: at a point it lies between (1 - busy) and 1
    times the share of prompts whose own steps are done by then (`reached`), so below the first point where that
    share reaches q it is under q, and from the first where (1 - busy) times it does (with a hair's margin for
    rounding), at or over it."""
    lowest = int(reached.searchsorted(q * (1 - 1e-9), side="left"))  # the method: np.searchsorted's dispatch spared
    highest = min(int(((1 - busy) * reached).searchsorted(q * (1 + 1e-9), side="left")), points.size - 1)  # `reached` rises
    values = np.empty(points.shape)
    values.fill(math.nan)
    values[lowest : highest + 1] = at(points[lowest : highest + 1])
    first = _first_true(values[lowest : highest + 1] >= q)
    if first < 0 and highest + 1 < points.size:  # rounding kept it under q at the sure point: look past it
        values[highest + 1 :] = at(points[highest + 1 :])
        first = _first_true(values[highest + 1 :] >= q)
        return (first + highest + 1 if first >= 0 else -1), values
    return (first + lowest if first >= 0 else -1), values


def _first_true(mask: np.ndarray) -> int:
    """The index of the first True in a 1-d mask, -1 when there is none."""
    i = int(mask.argmax()) if mask.size else 0
    return i if mask.size and mask[i] else -1


def _expected_chunks(eng: _Engine, room: float) -> float:
    """E[ceil(min(U, top) / room)] over uncached prompt lengths U, clipped at `top`, the longest prompt's uncached part
    (max-model-len, as the engine and the simulator clip prompts): one chunk for a short prompt, about U / room + 1/2
    for a long one, ceil(top / room) for one clipped."""
    if not math.isfinite(room) or eng.gamma is None:
        return _prompt_chunks(eng.uncached, room) if math.isfinite(room) else 1.0
    top = eng.longest_uncached
    if top <= room:  # every prompt the engine admits rides in one chunk
        return 1.0
    k, scale = eng.gamma
    short, below_top = gamma_p(k, room / scale), gamma_p(k, top / scale)
    long_tokens = eng.uncached * (gamma_p(k + 1, top / scale) - gamma_p(k + 1, room / scale))  # E[U; room < U <= top]
    return short + long_tokens / room + 0.5 * (below_top - short) + (1 - below_top) * math.ceil(top / room)


_Row = tuple[float, float, float]  # a CDF at one point and its first two derivatives there
_ZERO_ROW: _Row = (0.0, 0.0, 0.0)
_ONE_ROW: _Row = (1.0, 0.0, 0.0)


def _gamma_row(a: float, z: float) -> _Row:
    """P(a, z) (gamma_p's value) and its first two derivatives in z."""
    return gamma_p_slopes(a, z) if z > 0 else _ZERO_ROW


def _gamma_value(a: float, z: float) -> float:
    """P(a, z) alone: _gamma_row's value."""
    return gamma_p_value(a, z) if z > 0 else 0.0


class _ChunkCdf(NamedTuple):
    """A step's prompt tokens' CDF (c -> P(c or fewer)): its value alone (the jump checks and bracket ends), its row
    (the value and first two derivatives in c, for Halley's steps; the same value), and the c where it may jump."""

    value: Callable[[float], float]
    row: Callable[[float], _Row]
    jumps: tuple[float, ...]


def _chunk_cdf(eng: _Engine, room: float, chunks: float, packed: float = 0.0) -> _ChunkCdf:
    """P(a step carrying prompt tokens carries c or fewer): short prompts ride whole, long ones in full chunks plus a
    remainder (uniform), counted per chunk; in a `packed` share of those steps the next queued prompt rides in the room
    the chunk leaves (the engine fills a step's token budget first come first served), the two capped at the room.
    What does not depend on c is worked out once, for the inversion's many calls."""
    if eng.gamma is None:
        whole = min(eng.uncached, room)
        both = min(whole + eng.uncached, room)

        def steps(c: float) -> float:
            return 0.0 if c < whole else (1.0 if c >= both else 1.0 - packed)

        return _ChunkCdf(steps, lambda c: (steps(c), 0.0, 0.0), (whole, both))
    k, scale = eng.gamma
    if not math.isfinite(room):
        return _ChunkCdf(
            lambda c: _gamma_value(k, c / scale) if c >= 0 else 0.0,
            lambda c: _scaled(_gamma_row(k, c / scale), scale) if c >= 0 else _ZERO_ROW,
            (),
        )
    top = eng.longest_uncached
    if top <= room:  # every prompt rides whole, the clipped ones at `top` (_expected_chunks: one chunk each)
        return _whole_cdf(k, scale, top, room, packed)
    return _chunked_cdf(k, scale, room, chunks, packed)


def _whole_cdf(k: float, scale: float, top: float, room: float, packed: float) -> _ChunkCdf:
    """_chunk_cdf where every prompt rides whole: alone, or beside a second (two prompts' tokens: gamma(2k))."""
    pair = _pair_cdf(k)

    def value(c: float) -> float:
        if c < 0:
            return 0.0
        if c >= room:
            return 1.0
        z = c / scale
        alone = 1.0 if c >= top else (gamma_p_value(k, z) if z > 0 else 0.0)  # _gamma_value inlined
        return (1 - packed) * alone + packed * pair.value(z)

    def row(c: float) -> _Row:
        if c < 0:
            return _ZERO_ROW
        if c >= room:
            return _ONE_ROW
        z = c / scale
        alone = _ONE_ROW if c >= top else (gamma_p_slopes(k, z) if z > 0 else _ZERO_ROW)  # _gamma_row inlined
        return _scaled(_blend(packed, alone, pair.row(z)), scale)

    return _ChunkCdf(value, row, (top, room))


def _chunked_cdf(k: float, scale: float, room: float, chunks: float, packed: float) -> _ChunkCdf:
    """_chunk_cdf where long prompts ride in chunks: a share of steps carry a remainder R ~ U(0, room), beside a
    queued prompt U in a `packed` share of them: P(R + U <= c) = (c P(U <= c) - E[U; U <= c]) / room, whose slope in
    c is P(U <= c) / room (c's density term and E[U; U <= c]'s cancel)."""
    long_share = 1 - gamma_p(k, room / scale)
    log_norm = math.lgamma(k + 1)
    pair = _pair_cdf(k)

    def p_next_shape(short: float, z: float) -> float:  # P(k + 1, z) from short = P(k, z): E[U; U <= c] = k x scale x P(k + 1, z)
        return max(short - math.exp(k * math.log(z) - z - log_norm), 0.0) if z > 0 else 0.0

    def value(c: float) -> float:
        if c < 0:
            return 0.0
        if c >= room:
            return 1.0
        z = c / scale
        short = gamma_p_value(k, z) if z > 0 else 0.0  # _gamma_value inlined: the inversions evaluate this most
        alone = short + long_share * c / room
        if packed > 0:
            together = pair.value(z) + long_share * (c * short - k * scale * p_next_shape(short, z)) / room
            alone = (1 - packed) * alone + packed * together
        alone /= chunks
        return alone if alone < 1 else 1.0

    def row(c: float) -> _Row:
        if c < 0:
            return _ZERO_ROW
        if c >= room:
            return _ONE_ROW
        z = c / scale
        short, density, bend = gamma_p_slopes(k, z) if z > 0 else _ZERO_ROW  # _gamma_row inlined: the slopes in z
        alone = (short + long_share * c / room, density / scale + long_share / room, bend / (scale * scale))
        if packed > 0:
            pair_value, pair_slope, pair_bend = _scaled(pair.row(z), scale)
            together = (
                pair_value + long_share * (c * short - k * scale * p_next_shape(short, z)) / room,
                pair_slope + long_share * short / room,
                pair_bend + long_share * density / (scale * room),
            )
            alone = _blend(packed, alone, together)
        level, slope, bend = alone
        level /= chunks
        return (level, slope / chunks, bend / chunks) if level < 1 else _ONE_ROW

    return _ChunkCdf(value, row, (room,))


def _blend(share: float, row: _Row, other: _Row) -> _Row:
    """(1 - share) x row + share x other, term by term: a mixture's CDF and its derivatives."""
    return (
        (1 - share) * row[0] + share * other[0],
        (1 - share) * row[1] + share * other[1],
        (1 - share) * row[2] + share * other[2],
    )


def _scaled(row: _Row, scale: float) -> _Row:
    """A row in z = c / scale as a row in c."""
    value, slope, bend = row
    return value, slope / scale, bend / (scale * scale)


_PAIR_POINTS = 256  # the table of two prompts' tokens CDF, up to where it is 1 within 1e-9
_PAIR_INDEXES = np.arange(float(_PAIR_POINTS))  # the table's points over its step
_PAIR_INDEXES.flags.writeable = False


class _PairCdf(NamedTuple):
    """z >= 0 -> P(2k, z): its value alone and its row (value and first two derivatives in z)."""

    value: Callable[[float], float]
    row: Callable[[float], _Row]


@lru_cache(maxsize=64)
def _pair_cdf(k: float) -> _PairCdf:
    """z >= 0 -> P(two prompts' uncached tokens <= z x scale) = P(2k, z), alone and with its first two derivatives in
    z: for 2k >= 3 (a density flat at 0), linear between the points of a table (within 4e-4; one vectorized evaluation
    a prompt-length shape instead of one incomplete gamma per call of the inversions), else the incomplete gamma."""
    if 2 * k < 3:
        return _PairCdf(partial(_gamma_value, 2 * k), partial(_gamma_row, 2 * k))
    top = gamma_p_inverse(2 * k, 1 - 1e-9)
    step = top / (_PAIR_POINTS - 1)
    z = _PAIR_INDEXES * step  # np.linspace(0, top, _PAIR_POINTS)'s points (its arithmetic), without its ~10 Python calls
    z[-1] = top
    values: list[float] = gamma_p_array(2 * k, z).tolist()

    def value(z: float) -> float:
        if z >= top:
            return 1.0
        i = int(z / step)
        low = values[i]
        return low + (values[i + 1] - low) * (z / step - i)

    def row(z: float) -> _Row:
        if z >= top:
            return _ONE_ROW
        i = int(z / step)
        low = values[i]
        rise = values[i + 1] - low
        return low + rise * (z / step - i), rise / step, 0.0

    return _PairCdf(value, row)


def _packed_share(rate: float, decode_s: float, mixed_s: float, mixed_share: float) -> float:
    """Share of the steps carrying prompt tokens that carry a second prompt too: a step takes the prompts that arrived
    during the step before it (Poisson at `rate`), a decode step (`decode_s`) or one carrying a prompt (`mixed_s`, a
    `mixed_share` of the steps): P(two or more arrived) / P(one or more did) over the two."""

    def arrivals(step_s: float) -> tuple[float, float]:  # (P(N >= 1), P(N >= 2)) for N ~ Poisson(rate x step)
        mean = rate * step_s
        none = math.exp(-mean)
        return 1 - none, 1 - none * (1 + mean)

    one_d, two_d = arrivals(decode_s)
    one_m, two_m = arrivals(mixed_s)
    some = (1 - mixed_share) * one_d + mixed_share * one_m
    return ((1 - mixed_share) * two_d + mixed_share * two_m) / some if some > 0 else 0.0


_Z_GRID = np.array([_NORMAL.inv_cdf((i + 0.5) / 41) for i in range(41)])  # equal-probability points of a standard normal
_Z_LOWEST, _Z_HIGHEST = float(_Z_GRID[0]), float(_Z_GRID[-1])


def _token_gap_quantiles_s(eng: _Engine, rate: float, batch: float, qs: tuple[float, ...]) -> tuple[tuple[float, ...], float, float]:
    """(quantiles of the gaps between consecutive tokens, share of gaps on mixed steps, mean mixed step).

    Gaps are engine steps: pure decode steps, or steps that also carry a prefill chunk (mixed). Mixed steps come
    at the served prompt rate x chunks per prompt and take the prefill slot's time; pure decode steps fill the rest.
    Within pure decode steps the batch varies (Poisson: B + z √B, an equal-probability grid); a mixed step costs
    fixed + max((chunk + B) / prefill rate, the batch's reads), so its CDF follows the chunk's. The quantiles invert
    the mixture's CDF.
    """
    b = max(batch, 1.0)
    _, s1, _, _ = eng.service_moments[batch]
    if not math.isfinite(s1):
        return tuple(math.inf for _ in qs), 1.0, math.inf
    room = eng.room(batch)
    served = min(rate, 1 / s1) if s1 > 0 else rate
    chunks = _expected_chunks(eng, room)
    at = eng.step_at[b]
    gap_s = at.engine_step_s + eng.sched_s  # a whole step: with speculation, one chunk of tokens a sequence
    mixed_per_s = served * chunks
    decode_per_s = max(1 - served * s1, 0.0) / gap_s
    share = mixed_per_s / (mixed_per_s + decode_per_s) if mixed_per_s + decode_per_s > 0 else 0.0
    if math.isfinite(room) and share > 0:  # the engine packs a queued prompt into the room a chunk leaves
        packed = _packed_share(served, gap_s, s1 / chunks, share)
        chunk_mean = eng.uncached / chunks
        riding = packed * min(eng.uncached, max(room - chunk_mean, 0.0))  # fewer, fuller steps carry the same tokens
        mixed_per_s *= chunk_mean / (chunk_mean + riding) if chunk_mean > 0 else 1.0
        share = mixed_per_s / (mixed_per_s + decode_per_s)
    else:
        packed = 0.0
    first, last, pure_cdf, pure_slope = _decode_gaps_cdf(eng, batch)
    base, floor, decode = at.base_s, at.floor_s, at.decode_compute_s
    rate_b = 1 / (at.prompt_token_s - eng.long_prefix_s)  # a typical chunk's tokens: a mean-length prompt's
    chunk = _chunk_cdf(eng, room, chunks, packed)

    def row(t: float) -> _Row:
        """The CDF at t with its first two derivatives (the decode gaps' grid is linear between its points)."""
        head = t - base  # the GEMM time a mixed step may spend
        mixed, mixed_slope, mixed_bend = chunk.row((head - decode) * rate_b) if head >= floor else _ZERO_ROW
        value = (1 - share) * pure_cdf(t) + share * mixed
        return value, (1 - share) * pure_slope(t) + share * rate_b * mixed_slope, share * rate_b * rate_b * mixed_bend

    seen: dict[float, float] = {}  # the CDF where an inversion evaluated it: the next starts at its answer, same jumps

    def cdf(t: float) -> float:
        value = seen.get(t)
        if value is None:  # row's value alone: the jump checks and bracket ends read no slope
            head = t - base
            mixed = chunk.value((head - decode) * rate_b) if head >= floor else 0.0
            value = seen[t] = (1 - share) * pure_cdf(t) + share * mixed
        return value

    low = first * 0.5
    high = eng.chunk_step_s(room if math.isfinite(room) else eng.longest_uncached, batch)
    high = max(high, last) * 1.01
    # where the CDF jumps: the first and past the last decode gap, a mixed step's floor, the chunk's own jumps (those
    # worked out from c a hair above, so that rounding leaves the jump below them)
    mixed_jumps = (floor, *[decode + c / rate_b for c in chunk.jumps])
    jumps = (first, math.nextafter(last, math.inf), *[(base + s) * (1 + 1e-12) for s in mixed_jumps])
    found: dict[float, float] = {}
    for q in sorted(qs):  # each from the last one up: a higher quantile is never below a lower one
        found[q] = low = _invert(cdf, q, low, high, jumps, row)
    return tuple([found[q] for q in qs]), share, served * s1 / mixed_per_s if mixed_per_s > 0 else s1 / chunks


def _decode_gaps_cdf(eng: _Engine, batch: float) -> tuple[float, float, Callable[[float], float], Callable[[float], float]]:
    """(the first and last pure decode gap, _grid_cdf and _grid_slope of the gaps) over the running batch's grid
    (Poisson: B + z √B at equal-probability z). Where the step rises with the batch (_Engine.rising_step) the ends are
    the steps at the grid's lowest and highest batch, and the grid itself is worked out only when the CDF is asked
    between them: ~3 in 4 token-gap inversions evaluate it only outside (the quantile on the mixed steps)."""
    step = eng.rising_step
    if step is None:
        gaps = _decode_gaps_s(eng, batch)
        return gaps[0], gaps[-1], _grid_cdf(gaps), _grid_slope(gaps)
    sd = math.sqrt(batch) if batch > 0 else 0.0
    seqs = float(eng.seqs)
    first = step(min(max(batch + _Z_LOWEST * sd, 1.0), seqs)) + eng.sched_s  # _decode_gaps_s's arithmetic at one batch
    last = step(min(max(batch + _Z_HIGHEST * sd, 1.0), seqs)) + eng.sched_s
    grid: list[Callable[[float], float]] = []  # _grid_cdf and _grid_slope, once a t between the ends asks

    def between() -> list[Callable[[float], float]]:
        if not grid:
            gaps = _decode_gaps_s(eng, batch)
            grid.extend((_grid_cdf(gaps), _grid_slope(gaps)))
        return grid

    def cdf(t: float) -> float:  # _grid_cdf's answers outside the ends
        if t < first:
            return 0.0
        return 1.0 if t > last else between()[0](t)

    def slope(t: float) -> float:  # _grid_slope's
        return 0.0 if t < first or t >= last else between()[1](t)

    return first, last, cdf, slope


def _decode_gaps_s(eng: _Engine, batch: float) -> list[float]:
    """The pure decode gaps (whole step and scheduler) at the running batch's grid of batches, sorted."""
    sd = math.sqrt(batch) if batch > 0 else 0.0
    batches = np.minimum(np.maximum(batch + _Z_GRID * sd, 1.0), float(eng.seqs))  # np.clip's values, without its overhead
    decode_steps = eng.engine_steps_s(batches)
    decode_steps.sort()  # a new array: sorted in place (np.sort's copy and dispatch spared)
    gaps: list[float] = (decode_steps + eng.sched_s).tolist()
    return gaps


def _grid_cdf(values: list[float]) -> Callable[[float], float]:
    """The CDF of equal-probability points (sorted), linear between them: np.interp(t, values, (i + 0.5) / n, left=0,
    right=1), the same arithmetic, for one t at a time without numpy's per-call cost."""
    probs = _grid_probs(len(values))
    first, last = values[0], values[-1]

    def at(t: float) -> float:
        if t < first:
            return 0.0
        if t >= last:
            return 1.0 if t > last else probs[-1]
        j = bisect_right(values, t) - 1  # values[j] <= t < values[j + 1]
        if values[j] == t:
            return probs[j]
        slope = (probs[j + 1] - probs[j]) / (values[j + 1] - values[j])
        return slope * (t - values[j]) + probs[j]

    return at


def _grid_slope(values: list[float]) -> Callable[[float], float]:
    """_grid_cdf's slope at t (from the right at a point of the grid; 0 outside it)."""
    probs = _grid_probs(len(values))
    first, last = values[0], values[-1]

    def at(t: float) -> float:
        if t < first or t >= last:
            return 0.0
        j = bisect_right(values, t) - 1  # values[j] <= t < values[j + 1]
        return (probs[j + 1] - probs[j]) / (values[j + 1] - values[j])

    return at


@lru_cache(maxsize=16)
def _grid_probs(n: int) -> tuple[float, ...]:
    """(i + 0.5) / n for i < n: the probabilities of n equal-probability points (the same n every call of a plan)."""
    return tuple([(i + 0.5) / n for i in range(n)])


def _halley_invert(
    row: Callable[[float], tuple[float, float, float]],
    q: float,
    low_at: tuple[float, float],
    high_at: tuple[float, float],
    start: float = math.nan,
    xtol: float = math.nan,
) -> float:
    """t in (low, high) with cdf(t) = q, where the CDF is smooth and rises from under q at low to q or over at high
    (each end given with the CDF there, nan where not known; `row` gives the CDF and its first two derivatives):
    Halley's steps from where the chord between the ends crosses q (Newton's where Halley's correction is not
    modest), kept inside the bracket the evaluations narrow, and a bisection whenever a step would leave it or three
    steps have not halved it (a flat stretch, where the slope says little), to 1e-7 of the range as _invert. A caller
    with a better first guess gives it (`start`), and the tolerance where the range is not its bracket (`xtol`)."""
    (low, at_low), (high, at_high) = low_at, high_at
    xtol = (high - low) * 1e-7 if math.isnan(xtol) else xtol
    t = start
    if math.isnan(t) and at_high > at_low:
        t = low + (q - at_low) / (at_high - at_low) * (high - low)
    if not low < t < high:  # no chord (an end's CDF unknown): the middle
        t = (low + high) / 2
    checkpoint, steps = high - low, 0
    last_step = math.nan  # the step before (nan: none, or a bisection since)
    for _ in range(_HALLEY_STEPS):
        value, slope, bend = row(t)
        if value >= q:
            high = t
        else:
            low = t
        newton = (value - q) / slope if slope > 0 else math.inf
        factor = 1 - newton * bend / (2 * slope) if slope > 0 else 1.0
        step = newton / factor if 0.5 <= factor <= 2 else newton
        if _settles(step, last_step, xtol) and low <= t - step <= high:
            return t - step
        last_step = step
        if high - low <= xtol:
            return high
        steps += 1
        slow = steps == 3 and high - low > checkpoint / 2
        if steps == 3:
            checkpoint, steps = high - low, 0
        if low < t - step < high and not slow:
            t -= step
        else:
            t, last_step = (low + high) / 2, math.nan
    return high


_HALLEY_STEPS = 100


def _settles(step: float, last_step: float, xtol: float) -> bool:
    """Whether a step lands within xtol of the root: it is within xtol itself, or it shrank the step before by 4x or
    more and the error it leaves, taken to shrink at least as the steps did (by step / last step; Newton's and Halley's
    errors shrink faster, as e² and e³), so at most step² / last step, is under xtol / 2: one row fewer than waiting
    for a step under xtol."""
    size = abs(step)
    if size <= xtol:
        return True
    return size * 4 <= abs(last_step) and size * size <= xtol / 2 * abs(last_step)


def _invert(
    cdf: Callable[[float], float],
    q: float,
    low: float,
    high: float,
    jumps: Iterable[float] = (),
    row: Callable[[float], _Row] | None = None,
) -> float:
    """The smallest t in [low, high] with cdf(t) >= q (cdf nondecreasing, right-continuous; atoms allowed), to 1e-7 of
    the range (latencies are shown to three figures). `jumps`, where the caller knows them, are the t where the CDF may
    jump: a bisection over those in the bracket finds the stretch between two where it reaches q, a look just below the
    stretch's top end whether it is the jump there that does, and else the root in the stretch, where the CDF is
    continuous: Halley's steps where the caller gives the CDF's derivatives (`row`: _halley_invert), else
    Anderson-Björck steps (the evaluations a bracket_root of the whole range spends closing in on a jump from one side,
    ~20 of them, are saved). A jump not listed still gives the right answer, in more steps."""
    at_low, at_high = cdf(low), cdf(high)
    if at_low >= q:
        return low
    if at_high < q:
        return high
    xtol = (high - low) * 1e-7
    inside = sorted([t for t in jumps if low < t < high])  # a list: a generator resumes once an item
    while inside:  # the stretch between two listed jumps where the CDF reaches q
        middle = len(inside) // 2
        t = inside[middle]
        if (at_t := cdf(t)) >= q:
            high, at_high, inside = t, at_t, inside[:middle]
        else:
            low, at_low, inside = t, at_t, inside[middle + 1 :]
    if high - low > xtol:
        below = high - xtol
        if (at_below := cdf(below)) < q:  # q is reached within xtol below the top: the jump there
            return high
        high, at_high = below, at_below
    if row is not None:
        return _halley_invert(row, q, (low, at_low), (high, at_high), xtol=xtol)
    _, reached = bracket_root(lambda t: cdf(t) - q, low, high, xtol=xtol, f_low=at_low - q, f_high=at_high - q, anderson_bjorck=True)
    return reached  # the end where cdf >= q


# --- one load ---------------------------------------------------------------------------------------


def latency_point(
    brief: Brief,
    shape: ReplicaShape,
    rate_per_replica: float,
    load_batch: float,
    *,
    hit_rate: float | None = None,
    max_num_seqs: int | None = None,
    max_num_batched_tokens: int | None = None,
    context_tokens: float | None = None,
) -> LatencyPoint:
    """The latency model at one load (rate and the running batch Little's law gives); engine limits, hit rate
    and the context a decode step reads default to the brief's."""
    eng = _engine_of(brief, shape, hit_rate, max_num_seqs, max_num_batched_tokens, context_tokens)
    return latency_at(eng, brief, rate_per_replica, load_batch)


def _spec_switch(brief: Brief, shape: ReplicaShape) -> SpecSwitch | None:
    from planner.speculative import spec_switch  # planner.speculative builds on this module's SLO budget

    return spec_switch(brief, shape)


def engine(brief: Brief, shape: ReplicaShape) -> _Engine:
    """The replica's step constants under the brief, built once for a solve that evaluates many loads."""
    return _engine_of(brief, shape)


def _engine_of(
    brief: Brief,
    shape: ReplicaShape,
    hit_rate: float | None = None,
    max_num_seqs: int | None = None,
    max_num_batched_tokens: int | None = None,
    context_tokens: float | None = None,
) -> _Engine:
    """The engine for these arguments, kept on the replica: a plan asks for the same one from many solves."""
    key = ("engine", brief, hit_rate, max_num_seqs, max_num_batched_tokens, context_tokens)
    memo = shape.memo
    engine: _Engine | None = memo.get(key)  # one lookup: the key's hash (the brief's) is not kept
    if engine is None:
        if len(memo) >= _ENGINES_PER_REPLICA:
            memo.clear()
        engine = memo[key] = _Engine(brief, shape, hit_rate, max_num_seqs, max_num_batched_tokens, context_tokens)
    return engine


_ENGINES_PER_REPLICA = 64


# A prompt's time on the prefill slot at one load's running batch, all the token gaps read of the load: (the running
# batch, engine steps a mean prompt's chunks ride in, E[S], E[S^2], E[S^3]). A plain tuple: a NamedTuple's
# constructor is a Python call, and the probes build one each.
_Service = tuple[float, float, float, float, float]


def _service(eng: _Engine, load_batch: float) -> _Service:
    """The prompts' service at a load's running batch (at most the batch the engine runs)."""
    batch = min(load_batch, float(eng.seqs))
    return (batch, *eng.service_moments[batch])


class _Wait(NamedTuple):
    """What a prompt waits for and how long its own steps take, at one load."""

    service: _Service
    slot: float  # prefill slot busy share
    prompt_wait_s: float  # M/G/1 FCFS wait for the prompts ahead (Pollaczek-Khinchine)
    step_wait_s: float  # the rest of the engine step in progress when the prompt arrives
    admitted: float  # P(a request waits for a batch slot): Erlang C near max-num-seqs
    admission_s: float  # its mean wait for a batch slot (exponential given a wait)
    stages: np.ndarray  # each covered prompt's own chunk steps (s)
    tail: float  # gamma shape of the M/G/1 wait given it is not zero
    fixed_s: float  # the request path outside the engine: network, gateway, tokenization, first sample and write


def request_path_s(brief: Brief, extra_ttft_s: float) -> float:
    """The request path outside the engine: network, gateway, tokenization, first sample and write, and the
    mechanisms' extra `extra_ttft_s` (a KV reload, the encoder, an adapter load: mechanisms.ttft_extra_s's p95)."""
    lat = brief.latency
    return (lat.network_ms + lat.gateway_ms + lat.tokenization_ms + lat.first_sample_ms + lat.first_write_ms) / 1e3 + extra_ttft_s


def _wait(eng: _Engine, brief: Brief, rate: float, load_batch: float) -> _Wait:
    hold_s = load_batch / rate if rate > 0 else 0.0
    service = _service(eng, load_batch)
    batch, _, s1, s2, s3 = service
    slot = rate * s1
    prompt_wait_s = rate * s2 / (2 * (1 - slot)) if slot < 1 else math.inf
    admitted, admission_s = _erlang_c(load_batch, eng.seqs, hold_s)
    covered = _covered_prompts(brief.workload.input_tokens_mean, min(float(brief.slo.ttft_input_cap_tokens), eng.longest_prompt), eng.cv2)
    stages = _stage_s(eng, covered, batch) if eng.room(batch) > 0 else np.full(covered.shape, math.inf)
    return _Wait(
        service=service,
        slot=slot,
        prompt_wait_s=prompt_wait_s,
        step_wait_s=eng.engine_step_s(batch) / 2,  # a prompt arrives mid-step whether or not others are queued
        admitted=admitted,
        admission_s=admission_s,
        stages=stages,
        tail=_mg1_tail_shape(rate, slot, prompt_wait_s, s3),
        fixed_s=request_path_s(brief, eng.extra_ttft_s),
    )


def _ttft_s(wt: _Wait, q: float) -> float:
    """q-quantile of TTFT over the covered prompts, end to end: the fixed path and the step in progress, then the
    prompt's own chunk steps plus the queue wait (the prefill slot's and the batch slot's, _queue_wait)."""
    busy, wait_s, shape = _queue_wait(min(wt.slot, 1.0), wt.prompt_wait_s, wt.tail, wt.admitted, wt.admission_s)
    return wt.fixed_s + wt.step_wait_s + _ttft_quantile_s(wt.stages, busy, wait_s, shape, q)


def _tpot(eng: _Engine, rate: float, load_batch: float, sv: _Service) -> tuple[float, float, float, float]:
    """(interference, the share of the p95 TPOT beyond the p95 batch's decode gap, TPOT p50, TPOT p95) in seconds.

    A reply of g gaps lasts g x gap plus the extra time e (beyond the decode steps they stand in for) of the prompts
    arriving meanwhile, and each one lengthens it and so lets more in: an M/G/1 busy period started by g x gap of work,
    mean g x gap / (1 - rho), variance g x gap x r E[e²] / (1 - rho)³ (Takács). Its mean gap (TPOT) is the decode gap +
    a gamma with mean gap rho / (1 - rho) and that variance / g², averaged over the replies' lengths (E[1/g]: short
    replies spread most); its p95 excess over the mean and the p95 batch's (B + 1.645 √B) add in quadrature.
    """
    rho_i, gap_s, gap_p95_s, tpot_s = _mean_gap(eng, rate, load_batch, sv)
    if rho_i >= 1:
        return rho_i, rho_i, math.inf, math.inf
    _, _, s1, s2, _ = sv
    served = min(rate, 1 / s1) if s1 > 0 and math.isfinite(s1) else rate
    extra_s = rho_i / served if served > 0 else 0.0  # rho_i = served x the extra time of one prompt's steps
    extra_sq = extra_s * extra_s + max(s2 - s1 * s1, 0.0)  # E[e²]: the prompts' steps vary with their lengths
    var = gap_s * served * extra_sq / (1 - rho_i) ** 3 * _inverse_gaps_mean(eng.output, eng.output_p95)
    excess = tpot_s - gap_s
    shape = excess * excess / var if var > 0 else math.inf
    spread_s = _gamma_p95(shape) * excess / shape - excess if math.isfinite(shape) and shape > 0 else 0.0
    # at the p95 batch the decode gap is longer, stretched by the interference as the mean gap is: the two p95
    # excesses over the mean, independent, add in quadrature
    batch_s = (gap_p95_s - gap_s) / (1 - rho_i)
    tpot_p95_s = tpot_s + math.hypot(max(spread_s, 0.0), batch_s)
    return rho_i, 1 - gap_p95_s / tpot_p95_s, tpot_s, tpot_p95_s


def _mean_gap(eng: _Engine, rate: float, load_batch: float, sv: _Service) -> tuple[float, float, float, float]:
    """_tpot's mean part: (interference, the decode gap at the running batch and at its p95, TPOT p50) in seconds; the
    TPOT is nan where the interference is at 1 or over (no gap ends)."""
    batch_p95 = min(load_batch + P95_Z * math.sqrt(max(load_batch, 0.0)), float(eng.seqs))
    # the decode gap and the interference's rate-free terms at the running batch are pace()'s: the running-batch solve
    # at this rate kept them (the load's service is the same table's, sv)
    _, _, gap_s, most_served, beyond_s = eng.pace_terms[sv[0]]
    gap_p95_s = eng.decode_step_s(batch_p95) + eng.sched_s
    rho_i = _served_share(rate, most_served, beyond_s)
    return rho_i, gap_s, gap_p95_s, gap_s / (1 - rho_i) if rho_i < 1 else math.nan


def _gaps_end(eng: _Engine, rate: float, load_batch: float, sv: _Service) -> bool:
    """Whether _tpot's p95 is finite, without its spread (a gamma inversion): the mean gap (nan where the interference
    leaves the decode steps no time) and the p95 batch's are finite (the spread is finite where those are)."""
    _, _, gap_p95_s, tpot_s = _mean_gap(eng, rate, load_batch, sv)
    return math.isfinite(tpot_s) and math.isfinite(gap_p95_s)


_ONE_GAP = 2.0  # replies of this many tokens or fewer have at most one gap: TPOT is the gap itself
_WILSON_HILFERTY_FROM = 10.0  # gamma shapes from here: the cube-root normal p95, within 0.03% (its excess within 0.08%)


def _gamma_p95(shape: float) -> float:
    """The 95th percentile of a unit-scale gamma: Wilson and Hilferty's cube-root normal for a large shape (the exact
    inversion's series grow with it), the inversion below."""
    if shape < _WILSON_HILFERTY_FROM:
        return gamma_p_inverse(shape, 0.95)
    ninth = 1 / (9 * shape)
    return float(shape * (1 - ninth + P95_Z * math.sqrt(ninth)) ** 3)


_GAPS_SUMMED = 512  # reply lengths summed one by one up to this; the longer ones in closed form
_GAP_EDGES = np.arange(1, _GAPS_SUMMED + 1, dtype=np.float64) + 0.5  # tokens n in [n - 1/2, n + 1/2), in tokens: n = 2 ..
_GAPS = np.arange(1, _GAPS_SUMMED, dtype=np.float64)  # a reply's gaps: its tokens - 1
_GAP_EDGES.flags.writeable = False
_GAPS.flags.writeable = False


@lru_cache(maxsize=256)
def _inverse_gaps_mean(mean: float, p95: float) -> float:
    """E[1 / gaps] over the replies with a gap (two tokens or more; gaps = tokens - 1), lengths gamma with this mean and
    p95 rounded to whole tokens, as the simulator draws them."""
    cv2 = length_cv2(mean, p95)
    if cv2 <= 0:
        return 1 / max(round(mean) - 1, 1)
    k, scale = 1 / cv2, mean * cv2
    edges = _GAP_EDGES / scale
    cdf = gamma_p_array(k, edges)
    shares = cdf[1:] - cdf[:-1]  # np.diff's values, without its Python-level calls
    with_gap = 1 - cdf[0]
    if with_gap <= 0:
        return 1.0
    # longer replies (1 / gaps ~ 1 / tokens there): E[1 / X; X > a] = Q(k - 1, a / scale) / (scale (k - 1)) for a gamma
    # of shape k > 1; for a more skewed one, their share over their mean length, E[X; X > a] / P(X > a)
    rest = 1 - cdf[-1]
    if k > 1:
        longer = (1 - gamma_p(k - 1, edges[-1])) / (scale * (k - 1))
    else:
        longer = rest * rest / (mean * (1 - gamma_p(k + 1, edges[-1]))) if rest > 1e-12 else 0.0
    return float((np.add.reduce(shares / _GAPS) + longer) / with_gap)  # np.sum's reduction (the same sum), called directly


def slo_margin(eng: _Engine, brief: Brief, rate: float, load_batch: float) -> float:
    """The worse of p95 TTFT / its target and the judged p95 ITL / its target (<= 1 meets both): the p95s alone."""
    ttft_ms, judged_ms, _ = judged_p95s_ms(eng, brief, rate, load_batch)
    return max(ttft_ms / brief.slo.ttft_p95_ms, judged_ms / brief.slo.itl_p95_ms)


def judged_p95s_ms(
    eng: _Engine, brief: Brief, rate: float, load_batch: float, needed: tuple[bool, bool] = (True, True)
) -> tuple[float, float, float]:
    """(p95 TTFT, the p95 of the ITL metric the brief judges) in ms: the two figures slo_margin holds to their targets
    (`needed`: which of the two to work out; the other is nan), and the share of token gaps on mixed steps where the
    judged p95 is the token gap's (its quantile's mixture: the p95 stays at the decode step until that share passes
    5%), else nan. The gaps read only the prompts' service of the load, not the waits the TTFT adds (its prompts' own
    steps, the queues): those are worked out only where the TTFT is needed."""
    if needed[0]:
        wt = _wait(eng, brief, rate, load_batch)
        sv, ttft_s = wt.service, _ttft_s(wt, 0.95)
    else:
        sv, ttft_s = _service(eng, load_batch), math.nan
    if not needed[1]:
        return ttft_s * 1e3, math.nan, math.nan
    share = math.nan
    if brief.slo.itl_metric is ItlMetric.itl or eng.output <= _ONE_GAP:
        (itl,), share, _ = _token_gap_quantiles_s(eng, rate, sv[0], (0.95,))
        judged = itl if _gaps_end(eng, rate, load_batch, sv) else math.inf  # p95 TPOT finite: its figure is not read
    else:
        judged = _tpot(eng, rate, load_batch, sv)[3]
    return ttft_s * 1e3, judged * 1e3, share


def _interfering_rate(eng: _Engine, rate: float, load_batch: float, batch: float) -> float:
    """The prompts a second whose steps interrupt decode: the offered rate; without a steady state, what the full
    batch admits as its sequences finish (full_batch_admission_rate)."""
    return rate if math.isfinite(load_batch) else full_batch_admission_rate(eng, rate, batch)


def _gaps_s(eng: _Engine, admitted: float, batch: float, rho_i: float) -> tuple[float, float, float, float]:
    """(p50 and p95 of the gaps between consecutive tokens, the share of gaps on mixed steps, the mean mixed step):
    no gap ends once the prompts' steps take all the time (interference rho_i at 1 or over)."""
    (itl_p50, itl_p95), share, mixed_s = _token_gap_quantiles_s(eng, admitted, batch, (0.50, 0.95))
    if rho_i >= 1:
        return math.inf, math.inf, share, mixed_s
    return itl_p50, itl_p95, share, mixed_s


def _one_gap_tpot_s(itl_p95_s: float, tpot_p50_s: float) -> float:
    """p95 TPOT of replies of at most one gap (_ONE_GAP): their mean gap is that gap (and its p95 at least the mean)."""
    return max(itl_p95_s, tpot_p50_s)


def _judged_p95s_s(eng: _Engine, brief: Brief, rate: float, load_batch: float) -> tuple[float, float, float]:
    """(p95 TTFT, p95 ITL, p95 TPOT) in seconds as latency_at works them out, by the same calls (so the same figures),
    without the other figures of the point; the gap figure the brief's ITL target does not judge is nan (TPOT is
    worked out either way: its interference ends the gaps too)."""
    wt = _wait(eng, brief, rate, load_batch)
    batch = wt.service[0]
    admitted = _interfering_rate(eng, rate, load_batch, batch)
    rho_i, _, tpot_p50, tpot_p95 = _tpot(eng, admitted, load_batch, wt.service)
    itl_p95 = math.nan
    if brief.slo.itl_metric is ItlMetric.itl or eng.output <= _ONE_GAP:
        _, itl_p95, _, _ = _gaps_s(eng, admitted, batch, rho_i)
    if eng.output <= _ONE_GAP:
        tpot_p95 = _one_gap_tpot_s(itl_p95, tpot_p50)
    return _ttft_s(wt, 0.95), itl_p95, tpot_p95


def _linear_quantile(values: np.ndarray, q: float) -> float:
    """np.quantile(values, q) with its default (linear) method, worked out as numpy does (the two order statistics
    around (n - 1) q, interpolated as its _lerp; any NaN gives NaN) without its overhead on a short array."""
    ordered: list[float] = sorted(values.tolist())
    if any(map(math.isnan, ordered)):
        return math.nan
    last = len(ordered) - 1
    at = last * q
    below, above = (-1, -1) if at >= last else (math.floor(at), math.floor(at) + 1)  # numpy's indexes: -1, the largest
    t = at - below
    a, b = ordered[below], ordered[above]
    return b - (b - a) * (1 - t) if t >= 0.5 else a + (b - a) * t


def latency_at(eng: _Engine, brief: Brief, rate_per_replica: float, load_batch: float, waits: _Wait | None = None) -> LatencyPoint:
    """latency_point on an engine already built; `waits`: the load's _wait on it, where already worked out."""
    w, lat = brief.workload, brief.latency
    rate = rate_per_replica
    wt = _wait(eng, brief, rate, load_batch) if waits is None else waits
    batch, chunks_mean, s1, _, _ = wt.service
    batch_p95 = min(load_batch + P95_Z * math.sqrt(max(load_batch, 0.0)), float(eng.seqs))
    _, step_s, gap_s, _, _ = eng.pace_terms[batch]  # the decode step and token gap the running-batch solve's pace read
    step_p95_s = eng.step_at[batch_p95].decode_step_s  # kept: _tpot's mean gap and the longest stage read it too
    service_s = eng.uncached * eng.prompt_token_s(batch)
    rho_p = rate * service_s
    rho_d = rate * w.output_tokens_mean * step_s / max(batch, 1.0)
    slot, prompt_wait_s, admission_s, step_wait_s = wt.slot, wt.prompt_wait_s, wt.admission_s, wt.step_wait_s
    wait_s = prompt_wait_s + admission_s
    room = eng.room(batch)
    cap_prompt = min(float(brief.slo.ttft_input_cap_tokens), w.input_tokens_p95, eng.longest_prompt)
    cap_tokens = cap_prompt * (1 - eng.hit)
    if room <= 0:
        chunk, chunks, stage_s = 0.0, math.inf, math.inf
    else:
        chunk = min(room, cap_tokens)
        chunks = _prompt_chunks(cap_tokens, room)
        stage_s = float(eng.mixed_step_s(cap_tokens, chunks, batch))
    fixed_ms = wt.fixed_s * 1e3
    stages = wt.stages
    stage_mean_s = float(np.add.reduce(stages)) / stages.size  # np.mean's value, without its dispatch (nor ndarray.sum's wrapper)
    admitted = _interfering_rate(eng, rate, load_batch, batch)
    rho_i, rho_i95, tpot_p50, tpot_p95 = _tpot(eng, admitted, load_batch, wt.service)
    itl_p50, itl_p95, share, mixed_s = _gaps_s(eng, admitted, batch, rho_i)
    if eng.output <= _ONE_GAP:
        tpot_p95 = _one_gap_tpot_s(itl_p95, tpot_p50)
    full_chunk = min(room, w.input_tokens_p95 * (1 - eng.hit)) if math.isfinite(room) else w.input_tokens_p95 * (1 - eng.hit)
    longest = eng.chunk_step_s(max(full_chunk, 0.0), batch_p95)
    ttft_p95 = _ttft_s(wt, 0.95) * 1e3
    hold_s = load_batch / rate if rate > 0 else 0.0
    return trusted(
        LatencyPoint,
        rate_per_replica_per_s=rate,
        load_batch=load_batch,
        running_batch=batch,
        running_batch_p95=batch_p95,
        context_tokens=eng.context,
        hold_s=hold_s,
        decode_step_ms=step_s * 1e3,
        decode_step_p95_ms=step_p95_s * 1e3,
        scheduler_ms=float(lat.scheduler_ms),  # a default the brief left out is its int
        step_fixed_ms=eng.base_s(batch) * 1e3,
        step_memory_ms=eng.floor_s(batch) * 1e3,
        hit_rate=eng.hit,
        uncached_tokens_mean=eng.uncached,
        service_cv2=eng.cv2,
        prefill_service_ms=service_s * 1e3,
        rho_prefill=rho_p,
        rho_decode=rho_d,
        rho=rho_p + rho_d,
        prefill_slot_busy=slot,
        slot_service_ms=s1 * 1e3,
        prompt_wait_ms=prompt_wait_s * 1e3,
        admission_wait_ms=admission_s * 1e3,
        admission_busy=wt.admitted,
        batch_slots=eng.seqs,
        step_wait_ms=step_wait_s * 1e3,
        queue_wait_ms=(wait_s + step_wait_s) * 1e3,
        queue_wait_p95_ms=max(ttft_p95 - fixed_ms - _linear_quantile(stages, 0.95) * 1e3, 0.0) if math.isfinite(ttft_p95) else math.inf,
        chunks_mean=float(chunks_mean),  # 1 where a prompt fits one step
        cap_uncached_tokens=cap_tokens,
        chunk_tokens=chunk,
        chunks=float(chunks),
        prefill_stage_ms=stage_s * 1e3,
        prefill_covered_mean_ms=stage_mean_s * 1e3,
        fixed_ms=fixed_ms,
        ttft_mean_ms=fixed_ms + (eng.extra_ttft_mean_s - eng.extra_ttft_s + wait_s + step_wait_s + stage_mean_s) * 1e3,
        ttft_p50_ms=_ttft_s(wt, 0.50) * 1e3,
        ttft_p95_ms=ttft_p95,
        interfering_rate_per_s=min(admitted, 1 / s1) if 0 < s1 < math.inf else admitted,  # as _served_share serves them
        rho_interference=rho_i,
        rho_interference_p95=rho_i95,
        itl_interference_ms=(tpot_p50 - gap_s) * 1e3,
        mixed_step_share=share,
        mixed_step_ms=mixed_s * 1e3,
        itl_p50_ms=itl_p50 * 1e3,
        itl_p95_ms=itl_p95 * 1e3,
        tpot_p50_ms=tpot_p50 * 1e3,
        tpot_p95_ms=tpot_p95 * 1e3,
        longest_step_ms=longest * 1e3,
    )


# --- the budget -------------------------------------------------------------------------------------


class Turnover(NamedTuple):
    """A full batch kept full: each step prefills the prompts that replace the sequences it finishes."""

    prompt_tokens: float  # a step's share of the replacements' uncached tokens: batch x uncached / output
    carried_tokens: float  # what a step has room for of them (max-num-batched-tokens - batch)
    step_s: float  # the mixed step carrying them beside the batch's decode, the scheduler and their images' encoder included
    request_s: float  # a replica's time per request
    prefill_bound: bool  # the replacements need more than a step has room for: prefill sets the pace

    @property
    def rate_per_s(self) -> float:
        """Requests a replica finishes a second at the full batch."""
        return 1 / self.request_s


def full_batch_turnover(eng: _Engine, batch: float) -> Turnover:
    """A replica at a full batch of `batch` whose every finished sequence is replaced at once (an offline job's, a
    rollout's, the configuration's bound): a sequence finishes every `output` steps, so each step carries
    batch x uncached / output prompt tokens beside the decode batch, several prompts a step where they fit (as the
    engine and the simulator pack them), and the replica's time per request is output x step / batch; prefill-bound
    when those tokens exceed the step's room: uncached x step / room."""
    tokens = batch * eng.uncached / eng.output
    carried = min(tokens, eng.room(batch))
    prompts = batch / eng.output * (carried / tokens if tokens > 0 else 1.0)  # admitted a step
    step_s = float(eng.mixed_step_s(carried, 1.0, batch)) + prompts * eng.encoder_s  # images encoded as a prompt is admitted
    bound = tokens > carried
    # prefill-bound with no room at all beside the decode batch (the budget is the batch): no prompt is ever admitted
    prefill_bound_s = eng.uncached * step_s / carried if carried > 0 else math.inf
    request_s = prefill_bound_s if bound else eng.output * step_s / batch
    return Turnover(prompt_tokens=tokens, carried_tokens=carried, step_s=step_s, request_s=request_s, prefill_bound=bound)


def full_batch_admission_rate(eng: _Engine, rate: float, batch: float) -> float:
    """The prompt rate beside the decode steps of a replica without a steady state: its batch of `batch` stays full and
    takes new prompts only as fast as its sequences finish (full_batch_turnover), not at the offered `rate` (the
    rest wait in a queue that grows), and never faster than they arrive. The batch is what the engine runs of it (whole
    sequences, at most its max-num-seqs), as its pace takes it."""
    return min(rate, full_batch_turnover(eng, min(batch, float(eng.seqs))).rate_per_s)


def full_batch_point(brief: Brief, shape: ReplicaShape, context_tokens: float, seqs: int | None = None) -> LatencyPoint:
    """The latency model with `seqs` sequences running (max-num-seqs by default), each reading `context_tokens` of KV, at
    the rate that keeps the batch full at the engine's pace (Little's law: the batch over the time a request holds its
    slot)."""
    seqs = brief.deployment.max_num_seqs if seqs is None else seqs
    eng = _engine_of(brief, shape, context_tokens=context_tokens)
    rate = seqs / max(eng.output * (eng.decode_step_s(seqs) + eng.sched_s), 1e-9)
    for _ in range(12):  # the interference the rate brings lengthens the replies: a few fixed-point passes
        hold = eng.pace(rate, seqs).engine_time_s
        if not math.isfinite(hold):
            break
        rate = seqs / hold
    return latency_point(brief, shape, rate, float(seqs), context_tokens=context_tokens)


def at_max_batch(brief: Brief, shape: ReplicaShape) -> AtMaxBatch:
    """The per-token ITL with max-num-seqs sequences running, each reading the brief's KV-sizing context (the
    configuration's bound), and the step that carries a mean prompt's chunk beside that batch. Where the KV pool holds
    fewer sequences at that context than max-num-seqs admits, the batch is what it holds: the engine preempts the rest.

    The rate that keeps the batch full and a reply's mean gap are the latency model's while its prefill slot (one
    prompt a step) admits the batch's replacements; where that slot would be over 100% busy, the batch turns over
    faster than one prompt a step, and the engine (and the simulator) packs several prompts into a step: both are then
    the full-batch turnover's (full_batch_turnover, the basis an offline job's or a rollout's pace uses)."""
    slots = brief.deployment.max_num_seqs
    context = brief.workload.kv_context_tokens or brief.running_context_tokens
    seqs = max(min(slots, math.floor(shape.kv_capacity_tokens / context)), 1)
    p = full_batch_point(brief, shape, context, seqs)
    eng = _engine_of(brief, shape, context_tokens=context)
    chunks = _prompt_chunks(eng.uncached, eng.room(seqs))
    chunk_step_ms = float(eng.mixed_step_s(eng.uncached, chunks, seqs)) / chunks * 1e3  # base_s holds the scheduler's share
    turn = full_batch_turnover(eng, float(seqs))
    packed = p.prefill_slot_busy > 1  # one prompt a step cannot admit the replacements: steps carry several
    rate = turn.rate_per_s if packed else p.rate_per_replica_per_s
    tpot_p50_ms = turn.step_s * 1e3 if packed else p.tpot_p50_ms
    if packed:
        pace_words = (
            f". At the {num(p.rate_per_replica_per_s, 'req/s')} the latency model's pace gives, its prefill slot (one prompt at"
            f" a time) would be {pct(p.prefill_slot_busy)} busy: the batch turns over faster than that slot admits prompts."
            f" The engine packs prompts by tokens, so each step carries the replacements' share, {seqs} x"
            f" {num(eng.uncached, 'uncached tokens')} / {num(eng.output, 'tokens')} out = {num(turn.prompt_tokens, 'prompt tokens')},"
            f" beside the batch's decode{' (their images encoded as they are admitted)' if eng.encoder_s > 0 else ''}: a step carrying "
            + (
                f"{num(turn.carried_tokens, 'tokens')} (all it has room for: prefill binds) takes {num(turn.step_s * 1e3, 'ms')},"
                f" {num(eng.uncached)} x {num(turn.step_s * 1e3, 'ms')} / {num(turn.carried_tokens)}"
                if turn.prefill_bound
                else f"them takes {num(turn.step_s * 1e3, 'ms')}, {num(eng.output)} x {num(turn.step_s * 1e3, 'ms')} / {seqs}"
            )
            + f" = {num(turn.request_s * 1e3, 'ms')} of a replica per request: the batch stays full at {num(rate, 'req/s')}"
            f" per replica (the full-batch pace an offline job's objective uses) and a reply's mean gap (TPOT) is"
            f" that step, p50 {num(tpot_p50_ms, 'ms')}. A step carrying one mean prompt's {num(eng.uncached, 'uncached tokens')}"
            f" beside the batch takes {num(chunk_step_ms, 'ms')}, a longer prompt's chunk longer; gaps between tokens, as the"
            f" latency model draws them from those one-prompt steps: p50 {num(p.itl_p50_ms, 'ms')}, p95 {num(p.itl_p95_ms, 'ms')}"
        )
    else:
        pace_words = (
            f"; the batch stays full at {num(rate, 'req/s')} per replica"
            f" ({seqs} / {num(p.hold_s, 's')} a request holds its slot). A step carrying a mean prompt's {num(eng.uncached, 'uncached tokens')}"
            f" beside the batch takes {num(chunk_step_ms, 'ms')}, a longer prompt's chunk longer; {pct(p.mixed_step_share)} of the token"
            f" gaps fall on steps carrying a chunk: a reply's mean gap (TPOT) p50 {num(tpot_p50_ms, 'ms')};"
            f" gaps between tokens p50 {num(p.itl_p50_ms, 'ms')}, p95 {num(p.itl_p95_ms, 'ms')}"
        )
    return AtMaxBatch(
        batch=seqs,
        rate_per_replica_per_s=rate,
        context_tokens=context,
        decode_step_ms=p.decode_step_ms,
        itl_p50_ms=p.itl_p50_ms,
        itl_p95_ms=p.itl_p95_ms,
        tpot_p50_ms=tpot_p50_ms,
        mixed_step_share=p.mixed_step_share,
        chunk_step_ms=chunk_step_ms,
        arithmetic=(
            f"{seqs} sequences running ({'max-num-seqs' if seqs == slots else f'all the KV pool holds; max-num-seqs {slots} admits more, which preempt'}),"
            f" each reading {num(context, 'tokens')} of KV: decode step {num(p.decode_step_ms, 'ms')}"
            f" + {num(brief.latency.scheduler_ms, 'ms')} scheduler{pace_words}"
        ),
    )


def batched_tokens_tradeoff(
    brief: Brief, shape: ReplicaShape, rate_per_replica: float, load_batch: float, running_batch: float
) -> tuple[TradeoffPoint, ...]:
    """p95s against max-num-batched-tokens at one rate per replica (SloBudget.tradeoff_batched_tokens): each value's as
    `plan --set deployment.max_num_batched_tokens=value` gives it, its running batch solved on that engine (a smaller
    chunk slows the steps' pace, so more sequences run); the brief's own value at the operating point's `load_batch`."""
    values = _batched_token_values(brief.deployment.max_num_batched_tokens, running_batch, brief.deployment.max_num_seqs)
    return tuple(batched_tokens_point(brief, shape, rate_per_replica, load_batch, v) for v in values)


def batched_tokens_nearest(
    brief: Brief, shape: ReplicaShape, rate_per_replica: float, load_batch: float, running_batch: float, ttft_target_ms: float
) -> Iterable[TradeoffPoint]:
    """batched_tokens_tradeoff's points other than the brief's own value whose p95 TTFT is within `ttft_target_ms`,
    nearest the brief's value first (on a log scale; of two as near, the smaller), each worked out only when it is
    reached: a caller after the nearest point that does something stops early, and the points it worked out are those
    the whole curve reuses. Each value's p95 TTFT is worked out first, by latency_at's own calls (its queue and its
    prompts' own steps, a fraction of a point): a value it rules out costs no token-gap quantiles."""
    current = brief.deployment.max_num_batched_tokens
    values = [v for v in _batched_token_values(current, running_batch, brief.deployment.max_num_seqs) if v != current]
    for v in sorted(values, key=lambda v: abs(math.log(v / current))):  # a stable sort: the smaller of a tie first
        eng, batch = _batched_tokens_load(brief, shape, rate_per_replica, load_batch, v)
        waits = _wait(eng, brief, rate_per_replica, batch)
        if _ttft_s(waits, 0.95) * 1e3 <= ttft_target_ms:  # the point's p95 TTFT, to the bit
            yield batched_tokens_point(brief, shape, rate_per_replica, load_batch, v, waits)


def batched_tokens_point(
    brief: Brief, shape: ReplicaShape, rate_per_replica: float, load_batch: float, value: int, waits: _Wait | None = None
) -> TradeoffPoint:
    """One point of batched_tokens_tradeoff: the p95s with max-num-batched-tokens at `value`, its running batch solved
    on that engine from `load_batch` (the brief's own value's is `load_batch` itself). Kept on that engine: a missed
    ITL's chunk advice (core._chunk_change) reads the points nearest the brief's first, the curve all of them.
    `waits`: the point's queue and prompts' steps where already worked out (batched_tokens_nearest's p95 TTFT)."""
    eng = _engine_of(brief, shape, max_num_batched_tokens=value)
    key = ("tradeoff point", rate_per_replica, load_batch)
    point: TradeoffPoint | None = eng.memo.get(key)
    if point is None:
        at_eng, batch = _batched_tokens_load(brief, shape, rate_per_replica, load_batch, value)
        point = eng.memo[key] = _tradeoff_point(value, latency_at(at_eng, brief, rate_per_replica, batch, waits))
    return point


def _batched_tokens_load(
    brief: Brief, shape: ReplicaShape, rate_per_replica: float, load_batch: float, value: int
) -> tuple[_Engine, float]:
    """The engine a trade-off point at max-num-batched-tokens `value` is worked out on, and its running batch there:
    solved on that engine from `load_batch` (a smaller chunk slows the steps' pace, so more sequences run; where the
    token budget binds, the engine runs the whole sequences it holds), the brief's own value's `load_batch` itself.
    The solve is kept on that engine: a value's p95 TTFT and its point read the same one."""
    from planner.operating_point import batch_on  # the operating point's solve builds on this module's engine

    eng = _engine_of(brief, shape, max_num_batched_tokens=value)
    if value == brief.deployment.max_num_batched_tokens:
        return eng, load_batch
    key = ("tradeoff batch", rate_per_replica, load_batch)
    solved: tuple[float, int | None] | None = eng.memo.get(key)
    if solved is None:
        solved = eng.memo[key] = batch_on(brief, shape, rate_per_replica, partial(eng.pace, rate_per_replica), load_batch)
    batch, capped = solved
    return _engine_of(brief, shape, max_num_seqs=capped, max_num_batched_tokens=value), batch


def chunk_tradeoff_words(curve: tuple[TradeoffPoint, ...], current: int) -> str:
    """How p95 ITL, p95 TTFT and the longest step move with the prefill chunk, as the plan's trade-off computes them:
    where the brief's chunk (`current` tokens a step) sits, where p95 ITL is lowest, and the two forces (a smaller chunk
    puts more token gaps on chunk-carrying steps, where the p95 often lands; a bigger one lengthens the steps that carry
    it). The curve need not be monotone (rag's falls, rises, then falls). Empty without a curve."""
    if len(curve) < 2:
        return ""
    small, big = curve[0], curve[-1]
    here = next((t for t in curve if int(t.x) == current), None)
    lowest = min(curve, key=lambda t: t.itl_p95_ms)
    highest = max(curve, key=lambda t: t.itl_p95_ms)
    span = f"from {int(small.x)} to {int(big.x)} tokens a step"
    if highest.itl_p95_ms <= lowest.itl_p95_ms * _FLAT:
        itl = f"p95 ITL stays near {num(lowest.itl_p95_ms, 'ms')} at every size"
    else:
        at = f"at the brief's {current}, {num(here.itl_p95_ms, 'ms')}; " if here is not None else ""
        near = [t.itl_p95_ms <= lowest.itl_p95_ms * _NEAR for t in curve]
        last = len(curve) - 1
        first = next((i for i in range(last) if all(near[i:])), last)  # from here to the largest size, all at the lowest
        best = f"from {int(curve[first].x)} tokens up" if first < last else f"at {int(lowest.x)} tokens"
        itl = (
            f"p95 ITL runs {num(lowest.itl_p95_ms, 'ms')} to {num(highest.itl_p95_ms, 'ms')} ({at}lowest {best}:"
            " smaller chunks put more token gaps on chunk-carrying steps, bigger ones lengthen those steps)"
        )
    return (
        f"{span}, {itl}, p95 TTFT goes {num(small.ttft_p95_ms, 'ms')} -> {num(big.ttft_p95_ms, 'ms')}"
        f" and the longest single step {num(small.longest_step_ms, 'ms')} -> {num(big.longest_step_ms, 'ms')}"
    )


_FLAT = 1.01  # a p95 ITL curve within 1% of its lowest point is flat: no size helps
_NEAR = 1.005  # a point within 0.5% of the lowest reads as the lowest (the figures are shown to three digits)


def _batched_token_values(current: int, batch: float, max_num_seqs: int) -> list[int]:
    """The budgets the trade-off tries: above the running batch, and none under max-num-seqs (vLLM refuses to start)."""
    values = {256, 512, 1024, 2048, 4096, 8192, 16384, current}
    return sorted(v for v in values if (v > batch and v >= max_num_seqs) or v == current)


def _max_num_seqs_values(current: int, load_batch: float) -> list[int]:
    values = {current}
    if math.isfinite(load_batch):  # an overloaded replica (infinite batch) has no batch to size for
        values.add(max(math.ceil(load_batch * 1.05), 1))
    values |= {max(round(current * f), 1) for f in (0.5, 0.75, 0.875, 1.25, 1.5, 2.0, 3.0)}
    return sorted(values)


def _tradeoff(points: list[tuple[int, LatencyPoint]]) -> tuple[TradeoffPoint, ...]:
    return tuple(_tradeoff_point(x, p) for x, p in points)


def _tradeoff_point(x: int, p: LatencyPoint) -> TradeoffPoint:
    return TradeoffPoint(
        x=x, ttft_p95_ms=p.ttft_p95_ms, itl_p95_ms=p.itl_p95_ms, tpot_p95_ms=p.tpot_p95_ms, longest_step_ms=p.longest_step_ms
    )


def judged_itl_ms(brief: Brief, p: LatencyPoint) -> float:
    """The p95 figure the brief's ITL target judges: per-token gaps (itl) or each reply's mean gap (tpot)."""
    return brief.slo.itl_metric.judged(p.itl_p95_ms, p.tpot_p95_ms)


def slo_budget(
    brief: Brief,
    shape: ReplicaShape,
    rate_per_replica: float,
    load_batch: float,
    basis: str | Callable[[], str],
    curves: bool = True,
    full_batch: int | None = None,
) -> SloBudget:
    """The SLO budget of one general-pool replica at the operating point; `basis` says where load_batch comes from (or
    writes it, when the arithmetic is first read).
    `full_batch`: the batch a replica without a steady state runs where the token budget caps it below max-num-seqs.

    `curves=False` leaves the trade-off curves empty: re-plans that read only the verdict (failure modes) skip them.
    With curves, they are worked out on first read (SloBudget.at_max_batch, tradeoff_*).
    """
    lat = brief.latency
    eng = _engine_of(brief, shape, max_num_seqs=full_batch)
    p = latency_at(eng, brief, rate_per_replica, load_batch)
    # the mechanisms' TTFT terms the engine worked out for its fixed path, each named
    mechanisms = tuple(trusted(WaterfallStep, component=t.p95_name, ms=t.p95_ms) for t in eng.ttft_terms)
    mechanisms_mean = tuple(trusted(WaterfallStep, component=t.mean_name, ms=t.mean_ms) for t in eng.ttft_terms)
    ttft_waterfall = (
        trusted(WaterfallStep, component="network round trip", ms=float(lat.network_ms)),
        trusted(WaterfallStep, component="gateway: auth, rate limit, route", ms=float(lat.gateway_ms)),
        trusted(WaterfallStep, component="tokenization", ms=float(lat.tokenization_ms)),
        trusted(WaterfallStep, component="queue wait (mean)", ms=p.queue_wait_ms),
        trusted(
            WaterfallStep, component="prefill of uncached tokens, chunked with decode (mean covered prompt)", ms=p.prefill_covered_mean_ms
        ),
        *mechanisms_mean,
        trusted(WaterfallStep, component="first sample", ms=float(lat.first_sample_ms)),
        trusted(WaterfallStep, component="first streamed write", ms=float(lat.first_write_ms)),
    )
    itl_waterfall = (
        trusted(WaterfallStep, component=f"decode step at batch {num(p.running_batch)}", ms=p.decode_step_ms),
        trusted(WaterfallStep, component="chunked-prefill interference (a reply's mean)", ms=p.itl_interference_ms),
        trusted(WaterfallStep, component="scheduler and sampling", ms=float(lat.scheduler_ms)),
    )
    budget = trusted(
        SloBudget,
        **_figures_against_targets(brief, p),
        ttft_waterfall=ttft_waterfall,
        itl_waterfall=itl_waterfall,
        queue_model=_queue_model_text(p),
        percentile_method=_percentile_text(),
        basis=_basis_text(brief, p),
        point=p,
        mechanisms=mechanisms,
        mechanisms_mean=mechanisms_mean,
    )
    budget._text = (brief, p, basis, mechanisms_mean)
    if curves:
        budget._curves = _Curves(brief, shape, rate_per_replica, load_batch, p.running_batch, at_max_batch)
    return budget


def judged_budget(
    brief: Brief, shape: ReplicaShape, rate_per_replica: float, load_batch: float, full_batch: int | None = None, *, quantiles: bool = True
) -> SloBudget:
    """The SLO budget of a re-plan read only for its verdict (core.verdict_core): p95 TTFT and the p95 the ITL target
    judges, worked out by slo_budget's own calls (so the same figures), and whether each meets its target; every other
    figure nan, no waterfall, model or words. `quantiles=False` (a disaggregated design: its pools' latencies replace
    the budget's) leaves out those two as well: only the fixed request path, which the pools' TTFT adds, is worked out."""
    eng = _engine_of(brief, shape, max_num_seqs=full_batch)
    ttft_s, itl_s, tpot_s = _judged_p95s_s(eng, brief, rate_per_replica, load_batch) if quantiles else (math.nan, math.nan, math.nan)
    p = trusted(
        LatencyPoint,
        **_NOT_WORKED_OUT
        | {
            "rate_per_replica_per_s": rate_per_replica,
            "load_batch": load_batch,
            "running_batch": min(load_batch, float(eng.seqs)),
            "batch_slots": eng.seqs,
            "fixed_ms": request_path_s(brief, eng.extra_ttft_s) * 1e3,
            "ttft_p95_ms": ttft_s * 1e3,
            "itl_p95_ms": itl_s * 1e3,
            "tpot_p95_ms": tpot_s * 1e3,
        },
    )
    budget = trusted(
        SloBudget,
        **_figures_against_targets(brief, p),  # its p50s and means are the point's nan
        ttft_waterfall=(),
        itl_waterfall=(),
        queue_model="",
        percentile_method="",
        basis="",
        point=p,
    )
    budget._text = (brief, p, "", ())
    return budget


def _figures_against_targets(brief: Brief, p: LatencyPoint) -> dict[str, Any]:
    """A budget's latency figures from its point, the brief's targets, and whether each p95 meets its own."""
    slo = brief.slo
    return {
        "ttft_p50_ms": p.ttft_p50_ms,
        "ttft_p95_ms": p.ttft_p95_ms,
        "ttft_mean_ms": p.ttft_mean_ms,
        "itl_p50_ms": p.itl_p50_ms,
        "itl_p95_ms": p.itl_p95_ms,
        "tpot_p50_ms": p.tpot_p50_ms,
        "tpot_p95_ms": p.tpot_p95_ms,
        "ttft_target_ms": float(slo.ttft_p95_ms),  # a default the brief left out is its int
        "itl_target_ms": float(slo.itl_p95_ms),
        "itl_metric": slo.itl_metric,
        "ttft_input_cap_tokens": slo.ttft_input_cap_tokens,
        "ttft_ok": p.ttft_p95_ms <= slo.ttft_p95_ms,
        "itl_ok": judged_itl_ms(brief, p) <= slo.itl_p95_ms,
    }


# a judged budget's point: every figure nan but those it works out (its slot count, an int, is always set)
_NOT_WORKED_OUT = {name: math.nan for name, field in LatencyPoint.model_fields.items() if field.annotation is float}


def _basis_text(brief: Brief, p: LatencyPoint) -> str:
    metric = "the gaps between consecutive tokens" if brief.slo.itl_metric is ItlMetric.itl else "each reply's mean gap (TPOT)"
    judges = (
        f"The ITL target judges {metric}."
        if brief.objective.kind is ObjectiveKind.latency
        else f"No latency target judges this design (its deadline does): the gap figures are {metric}, for reference."
    )
    return (
        f"One general-pool replica at {num(p.rate_per_replica_per_s, 'req/s')} with {num(p.running_batch)} sequences running"
        f" (Little's law at the engine's pace); every prompt hits the prefix cache at {pct(p.hit_rate)}, as the simulator runs it."
        f" {judges} A cold cache (a flush, a restart, a failover) is the failure table's prefix-hit-rate drop."
    )


def _queue_model_text(p: LatencyPoint) -> str:
    return (
        "Per general-pool replica (session affinity keeps a conversation on one): Poisson arrivals queue FCFS for the"
        " prefill slot (M/G/1); a prompt holds it for its chunk steps, each costing fixed time + max(compute of its tokens"
        f" and the batch's, the batch's weight and KV reads). Prompt lengths: gamma with the brief's mean and p95 (CV²"
        f" {num(p.service_cv2)}), clipped at max-model-len. Near max-num-seqs a request may first wait for a batch slot (Erlang C: zero with"
        " probability 1 - P(wait), else exponential)."
    )


def _percentile_text() -> str:
    return (
        "TTFT: the quantiles over the covered prompts of their chunk steps + the queue wait (the M/G/1 wait for the"
        " prefill slot and the Erlang C wait for a batch slot: zero with probability 1 - busy, else gamma with their"
        " sum's first two moments) + the fixed request path. ITL: the quantiles of a mixture of decode steps (batch"
        " B ± √B) and steps carrying a prefill chunk (some with a queued prompt packed beside it). TPOT: a reply's mean"
        " gap, the decode gap + its interference; p95 from a gamma spread as an M/G/1 busy period started by the reply's"
        " own steps (over the replies' lengths) and by the batch (B ± √B)."
    )


def batch_slot_words(p: LatencyPoint, max_num_seqs: int) -> str:
    """The clause on the batch-slot wait: how many slots it runs on (max-num-seqs, or the fewer sequences the KV pool
    holds at this context, the rest preempted) and the share of requests that find them all taken."""
    kv_held = f"; the KV pool holds {p.batch_slots:,} sequences at this context, fewer than max-num-seqs {max_num_seqs:,}"
    return f" waits for a batch slot when all {p.batch_slots:,} are taken ({pct(p.admission_busy)} of requests{kv_held if p.batch_slots < max_num_seqs else ''}),"


def _slot_wait_words(p: LatencyPoint) -> str:
    """How the batch slot's mean wait comes about: most requests find a slot free, the rest wait about exponentially."""
    if not (p.admission_busy > 0 and math.isfinite(p.admission_wait_ms)):
        return ""
    given_ms = p.admission_wait_ms / p.admission_busy
    return f" ({pct(p.admission_busy)} of requests find every slot taken: {num(given_ms, 'ms')} mean wait, exponential)"


def _admitted_words(p: LatencyPoint) -> str:
    """Why the prompts that interfere come slower than the offered rate: the prefill slot serves them back to back, or,
    without a steady state, the full batch takes them only as its sequences finish."""
    if p.interfering_rate_per_s >= p.rate_per_replica_per_s:
        return ""
    if math.isinf(p.load_batch):
        return f" (of the {num(p.rate_per_replica_per_s, 'req/s')} offered, what the full batch admits as its sequences finish)"
    return f" (of the {num(p.rate_per_replica_per_s, 'req/s')} offered, what the prefill slot serves)"


def _arithmetic(brief: Brief, p: LatencyPoint, basis: str, mean_mechanisms: tuple[WaterfallStep, ...] = ()) -> dict[str, str]:
    w, lat, slo = brief.workload, brief.latency, brief.slo
    inf_note = " (no steady state: the queue grows without bound)"
    prefill_rate = num(p.uncached_tokens_mean / p.prefill_service_ms * 1e3 if p.prefill_service_ms > 0 else 0, "tok/s")
    return {
        "rate_per_replica_per_s": f"{num(p.rate_per_replica_per_s, 'req/s')} per general-pool replica",
        "running_batch": (
            f"{basis}; capped at max-num-seqs {brief.deployment.max_num_seqs} -> {num(p.running_batch)};"
            f" p95 {num(p.load_batch)} + 1.645 x √{num(p.load_batch)} = {num(p.running_batch_p95)} (capped)"
        ),
        "rho": (
            f"prefill compute {num(p.rate_per_replica_per_s, 'req/s')} x {num(p.prefill_service_ms, 'ms')} = {pct(p.rho_prefill)};"
            f" decode {num(p.rate_per_replica_per_s, 'req/s')} x {num(w.output_tokens_mean)} tokens x {num(p.decode_step_ms, 'ms')}"
            f" / {num(p.running_batch)} = {pct(p.rho_decode)}; total {pct(p.rho)}. Prefill slot busy {pct(p.prefill_slot_busy)}"
            f" ({num(p.rate_per_replica_per_s, 'req/s')} x {num(p.slot_service_ms, 'ms')}, the mean time a prompt's chunk steps take)"
        ),
        "slot_service_ms": (
            f"a mean prompt ({num(p.uncached_tokens_mean, 'tokens')} uncached at {pct(p.hit_rate)} hits) in {num(p.chunks_mean)} step(s):"
            f" {num(p.step_fixed_ms, 'ms')} fixed + max(its tokens and the batch's {num(p.running_batch)} decode tokens / {prefill_rate},"
            f" {num(p.step_memory_ms, 'ms')} of weight and KV reads) per step, averaged over prompt lengths (gamma, CV² {num(p.service_cv2)},"
            f" clipped at max-model-len {brief.deployment.max_model_len}) = {num(p.slot_service_ms, 'ms')}"
        ),
        "queue_wait_ms": (
            f"W = {num(p.rate_per_replica_per_s)} x E[S²] / (2 x (1 - {pct(p.prefill_slot_busy)}))"
            f" = {num(p.prompt_wait_ms, 'ms')} (S: the prompt's chunk steps, mean {num(p.slot_service_ms, 'ms')});"
            f" + slot wait {num(p.admission_wait_ms, 'ms')}{_slot_wait_words(p)} + {num(p.decode_step_ms, 'ms')} / 2 for the step"
            f" in progress = {num(p.queue_wait_ms, 'ms')} on average" + ("" if math.isfinite(p.queue_wait_ms) else inf_note)
        ),
        "prefill_stage_ms": (
            f"a prompt at the cap: {num(min(slo.ttft_input_cap_tokens, w.input_tokens_p95), 'tokens')} x (1 - {pct(p.hit_rate)} hits) = {num(p.cap_uncached_tokens, 'tokens')};"
            f" {num(p.chunks)} chunk(s) of up to {num(p.chunk_tokens)}: {num(p.chunks)} x {num(p.step_fixed_ms, 'ms')} fixed"
            f" + max(({num(p.cap_uncached_tokens)} + {num(p.chunks)} x {num(p.running_batch)} decode tokens) / {prefill_rate},"
            f" {num(p.chunks)} x {num(p.step_memory_ms, 'ms')} reads) = {num(p.prefill_stage_ms, 'ms')};"
            f" over the covered prompts the mean is {num(p.prefill_covered_mean_ms, 'ms')}"
        ),
        "ttft_mean_ms": (
            f"{num(lat.network_ms)} + {num(lat.gateway_ms)} + {num(lat.tokenization_ms)} + queue {num(p.queue_wait_ms)}"
            f" + prefill {num(p.prefill_covered_mean_ms)}{''.join(f' + {m.component} {num(m.ms)}' for m in mean_mechanisms)}"
            f" + {num(lat.first_sample_ms)} + {num(lat.first_write_ms)} = {num(p.ttft_mean_ms, 'ms')}"
        ),
        "ttft_p95_ms": (
            f"95th percentile over prompts up to {num(slo.ttft_input_cap_tokens, 'tokens')} of (queue wait + the prompt's chunk steps),"
            " each wait taken as its distribution, not its mean"
            f" + {num(p.fixed_ms, 'ms')} fixed = {num(p.ttft_p95_ms, 'ms')} vs target {num(slo.ttft_p95_ms, 'ms')}"
        ),
        "itl_p50_ms": (
            f"{pct(1 - p.mixed_step_share)} of token gaps are pure decode steps ({num(p.decode_step_ms, 'ms')} + {num(lat.scheduler_ms, 'ms')}"
            f" scheduler at batch {num(p.running_batch)}), {pct(p.mixed_step_share)} carry a prefill chunk (mean {num(p.mixed_step_ms, 'ms')},"
            " some with a queued prompt packed into the room the chunk leaves):"
            f" median gap {num(p.itl_p50_ms, 'ms')}"
        ),
        "itl_p95_ms": (
            f"95th percentile of that mixture = {num(p.itl_p95_ms, 'ms')} vs target {num(slo.itl_p95_ms, 'ms')}"
            + ("" if slo.itl_metric is ItlMetric.itl else " (the brief judges TPOT)")
        ),
        "tpot_p50_ms": (
            f"({num(p.decode_step_ms, 'ms')} step + {num(lat.scheduler_ms, 'ms')}) / (1 - {pct(p.rho_interference)} interference:"
            f" {num(p.interfering_rate_per_s, 'req/s')}{_admitted_words(p)} x ({num(p.slot_service_ms, 'ms')} a prompt's steps"
            f" - {num(p.chunks_mean)} x {num(p.decode_step_ms + lat.scheduler_ms, 'ms')} of decode they also do)) = {num(p.tpot_p50_ms, 'ms')}"
        ),
        "tpot_p95_ms": (
            f"{num(p.tpot_p50_ms, 'ms')} + the p95 excesses, in quadrature, of a reply's interference (mean"
            f" {num(p.itl_interference_ms, 'ms')}: a gamma spread as a busy period's, prompts arriving during a reply lengthen it"
            f" and so let more in: variance over (1 - {pct(p.rho_interference)})³, most for short replies) and of the batch"
            f" ({num(p.decode_step_p95_ms, 'ms')} step at its p95 {num(p.running_batch_p95)}, stretched as the mean gap) = {num(p.tpot_p95_ms, 'ms')}"
        ),
        "longest_step_ms": (
            f"one engine step at the p95 batch carrying a full prefill chunk: {num(p.step_fixed_ms, 'ms')} fixed + the larger of the chunk's"
            f" and the batch's compute and the batch's reads = {num(p.longest_step_ms, 'ms')}"
        ),
    }
