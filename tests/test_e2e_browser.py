"""End to end in a real browser: `streamlit run app.py` on 127.0.0.1 and Debian's headless Chromium.

It opens a page URL first (a fresh server's first request: the page file in pages/ runs with its own sidebar
and the app's page links, and Streamlit's automatic page list stays hidden), visits every page at 1400 and at
390 px wide, moves the duty-cycle slider, checks that the figures and the URL change, that the browser's Back
undoes a change and Forward redoes it, clicks the document buttons on a server whose Graphviz and Chromium
fail, and saves a screenshot of each step under artifacts/e2e/ (ignored by git). Servers are stopped by
their pid (benchmarks.live.serve).
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
WIDE, PHONE = {"width": 1400, "height": 1000}, {"width": 390, "height": 844}


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
def _browser_page(pw: object, width: int = 1400, height: int = 1000) -> Iterator[object]:
    with tempfile.TemporaryDirectory() as profile:
        context = pw.chromium.launch_persistent_context(  # type: ignore[attr-defined]
            profile, executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_FLAGS, viewport={"width": width, "height": height}
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
    """The page names the sidebar links to, in order (each link's text ends with its name, after the icon's).
    Streamlit's own page list must be absent: it names pages after their files."""
    assert page.locator('[data-testid="stSidebarNav"]').count() == 0, "Streamlit's automatic page list is shown"  # type: ignore[attr-defined]
    links = page.locator('[data-testid="stSidebar"] [data-testid="stPageLink"]')  # type: ignore[attr-defined]
    return [text.split("\n")[-1].strip() for text in links.all_inner_texts()]


_SIDEBAR_FOLDED = """() => window.innerWidth === 390
    && document.querySelector('[data-testid="stSidebar"]').getBoundingClientRect().right <= 0"""


def _page_width(page: object) -> int:
    return int(page.evaluate("() => document.documentElement.scrollWidth"))  # type: ignore[attr-defined]


def _no_exception(page: object) -> None:
    assert page.locator('[data-testid="stException"]').count() == 0, page.locator('[data-testid="stException"]').first.inner_text()  # type: ignore[attr-defined]


def test_every_page_in_a_real_browser(server: str, page: object) -> None:
    # First request is a page URL with a link's parameters: the sidebar and the linked design must render.
    page.goto(f"{server}/slo_budget?preset=qps10-tp4&hardware.nodes=3")  # type: ignore[attr-defined]
    _settle(page, "SLO budget")
    assert page.get_by_text("Page not found").count() == 0  # type: ignore[attr-defined]
    page.get_by_text("Request rate (req/s)").first.wait_for(timeout=RERUN_TIMEOUT_MS)  # type: ignore[attr-defined]
    page.get_by_text("Llama-3-70B for 10 req/s on 3 x 4 NVIDIA H100 SXM 80GB").first.wait_for(timeout=RERUN_TIMEOUT_MS)  # type: ignore[attr-defined]  # named as edited
    nodes = page.locator('[data-testid="stSidebar"] input[type="range"][aria-label="Fleet size (nodes)"]')  # type: ignore[attr-defined]
    assert nodes.input_value() == "3"
    _no_exception(page)
    assert _navigation(page) == [title for _, title, _ in PAGES], "the sidebar links the app's pages, in order"
    assert page.title() == "SLO budget · Inference serving design explorer"  # type: ignore[attr-defined]
    page.screenshot(path=str(SHOTS / "00-direct-link-slo-budget.png"), full_page=True)  # type: ignore[attr-defined]

    for i, (_, title, url_path) in enumerate(PAGES, start=1):
        page.set_viewport_size(WIDE)  # type: ignore[attr-defined]
        page.goto(f"{server}/{url_path}?preset=capstone")  # type: ignore[attr-defined]  # Brief, app.py, is the root
        _settle(page, title)
        _no_exception(page)
        assert page.get_by_text("Page not found").count() == 0  # type: ignore[attr-defined]
        assert page.locator(FIGURES).count() > 0, f"{title}: no figures shown"
        assert _navigation(page) == [t for _, t, _ in PAGES]
        assert page.get_by_role("button", name="Deploy").count() == 0, "the Deploy button is hidden (toolbarMode)"  # type: ignore[attr-defined]
        page.screenshot(path=str(SHOTS / f"{i:02d}-{url_path or 'brief'}.png"), full_page=True)  # type: ignore[attr-defined]
        page.set_viewport_size(PHONE)  # type: ignore[attr-defined]
        page.wait_for_function(_SIDEBAR_FOLDED, timeout=RERUN_TIMEOUT_MS)  # type: ignore[attr-defined]  # it slides away
        _settle(page, title)
        assert _page_width(page) <= PHONE["width"], f"{title}: the page scrolls sideways at 390 px"
        page.screenshot(path=str(SHOTS / f"{i:02d}-{url_path or 'brief'}-390px.png"), full_page=True)  # type: ignore[attr-defined]
    page.set_viewport_size(WIDE)  # type: ignore[attr-defined]


