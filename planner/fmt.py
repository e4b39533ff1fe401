"""Number formatting for the arithmetic the planner shows: three significant figures, thousands separated."""

from __future__ import annotations

import math

__all__ = ["UNBOUNDED", "num", "pct"]


UNBOUNDED = "unbounded"  # what a figure without a steady state reads as (never a raw ∞ or inf)


def num(value: float, unit: str = "") -> str:
    """55.6, 8.83, 180, 19,444, 3.12e+11 — with an optional unit after a space; an infinite figure (no steady
    state: a queue that grows without bound) reads "unbounded", without its unit."""
    if not math.isfinite(value):
        return UNBOUNDED if value > 0 else ("-" + UNBOUNDED if value < 0 else "n/a")
    if value != 0 and (abs(value) >= 1e9 or abs(value) < 1e-3):
        text = f"{value:.3g}"
    elif abs(value) >= 100:
        text = f"{value:,.0f}"
    elif abs(value) >= 10:
        text = f"{value:.1f}".removesuffix(".0")
    elif abs(value) >= 1:
        text = f"{value:.2f}".rstrip("0").rstrip(".") if value != int(value) else f"{value:.0f}"
    else:
        text = f"{value:.3g}"
    return f"{text} {unit}".rstrip() if unit else text


def pct(fraction: float) -> str:
    """0.514 -> '51.4%'."""
    if not math.isfinite(fraction):
        return UNBOUNDED if fraction > 0 else "n/a"
    return f"{fraction * 100:.1f}%"
