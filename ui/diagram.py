"""The architecture diagram on the Architecture page: SVG drawn by Graphviz on the server, at a legible size.

The planner writes two layouts of one picture (planner.architecture): left to right with the pools stacked,
and one column for a phone. One `dot` run on the server draws both (report.diagram, ~11 ms for a new design,
cached by the DOT text, so a design is drawn once); they are sent as SVG images and a CSS container query shows
the one that fits the column, so the browser only paints: no layout runs on its main thread. The type is drawn
at PX_PER_POINT pixels per Graphviz point (a 12-point label at 15 px); a column narrower than even the
one-column layout scrolls sideways. Without a working `dot` the page says so in one line and goes on (the pool
table below carries the figures).
"""

from __future__ import annotations

import base64
from html import escape

import streamlit as st

from planner import Design
from planner.architecture import LOAD_COLORS, LOAD_LEGEND
from planner.mechanism_diagram import MECHANISM_COLORS, MECHANISM_LEGEND, has_mechanisms
from report.diagram import svg_size, svgs_from_dots
from report.tools import ToolError
from ui.show import md

__all__ = ["PX_PER_POINT", "architecture_diagram", "diagram_alt", "diagram_html", "legend_html"]

PX_PER_POINT = 1.25  # Graphviz's 12-point labels at 15 px on screen

_CSS = """
.arch-diagram { container-type: inline-size; }
.arch-diagram .layout { overflow-x: auto; }
.arch-diagram .narrow { display: none; }
@container (max-width: WIDE_PXpx) {
  .arch-diagram .wide { display: none; }
  .arch-diagram .narrow { display: block; }
}
.arch-legend { display: flex; flex-wrap: wrap; gap: 4px 16px; font-size: 14px; margin: 6px 0 0; }
.arch-legend span.swatch { display: inline-block; width: 14px; height: 14px; border: 2px solid; border-radius: 3px;
  vertical-align: -2px; margin-right: 5px; }
"""


def _image(svg: str, alt: str, *, fit: bool) -> str:
    """The SVG as an image at PX_PER_POINT pixels a point; `fit`: it may shrink to the column instead of scrolling.

    An <img> with a data URL, not inline SVG: st.html's sanitizer keeps no <svg> element, and an image's SVG can
    run no script and load nothing."""
    width, _ = svg_size(svg)
    px = round(width * PX_PER_POINT)
    limit = "max-width: 100%" if fit else "max-width: none"
    data = base64.b64encode(svg.encode("utf-8")).decode("ascii")
    return f'<img src="data:image/svg+xml;base64,{data}" alt="{escape(alt)}" style="width: {px}px; {limit}; height: auto; display: block">'


def legend_html(mechanisms: bool = False) -> str:
    entries = [(*LOAD_COLORS[load], text) for load, text in LOAD_LEGEND]
    if mechanisms:
        entries.append((*MECHANISM_COLORS, MECHANISM_LEGEND))
    items = "".join(
        f'<span><span class="swatch" style="background: {fill}; border-color: {border}"></span>{escape(text)}</span>'
        for fill, border, text in entries
    )
    return f'<div class="arch-legend" aria-label="pool colours">{items}</div>'


def diagram_alt(design: Design) -> str:
    """The diagram in words, for a screen reader: the path of a request and each pool's box."""
    pools = "; ".join(
        f"{p.name} pool: {p.nodes} nodes, {p.replicas} replicas, TP={p.tp}"
        + (f", a replica spans {p.replica_nodes} nodes (PP={p.pp}, EP={p.ep})" if p.replica_nodes > 1 else "")
        + f", {p.load_text}"
        for p in design.architecture.pools
    )
    return f"Serving architecture: clients, API gateway, router, then {pools}."


def diagram_html(wide_svg: str, narrow_svg: str, alt: str, mechanisms: bool = False) -> str:
    """Both layouts, the legend, and the CSS that shows the layout that fits."""
    wide_px = round(svg_size(wide_svg)[0] * PX_PER_POINT)
    css = _CSS.replace("WIDE_PX", str(wide_px))
    return (
        f"<style>{css}</style>"
        '<div class="arch-diagram">'
        f'<div class="layout wide">{_image(wide_svg, alt, fit=False)}</div>'
        f'<div class="layout narrow">{_image(narrow_svg, alt, fit=True)}</div>'
        "</div>"
        f"{legend_html(mechanisms)}"
    )


def architecture_diagram(design: Design) -> None:
    """Draw the design's serving diagram, or say in one line why it cannot be drawn here."""
    arch = design.architecture
    try:
        wide, narrow = svgs_from_dots((arch.dot, arch.dot_narrow))
        html = diagram_html(wide, narrow, diagram_alt(design), has_mechanisms(design))
    except ToolError as exc:
        st.warning(md(f"The diagram cannot be drawn on this server: {exc}. The pools are listed below."))
        return
    st.html(html)
    hw = design.brief.hardware
    span = design.shape.replica_nodes
    spans = f" One replica spans {span} nodes: their GPUs step together." if span > 1 else ""
    st.caption(md(f"Every GPU node: {hw.gpus_per_node} x {design.gpu_name}.{spans}"))
