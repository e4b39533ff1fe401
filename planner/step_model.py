"""One engine step's time, kernel by kernel: the physics the operating point, the SLO model and the simulator share.

A step runs a batch of tokens through every layer: decode tokens (one per running sequence) and prompt chunks.
Its time is the sum of what runs one after another on the GPU (kernels do not overlap within a step):

    GEMMs       max(weights read / achieved bandwidth, FLOPs of the step's tokens / achieved compute)
                (QKV, output and MLP or expert projections, and the LM head for each sequence that samples;
                small batches read the weights and wait on HBM, large ones wait on the tensor cores)
    attention   decode: every running sequence's KV read at the attention kernel's achieved bandwidth;
                prefill: the chunk's (query, key) pairs, 4 FLOPs per pair, head dim and layer, at the GEMMs'
                compute efficiency, plus one read of the context's KV
    all-reduce  with TP > 1, two per layer over the step's activations: the engine's faster algorithm at that
                size, one-shot (latency + (TP-1) x bytes / link) or two-shot (2 x latency + 2 (TP-1)/TP x bytes
                / link), the link being the GPU's NVLink / Infinity Fabric bandwidth x its achieved fraction
    all-to-all  with EP > 1, a dispatch and a combine per MoE layer: a latency each, and each token's top-k copies
                (FP8 out, BF16 back) over NVLink to the node's GPUs and over the network to other nodes'
    pipeline    with PP > 1, each stage's activations sent to the next over the network: a latency and the bytes
    LoRA        with adapters, the batched kernels (Punica's SGMV, vLLM's punica wrapper) after the base GEMMs: the
                distinct adapters of the step's sequences read once each (n slots drawn evenly: n (1 - (1 - 1/n)^seqs)),
                the adapters' FLOPs per token, and a shrink and an expand kernel per adapted projection and layer
    fixed       scheduling, launch and sampling set-up, per step; plus a cost per sequence in the step
                (sampling, detokenizing, bookkeeping)

Left out: GEMM tile quantization (a batch of 65 costs like 128 on some kernels), the embedding gather (the whole
table is counted as read, as the seeds count it: ~1.5% of a 70B model's bytes, ~6% of an 8B's), norms and activations (memory-bound, a few % of a step), pipeline bubbles (PP: the stages are taken as balanced, with a micro-batch in each), CUDA-graph padding, and any
overlap of communication with compute. The seeds' simpler model is this one with their constants: a flat TP
factor and a real-kernel factor on the memory reads instead of the bytes moved (`allreduce_bytes_moved = false`),
no per-sequence cost; the 200-QPS seed takes the whole step as one roofline (`step_roofline = true`).

`step_time_s` is written in the subset of Python numba compiles, over a flat array of constants, so the
simulator's compiled loop and the planner's closed forms call the same formula.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cached_property

import numpy as np
import numpy.typing as npt
from pydantic import ConfigDict

from planner.cached import CachingModel

__all__ = [
    "COMM_PART",
    "COMPUTE_PART",
    "CONSTANTS",
    "GEMM_S_PER_TOKEN",
    "LM_HEAD_S_PER_SEQ",
    "LORA_PARTS",
    "SPEC_CONSTANTS",
    "WEIGHTS_PART",
    "StepConstants",
    "chunk_pairs",
    "comm_part_s",
    "communicates",
    "compute_part_s",
    "decode_step_function",
    "spec_constants",
    "speculative_step_time_s",
    "speculative_step_times_s",
    "step_time_s",
    "step_times_s",
    "tokens_per_step",
    "weights_part_s",
]

Constants = tuple[float, ...]  # StepConstants.values(): a tuple, which plain Python indexes fast and numba takes as is
StepFn = Callable[[Constants, float, float, float, float], float]
FloatArray = npt.NDArray[np.float64]

# positions in StepConstants.values()
WEIGHTS_S, EXPERTS_S, EXPERT_MISS, GEMM_S_PER_TOKEN, LM_HEAD_S_PER_SEQ = 0, 1, 2, 3, 4
KV_S_PER_TOKEN, ATTN_S_PER_PAIR = 5, 6
ALLREDUCES, AR_LATENCY_S, AR_ONE_SHOT_S_PER_TOKEN, AR_TWO_SHOT_S_PER_TOKEN = 7, 8, 9, 10
OVERHEAD_S, PER_SEQ_S, ROOFLINE = 11, 12, 13
A2A_LATENCY_S, A2A_S_PER_TOKEN, PP_LATENCY_S, PP_S_PER_TOKEN = 14, 15, 16, 17
LORA_SLOTS, LORA_ADAPTER_S, LORA_S_PER_TOKEN, LORA_KERNELS_S = 18, 19, 20, 21
CONSTANTS = 22  # how many


LORA_PARTS = (LORA_SLOTS, LORA_ADAPTER_S, LORA_S_PER_TOKEN, LORA_KERNELS_S)  # the batched-LoRA term, for masked()
# The parts of a step the planner's closed forms take apart (each is step_time_s with every other constant zeroed,
# worked out by the *_part_s functions below): the GEMMs' weight reads (with a roofline step's KV reads), the GEMMs'
# compute, and the communication (all-reduces, expert parallelism's all-to-alls, pipeline stages' sends).
WEIGHTS_PART = (WEIGHTS_S, EXPERTS_S, EXPERT_MISS, KV_S_PER_TOKEN, ROOFLINE)
COMPUTE_PART = (GEMM_S_PER_TOKEN, LM_HEAD_S_PER_SEQ)
COMM_PART = (
    ALLREDUCES,
    AR_LATENCY_S,
    AR_ONE_SHOT_S_PER_TOKEN,
    AR_TWO_SHOT_S_PER_TOKEN,
    A2A_LATENCY_S,
    A2A_S_PER_TOKEN,
    PP_LATENCY_S,
    PP_S_PER_TOKEN,
)


class StepConstants(CachingModel):
    """A replica's step-time constants (s): each the time of one unit of work at the achieved rate."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    weights_s: float  # reading the weights every step reads (dense: all of them); memory reads carry the seeds' factors
    experts_s: float  # reading every routed expert once (0 for a dense model)
    expert_miss: float  # chance one token leaves a given expert untouched: 1 - top-k / experts
    gemm_s_per_token: float  # a token's GEMM FLOPs (LM head excluded) at the achieved compute
    lm_head_s_per_seq: float  # the LM head's FLOPs for one sampled token
    kv_s_per_token: float  # reading one token's KV (all layers) at the attention kernel's achieved bandwidth
    attn_s_per_pair: float  # one (query, key) pair of prefill attention, all layers and heads
    allreduces: float  # all-reduces per step (2 per layer with TP > 1)
    allreduce_latency_s: float
    one_shot_s_per_token: float  # one token's activations, (TP-1) times over the link
    two_shot_s_per_token: float  # ... 2 (TP-1)/TP times
    overhead_s: float  # fixed per step
    per_sequence_s: float
    roofline: float  # 1: the whole step is one roofline, max(all FLOPs, all bytes): the 200-QPS seed's model
    a2a_latency_s: float = 0.0  # expert parallelism: the latencies of a step's all-to-alls (dispatch and combine, every MoE layer)
    a2a_s_per_token: float = 0.0  # ... one token's routed copies out and back, over NVLink and the network
    pp_latency_s: float = 0.0  # pipeline parallelism: the latencies of the sends between stages, per step
    pp_s_per_token: float = 0.0  # ... one token's activations over the network between stages
    lora_slots: float = 0.0  # multi-LoRA: adapters resident on the GPU that a step's sequences draw from (0: no LoRA)
    lora_adapter_s: float = 0.0  # ... reading one adapter's A and B matrices (all layers) at the achieved bandwidth
    lora_s_per_token: float = 0.0  # ... one token's adapter FLOPs (2 x rank x widths x layers) at the achieved compute
    lora_kernels_s: float = 0.0  # ... the segmented kernels' floor per step: shrink + expand, every adapted projection

    @classmethod
    def only(cls, **costs: float) -> StepConstants:
        """Constants with only the named costs: every other is zero (a step that reads no expert misses all of them)."""
        zero = dict.fromkeys(cls.model_fields, 0.0) | {"expert_miss": 1.0}
        return cls(**(zero | costs))

    def values(self) -> Constants:
        """The constants as the flat tuple `step_time_s` reads (computed once: the model is frozen)."""
        return self._values

    @cached_property
    def _values(self) -> Constants:
        values = tuple([float(getattr(self, name)) for name in type(self).model_fields])  # a list: a generator resumes once an item
        assert len(values) == CONSTANTS
        return values

    def masked(self, keep: tuple[int, ...]) -> Constants:
        """The constants with all but the positions `keep` zeroed: one part of a step, through the same formula."""
        masked = self._masked.get(keep)  # a tuple's hash is not kept: look it up once
        if masked is None:
            masked = self._masked[keep] = tuple([v if i in keep else 0.0 for i, v in enumerate(self.values())])
        return masked

    @cached_property
    def _masked(self) -> dict[tuple[int, ...], Constants]:
        return {}


