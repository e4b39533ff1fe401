"""The Streamlit app's shared parts: state, sidebar, rendering helpers, charts. Pages import from here."""
