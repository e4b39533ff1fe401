"""Every figure the document shows passes through here: looked up on the Design by its path, then formatted.

The renderer never writes a number of its own. `Figures` resolves a dotted path ("capacity.utilization",
"slo.ttft_waterfall.3.ms") on the Design, formats the value with `format_figure` (the planner's own
`num`/`pct`, so the document reads like the arithmetic), and records (path, style, text). The tests
re-resolve every recorded path on a fresh plan and on `python -m planner plan --json`, and check that
once the recorded texts are removed the document holds no digit at all.
"""

from __future__ import annotations

import math
from enum import Enum
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from planner.fmt import UNBOUNDED, num, pct

__all__ = ["Figure", "Figures", "Style", "format_figure", "resolve"]

# dot: Graphviz source, drawn as SVG in HTML; change: a relative change already in percent (+48.1%)
Style = Literal["num", "pct", "usd", "text", "dot", "yes_no", "change"]


class Figure(BaseModel):
    """One figure as shown: where it comes from in the Design, how it was formatted, and the text."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    path: str
    style: Style
    unit: str
    text: str


def resolve(root: Any, path: str) -> Any:
    """Walk a dotted path through attributes, dict keys and tuple indices ("failures.0.utilization")."""
    value = root
    for part in path.split("."):
        if isinstance(value, dict):
            value = value[part]
        elif isinstance(value, (list, tuple)):
            value = value[int(part)]
        else:
            value = getattr(value, part)
    return value


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
    if style == "usd":  # cents below $100 ($2.50, $4.48), the planner's num above ($160, $1,401,600)
        amount = float(value)
        text = f"{amount:.2f}" if abs(amount) < 100 else num(amount)
        return f"${text} {unit}".rstrip() if unit else f"${text}"
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

    def value(self, path: str) -> Any:
        """The raw value, for choices the renderer makes (which row to bold, a bar's length), never shown."""
        return resolve(self._design, path)

    @property
    def used(self) -> tuple[Figure, ...]:
        return tuple(self._used.values())