def test_the_sidebar_navigates_at_390_px(server: str, page: object) -> None:
    """On a phone the sidebar folds away; opened, it holds the title, the page links and the controls, and a link
    goes to its page with the design."""
    page.set_viewport_size(PHONE)  # type: ignore[attr-defined]
    try:
        page.goto(f"{server}/?preset=capstone&hardware.nodes=6")  # type: ignore[attr-defined]
        _settle(page, "Brief")
        page.locator('[data-testid="stExpandSidebarButton"]').click()  # type: ignore[attr-defined]
        sidebar = page.locator('[data-testid="stSidebar"]')  # type: ignore[attr-defined]
        page.wait_for_function(  # type: ignore[attr-defined]  # slid fully in
            "() => document.querySelector('[data-testid=\"stSidebar\"]').getBoundingClientRect().left >= 0", timeout=RERUN_TIMEOUT_MS
        )
        assert sidebar.get_by_text("Inference serving design explorer").is_visible()
        page.screenshot(path=str(SHOTS / "08-sidebar-390px.png"))  # type: ignore[attr-defined]
        sidebar.locator('[data-testid="stPageLink"]', has_text="Cost").click()
        _settle(page, "Cost")
        assert "/cost?" in page.url and "hardware.nodes=6" in page.url  # type: ignore[attr-defined]
        assert _page_width(page) <= PHONE["width"]
    finally:
        page.set_viewport_size(WIDE)  # type: ignore[attr-defined]


def _headline(page: object) -> str:
    """The verdict bar's first line (ui.verdict_bar.verdict_headline): what the page says of the design."""
    headlines = ("Not feasible as briefed", "Feasible, misses the SLO", "Meets the SLO, no N+1", "Meets the SLO, with N+1")
    text = str(page.locator('[data-testid="stMain"]').inner_text())  # type: ignore[attr-defined]
    found = [h for h in headlines if h in text]
    assert len(found) == 1, found
    return found[0]


def test_back_undoes_a_slider_change_and_forward_redoes_it(server: str, page: object) -> None:
    page.goto(f"{server}/capacity?preset=capstone&hardware.nodes=4")  # type: ignore[attr-defined]
    _settle(page, "Capacity")
    thumb = page.locator('[data-testid="stSidebar"] input[type="range"][aria-label="Fleet size (nodes)"]')  # type: ignore[attr-defined]
    assert thumb.input_value() == "4" and _headline(page) == "Meets the SLO, with N+1"
    thumb.focus()
    thumb.press("ArrowLeft")  # 3 nodes: too few for the load
    page.wait_for_function("() => window.location.search.includes('hardware.nodes=3')", timeout=RERUN_TIMEOUT_MS)  # type: ignore[attr-defined]
    page.get_by_text("Not feasible as briefed").first.wait_for(timeout=RERUN_TIMEOUT_MS)  # type: ignore[attr-defined]
    _settle(page)
    assert thumb.input_value() == "3"
    page.screenshot(path=str(SHOTS / "21-capacity-3-nodes.png"))  # type: ignore[attr-defined]

    page.go_back()  # type: ignore[attr-defined]
    page.wait_for_function("() => window.location.search.includes('hardware.nodes=4')", timeout=RERUN_TIMEOUT_MS)  # type: ignore[attr-defined]
    page.get_by_text("Meets the SLO, with N+1").first.wait_for(timeout=RERUN_TIMEOUT_MS)  # type: ignore[attr-defined]
    _settle(page, "Capacity")
    assert thumb.input_value() == "4", "the slider returns to the value before the change"
    assert _headline(page) == "Meets the SLO, with N+1"
    assert "hardware.nodes=4" in page.url  # type: ignore[attr-defined]  # the session did not write the undone design back
    page.screenshot(path=str(SHOTS / "22-capacity-after-back.png"))  # type: ignore[attr-defined]

    page.go_forward()  # type: ignore[attr-defined]
    page.get_by_text("Not feasible as briefed").first.wait_for(timeout=RERUN_TIMEOUT_MS)  # type: ignore[attr-defined]
    _settle(page, "Capacity")
    assert thumb.input_value() == "3" and "hardware.nodes=3" in page.url  # type: ignore[attr-defined]
    _no_exception(page)


