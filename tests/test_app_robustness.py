"""The app under hostile or careless use: user text never renders as markup, uploads are bounded and
validated, sessions never see each other's brief, and pages never change the planner's cached objects.
"""

from __future__ import annotations

import ast
import base64
import copy
import json
import re
import tomllib
from pathlib import Path
from typing import Any

import pytest
from apphelp import APP, ROOT, TIMEOUT_S, figure, new_app, open_arithmetic, other_tabs, shown, visit
from casecount import count, examples
from crafted import CRAFTED_LINKS, CUSTOM_70B_LINK, HF_CONFIGS, LINK_TEXT_PAYLOADS, crafted_ids
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError
from streamlit.testing.v1 import AppTest
from test_fuzz_inputs import FILE_CASES, SCHEMA_CASES, _set_text, run_main

from planner import GPUS, MODELS, BriefError, load_brief, plan
from planner.loader import MAX_BRIEF_BYTES
from ui.brief_files import read_hf_config, read_upload
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


# The one allowed: the Architecture page's diagram (ui/diagram.py). Its HTML is Graphviz's SVG (as image data) and
# the planner's own labels, every text escaped, with no user text in it (test_the_diagram_carries_no_user_text).
ALLOWED_HATCHES = {"diagram.py st.html"}


def test_no_page_lets_raw_html_through() -> None:
    hatches = [h for path in APP_SOURCES for h in _html_escape_hatches(path)]
    unexpected = [h for h in hatches if re.sub(r":\d+", "", h) not in ALLOWED_HATCHES]
    assert unexpected == [], f"HTML escape hatches in the app (each needs escaped input and a test): {unexpected}"
    assert len(hatches) == len(ALLOWED_HATCHES), hatches  # the allowed one is still there, once


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
    visit(at, "app.py")
    at.session_state["form.section.about"] = True  # open the section (its fields are drawn only while it is open)
    at.run()
    at.text_input(key="f.title").input(PAYLOAD).run()
    at.text_area(key="f.description").input(PAYLOAD).run()
    assert not at.exception
    _assert_shown_as_text(at, "Brief after typing the payload")
    visit(at, "pages/capacity.py")
    _assert_shown_as_text(at, "Capacity after typing the payload")


# --- uploads ---------------------------------------------------------------------------------------


def test_the_uploader_is_limited_to_small_toml_and_json_files() -> None:
    at = new_app({"preset": "capstone"})
    visit(at, "app.py")
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
    assert at.sidebar.slider(key="sb.hardware.nodes").value == 6  # the rest of the link is kept


# --- crafted links: every one ends in a message or a design, never an exception (issue 17) ------------


def _page_failures(at: AppTest, page: str) -> list[str]:
    return [f"{page}: {e.value[:200]}" for e in at.exception]


@pytest.mark.parametrize("params", CRAFTED_LINKS, ids=crafted_ids())
def test_a_crafted_link_never_shows_an_exception_on_any_page(params: dict[str, str]) -> None:
    at = AppTest.from_file(APP, default_timeout=TIMEOUT_S)
    for key, value in params.items():
        at.query_params[key] = value
    at.run()
    failures = _page_failures(at, "first run")
    for page, _, _ in PAGES:
        at.switch_page(page).run()
        failures += _page_failures(at, page)
    count("app: crafted links, every page")
    assert not failures, failures


def _overrides_from(params: dict[str, str]) -> dict[str, Any]:
    return dict(new_app(params).session_state["state.overrides"])


def test_link_parameters_apply_whatever_their_order() -> None:
    custom = CUSTOM_70B_LINK
    name_first = _overrides_from({"preset": "capstone", "model.name": "custom", **custom})
    name_last = _overrides_from({"preset": "capstone", **custom, "model.name": "custom"})
    assert name_first == name_last and name_first["model.name"] == "custom"
    lengths = {"workload.input_tokens_mean": "50000", "workload.input_tokens_p95": "100000"}
    assert _overrides_from({"preset": "capstone", **lengths}) == _overrides_from({"preset": "capstone", **dict(reversed(lengths.items()))})
    assert _overrides_from({"preset": "capstone", **lengths})["workload.input_tokens_p95"] == 100_000


