"""Speculative decoding: the decode step and ITL it gives at each batch, and the batch at which to turn it off.

A speculative step drafts k tokens for every running sequence (k passes of an EAGLE head or a draft model) and
verifies them in one target step over k + 1 tokens a sequence: the target's weights are read once, its GEMM FLOPs,
LM head and sampling run k + 1 times, each sequence's KV is read once (planner.step_model.speculative_step_time_s).
A sequence emits (1 - a^(k+1)) / (1 - a) tokens a step in expectation (a: the chance each draft token is accepted).

At a small batch the step reads the weights and waits on HBM: verifying k + 1 tokens costs little more than one,
so a sequence's time per token falls by nearly the tokens a step emits. As the batch grows the step turns
compute-bound, k + 1 tokens cost k + 1 times one, and the k draft passes add on top: past a crossover batch the
time per token is longer than without speculation. vLLM's `disable_by_batch_size` turns it off above a batch.
"""

from __future__ import annotations

import json
import math
from typing import NamedTuple

from pydantic import BaseModel, ConfigDict

from planner.brief import Brief, ModelChoice, SpecMethod
from planner.catalog import ModelSpec, model_spec
from planner.errors import BriefError
from planner.fmt import num, pct
from planner.memo import BoundedMemo
from planner.numerics import root_in_bracket
from planner.replica import ReplicaShape, replica_inputs, shape_of
from planner.slo import SloBudget
from planner.step_model import StepConstants, spec_constants, speculative_step_time_s, step_time_s, tokens_per_step
from planner.trusted import trusted
from planner.verdict import Problem

__all__ = [
    "EAGLE_HEADS",
    "SpecPoint",
    "SpecSwitch",
    "SpeculativeAnalysis",
    "apply_speculation",
    "draft_constants",
    "spec_switch",
    "speculative_analysis",
    "speculative_config_json",
    "speculative_summary",
]

# Published EAGLE heads (Hugging Face ids) for catalog models; vLLM's docs use the 8B one in their example.
EAGLE_HEADS = {
    "llama-3-70b": "yuhuili/EAGLE-LLaMA3-Instruct-70B",
    "llama-3.1-8b": "yuhuili/EAGLE-LLaMA3.1-Instruct-8B",
}
# Models that ship their own multi-token-prediction layer (DeepSeek-V3/R1's one MTP module, an EAGLE-like head on the
# target's hidden states): vLLM drafts with it as method "mtp", no separate head to name.
NATIVE_MTP = frozenset({"deepseek-v3", "deepseek-r1"})

DRAFT_PASS_OVERHEAD_S = 0.2e-3  # launching one draft forward pass (CUDA-graphed, a few kernels): an assumption, stated
_BATCHES = (1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096)  # the gain-vs-batch table's rows


