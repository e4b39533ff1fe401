"""Two designs side by side on the figures that matter, with their differences (issue 16, item 6).

`compare(left, right)` writes each figure of both designs as the figure registry says (planner.figures), then the
difference from left to right: absolute (in the figure's unit; percentage points for a share) and relative, and
whether the change is better or worse (the registry's direction). The app's Compare page shows a pinned design
against the current one; the Variations page shows the capstone against a variation with the same rows.
"""

from __future__ import annotations

import math
from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict

from planner.figures import Better, FigureSpec, Format, format_value, resolve, show, spec
from planner.fmt import num, usd
from planner.uncertainty import range_text

__all__ = ["COMPARE_FIGURES", "Difference", "Direction", "compare", "compare_paths"]

# The figures that matter when two designs are weighed: does it work, how fast, how busy, how big, how dear.
COMPARE_FIGURES: tuple[str, ...] = (
    "verdict.meets_slo",
    "verdict.availability_ok",
    "slo.ttft_p95_ms",
    "slo.itl_p95_ms",
    "capacity.utilization",
    "operating_point.load_vs_capacity",
    "headroom.multiple",
    "capacity.binding_constraint",
    "brief.hardware.nodes",
    "cost.gpus",
    "cost.usd_per_hour",
    "cost.usd_per_million_output_tokens",
    "demand.request_rate_per_s",
    "operating_point.capacity_rate_per_s",
    "memory.kv_gb_per_gpu",
    "operating_point.decode_step_ms",
)
_TPOT = "slo.tpot_p95_ms"  # shown after p95 ITL when either design's ITL target judges each reply's mean gap
_RELATIVE_AS_RATIO = 10.0  # from ten times the left value on, the change reads "x15" rather than "+1,400%"


class Direction(StrEnum):
    better = "better"
    worse = "worse"
    same = "same"
    changed = "changed"  # a figure with no better direction, or a text that differs


class Difference(BaseModel):
    """One figure of two designs: both values as shown, the change from left to right, and its direction."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    path: str
    label: str
    target: str  # the target both designs are judged against ("500 ms"); "" when none, or when they differ
    left: str  # with its own target when the two differ
    right: str
    absolute: str  # "+120 ms", "+12.3 pts", "-$1.20"; "" for a text, a yes/no or an unbounded value
    relative: str  # "+48%", "x15"; "" where it has no meaning
    direction: Direction
    left_range: str = ""  # where the real engine's figure falls ("61.2 to 104 ms"), for a predicted figure; else ""
    right_range: str = ""


def compare_paths(left: Any, right: Any) -> tuple[str, ...]:
    """COMPARE_FIGURES, with p95 TPOT after p95 ITL when either design's ITL target judges TPOT."""
    judges_tpot = any(str(getattr(d.slo.itl_metric, "value", d.slo.itl_metric)) == "tpot" for d in (left, right))
    if not judges_tpot:
        return COMPARE_FIGURES
    at = COMPARE_FIGURES.index("slo.itl_p95_ms") + 1
    return (*COMPARE_FIGURES[:at], _TPOT, *COMPARE_FIGURES[at:])


# The predicted figures that carry a range (planner.uncertainty), by the kind of residuals that band them
_RANGED = {
    "slo.ttft_p95_ms": "ttft",
    "slo.itl_p95_ms": "itl",
    "slo.tpot_p95_ms": "itl",
    "capacity.decode_step_ms": "itl",
    "operating_point.decode_step_ms": "itl",
    "operating_point.capacity_rate_per_s": "throughput",
}


def _range(design: Any, path: str, entry: FigureSpec) -> str:
    """'61.2 to 104 ms': the range of a predicted figure on the plan's basis and coverage (the verdict bar's), or ''."""
    u = getattr(design, "uncertainty", None)
    value = resolve(design, path)
    if u is None or path not in _RANGED or not isinstance(value, (int, float)) or not math.isfinite(value):
        return ""
    low, high = u.range_of(float(value), _RANGED[path])
    return range_text(float(value), low, high, entry.unit) if math.isfinite(high) else ""


def _as_served(design: Any, path: str, text: str) -> str:
    """$/M of a fleet that cannot carry the peak is no cost of serving the brief: the value says so."""
    cost = getattr(design, "cost", None)
    if path == "cost.usd_per_million_output_tokens" and cost is not None and not cost.carries_peak:
        return f"{text} (the fleet cannot carry the peak)"
    return text


