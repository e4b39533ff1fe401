"""The app's pages in order: file, title, URL path. app.py builds the navigation from this list; tests visit it.

Each URL path is its file's stem: a fresh server that opens a page link runs Streamlit's pages-folder navigation
first, which knows pages by file stem, so any other path would say "page not found" before app.py takes over.
"""

from __future__ import annotations

__all__ = ["PAGES"]

PAGES: tuple[tuple[str, str, str], ...] = (
    ("pages/brief.py", "Brief", "brief"),
    ("pages/capacity.py", "Capacity", "capacity"),
    ("pages/architecture.py", "Architecture", "architecture"),
    ("pages/slo_budget.py", "SLO budget", "slo_budget"),
    ("pages/failure_modes.py", "Failure modes", "failure_modes"),
    ("pages/cost.py", "Cost", "cost"),
    ("pages/variations.py", "Variations", "variations"),
)
