"""A replica larger than one TP group: what its step spends, what binds, and which mechanism the design turns on.

For a design with pipeline stages (deployment.pp) or expert parallelism (deployment.ep, with or without DP
attention), this takes the decode step at the operating point apart (planner.step_model's terms, each through
the same formula), and re-plans the brief with the mechanism taken away, so the conclusion can say what it buys
in numbers: sequences the KV pool holds, the step, and the rate a node carries under the SLO.
"""

from __future__ import annotations

import math
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from planner.core import CoreDesign, replica_capacity
from planner.errors import BriefError
from planner.fmt import num, pct
from planner.operating_point import Limit, OperatingPoint, steady_state
from planner.replica import ReplicaShape
from planner.step_model import (
    A2A_LATENCY_S,
    A2A_S_PER_TOKEN,
    ALLREDUCES,
    AR_LATENCY_S,
    AR_ONE_SHOT_S_PER_TOKEN,
    AR_TWO_SHOT_S_PER_TOKEN,
    EXPERT_MISS,
    EXPERTS_S,
    GEMM_S_PER_TOKEN,
    KV_S_PER_TOKEN,
    LM_HEAD_S_PER_SEQ,
    LORA_PARTS,
    OVERHEAD_S,
    PER_SEQ_S,
    PP_LATENCY_S,
    PP_S_PER_TOKEN,
    ROOFLINE,
    WEIGHTS_S,
    step_time_s,
)

__all__ = ["ScaleOut", "ScaleOutOption", "StepPart", "capacity_limit", "scale_out_analysis"]

# the parts of a decode step, each the step formula with the other constants zeroed (planner.step_model)
_PARTS: tuple[tuple[str, tuple[int, ...]], ...] = (
    ("GEMMs: weights read or computed", (WEIGHTS_S, EXPERTS_S, EXPERT_MISS, GEMM_S_PER_TOKEN, LM_HEAD_S_PER_SEQ, ROOFLINE)),
    ("attention over the KV", (KV_S_PER_TOKEN,)),
    ("TP all-reduces", (ALLREDUCES, AR_LATENCY_S, AR_ONE_SHOT_S_PER_TOKEN, AR_TWO_SHOT_S_PER_TOKEN)),
    ("EP all-to-alls (dispatch + combine)", (A2A_LATENCY_S, A2A_S_PER_TOKEN)),
    ("pipeline stage sends", (PP_LATENCY_S, PP_S_PER_TOKEN)),
    ("batched-LoRA kernels", LORA_PARTS),
    ("fixed and per-sequence", (OVERHEAD_S, PER_SEQ_S)),
)


