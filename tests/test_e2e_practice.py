"""Practice mode in a real browser (Debian's headless Chromium): a practice link opens a page with its questions and
no verdict bar; answering a step shows the grade and the arithmetic; the switch and the page links keep practice=on.
Screenshots go under artifacts/e2e/ (ignored by git); the server is stopped by its pid (benchmarks.live.serve)."""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from benchmarks.live import CHROMIUM, CHROMIUM_FLAGS, serve

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

ROOT = Path(__file__).resolve().parent.parent
SHOTS = ROOT / "artifacts" / "e2e"
TIMEOUT_MS = 60_000


@pytest.fixture(scope="module")
def tab() -> Iterator[object]:
    if not CHROMIUM.exists():
        pytest.skip(f"{CHROMIUM} is absent: install Debian's chromium package")
    from playwright.sync_api import sync_playwright

    SHOTS.mkdir(parents=True, exist_ok=True)
    with (
        serve(ROOT / "app.py", log=SHOTS / "practice-server.log") as running,
        sync_playwright() as pw,
        tempfile.TemporaryDirectory() as profile,
    ):
        context = pw.chromium.launch_persistent_context(
            profile, executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_FLAGS, viewport={"width": 1400, "height": 1400}
        )
        try:
            page = context.pages[0] if context.pages else context.new_page()
            page.goto(f"{running.url}/capacity?preset=capstone&practice=on")
            yield page
        finally:
            context.close()


def test_practice_link_asks_first_and_grades_with_the_arithmetic(tab: object) -> None:
    page = tab
    form = page.locator("[data-testid='stForm']").filter(has_text="Utilization and the binding resource")  # type: ignore[attr-defined]
    form.wait_for(timeout=TIMEOUT_MS)
    assert page.locator("[data-testid='stMetric']").count() == 0  # type: ignore[attr-defined]  # no verdict bar
    assert "27.7%" not in page.locator("section.main, [data-testid='stMain']").first.inner_text()  # type: ignore[attr-defined]
    field = form.locator("input[type='number']").first
    field.fill("51.4")
    field.press("Tab")
    form.get_by_text("Bandwidth: each decode step").click()
    form.get_by_role("button", name="Check my answers").click()
    graded = page.locator("[class*='st-key-practice-feedback-utilization']")  # type: ignore[attr-defined]
    graded.wait_for(timeout=TIMEOUT_MS)
    text = graded.inner_text()
    assert "51.4%" in text and "without prefix caching" in text and "prefill 6.5% + decode 21.2% = 27.7%" in text
    graded.scroll_into_view_if_needed()
    page.screenshot(path=str(SHOTS / "practice-graded.png"))  # type: ignore[attr-defined]
    assert "practice=on" in page.url  # type: ignore[attr-defined]
    link = page.locator("[data-testid='stSidebar'] a", has_text="Cost").first  # type: ignore[attr-defined]
    assert "practice=on" in (link.get_attribute("href") or "")
