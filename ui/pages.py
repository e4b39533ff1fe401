"""The app's pages in order: file, title, URL path. app.py builds the navigation from this list; tests visit it.

The files live in app_pages/, not pages/: a folder named pages/ next to app.py switches Streamlit to its older
folder navigation (a page file run alone, without app.py, and an automatic page list) until st.navigation first runs.
Each URL path is its file's stem, so links made before the move still open the same page.
"""

from __future__ import annotations

__all__ = ["PAGES"]

PAGES: tuple[tuple[str, str, str], ...] = (
    ("app_pages/brief.py", "Brief", "brief"),
    ("app_pages/capacity.py", "Capacity", "capacity"),
    ("app_pages/architecture.py", "Architecture", "architecture"),
    ("app_pages/slo_budget.py", "SLO budget", "slo_budget"),
    ("app_pages/failure_modes.py", "Failure modes", "failure_modes"),
    ("app_pages/cost.py", "Cost", "cost"),
    ("app_pages/variations.py", "Variations", "variations"),
    ("app_pages/search.py", "Search", "search"),
)
