"""The design document as Markdown: the same Document the HTML and PDF lay out, as plain text tables."""

from __future__ import annotations

from typing import Any

from report.document import Block, Bullets, Code, Diagram, Document, Lines, Table, Waterfall, build_document

__all__ = ["markdown_from_document", "render_markdown"]


def _cell(text: str) -> str:
    """A table cell: pipes escaped, newlines folded, so the row stays one line."""
    return " ".join(text.split()).replace("|", "\\|")


def _table(block: Table) -> list[str]:
    lines = ["| " + " | ".join(block.header) + " |", "|" + "|".join("---" for _ in block.header) + "|"]
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
        return [f"- **{label}:** {text}" for label, text in block.items]
    if isinstance(block, Bullets):
        return [f"{i}. {item}" if block.numbered else f"- {item}" for i, item in enumerate(block.items, start=1)]
    if isinstance(block, Waterfall):
        rows = [(component, shown) for component, shown, _ in block.steps]
        marks = [(f"**{name}**", f"**{shown}**") for name, shown, _ in block.marks]
        return [f"| {block.title} | ms |", "|---|---|", *(f"| {_cell(a)} | {_cell(b)} |" for a, b in rows + marks)]
    if isinstance(block, Code):
        return [f"```{block.language}", *block.text.splitlines(), "```"]
    if isinstance(block, Diagram):
        return ["```dot", *block.dot.strip().splitlines(), "```"]
    raise TypeError(f"unknown block {type(block).__name__}")


def markdown_from_document(doc: Document) -> str:
    out = [f"# {doc.title}", "", doc.subtitle, "", f"**{doc.summary}**"] if doc.subtitle else [f"# {doc.title}", "", f"**{doc.summary}**"]
    for section in doc.sections:
        out += ["", f"## {section.title}"]
        for block in section.blocks:
            out += ["", *_block(block)]
    return "\n".join(out) + "\n"


def render_markdown(design: Any) -> str:
    """The one-page design document as Markdown (stable: the same Design gives the same text)."""
    return markdown_from_document(build_document(design))
