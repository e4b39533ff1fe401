"""Every figure the document shows passes through here: looked up on the Design by its path, then formatted.

The renderer never writes a number of its own. `Figures` resolves a dotted path ("capacity.utilization",
"slo.ttft_waterfall.3.ms") on the Design, formats the value with `format_figure` (the planner's own
`num`/`pct`/`usd`, so the document reads like the arithmetic and the app), and records (path, style, text).
`Figures.figure(path)` writes a figure in the format and unit the figure registry (planner.figures) gives it. The tests
re-resolve every recorded path on a fresh plan and on `python -m planner plan --json`, and check that
once the recorded texts are removed the document holds no digit at all.
"""

from __future__ import annotations

import math
from enum import Enum
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from planner.figures import Format, deadline_unit, resolve, spec
from planner.fmt import UNBOUNDED, num, pct, usd

__all__ = ["Figure", "Figures", "Style", "format_figure", "resolve"]

# dot: Graphviz source, drawn as SVG in HTML; change: a relative change already in percent (+48.1%); duration: seconds
# written in the unit ("h" or "s") the design's deadline is stated in
Style = Literal["num", "pct", "usd", "text", "dot", "yes_no", "change", "duration"]

# the registry's formats (planner.figures.Format) as the document's styles
_STYLE_OF: dict[Format, Style] = {
    Format.number: "num",
    Format.integer: "num",
    Format.multiple: "num",
    Format.percent: "pct",
    Format.money: "usd",
    Format.text: "text",
    Format.yes_no: "yes_no",
    Format.duration: "duration",
}
_SECONDS_IN = {"h": 3600.0, "s": 1.0}


class Figure(BaseModel):
    """One figure as shown: where it comes from in the Design, how it was formatted, and the text."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    path: str
    style: Style
    unit: str
    text: str


def format_figure(value: Any, style: Style, unit: str = "") -> str:
    """The one formatting function: the planner's num/pct, dollars, verbatim text, or yes/no."""
    if style in ("text", "dot"):
        return str(value.value if isinstance(value, Enum) else value)
    if style == "yes_no":
        return "yes" if value else "no"
    if value is None:
        return "n/a"
    if style == "pct":
        return pct(float(value))
    if style == "change":
        change = float(value)
        return f"{change:+.1f}%" if math.isfinite(change) else (UNBOUNDED if change > 0 else "n/a")
    if style == "duration":  # a job's time in hours, a rollout's in seconds (planner.figures.deadline_unit)
        return num(float(value) / _SECONDS_IN[unit], unit)
    if style == "usd":  # the one money rule (planner.fmt.usd): $2.50, $4.48, $160, $1,401,600
        return usd(float(value), unit)
    return num(float(value), unit)


class Figures:
    """Formats figures taken from one Design and remembers each one it gave out."""

    def __init__(self, design: Any) -> None:
        self._design = design
        self._used: dict[tuple[str, Style, str], Figure] = {}

    def _get(self, path: str, style: Style, unit: str = "") -> str:
        text = format_figure(resolve(self._design, path), style, unit)
        self._used.setdefault((path, style, unit), Figure(path=path, style=style, unit=unit, text=text))
        return text

    def num(self, path: str, unit: str = "") -> str:
        return self._get(path, "num", unit)

    def pct(self, path: str) -> str:
        return self._get(path, "pct")

    def usd(self, path: str, unit: str = "") -> str:
        return self._get(path, "usd", unit)

    def text(self, path: str) -> str:
        return self._get(path, "text")

    def dot(self, path: str) -> str:
        return self._get(path, "dot")

    def change(self, path: str) -> str:
        return self._get(path, "change")

    def yes_no(self, path: str) -> str:
        return self._get(path, "yes_no")

    def figure(self, path: str, registered_as: str | None = None) -> str:
        """The value at `path` in the registry's format and unit (planner.figures) for the figure registered at
        `registered_as` (default: `path` itself; a diff's baseline is written as the figure it is a value of)."""
        entry = spec(registered_as or path)
        unit = deadline_unit(self._design) if entry.format is Format.duration else entry.unit
        return self._get(path, _STYLE_OF[entry.format], unit)

    def duration(self, path: str) -> str:
        """A time in seconds in the unit the design's deadline is stated in: 8.28 h for a job, 244 s for a rollout."""
        return self._get(path, "duration", deadline_unit(self._design))

    @staticmethod
    def label(path: str) -> str:
        """The registry's name of the figure at a plan path."""
        return spec(path).label

    def value(self, path: str) -> Any:
        """The raw value, for choices the renderer makes (which row to bold, a bar's length), never shown."""
        return resolve(self._design, path)

    @property
    def used(self) -> tuple[Figure, ...]:
        return tuple(self._used.values())