def _texts(left: Any, right: Any, path: str, entry: FigureSpec) -> dict[str, str]:
    """Both values as shown, and the target they are judged against: once when it is the same for both, else with
    each value ('84.2 ms (target 500 ms)')."""
    a, b = _as_served(left, path, show(left, path)), _as_served(right, path, show(right, path))
    if entry.target is None:
        return {"path": path, "label": entry.label, "target": "", "left": a, "right": b}
    ta, tb = show(left, entry.target), show(right, entry.target)
    if ta == tb:
        return {"path": path, "label": entry.label, "target": ta, "left": a, "right": b}
    return {"path": path, "label": entry.label, "target": "", "left": f"{a} (target {ta})", "right": f"{b} (target {tb})"}


def _signed(entry: FigureSpec, delta: float) -> str:
    sign = "+" if delta > 0 else "-"
    size = abs(delta)
    if entry.format is Format.percent:
        return f"{sign}{size * 100:.1f} pts"
    if entry.format is Format.money:
        return sign + usd(size, entry.unit)
    if entry.format is Format.integer:
        return f"{sign}{size:,.0f}"
    return sign + num(size, entry.unit)


def _relative(a: float, b: float) -> str:
    if a <= 0 or b < 0:
        return ""
    ratio = b / a
    if ratio >= _RELATIVE_AS_RATIO:
        return f"x{num(ratio)}"
    change = (ratio - 1) * 100
    return f"{change:+.1f}%" if abs(change) < 10 else f"{change:+.0f}%"


def _direction(entry: FigureSpec, a: float, b: float) -> Direction:
    if a == b or (math.isfinite(a) and math.isfinite(b) and math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12)):
        return Direction.same
    if entry.better is Better.neutral:
        return Direction.changed
    smaller_is_better = entry.better is Better.smaller
    return Direction.better if (b < a) == smaller_is_better else Direction.worse


_PER_REPLICA = frozenset({"operating_point.capacity_rate_per_s", "operating_point.decode_step_ms"})  # one replica's, not the fleet's


def _replica_gpus(design: Any) -> int:
    return int(design.shape.gpus_per_replica)


def _replica_kind(design: Any) -> str:
    """Whose replica the operating point is: a disaggregated design's decode pool's (prompts run elsewhere), else the
    general pool's (prompts and replies together)."""
    return "decode-pool" if getattr(design, "disaggregation", None) is not None else "general-pool"


def _difference(left: Any, right: Any, path: str) -> Difference:
    entry = spec(path)
    a, b = resolve(left, path), resolve(right, path)
    texts = _texts(left, right, path, entry)
    if entry.format in (Format.text, Format.yes_no) or a is None or b is None:
        same = format_value(entry, a) == format_value(entry, b)
        if same:
            return Difference(**texts, absolute="", relative="", direction=Direction.same)
        direction = _direction(entry, float(bool(a)), float(bool(b))) if entry.format is Format.yes_no else Direction.changed
        return Difference(**texts, absolute="", relative="", direction=direction)
    x, y = float(a), float(b)
    direction = _direction(entry, x, y)
    if path in _PER_REPLICA and _replica_gpus(left) != _replica_gpus(right):  # a bigger replica does more: no better
        texts["label"] = f"{texts['label']} (a replica of {_replica_gpus(left)} vs {_replica_gpus(right)} GPUs)"
        direction = Direction.changed
    elif path in _PER_REPLICA and _replica_kind(left) != _replica_kind(right):  # a decode replica runs no prompts: unlike
        texts["label"] = f"{texts['label']} (a {_replica_kind(left)} vs a {_replica_kind(right)} replica)"
        direction = Direction.changed
    served = [_as_served(d, path, "") == "" for d in (left, right)]
    if served[0] != served[1]:  # one fleet cannot carry the peak: its price is no saving, whatever the figures
        direction = Direction.worse if served[0] else Direction.better
    if not (math.isfinite(x) and math.isfinite(y)) or direction is Direction.same or x == y:
        return Difference(**texts, absolute="", relative="", direction=direction)
    relative = "" if entry.format is Format.percent else _relative(x, y)
    return Difference(**texts, absolute=_signed(entry, y - x), relative=relative, direction=direction)


def compare(left: Any, right: Any, paths: tuple[str, ...] | None = None) -> tuple[Difference, ...]:
    """Each figure of `paths` (default: the figures that matter) for two Designs, with the change from left to right
    and, for a predicted figure, where each design's real figure falls."""
    return tuple(
        _difference(left, right, path).model_copy(
            update={"left_range": _range(left, path, spec(path)), "right_range": _range(right, path, spec(path))}
        )
        for path in (paths or compare_paths(left, right))
    )
