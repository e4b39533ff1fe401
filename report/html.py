"""The design document as one self-contained HTML file: inline CSS and SVG, no script, no external reference.

The same file is what the PDF prints (report/pdf.py), so its print CSS sets a landscape page with small
type in three columns that flow the sections in document order; on screen it reads as one column.
"""

from __future__ import annotations

from html import escape
from typing import Any

from report.charts import waterfall_svg
from report.diagram import svg_from_dot
from report.document import Block, Bullets, Code, Diagram, Document, Lines, Table, Waterfall, build_document

__all__ = ["PAGE_CSS", "html_from_document", "render_html"]

PAGE_CSS = """
:root { --ink: #1b1f24; --muted: #59636e; --rule: #d0d7de; --accent: #0b5cad; --bad: #b42318; --good: #1a7f37; }
* { box-sizing: border-box; }
body { margin: 0; color: var(--ink); font: 13px/1.35 "DejaVu Sans", "Liberation Sans", Arial, sans-serif; }
main { max-width: 1200px; margin: 0 auto; padding: 16px 20px; }
header h1 { font-size: 20px; margin: 0 0 2px; }
header p { margin: 0 0 2px; }
.subtitle { color: var(--muted); }
.summary { font-weight: bold; border-bottom: 2px solid var(--accent); padding-bottom: 4px; margin-bottom: 6px; }
.flow { column-count: 1; }  /* on screen the sections read top to bottom; print sets three columns */
section { margin: 0 0 8px; }
section h2 { font-size: 14px; color: var(--accent); margin: 0 0 3px; break-after: avoid; }
table { border-collapse: collapse; width: 100%; }
th, td { text-align: left; vertical-align: top; padding: 1px 4px 1px 0; border-bottom: 1px solid var(--rule); }
th { font-size: 0.9em; color: var(--muted); font-weight: normal; }
tr { break-inside: avoid; }
td.value { white-space: nowrap; font-variant-numeric: tabular-nums; }
td.note { color: var(--muted); font-size: 0.85em; }
tr.emph td { font-weight: bold; }
p.line { margin: 0 0 1px; break-inside: avoid; }
p.line b { color: var(--ink); }
ul, ol { margin: 0; padding-left: 14px; }
pre.code { font-size: 0.85em; background: #f6f8fa; padding: 3px 4px; margin: 0 0 3px; white-space: pre-wrap; break-inside: avoid; }
figure { margin: 0 0 4px; break-inside: avoid; }
figcaption { font-size: 0.9em; color: var(--muted); }
svg.waterfall { display: block; width: 100%; max-width: 560px; height: auto; }
figure.band { margin: 0 0 6px; text-align: center; }
figure.band svg { display: inline-block; width: 100%; height: auto; max-height: 300px; }
li { break-inside: avoid; }
.no { color: var(--bad); font-weight: bold; }
.yes { color: var(--good); font-weight: bold; }
footer { display: none; color: var(--muted); font-size: 0.85em; border-top: 1px solid var(--rule); margin-top: 3px; }
@page { size: A4 landscape; margin: 6mm; }
@media print {
  body { font-size: 7pt; line-height: 1.22; }
  main { max-width: none; padding: 0; }
  header h1 { font-size: 12pt; }
  section h2 { font-size: 8pt; }
  .flow { column-count: 3; column-gap: 10px; column-rule: 1px solid var(--rule); }
  section { margin-bottom: 4px; }
  figure.band svg { max-height: 58mm; }
  svg.waterfall { max-width: none; }  /* the column's width: the chart's type then matches the text */
  .detail { display: none; }
  footer { display: block; }
}
"""


_PRINT_NOTE = (
    "<footer>One-page print: the model notes (queue model, percentile method, failure scaling basis) and a"
    " variation's figure-by-figure difference to the capstone are in the HTML and Markdown versions.</footer>"
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
            css = "note" if j == block.note_column else ("value" if j == 1 else "")
            cells.append(f'<td class="{css}">{_yes_no(cell)}</td>' if css else f"<td>{_yes_no(cell)}</td>")
        emph = ' class="emph"' if i in block.emphasis_rows else ""
        body.append(f"<tr{emph}>{''.join(cells)}</tr>")
    css = ' class="detail"' if block.detail else ""
    return f"<table{css}><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"


def _block(block: Block) -> str:
    if isinstance(block, Table):
        return _table(block)
    if isinstance(block, Lines):
        css = "line detail" if block.detail else "line"
        return "".join(f'<p class="{css}"><b>{escape(label)}:</b> {_yes_no(text)}</p>' for label, text in block.items)
    if isinstance(block, Bullets):
        tag = "ol" if block.numbered else "ul"
        return f"<{tag}>" + "".join(f"<li>{escape(item)}</li>" for item in block.items) + f"</{tag}>"
    if isinstance(block, Waterfall):
        return f"<figure><figcaption>{escape(block.title)}</figcaption>{waterfall_svg(block.title, block.steps, block.marks)}</figure>"
    if isinstance(block, Code):
        return f'<pre class="code">{escape(block.text)}</pre>'
    if isinstance(block, Diagram):  # drawn in the band above the columns (see html_from_document)
        return ""
    raise TypeError(f"unknown block {type(block).__name__}")


def html_from_document(doc: Document) -> str:
    sections = "".join(
        f'<section id="{escape(s.key)}"><h2>{escape(s.title)}</h2>{"".join(_block(b) for b in s.blocks)}</section>' for s in doc.sections
    )
    subtitle = f'<p class="subtitle">{escape(doc.subtitle)}</p>' if doc.subtitle else ""
    # A wide diagram read in one third of the page would be unreadable: it gets the full width.
    diagrams = [b for s in doc.sections for b in s.blocks if isinstance(b, Diagram)]
    band = "".join(f'<figure class="band">{svg_from_dot(d.dot)}</figure>' for d in diagrams)
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{escape(doc.title)}</title><style>{PAGE_CSS}</style></head>\n"
        f"<body><main><header><h1>{escape(doc.title)}</h1>{subtitle}"
        f'<p class="summary">{escape(doc.summary)}</p></header>\n{band}'
        f'<div class="flow">{sections}</div>{_PRINT_NOTE}</main></body></html>\n'
    )


def render_html(design: Any) -> str:
    """The one-page design document as a self-contained HTML page (opens with no network)."""
    return html_from_document(build_document(design))