class _Model(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class StepPart(_Model):
    component: str
    ms: float = Field(description="The part's time in one decode step at the operating point's batch (ms).")


class ScaleOutOption(_Model):
    """The brief with one mechanism taken away or changed, re-planned."""

    name: str
    overrides: dict[str, Any] = Field(description="Brief paths and values that give this option (as `--set` takes them).")
    feasible: bool
    reason: str = Field(description="Why the option cannot be computed (empty when it can).")
    max_sequences_per_replica: float = 0.0
    decode_step_ms: float = Field(default=math.nan, description="The decode step at the design's operating batch (ms).")
    capacity_rate_per_node_per_s: float = Field(default=0.0, description="Requests a second one node carries at the SLO.")


class ScaleOut(_Model):
    replica_nodes: int
    replica_gpus: int
    batch: float = Field(description="Running sequences of one replica at the operating point.")
    step_parts: tuple[StepPart, ...]
    capacity_rate_per_node_per_s: float
    binds: str
    options: tuple[ScaleOutOption, ...]
    conclusion: str
    arithmetic: dict[str, str]


def _part_ms(shape: ReplicaShape, keep: tuple[int, ...], batch: float, context: float) -> float:
    b = max(batch, 1.0)
    return step_time_s(shape.step.masked(keep), b, b, b * context, 0.0) * 1e3


def step_parts(shape: ReplicaShape, batch: float, context: float) -> tuple[StepPart, ...]:
    """The decode step at `batch`, part by part; the parts sum to shape.decode_step_s (a part that is 0 is left out)."""
    parts = (StepPart(component=name, ms=_part_ms(shape, keep, batch, context)) for name, keep in _PARTS)
    return tuple(p for p in parts if p.ms > 0)


def _per_node(shape: ReplicaShape, op: OperatingPoint) -> float:
    return op.capacity_rate_per_s * shape.units_per_replica_group / shape.replica_nodes


def _alternatives(core: CoreDesign) -> list[tuple[str, dict[str, Any]]]:
    """The same brief without the mechanism: EP kept inside one node's TP group, or one node's DP attention, or no PP."""
    shape, brief = core.shape, core.brief
    node = brief.hardware.gpus_per_node
    out: list[tuple[str, dict[str, Any]]] = []
    if shape.ep > 1:
        out.append(
            (
                f"TP={node} with EP={node} in one node, no DP attention",
                {"deployment.tp": node, "deployment.ep": node, "deployment.dp_attention": False},
            )
        )
        if shape.gpus > node:
            out.append((f"DP attention with EP={node} in one node", {"deployment.ep": node, "deployment.dp_attention": True}))
    if shape.pp > 1:
        out.append((f"no pipeline stages (PP=1, TP={shape.tp})", {"deployment.pp": 1}))
        if shape.pp > 2:
            out.append(("PP=2", {"deployment.pp": 2}))
    return out


def _option(core: CoreDesign, name: str, overrides: dict[str, Any], batch: float) -> ScaleOutOption:
    try:
        shape, mem, op = replica_capacity(core.brief.with_changes(overrides))  # its replica and capacity: no verdict read
    except BriefError as exc:  # InfeasibleDesign: the option forms no replica, or its weights do not fit
        return ScaleOutOption(name=name, overrides=overrides, feasible=False, reason=f"{exc.field}: {exc.reason}")
    context = core.brief.running_context_tokens
    step = shape.decode_step_s(batch, context) * 1e3
    return ScaleOutOption(
        name=name,
        overrides=overrides,
        feasible=True,
        reason="",
        max_sequences_per_replica=mem.max_sequences_per_replica,
        decode_step_ms=step,
        capacity_rate_per_node_per_s=_per_node(shape, op),
    )


_LIMIT_WORDS = {
    Limit.kv: "the KV pool: the running sequences' context fills it",
    Limit.slots: "the batch slots (max-num-seqs)",
    Limit.prefill: "the prefill slot: prompts arrive faster than their chunks clear",
    Limit.batched_tokens: "the step's token budget (max-num-batched-tokens)",
}


def capacity_limit(core: CoreDesign) -> str:
    """What stops a replica just above its SLO capacity, a clause: a steady-state limit, else the latency target(s) the
    plan has reaching their limit there (the operating point's capacity_reached, as the design document words it)."""
    op = core.operating_point
    rate = op.capacity_rate_per_s
    if not (math.isfinite(rate) and rate > 0):
        return "no rate meets the SLO"
    n, limit = steady_state(core.brief, core.shape, rate * 1.01)
    if limit is not None:
        return f"it ends at {_LIMIT_WORDS[limit]}"
    if op.capacity_reached:
        return f"at {num(n)} running, {op.capacity_reached}"
    return f"neither latency target binds up to it (the capacity search's ceiling; {num(n)} running)"


def _mechanism(shape: ReplicaShape) -> str:
    if shape.ep > 1 and shape.attention_groups > 1:
        return f"expert parallelism over {shape.gpus} GPUs with DP attention in {shape.attention_groups} groups"
    if shape.ep > 1:
        return f"expert parallelism over the TP group (EP={shape.ep})"
    return f"{shape.pp} pipeline stages"


def scale_out_analysis(core: CoreDesign) -> ScaleOut | None:
    """The scale-out conclusion of a design whose replica is more than one TP group (None otherwise)."""
    shape, op, brief = core.shape, core.operating_point, core.brief
    if shape.pp == 1 and shape.ep == 1:
        return None
    batch = max(op.in_flight if math.isfinite(op.in_flight) else float(brief.deployment.max_num_seqs), 1.0)
    context = brief.running_context_tokens
    parts = step_parts(shape, batch, context)
    total = sum(p.ms for p in parts)
    largest = max(parts, key=lambda p: p.ms)
    per_node = _per_node(shape, op)
    options = tuple(_option(core, name, overrides, batch) for name, overrides in _alternatives(core))
    parts_text = " + ".join(f"{p.component} {num(p.ms, 'ms')}" for p in parts)
    binds = (
        f"a replica's SLO capacity ({num(op.capacity_rate_per_s, 'req/s')}; it carries {num(op.rate_per_replica_per_s, 'req/s')},"
        f" {pct(op.load_vs_capacity)}): {capacity_limit(core)}; the decode step's largest part is {largest.component},"
        f" {num(largest.ms, 'ms')} of {num(total, 'ms')} at {num(batch)} running ({pct(largest.ms / total)})"
    )
    compared = [
        f"{o.name}: {num(o.max_sequences_per_replica)} sequences a replica, a {num(o.decode_step_ms, 'ms')} step at the same batch,"
        f" {num(o.capacity_rate_per_node_per_s, 'req/s')} a node"
        if o.feasible
        else f"{o.name}: not a design ({o.reason})"
        for o in options
    ]
    conclusion = (
        f"What binds: {binds}. The design turns on {_mechanism(shape)}: {num(core.memory.max_sequences_per_replica)} sequences"
        f" a replica of {shape.gpus_per_replica} GPUs ({core.memory.arithmetic['max_sequences_per_replica']}),"
        f" {num(per_node, 'req/s')} a node under the SLO" + (f"; against {'; '.join(compared)}" if compared else "") + "."
    )
    arithmetic = {
        "step": f"decode step at {num(batch)} running x {num(context, 'tokens')} of context: {parts_text} = {num(total, 'ms')}",
        "capacity_rate_per_node_per_s": (
            f"{num(op.capacity_rate_per_s, 'req/s')} a serving unit x {shape.units_per_replica_group} units / {shape.replica_nodes} nodes"
            f" = {num(per_node, 'req/s')} a node"
        ),
    }
    return ScaleOut(
        replica_nodes=shape.replica_nodes,
        replica_gpus=shape.gpus_per_replica,
        batch=batch,
        step_parts=parts,
        capacity_rate_per_node_per_s=per_node,
        binds=binds,
        options=options,
        conclusion=conclusion,
        arithmetic=arithmetic,
    )