def step_time_s(k: Constants, tokens: float, seqs: float, kv_tokens: float, pairs: float) -> float:
    """One step carrying `tokens` (decode + prompt) for `seqs` sequences, reading `kv_tokens` tokens of KV and
    computing `pairs` (query, key) pairs of prefill attention. One flat function of floats: numba compiles it as it
    is for the simulator's loop, and the planner's closed forms call it in plain Python."""
    weights = k[WEIGHTS_S]
    if k[EXPERTS_S] > 0.0:  # a MoE step reads only the experts its tokens reach
        weights += k[EXPERTS_S] * (1.0 - k[EXPERT_MISS] ** max(tokens, 1.0))  # at least one token's experts
    reads = kv_tokens * k[KV_S_PER_TOKEN]
    if k[ROOFLINE] > 0.0:  # the KV reads overlap the compute, as the weights do
        weights += reads
        reads = 0.0
    gemm = max(weights, tokens * k[GEMM_S_PER_TOKEN] + seqs * k[LM_HEAD_S_PER_SEQ])
    attention = reads + pairs * k[ATTN_S_PER_PAIR]
    comm = 0.0
    if k[ALLREDUCES] > 0.0:  # the engine's faster algorithm at this size
        one_shot = k[AR_LATENCY_S] + tokens * k[AR_ONE_SHOT_S_PER_TOKEN]
        two_shot = 2.0 * k[AR_LATENCY_S] + tokens * k[AR_TWO_SHOT_S_PER_TOKEN]
        comm = k[ALLREDUCES] * min(one_shot, two_shot)
    comm += k[A2A_LATENCY_S] + tokens * k[A2A_S_PER_TOKEN]  # expert parallelism's all-to-alls (0 without EP)
    comm += k[PP_LATENCY_S] + tokens * k[PP_S_PER_TOKEN]  # pipeline stages' sends (0 without PP)
    lora = 0.0
    if k[LORA_SLOTS] > 0.0:  # the batched-LoRA kernels run after the base GEMMs, on the distinct adapters of the step
        distinct = k[LORA_SLOTS] * (1.0 - (1.0 - 1.0 / k[LORA_SLOTS]) ** seqs) if k[LORA_SLOTS] > 1.0 else min(seqs, 1.0)
        lora = distinct * k[LORA_ADAPTER_S] + tokens * k[LORA_S_PER_TOKEN] + k[LORA_KERNELS_S]
    return gemm + attention + comm + lora + k[OVERHEAD_S] + seqs * k[PER_SEQ_S]


