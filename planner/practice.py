"""Interview practice: the user's own estimates of the key figures, graded against the design.

An estimate within 10% of the tool's figure passes; otherwise the feedback says by how much it is off
and which step of the method to revisit, with the tool's arithmetic for that figure.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

from pydantic import BaseModel, ConfigDict

from planner.design import Design
from planner.fmt import num, pct

__all__ = ["BINDING_CHOICES", "PRACTICE_FIGURES", "TOLERANCE", "Feedback", "PracticeFigure", "grade", "practice_figures"]

TOLERANCE = 0.10


class PracticeFigure(BaseModel):
    """One figure a candidate estimates: how to read it from a design, and where its arithmetic lives."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    key: str
    label: str
    unit: str  # "%" for fractions entered as percentages; "choice" for the binding resource
    step: str  # the step of the method to revisit when the estimate is off
    section: str  # Design attribute the figure lives in
    field: str  # attribute of that section


class Feedback(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    key: str
    label: str
    estimate: str
    tool: str
    ok: bool
    off_by: str  # "within 10%", "+35% high", "-60% low", "memory instead of bandwidth"
    revisit: str  # empty when ok
    arithmetic: str


PRACTICE_FIGURES: tuple[PracticeFigure, ...] = (
    PracticeFigure(
        key="request_rate_per_s",
        label="Peak request rate (req/s)",
        unit="req/s",
        step="Step 1, demand: request rate = users x duty cycle / generation time per turn (the turn lasts generation time / duty)",
        section="demand",
        field="request_rate_per_s",
    ),
    PracticeFigure(
        key="generating_sequences",
        label="Sequences generating at once",
        unit="sequences",
        step="Step 1, demand: users x duty cycle (not all users at once: they read and type most of the time)",
        section="demand",
        field="generating_sequences",
    ),
    PracticeFigure(
        key="weights_gb_per_gpu",
        label="Weights per GPU (GB)",
        unit="GB",
        step="Step 2, memory: parameters x bytes per value at the weight precision / TP",
        section="memory",
        field="weights_gb_per_gpu",
    ),
    PracticeFigure(
        key="max_sequences_per_replica",
        label="Sequences whose KV fits one replica",
        unit="sequences",
        step="Step 2, KV capacity: KV GB per GPU / (KV bytes per token per GPU x context tokens)",
        section="memory",
        field="max_sequences_per_replica",
    ),
    PracticeFigure(
        key="decode_step_ms",
        label="Decode step at the running batch (ms)",
        unit="ms",
        step="Step 2, decode: bytes read per step (weights + batch x context x KV per token) / bandwidth, then the efficiency factors",
        section="capacity",
        field="decode_step_ms",
    ),
    PracticeFigure(
        key="utilization",
        label="Utilization at peak (%)",
        unit="%",
        step="Step 2, utilization: prefill demand after prefix hits / prefill capacity + output tokens / decode capacity",
        section="capacity",
        field="utilization",
    ),
    PracticeFigure(
        key="binding_constraint",
        label="Binding resource",
        unit="choice",
        step="Step 2, the binding resource: compare KV in use / KV capacity, prefill time share and decode time share",
        section="capacity",
        field="binding_constraint",
    ),
    PracticeFigure(
        key="tpot_ms",
        label="TPOT at the operating point (ms)",
        unit="ms",
        step="Step 3, the operating point: solve in flight = rate x time in system together with the step time at that batch",
        section="operating_point",
        field="tpot_ms",
    ),
    PracticeFigure(
        key="ttft_p95_ms",
        label="p95 TTFT (ms)",
        unit="ms",
        step="Step 5, the SLO budget: network + gateway + tokenization + queue wait + prefill of the uncached tokens + first sample and write",
        section="slo",
        field="ttft_p95_ms",
    ),
    PracticeFigure(
        key="usd_per_million_output_tokens",
        label="$ per million output tokens",
        unit="$/M",
        step="Step 7, cost: GPUs x $/GPU-hour x hours per year / (output tokens per second x average duty x seconds per year)",
        section="cost",
        field="usd_per_million_output_tokens",
    ),
)

BINDING_CHOICES = ("memory", "bandwidth", "compute")


def practice_figures(design: Design) -> tuple[PracticeFigure, ...]:
    """The figures this design can grade (every section a figure needs is present)."""
    return tuple(f for f in PRACTICE_FIGURES if hasattr(design, f.section))


def _tool_value(design: Design, figure: PracticeFigure) -> float | str:
    value = getattr(getattr(design, figure.section), figure.field)
    if figure.unit == "choice":
        return str(getattr(value, "value", value))
    return float(value)


def _arithmetic(design: Design, figure: PracticeFigure) -> str:
    arithmetic: Mapping[str, str] = getattr(getattr(design, figure.section), "arithmetic", {})
    return arithmetic.get(figure.field, "")


def _show(value: float, unit: str) -> str:
    return pct(value) if unit == "%" else num(value, unit)


def _grade_number(figure: PracticeFigure, estimate: float, tool: float) -> tuple[bool, str]:
    if figure.unit == "%":
        estimate = estimate / 100  # entered as a percentage
    if tool == 0 or not math.isfinite(tool):
        ok = estimate == tool
        return ok, "exact" if ok else f"the tool's figure is {_show(tool, figure.unit)}"
    error = (estimate - tool) / abs(tool)
    if abs(error) <= TOLERANCE:
        return True, "within 10%"
    return False, f"{error:+.0%} {'high' if error > 0 else 'low'}"


def grade(design: Design, estimates: Mapping[str, float | str | None]) -> tuple[Feedback, ...]:
    """Feedback for every figure the user estimated (keys of PRACTICE_FIGURES); blank estimates are skipped."""
    feedback = []
    for figure in practice_figures(design):
        estimate = estimates.get(figure.key)
        if estimate is None or estimate == "":
            continue
        tool = _tool_value(design, figure)
        if figure.unit == "choice":
            ok = str(estimate).strip().lower() == tool
            off_by = "right" if ok else f"{tool} binds, not {estimate}"
            shown_estimate, shown_tool = str(estimate), str(tool)
        else:
            assert isinstance(tool, float)
            ok, off_by = _grade_number(figure, float(estimate), tool)
            shown_estimate = f"{num(float(estimate))}%" if figure.unit == "%" else num(float(estimate), figure.unit)
            shown_tool = _show(tool, figure.unit)
        feedback.append(
            Feedback(
                key=figure.key,
                label=figure.label,
                estimate=shown_estimate,
                tool=shown_tool,
                ok=ok,
                off_by=off_by,
                revisit="" if ok else figure.step,
                arithmetic=_arithmetic(design, figure),
            )
        )
    return tuple(feedback)
