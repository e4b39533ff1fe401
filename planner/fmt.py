"""Number formatting for everything the planner shows: three significant figures, thousands separated, large
numbers in words, money in one rule. The figure registry (planner.figures) picks which of these a figure uses."""

from __future__ import annotations

import math

__all__ = ["PCT_STEP", "UNBOUNDED", "down", "num", "pct", "times", "unbounded", "usd"]


UNBOUNDED = "unbounded"  # what a figure without a steady state reads as (never a raw ∞ or inf)

# from a billion up, numbers read as words: 3.13e11 -> 313 billion; each scale starts where the one below would
# round to 1,000 (999.6 billion reads 1 trillion, never "1e+03 billion")
_WORDS = ((1e12, 999.5e9, "trillion"), (1e9, 0.0, "billion"))
_TINY = 1e-3  # below this a nonzero figure reads "< 0.001" (never 1.02e-68)
_CENTS_BELOW_USD = 100.0  # money: cents below $100 ($2.50, $45.20), whole dollars from there ($160, $1,401,600)


def unbounded(cause: str = "") -> str:
    """'unbounded', or 'unbounded: <cause>' when the cause is known."""
    return f"{UNBOUNDED}: {cause}" if cause else UNBOUNDED


def _words(value: float) -> str:
    """3.13e11 -> '313 billion', 1.07e12 -> '1.07 trillion'; beyond a thousand trillion, trillions with separators."""
    for scale, starts, word in _WORDS:
        if abs(value) >= starts:
            return f"{_three_figures(value / scale)} {word}"
    raise ValueError(f"{value} is below a billion")


def _three_figures(value: float) -> str:
    """Three significant figures without an exponent: 313, 31.3, 3.13, 1; thousands separated above 999."""
    size = abs(value)
    if size >= 99.95:
        return f"{value:,.0f}"
    return f"{value:.1f}".removesuffix(".0") if size >= 9.995 else f"{value:.2f}".rstrip("0").rstrip(".")


def num(value: float, unit: str = "") -> str:
    """55.6, 8.83, 180, 19,444, 313 billion — with an optional unit after a space; an infinite figure (no steady
    state: a queue that grows without bound) reads "unbounded", without its unit."""
    if not math.isfinite(value):
        return UNBOUNDED if value > 0 else ("-" + UNBOUNDED if value < 0 else "n/a")
    size = abs(value)
    if size >= 1e9:
        text = _words(value)
    elif value != 0 and size < _TINY:
        text = "< 0.001" if value > 0 else "> -0.001"
    elif size >= 100:
        text = f"{value:,.0f}"
    elif size >= 10:
        text = f"{value:.1f}".removesuffix(".0")
    elif size >= 1:
        text = f"{value:.2f}".rstrip("0").rstrip(".") if value != int(value) else f"{value:.0f}"
    else:
        text = f"{value:.3g}"
    return f"{text} {unit}".rstrip() if unit else text


PCT_STEP = 0.001  # pct() prints fractions to 0.1%


def down(multiple: float) -> float:
    """A multiple of the load rounded down to the three figures shown: x1.157 reads x1.15, never a multiple the design
    cannot carry (the headroom's rule; every multiple of the peak a design carries is written by it)."""
    if not math.isfinite(multiple) or multiple <= 0:
        return multiple
    scale = 10 ** (2 - math.floor(math.log10(multiple)))
    return float(math.floor(multiple * scale) / scale)


def times(multiple: float) -> str:
    """A multiple of the load a design carries, rounded down: 1.2465 -> 'x1.24'."""
    return f"x{num(down(multiple))}"


def pct(fraction: float) -> str:
    """0.514 -> '51.4%'."""
    if not math.isfinite(fraction):
        return UNBOUNDED if fraction > 0 else "n/a"
    return f"{fraction * 100:.1f}%"


def usd(value: float, unit: str = "") -> str:
    """The one money rule: cents below $100 ($2.50, $4.48), whole dollars above ($160, $1,401,600), words from a
    billion ($1.2 billion); an optional unit after a space ('$4.48 per M')."""
    if not math.isfinite(value):
        return UNBOUNDED if value > 0 else "n/a"
    amount = abs(value)
    sign = "-" if value < 0 and amount >= 0.005 else ""  # what rounds to $0.00 has no sign
    if amount >= 1e9:
        text = _words(amount)
    elif amount >= _CENTS_BELOW_USD:
        text = f"{amount:,.0f}"
    else:
        text = f"{amount:,.2f}"
    return f"{sign}${text} {unit}".rstrip() if unit else f"{sign}${text}"