def decode_step_function(k: Constants, context_tokens: float) -> Callable[[float], float] | None:
    """A replica's pure decode step at one context as a function of its batch b (finite), bitwise step_time_s(k, b, b,
    b x context_tokens, 0.0), for a step without expert reads, all-to-alls, stage sends or LoRA (None otherwise: the
    caller calls step_time_s). The constants are read once and the terms those families would add, exact zeros, are
    left out (x + 0.0 is x): the GEMMs' roofline, the KV reads, the all-reduces (zero without TP) and the fixed and
    per-sequence costs written out, ~half step_time_s' time a call. A caller that steps one replica at one context
    many times (a root solve on the batch: ~200 steps a plan in a disaggregated decode pool) builds it once."""
    if k[EXPERTS_S] > 0.0 or k[LORA_SLOTS] > 0.0 or k[A2A_LATENCY_S] or k[A2A_S_PER_TOKEN] or k[PP_LATENCY_S] or k[PP_S_PER_TOKEN]:
        return None
    weights_s, kv_s, overhead_s, per_seq_s = k[WEIGHTS_S], k[KV_S_PER_TOKEN], k[OVERHEAD_S], k[PER_SEQ_S]
    gemm_s, head_s, roofline = k[GEMM_S_PER_TOKEN], k[LM_HEAD_S_PER_SEQ], k[ROOFLINE] > 0.0
    allreduces, latency_s, one_shot_s, two_shot_s = k[ALLREDUCES], k[AR_LATENCY_S], k[AR_ONE_SHOT_S_PER_TOKEN], k[AR_TWO_SHOT_S_PER_TOKEN]
    communicates = allreduces > 0.0

    def decode_step(b: float) -> float:
        reads, compute = b * context_tokens * kv_s, b * gemm_s + b * head_s
        # a roofline step's KV reads join the weights' side of its max
        step = max(weights_s + reads, compute) if roofline else max(weights_s, compute) + reads
        if communicates:  # the engine's faster all-reduce algorithm at this size
            step += allreduces * min(latency_s + b * one_shot_s, 2.0 * latency_s + b * two_shot_s)
        return step + overhead_s + b * per_seq_s

    return decode_step


