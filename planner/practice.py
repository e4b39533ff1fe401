"""Interview practice: the user's own estimates of the key figures, graded against the design.

An estimate within 10% of the tool's figure passes; otherwise the feedback says by how much it is off
and which step of the method to revisit, with the tool's arithmetic for that figure.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

from pydantic import BaseModel, ConfigDict

from planner.design import Design
from planner.figures import Format, arithmetic, format_value, resolve, show, spec
from planner.fmt import num

__all__ = ["BINDING_CHOICES", "PRACTICE_FIGURES", "TOLERANCE", "Feedback", "PracticeFigure", "grade", "practice_figures"]

TOLERANCE = 0.10


class PracticeFigure(BaseModel):
    """One figure a candidate estimates: its plan path (the figure registry names and writes it, planner.figures)
    and the step of the method to revisit when the estimate is off."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    key: str
    figure: str  # the plan's JSON path the estimate is graded against
    step: str

    @property
    def unit(self) -> str:
        """What the estimate is entered in: "%" for a share, "choice" for the binding resource, else the figure's unit."""
        entry = spec(self.figure)
        if entry.format is Format.percent:
            return "%"
        if entry.format is Format.text:
            return "choice"
        return "$" if entry.format is Format.money else entry.unit

    @property
    def label(self) -> str:
        """The registry's name, with the unit the estimate is entered in."""
        name = spec(self.figure).label
        return name if self.unit == "choice" else f"{name}, {self.unit}"


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
        figure="demand.request_rate_per_s",
        step="Step 1, demand: request rate = users x duty cycle / generation time per turn (the turn lasts generation time / duty)",
    ),
    PracticeFigure(
        key="generating_sequences",
        figure="demand.generating_sequences",
        step="Step 1, demand: users x duty cycle (not all users at once: they read and type most of the time)",
    ),
    PracticeFigure(
        key="weights_gb_per_gpu",
        figure="memory.weights_gb_per_gpu",
        step="Step 2, memory: parameters x bytes per value at the weight precision / TP",
    ),
    PracticeFigure(
        key="max_sequences_per_replica",
        figure="memory.max_sequences_per_replica",
        step="Step 2, KV capacity: KV GB per GPU / (KV bytes per token per GPU x context tokens)",
    ),
    PracticeFigure(
        key="decode_step_ms",
        figure="capacity.decode_step_ms",
        step="Step 2, decode: bytes read per step (weights + batch x context x KV per token) / bandwidth, then the efficiency factors",
    ),
    PracticeFigure(
        key="utilization",
        figure="capacity.utilization",
        step="Step 2, utilization: prefill demand after prefix hits / prefill capacity + output tokens / decode capacity",
    ),
    PracticeFigure(
        key="binding_constraint",
        figure="capacity.binding_constraint",
        step="Step 2, the binding resource: compare KV in use / KV capacity, prefill time share and decode time share",
    ),
    PracticeFigure(
        key="tpot_ms",
        figure="operating_point.tpot_ms",
        step="Step 3, the operating point: solve in flight = rate x time in system together with the step time at that batch",
    ),
    PracticeFigure(
        key="ttft_p95_ms",
        figure="slo.ttft_p95_ms",
        step="Step 5, the SLO budget: network + gateway + tokenization + queue wait + prefill of the uncached tokens + first sample and write",
    ),
    PracticeFigure(
        key="usd_per_million_output_tokens",
        figure="cost.usd_per_million_output_tokens",
        step="Step 7, cost: GPUs x $/GPU-hour x hours per year / (output tokens per second x average duty x seconds per year)",
    ),
)

BINDING_CHOICES = ("memory", "bandwidth", "compute")


def practice_figures(design: Design) -> tuple[PracticeFigure, ...]:
    """The figures this design can grade (every section a figure needs is present)."""
    return tuple(f for f in PRACTICE_FIGURES if hasattr(design, f.figure.split(".")[0]))


def _tool_value(design: Design, figure: PracticeFigure) -> float | str:
    value = resolve(design, figure.figure)
    if figure.unit == "choice":
        return str(getattr(value, "value", value))
    return float(value)


def _grade_number(figure: PracticeFigure, estimate: float, tool: float) -> tuple[bool, str]:
    if figure.unit == "%":
        estimate = estimate / 100  # entered as a percentage
    if tool == 0 or not math.isfinite(tool):
        ok = estimate == tool
        return ok, "exact" if ok else f"the tool's figure is {format_value(spec(figure.figure), tool)}"
    error = (estimate - tool) / abs(tool)
    if abs(error) <= TOLERANCE:
        return True, "within 10%"
    return False, f"{error:+.0%} {'high' if error > 0 else 'low'}"


def _estimate_text(figure: PracticeFigure, estimate: float) -> str:
    """The user's estimate written as the tool writes its figure: a share entered in percent as 27.7%, money as $4.48."""
    entry = spec(figure.figure)
    if figure.unit == "%":
        return format_value(entry, estimate / 100)
    return format_value(entry, estimate) if entry.format is Format.money else num(estimate, figure.unit)


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
            shown_estimate = _estimate_text(figure, float(estimate))
            shown_tool = show(design, figure.figure)
        feedback.append(
            Feedback(
                key=figure.key,
                label=spec(figure.figure).label,
                estimate=shown_estimate,
                tool=shown_tool,
                ok=ok,
                off_by=off_by,
                revisit="" if ok else figure.step,
                arithmetic=arithmetic(design, figure.figure),
            )
        )
    return tuple(feedback)
