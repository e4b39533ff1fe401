"""Entry point: `streamlit run app.py`. It only declares the navigation; pages render the planner's Design."""

import streamlit as st

from planner import load_brief, plan

st.set_page_config(page_title="Inference serving design explorer", layout="wide")
design = plan(load_brief("capstone"))
st.title("Inference serving design explorer")
st.metric("Capstone utilization", f"{design.capacity.utilization:.1%}")
