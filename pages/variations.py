"""Variations: the follow-up questions A-G as presets, each beside the baseline."""

from collections.abc import Sequence

import streamlit as st

from planner import BriefError, Design, InfeasibleDesign, plan, preset_names
from planner.compare import compare
from planner.figures import format_unit, format_value, label, show, spec
from planner.variations import Option
from ui import state
from ui.compare import comparison_table
from ui.show import md, show_problems, text_table
from ui.sidebar import page_setup

BASELINE = "capstone"

design = page_setup("Variations")
variations = [name for name in preset_names() if name.startswith("variation-")]


FIGURES = ("utilization", "ttft_p95_ms", "itl_p95_ms", "ok", "nodes", "usd_per_million_output_tokens")
PER_POOL = FIGURES[:3]  # an option with pools leaves these to its pools' rows: its own gives what is across them


def _replan_words(overrides: dict[str, object]) -> str:
    return " ".join(f"{path}={value}" for path, value in overrides.items()) or "as briefed"


def _option_rows(design: Design, options: Sequence[Option]) -> list[dict[str, str]]:
    """One row an option, and under an option that runs as several pools a row each with its own re-plan."""
    failing = any(not o.ok for o in options)
    rows = []
    for i, o in enumerate(options):
        path = f"variation.options.{i}"
        figures = {
            label(f"{path}.{key}"): "" if o.pools and key in PER_POOL else show(design, f"{path}.{key}", short=True) for key in FIGURES
        }
        replan = "one re-plan a pool, below" if o.pools else _replan_words(o.overrides)
        rows.append(
            {"option": o.name, "change": o.change}
            | figures
            | ({"why not": o.why_not} if failing else {})
            | {"re-plan (plan --set)": replan}
        )
        for pool in o.pools:  # written as the option's own figures are (the registry's entry of each)
            cells = {label(f"{path}.{key}"): format_value(spec(f"{path}.{key}"), getattr(pool, key)) for key in FIGURES}
            rows.append(
                {"option": f"{o.name}: {pool.name}", "change": ""}
                | cells
                | ({"why not": pool.why_not} if failing else {})
                | {"re-plan (plan --set)": _replan_words(pool.overrides)}
            )
    return rows


def _compare(name: str, current: Design | None) -> None:
    """The variation `name` beside the baseline: the current design when it is that preset edited in the sidebar (the
    verdict bar above judges it: the page must not answer for the unedited preset), else the preset as it stands."""
    brief = state.preset_brief(name)
    st.subheader(md(brief.title))
    st.markdown(md(brief.description))
    edits = state.current_overrides() if name == state.current_preset() else {}
    if edits:
        st.caption(f"As edited in the sidebar ({len(edits)} change(s) from the preset), the design the verdict bar above judges.")
        if current is None:  # the edited brief cannot be computed: the page above says why
            return
        other = current
    else:
        try:
            other = plan(brief)
        except InfeasibleDesign as exc:
            st.error("This variation cannot be computed on its hardware:")
            show_problems(exc.verdict.problems)
            return
    analysis = other.variation
    if analysis is not None:
        st.markdown(f"**The question:** {md(analysis.question)}")
        st.info(md(analysis.conclusion))
        text_table([{"finding": f.label, "value": format_unit(f.value, f.unit), "arithmetic": f.arithmetic} for f in analysis.findings])
        if analysis.options:
            st.subheader("Options")
            st.caption(
                "Each option is the brief re-planned with its changes (`plan --set`); one that runs as several pools"
                " (an overflow model's) gives each pool's re-plan on its own row, its nodes and cost across them."
            )
            text_table(_option_rows(other, analysis.options))
    st.subheader("Beside the baseline")
    st.caption(
        "The capstone against this variation on the figures that matter; green is better, red is worse for the variation."
        f" In brackets: {other.uncertainty.legend}, as on the verdict bar."
    )
    comparison_table(compare(plan(state.preset_brief(BASELINE)), other), "capstone", "this variation")
    if other.verdict.problems:
        show_problems(other.verdict.problems)
    st.button(f"Load {name} as the current brief", key=f"var.load.{name}", on_click=state.select_preset, args=(name,))


st.markdown(
    "Each card is a follow-up question to the capstone, as a preset that changes its brief. Choose one to see it beside the baseline."
)
columns = st.columns(4)
for i, name in enumerate(variations):
    brief = state.preset_brief(name)
    with columns[i % 4], st.container(border=True):
        st.markdown(f"**{md(brief.title)}**")
        st.caption(md(brief.description))
current = state.current_preset()
if current in variations and st.session_state.get("var.preset_seen") != current:  # a variation preset opens on its own card
    st.session_state["var.chosen"] = current
st.session_state["var.preset_seen"] = current
chosen = st.selectbox("Compare with the baseline", variations, key="var.chosen", format_func=lambda n: state.preset_brief(n).title)
if chosen:
    try:
        _compare(chosen, design)
    except BriefError as exc:
        st.error(str(exc))
