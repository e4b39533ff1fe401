"""Latency waterfalls as inline SVG: one bar per component, each starting where the previous one ended.

Plain SVG text, no script and no library, so the HTML stays self-contained and the PDF prints it as
vectors. The numbers written on the chart are the figures' texts, passed in already formatted; the
millisecond values only place the bars. A range on the p95 (planner.uncertainty: where the real engine's p95
falls) is shaded across the chart, with a whisker on a row of its own and its legend beneath; where the plan has
no range for the setup, a line says why instead.
"""

from __future__ import annotations

import math
import textwrap
from html import escape

__all__ = ["waterfall_svg"]

_WIDTH = 480  # one width for every chart, so their type prints at one size
_VALUE_W = 46  # the step's ms, right of its bar
_CHAR_W = 4.9  # average advance of the 8-unit sans font, to size the label column to the longest name
_ROW_H = 12
_LINE_H = 10  # a long component's next line: its name wraps in the label column rather than run off the chart
_TOP = 4
_MARK_COLORS = {"target": "#b42318", "p95": "#1b1f24", "p50": "#0b5cad"}
_RANGE_COLOR = _MARK_COLORS["p95"]  # the range is the p95's
_RANGE_LABEL = "p95 range"
_MUTED = "#59636e"

_Range = tuple[str, str, float, float]  # (legend, shown "86.3 ms to 135 ms", low ms, high ms)


def _finite(ms: float) -> float:
    """A length to draw: negatives as nothing; an infinite wait (an unstable queue) is handled by the caller."""
    return ms if math.isfinite(ms) and ms > 0 else 0.0


def _scale(
    steps: tuple[tuple[str, str, float], ...], marks: tuple[tuple[str, str, float], ...], band: _Range | None, bar_area: float
) -> float:
    total = sum(_finite(ms) for _, _, ms in steps)
    high = (_finite(band[3]),) if band is not None else ()
    longest = max([total, *(_finite(ms) for _, _, ms in marks), *high], default=0.0)
    return bar_area / longest if longest > 0 else 0.0


def _range(band: _Range, label_w: float, px_per_ms: float, top: float, row_y: float) -> list[str]:
    """The p95's range: shaded from the bars' top down to its own row, where a whisker runs from low to high, and its
    legend with the range written out on the row beneath (the high end often reaches the chart's right edge, where
    no text fits beside it)."""
    legend, shown, low_ms, high_ms = band
    x0, x1 = label_w + _finite(low_ms) * px_per_ms, label_w + _finite(high_ms) * px_per_ms
    mid = row_y - 3
    legend_y = row_y + _ROW_H
    return [
        f'<rect class="range" x="{x0:.2f}" y="{top}" width="{max(x1 - x0, 0.8):.2f}" height="{mid - top:.2f}" fill="{_RANGE_COLOR}"'
        ' fill-opacity="0.12"/>',
        f'<text x="{label_w - 4:.1f}" y="{row_y:.2f}" text-anchor="end" fill="{_RANGE_COLOR}" font-weight="bold">{_RANGE_LABEL}</text>',
        f'<path class="whisker" d="M{x0:.2f} {mid - 3:.2f}V{mid + 3:.2f}M{x0:.2f} {mid:.2f}H{x1:.2f}M{x1:.2f} {mid - 3:.2f}V{mid + 3:.2f}"'
        f' stroke="{_RANGE_COLOR}" stroke-width="1.5" fill="none"/>',
        f'<rect class="swatch" x="2" y="{legend_y - 7:.2f}" width="8" height="8" fill="{_RANGE_COLOR}" fill-opacity="0.12"'
        f' stroke="{_RANGE_COLOR}" stroke-width="0.6"/>',
        f'<text x="13" y="{legend_y:.2f}" fill="{_MUTED}">{escape(legend)}: <tspan fill="{_RANGE_COLOR}">{escape(shown)}</tspan></text>',
    ]


def _label(text: str, lines: list[str], x: float, y: float) -> str:
    """A component's name, right-aligned at x, on its wrapped lines (the first at y)."""
    rest = "".join(f'<tspan x="{x:.1f}" dy="{_LINE_H}">{escape(line)}</tspan>' for line in lines[1:])
    return f'<text x="{x:.1f}" y="{y}" text-anchor="end" fill="#1b1f24">{escape(lines[0] if rest else text)}{rest}</text>'


