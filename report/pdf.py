"""The design document as a one-page PDF: the HTML printed by Debian's chromium through Playwright.

Route: Playwright's Python package drives the system browser (`/usr/bin/chromium`, Debian package
`chromium`; never `playwright install`). Every request the page would make is aborted, so the PDF is
printed exactly from the self-contained HTML.

One browser for the process: `render_pdf` uses a shared `PdfPrinter`, started on the first document and
kept for the next ones (the app's download buttons and the CLI alike). The printer runs Playwright's async
API on a thread of its own, so any thread can hand it a document; at most MAX_CONCURRENT_PRINTS documents
are in the browser at a time (five clicks at once queue, they do not start five browsers), each on a page
that is reused for the next document. Every print, the wait for a free page included, is bounded by the
tool timeout (report.tools): a browser that does not start, or hangs, is one ToolError line, and a hung
browser is closed so the next document starts a fresh one. A browser left unused for IDLE_CLOSE_S is closed
too (it holds about half a gigabyte); the next document starts it again.

The page fits on one sheet whatever the preset: at print scale s Chromium lays the page out at (printable
width / s), so the content gets wider and shorter as s falls. One measurement gives the scale: the
document is laid out once at MEASURE_SCALE, and its printed height there, P0, is extrapolated with the
bound on how fast the height changes with the scale (see fitting_scale). The PDF's page count is then
checked, and in the rare case of a second page the print is repeated a little smaller.
"""

from __future__ import annotations

import asyncio
import atexit
import concurrent.futures
import contextlib
import re
import threading
import time
from types import TracebackType
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from report.errors import ExportError
from report.html import render_html
from report.tools import CHROMIUM, ToolError, executable, note_outcome, timeout_s

__all__ = [
    "MAX_CONCURRENT_PRINTS",
    "PdfError",
    "PdfPrinter",
    "PrintedPdf",
    "chromium_path",
    "fitting_scale",
    "pdf_page_count",
    "render_pdf",
    "shared_printer",
]

