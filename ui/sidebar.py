"""The sidebar every page renders first: the app's title, the page links, the preset picker, the live controls and the
design-document download.

Every page calls `page_setup()` before anything else: Streamlit runs the page's own file (app.py for Brief, a file
in pages/ for the others; see ui/pages.py), so each page's run starts here.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import streamlit as st

from planner import GPUS, MODELS, Brief, BriefError, Design, InfeasibleDesign, plan, preset_names
from planner.brief import Deployment, Hardware, KvPrecision, Precision, Workload
from planner.fmt import pct
from planner.guard import checked
from planner.mechanisms import SHOWN_HIT_RATE, resolve
from planner.quantization import prefill_peak
from ui import state
from ui.document import document_download
from ui.pages import APP_TITLE, PAGE_ICONS, PAGES
from ui.practice_form import all_answered, practice_gate, practice_score, practice_toggle
from ui.show import md, show_problems
from ui.verdict_bar import verdict_bar

__all__ = ["SIDEBAR_PATHS", "page_setup"]

_FRACTION_STEP = 0.01
_MAX_SLIDER_NODES = 64  # 512 GPUs at 8 a node; a link's larger fleet still plans (the slider says it shows 64)
# The brief paths the sidebar controls: the Brief page's form leaves them out, so no field is asked for twice.
SIDEBAR_PATHS = frozenset(
    {
        "workload.duty_cycle",
        "workload.prefix_hit_rate",
        "workload.users",
        "workload.request_rate",
        "hardware.nodes",
        "deployment.weights",
        "deployment.kv_cache",
        "hardware.gpu",
    }
)


def _help(model: Any, name: str) -> str:
    return str(model.model_fields[name].description or "")


def _nearest(value: Any, low: float | None, high: float | None) -> Any:
    """The control's nearest position to a brief value it cannot show (a slider's or a number input's range)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return value
    if low is not None and value < low:
        return type(value)(low)
    if high is not None and value > high:
        return type(value)(high)
    return value


def _seed(key: str, brief: Brief, path: str, low: float | None = None, high: float | None = None) -> None:
    if key not in st.session_state:
        st.session_state[key] = _nearest(state.brief_value(brief, path), low, high)


def _on_change(path: str, key: str) -> None:
    state.set_field(path, st.session_state[key], from_key=key)


def control(widget: Callable[..., Any], label: str, path: str, brief: Brief, *, key_prefix: str = "sb.", **kwargs: Any) -> None:
    """A widget bound to one brief path: seeded from the brief, its changes written back as an override.

    A brief value outside the widget's range (a link's duty cycle of 0.005 on a slider from 0.01) still plans:
    the widget shows its nearest position and a caption says which value the design uses.
    """
    key = f"{key_prefix}{path}"
    low, high = kwargs.get("min_value"), kwargs.get("max_value")
    _seed(key, brief, path, low, high)
    widget(label, key=key, on_change=_on_change, args=(path, key), **kwargs)
    value = state.brief_value(brief, path)
    shown = _nearest(value, low, high)
    if shown != value:
        st.caption(md(f"The design uses {value:g}; this control reaches only {shown:g}, so it shows that. Move it to change the value."))
    error = state.field_errors().get(path)
    if error:
        st.error(md(error))  # it quotes what the user typed: shown as text, never as Markdown


def _on_preset() -> None:
    state.select_preset(st.session_state["nav.preset"])


def _preset_label(name: str) -> str:
    """A preset's short name for the picker ('Capstone', 'Variation A', '10 QPS'): the part of its title before the
    colon, so the picker never cuts it off; the full title is shown under the picker."""
    title = state.preset_brief(name).title
    return title.split(":", 1)[0].strip() if ":" in title else name


def _preset_picker() -> None:
    names = preset_names()
    st.session_state["nav.preset"] = state.current_preset()
    st.selectbox(
        "Preset",
        names,
        key="nav.preset",
        on_change=_on_preset,
        format_func=_preset_label,
        help="A worked design to start from; the controls below change it, and the URL records the changes.",
    )
    st.caption(md(state.preset_brief(state.current_preset()).title))


def _navigation() -> None:
    """The app's title and its pages, in order; each link carries the design's URL parameters to the next page."""
    st.subheader(APP_TITLE)
    params = state.to_query_params(state.current_preset(), state.current_overrides()) | state.practice_params()
    for path, title, _ in PAGES:
        st.page_link(path, label=title, icon=PAGE_ICONS[title], query_params=params)
    st.divider()


def _traffic_control(brief: Brief) -> None:
    if brief.workload.rate_given:
        control(
            st.number_input,
            "Request rate (req/s)",
            "workload.request_rate",
            brief,
            min_value=0.001,
            step=1.0,
            format="%.2f",
            help=_help(Workload, "request_rate"),
        )
    else:
        control(st.number_input, "Users at peak", "workload.users", brief, min_value=1, step=500, help=_help(Workload, "users"))


def _model_options(brief: Brief) -> list[str]:
    options = list(MODELS)
    if brief.model.name not in options:
        options.append(brief.model.name)
    return options