def test_a_link_the_app_wrote_reopens_the_same_custom_model() -> None:
    from ui.state import to_query_params

    at = new_app({"preset": "capstone"})
    visit(at, "app.py")
    at.selectbox(key="f.model.name").set_value("custom").run()
    overrides = dict(at.session_state["state.overrides"])
    assert overrides.get("model.name") == "custom"
    again = new_app(to_query_params("capstone", overrides))
    assert dict(again.session_state["state.overrides"]) == overrides
    assert not again.warning


def test_a_value_a_slider_cannot_show_still_plans_and_the_control_says_so() -> None:
    at = new_app({"preset": "capstone", "workload.duty_cycle": "0.005"})
    assert at.session_state["state.overrides"] == {"workload.duty_cycle": 0.005}
    assert at.sidebar.slider(key="sb.workload.duty_cycle").value == pytest.approx(0.01)  # its nearest position
    assert any("0.005" in shown(c.value) and "0.01" in shown(c.value) for c in at.sidebar.caption)
    visit(at, "pages/capacity.py")
    expected = plan(load_brief("capstone").with_changes({"workload.duty_cycle": 0.005})).demand.request_rate_per_s
    assert figure(at, "Request rate") == pytest.approx(expected, rel=0.01)


def test_a_fleet_larger_than_the_slider_still_plans_and_the_slider_says_so() -> None:
    at = visit(new_app({"preset": "capstone", "hardware.nodes": "100"}), "pages/cost.py")
    assert at.sidebar.slider(key="sb.hardware.nodes").value == 64  # its end
    assert any("100" in shown(c.value) and "64" in shown(c.value) for c in at.sidebar.caption)
    expected = plan(load_brief("capstone").with_changes({"hardware.nodes": 100})).cost.usd_per_hour
    assert figure(at, "Cost per hour") == pytest.approx(expected, rel=0.01)


def test_an_unknown_model_and_an_overflowing_value_in_a_link_are_named() -> None:
    at = new_app({"preset": "capstone", "model.name": "gpt-5", "efficiency.compute_fraction": "1e-200", "hardware.nodes": "6"})
    warnings = " ".join(shown(w.value) for w in at.warning)
    assert "model.name: unknown model 'gpt-5'" in warnings and "efficiency.compute_fraction" in warnings
    assert at.session_state["state.overrides"] == {"hardware.nodes": 6}


# --- user text never becomes a link, an image or markup ---------------------------------------------

# what a GFM renderer autolinks even when it is backslash-escaped (markup such as [x](y) is _UNESCAPED's job)
_AUTOLINKABLE = re.compile(r"(?i)(?:https?|ftp)://|www\.|[\w.+-]@[\w-]+\.")


def _link_leaks(at: AppTest) -> list[tuple[str, str]]:
    """Markdown bodies in which a renderer would still find a URL or an e-mail address to link (escapes resolved)."""
    return [(kind, body) for kind, body in _rendered_texts(at) if _AUTOLINKABLE.search(re.sub(r"\\(.)", r"\1", body))]


@pytest.mark.parametrize("payload", LINK_TEXT_PAYLOADS, ids=range(len(LINK_TEXT_PAYLOADS)))
def test_text_from_a_link_never_becomes_a_link(payload: str) -> None:
    for params in (
        {"preset": "capstone", "title": payload, "description": payload, "assumptions": json.dumps([payload])},
        {"preset": payload},
        {"preset": "capstone", payload[:60]: "1", "hardware.gpu": payload[:40]},
    ):
        at = new_app(params)
        for page, title, _ in PAGES:
            visit(at, page)
            assert not _link_leaks(at), f"{title} with {params}: {_link_leaks(at)}"
            _assert_shown_as_text(at, f"{title} with {params}")
            count("app: pages checked for autolinkable user text")


