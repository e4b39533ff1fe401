"""Error bands on the plan's predictions, from how far the planner missed measurements it had not seen.

scripts/calibrate.py predicts every published measurement with constants fitted without that measurement's source
(leave-one-source-out) and stores the spread of ln(predicted / measured) per metric kind in
planner/calibration/bands.json. A figure's band divides it by the 90th and the 10th percentile of that spread: an
80% range for where the real engine's figure falls, if this setup misses the way held-out setups missed. Where the
setup lies outside the calibrated data (a GPU or an engine without rows), the band says so and takes the widest
spread of any metric, doubled: a narrow band there would be a claim the data cannot back.
"""

from __future__ import annotations

import json
import math
from functools import cached_property
from pathlib import Path

from pydantic import BaseModel, ConfigDict, PrivateAttr, computed_field

from planner.brief import Brief, Efficiency
from planner.fmt import num, pct
from planner.trusted import trusted

__all__ = ["Band", "Uncertainty", "outside_note", "range_text", "ranges_line", "uncertainty"]

BANDS_FILE = Path(__file__).resolve().parent / "calibration" / "bands.json"
_OUTSIDE_WIDENING = 2.0  # outside the data: the widest spread, doubled
_DEFAULT_EFFICIENCY = Efficiency()  # the calibrated constants: a brief that states others is not what the bands check


