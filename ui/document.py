"""The design-document download offered in the sidebar of every page."""

from __future__ import annotations

import re

import streamlit as st

from exports import render_markdown
from planner import Design

__all__ = ["document_download", "file_stem"]


def file_stem(title: str) -> str:
    """A safe file name from a design title: lower case, dashes, at most 60 characters."""
    stem = re.sub(r"[^a-z0-9]+", "-", title.lower()).strip("-")[:60].strip("-")
    return stem or "design"


def document_download(design: Design) -> None:
    st.download_button(
        "Download the design document (Markdown)",
        render_markdown(design),
        file_name=f"{file_stem(design.brief.title)}.md",
        mime="text/markdown",
        key="doc.download",
        on_click="ignore",
        help="The whole design with the arithmetic behind every figure, as one Markdown file.",
    )