def weights_part_s(k: Constants, tokens: float, kv_tokens: float) -> float:
    """step_time_s(k with only WEIGHTS_PART kept, tokens, 0, kv_tokens, 0), its terms written out (the others add exact
    zeros): the weights the GEMMs read, and the KV reads, in the weights' max on a roofline step."""
    weights = k[WEIGHTS_S]
    if k[EXPERTS_S] > 0.0:
        weights += k[EXPERTS_S] * (1.0 - k[EXPERT_MISS] ** max(tokens, 1.0))
    reads = kv_tokens * k[KV_S_PER_TOKEN]
    if k[ROOFLINE] > 0.0:
        weights += reads
        reads = 0.0
    return max(weights, 0.0) + reads


def compute_part_s(k: Constants, tokens: float, seqs: float) -> float:
    """step_time_s(k with only COMPUTE_PART kept, tokens, seqs, 0, 0): the GEMMs' FLOPs."""
    return max(0.0, tokens * k[GEMM_S_PER_TOKEN] + seqs * k[LM_HEAD_S_PER_SEQ])


def comm_part_s(k: Constants, tokens: float) -> float:
    """step_time_s(k with only COMM_PART kept, tokens, 0, 0, 0): the all-reduces, all-to-alls and stage sends."""
    comm = 0.0
    if k[ALLREDUCES] > 0.0:
        one_shot = k[AR_LATENCY_S] + tokens * k[AR_ONE_SHOT_S_PER_TOKEN]
        two_shot = 2.0 * k[AR_LATENCY_S] + tokens * k[AR_TWO_SHOT_S_PER_TOKEN]
        comm = k[ALLREDUCES] * min(one_shot, two_shot)
    comm += k[A2A_LATENCY_S] + tokens * k[A2A_S_PER_TOKEN]
    comm += k[PP_LATENCY_S] + tokens * k[PP_S_PER_TOKEN]
    return comm


def communicates(k: Constants) -> bool:
    """Whether comm_part_s is anything but exactly 0 at some size: all-reduces that cost time (a count of them with no
    latency and no bytes, as where a seed's flat TP factor stands in for them, costs 0), all-to-alls or stage sends."""
    all_reduces = k[ALLREDUCES] > 0.0 and (k[AR_LATENCY_S] or k[AR_ONE_SHOT_S_PER_TOKEN] or k[AR_TWO_SHOT_S_PER_TOKEN])
    return bool(all_reduces or k[A2A_LATENCY_S] or k[A2A_S_PER_TOKEN] or k[PP_LATENCY_S] or k[PP_S_PER_TOKEN])


