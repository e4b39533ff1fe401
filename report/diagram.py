"""The architecture diagram: the planner's Graphviz source rendered by `dot -Tsvg`, cleaned for inlining.

The planner writes the DOT text (pure); running Graphviz is IO, so it happens here in the export layer.
The SVG loses its XML prolog, its DOCTYPE (an external DTD reference) and its comments, and its fixed
size gives way to the viewBox so it scales to the column.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from functools import lru_cache

from report.errors import ExportError

__all__ = ["DiagramError", "svg_from_dot"]

_TIMEOUT_S = 30


class DiagramError(ExportError):
    """Graphviz is missing or rejected the source."""


def _dot_path() -> str:
    path = shutil.which("dot")
    if path is None:
        raise DiagramError("Graphviz 'dot' not found: install the Debian package 'graphviz' (./run test does as root)")
    return path


def _inline(svg: str) -> str:
    start = svg.find("<svg")
    if start < 0:
        raise DiagramError("dot produced no <svg> element")
    body = re.sub(r"<!--.*?-->", "", svg[start:], flags=re.S)
    root_end = body.index(">")
    root = re.sub(r'\s(width|height)="[^"]*"', "", body[:root_end])
    return f'{root} class="diagram"{body[root_end:]}'.strip()


@lru_cache(maxsize=64)
def svg_from_dot(dot: str) -> str:
    """An inline <svg> element for a DOT graph (cached: the app re-renders on every widget change)."""
    proc = subprocess.run([_dot_path(), "-Tsvg"], input=dot, capture_output=True, text=True, timeout=_TIMEOUT_S, check=False)
    if proc.returncode != 0:
        first = (proc.stderr.strip().splitlines() or ["no message"])[0]
        raise DiagramError(f"dot failed: {first}")
    return _inline(proc.stdout)
