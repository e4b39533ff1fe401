"""Loading a brief from an uploaded TOML or JSON file, and saving the current one."""

from __future__ import annotations

import streamlit as st

from planner import Brief, BriefError, brief_to_json, brief_to_toml
from planner.loader import MAX_BRIEF_BYTES, brief_from_text
from ui import state
from ui.document import file_stem
from ui.show import md

__all__ = ["UPLOAD_KEY", "brief_files", "read_upload"]

UPLOAD_KEY = "brief.upload"
_UPLOAD_ERROR_KEY = "brief.upload_error"


def read_upload(name: str, data: bytes) -> Brief:
    """A brief from an uploaded file's bytes: size-limited, UTF-8, TOML or JSON by extension, validated."""
    if len(data) > MAX_BRIEF_BYTES:
        raise BriefError(name, f"file is {len(data):,} bytes; a brief is at most {MAX_BRIEF_BYTES:,}")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise BriefError(name, "file is not UTF-8 text (binary?)") from None
    fmt = "json" if name.lower().endswith(".json") else "toml"
    return brief_from_text(text, fmt, source=name)


def _on_upload() -> None:
    uploaded = st.session_state.get(UPLOAD_KEY)
    st.session_state.pop(_UPLOAD_ERROR_KEY, None)
    if uploaded is None:
        return
    try:
        brief = read_upload(uploaded.name, uploaded.getvalue())
    except BriefError as exc:
        st.session_state[_UPLOAD_ERROR_KEY] = str(exc)
        return
    state.load_brief_as_current(brief)
    state.set_notice(f"Loaded {uploaded.name}: {brief.title}")


def brief_files(brief: Brief) -> None:
    left, right = st.columns([2, 1])
    with left:
        st.file_uploader(
            "Load a brief (TOML or JSON)",
            type=["toml", "json"],
            key=UPLOAD_KEY,
            on_change=_on_upload,
            max_upload_size=1,
            help=f"A brief in the presets' format, at most {MAX_BRIEF_BYTES:,} bytes. It becomes the current design.",
        )
        error = st.session_state.get(_UPLOAD_ERROR_KEY)
        if error:
            st.error(f"Not loaded: {md(error)}")
    with right:
        stem = file_stem(brief.title)
        st.download_button("Save as TOML", brief_to_toml(brief), file_name=f"{stem}.toml", mime="application/toml", on_click="ignore")
        st.download_button("Save as JSON", brief_to_json(brief), file_name=f"{stem}.json", mime="application/json", on_click="ignore")