class _Model(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class SpecPoint(_Model):
    """Speculation at one batch: the step with and without it, and the time per token of each."""

    batch: int
    plain_step_ms: float  # one decode step, scheduler included: also the time per token without speculation
    spec_step_ms: float  # one speculative step (k drafts + the k + 1 verification), scheduler included
    spec_ms_per_token: float  # spec step / expected tokens a step
    gain: float  # plain time per token / speculative time per token (> 1: speculation pays)


class SpeculativeAnalysis(_Model):
    problems: tuple[Problem, ...]  # a missing EAGLE head, a draft model with another vocabulary
    method: SpecMethod
    draft: str  # what proposes: the EAGLE head's id or the draft model's name
    num_speculative_tokens: int
    acceptance_rate: float
    tokens_per_step: float
    crossover_batch: float  # the batch at which the gain falls to 1 (inf: it never does up to max-num-seqs x 8)
    off_above_batch: int  # the batch above which speculation is off: the brief's, else the crossover's floor
    off_above_batch_per_engine: int  # disable_by_batch_size: each DP-attention rank is an engine with its share of the batch
    operating_batch: float  # the running batch at the design's load
    on_at_load: bool
    gain_at_load: float
    gain_at_batch_1: float
    gain_at_max_batch: float
    points: tuple[SpecPoint, ...]
    config_json: str  # the --speculative-config value
    arithmetic: dict[str, str]


def draft_constants(brief: Brief, shape: ReplicaShape) -> tuple[StepConstants, str]:
    """The draft's step constants and its name. EAGLE: one decoder layer of the target (its share of the per-token
    GEMMs, KV and all-reduces) plus the target's LM head read and computed; a draft model: its own replica at the
    target's TP and precision. Either way a draft pass costs its launch, not the engine's whole step overhead."""
    spec = brief.speculative
    if spec.method is SpecMethod.draft and spec.draft_model:
        try:
            draft_shape = shape_of(brief.with_changes({"model.name": spec.draft_model, "model.custom": None}))
        except BriefError as exc:  # an unknown key, or a TP the draft's heads do not divide
            raise BriefError("speculative.draft_model", str(exc)) from None
        return draft_shape.step.model_copy(
            update={"overhead_s": DRAFT_PASS_OVERHEAD_S, "per_sequence_s": 0.0, "lora_slots": 0.0}
        ), draft_shape.model.name
    if shape.model.key in NATIVE_MTP:
        return _eagle_head(shape.step, shape.model), f"{shape.model.name}'s own MTP layer"
    return _eagle_head(shape.step, shape.model), EAGLE_HEADS.get(shape.model.key, f"an EAGLE head for {shape.model.name}")


def _eagle_head(target: StepConstants, model: ModelSpec) -> StepConstants:
    layers = float(model.layers)
    head = float(model.vocab_size * model.hidden_size)
    body = model.active_params - (head if model.tied_embeddings else 2 * head)
    read_share = (body / layers + head) / model.params  # one layer and the LM head, of the weights a step reads
    return target.model_copy(
        update={
            "weights_s": target.weights_s * read_share,
            "experts_s": 0.0,
            "gemm_s_per_token": target.gemm_s_per_token / layers,
            "kv_s_per_token": target.kv_s_per_token / layers,
            "allreduces": target.allreduces / layers,
            "overhead_s": DRAFT_PASS_OVERHEAD_S,
            "per_sequence_s": 0.0,
            "lora_slots": 0.0,  # the draft runs without the adapters
        }
    )


def _problems(brief: Brief, shape: ReplicaShape) -> tuple[Problem, ...]:
    spec = brief.speculative
    if spec.method is SpecMethod.eagle and shape.model.key not in EAGLE_HEADS and shape.model.key not in NATIVE_MTP:
        return (
            Problem(
                field="speculative.method",
                problem=f"no published EAGLE head for {shape.model.name} in the catalog: the command names one to train or find",
                change="train an EAGLE head for the model, or set method 'draft' with a small model of the same tokenizer",
            ),
        )
    if spec.method is SpecMethod.draft and spec.draft_model:
        draft = model_spec(ModelChoice(name=spec.draft_model))
        if draft.vocab_size and shape.model.vocab_size and draft.vocab_size != shape.model.vocab_size:
            return (
                Problem(
                    field="speculative.draft_model",
                    problem=f"{draft.name}'s vocabulary ({draft.vocab_size:,}) is not {shape.model.name}'s ({shape.model.vocab_size:,}): the target cannot verify its tokens",
                    change="pick a draft model of the same family and tokenizer",
                ),
            )
    return ()


def per_engine_batch(shape: ReplicaShape, replica_batch: int) -> int:
    """A replica's batch threshold as one engine sees it: with DP attention each of the attention groups is an engine
    (its own scheduler and max-num-seqs) running its share of the replica's sequences."""
    return max(replica_batch // shape.attention_groups, 1)


def speculative_config_json(brief: Brief, shape: ReplicaShape, off_above_batch: int) -> str:
    """The value of vLLM's --speculative-config."""
    spec = brief.speculative
    config: dict[str, object] = {"method": "eagle"} if spec.method is SpecMethod.eagle else {"method": "draft_model"}
    if spec.method is SpecMethod.eagle and shape.model.key in NATIVE_MTP:
        config = {"method": "mtp"}  # the model's own MTP layer drafts
    elif spec.method is SpecMethod.eagle:
        config["model"] = EAGLE_HEADS.get(shape.model.key, f"<EAGLE head for {shape.model.name}>")
    else:
        from planner.config import HF_IDS  # the Hugging Face ids the engine command uses

        config["model"] = HF_IDS.get(spec.draft_model or "", spec.draft_model)
    config["num_speculative_tokens"] = spec.num_speculative_tokens
    config["disable_by_batch_size"] = per_engine_batch(shape, off_above_batch)
    return json.dumps(config, separators=(", ", ": "))  # spaced: the printed command wraps between keys


class SpecSwitch(_Model):
    """What the latency model needs to run speculation by batch: the speculative step's constants, the tokens a step
    emits a sequence, and the batch above which the engine turns it off (vLLM disable_by_batch_size)."""

    constants: tuple[float, ...]
    tokens_per_step: float
    off_above_batch: float


_SWITCHES: BoundedMemo[tuple[object, ...], tuple[SpecSwitch | None]] = BoundedMemo(256)  # emptied with the planner's caches


def spec_switch(brief: Brief, shape: ReplicaShape) -> SpecSwitch | None:
    """Speculation as the engine runs it (None when off, or when the draft's tokens cannot be verified)."""
    if not brief.speculative.enabled:
        return None
    key = _speculation_key(brief, brief.running_context_tokens)
    kept = _SWITCHES.get(key)
    if kept is None:
        kept = (_switch(brief, shape),)  # in a tuple: None is a switch too (the draft's tokens cannot be verified)
        _SWITCHES.keep(key, kept)
    return kept[0]


def _switch(brief: Brief, shape: ReplicaShape) -> SpecSwitch | None:
    if any(p.field == "speculative.draft_model" for p in _problems(brief, shape)):
        return None
    table = _spec_table(brief, shape, brief.running_context_tokens)
    return trusted(SpecSwitch, constants=table.constants, tokens_per_step=table.expected, off_above_batch=float(table.off))


def _crossover(brief: Brief, shape: ReplicaShape, constants: tuple[float, ...], expected: float, context_tokens: float) -> float:
    """The batch at which speculation's gain per token falls to 1 (inf: never, up to 8 x max-num-seqs)."""

    def gain(batch: float) -> float:
        plain, verify = _steps_at(brief, shape, constants, context_tokens, batch)
        return plain * expected / verify

    top = 8.0 * brief.deployment.max_num_seqs
    if gain(top) >= 1:
        return math.inf
    return 0.0 if gain(1.0) <= 1 else root_in_bracket(lambda b: gain(b) - 1.0, 1.0, top, 0.01)


def _off_batch(brief: Brief, crossover: float) -> int:
    spec = brief.speculative
    top = 8 * brief.deployment.max_num_seqs
    return spec.off_above_batch if spec.off_above_batch is not None else max(int(crossover) if math.isfinite(crossover) else top, 0)


class _SpecTable(NamedTuple):
    """What speculative_analysis works out of the replica and the brief's speculation, whatever the load: the draft, the
    speculative step's constants, the crossover, the gain-vs-batch table and the words on them."""

    draft: str
    constants: tuple[float, ...]  # the speculative step's (spec_constants)
    expected: float  # tokens a sequence emits a step
    crossover: float
    off: int
    points: tuple[SpecPoint, ...]
    gain_at_batch_1: float
    gain_at_max_batch: float
    config_json: str
    arithmetic: dict[str, str]  # all but the words at the load


def _spec_table(brief: Brief, shape: ReplicaShape, context_tokens: float) -> _SpecTable:
    """_SpecTable of this replica (not how many) and brief, kept by what it reads: every core of a plan (its own, the
    one-node-lost re-plan's...) runs speculation on the same replica at its own batch."""
    key = _speculation_key(brief, context_tokens)
    table = _TABLES.get(key)
    if table is None:
        table = _spec_table_of(brief, shape, context_tokens)
        _TABLES.keep(key, table)
    return table


_TABLES: BoundedMemo[tuple[object, ...], _SpecTable] = BoundedMemo(64)  # emptied with the planner's caches


def _speculation_key(brief: Brief, context_tokens: float) -> tuple[object, ...]:
    """What speculation on a replica reads: the brief's speculation and scheduler, the context a step reads, and what
    the replica and a draft model's replica are formed from (replica_inputs: not the fleet's size, so a re-plan that
    only moves nodes finds it)."""
    return (brief.speculative, brief.latency.scheduler_ms, context_tokens, *replica_inputs(brief))


def _spec_table_of(brief: Brief, shape: ReplicaShape, context_tokens: float) -> _SpecTable:
    spec = brief.speculative
    k = spec.num_speculative_tokens
    draft, draft_name = draft_constants(brief, shape)
    constants = spec_constants(shape.step, draft, k)
    expected = tokens_per_step(spec.acceptance_rate, k)
    crossover = _crossover(brief, shape, constants, expected, context_tokens)
    off = _off_batch(brief, crossover)
    rows: list[SpecPoint] = []
    # the rows run past max-num-seqs to twice the crossover, so the table shows the loss beyond it
    top = 8.0 * brief.deployment.max_num_seqs
    last = max(brief.deployment.max_num_seqs, min(2 * crossover, top) if math.isfinite(crossover) else 0)
    for b in sorted({*[b for b in _BATCHES if b <= last], brief.deployment.max_num_seqs}):
        if rows and rows[-1].batch == b:
            continue
        plain, verify = _steps_at(brief, shape, constants, context_tokens, float(b))
        rows.append(
            trusted(
                SpecPoint,
                batch=b,
                plain_step_ms=plain * 1e3,
                spec_step_ms=verify * 1e3,
                spec_ms_per_token=verify / expected * 1e3,
                gain=plain * expected / verify,
            )
        )
    plain1, verify1 = _steps_at(brief, shape, constants, context_tokens, 1.0)
    at_1 = plain1 * expected / verify1
    plain_max, verify_max = _steps_at(brief, shape, constants, context_tokens, float(brief.deployment.max_num_seqs))
    a = spec.acceptance_rate
    arithmetic = {
        "tokens_per_step": f"(1 - {num(a)}^{k + 1}) / (1 - {num(a)}) = {num(expected)} tokens a sequence per step",
        "batch_1": f"batch 1: {num(plain1 * 1e3, 'ms')} a token plain; a speculative step {num(verify1 * 1e3, 'ms')}"
        f" / {num(expected)} tokens = {num(verify1 / expected * 1e3, 'ms')} a token: x{num(at_1)}",
        "crossover": f"the gain falls to 1 at a batch of {num(crossover)}: above it the k + 1 tokens' compute and the"
        f" {k} draft passes cost more than the {num(expected)} tokens a step saves"
        if math.isfinite(crossover)
        else f"the gain stays above 1 up to a batch of {num(top)}",
    }
    return _SpecTable(
        draft=draft_name,
        constants=constants,
        expected=expected,
        crossover=crossover,
        off=off,
        points=tuple(rows),
        gain_at_batch_1=at_1,
        gain_at_max_batch=plain_max * expected / verify_max,
        config_json=speculative_config_json(brief, shape, off),
        arithmetic=arithmetic,
    )


def _steps_at(brief: Brief, shape: ReplicaShape, constants: tuple[float, ...], context_tokens: float, batch: float) -> tuple[float, float]:
    """(plain step, speculative step) at a batch, the scheduler's time included (s)."""
    sched_s = brief.latency.scheduler_ms / 1e3
    plain = step_time_s(shape.step.values(), batch, batch, batch * context_tokens, 0.0) + sched_s
    verify = speculative_step_time_s(constants, batch, batch, batch * context_tokens, 0.0) + sched_s
    return plain, verify


def speculative_analysis(brief: Brief, shape: ReplicaShape, operating_batch: float, context_tokens: float) -> SpeculativeAnalysis:
    """Speculation's gain at each batch, the crossover, and whether it is on at the design's running batch (all but
    the load's part kept for the replica: _spec_table)."""
    spec = brief.speculative
    table = _spec_table(brief, shape, context_tokens)
    batch = max(operating_batch, 1.0)
    plain, verify = _steps_at(brief, shape, table.constants, context_tokens, batch)
    at_load = plain * table.expected / verify
    on = batch <= table.off
    return trusted(
        SpeculativeAnalysis,
        problems=_problems(brief, shape),
        method=spec.method,
        draft=table.draft,
        num_speculative_tokens=spec.num_speculative_tokens,
        acceptance_rate=spec.acceptance_rate,
        tokens_per_step=table.expected,
        crossover_batch=table.crossover,
        off_above_batch=table.off,
        off_above_batch_per_engine=per_engine_batch(shape, table.off),
        operating_batch=batch,
        on_at_load=on,
        gain_at_load=at_load,
        gain_at_batch_1=table.gain_at_batch_1,
        gain_at_max_batch=table.gain_at_max_batch,
        points=table.points,
        config_json=table.config_json,
        arithmetic=table.arithmetic
        | {
            "at_load": f"at the running batch of {num(batch)}: x{num(at_load)} ({'on' if on else 'off'}, turned off above {table.off} sequences)"
        },
    )


def apply_speculation(
    slo: SloBudget, analysis: SpeculativeAnalysis, brief: Brief, shape: ReplicaShape, *, modelled: bool = True
) -> SloBudget:
    """The SLO budget with speculation on at the running batch: its figures stand (the latency model runs the
    speculative step by batch, planner.slo: a sequence's time per token is the step over the tokens it emits, a gap
    between streamed chunks one whole step); the ITL waterfall names the speculative step and shows it whole."""
    if not analysis.on_at_load:
        return slo
    if not modelled:
        return _swap_decode_step(slo, analysis, brief, shape)
    _, spec_ms, _ = _at(analysis, brief, shape, analysis.operating_batch)
    step_ms = spec_ms - brief.latency.scheduler_ms
    chunk_extra_ms = step_ms - step_ms / analysis.tokens_per_step  # one chunk is a whole step, not a token's share
    waterfall = tuple(
        w.model_copy(
            update={
                "component": f"speculative step (k={analysis.num_speculative_tokens}, a={num(analysis.acceptance_rate)},"
                f" {num(analysis.tokens_per_step)} tokens a sequence) at batch {num(analysis.operating_batch)}",
                "ms": w.ms + chunk_extra_ms,
            }
        )
        if w.component.startswith("decode step")
        else w
        for w in slo.itl_waterfall
    )
    return slo.model_copy(
        update={
            "itl_waterfall": waterfall,
            "basis": slo.basis
            + f" Speculative decoding is on up to a batch of {analysis.off_above_batch} (vLLM disable_by_batch_size): the operating batch,"
            f" the capacity and TPOT use the speculative step over its {num(analysis.tokens_per_step)} tokens a sequence"
            f" (x{num(analysis.gain_at_load)} per token at the running batch); a gap between streamed chunks is one speculative step.",
        }
    )


def _swap_decode_step(slo: SloBudget, analysis: SpeculativeAnalysis, brief: Brief, shape: ReplicaShape) -> SloBudget:
    """A budget the latency model did not run with speculation (a disaggregated decode pool's pure decode steps): a
    streamed chunk's gap becomes the speculative step, a reply's mean gap that step over the tokens it emits."""
    plain_ms, spec_ms, per_token_ms = _at(analysis, brief, shape, analysis.operating_batch)
    itl_p50, itl_p95 = slo.itl_p50_ms - plain_ms + spec_ms, slo.itl_p95_ms - plain_ms + spec_ms
    tpot_p50, tpot_p95 = slo.tpot_p50_ms - plain_ms + per_token_ms, slo.tpot_p95_ms - plain_ms + per_token_ms
    judged = slo.itl_metric.judged(itl_p95, tpot_p95)
    plain = num(plain_ms, "ms")

    def swapped(before: float, after: float, new_ms: float, what: str) -> str:
        return f"with speculation, {num(before, 'ms')} - {plain} plain step + {num(new_ms, 'ms')} {what} = {num(after, 'ms')}"

    step_words, token_words = "speculative step", "a token (the speculative step over the tokens it emits)"
    swaps = {
        "itl_p50_ms": swapped(slo.itl_p50_ms, itl_p50, spec_ms, step_words),
        "itl_p95_ms": swapped(slo.itl_p95_ms, itl_p95, spec_ms, step_words),
        "tpot_p50_ms": swapped(slo.tpot_p50_ms, tpot_p50, per_token_ms, token_words),
        "tpot_p95_ms": swapped(slo.tpot_p95_ms, tpot_p95, per_token_ms, token_words),
    }
    return slo.reworded(
        {
            "itl_p50_ms": itl_p50,
            "itl_p95_ms": itl_p95,
            "tpot_p50_ms": tpot_p50,
            "tpot_p95_ms": tpot_p95,
            "itl_ok": judged <= slo.itl_target_ms,
            "basis": slo.basis
            + f" Speculative decoding is on in the decode pool at this batch: {num(analysis.tokens_per_step)} tokens a step,"
            f" x{num(analysis.gain_at_load)} per token (its batch is the pool's without speculation).",
        },
        lambda words: words | {k: f"{words[k]}; {v}" for k, v in swaps.items() if k in words},
    )


def _at(analysis: SpeculativeAnalysis, brief: Brief, shape: ReplicaShape, batch: float) -> tuple[float, float, float]:
    ctx = brief.running_context_tokens
    constants = _spec_table(brief, shape, ctx).constants
    sched = brief.latency.scheduler_ms
    plain = step_time_s(shape.step.values(), batch, batch, batch * ctx, 0.0) * 1e3 + sched
    spec = speculative_step_time_s(constants, batch, batch, batch * ctx, 0.0) * 1e3 + sched
    return plain, spec, spec / analysis.tokens_per_step


def speculative_summary(analysis: SpeculativeAnalysis) -> str:
    """One line: the gain at batch 1, at the load, the crossover."""
    cross = (
        f"the gain falls to 1 at a batch of {num(analysis.crossover_batch)}; it is off above {analysis.off_above_batch} (disable_by_batch_size)"
        if math.isfinite(analysis.crossover_batch)
        else "it pays at every batch up to max-num-seqs"
    )
    return (
        f"{analysis.method.value} speculation, k={analysis.num_speculative_tokens} at acceptance {pct(analysis.acceptance_rate)}:"
        f" {num(analysis.tokens_per_step)} tokens a step; x{num(analysis.gain_at_batch_1)} per token at batch 1,"
        f" x{num(analysis.gain_at_load)} at the running batch of {num(analysis.operating_batch)}; {cross}"
    )