def test_slider_moves_the_figures(server: str, page: object) -> None:
    page.goto(f"{server}/capacity?preset=capstone")  # type: ignore[attr-defined]
    _settle(page, "Capacity")
    before_rate, before_util = _metric(page, "Request rate"), _metric(page, "Utilization at peak")
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
    assert float(_metric(page, "Utilization at peak").rstrip("%")) > float(before_util.rstrip("%"))
    _no_exception(page)
    page.screenshot(path=str(SHOTS / "20-capacity-after-slider.png"), full_page=True)  # type: ignore[attr-defined]

    # The URL now carries the change: reopening it shows the same figure.
    link = page.url  # type: ignore[attr-defined]
    page.goto(link)  # type: ignore[attr-defined]
    _settle(page)
    page.get_by_text("83.3 req/s").first.wait_for(timeout=RERUN_TIMEOUT_MS)  # type: ignore[attr-defined]
    assert _metric(page, "Request rate") == "83.3 req/s"


_RAW_NUMBER = r"∞|\binf\b|\bnan\b|\d(?:\.\d+)?e[+-]\d"  # an infinity, a NaN or e+ notation on screen
_WIDEST_CHART = """() => Math.max(0, ...[...document.querySelectorAll('.js-plotly-plot')].map(e => e.getBoundingClientRect().right))"""


def test_every_page_at_phone_width(server: str, pw: object) -> None:
    """390 x 844 (a phone): every page renders, no chart runs past the screen's edge, no raw infinity, NaN or
    e+ notation in the page's text; a screenshot of each page's first screen and of its charts."""
    import re

    with tempfile.TemporaryDirectory() as profile:
        context = pw.chromium.launch_persistent_context(  # type: ignore[attr-defined]
            profile, executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_FLAGS, viewport={"width": 390, "height": 844}
        )
        try:
            tab = context.pages[0] if context.pages else context.new_page()
            for i, (_, title, url_path) in enumerate(PAGES, start=1):
                tab.goto(f"{server}/{'' if i == 1 else url_path}?preset=capstone&pin=capstone&pin.hardware.nodes=6")
                _settle(tab, title)
                _no_exception(tab)
                body = tab.locator('[data-testid="stMain"]').inner_text()
                assert not re.search(_RAW_NUMBER, body, flags=re.IGNORECASE), (title, re.findall(f".{{30}}(?:{_RAW_NUMBER})", body)[:3])
                assert tab.evaluate(_WIDEST_CHART) <= 390, f"{title}: a chart runs past the screen"
                tab.screenshot(path=str(SHOTS / f"50-phone-{i:02d}-{url_path}.png"))
                charts = tab.locator(".js-plotly-plot")
                for k in range(min(charts.count(), 4)):
                    charts.nth(k).scroll_into_view_if_needed()
                    charts.nth(k).screenshot(path=str(SHOTS / f"51-phone-{i:02d}-{url_path}-chart{k}.png"))
        finally:
            context.close()