def _hit_rate_control(brief: Brief) -> None:
    """The prefix hit rate: a slider bound to the brief, or, when the KV tiers derive it, the derived rate the plan uses
    (disabled), with a caption when the brief states another (planner.mechanisms.ignored_fields reports it too)."""
    if not brief.kv_tiers.enabled:
        control(
            st.slider,
            "Prefix hit rate",
            "workload.prefix_hit_rate",
            brief,
            min_value=0.0,
            max_value=1.0,
            step=_FRACTION_STEP,
            help=_help(Workload, "prefix_hit_rate"),
        )
        return
    try:
        derived = resolve(brief).workload.prefix_hit_rate
    except BriefError:  # no replica to derive it on: the page says why the design cannot be computed
        return
    st.slider(
        "Prefix hit rate (derived from the KV tiers)",
        min_value=0.0,
        max_value=1.0,
        value=derived,
        format="%.3f",
        disabled=True,
        help=_help(Workload, "prefix_hit_rate")
        + " This brief sets KV tiers, so the planner derives the hit rate from the cache's capacity and uses that value;"
        " to plan at a stated rate, set both tier sizes to 0 on the Brief page.",
    )
    stated = brief.workload.prefix_hit_rate
    if abs(stated - derived) > SHOWN_HIT_RATE:
        st.caption(md(f"The brief's stated {pct(stated)} is not used: the design uses the {pct(derived)} the KV tiers give."))


def _peak_caption(brief: Brief) -> None:
    """Under Quantization: the brief's compute peak when these weights cannot run it (INT8 math with FP8 weights on an
    A100), so a user who switches the weights sees why prefill moved (planner.mechanisms.ignored_fields reports it too)."""
    if brief.hardware.gpu not in GPUS:
        return
    peak = prefill_peak(brief.deployment.weights, brief.efficiency.compute_peak, GPUS[brief.hardware.gpu])
    if peak.unused:
        st.caption(
            md(
                f"The brief's {peak.stated.value.upper()} compute peak is not used: these weights compute at the"
                f" {peak.precision.upper()} peak, so prefill is sized there."
            )
        )


def _controls(brief: Brief) -> None:
    rate_given = brief.workload.rate_given
    control(
        st.slider,
        "Duty cycle",
        "workload.duty_cycle",
        brief,
        min_value=_FRACTION_STEP,
        max_value=1.0,
        step=_FRACTION_STEP,
        disabled=rate_given,
        help=_help(Workload, "duty_cycle") + (" This brief gives a request rate, so the duty cycle does not enter." if rate_given else ""),
    )
    _hit_rate_control(brief)
    _traffic_control(brief)
    control(
        st.slider,
        "Fleet size (nodes)",
        "hardware.nodes",
        brief,
        min_value=1,
        max_value=_MAX_SLIDER_NODES,
        step=1,
        help=f"{_help(Hardware, 'nodes')} Each node has {brief.hardware.gpus_per_node} GPUs (the Brief page's form sets that).",
    )
    left, right = st.columns(2)
    with left:
        control(
            st.selectbox,
            "Quantization",
            "deployment.weights",
            brief,
            options=[p.value for p in Precision],
            help=_help(Deployment, "weights"),
        )
    with right:
        control(
            st.selectbox,
            "KV cache",  # its precision; a longer label wraps and pushes this box below Quantization's
            "deployment.kv_cache",
            brief,
            options=[p.value for p in KvPrecision],
            help=_help(Deployment, "kv_cache"),
        )
    _peak_caption(brief)
    control(
        st.selectbox,
        "Model",
        "model.name",
        brief,
        options=_model_options(brief),
        format_func=lambda k: MODELS[k].name if k in MODELS else k,
        help="The model (catalog entry) every replica serves.",
    )
    control(
        st.selectbox,
        "GPU",
        "hardware.gpu",
        brief,
        options=list(GPUS),
        format_func=lambda k: GPUS[k].name if k in GPUS else k,
        help=_help(Hardware, "gpu"),
    )


def _link_caption() -> None:
    changed = state.current_overrides()
    if changed:
        st.caption(
            f"{len(changed)} change(s) from the preset; the page URL carries them, so a copied link reopens this design"
            " and the browser's Back undoes the last change."
        )
        st.button("Reset to the preset", on_click=state.select_preset, args=(state.current_preset(),))


def page_setup(title: str) -> Design | None:
    """Render the sidebar and the page header; the current design, or None after showing why there is none."""
    # No page_icon: Streamlit turns a Material icon into a favicon link to fonts.gstatic.com, another host.
    st.set_page_config(page_title=f"{title} · {APP_TITLE}", layout="wide")
    state.init_state()
    state.follow_url()
    state.enter_page(title)
    brief = state.current_brief()
    with st.sidebar:
        _navigation()
        _preset_picker()
        _controls(brief)
        _link_caption()
        practice_toggle()
    state.sync_url()
    st.title(title)
    name = state.current_name()  # follows the edits: 6 nodes are not called "64 H100"
    st.caption(md(name.title))  # anyone's text (a shared link sets it): escaped, and no URL in it becomes a link
    for message in state.link_errors().values():
        st.warning(md(message))  # a link's parameters are anyone's text: never render them as links or images
    notice = state.pop_notice()
    if notice:
        st.success(md(notice))
    try:
        design = checked(plan, brief)
    except InfeasibleDesign as exc:
        st.error("This design cannot be computed: it does not fit the hardware. Change the fields named below.")
        show_problems(exc.verdict.problems)
        return None
    except BriefError as exc:  # the app validates every change with plan(), so this is a safety net
        st.error(md(f"This design cannot be computed: {exc}"))
        return None
    answered = all_answered(design)  # practice mode hides every answer until its step is answered
    with st.sidebar:
        practice_score(design)
        if answered:
            document_download(design, name)
    if answered:
        verdict_bar(design)
    if not practice_gate(design, title):
        if title == "Brief":
            return None  # the Brief page still shows the brief itself: it is the question
        st.stop()
    return design
