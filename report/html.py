"""The design document as one self-contained HTML file: inline CSS and SVG, no script, no external reference.

The same file is what the PDF prints (report/pdf.py). On screen it reads top to bottom: the page, then the
appendix with the arithmetic. The print CSS sets the page alone on one A4 sheet: the header, the architecture
diagram across the top with its legend, then two columns; body type BODY_PT (a scale that fits the page may
take it to MIN_BODY_PT, no further), the footnote FOOTNOTE_PT (at least MIN_FOOTNOTE_PT). The appendix is not
printed. The diagram's labels print at the body size: its width is set from its natural size
(report.diagram.svg_size) so that Graphviz's DIAGRAM_FONT_PT becomes BODY_PT.
"""

from __future__ import annotations

import re
from html import escape
from typing import Any

from planner.architecture import DIAGRAM_FONT_PT
from planner.naming import DesignName
from report.charts import waterfall_svg
from report.diagram import svg_from_dot, svg_size, svg_with_style
from report.document import APPENDIX_TITLE, Block, Bullets, Code, Diagram, Document, Lines, Section, Table, Waterfall, build_document

__all__ = [
    "BODY_PT",
    "FOOTNOTE_PT",
    "MARGIN_MM",
    "MIN_BODY_PT",
    "MIN_FOOTNOTE_PT",
    "PAGE_CSS",
    "PAGE_MM",
    "html_from_document",
    "render_html",
]

PAGE_MM = (210, 297)  # A4 portrait, width x height
MARGIN_MM = (9, 8)  # left and right, top and bottom
BODY_PT = 8.5  # the printed page's body type, and its smallest but the footnote's
MIN_BODY_PT = 8.0  # no printed text is smaller, but the footnote, whatever scale fits the page (report.pdf)
FOOTNOTE_PT = 7.5  # the footnote's type
MIN_FOOTNOTE_PT = 7.0  # and its floor, whatever scale fits the page
_VALUE_CHARS = 14  # a figure this short is kept on one line ("25.7 ms", "$1,401,600")
_SHORT_TABLE_ROWS = 8  # a table this short is not split across the columns
SCREEN_PX_PER_POINT = 1.25  # the diagram on screen: Graphviz's 12-point labels at 15 px

