"""The app under hostile or careless use: user text never renders as markup, uploads are bounded and
validated, sessions never see each other's brief, and pages never change the planner's cached objects.
"""

from __future__ import annotations

import ast
import copy
import re
from pathlib import Path
from typing import Any

import pytest
from apphelp import ROOT, figure, new_app, shown, visit
from casecount import count, examples
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError
from streamlit.testing.v1 import AppTest
from test_fuzz_inputs import FILE_CASES, SCHEMA_CASES, _set_text, run_main

from planner import GPUS, MODELS, BriefError, load_brief, plan
from planner.loader import MAX_BRIEF_BYTES
from ui.brief_files import read_upload
from ui.pages import PAGES

pytestmark = pytest.mark.app

APP_SOURCES = [ROOT / "app.py", *sorted((ROOT / "pages").glob("*.py")), *sorted((ROOT / "ui").glob("*.py"))]

# Markdown and HTML that would become a link, an image (a request to another host), bold text or LaTeX
# if the app rendered it instead of showing it.
PAYLOAD = "[pwn](https://evil.example/x) ![i](https://evil.example/p.png) <img src=x onerror=alert(1)> **b** $x$"
_UNESCAPED = re.compile(r"\]\(https://evil|(?<!\\)<img|(?<![\\*])\*\*b(?<!\\)\*\*|(?<!\\)\$x(?<!\\)\$")


# --- no user text reaches HTML unescaped -----------------------------------------------------------