# The diagram images the page shows: their width on screen, their SVG's natural width and smallest type (points).
_DIAGRAM_IMAGES = r"""() => [...document.querySelectorAll('.arch-diagram img')]
  .filter(img => img.getBoundingClientRect().width > 0)
  .map(img => {
    const svg = atob(img.src.split(',')[1]);
    const fonts = [...svg.matchAll(/font-size="([\d.]+)"/g)].map(m => +m[1]);
    const box = img.parentElement;
    return {shown: img.getBoundingClientRect().width, natural: +/viewBox="[-\d.]+ [-\d.]+ ([\d.]+)/.exec(svg)[1],
            smallest: Math.min(...fonts), scrolls: box.scrollWidth > box.clientWidth + 1};
  })"""


_ONE_DIAGRAM_DRAWN = """() => [...document.querySelectorAll('.arch-diagram img')]
  .filter(img => img.complete && img.naturalWidth > 0 && img.getBoundingClientRect().width > 0).length === 1"""


@pytest.mark.parametrize(("width", "height"), [(1440, 900), (390, 844)])
def test_architecture_diagram_is_legible_at_both_widths(server: str, pw: object, width: int, height: int) -> None:
    """Drawn on the server (no graphviz_chart for the browser to lay out): one layout shown, its smallest label at
    least 12 px; the wide layout at 1440 px, the one-column layout at 390 px, neither scrolling sideways."""
    with _browser_page(pw, width, height) as tab:
        tab.goto(f"{server}/architecture?preset=capstone")  # type: ignore[attr-defined]
        _settle(tab, "Architecture")
        _no_exception(tab)
        assert tab.locator('[data-testid="stGraphVizChart"]').count() == 0  # type: ignore[attr-defined]
        tab.wait_for_function(_ONE_DIAGRAM_DRAWN, timeout=RERUN_TIMEOUT_MS)  # type: ignore[attr-defined]
        images = tab.evaluate(_DIAGRAM_IMAGES)  # type: ignore[attr-defined]
        assert len(images) == 1, images
        image = images[0]
        assert image["shown"] / image["natural"] * image["smallest"] >= 12, image  # px of the smallest label
        assert (image["natural"] > 400) == (width > 700), image  # which layout
        assert not image["scrolls"], image
        tab.locator(".arch-diagram").first.scroll_into_view_if_needed()  # type: ignore[attr-defined]
        tab.screenshot(path=str(SHOTS / f"50-architecture-{width}.png"))  # type: ignore[attr-defined]


def test_document_file_names_follow_the_edit(server: str, page: object) -> None:
    """With 6 nodes the downloaded document is named, and titled, after the design as edited."""
    page.goto(f"{server}/?preset=capstone&hardware.nodes=6")  # type: ignore[attr-defined]
    _settle(page, "Brief")
    stem = "llama-3-70b-for-10-000-users-on-6-x-8-nvidia-h100-sxm-80gb"
    sidebar = page.locator('[data-testid="stSidebar"]')  # type: ignore[attr-defined]
    with page.expect_download(timeout=RERUN_TIMEOUT_MS) as download:  # type: ignore[attr-defined]
        sidebar.get_by_role("button", name="Design document (Markdown)").click()
    assert download.value.suggested_filename == f"{stem}.md"
    text = Path(download.value.path()).read_text(encoding="utf-8")
    assert text.startswith("# Llama-3-70B for 10,000 users on 6 x 8 NVIDIA H100 SXM 80GB\n") and "64 H100" not in text


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
    before = _metric(page, "Cost per M output tokens")
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
    while _metric(page, "Cost per M output tokens") == before and time.monotonic() < deadline:  # the run the click started
        page.wait_for_timeout(200)  # type: ignore[attr-defined]
    _settle(page, "Search")
    opened = _metric(page, "Cost per M output tokens")
    assert opened != before, "the clicked design is not the one the page started from"
    page.screenshot(path=str(SHOTS / "31-search-opened.png"), full_page=True)  # type: ignore[attr-defined]
    page.goto(page.url.replace("/search", "/cost"))  # type: ignore[attr-defined]
    _settle(page, "Cost")
    assert _metric(page, "Cost per M output tokens") == opened
