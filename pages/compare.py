"""Compare: the pinned design beside the current one, on the figures that matter, with the differences.

Pin a design (here or from the verdict bar on any page), then change the sidebar or pick a preset: this page shows
both, the change of each figure (absolute and relative, green when better, red when worse) and what differs in
their briefs. The pin lives in the session and in the URL (pin=<preset>, pin.<path>=<value>), so a copied link
reopens the comparison.
"""

import streamlit as st

from planner import GPUS, MODELS, InfeasibleDesign, plan
from planner.compare import compare
from planner.figures import REGISTRY, field_label, format_value
from ui import state
from ui.compare import comparison_table, pin_button
from ui.show import md, show_problems, text_table
from ui.sidebar import page_setup
from ui.verdict_bar import verdict_headline

design = page_setup("Compare")
pin = state.pinned()


_UNSHOWN = ("title", "description", "assumptions", "variation")  # texts and the variation's key: not a design choice


def _value(path: str, value: object) -> str:
    """A brief value as the registry writes it (where it has an entry), catalog keys by their names."""
    if value is None:
        return "none"
    if path == "hardware.gpu" and str(value) in GPUS:
        return GPUS[str(value)].name
    if path == "model.name" and str(value) in MODELS:
        return MODELS[str(value)].name
    entry = REGISTRY.get(f"brief.{path}")
    return format_value(entry, value) if entry is not None and not isinstance(value, (dict, list)) else str(value)


def _brief_changes(pinned_preset: str, pinned_overrides: dict[str, object]) -> list[dict[str, str]]:
    before = state.brief_for(pinned_preset, pinned_overrides)
    after = state.current_brief()
    return [
        {"field": field_label(path), "pinned": _value(path, state.brief_value(before, path)), "current": _value(path, value)}
        for path, value in sorted(state.diff_overrides(before, after).items())
        if path.split(".")[0] not in _UNSHOWN
    ]


if pin is None:
    st.info(
        "Nothing is pinned yet. Pin the design you have now, then change a control in the sidebar or pick another preset:"
        " this page shows the two side by side, with the difference of every figure that matters."
    )
    pin_button(key="cmp.pin")
    st.stop()

pinned_brief = state.brief_for(*pin)
left, mid, right = st.columns(3)
left.button("Pin the current design instead", key="cmp.repin", on_click=state.pin_current)
mid.button("Go back to the pinned design", key="cmp.load", on_click=state.load_pinned)
right.button("Unpin", key="cmp.unpin", on_click=state.unpin)

try:
    pinned_design = plan(pinned_brief)
except InfeasibleDesign as exc:
    st.error("The pinned design cannot be computed: it does not fit its hardware.")
    show_problems(exc.verdict.problems)
    st.stop()

st.markdown(f"**Pinned:** {md(state.name_for(*pin).title)} · {md(verdict_headline(pinned_design))}")
if design is None:
    st.stop()
st.markdown(f"**Current:** {md(state.current_name().title)} · {md(verdict_headline(design))}")
changes = _brief_changes(*pin)
if not changes and pinned_brief == design.brief:
    st.info("The current design is the pinned one. Change a control in the sidebar or pick a preset to compare.")
comparison_table(compare(pinned_design, design), "pinned", "current")
st.caption(
    f"In brackets: {design.uncertainty.legend}: where the real figure falls if this setup misses the way held-out"
    " measurements missed (the verdict bar's basis)."
)

st.subheader("What differs in the brief")
if changes:
    text_table(changes)
else:
    st.caption("Nothing: both designs come from the same brief.")
