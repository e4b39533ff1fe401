"""The whole brief as a grouped form: one widget per field, help text from the field's description.

Each widget is a view on a brief path (key `f.<path>`); a change is validated by the planner and either
kept as an override or reported beside the field, the rest of the brief unchanged.
"""

from __future__ import annotations

from enum import StrEnum
from types import NoneType, UnionType
from typing import Any, get_args

import streamlit as st
from pydantic import BaseModel

from planner import GPUS, MODELS, Brief
from planner.brief import Cost, CustomModel, Deployment, Efficiency, Hardware, Latency, ModelChoice, Slo, Workload
from ui import state
from ui.brief_files import hf_config_upload
from ui.show import md
from ui.sidebar import control

__all__ = ["SECTIONS", "brief_form"]

SECTIONS: tuple[tuple[str, str, type[BaseModel]], ...] = (
    ("hardware", "Hardware", Hardware),
    ("deployment", "Deployment", Deployment),
    ("workload", "Workload", Workload),
    ("slo", "SLO", Slo),
    ("efficiency", "Efficiency", Efficiency),
    ("latency", "Latency budget", Latency),
    ("cost", "Cost", Cost),
)
_COLUMNS = 3


def _base_type(annotation: Any) -> tuple[Any, bool]:
    """(type, optional) for `T` or `T | None`."""
    args = get_args(annotation)
    if isinstance(annotation, UnionType) and NoneType in args:
        return next(a for a in args if a is not NoneType), True
    return annotation, False


def _label(name: str) -> str:
    return name.replace("_", " ").capitalize()


def _field(model: type[BaseModel], section: str, name: str, brief: Brief) -> None:
    info = model.model_fields[name]
    kind, optional = _base_type(info.annotation)
    path, label, help_text = f"{section}.{name}", _label(name), info.description
    kw: dict[str, Any] = {"help": help_text, "key_prefix": "f."}
    if kind is bool:
        control(st.checkbox, label, path, brief, **kw)
    elif isinstance(kind, type) and issubclass(kind, StrEnum):
        control(st.selectbox, label, path, brief, options=[e.value for e in kind], **kw)
    elif path == "hardware.gpu":
        control(st.selectbox, label, path, brief, options=list(GPUS), format_func=lambda k: GPUS[k].name if k in GPUS else k, **kw)
    elif kind is int:
        control(st.number_input, label, path, brief, step=1, placeholder="empty" if optional else None, **kw)
    elif kind is float:
        control(st.number_input, label, path, brief, step=None, format="%g", placeholder="empty" if optional else None, **kw)
    else:
        control(st.text_input, label, path, brief, **kw)


def _section(key: str, title: str, model: type[BaseModel], brief: Brief) -> None:
    with st.expander(title, expanded=key in ("hardware", "deployment", "workload")):
        names = list(model.model_fields)
        columns = st.columns(_COLUMNS)
        for i, name in enumerate(names):
            with columns[i % _COLUMNS]:
                _field(model, key, name, brief)


def _on_assumptions() -> None:
    text = str(st.session_state["f.assumptions"])
    state.set_field("assumptions", [line.strip() for line in text.splitlines() if line.strip()])


def _about(brief: Brief) -> None:
    with st.expander("Title, description and assumptions", expanded=False):
        control(st.text_input, "Title", "title", brief, key_prefix="f.", help=Brief.model_fields["title"].description)
        control(st.text_area, "Description", "description", brief, key_prefix="f.", help=Brief.model_fields["description"].description)
        if "f.assumptions" not in st.session_state:
            st.session_state["f.assumptions"] = "\n".join(brief.assumptions)
        st.text_area(
            "Assumptions", key="f.assumptions", on_change=_on_assumptions, help=Brief.model_fields["assumptions"].description, height=160
        )
        error = state.field_errors().get("assumptions")
        if error:
            st.error(md(error))


def _custom_from_catalog(key: str) -> dict[str, Any]:
    """The architecture numbers of a catalog model, as a starting point for a custom one."""
    spec = MODELS[key]
    numbers = {name: getattr(spec, name) for name in CustomModel.model_fields}
    if spec.active_params == spec.params:
        numbers["active_params"] = None
    return numbers


def _on_model() -> None:
    chosen = st.session_state["f.model.name"]
    current = state.current_brief().model
    if chosen == "custom" and current.custom is None and current.name in MODELS:
        state.set_fields(
            {"model.name": "custom", "model.custom": _custom_from_catalog(current.name), "model.display_name": f"custom {current.name}"},
            report_at="model.name",
        )
    else:
        state.set_field("model.name", chosen)


def _model(brief: Brief) -> None:
    with st.expander("Model", expanded=True):
        options = [*MODELS, "custom"]
        if brief.model.name not in options:
            options.append(brief.model.name)
        if "f.model.name" not in st.session_state:
            st.session_state["f.model.name"] = brief.model.name
        st.selectbox(
            "Model",
            options,
            key="f.model.name",
            on_change=_on_model,
            format_func=lambda k: MODELS[k].name if k in MODELS else k,
            help="Catalog entry of the model, or 'custom' to edit its architecture numbers (starting from the current model's).",
        )
        error = state.field_errors().get("model.name")
        if error:
            st.error(md(error))
        hf_config_upload()
        if brief.model.name == "custom":
            control(
                st.text_input,
                "Display name",
                "model.display_name",
                brief,
                key_prefix="f.",
                help=ModelChoice.model_fields["display_name"].description,
            )
            columns = st.columns(_COLUMNS)
            for i, name in enumerate(CustomModel.model_fields):
                with columns[i % _COLUMNS]:
                    _field(CustomModel, "model.custom", name, brief)


def brief_form(brief: Brief) -> None:
    _about(brief)
    _model(brief)
    for key, title, model in SECTIONS:
        _section(key, title, model, brief)