PAGE_CSS = f"""
:root {{ --ink: #1b1f24; --muted: #59636e; --rule: #d0d7de; --accent: #0b5cad; --bad: #b42318; --good: #1a7f37; }}
* {{ box-sizing: border-box; }}
body {{ margin: 0; color: var(--ink); font: 14px/1.4 "DejaVu Sans", "Liberation Sans", Arial, sans-serif; }}
main {{ max-width: 1100px; margin: 0 auto; padding: 16px 20px; }}
header h1 {{ font-size: 22px; margin: 0 0 2px; }}
header p {{ margin: 0 0 2px; }}
.subtitle {{ color: var(--muted); }}
.summary {{ font-weight: bold; border-bottom: 2px solid var(--accent); padding-bottom: 4px; margin-bottom: 8px; }}
section {{ margin: 0 0 10px; }}
h2 {{ font-size: 16px; color: var(--accent); margin: 0 0 3px; break-after: avoid; }}
table {{ border-collapse: collapse; width: 100%; margin: 0 0 3px; }}
table.short {{ break-inside: avoid; }}
th, td {{ text-align: left; vertical-align: top; padding: 1px 5px 1px 0; border-bottom: 1px solid var(--rule); }}
th {{ color: var(--muted); font-weight: normal; white-space: nowrap; }}
tr {{ break-inside: avoid; }}
td.value {{ white-space: nowrap; font-variant-numeric: tabular-nums; }}
td.note {{ color: var(--muted); font-size: 0.9em; }}
tr.emph td {{ font-weight: bold; }}
p.line {{ margin: 0 0 2px; break-inside: avoid; }}
ul, ol {{ margin: 0; padding-left: 16px; }}
li {{ break-inside: avoid; }}
pre.code {{ background: #f6f8fa; padding: 3px 4px; margin: 0 0 3px; white-space: pre-wrap; break-inside: avoid; font-size: 0.9em; }}
figure {{ margin: 0 0 6px; break-inside: avoid; }}
figcaption {{ color: var(--muted); }}
svg.waterfall {{ display: block; width: 100%; max-width: 640px; height: auto; }}
section.wide .head {{ display: flex; flex-wrap: wrap; align-items: baseline; gap: 2px 18px; }}
figure.diagram {{ margin: 2px 0 4px; }}
figure.diagram svg {{ display: block; margin: 0 auto; width: var(--screen-width); max-width: 100%; height: auto; }}
.legend {{ display: flex; flex-wrap: wrap; gap: 2px 14px; margin: 0; padding: 0; list-style: none; color: var(--muted); }}
.swatch {{ display: inline-block; width: 0.9em; height: 0.9em; border: 1.5px solid; border-radius: 2px; vertical-align: -0.1em;
  margin-right: 4px; print-color-adjust: exact; -webkit-print-color-adjust: exact; }}
.no {{ color: var(--bad); font-weight: bold; }}
.yes {{ color: var(--good); font-weight: bold; }}
.appendix {{ border-top: 3px double var(--rule); margin-top: 14px; padding-top: 8px; }}
footer {{ display: none; }}
@page {{ size: A4; margin: {MARGIN_MM[1]}mm {MARGIN_MM[0]}mm; }}
@media print {{
  body {{ font-size: {BODY_PT}pt; line-height: 1.2; }}
  main {{ max-width: none; padding: 0; }}
  header h1 {{ font-size: 13pt; }}
  .subtitle {{ display: -webkit-box; -webkit-line-clamp: 2; -webkit-box-orient: vertical; overflow: hidden; }}
  h2 {{ font-size: 9.5pt; margin-bottom: 1pt; }}
  th, td.note, pre.code, figcaption {{ font-size: {BODY_PT}pt; }}  /* the smallest body type: a scale to fit may take it to MIN_BODY_PT */
  section {{ margin-bottom: 5pt; }}
  section.wide .head {{ gap: 1pt 12pt; }}
  .legend {{ gap: 1pt 10pt; font-size: {BODY_PT}pt; }}
  figure.diagram svg {{ width: var(--print-width); }}
  .flow {{ column-count: 2; column-gap: 6mm; column-rule: 1px solid var(--rule); }}
  .appendix {{ display: none; }}
  footer {{ display: block; font-size: {FOOTNOTE_PT}pt; color: var(--muted); border-top: 1px solid var(--rule); margin-top: 3pt; }}
}}
"""

_PRINT_NOTE = (
    "<footer>The arithmetic behind every figure (capacity, operating point, latency waterfalls, every failure mode"
    " with its note, the cost levers, the decisions and each engine flag's reason) is in the appendix of the HTML and"
    " Markdown versions of this document.</footer>"
)


def _yes_no(text: str) -> str:
    css = {"yes": "yes", "no": "no"}.get(text)
    return f'<span class="{css}">{escape(text)}</span>' if css else escape(text)


def _table(block: Table) -> str:
    head = "".join(f"<th>{escape(h)}</th>" for h in block.header)
    body = []
    for i, row in enumerate(block.rows):
        cells = []
        for j, cell in enumerate(row):
            css = "note" if j == block.note_column else ("value" if j >= 1 and len(cell) <= _VALUE_CHARS else "")
            cells.append(f'<td class="{css}">{_yes_no(cell)}</td>' if css else f"<td>{_yes_no(cell)}</td>")
        emph = ' class="emph"' if i in block.emphasis_rows else ""
        body.append(f"<tr{emph}>{''.join(cells)}</tr>")
    drop = f' data-drop="{block.drop}"' if block.drop else ""
    short = ' class="short"' if len(block.rows) <= _SHORT_TABLE_ROWS else ""  # kept in one column
    return f"<table{short}{drop}><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"