def _html_escape_hatches(path: Path) -> list[str]:
    """Calls that let HTML through: unsafe_allow_html=True, st.html, components.html / iframe."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if not isinstance(node, ast.Call):
            continue
        name = ast.unparse(node.func)
        if name.endswith(("st.html", "components.html", "components.iframe", "v1.html")):
            found.append(f"{path.name}:{node.lineno} {name}")
        for kw in node.keywords:
            if kw.arg == "unsafe_allow_html" and not (isinstance(kw.value, ast.Constant) and kw.value.value is False):
                found.append(f"{path.name}:{node.lineno} unsafe_allow_html")
    return found


def test_no_page_lets_raw_html_through() -> None:
    hatches = [h for path in APP_SOURCES for h in _html_escape_hatches(path)]
    assert hatches == [], f"HTML escape hatches in the app (each needs escaped input and a test): {hatches}"


def _rendered_texts(at: AppTest) -> list[tuple[str, str]]:
    """(element type, body) of every element that renders Markdown."""
    kinds = ("markdown", "caption", "error", "warning", "success", "info", "title", "header", "subheader", "exception")
    texts = []
    for kind in kinds:
        for element in at.get(kind):
            body = getattr(element, "value", None) or getattr(element.proto, "body", "")
            texts.append((kind, str(body)))
    return texts


def _assert_shown_as_text(at: AppTest, where: str) -> None:
    leaks = [(kind, body) for kind, body in _rendered_texts(at) if _UNESCAPED.search(body)]
    assert not leaks, f"{where}: user text rendered as markup: {leaks}"
    count("app: pages checked for unescaped user text")


@pytest.mark.parametrize(
    "params",
    [
        {"title": PAYLOAD},  # a valid override: the title shows under every page heading
        {PAYLOAD: "1"},  # an unknown field named by the link
        {"hardware.gpu": PAYLOAD},  # an unknown catalog key from the link
        {"preset": PAYLOAD},  # an unknown preset
        {"workload.duty_cycle": PAYLOAD},  # a value of the wrong type
    ],
    ids=["title", "unknown-field", "unknown-gpu", "unknown-preset", "wrong-type"],
)
def test_text_from_a_link_is_shown_not_rendered(params: dict[str, str]) -> None:
    at = new_app(params)
    for page, title, _ in PAGES:
        visit(at, page)
        _assert_shown_as_text(at, f"{title} with {params}")


def test_text_typed_into_a_field_is_shown_not_rendered() -> None:
    at = new_app({"preset": "capstone"})
    visit(at, "pages/brief.py")
    at.text_input(key="f.title").input(PAYLOAD).run()
    at.text_area(key="f.description").input(PAYLOAD).run()
    assert not at.exception
    _assert_shown_as_text(at, "Brief after typing the payload")
    visit(at, "pages/capacity.py")
    _assert_shown_as_text(at, "Capacity after typing the payload")


# --- uploads ---------------------------------------------------------------------------------------


def test_the_uploader_is_limited_to_small_toml_and_json_files() -> None:
    at = new_app({"preset": "capstone"})
    visit(at, "pages/brief.py")
    uploader = at.get("file_uploader")[0].proto
    assert sorted(uploader.type) == [".json", ".toml"]
    assert 0 < uploader.max_upload_size_mb <= 1


@pytest.mark.parametrize("name", sorted(FILE_CASES))
def test_a_malformed_upload_is_one_brief_error_naming_the_file_or_field(name: str) -> None:
    count("app: malformed uploads")
    with pytest.raises(BriefError) as info:
        read_upload(name, FILE_CASES[name])
    assert "\n" not in str(info.value).strip() or name.startswith("deep")
    assert info.value.field == name or info.value.field.split(".")[0] in ("hardware", "workload", "title", "brief")


def test_an_upload_over_the_limit_is_refused_before_parsing() -> None:
    with pytest.raises(BriefError, match="at most"):
        read_upload("big.toml", b"#" * (MAX_BRIEF_BYTES + 1))


@settings(max_examples=examples(50))
@given(blob=st.binary(max_size=3000), suffix=st.sampled_from([".toml", ".json", ".TOML", ""]))
def test_any_uploaded_bytes_are_a_brief_or_a_brief_error(blob: bytes, suffix: str) -> None:
    count("app: arbitrary uploaded bytes (hypothesis)")
    try:
        read_upload(f"upload{suffix}", blob)
    except BriefError as exc:
        assert exc.field and exc.reason


def test_a_good_upload_round_trips() -> None:
    text = (ROOT / "presets" / "qps10-tp4.toml").read_bytes()
    assert read_upload("mine.toml", text) == load_brief("qps10-tp4")


# --- sessions are isolated ---------------------------------------------------------------------------


def _run_both(apps: list[AppTest], page: str) -> None:
    for at in apps:
        at.switch_page(page).run(timeout=120)


def test_two_concurrent_sessions_never_see_each_others_brief() -> None:
    """Two users at once, different designs, one process (shared lru and Streamlit caches): each sees only its own.

    Both sessions stay alive and their runs interleave page by page. They do not run in two threads:
    AppTest has no Runtime and is not built for two runs at once (threaded runs failed now and then
    inside Streamlit with "Runtime hasn't been created" or a KeyError on a widget id), so a threaded
    version was flaky for reasons outside the app.
    """
    one = new_app({"preset": "capstone", "hardware.nodes": "6", "title": "Session one"})
    two = new_app({"preset": "qps10-tp4", "workload.request_rate": "12", "title": "Session two"})
    for round_ in range(3):
        for page, _, _ in PAGES:
            _run_both([one, two] if round_ % 2 == 0 else [two, one], page)
            assert not one.exception and not two.exception
            for at, title, preset in ((one, "Session one", "capstone"), (two, "Session two", "qps10-tp4")):
                assert at.caption[0].value.replace("\\", "") == title
                assert at.sidebar.selectbox(key="nav.preset").value == preset
        # each changes its own design in between; the other must not follow
        one.sidebar.slider(key="sb.workload.duty_cycle").set_value(0.05 + 0.02 * round_).run()
        assert two.session_state["state.overrides"].get("workload.duty_cycle") is None
        assert one.session_state["state.overrides"]["hardware.nodes"] == 6
        assert two.session_state["state.overrides"] == {"workload.request_rate": 12, "title": "Session two"}
    visit(one, "pages/capacity.py")
    visit(two, "pages/capacity.py")
    assert figure(one, "Request rate") != figure(two, "Request rate")
    count("app: concurrent session rounds", 3)


# --- cached objects are never changed by a page --------------------------------------------------


def test_a_design_is_frozen() -> None:
    design = plan(load_brief("capstone"))
    with pytest.raises(ValidationError):
        design.capacity.utilization = 0.0  # type: ignore[misc]
    with pytest.raises(ValidationError):
        design.brief.hardware.nodes = 1  # type: ignore[misc]
    with pytest.raises((TypeError, AttributeError)):
        design.verdict.problems.append(None)  # type: ignore[attr-defined]  # a tuple, not a list


def _snapshot(obj: Any) -> Any:
    return copy.deepcopy(obj.model_dump())


def test_pages_never_mutate_cached_designs_or_catalogs() -> None:
    """Every page of every interesting preset renders from the same cached Design; afterwards it is unchanged."""
    presets = ("capstone", "qps10-tp4", "variation-f")
    designs = {name: plan(load_brief(name)) for name in presets if _computable(name)}
    before = {name: _snapshot(d) for name, d in designs.items()}
    catalogs = copy.deepcopy(({k: g.model_dump() for k, g in GPUS.items()}, {k: m.model_dump() for k, m in MODELS.items()}))
    for name in presets:
        at = new_app({"preset": name})
        for page, _, _ in PAGES:
            visit(at, page)
    for name, design in designs.items():
        assert plan(load_brief(name)) is design, "the page used another object than the cached one"
        assert _snapshot(design) == before[name], f"a page changed the cached design of {name}"
    assert ({k: g.model_dump() for k, g in GPUS.items()}, {k: m.model_dump() for k, m in MODELS.items()}) == catalogs


def _computable(name: str) -> bool:
    try:
        plan(load_brief(name))
    except BriefError:
        return False
    return True


# --- the app names a bad value the way the CLI does, and keeps the rest of the brief ---------------


def _link_cases() -> list[tuple[str, str]]:
    """A spread of the fuzz suite's bad values, as a link would carry them (path, raw text)."""
    cases = [
        (path, _set_text(value))
        for channel, path, _, value in SCHEMA_CASES
        if channel == "set" and not path.startswith("model.custom") and path != "hardware.nodes"  # the link keeps nodes=6
    ]
    return cases[:: max(1, len(cases) // 12)][:12]


@pytest.mark.parametrize(("path", "raw"), _link_cases(), ids=[f"{p}={r[:12]}" for p, r in _link_cases()])
def test_a_bad_value_in_a_link_gets_the_clis_message_and_the_rest_is_kept(path: str, raw: str, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run_main(["plan", "capstone", "--set", f"{path}={raw}"], capsys)
    assert code == 2
    cli_message = err.removeprefix("error: ").strip()
    at = new_app({"preset": "capstone", "hardware.nodes": "6", path: raw})
    count("app: bad link values checked against the CLI's message")
    warnings = [shown(w.value) for w in at.warning]
    assert any(cli_message in w for w in warnings), f"CLI says {cli_message!r}; the app shows {warnings}"
    assert at.sidebar.number_input(key="sb.hardware.nodes").value == 6  # the rest of the link is kept
