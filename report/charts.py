"""Latency waterfalls as inline SVG: one bar per component, each starting where the previous one ended.

Plain SVG text, no script and no library, so the HTML stays self-contained and the PDF prints it as
vectors. The numbers written on the chart are the figures' texts, passed in already formatted; the
millisecond values only place the bars.
"""

from __future__ import annotations

import math
from html import escape

__all__ = ["waterfall_svg"]

_WIDTH = 480  # one width for every chart, so their type prints at one size
_VALUE_W = 46  # the step's ms, right of its bar
_CHAR_W = 4.9  # average advance of the 8-unit sans font, to size the label column to the longest name
_ROW_H = 12
_TOP = 4
_MARK_COLORS = {"target": "#b42318", "p95": "#1b1f24", "p50": "#0b5cad"}


def _finite(ms: float) -> float:
    """A length to draw: negatives as nothing; an infinite wait (an unstable queue) is handled by the caller."""
    return ms if math.isfinite(ms) and ms > 0 else 0.0


def _scale(steps: tuple[tuple[str, str, float], ...], marks: tuple[tuple[str, str, float], ...], bar_area: float) -> float:
    total = sum(_finite(ms) for _, _, ms in steps)
    longest = max([total, *(_finite(ms) for _, _, ms in marks)], default=0.0)
    return bar_area / longest if longest > 0 else 0.0


def waterfall_svg(
    title: str,
    steps: tuple[tuple[str, str, float], ...],
    marks: tuple[tuple[str, str, float], ...],
) -> str:
    """steps: (component, shown ms, ms); marks: (name, shown ms, ms) drawn as vertical lines (p50, p95, target).

    An infinite step or mark (a queue that never drains) is drawn to the right edge, labelled with its text.
    """
    label_w = min(8 + _CHAR_W * max((len(label) for label, _, _ in steps + marks), default=0), _WIDTH / 2)
    bar_area = _WIDTH - label_w - _VALUE_W
    px_per_ms = _scale(steps, marks, bar_area)
    width = _WIDTH
    rows_h = _ROW_H * len(steps)
    height = _TOP + rows_h + 6 + _ROW_H * len(marks)
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="waterfall" viewBox="0 0 {width} {height}" role="img"'
        f' aria-label="{escape(title)}" font-family="DejaVu Sans, Arial, sans-serif" font-size="8">'
    ]
    edge = label_w + bar_area  # infinite values run to here
    start = 0.0
    for i, (component, shown, ms) in enumerate(steps):
        y = _TOP + i * _ROW_H
        x = min(label_w + start * px_per_ms, edge)
        bar = edge - x if ms == math.inf else _finite(ms) * px_per_ms
        parts.append(f'<text x="{label_w - 4:.1f}" y="{y + 8.5}" text-anchor="end" fill="#1b1f24">{escape(component)}</text>')
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