# A4 landscape with the 6 mm margins of the print CSS, in CSS pixels (96 per inch).
_PX_PER_MM = 96 / 25.4
PRINTABLE_WIDTH_PX = (297 - 2 * 6) * _PX_PER_MM
PRINTABLE_HEIGHT_PX = (210 - 2 * 6) * _PX_PER_MM
MIN_SCALE, MAX_SCALE = 0.3, 1.4
MEASURE_SCALE = 0.6  # near every preset's fitted scale (0.56-0.65), so the extrapolation is short
_FIT_MARGIN = 0.98  # keep 2% of the page height spare: rounding in the print path
_SHRINK_ON_OVERFLOW = 0.95  # the rare second try, when the PDF came out on two pages
_MAX_PRINTS = 3
MAX_CONCURRENT_PRINTS = 2  # documents in the browser at once; more wait for a free page
_START_RETRY_AFTER_S = 30.0  # a browser that failed to start is not tried again for this long: clicks fail at once
IDLE_CLOSE_S = 600.0  # a browser that printed nothing for this long is closed (~0.5 GB); the next PDF starts one
_CLOSE_TIMEOUT_S = 5.0
_CHROMIUM_ARGS = [
    "--no-sandbox",  # CI and the app run as root
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
_HEIGHT_JS = "document.body.getBoundingClientRect().height"  # the content's own height (scrollHeight is never below the viewport)


class PdfError(ExportError):
    """The document would not fit on one page."""


class PrintedPdf(BaseModel):
    """One printed document.

    Attributes:
        pdf: the PDF file's bytes (one A4 landscape page).
        scale: the print scale used: 1 prints the print CSS's 7 pt type at 7 pt.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    pdf: bytes = Field(description="The PDF file (one A4 landscape page).")
    scale: float = Field(description="Print scale used; 1 prints the 7 pt print type at 7 pt.")


def chromium_path() -> str:
    """The system Chromium: $CHROMIUM, else `chromium` on PATH, else Debian's /usr/bin/chromium (ToolError if absent)."""
    return executable(CHROMIUM)


def pdf_page_count(pdf: bytes) -> int:
    """Pages in a PDF written by Chromium (Skia writes page objects uncompressed)."""
    return len(re.findall(rb"/Type\s*/Page(?![a-zA-Z])", pdf))


def fitting_scale(printed_height_px: float, measured_at: float = MEASURE_SCALE) -> float:
    """The print scale that fits the page, from the printed height measured at one scale.

    At scale s the printed height is s x (the layout's height at width printable/s). A wider layout (smaller s)
    is never taller, and it is at most as much shorter as its text is wider, so the printed height changes
    with s at least linearly and at most quadratically. Shrinking (the document is too tall at `measured_at`)
    therefore assumes the linear law and growing the quadratic one: both err towards a page that fits.
    """
    limit = PRINTABLE_HEIGHT_PX * _FIT_MARGIN
    ratio = limit / printed_height_px
    scale = measured_at * (ratio if ratio < 1 else ratio**0.5)  # linear law when shrinking, quadratic when growing
    return min(MAX_SCALE, max(MIN_SCALE, scale))


def _start_failure(exc: Exception, limit_s: float) -> str:
    """What a failed launch says, in a few words: Playwright's own message runs to dozens of lines."""
    text = str(exc)
    if "Timeout" in text:
        return f"did not start within {limit_s:g} s"
    exit_code = re.search(r"exitCode=(-?\d+)", text)
    return f"did not start (exit code {exit_code.group(1)})" if exit_code else "did not start"


class PdfPrinter:
    """One headless Chromium that prints any number of documents, each on one A4 landscape page.

    Thread-safe: print_document() may be called from any thread. The browser starts with the first document
    and stays until close() (or the end of a `with` block).
    """

    def __init__(self, max_concurrent: int = MAX_CONCURRENT_PRINTS) -> None:
        self._max_concurrent = max_concurrent
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        # below: touched only on the printer's own thread
        self._slots: asyncio.Semaphore | None = None
        self._starting: asyncio.Lock | None = None
        self._playwright: Any = None
        self._browser: Any = None
        self._idle_pages: list[Any] = []
        self._failed_start: tuple[float, str] | None = None  # (monotonic time, what happened) of the last failed launch
        self._background: set[asyncio.Task[None]] = set()
        self._idle_close: asyncio.TimerHandle | None = None
        self._printing = 0  # documents between taking a slot and leaving it

    # --- the caller's side -----------------------------------------------------------------------------

    def __enter__(self) -> PdfPrinter:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        self.close()

    def print_html(self, html: str) -> bytes:
        """Print a self-contained HTML page to a one-page PDF."""
        return self.print_document(html).pdf

    def print_document(self, html: str) -> PrintedPdf:
        """Print a self-contained HTML page to a one-page PDF, with the scale used."""
        result: PrintedPdf = self._call(self._print_within_timeout(html))
        return result

    def close(self) -> None:
        """Close the browser and stop the printer's thread (a later document starts them again)."""
        with self._lock:
            loop, thread = self._loop, self._thread
            self._loop = self._thread = None
        if loop is None or thread is None:
            return
        with contextlib.suppress(Exception):  # closing is best effort: the process may be exiting
            asyncio.run_coroutine_threadsafe(self._shutdown(), loop).result(timeout=3 * _CLOSE_TIMEOUT_S)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(timeout=_CLOSE_TIMEOUT_S)
        if not thread.is_alive():
            loop.close()

    def _call(self, coroutine: Any) -> Any:
        future = asyncio.run_coroutine_threadsafe(coroutine, self._ensure_loop())
        try:  # the coroutine enforces the tool timeout itself; this only guards against a stuck loop
            return future.result(timeout=timeout_s() + 3 * _CLOSE_TIMEOUT_S)
        except concurrent.futures.TimeoutError:
            future.cancel()
            raise ToolError(CHROMIUM, f"did not finish the PDF within {timeout_s():g} s") from None

    def _ensure_loop(self) -> asyncio.AbstractEventLoop:
        with self._lock:
            if self._loop is None:
                loop = asyncio.new_event_loop()
                thread = threading.Thread(target=loop.run_forever, name="pdf-printer", daemon=True)
                thread.start()
                self._loop, self._thread = loop, thread
            return self._loop

    # --- the printer's thread --------------------------------------------------------------------------

    async def _print_within_timeout(self, html: str) -> PrintedPdf:
        try:
            printed = await self._print_bounded(html)
        except ToolError as exc:
            note_outcome(CHROMIUM, exc)
            raise
        note_outcome(CHROMIUM, None)
        self._close_when_idle()
        return printed

    def _close_when_idle(self) -> None:
        """(Re)start the countdown after which an unused browser is closed."""
        if self._idle_close is not None:
            self._idle_close.cancel()
        self._idle_close = asyncio.get_running_loop().call_later(IDLE_CLOSE_S, self._close_if_idle)

    def _close_if_idle(self) -> None:
        if self._printing == 0:  # else a print is under way, and its end restarts the countdown
            self._in_background(self._discard_browser())

    async def _print_bounded(self, html: str) -> PrintedPdf:
        limit = timeout_s()
        try:
            return await asyncio.wait_for(self._print_in_slot(html), limit)
        except TimeoutError:
            if self._browser is None:  # still starting
                what = f"did not start within {limit:g} s"
                self._failed_start = (time.monotonic(), what)
            else:
                what = f"did not finish the PDF within {limit:g} s"
            await self._discard_browser()  # hung: the next document starts a fresh browser
            raise ToolError(CHROMIUM, what) from None

    async def _print_in_slot(self, html: str) -> PrintedPdf:
        if self._slots is None:
            self._slots = asyncio.Semaphore(self._max_concurrent)
        async with self._slots:
            self._printing += 1
            try:
                return await self._print_on_a_page(html)
            finally:
                self._printing -= 1

    async def _print_on_a_page(self, html: str) -> PrintedPdf:
        page = await self._take_page()
        try:
            printed = await self._print_on(page, html)
        except BaseException:
            self._in_background(_close_page(page))  # in an unknown state: not reused, and not waited for
            raise
        self._idle_pages.append(page)
        return printed

    async def _take_page(self) -> Any:
        if self._idle_pages:
            return self._idle_pages.pop()
        browser = await self._ensure_browser()
        page = await browser.new_page(viewport={"width": int(PRINTABLE_WIDTH_PX / MEASURE_SCALE), "height": 400})
        await page.route("**/*", lambda route: route.abort())  # self-contained: nothing may load
        await page.emulate_media(media="print")
        return page

    async def _print_on(self, page: Any, html: str) -> PrintedPdf:
        await page.set_content(html, wait_until="load")  # laid out at MEASURE_SCALE's width: the one measurement
        scale = fitting_scale(await page.evaluate(_HEIGHT_JS) * MEASURE_SCALE)
        for _ in range(_MAX_PRINTS):
            pdf: bytes = await page.pdf(scale=scale, prefer_css_page_size=True, print_background=True)
            if pdf_page_count(pdf) == 1:
                return PrintedPdf(pdf=pdf, scale=scale)
            scale *= _SHRINK_ON_OVERFLOW
        raise PdfError(f"the document does not fit on one page even at print scale {scale:.2f}")

    async def _ensure_browser(self) -> Any:
        if self._starting is None:
            self._starting = asyncio.Lock()
        async with self._starting:  # two first documents at once start one browser
            if self._browser is not None and self._browser.is_connected():
                return self._browser
            self._idle_pages.clear()
            if self._failed_start and time.monotonic() - self._failed_start[0] < _START_RETRY_AFTER_S:
                raise ToolError(CHROMIUM, self._failed_start[1])
            try:
                self._browser = await self._launch()
            except ToolError as exc:
                self._failed_start = (time.monotonic(), exc.what)
                raise
            self._failed_start = None
            return self._browser

    async def _launch(self) -> Any:
        from playwright.async_api import async_playwright

        path = executable(CHROMIUM)
        if self._playwright is None:
            self._playwright = await async_playwright().start()
        limit = timeout_s()
        try:
            return await self._playwright.chromium.launch(executable_path=path, args=_CHROMIUM_ARGS, timeout=limit * 1e3)
        except Exception as exc:  # Playwright's errors: a browser that exits, crashes or does not answer
            raise ToolError(CHROMIUM, _start_failure(exc, limit)) from None

    async def _discard_browser(self) -> None:
        """Forget a browser that stopped answering and close it in the background: the caller's error is not delayed."""
        browser, playwright = self._browser, self._playwright
        self._browser = self._playwright = None  # the next document starts both afresh
        self._idle_pages.clear()
        self._in_background(_close_browser(browser, playwright))

    def _in_background(self, coroutine: Any) -> None:
        task = asyncio.get_running_loop().create_task(coroutine)
        self._background.add(task)  # held until done: the loop keeps only weak references to tasks
        task.add_done_callback(self._background.discard)

    async def _shutdown(self) -> None:
        if self._idle_close is not None:
            self._idle_close.cancel()
        browser, playwright = self._browser, self._playwright
        self._browser = self._playwright = None
        self._idle_pages.clear()
        await _close_browser(browser, playwright)
        if self._background:
            await asyncio.wait(self._background, timeout=2 * _CLOSE_TIMEOUT_S)


async def _close_page(page: Any) -> None:
    with contextlib.suppress(Exception):
        await asyncio.wait_for(page.close(), _CLOSE_TIMEOUT_S)


async def _close_browser(browser: Any, playwright: Any) -> None:
    """Close the browser, then stop Playwright's driver, which kills a browser that did not close."""
    if browser is not None:
        with contextlib.suppress(Exception):
            await asyncio.wait_for(browser.close(), _CLOSE_TIMEOUT_S)
    if playwright is not None:
        with contextlib.suppress(Exception):
            await asyncio.wait_for(playwright.stop(), _CLOSE_TIMEOUT_S)


_SHARED: PdfPrinter | None = None
_SHARED_LOCK = threading.Lock()


def shared_printer() -> PdfPrinter:
    """The process's one printer (closed when the process exits)."""
    global _SHARED
    with _SHARED_LOCK:
        if _SHARED is None:
            _SHARED = PdfPrinter()
            atexit.register(_SHARED.close)
        return _SHARED


def render_pdf(design: Any) -> bytes:
    """The one-page design document as PDF bytes, printed by the process's shared browser."""
    return shared_printer().print_html(render_html(design))