def step_times_s(k: Constants, tokens: FloatArray, seqs: FloatArray, kv_tokens: FloatArray, pairs: float) -> FloatArray:
    """step_time_s over arrays (one step per element), term for term the same arithmetic: where the planner costs a
    grid of batches at once (the ITL quantiles' decode steps), one pass of numpy instead of a call per batch. A term
    whose constants are all zero is left out rather than added as zeros (x + 0 is x: the same sums, fewer passes)."""
    weights: float | FloatArray = k[WEIGHTS_S]
    if k[EXPERTS_S] > 0.0:
        weights = weights + k[EXPERTS_S] * (1.0 - k[EXPERT_MISS] ** np.maximum(tokens, 1.0))
    reads = kv_tokens * k[KV_S_PER_TOKEN]
    if k[ROOFLINE] > 0.0:
        weights = weights + reads
        reads = np.zeros(tokens.shape)
    step = np.maximum(weights, tokens * k[GEMM_S_PER_TOKEN] + seqs * k[LM_HEAD_S_PER_SEQ])
    step = step + (reads + pairs * k[ATTN_S_PER_PAIR])  # the GEMMs and the attention
    comm: float | FloatArray = 0.0
    if k[ALLREDUCES] > 0.0:
        one_shot = k[AR_LATENCY_S] + tokens * k[AR_ONE_SHOT_S_PER_TOKEN]
        two_shot = 2.0 * k[AR_LATENCY_S] + tokens * k[AR_TWO_SHOT_S_PER_TOKEN]
        comm = k[ALLREDUCES] * np.minimum(one_shot, two_shot)
    if k[A2A_LATENCY_S] != 0.0 or k[A2A_S_PER_TOKEN] != 0.0:
        comm = comm + (k[A2A_LATENCY_S] + tokens * k[A2A_S_PER_TOKEN])
    if k[PP_LATENCY_S] != 0.0 or k[PP_S_PER_TOKEN] != 0.0:
        comm = comm + (k[PP_LATENCY_S] + tokens * k[PP_S_PER_TOKEN])
    if not isinstance(comm, float):
        step = step + comm
    if k[LORA_SLOTS] > 0.0:
        distinct = k[LORA_SLOTS] * (1.0 - (1.0 - 1.0 / k[LORA_SLOTS]) ** seqs) if k[LORA_SLOTS] > 1.0 else np.minimum(seqs, 1.0)
        step = step + (distinct * k[LORA_ADAPTER_S] + tokens * k[LORA_S_PER_TOKEN] + k[LORA_KERNELS_S])
    return np.asarray(step + k[OVERHEAD_S] + seqs * k[PER_SEQ_S])


def chunk_pairs(done: float, take: float) -> float:
    """(query, key) pairs of a prompt chunk: `take` new tokens after `done` cached or computed ones, causal."""
    return take * done + take * (take + 1.0) / 2.0


# Speculative decoding appends to the target's constants: tokens each sequence verifies (k + 1), sequential draft
# passes (k), then the draft's own constants (an EAGLE head or a draft model, through the same formula).
SPEC_TOKENS, DRAFT_PASSES, DRAFT = CONSTANTS, CONSTANTS + 1, CONSTANTS + 2
SPEC_CONSTANTS = 2 * CONSTANTS + 2  # how many


def spec_constants(target: StepConstants, draft: StepConstants, speculative_tokens: int) -> Constants:
    """The flat constants `speculative_step_time_s` reads: the target's, k + 1 and k, the draft's."""
    return (*target.values(), float(speculative_tokens + 1), float(speculative_tokens), *draft.values())


def speculative_step(step: StepFn) -> StepFn:
    """`speculative_step_time_s` over a given `step_time_s` (the plain function, or numba's compiled one, which a
    compiled caller needs)."""

    def speculative_step_time_s(k: Constants, tokens: float, seqs: float, kv_tokens: float, pairs: float) -> float:
        """One speculative engine step: the target verifies k + 1 tokens for every sequence in the step (its weights
        read once, k + 1 times the GEMM FLOPs, the LM head and sampling at every position; each sequence's KV read
        once, as a multi-query attention kernel reads it for all its queries), after k draft passes over the same
        sequences (each one draft token a sequence, reading the draft's weights and its own KV). Sequences still
        prefilling are counted as verifying too (at most a few a step). Same signature as `step_time_s`, so the
        simulator's loop takes either."""
        extra = (k[SPEC_TOKENS] - 1.0) * seqs
        verify = step(k[:CONSTANTS], tokens + extra, seqs + extra, kv_tokens, pairs)
        draft = k[DRAFT_PASSES] * step(k[DRAFT:], seqs, seqs, kv_tokens, 0.0)
        return verify + draft

    return speculative_step_time_s


speculative_step_time_s = speculative_step(step_time_s)
speculative_step_times_s = speculative_step(step_times_s)  # type: ignore[arg-type]  # the same over arrays


def tokens_per_step(acceptance_rate: float, speculative_tokens: int) -> float:
    """Expected tokens a sequence emits per verification step: the accepted run of drafts plus the target's own
    token, (1 - a^(k+1)) / (1 - a) (Leviathan et al. 2023, eq. 1)."""
    a, n = acceptance_rate, speculative_tokens + 1
    return float(n) if a >= 1.0 else (1.0 - a**n) / (1.0 - a)
