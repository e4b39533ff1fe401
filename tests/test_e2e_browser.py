"""End to end in a real browser: `streamlit run app.py` on 127.0.0.1 and Debian's headless Chromium.

It opens a page URL first (a fresh server's first request: app.py's st.navigation must resolve it, with
the page's own sidebar and exactly the app's page list), visits every page, moves the duty-cycle slider,
checks that the figures and the URL change, clicks the document buttons on a server whose Graphviz and
Chromium fail, and saves a screenshot of each step under artifacts/e2e/ (ignored by git). Servers are
stopped by their pid (benchmarks.live.serve).
"""

from __future__ import annotations

import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from benchmarks.live import CHROMIUM, CHROMIUM_FLAGS, serve
from ui.pages import PAGES

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

ROOT = Path(__file__).resolve().parent.parent
SHOTS = ROOT / "artifacts" / "e2e"
FIGURES = '[data-testid="stMetric"], [data-testid="stDataFrame"]'  # what every page shows once its run is done
RERUN_TIMEOUT_MS = 60_000  # waits return as soon as the condition holds; the first run imports everything


def _require_chromium() -> None:
    if not CHROMIUM.exists():
        reason = f"{CHROMIUM} is absent: install Debian's chromium package (./run test does it as root)"
        print(f"SKIP e2e: {reason}")
        pytest.skip(reason)


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    _require_chromium()
    SHOTS.mkdir(parents=True, exist_ok=True)
    with serve(ROOT / "app.py", log=SHOTS / "server.log") as running:
        yield running.url


@pytest.fixture(scope="module")
def pw() -> Iterator[object]:
    """One Playwright for the module: its sync API cannot start a second one while the first runs."""
    from playwright.sync_api import sync_playwright

    _require_chromium()
    with sync_playwright() as playwright:
        yield playwright


@contextmanager
def _browser_page(pw: object) -> Iterator[object]:
    with tempfile.TemporaryDirectory() as profile:
        context = pw.chromium.launch_persistent_context(  # type: ignore[attr-defined]
            profile, executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_FLAGS, viewport={"width": 1400, "height": 1000}
        )
        try:
            yield context.pages[0] if context.pages else context.new_page()
        finally:
            context.close()


@pytest.fixture(scope="module")
def page(server: str, pw: object) -> Iterator[object]:
    with _browser_page(pw) as tab:
        yield tab


def _settle(page: object, title: str | None = None) -> None:
    """Wait until the page's run finished: its title and figures drawn, and Streamlit no longer running."""
    page.locator("h1", has_text=title or "").first.wait_for(timeout=RERUN_TIMEOUT_MS)  # type: ignore[attr-defined]
    page.locator(FIGURES).first.wait_for(timeout=RERUN_TIMEOUT_MS)  # type: ignore[attr-defined]
    page.wait_for_function(  # type: ignore[attr-defined]
        "() => !document.querySelector('[data-testid=\"stStatusWidget\"]')", timeout=RERUN_TIMEOUT_MS
    )


def _metric(page: object, label: str) -> str:
    metric = page.locator('[data-testid="stMetric"]').filter(  # type: ignore[attr-defined]
        has=page.locator('[data-testid="stMetricLabel"]', has_text=label)  # type: ignore[attr-defined]
    )
    return str(metric.first.locator('[data-testid="stMetricValue"]').inner_text())


def _navigation(page: object) -> list[str]:
    """The page names in the sidebar's navigation, in order."""
    links = page.locator('[data-testid="stSidebarNav"] [data-testid="stSidebarNavLink"]')  # type: ignore[attr-defined]
    return [" ".join(text.split()) for text in links.all_inner_texts()]


def _no_exception(page: object) -> None:
    assert page.locator('[data-testid="stException"]').count() == 0, page.locator('[data-testid="stException"]').first.inner_text()  # type: ignore[attr-defined]


def test_every_page_in_a_real_browser(server: str, page: object) -> None:
    # First request is a page URL with a link's parameters: the sidebar and the linked design must render.
    page.goto(f"{server}/slo_budget?preset=qps10-tp4&hardware.nodes=3")  # type: ignore[attr-defined]
    _settle(page, "SLO budget")
    assert page.get_by_text("Page not found").count() == 0  # type: ignore[attr-defined]
    page.get_by_text("Request rate (req/s)").first.wait_for(timeout=RERUN_TIMEOUT_MS)  # type: ignore[attr-defined]
    page.get_by_text("10 QPS: Llama-3-70B").first.wait_for(timeout=RERUN_TIMEOUT_MS)  # type: ignore[attr-defined]
    nodes = page.locator('[data-testid="stSidebar"] [data-testid="stNumberInput"]', has_text="Nodes").locator("input")  # type: ignore[attr-defined]
    assert nodes.input_value() == "3"
    _no_exception(page)
    assert _navigation(page) == [title for _, title, _ in PAGES], "the page list is app.py's, with no automatic entries"
    page.screenshot(path=str(SHOTS / "00-direct-link-slo-budget.png"), full_page=True)  # type: ignore[attr-defined]

    for i, (_, title, url_path) in enumerate(PAGES, start=1):
        path = "" if i == 1 else url_path  # the default page lives at the root
        page.goto(f"{server}/{path}?preset=capstone")  # type: ignore[attr-defined]
        _settle(page, title)
        _no_exception(page)
        assert page.get_by_text("Page not found").count() == 0  # type: ignore[attr-defined]
        assert page.locator(FIGURES).count() > 0, f"{title}: no figures shown"
        assert _navigation(page) == [t for _, t, _ in PAGES]
        page.screenshot(path=str(SHOTS / f"{i:02d}-{url_path}.png"), full_page=True)  # type: ignore[attr-defined]


