"""Helpers for the AppTest suites: start the app on a preset, visit pages, read figures as numbers."""

from __future__ import annotations

import re
from pathlib import Path

from streamlit.testing.v1 import AppTest

from planner.plaintext import WORD_JOINER

ROOT = Path(__file__).resolve().parent.parent
APP = str(ROOT / "app.py")
TIMEOUT_S = 30


def new_app(params: dict[str, str] | None = None) -> AppTest:
    """The app after its first run, with the given URL query parameters."""
    at = AppTest.from_file(APP, default_timeout=TIMEOUT_S)
    for key, value in (params or {}).items():
        at.query_params[key] = value
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def visit(at: AppTest, page: str) -> AppTest:
    at.switch_page(page).run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def shown(markdown: str) -> str:
    """Markdown as the reader sees it: the backslash escapes and the invisible URL breaks of ui.show.md removed."""
    return re.sub(r"\\(.)", r"\1", markdown).replace(WORD_JOINER, "")


def metrics(at: AppTest) -> dict[str, str]:
    return {m.label: m.value for m in at.metric}


def text_figures(at: AppTest) -> dict[str, str]:
    """Figures in words (ui.show.Fig with text=True): a label line, then the value in bold."""
    found = (re.fullmatch(r"(.+)  \n\*\*(.+)\*\*", shown(m.value), re.S) for m in at.markdown)
    return {match.group(1): match.group(2) for match in found if match}


_NUMBER = re.compile(r"-?[\d,]*\.?\d+(?:e[+-]?\d+)?")


def number(text: str) -> float:
    """'55.6 req/s' -> 55.6, '27.7%' -> 27.7, 'x3.61' -> 3.61, '20,480 B' -> 20480."""
    match = _NUMBER.search(text)
    assert match, f"no number in {text!r}"
    return float(match.group().replace(",", ""))


def figure(at: AppTest, label: str) -> float:
    values = metrics(at)
    assert label in values, f"{label!r} not among {sorted(values)}"
    return number(values[label])


def open_arithmetic(at: AppTest) -> AppTest:
    """The page again with every 'Show the arithmetic' expander open: a closed one is not drawn (ui.show)."""
    from ui.show import ARITHMETIC_KEY_PREFIX

    keys = [key for key in at.session_state if str(key).startswith(ARITHMETIC_KEY_PREFIX)]
    for key in keys:
        at.session_state[key] = True
    if keys:
        at.run()
        assert not at.exception, [e.value for e in at.exception]
    return at


# The tab groups that draw only their open tab (pages/slo_budget.py, pages/capacity.py): each key and its other tab.
OTHER_TABS = {"slo.tradeoff": "Batch limit", "capacity.utilization": "Each limit as traffic grows"}


def other_tabs(at: AppTest) -> AppTest:
    """The page again with the second tab of each tab group open (a closed tab is not drawn); unchanged without one."""
    keys = [key for key in OTHER_TABS if key in at.session_state]
    for key in keys:
        at.session_state[key] = OTHER_TABS[key]
    if keys:
        at.run()
        assert not at.exception, [e.value for e in at.exception]
    return at
