"""The last line of defence: a page that raises shows one line and the last good design, never a traceback.

Every input path is validated before use (ui.state, planner.loader), so this runs only for a bug. The
traceback goes to the server's log, not to the page: the viewer of a shared link sees what went wrong in
one sentence, and the design before the change that broke the page comes back.
"""

from __future__ import annotations

import logging
from typing import Any

import streamlit as st

from ui import state
from ui.show import md

__all__ = ["run_page"]

_LOG = logging.getLogger("explorer.ui")


def run_page(page: Any) -> None:
    """page.run(); an exception becomes a one-line error, and a design that ran before is restored."""
    try:
        page.run()
    except Exception as exc:  # Streamlit's stop and rerun signals are BaseExceptions: they pass through
        _LOG.exception("page failed")
        _recover(exc)
    else:
        state.remember_good()


def _recover(exc: Exception) -> None:
    message = f"{type(exc).__name__}: {state.clip(' '.join(str(exc).split()), 200)}"
    if state.restore_good():
        state.set_notice(f"The last change could not be drawn ({message}); the design before it is back.")
        st.rerun()
    st.error(md(f"This page could not be drawn ({message}). Choose a preset to start again."))