def test_slider_moves_the_figures(server: str, page: object) -> None:
    page.goto(f"{server}/capacity?preset=capstone")  # type: ignore[attr-defined]
    _settle(page, "Capacity")
    before_rate, before_util = _metric(page, "Request rate"), _metric(page, "Utilization")
    assert before_rate == "55.6 req/s"
    thumb = page.locator('[data-testid="stSidebar"] input[type="range"][aria-label="Duty cycle"]')  # type: ignore[attr-defined]
    thumb.focus()
    for value in ("0.09", "0.1", "0.11", "0.12"):  # arrow keys move it by its step, 0.01; each press reruns the app
        thumb.press("ArrowRight")
        page.wait_for_function(  # type: ignore[attr-defined]
            f"() => window.location.search.includes('workload.duty_cycle={value}')", timeout=RERUN_TIMEOUT_MS
        )
    page.get_by_text("83.3 req/s").first.wait_for(timeout=RERUN_TIMEOUT_MS)  # type: ignore[attr-defined]
    _settle(page)
    assert _metric(page, "Request rate") == "83.3 req/s"
    assert float(_metric(page, "Utilization").rstrip("%")) > float(before_util.rstrip("%"))
    _no_exception(page)
    page.screenshot(path=str(SHOTS / "20-capacity-after-slider.png"), full_page=True)  # type: ignore[attr-defined]

    # The URL now carries the change: reopening it shows the same figure.
    link = page.url  # type: ignore[attr-defined]
    page.goto(link)  # type: ignore[attr-defined]
    _settle(page)
    page.get_by_text("83.3 req/s").first.wait_for(timeout=RERUN_TIMEOUT_MS)  # type: ignore[attr-defined]
    assert _metric(page, "Request rate") == "83.3 req/s"


_FOREIGN_RESOURCES = """() => [...document.querySelectorAll('a[href], img[src], iframe[src], link[href], script[src]')]
    .map(e => e.getAttribute('href') || e.getAttribute('src'))
    .filter(u => { try { return new URL(u, location.href).host !== location.host } catch (err) { return true } })"""
_EVIL = "https://evil.example/login"


def test_text_from_a_link_is_no_link_in_the_browser(server: str, page: object) -> None:
    """A shared link's title, description, assumptions and preset name show as text: no link or image to another host."""
    from urllib.parse import urlencode

    text = f"Session expired: sign in again at {_EVIL} or www.evil.example, mail admin@evil.example"
    links = [
        {"preset": "capstone", "title": text, "description": text, "assumptions": f'["{text}"]'},
        {"preset": text},
        {"preset": "capstone", "hardware.gpu": "www.evil.example", "model.hf_config": _EVIL},
    ]
    for i, params in enumerate(links):
        page.goto(f"{server}/?{urlencode(params)}")  # type: ignore[attr-defined]
        _settle(page, "Brief")
        _no_exception(page)
        body = page.locator("body").inner_text().replace("\u2060", "")  # type: ignore[attr-defined]
        assert "evil.example" in body, "the text is shown"
        foreign = page.evaluate(_FOREIGN_RESOURCES)  # type: ignore[attr-defined]
        assert foreign == [], f"link {i}: elements pointing to another host: {foreign}"
        page.screenshot(path=str(SHOTS / f"30-link-text-{i}.png"), full_page=True)  # type: ignore[attr-defined]


# --- a machine whose Graphviz and Chromium fail: the document buttons say so --------------------------------


def _fake_tool(folder: Path, name: str, body: str) -> Path:
    path = folder / name
    path.write_text(f"#!/bin/sh\n{body}\n")
    path.chmod(0o755)
    return path


_FAILING_DOT = "echo 'dot: cannot load plugins' >&2; exit 1"
_FAILING_CHROMIUM = "echo 'no display' >&2; exit 1"
_ERRORS = '[data-testid="stSidebar"] [data-testid="stAlertContentError"]'