def waterfall_svg(
    title: str,
    steps: tuple[tuple[str, str, float], ...],
    marks: tuple[tuple[str, str, float], ...],
    band: _Range | None = None,
    band_note: str = "",
) -> str:
    """steps: (component, shown ms, ms); marks: (name, shown ms, ms) drawn as vertical lines (p50, p95, target);
    band: the p95's range (legend, shown, low ms, high ms), drawn under the marks with its legend beneath; band_note:
    a line said instead of a band (the setup lies outside the calibrated data).

    An infinite step or mark (a queue that never drains) is drawn to the right edge, labelled with its text.
    """
    labels = [label for label, _, _ in steps + marks] + ([_RANGE_LABEL] if band is not None else [])
    label_w = min(8 + _CHAR_W * max((len(label) for label in labels), default=0), _WIDTH / 2)
    bar_area = _WIDTH - label_w - _VALUE_W
    px_per_ms = _scale(steps, marks, band, bar_area)
    width = _WIDTH
    chars = max(int((label_w - 8) / _CHAR_W), 1)
    wrapped = [textwrap.wrap(component, chars, break_long_words=False) or [component] for component, _, _ in steps]
    row_tops = [_TOP + _ROW_H * i + _LINE_H * sum(len(w) - 1 for w in wrapped[:i]) for i in range(len(steps))]
    rows_h = _ROW_H * len(steps) + _LINE_H * sum(len(w) - 1 for w in wrapped)
    extra_rows = 2 if band is not None else 1 if band_note else 0  # the range's row and its legend, or the note
    height = _TOP + rows_h + 6 + _ROW_H * (len(marks) + extra_rows)
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="waterfall" viewBox="0 0 {width} {height}" role="img"'
        f' aria-label="{escape(title)}" font-family="DejaVu Sans, Arial, sans-serif" font-size="8">'
    ]
    below_marks = _TOP + rows_h + 6 + len(marks) * _ROW_H  # the rows under the marks' labels
    if band is not None:  # first, so the bars and the marks are drawn over the shading
        parts += _range(band, label_w, px_per_ms, _TOP, below_marks + _ROW_H - 3.5)
    elif band_note:
        parts.append(f'<text x="2" y="{below_marks + _ROW_H - 3.5:.2f}" fill="{_MUTED}">{escape(band_note)}</text>')
    edge = label_w + bar_area  # infinite values run to here
    start = 0.0
    for (component, shown, ms), y, lines in zip(steps, row_tops, wrapped, strict=True):
        x = min(label_w + start * px_per_ms, edge)
        bar = edge - x if ms == math.inf else _finite(ms) * px_per_ms
        parts.append(_label(component, lines, label_w - 4, y + 8.5))
        parts.append(f'<rect x="{x:.2f}" y="{y + 1.5}" width="{max(bar, 0.8):.2f}" height="{_ROW_H - 3}" fill="#6ea8dc"/>')
        parts.append(f'<text x="{x + bar + 3:.2f}" y="{y + 8.5}" fill="#59636e">{escape(shown)}</text>')
        start += _finite(ms)
    bottom = _TOP + rows_h
    for j, (name, shown, ms) in enumerate(marks):
        x = edge if ms == math.inf else label_w + _finite(ms) * px_per_ms
        color = _MARK_COLORS.get(name, "#1b1f24")
        dash = ' stroke-dasharray="3 2"' if name == "target" else ""
        label_y = bottom + 6 + (j + 1) * _ROW_H - 3.5
        parts.append(f'<line x1="{x:.2f}" y1="{_TOP}" x2="{x:.2f}" y2="{label_y - 7:.2f}" stroke="{color}" stroke-width="1.2"{dash}/>')
        parts.append(
            f'<text x="{label_w - 4:.1f}" y="{label_y:.2f}" text-anchor="end" fill="{color}" font-weight="bold">{escape(name)}</text>'
        )
        parts.append(f'<text x="{x + 3:.2f}" y="{label_y:.2f}" fill="{color}">{escape(shown)}</text>')
    parts.append("</svg>")
    return "".join(parts)
