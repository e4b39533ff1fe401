"""Entry point (`streamlit run app.py`) and the first page, Brief: the whole problem as stated, load and save it, and
the first verdict: is it even possible?

Streamlit's documented multipage layout: this file is the first page and pages/ holds the others (ui/pages.py lists
them). Every page renders the shared sidebar first (ui.sidebar.page_setup), the navigation included.
"""

import streamlit as st

from planner.figures import field_label
from ui import state
from ui.brief_files import brief_files
from ui.brief_form import brief_form
from ui.show import binding_line, fig, figure_row, md, verdict_banner
from ui.sidebar import page_setup

design = page_setup("Brief")
brief = state.current_brief()
if brief.description and not state.practice_on():  # in practice mode the question opens the page, above its steps
    st.markdown(md(brief.description))

if design is not None:
    st.header("Is it even possible?")
    verdict_banner(design)
    # a disaggregated design is judged on its two pools, not the aggregated sizing arithmetic (the Capacity page's)
    binds = (
        ("disaggregation.prefill_busy", "disaggregation.binding_pool")
        if design.disaggregation
        else ("capacity.utilization", "capacity.binding_constraint")
    )
    figure_row([fig(design, path) for path in (*binds, "headroom.multiple", "operating_point.kv_in_use_gb", "operating_point.tpot_ms")])
    st.markdown(f"**Binding:** {md(binding_line(design))}.")
    if design.ignored_fields:  # stated fields the design does not use: said here, never dropped silently
        st.markdown(
            "**Stated but not used:**\n"
            + "\n".join(f"- {md(field_label(p.field))}: {md(p.problem)}; {md(p.change)}" for p in design.ignored_fields)
        )

st.header("The brief")
brief_files(brief)
brief_form(brief)
