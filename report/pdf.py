"""The design document as a one-page PDF: the HTML printed by Debian's chromium through Playwright.

Route: Playwright's Python package drives the system browser (`/usr/bin/chromium`, Debian package
`chromium`; never `playwright install`). Every request the page would make is aborted, so the PDF is
printed exactly from the self-contained HTML. To keep the document on one page whatever the preset, the
print scale is searched: at scale s Chromium lays the page out at (printable width / s), so the content
gets wider and shorter as s falls; we take the largest s (at most MAX_SCALE) whose laid-out height fits
the printable height, print, and check the page count.

Playwright's sync API refuses to run in a thread with a running asyncio loop, so each print runs in a
worker thread of its own; `PdfPrinter` keeps one browser for many documents (the tests print every
preset with one launch).
"""

from __future__ import annotations

import os
import re
import shutil
from concurrent.futures import ThreadPoolExecutor
from types import TracebackType
from typing import Any

from report.errors import ExportError
from report.html import render_html

__all__ = ["PdfError", "PdfPrinter", "chromium_path", "pdf_page_count", "render_pdf"]

# A4 landscape with the 6 mm margins of the print CSS, in CSS pixels (96 per inch).
_PX_PER_MM = 96 / 25.4
PRINTABLE_WIDTH_PX = (297 - 2 * 6) * _PX_PER_MM
PRINTABLE_HEIGHT_PX = (210 - 2 * 6) * _PX_PER_MM
MIN_SCALE, MAX_SCALE = 0.3, 1.4
_SEARCH_STEPS = 8
_FIT_MARGIN = 0.98  # keep 2% of the page height spare: rounding in the print path
_CHROMIUM_ARGS = [
    "--no-sandbox",  # CI and the app run as root
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


class PdfError(ExportError):
    """The browser is missing or the document would not fit on one page."""


def chromium_path() -> str:
    """The system Chromium: $CHROMIUM, else `chromium` on PATH, else Debian's /usr/bin/chromium."""
    path = os.environ.get("CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
    if not os.path.exists(path):
        raise PdfError(f"chromium not found at {path}: install the Debian package 'chromium' (./run test does as root)")
    return path


def pdf_page_count(pdf: bytes) -> int:
    """Pages in a PDF written by Chromium (Skia writes page objects uncompressed)."""
    return len(re.findall(rb"/Type\s*/Page(?![a-zA-Z])", pdf))


class PdfPrinter:
    """One headless Chromium that prints any number of documents, each on one A4 landscape page."""

    def __init__(self) -> None:
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="pdf")
        self._playwright: Any = None
        self._browser: Any = None
        self.last_scale = 0.0  # print scale of the last document: 1 = the print CSS's 7 pt type

    def __enter__(self) -> PdfPrinter:
        self._pool.submit(self._start).result()
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        self._pool.submit(self._stop).result()
        self._pool.shutdown()

    def _start(self) -> None:
        from playwright.sync_api import sync_playwright

        self._playwright = sync_playwright().start()
        self._browser = self._playwright.chromium.launch(executable_path=chromium_path(), args=_CHROMIUM_ARGS)

    def _stop(self) -> None:
        if self._browser is not None:
            self._browser.close()
        if self._playwright is not None:
            self._playwright.stop()

    def print_html(self, html: str) -> bytes:
        """Print a self-contained HTML page to a one-page PDF."""
        result: bytes = self._pool.submit(self._print, html).result()
        return result

    def _print(self, html: str) -> bytes:
        page = self._browser.new_page()
        try:
            page.route("**/*", lambda route: route.abort())  # self-contained: nothing may load
            page.set_content(html, wait_until="load")
            page.emulate_media(media="print")
            scale = self._fitting_scale(page)
            for _ in range(4):
                pdf: bytes = page.pdf(scale=scale, prefer_css_page_size=True, print_background=True)
                if pdf_page_count(pdf) == 1:
                    self.last_scale = scale
                    return pdf
                scale *= 0.93
            raise PdfError(f"the document does not fit on one page even at print scale {scale:.2f}")
        finally:
            page.close()

    @staticmethod
    def _height_at(page: Any, scale: float) -> float:
        page.set_viewport_size({"width": int(PRINTABLE_WIDTH_PX / scale), "height": 400})
        # the content's own height (the document's scrollHeight is never less than the viewport)
        height: float = page.evaluate("document.body.getBoundingClientRect().height")
        return height * scale

    def _fitting_scale(self, page: Any) -> float:
        """The largest scale in [MIN_SCALE, MAX_SCALE] whose printed height fits the page (bisection)."""
        limit = PRINTABLE_HEIGHT_PX * _FIT_MARGIN
        if self._height_at(page, MAX_SCALE) <= limit:
            return MAX_SCALE
        low, high = MIN_SCALE, MAX_SCALE
        for _ in range(_SEARCH_STEPS):
            mid = (low + high) / 2
            low, high = (mid, high) if self._height_at(page, mid) <= limit else (low, mid)
        return low


def render_pdf(design: Any) -> bytes:
    """The one-page design document as PDF bytes (starts and stops a browser; see PdfPrinter for many)."""
    with PdfPrinter() as printer:
        return printer.print_html(render_html(design))
