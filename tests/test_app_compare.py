"""Compare two designs (issue 16, item 6): pin one, change the sidebar or the preset, and see both side by side.

The pin lives in the session and in the URL (pin=<preset>, pin.<path>=<value>), so a copied link reopens the
comparison; the table shows every figure that matters with its change, coloured by whether it is better.
"""

from __future__ import annotations

import pandas as pd
import pytest
from apphelp import new_app, shown, visit
from streamlit.testing.v1 import AppTest

pytestmark = pytest.mark.app

COMPARE = "pages/compare.py"


def _params(at: AppTest) -> dict[str, str]:
    return {key: (value[0] if isinstance(value, list) else value) for key, value in dict(at.query_params).items()}


def _comparison(at: AppTest) -> pd.DataFrame:
    frames = [t.value for t in at.table if "difference" in t.value.columns]
    assert len(frames) == 1, [list(t.value.columns) for t in at.table]
    return frames[0]


def test_nothing_pinned_says_how_to_start() -> None:
    at = visit(new_app({"preset": "capstone"}), COMPARE)
    assert any("Nothing is pinned" in i.value for i in at.info)
    assert not [t for t in at.table if "difference" in t.value.columns]


def test_pin_then_edit_the_sidebar_shows_both_with_the_differences() -> None:
    at = visit(new_app({"preset": "capstone"}), COMPARE)
    at.button(key="cmp.pin").click().run()
    assert _params(at)["pin"] == "capstone"
    assert any("is the pinned one" in i.value for i in at.info)
    at.slider(key="sb.hardware.nodes").set_value(6).run()
    assert not at.exception
    frame = _comparison(at)
    assert list(frame.columns) == ["pinned", "current", "difference", "change", ""]
    nodes, cost = frame.loc["GPU nodes"], frame.loc["Cost per hour"]
    assert (nodes["pinned"], nodes["current"], nodes["difference"], nodes["change"]) == ("8", "6", "-2", "-25%")
    assert cost["pinned"] == "$160" and cost["current"] == "$120" and cost[""] == "better"
    assert frame.loc["Load / capacity under the SLO", ""] == "worse"  # fewer nodes carry the same peak
    assert frame.loc["Request rate", ""] == "" and frame.loc["Request rate", "difference"] == "same"
    changes = at.table[-1].value
    assert changes.loc["GPU nodes"].tolist() == ["8", "6"]  # what differs in the brief, named in words
    params = _params(at)
    assert params["pin"] == "capstone" and "pin.hardware.nodes" not in params and params["hardware.nodes"] == "6"
    # review s4 finding 13: each title follows its design as edited, not the preset's words (64 H100 vs 48 GPUs)
    titles = [m.value.replace("\\", "") for m in at.markdown if m.value.startswith(("**Pinned:**", "**Current:**"))]
    assert titles[0].startswith("**Pinned:** Capstone: Llama-3-70B for 10,000 chat users on 64 H100")
    assert titles[1].startswith("**Current:** Llama-3-70B for 10,000 users on 6 x 8 NVIDIA H100")


def test_the_pin_survives_a_preset_change_and_reopens_from_the_link() -> None:
    at = new_app({"preset": "capstone", "hardware.nodes": "6"})
    at.button(key="vb.pin").click().run()  # the verdict bar on any page pins the design
    assert _params(at)["pin.hardware.nodes"] == "6"
    at.sidebar.selectbox(key="nav.preset").set_value("variation-g").run()
    visit(at, COMPARE)
    frame = _comparison(at)
    assert frame.loc["GPU nodes", "pinned"] == "6" and frame.loc["GPU nodes", "current"] == "8"
    assert any(m.value.replace("\\", "").startswith("**Pinned:** Llama-3-70B for 10,000 users on 6 x 8 NVIDIA H100") for m in at.markdown)
    assert frame.loc["p95 ITL (target 40 ms)", ""] == "worse"  # A100s decode slower than the pinned H100s
    link = _params(at)
    again = visit(new_app(link), COMPARE)
    assert again.session_state["state.pin"] == ("capstone", {"hardware.nodes": 6})
    assert _comparison(again).equals(frame)


def test_unpin_and_go_back_to_the_pinned_design() -> None:
    at = visit(new_app({"preset": "capstone", "pin": "capstone", "pin.hardware.nodes": "6"}), COMPARE)
    at.button(key="cmp.load").click().run()
    assert at.session_state["state.overrides"] == {"hardware.nodes": 6}
    assert at.sidebar.slider(key="sb.hardware.nodes").value == 6
    at.button(key="cmp.unpin").click().run()
    assert "pin" not in _params(at) and any("Nothing is pinned" in i.value for i in at.info)


def test_a_bad_pin_in_a_link_is_named_and_left_out() -> None:
    at = new_app({"preset": "capstone", "pin": "capstone", "pin.hardware.nodes": "zero"})
    assert any(shown(w.value).startswith("pinned design: hardware.nodes") for w in at.warning), [w.value for w in at.warning]
    assert "state.pin" not in at.session_state
    assert at.session_state["state.overrides"] == {}  # the pin's parameters are not the design's