class Band(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    figure: str  # the plan's JSON path
    value: float
    low: float
    high: float
    kind: str  # which residuals: ttft, itl, throughput

    @computed_field  # type: ignore[prop-decorator]
    @property
    def plan_error(self) -> str:
        """'under' when the range of the real figure lies above the plan's own (the planner under-predicts it), 'over'
        when below, '' when the range holds the figure."""
        if not (math.isfinite(self.value) and self.value > 0) or self.low <= self.value <= self.high:
            return ""
        return "under" if self.value < self.low else "over"

    @computed_field  # type: ignore[prop-decorator]
    @property
    def plan_error_near(self) -> float:
        """How far the nearer end of the range lies from the plan's figure, relative to it (0 inside the range)."""
        return min(abs(self.low / self.value - 1), abs(self.high / self.value - 1)) if self.plan_error else 0.0

    @computed_field  # type: ignore[prop-decorator]
    @property
    def plan_error_far(self) -> float:
        """How far the farther end of the range lies from the plan's figure, relative to it (0 inside the range)."""
        return max(abs(self.low / self.value - 1), abs(self.high / self.value - 1)) if self.plan_error else 0.0

    @property
    def plus_minus(self) -> float:
        """Half the band's width relative to the value (for "±x%")."""
        if not (math.isfinite(self.value) and self.value > 0 and math.isfinite(self.high)):
            return math.inf
        return (self.high - self.low) / 2 / self.value


class Uncertainty(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    coverage: float
    basis: str
    calibrated: bool  # the setup lies inside the calibrated data (its GPU and engine have rows)
    _figures: dict[str, float] = PrivateAttr()  # the plan's headline predictions by JSON path: what the bands range

    @computed_field  # type: ignore[prop-decorator]
    @cached_property
    def bands(self) -> tuple[Band, ...]:
        """Each finite prediction's range, worked out on first read (a page, the JSON, the document)."""
        return _bands_of(self._figures, self.calibrated)

    def band(self, figure: str) -> Band | None:
        return next((b for b in self.bands if b.figure == figure), None)

    def range_of(self, value: float, kind: str) -> tuple[float, float]:
        """(low, high) of any predicted latency of a metric kind (ttft, itl) on the bands' basis: a curve's or a
        scenario's p95, or a mean gap, with the same spread and coverage as the plan's own figures. An unbounded
        value has an unbounded range."""
        if not (math.isfinite(value) and value > 0):
            return value, value
        band = _band("", value, kind, self.calibrated)
        return band.low, band.high

    @property
    def legend(self) -> str:
        """How a chart names its range, in the verdict bar's words: 'real engine, 80% range (held-out error)'."""
        return f"real engine, {self.coverage * 100:.0f}% range (held-out error)"


def _read_bands() -> dict[str, object]:
    data: dict[str, object] = json.loads(BANDS_FILE.read_text(encoding="utf-8"))
    return data


# Read once, at import: the calibration's output ships with the package (scripts/calibrate.py rewrites it), as constant
# as the catalog, so a plan opens no file (an lru_cache here was emptied with the planner's caches: a read a plan).
_BANDS = _read_bands()


def _bands() -> dict[str, object]:
    return _BANDS


def _spread(kind: str, inside: bool) -> tuple[float, float]:
    """(log p10, log p90) of ln(predicted / measured) for a metric kind."""
    kinds: dict[str, dict[str, float]] = _bands()["by_kind"]  # type: ignore[assignment]
    if inside and kind in kinds:
        return kinds[kind]["log_p10"], kinds[kind]["log_p90"]
    widest = max(max(abs(k["log_p10"]), abs(k["log_p90"])) for k in kinds.values()) * _OUTSIDE_WIDENING
    return -widest, widest


def _band(figure: str, value: float, kind: str, inside: bool, *, inverse: bool = False) -> Band:
    """The range of the real figure: the prediction divided by its typical over-prediction at p90 and p10. A figure
    that is the inverse of a prediction (replicas needed from a capacity) takes the inverse range."""
    p10, p90 = _spread(kind, inside)
    low, high = value / math.exp(p90), value / math.exp(p10)
    if inverse:
        low, high = value * math.exp(p10), value * math.exp(p90)
    return Band(figure=figure, value=value, low=low, high=high, kind=kind)


def uncertainty(brief: Brief, figures: dict[str, float], gpu_key: str) -> Uncertainty:
    """Bands for the plan's headline predictions. `figures` maps JSON paths to values; a path ending in a step,
    latency or capacity is banded by its kind."""
    data = _bands()
    gpus: list[str] = data["gpus"]  # type: ignore[assignment]
    engine_rows: dict[str, int] = data["engines"]  # type: ignore[assignment]
    inside = gpu_key in gpus and engine_rows.get("vllm", 0) + engine_rows.get("trtllm", 0) > 0
    own_constants = brief.efficiency != _DEFAULT_EFFICIENCY
    basis = (
        f"leave-one-source-out residuals of {data['rows']} published measurements ({data['sources']} sources):"
        f" the {int(float(data['coverage']) * 100)}% range of ln(predicted / measured) per metric kind"  # type: ignore[arg-type]
    )
    if not inside:
        basis += f"; no measurements on this GPU ({gpu_key}): outside the calibrated data, the widest spread doubled"
    if own_constants:
        basis += "; the brief sets its own efficiencies, so the band is the calibration's spread, not a check of them"
    result = trusted(Uncertainty, coverage=float(data["coverage"]), basis=basis, calibrated=inside)  # type: ignore[arg-type]
    result._figures = figures
    return result


def _bands_of(figures: dict[str, float], inside: bool) -> tuple[Band, ...]:
    """A band for each finite figure, by the kind its JSON path names (a replica count: a capacity's inverse)."""
    bands = []
    for path, value in figures.items():
        if not math.isfinite(value):
            continue
        kind = "ttft" if "ttft" in path else "throughput" if ("capacity_rate" in path or "replicas" in path) else "itl"
        bands.append(_band(path, value, kind, inside, inverse="replicas" in path))
    return tuple(bands)


def outside_note(value: float, low: float, high: float, unit: str = "ms", *, short: bool = False) -> str:
    """Why a range may leave out its own figure: the held-out measurements of that metric sit mostly on one side of
    the planner's predictions (TTFT: the real engine was slower in over 90% of them), so the range of the real figure
    lies above (or below) the predicted one. '' when the range holds the value; `short` for a chart's legend row
    ('plan 0.8% to 57.8% low')."""
    if not (math.isfinite(value) and value > 0) or low <= value <= high:
        return ""
    word = "under" if value < low else "over"
    near, far = sorted((abs(low / value - 1), abs(high / value - 1)))
    if short:
        return f"plan {pct(near)} to {pct(far)} {'low' if word == 'under' else 'high'}"
    return f"the plan's {num(value, unit)} {word}-predicts it by {pct(near)} to {pct(far)}"


def range_text(value: float, low: float, high: float, unit: str = "ms") -> str:
    """'6.46 to 21.1 ms', or with the reason when the range leaves out the value:
    '86.3 to 135 ms: the plan's 85.6 ms under-predicts it by 0.8% to 57.8%'."""
    text = f"{num(low)} to {num(high, unit)}"
    note = outside_note(value, low, high, unit)
    return f"{text}: {note}" if note else text


def ranges_line(u: Uncertainty, figures: tuple[tuple[str, str], ...]) -> str:
    """'p95 TTFT 85.4 to 134 ms; p95 ITL 6.46 to 21.1 ms' for (name, path) pairs the plan bands ('' when none); a range
    that leaves out the plan's own figure says why (outside_note)."""
    parts = []
    for name, path in figures:
        b = u.band(path)
        if b is not None and math.isfinite(b.low) and math.isfinite(b.high):
            parts.append(f"{name} {range_text(b.value, b.low, b.high)}")
    return "; ".join(parts)
