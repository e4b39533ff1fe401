"""The design-document downloads offered in the sidebar of every page (report/ renders them).

The files are generated when the button is clicked (a callable), so moving a control costs nothing
here; the PDF starts a headless Chromium, which takes a second or two.
"""

from __future__ import annotations

import re
from collections.abc import Callable

import streamlit as st

from planner import Design
from report import render_html, render_markdown, render_pdf

__all__ = ["document_download", "file_stem"]

FORMATS: tuple[tuple[str, str, str, Callable[[Design], str | bytes]], ...] = (
    ("Markdown", "md", "text/markdown", render_markdown),
    ("HTML", "html", "text/html", render_html),
    ("PDF", "pdf", "application/pdf", render_pdf),
)


def file_stem(title: str) -> str:
    """A safe file name from a design title: lower case, dashes, at most 60 characters."""
    stem = re.sub(r"[^a-z0-9]+", "-", title.lower()).strip("-")[:60].strip("-")
    return stem or "design"


def _deferred(render: Callable[[Design], str | bytes], design: Design) -> Callable[[], str | bytes]:
    return lambda: render(design)


def document_download(design: Design) -> None:
    st.caption("The one-page design document: architecture, configuration, SLO analysis, dependencies, validation plan.")
    stem = file_stem(design.brief.title)
    for label, ext, mime, render in FORMATS:
        st.download_button(
            f"Design document ({label})",
            _deferred(render, design),
            file_name=f"{stem}.{ext}",
            mime=mime,
            key=f"doc.{ext}",
            on_click="ignore",
        )