def _block(block: Block) -> str:
    if isinstance(block, Table):
        return _table(block)
    if isinstance(block, Lines):
        lines = [f"<b>{escape(label)}:</b> {_yes_no(text)}" for label, text in block.items]
        drop = f' data-drop="{block.drop}"' if block.drop else ""
        if block.inline:
            return f'<p class="line"{drop}>{" · ".join(lines)}</p>'
        return "".join(f'<p class="line"{drop}>{line}</p>' for line in lines)
    if isinstance(block, Bullets):
        tag = "ol" if block.numbered else "ul"
        return f"<{tag}>" + "".join(f"<li>{escape(item)}</li>" for item in block.items) + f"</{tag}>"
    if isinstance(block, Waterfall):
        return f"<figure><figcaption>{escape(block.title)}</figcaption>{waterfall_svg(block.title, block.steps, block.marks, block.band, block.band_note)}</figure>"
    if isinstance(block, Code):  # a wrapped command runs its continued lines together, and wraps at the column
        text = re.sub(r"\s*\\\n\s*", " ", block.text) if block.wrap else block.text
        return f'<pre class="code">{escape(text)}</pre>'
    if isinstance(block, Diagram):
        return _diagram(block)
    raise TypeError(f"unknown block {type(block).__name__}")


def _diagram(block: Diagram) -> str:
    """The SVG, its labels printed at BODY_PT and shown at SCREEN_PX_PER_POINT on screen."""
    svg = svg_from_dot(block.dot)
    width, _ = svg_size(svg)
    sizes = f"--screen-width: {width * SCREEN_PX_PER_POINT:.0f}px; --print-width: {width * BODY_PT / DIAGRAM_FONT_PT:.1f}pt"
    return f'<figure class="diagram">{svg_with_style(svg, sizes)}</figure>'


def _legend(block: Diagram) -> str:
    items = "".join(
        f'<li><span class="swatch" style="background: {fill}; border-color: {border}"></span>{escape(meaning)}</li>'
        for fill, border, _, meaning in block.legend
    )
    return f'<ul class="legend" aria-label="pool colours">{items}</ul>'


def _sections(sections: tuple[Section, ...]) -> str:
    return "".join(
        f'<section id="{escape(s.key)}"><h2>{escape(s.title)}</h2>{"".join(_block(b) for b in s.blocks)}</section>' for s in sections
    )


def _wide_section(section: Section) -> str:
    """A section with a diagram spans the page: its legend beside the heading, the drawing across."""
    legends = "".join(_legend(b) for b in section.blocks if isinstance(b, Diagram))
    return (
        f'<section id="{escape(section.key)}" class="wide"><div class="head"><h2>{escape(section.title)}</h2>{legends}</div>'
        f"{''.join(_block(b) for b in section.blocks)}</section>"
    )


def html_from_document(doc: Document) -> str:
    """The page (the architecture across the top, the rest in the flow), its footnote, then the appendix."""
    subtitle = f'<p class="subtitle">{escape(doc.subtitle)}</p>' if doc.subtitle else ""
    # A wide diagram read in half the page would be unreadable: its section spans the page, above the columns.
    wide = tuple(s for s in doc.sections if any(isinstance(b, Diagram) for b in s.blocks))
    flow = tuple(s for s in doc.sections if s not in wide)
    band = "".join(_wide_section(s) for s in wide)
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{escape(doc.title)}</title><style>{PAGE_CSS}</style></head>\n"
        f"<body><main><header><h1>{escape(doc.title)}</h1>{subtitle}"
        f'<p class="summary">{escape(doc.summary)}</p></header>\n{band}'
        f'<div class="flow">{_sections(flow)}</div>{_PRINT_NOTE}'
        f'<div class="appendix"><h2>{escape(APPENDIX_TITLE)}</h2>{_sections(doc.appendix)}</div></main></body></html>\n'
    )


def render_html(design: Any, name: DesignName | None = None) -> str:
    """The design document as a self-contained HTML page (opens with no network): the page, then the appendix."""
    return html_from_document(build_document(design, name))