def _sidebar_errors(tab: object) -> list[str]:
    return [" ".join(t.replace("\u2060", "").split()) for t in tab.locator(_ERRORS).all_inner_texts()]  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    ("broken", "stopped", "line"),
    [
        ("chromium", ["PDF"], r"Design document \(PDF\) cannot be made on this server: chromium (did not start|failed) \(exit code 1[^)]*\)"),
        ("dot", ["HTML", "PDF"], r"Design document \(HTML, PDF\) cannot be made on this server: Graphviz dot failed \(exit code 1: dot: cannot load plugins\)"),
    ],
)  # fmt: skip
def test_document_buttons_name_a_failing_tool(tmp_path: Path, pw: object, broken: str, stopped: list[str], line: str) -> None:
    """On a machine whose `dot` or `chromium` exits 1, the sidebar names the tool and the package to install
    (st.error) before any click and after one; the stopped buttons download nothing, the others still work."""
    import re

    _require_chromium()
    env = {broken.upper(): str(_fake_tool(tmp_path, broken, _FAILING_DOT if broken == "dot" else _FAILING_CHROMIUM))}
    package = "graphviz" if broken == "dot" else "chromium"
    expected = re.compile(f"{line}: install Debian's {package} package \\(apt-get install {package}\\)")
    with serve(ROOT / "app.py", env=env, log=SHOTS / f"server-broken-{broken}.log") as running, _browser_page(pw) as tab:
        url = f"{running.url}/?preset=capstone"
        tab.goto(url)  # type: ignore[attr-defined]  # the first run starts the tools' version checks
        _settle(tab, "Brief")
        tab.goto(url)  # type: ignore[attr-defined]
        _settle(tab, "Brief")
        errors = _sidebar_errors(tab)
        assert len(errors) == 1 and expected.fullmatch(errors[0]), errors
        sidebar = tab.locator('[data-testid="stSidebar"]')  # type: ignore[attr-defined]
        for label in ("Markdown", "HTML", "PDF"):
            button = sidebar.get_by_role("button", name=f"Design document ({label})")
            if label in stopped:  # Streamlit's own note under the button; no file
                button.click()
                sidebar.locator('[data-testid="stDownloadButtonError"]').first.wait_for(timeout=RERUN_TIMEOUT_MS)
                continue
            with tab.expect_download(timeout=RERUN_TIMEOUT_MS) as download:  # type: ignore[attr-defined]
                button.click()
            extension = {"Markdown": "md", "HTML": "html"}[label]
            assert download.value.suggested_filename == f"capstone-llama-3-70b-for-10-000-chat-users-on-64-h100.{extension}"
        tab.goto(url)  # type: ignore[attr-defined]  # after the failed clicks: still exactly that line
        _settle(tab, "Brief")
        errors = _sidebar_errors(tab)
        assert len(errors) == 1 and expected.fullmatch(errors[0]), errors
        _no_exception(tab)
        tab.locator(_ERRORS).last.scroll_into_view_if_needed()  # type: ignore[attr-defined]
        tab.screenshot(path=str(SHOTS / f"40-document-buttons-broken-{broken}.png"))  # type: ignore[attr-defined]


_POINTS = ".js-plotly-plot .scatterlayer .trace .points path"


def test_search_then_a_click_on_the_frontier_opens_that_design_on_every_page(server: str, page: object) -> None:
    """qps10-tp4's default space (a few thousand candidates): search, click the cheapest frontier point, and the
    design it names becomes the current one: in the URL, on the Search page and on the Cost page."""
    import re

    page.goto(f"{server}/search?preset=qps10-tp4")  # type: ignore[attr-defined]
    _settle(page, "Search")
    page.get_by_role("button", name=re.compile(r"^Search [\d,]+ candidates")).click()  # type: ignore[attr-defined]
    page.locator(_POINTS).first.wait_for(timeout=300_000)  # type: ignore[attr-defined]
    _settle(page, "Search")
    _no_exception(page)
    assert _metric(page, "Best $ per M output tokens").startswith("$")
    page.screenshot(path=str(SHOTS / "30-search.png"), full_page=True)  # type: ignore[attr-defined]
    before = _metric(page, "This design's $ per M")
    point = page.locator(_POINTS).first  # type: ignore[attr-defined]
    point.scroll_into_view_if_needed()
    box = point.bounding_box()
    x, y = box["x"] + box["width"] / 2, box["y"] + box["height"] / 2
    page.mouse.move(x, y)  # type: ignore[attr-defined]  # plotly selects the point under the pointer: hover first
    page.wait_for_timeout(500)  # type: ignore[attr-defined]
    page.mouse.click(x, y)  # type: ignore[attr-defined]
    page.wait_for_function("() => window.location.search.includes('hardware.gpu=')", timeout=RERUN_TIMEOUT_MS)  # type: ignore[attr-defined]
    page.get_by_text("Opened the searched design").first.wait_for(timeout=RERUN_TIMEOUT_MS)  # type: ignore[attr-defined]
    _settle(page, "Search")
    deadline = time.monotonic() + RERUN_TIMEOUT_MS / 1e3
    while _metric(page, "This design's $ per M") == before and time.monotonic() < deadline:  # the run the click started
        page.wait_for_timeout(200)  # type: ignore[attr-defined]
    _settle(page, "Search")
    opened = _metric(page, "This design's $ per M")
    assert opened != before, "the clicked design is not the one the page started from"
    page.screenshot(path=str(SHOTS / "31-search-opened.png"), full_page=True)  # type: ignore[attr-defined]
    page.goto(page.url.replace("/search", "/cost"))  # type: ignore[attr-defined]
    _settle(page, "Cost")
    assert _metric(page, "Per million output tokens") == opened
