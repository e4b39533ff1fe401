"""The design-document downloads offered in the sidebar of every page (report/ renders them).

The files are generated when a button is clicked (Streamlit's deferred download: the data is a callable,
and the click does not rerun the page), so moving a control costs nothing here. The HTML runs Graphviz and
the PDF a shared headless Chromium, each bounded by a timeout (report.tools). A broken tool must not leave
its buttons silent: every run shows, with st.error under the buttons, the one line of each tool whose last
run in this server failed (naming it and the package to install). The tools' quick version checks start in
the background at the first run, so a missing or broken tool is named before the first click; a render
that fails for another reason is shown to its session at its next run.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

import streamlit as st

from planner import Design
from planner.naming import DesignName
from report import ExportError, render_html, render_markdown, render_pdf
from report.tools import CHROMIUM, DOT, Tool, ToolError, check_tools_in_background, tool_failures
from ui.show import md

__all__ = ["FORMATS", "SessionExports", "document_download", "tool_problems"]

Render = Callable[[Design, DesignName], str | bytes]

FORMATS: tuple[tuple[str, str, str, Render], ...] = (
    ("Markdown", "md", "text/markdown", render_markdown),
    ("HTML", "html", "text/html", render_html),
    ("PDF", "pdf", "application/pdf", render_pdf),
)
TOOLS_NEEDED: dict[str, tuple[Tool, ...]] = {"md": (), "html": (DOT,), "pdf": (DOT, CHROMIUM)}  # the PDF prints the HTML
_EXPORTS_KEY = "doc.exports"


class SessionExports:
    """One session's last render failure per format (by file extension) that is not a tool's failure.

    Kept in session state and written by the threads that run deferred downloads, so it locks its own state.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._errors: dict[str, str] = {}

    def render(self, ext: str, render: Render, design: Design, name: DesignName) -> str | bytes:
        """Run one render (the deferred download's callable) and record how it ended."""
        try:
            data = render(design, name)
        except ToolError:  # shown to every session from tool_failures()
            self._record(ext, None)
            raise
        except ExportError as exc:
            self._record(ext, str(exc))
            raise
        except Exception as exc:  # a bug: the reader still gets one line, the server log the traceback
            self._record(ext, f"internal error ({type(exc).__name__})")
            raise
        self._record(ext, None)
        return data

    def _record(self, ext: str, error: str | None) -> None:
        with self._lock:
            if error is None:
                self._errors.pop(ext, None)
            else:
                self._errors[ext] = error

    def errors(self) -> dict[str, str]:
        with self._lock:
            return dict(self._errors)


def tool_problems() -> list[str]:
    """One line per broken tool: the formats it stops and its failure (which names it and what to install)."""
    failures = tool_failures()
    lines = []
    for tool in (DOT, CHROMIUM):
        if tool.name in failures:
            formats = ", ".join(label for label, ext, _, _ in FORMATS if tool in TOOLS_NEEDED[ext])
            lines.append(f"Design document ({formats}) cannot be made on this server: {failures[tool.name]}")
    return lines


def _session_exports() -> SessionExports:
    exports = st.session_state.get(_EXPORTS_KEY)
    if not isinstance(exports, SessionExports):
        exports = SessionExports()
        st.session_state[_EXPORTS_KEY] = exports
    return exports


def _deferred(exports: SessionExports, ext: str, render: Render, design: Design, name: DesignName) -> Callable[[], str | bytes]:
    return lambda: exports.render(ext, render, design, name)


def document_download(design: Design, name: DesignName) -> None:
    """The three download buttons; the documents and their file names carry the design's name (planner.naming)."""
    check_tools_in_background(DOT, CHROMIUM)  # at most once a minute; returns at once
    st.caption("The one-page design document: architecture, configuration, SLO analysis, dependencies, validation plan.")
    exports = _session_exports()
    stem = name.file_stem
    for label, ext, mime, render in FORMATS:
        st.download_button(
            f"Design document ({label})",
            _deferred(exports, ext, render, design, name),
            file_name=f"{stem}.{ext}",
            mime=mime,
            key=f"doc.{ext}",
            on_click="ignore",  # a rerun on click would replace the callable the browser is about to ask for
        )
    for line in tool_problems():
        st.error(md(line))
    labels = {ext: label for label, ext, _, _ in FORMATS}
    for ext, error in exports.errors().items():
        st.error(md(f"Design document ({labels[ext]}) not made: {error}"))
