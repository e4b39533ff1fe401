"""The design document as Markdown: the same Document the HTML and PDF lay out, as plain text tables: the page's
sections, then the appendix with the arithmetic behind them.

Every text is escaped: a brief's title, description, assumptions and names are anyone's text, so they
must not become markup, raw HTML, an image or a link when a Markdown viewer renders the file (their URLs
are broken invisibly, see planner.plaintext, since viewers autolink bare URLs).
"""

from __future__ import annotations

import re
from typing import Any

from planner.naming import DesignName
from planner.plaintext import defang_urls
from report.document import APPENDIX_TITLE, Block, Bullets, Code, Diagram, Document, Lines, Table, Waterfall, build_document

__all__ = ["markdown_from_document", "markdown_text", "render_markdown"]


# Markdown's and HTML's punctuation; an underscore inside a word (queue_basis) emphasises nothing in GFM
_SPECIAL = re.compile(r"([\\`*\[\]<>|$~&!#]|(?<!\w)_|_(?!\w))")
_BACKTICKS = re.compile(r"`+")


def markdown_text(text: str) -> str:
    """Text shown as written: Markdown and HTML escaped, URLs not autolinked, newlines folded into one line."""
    return _SPECIAL.sub(r"\\\1", defang_urls(" ".join(text.split())))


def _cell(text: str) -> str:
    """A table cell: escaped like any text (the pipe too), so the row stays one row."""
    return markdown_text(text)


def _fenced(language: str, text: str) -> list[str]:
    """A code block whose fence is longer than any run of backticks inside it, so the text cannot close it."""
    longest = max((len(run) for run in _BACKTICKS.findall(text)), default=0)
    fence = "`" * max(3, longest + 1)
    return [f"{fence}{language}", *text.splitlines(), fence]


def _table(block: Table) -> list[str]:
    lines = ["| " + " | ".join(_cell(h) for h in block.header) + " |", "|" + "|".join("---" for _ in block.header) + "|"]
    for i, row in enumerate(block.rows):
        cells = [_cell(c) for c in row]
        if i in block.emphasis_rows:
            cells[:2] = [f"**{c}**" if c else c for c in cells[:2]]
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def _block(block: Block) -> list[str]:
    if isinstance(block, Table):
        return _table(block)
    if isinstance(block, Lines):
        return [f"- **{markdown_text(label)}:** {markdown_text(text)}" for label, text in block.items]
    if isinstance(block, Bullets):
        return [
            f"{i}. {markdown_text(item)}" if block.numbered else f"- {markdown_text(item)}" for i, item in enumerate(block.items, start=1)
        ]
    if isinstance(block, Waterfall):
        rows = [(_cell(component), _cell(shown)) for component, shown, _ in block.steps]
        marks = [(f"**{_cell(name)}**", f"**{_cell(shown)}**") for name, shown, _ in block.marks]
        if block.band is not None:
            marks.append((_cell(block.band[0]), _cell(block.band[1])))
        elif block.band_note:
            marks.append((_cell(block.band_note), ""))
        return [f"| {_cell(block.title)} | ms |", "|---|---|", *(f"| {a} | {b} |" for a, b in rows + marks)]
    if isinstance(block, Code):
        return _fenced(block.language, block.text)
    if isinstance(block, Diagram):
        legend = "; ".join(f"{name}: {meaning}" for _, _, name, meaning in block.legend)
        return [*_fenced("dot", block.dot.strip()), "", f"Pool colours: {markdown_text(legend)}."]
    raise TypeError(f"unknown block {type(block).__name__}")


def markdown_from_document(doc: Document) -> str:
    title, summary = f"# {markdown_text(doc.title)}", f"**{markdown_text(doc.summary)}**"
    out = [title, "", markdown_text(doc.subtitle), "", summary] if doc.subtitle else [title, "", summary]
    for section in doc.sections:
        out += ["", f"## {markdown_text(section.title)}"]
        for block in section.blocks:
            out += ["", *_block(block)]
    out += ["", "---", "", f"## {APPENDIX_TITLE}"]
    for section in doc.appendix:
        out += ["", f"### {markdown_text(section.title)}"]
        for block in section.blocks:
            out += ["", *_block(block)]
    return "\n".join(out) + "\n"


def render_markdown(design: Any, name: DesignName | None = None) -> str:
    """The design document as Markdown, the page then its appendix (stable: the same Design gives the same text)."""
    return markdown_from_document(build_document(design, name))
