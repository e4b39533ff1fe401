"""Entry point: `streamlit run app.py`. It declares the navigation; each page renders the planner's Design.

The pages live in app_pages/ (see ui/pages.py for why not pages/); each renders the shared sidebar first
(ui.sidebar.page_setup). A page that raises shows one line, never a traceback (ui.guard).
"""

import streamlit as st

from ui.guard import run_page
from ui.pages import PAGES

navigation = [st.Page(path, title=title, url_path=url, default=i == 0) for i, (path, title, url) in enumerate(PAGES)]
run_page(st.navigation(navigation))
