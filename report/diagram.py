"""The architecture diagram: the planner's Graphviz source rendered by `dot -Tsvg`, cleaned for inlining.

The planner writes the DOT text (pure); running Graphviz is IO, so it happens here in the export layer,
bounded by the tool timeout (report.tools: a missing, failing or hung `dot` is one ToolError line naming
it and the package to install). The SVG loses its XML prolog, its DOCTYPE (an external DTD reference) and
its comments, and its fixed size gives way to the viewBox so it scales to its container; `svg_size` reads
that natural size back, for a page that wants the diagram's type at a stated size.
"""

from __future__ import annotations

import re
from functools import lru_cache

from report.tools import DOT, ToolError, run_tool

__all__ = ["svg_from_dot", "svg_size", "svg_with_style", "svgs_from_dots"]

_VIEWBOX = re.compile(r'viewBox="[-\d.]+ [-\d.]+ ([\d.]+) ([\d.]+)"')


def _inline(svg: str) -> str:
    start = svg.find("<svg")
    if start < 0:
        raise ToolError(DOT, "wrote no <svg> element")
    body = re.sub(r"<!--.*?-->", "", svg[start:], flags=re.S)
    root_end = body.index(">")
    root = re.sub(r'\s(width|height)="[^"]*"', "", body[:root_end])
    return f'{root} class="diagram"{body[root_end:]}'.strip()


@lru_cache(maxsize=128)
def svgs_from_dots(dots: tuple[str, ...]) -> tuple[str, ...]:
    """Inline <svg> elements for several DOT graphs, drawn by one `dot` run (a design's two layouts: one process
    start instead of two, about half the time). Cached by the DOT texts, which are a pure function of the design:
    a design's diagram is drawn once, and moving a control back to a value seen before draws nothing."""
    documents = [d for d in re.split(r"(?=<\?xml)", run_tool(DOT, ["-Tsvg"], "".join(dots))) if d.strip()]
    if len(documents) != len(dots):
        raise ToolError(DOT, f"wrote {len(documents)} drawings for {len(dots)} graphs")
    return tuple(_inline(document) for document in documents)


def svg_from_dot(dot: str) -> str:
    """An inline <svg> element for one DOT graph (cached like svgs_from_dots)."""
    return svgs_from_dots((dot,))[0]


def svg_size(svg: str) -> tuple[float, float]:
    """The diagram's natural width and height in points (Graphviz's units: a 12-point label is 12 units tall)."""
    found = _VIEWBOX.search(svg[: svg.find(">") + 1])
    if found is None:
        raise ToolError(DOT, "wrote an <svg> element without a viewBox")
    return float(found.group(1)), float(found.group(2))


def svg_with_style(svg: str, style: str) -> str:
    """The <svg> element with a style attribute on its root (sizes a page sets, as CSS custom properties)."""
    return re.sub(r"<svg\b", f'<svg style="{style}"', svg, count=1)
