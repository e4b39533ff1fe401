"""The app's pages in order: file, title, URL path; and each page's icon. The sidebar links them; tests visit them.

Streamlit's documented multipage layout: `app.py` is the first page (Brief, at the root URL) and every other page
is a file in `pages/`, whose stem is its URL path. Streamlit's own page list is hidden
(`[client] showSidebarNavigation = false` in .streamlit/config.toml) and ui.sidebar draws this list instead with
`st.page_link`, in this order, with these titles and icons, carrying the design's URL parameters to the next page.
"""

from __future__ import annotations

__all__ = ["APP_TITLE", "PAGES", "PAGE_ICONS"]

APP_TITLE = "Inference serving design explorer"

PAGES: tuple[tuple[str, str, str], ...] = (
    ("app.py", "Brief", ""),
    ("pages/capacity.py", "Capacity", "capacity"),
    ("pages/architecture.py", "Architecture", "architecture"),
    ("pages/slo_budget.py", "SLO budget", "slo_budget"),
    ("pages/failure_modes.py", "Failure modes", "failure_modes"),
    ("pages/cost.py", "Cost", "cost"),
    ("pages/variations.py", "Variations", "variations"),
    ("pages/search.py", "Search", "search"),  # after Variations: the cheapest design meeting the SLO, the frontier
    ("pages/compare.py", "Compare", "compare"),  # after Variations: a variation, an edit or a preset against a pin
)

# Material Symbols (bundled with Streamlit, so no emoji font is needed): by page title.
PAGE_ICONS: dict[str, str] = {
    "Brief": ":material/description:",
    "Capacity": ":material/memory:",
    "Architecture": ":material/account_tree:",
    "SLO budget": ":material/timer:",
    "Failure modes": ":material/warning:",
    "Cost": ":material/payments:",
    "Variations": ":material/compare_arrows:",
    "Search": ":material/travel_explore:",
    "Compare": ":material/difference:",
}
