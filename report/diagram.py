"""The architecture diagram: the planner's Graphviz source rendered by `dot -Tsvg`, cleaned for inlining.

The planner writes the DOT text (pure); running Graphviz is IO, so it happens here in the export layer,
bounded by the tool timeout (report.tools: a missing, failing or hung `dot` is one ToolError line naming
it and the package to install). The SVG loses its XML prolog, its DOCTYPE (an external DTD reference) and
its comments, and its fixed size gives way to the viewBox so it scales to the column.
"""

from __future__ import annotations

import re
from functools import lru_cache

from report.tools import DOT, ToolError, run_tool

__all__ = ["svg_from_dot"]


def _inline(svg: str) -> str:
    start = svg.find("<svg")
    if start < 0:
        raise ToolError(DOT, "wrote no <svg> element")
    body = re.sub(r"<!--.*?-->", "", svg[start:], flags=re.S)
    root_end = body.index(">")
    root = re.sub(r'\s(width|height)="[^"]*"', "", body[:root_end])
    return f'{root} class="diagram"{body[root_end:]}'.strip()


@lru_cache(maxsize=64)
def svg_from_dot(dot: str) -> str:
    """An inline <svg> element for a DOT graph (cached: the same design's diagram is drawn once)."""
    return _inline(run_tool(DOT, ["-Tsvg"], dot))
