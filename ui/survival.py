"""The Failure modes page's question to the design search: the fewest nodes that survive each scenario.

A search over the fleet only (planner.search.survival_fleets): the replica kept, the long-context pool grown where
it binds. It runs when asked (a button) and its answer stays for the brief it was asked about.
"""

from __future__ import annotations

import streamlit as st

from planner import Design
from planner.survival import survival_fleets
from ui import state
from ui.show import text_table

__all__ = ["survival_section"]

_KEY = "fm.survival"  # (the brief as JSON, its fleets)


def survival_section(design: Design) -> None:
    stated = state.current_brief()  # as the failure table's overrides apply: to the brief as given, resolved again
    brief_json = stated.model_dump_json()
    st.subheader("The fleet each scenario needs")
    if st.button("Find the fewest nodes that survive each scenario", key="fm.survival.run"):
        with st.spinner("searching the fleet size of each scenario"):
            st.session_state[_KEY] = (brief_json, survival_fleets(stated))
    stored = st.session_state.get(_KEY)
    if stored is None or stored[0] != brief_json:
        st.caption("A search over nodes only, per scenario: the replica stays; the long-context pool grows where it binds.")
        return
    applicable = {m.scenario for m in design.failures if m.applicable}
    text_table(
        [
            {
                "scenario": f.title,
                "fewest nodes that survive it": f.text.split(": ", 1)[-1],
                "this fleet": f"{design.brief.hardware.nodes} nodes: {'survives' if f.holds_now else 'does not survive'}",
                "set": ", ".join(f"{path}={value}" for path, value in f.overrides.items()) or "-",
            }
            for f in stored[1]
            if f.scenario in applicable  # a scenario that changes nothing here needs no other fleet
        ]
    )
    st.caption("Each row is plan --set with its values, then the scenario's own overrides: the same verdict as the table above.")