def test_the_diagram_carries_no_user_text() -> None:
    """The Architecture page's one st.html: a link's title and description (anyone's text) reach no part of it."""
    at = new_app({"preset": "capstone", "title": LINK_TEXT_PAYLOADS[0], "description": LINK_TEXT_PAYLOADS[3]})
    visit(at, "pages/architecture.py")
    sent = " ".join(h.proto.body for h in at.get("html"))
    svgs = [base64.b64decode(data).decode() for data in re.findall(r"data:image/svg\+xml;base64,([A-Za-z0-9+/=]+)", sent)]
    assert len(svgs) == 2
    for text in (sent, *svgs):
        assert "evil" not in text and "href" not in text.lower() and "<script" not in text.lower()


# --- the server reads none of its files for a brief from elsewhere ----------------------------------


@pytest.fixture
def no_file_reads(monkeypatch: pytest.MonkeyPatch) -> None:
    """Fail the test if anything asks the loader to read a config.json from disk."""

    def refuse(path: Any) -> None:
        raise AssertionError(f"the app tried to read {path}")

    monkeypatch.setattr("planner.loader.model_from_hf_config", refuse)


@pytest.mark.usefixtures("no_file_reads")
@pytest.mark.parametrize("path", ["/etc/passwd", "/etc/hostname", "presets/capstone.toml", "/" + "a" * 300, "/dev/zero"])
def test_a_server_path_in_a_link_is_refused_without_touching_it(path: str) -> None:
    at = new_app({"preset": "capstone", "model.hf_config": path})
    warnings = [shown(w.value) for w in at.warning]
    assert any(w.startswith("model.hf_config: a file path is not accepted here") for w in warnings), warnings
    assert at.session_state["state.overrides"] == {}


@pytest.mark.usefixtures("no_file_reads")
def test_a_server_path_in_an_uploaded_brief_is_refused_without_touching_it() -> None:
    text = (ROOT / "presets" / "capstone.toml").read_text().replace("[model]\n", '[model]\nhf_config = "/etc/passwd"\n', 1)
    assert 'hf_config = "/etc/passwd"' in text
    with pytest.raises(BriefError, match=r"model\.hf_config: a file path is not accepted here"):
        read_upload("brief.toml", text.encode())
    at = new_app({"preset": "capstone"})
    visit(at, "app.py")
    at.get("file_uploader")[0].upload("brief.toml", text.encode(), "application/toml").run()
    assert not at.exception
    errors = [shown(e.value) for e in at.error]
    assert any("model.hf_config: a file path is not accepted here" in e for e in errors), errors
    assert at.session_state["state.overrides"] == {}


def _hf_uploader(at: AppTest) -> Any:
    return next(u for u in at.get("file_uploader") if u.proto.label.startswith("Model from a Hugging Face"))


def test_a_model_comes_from_an_uploaded_config_json() -> None:
    at = new_app({"preset": "capstone"})
    visit(at, "app.py")
    _hf_uploader(at).upload("Llama-3.1-8B.json", HF_CONFIGS["good"], "application/json").run()
    assert not at.exception
    brief = at.session_state["state.overrides"]
    assert brief["model.name"] == "custom" and brief["model.custom"]["kv_heads"] == 8
    assert brief["model.custom"]["params"] == pytest.approx(8.03e9, rel=0.01)  # the published 8.03e9


@pytest.mark.parametrize("name", sorted(set(HF_CONFIGS) - {"good"}))
def test_a_bad_uploaded_config_json_is_one_message_naming_the_field(name: str) -> None:
    with pytest.raises(BriefError) as info:
        read_hf_config(f"{name}.json", HF_CONFIGS[name])
    assert "\n" not in str(info.value) and info.value.field.startswith(f"{name}.json")
    count("app: bad config.json uploads")


