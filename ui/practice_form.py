"""Interview practice: write your own estimates for the current design, then reveal the tool's and get feedback."""

from __future__ import annotations

from typing import Any

import streamlit as st

from planner import Design
from planner.practice import BINDING_CHOICES, grade, practice_figures
from ui.show import md

__all__ = ["practice"]

_PREFIX = "practice."


def practice(design: Design) -> None:
    st.header("Interview practice")
    st.markdown(
        "Work the current design by hand first (the sidebar's preset and controls), write your estimates, then reveal"
        " the tool's figures. Each estimate within 10% passes; otherwise you see how far off it is and which step to revisit."
        " Leave a figure empty to skip it."
    )
    figures = practice_figures(design)
    with st.form("practice.form"):
        columns = st.columns(3)
        for i, fig in enumerate(figures):
            with columns[i % 3]:
                if fig.unit == "choice":
                    st.selectbox(
                        fig.label, [None, *BINDING_CHOICES], key=f"{_PREFIX}{fig.key}", format_func=lambda c: "-" if c is None else c
                    )
                else:
                    st.number_input(fig.label, value=None, min_value=0.0, key=f"{_PREFIX}{fig.key}", placeholder="your estimate")
        revealed = st.form_submit_button("Reveal the tool's figures", key="practice.reveal")
    if not revealed:
        return
    estimates: dict[str, Any] = {fig.key: st.session_state.get(f"{_PREFIX}{fig.key}") for fig in figures}
    feedback = grade(design, estimates)
    if not feedback:
        st.info("Write at least one estimate first.")
        return
    passed = sum(f.ok for f in feedback)
    (st.success if passed == len(feedback) else st.warning)(f"{passed} of {len(feedback)} estimates within 10%.")
    for f in feedback:
        mark = ":green[:material/check_circle: pass]" if f.ok else ":red[:material/cancel: off]"  # icons from Streamlit's font
        st.markdown(f"{mark} **{md(f.label)}**: yours {md(f.estimate)}, the tool's {md(f.tool)} ({md(f.off_by)}).")
        if not f.ok:
            st.markdown(f"↳ Revisit: {md(f.revisit)}")
            if f.arithmetic:
                st.caption(md(f.arithmetic))
