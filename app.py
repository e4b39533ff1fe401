"""Entry point (`streamlit run app.py`) and the first page, Brief: the whole problem as stated, load and save it, and
the first verdict: is it even possible?

Streamlit's documented multipage layout: this file is the first page and pages/ holds the others (ui/pages.py lists
them). Every page renders the shared sidebar first (ui.sidebar.page_setup), the navigation included.
"""

import streamlit as st

from planner.fmt import num, pct
from ui import state
from ui.brief_files import brief_files
from ui.brief_form import brief_form
from ui.show import Fig, figure_row, md, verdict_banner
from ui.sidebar import page_setup

design = page_setup("Brief")
brief = state.current_brief()
if brief.description:
    st.markdown(md(brief.description))

if design is not None:
    c, m = design.capacity, design.memory
    st.header("Is it even possible?")
    verdict_banner(design)
    figure_row(
        [
            Fig("Utilization at peak", pct(c.utilization), c.arithmetic["utilization"]),
            Fig("Binding resource", c.binding_constraint.value, c.arithmetic["binding_constraint"]),
            Fig("Headroom", f"x{num(c.headroom_factor)}", help="How many times the peak load the fleet could carry at 100% utilization."),
            Fig("KV in use at peak", pct(c.kv_fraction), m.arithmetic["max_sequences_per_replica"]),
            Fig("TPOT at the operating point", num(design.operating_point.tpot_ms, "ms"), design.operating_point.arithmetic["tpot_ms"]),
        ]
    )
    st.markdown(f"**Binding:** {md(c.binding_reason)}.")

st.header("The brief")
brief_files(brief)
brief_form(brief)
