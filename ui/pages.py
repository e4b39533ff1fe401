"""The app's pages in order: file, title, URL path. app.py builds the navigation from this list; tests visit it."""

from __future__ import annotations

__all__ = ["PAGES"]

PAGES: tuple[tuple[str, str, str], ...] = (
    ("pages/brief.py", "Brief", "brief"),
    ("pages/capacity.py", "Capacity", "capacity"),
    ("pages/architecture.py", "Architecture", "architecture"),
    ("pages/slo_budget.py", "SLO budget", "slo-budget"),
    ("pages/variations.py", "Variations", "variations"),
)
