"""Loading a brief from an uploaded TOML or JSON file, saving the current one, a model from an uploaded config.json,
and efficiencies from an uploaded profile (planner.profile).

Nothing here reads the server's files: a brief that names a config.json path is refused (planner.loader
reads paths only for the CLI), and a Hugging Face config is uploaded instead.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import streamlit as st

from planner import Brief, BriefError, brief_to_json, brief_to_toml
from planner.brief import CustomModel
from planner.catalog import HF_CONFIG_MAX_BYTES, model_from_hf_config_text
from planner.loader import MAX_BRIEF_BYTES, brief_from_text
from planner.profile import MAX_PROFILE_BYTES, efficiency_from_profile_text
from ui import state
from ui.show import md

__all__ = [
    "HF_UPLOAD_KEY",
    "PROFILE_UPLOAD_KEY",
    "UPLOAD_KEY",
    "brief_files",
    "hf_config_upload",
    "profile_upload",
    "read_hf_config",
    "read_profile",
    "read_upload",
]

T = TypeVar("T")

UPLOAD_KEY = "brief.upload"
_UPLOAD_ERROR_KEY = "brief.upload_error"
PROFILE_UPLOAD_KEY = "brief.profile_upload"
_PROFILE_ERROR_KEY = "brief.profile_upload_error"
HF_UPLOAD_KEY = "brief.hf_upload"
_HF_ERROR_KEY = "brief.hf_upload_error"


def _upload_text(name: str, data: bytes, max_bytes: int, what: str) -> str:
    """An uploaded file's text: at most `max_bytes`, UTF-8; else a BriefError naming the file."""
    if len(data) > max_bytes:
        raise BriefError(name, f"file is {len(data):,} bytes; {what} is at most {max_bytes:,}")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise BriefError(name, "file is not UTF-8 text (binary?)") from None


def read_upload(name: str, data: bytes) -> Brief:
    """A brief from an uploaded file's bytes: size-limited, UTF-8, TOML or JSON by extension, validated."""
    text = _upload_text(name, data, MAX_BRIEF_BYTES, "a brief")
    fmt = "json" if name.lower().endswith(".json") else "toml"
    return brief_from_text(text, fmt, source=name)


def _on_upload() -> None:
    uploaded = st.session_state.get(UPLOAD_KEY)
    st.session_state.pop(_UPLOAD_ERROR_KEY, None)
    if uploaded is None:
        return
    try:
        brief = read_upload(uploaded.name, uploaded.getvalue())
        state.check_plans(brief)  # an unknown catalog key or an overflowing value is refused here, not on the page
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
        profile_upload()
    with right:
        name = state.current_name()
        saved = brief.with_changes({"title": name.title, "description": name.description}) if name.edited else brief  # no stale title
        toml, json = brief_to_toml(saved), brief_to_json(saved)
        st.download_button("Save as TOML", toml, file_name=f"{name.file_stem}.toml", mime="application/toml", on_click="ignore")
        st.download_button("Save as JSON", json, file_name=f"{name.file_stem}.json", mime="application/json", on_click="ignore")


def _read_uploaded(key: str, error_key: str, read: Callable[[str, bytes], T]) -> tuple[str, T] | None:
    """The file just uploaded under `key`, read; a BriefError is kept under `error_key` for the uploader to show."""
    uploaded = st.session_state.get(key)
    st.session_state.pop(error_key, None)
    if uploaded is None:
        return None
    try:
        return uploaded.name, read(uploaded.name, uploaded.getvalue())
    except BriefError as exc:
        st.session_state[error_key] = str(exc)
        return None


def _uploader(label: str, types: list[str], key: str, on_change: Callable[[], None], help_text: str, error_key: str, field: str) -> None:
    """A one-file uploader (1 MB at most) and, under it, why the last file was not loaded."""
    st.file_uploader(label, type=types, key=key, on_change=on_change, max_upload_size=1, help=help_text)
    error = st.session_state.get(error_key) or state.field_errors().get(field)
    if error:
        st.error(f"Not loaded: {md(error)}")


# --- efficiencies from an uploaded profile (python -m planner calibrate ... --out profile.toml) ------------


def read_profile(name: str, data: bytes) -> dict[str, Any]:
    """The efficiency values of an uploaded profile's bytes: size-limited, UTF-8 TOML, every value checked."""
    return efficiency_from_profile_text(_upload_text(name, data, MAX_PROFILE_BYTES, "a profile"), name)


def _on_profile_upload() -> None:
    read = _read_uploaded(PROFILE_UPLOAD_KEY, _PROFILE_ERROR_KEY, read_profile)
    if read is None:
        return
    name, values = read
    state.set_fields({f"efficiency.{k}": v for k, v in values.items()}, report_at="efficiency")
    if "efficiency" not in state.field_errors():
        state.set_notice(f"Efficiencies from {name}: {len(values)} constants fitted to your measurements")


def profile_upload() -> None:
    """An uploader for an efficiency profile: the step model's constants fitted to the user's own benchmark runs."""
    _uploader(
        "Efficiencies from your measurements (a profile TOML)",
        ["toml"],
        PROFILE_UPLOAD_KEY,
        _on_profile_upload,
        "Written by `python -m planner calibrate RESULTS... --out profile.toml` from vllm bench serve or SGLang"
        " bench_serving results: its constants replace the calibrated defaults in this design.",
        _PROFILE_ERROR_KEY,
        "efficiency",
    )


# --- a model from an uploaded Hugging Face config.json ----------------------------------------------


def read_hf_config(name: str, data: bytes) -> CustomModel:
    """A custom model from an uploaded config.json's bytes: size-limited, UTF-8 JSON, every number checked."""
    text = _upload_text(name, data, HF_CONFIG_MAX_BYTES, "a config.json")
    try:
        return model_from_hf_config_text(text)
    except BriefError as exc:
        raise BriefError(f"{name}: {exc.field}", exc.reason) from None


def _display_name(file_name: str) -> str:
    stem = file_name.rsplit(".", 1)[0]
    return f"custom ({stem[:60]})" if stem and stem != "config" else "custom model"


def _on_hf_upload() -> None:
    read = _read_uploaded(HF_UPLOAD_KEY, _HF_ERROR_KEY, read_hf_config)
    if read is None:
        return
    name, custom = read
    changes = {"model.name": "custom", "model.custom": custom.model_dump(mode="json"), "model.display_name": _display_name(name)}
    state.set_fields(changes, report_at="model.hf_config")
    if "model.hf_config" not in state.field_errors():
        state.set_notice(f"Model from {name}: {custom.layers} layers, {custom.params / 1e9:.1f}B parameters")


def hf_config_upload() -> None:
    """An uploader for a Hugging Face config.json: its architecture becomes the custom model."""
    _uploader(
        "Model from a Hugging Face config.json",
        ["json"],
        HF_UPLOAD_KEY,
        _on_hf_upload,
        "The model's config.json (as published on its Hugging Face page); its architecture numbers become a custom model.",
        _HF_ERROR_KEY,
        "model.hf_config",
    )