def test_bad_config_json_uploads_through_the_page_keep_the_design() -> None:
    at = new_app({"preset": "capstone", "hardware.nodes": "6"})
    visit(at, "app.py")
    for name in ("zero-heads", "inf-hidden", "text-layers", "binary", "deep"):
        _hf_uploader(at).upload(f"{name}.json", HF_CONFIGS[name], "application/json").run()
        assert not at.exception, name
        assert any(shown(e.value).startswith(f"Not loaded: {name}.json") for e in at.error), name
        assert at.session_state["state.overrides"] == {"hardware.nodes": 6}
        _hf_uploader(at).clear().run()


# --- the server, not only the browser, limits uploads -----------------------------------------------


def test_the_server_config_limits_uploads_and_hides_the_deploy_button() -> None:
    config = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text())
    assert config["server"]["maxUploadSize"] == 1  # MB: Streamlit's server refuses larger request bodies
    assert config["client"]["toolbarMode"] == "minimal"


def test_the_server_config_skips_the_full_garbage_collection_after_every_run() -> None:
    """Streamlit's gc.collect(2) after each rerun was most of the server's CPU under load (benchmarks/app_load.py)."""
    config = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text())
    assert config["runner"]["postScriptGC"] is False


def test_an_uploaded_brief_with_an_unknown_model_is_refused_and_the_design_kept() -> None:
    text = (ROOT / "presets" / "capstone.toml").read_text().replace('name = "llama-3-70b"', 'name = "gpt-5"', 1)
    assert 'name = "gpt-5"' in text
    at = new_app({"preset": "capstone", "hardware.nodes": "6"})
    visit(at, "app.py")
    at.get("file_uploader")[0].upload("brief.toml", text.encode(), "application/toml").run()
    assert not at.exception
    assert any("model.name: unknown model 'gpt-5'" in shown(e.value) for e in at.error)
    assert at.session_state["state.overrides"] == {"hardware.nodes": 6}


def _chart_strings(spec: Any) -> list[str]:
    """Every string a plotly chart can put on screen (names, texts, titles, tick and hover texts), from its spec."""
    if isinstance(spec, str):
        return [spec]
    if isinstance(spec, dict):
        return [text for key, value in spec.items() if key != "template" for text in _chart_strings(value)]
    if isinstance(spec, list):
        return [text for value in spec for text in _chart_strings(value)]
    return []


def _unplaced_marks(spec: dict[str, Any]) -> list[dict[str, Any]]:
    """Lines and labels with a coordinate the chart could not place (an infinity written as null lands at 0)."""
    layout = spec.get("layout", {})
    marks = [*layout.get("shapes", []), *layout.get("annotations", [])]
    keys = ("x0", "x1", "y0", "y1", "x", "y")
    return [m for m in marks if any(k in m and m[k] is None for k in keys)]


def _visible_text(at: AppTest) -> str:
    """Every text element of the page: Markdown, alerts, headings, metrics (value, the line under it, help), table and
    dataframe cells and headers, expander labels, and every string of every chart."""
    parts = [
        e.value for e in [*at.markdown, *at.caption, *at.error, *at.warning, *at.info, *at.success, *at.title, *at.header, *at.subheader]
    ]
    parts += [f"{m.label} {m.value} {m.proto.delta} {m.proto.help}" for m in at.metric]
    parts += [d.value.to_string() for d in at.dataframe]
    parts += [t.value.to_string() for t in at.table]
    parts += [e.label for e in at.get("expander")]
    for chart in at.get("plotly_chart"):
        parts += _chart_strings(json.loads(chart.proto.spec))
    return " ".join(str(p) for p in parts)


# What a number must never look like on screen: an infinity, a NaN, scientific notation (3.13e+11).
_RAW_NUMBER = re.compile(r"∞|\binf\b|\bnan\b|\d(?:\.\d+)?e[+-]\d", flags=re.IGNORECASE)


def _raw_numbers(text: str) -> list[str]:
    return [text[max(m.start() - 50, 0) : m.end() + 20] for m in _RAW_NUMBER.finditer(text)]


def _charts_place_every_mark(at: AppTest) -> list[dict[str, Any]]:
    return [mark for chart in at.get("plotly_chart") for mark in _unplaced_marks(json.loads(chart.proto.spec))]


_UNSTEADY = [
    {"preset": "capstone", "deployment.max_num_seqs": "20"},  # every batch slot taken
    {"preset": "variation-f"},  # the 405B model does not fit the fleet
    {"preset": "capstone", "workload.users": "200000"},  # twenty times the traffic: the queues grow without bound
]


@pytest.mark.parametrize("params", _UNSTEADY, ids=["slots", "405b", "overload"])
def test_a_design_without_a_steady_state_never_prints_infinity(params: dict[str, str]) -> None:
    """No page prints a raw ∞, inf, NaN or e+ notation: an unbounded figure reads 'unbounded' with its cause, and no
    chart draws a mark at a coordinate it cannot place."""
    at = new_app(params)
    for page, _, _ in PAGES:
        at.switch_page(page).run()
        assert not at.exception, (page, [e.value for e in at.exception])
        text = _visible_text(open_arithmetic(at))
        assert not _raw_numbers(text), (page, _raw_numbers(text)[:3])
        assert not _charts_place_every_mark(at), (page, _charts_place_every_mark(at)[:2])
        text = _visible_text(other_tabs(at))  # the charts of the tabs that were closed
        assert not _raw_numbers(text), (page, _raw_numbers(text)[:3])
        assert not _charts_place_every_mark(at), (page, _charts_place_every_mark(at)[:2])
        bare = [m.label for m in at.metric if m.value == "unbounded" and not m.proto.delta]
        assert not bare, f"{page}: unbounded without its cause under it: {bare}"


@pytest.mark.parametrize("preset", [name for name in __import__("planner").preset_names()])
def test_every_page_of_every_preset_opens_with_the_verdict_bar(preset: str) -> None:
    """Issue 16: the verdict at a glance on every page (feasible / meets / availability, p95s against targets, $/M);
    no raw infinity, NaN or e+ notation anywhere on the page (text, metrics, tables, charts); and every metric a page
    shows is a figure of the registry (planner.figures), under its one name."""
    from planner.figures import REGISTRY
    from ui.verdict_bar import verdict_headline

    names = {entry.label for entry in REGISTRY.values()}
    at = new_app({"preset": preset})
    design = plan(load_brief(preset))
    headline = verdict_headline(design)
    for page, _, _ in PAGES:
        at.switch_page(page).run()
        assert not at.exception, (preset, page, [e.value for e in at.exception])
        labels = {m.label for m in at.metric}
        tiles = (
            {"p95 TTFT", "Availability (N+1)", "Cost per M output tokens"}
            if design.objective is None
            else {"Time to finish", "Throughput (input + output)", "Cost per M tokens (input + output)"}  # judged on its deadline
        )
        assert tiles <= labels, (preset, page)
        assert labels <= names, (preset, page, sorted(labels - names))
        for frame in (t.value for t in at.table if "difference" in t.value.columns):  # comparisons: one row per figure
            rows = {re.sub(r" \(target [^)]*\)$", "", name) for name in frame.index}
            assert rows <= names, (preset, page, sorted(rows - names))
        text = _visible_text(open_arithmetic(at))  # the arithmetic too
        assert headline in text and "What binds:" in text, (preset, page)
        assert not _raw_numbers(text), (preset, page, _raw_numbers(text)[:3])
        assert not _charts_place_every_mark(at), (preset, page)


def test_the_failure_page_says_an_offline_jobs_scenarios_are_judged_on_its_deadline() -> None:
    """An offline job's failure rows are judged on its deadline: the scenario count's help says so (its label stays
    the registry's), and a chat design's does not."""
    offline = visit(new_app({"preset": "offline-batch"}), "pages/failure_modes.py")
    assert not offline.exception
    tile = next(m for m in offline.metric if m.label == "Scenarios within the SLO")
    assert "judged on the deadline" in (tile.help or "")
    chat = visit(new_app({"preset": "capstone"}), "pages/failure_modes.py")
    assert "deadline" not in (next(m for m in chat.metric if m.label == "Scenarios within the SLO").help or "")
