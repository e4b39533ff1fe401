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

The page fits on one A4 sheet with its type at the print CSS's size (report.html: body BODY_PT, nothing
under MIN_BODY_PT but the footnote). At print scale s Chromium lays the page out at (printable width / s), so
the printed height at s is measured by laying the page out at that width. A page too tall at scale 1 is
printed a little smaller, at the largest scale that fits (a bisection), but not below READABLE_SCALE
(MIN_BODY_PT / BODY_PT, and the footnote's floor likewise); if even that is too tall, the page parts the document ranks as droppable
(`data-drop`: the line of p95 ranges, then the failure table, then a variation's options) leave the print one rank at a time, since the
appendix of the HTML and Markdown carries them. Only a page too tall even then (a brief with a very long
description and many problems) is printed smaller than readable, down to MIN_SCALE. The PDF's page count is
then checked, and in the rare case of a second page the print is repeated smaller.
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

from planner.naming import DesignName
from report.errors import ExportError
from report.html import BODY_PT, FOOTNOTE_PT, MARGIN_MM, MIN_BODY_PT, MIN_FOOTNOTE_PT, PAGE_MM, render_html
from report.tools import CHROMIUM, ToolError, executable, note_outcome, timeout_s

__all__ = [
    "MAX_CONCURRENT_PRINTS",
    "MIN_SCALE",
    "PRINTABLE_HEIGHT_PX",
    "READABLE_SCALE",
    "PdfError",
    "PdfPrinter",
    "PrintedPdf",
    "chromium_path",
    "fitting_scale",
    "pdf_page_count",
    "render_pdf",
    "shared_printer",
]

# The print CSS's page (report.html) less its margins, in CSS pixels (96 per inch).
_PX_PER_MM = 96 / 25.4
PRINTABLE_WIDTH_PX = (PAGE_MM[0] - 2 * MARGIN_MM[0]) * _PX_PER_MM
PRINTABLE_HEIGHT_PX = (PAGE_MM[1] - 2 * MARGIN_MM[1]) * _PX_PER_MM
READABLE_SCALE = max(MIN_BODY_PT / BODY_PT, MIN_FOOTNOTE_PT / FOOTNOTE_PT)  # the smallest scale that keeps the type readable
MIN_SCALE = 0.5  # the last resort, for a page too tall even without its droppable tables
_FIT_MARGIN = 0.98  # keep 2% of the page height spare: rounding in the print path
_FIT_STEPS = 3  # bisection steps for the print scale: from readable to 1, within 0.008 (0.06 pt of body type)
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
_DROP_RANKS_JS = "[...new Set([...document.querySelectorAll('[data-drop]')].map(e => +e.dataset.drop))].sort((a, b) => a - b)"
_DROP_JS = "rank => document.querySelectorAll(`[data-drop='${rank}']`).forEach(e => { e.style.display = 'none'; })"


class PdfError(ExportError):
    """The document would not fit on one page."""


class PrintedPdf(BaseModel):
    """One printed document.

    Attributes:
        pdf: the PDF file's bytes (one A4 page).
        scale: the print scale used: 1 prints the print CSS's type at its size (body 8.5 pt).
        dropped: the `data-drop` ranks left off the print to fit it (empty: the whole page printed).
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    pdf: bytes = Field(description="The PDF file (one A4 page).")
    scale: float = Field(description="Print scale used; 1 prints the print CSS's type at its size.")
    dropped: tuple[int, ...] = Field(default=(), description="The data-drop ranks left off the print to fit it.")


def chromium_path() -> str:
    """The system Chromium: $CHROMIUM, else `chromium` on PATH, else Debian's /usr/bin/chromium (ToolError if absent)."""
    return executable(CHROMIUM)


def pdf_page_count(pdf: bytes) -> int:
    """Pages in a PDF written by Chromium (Skia writes page objects uncompressed)."""
    return len(re.findall(rb"/Type\s*/Page(?![a-zA-Z])", pdf))


def fitting_scale(printed_height_px: float) -> float:
    """A print scale at which a page `printed_height_px` tall at scale 1 fits: 1 when it fits, else limit / height
    (the linear law: at a smaller scale the layout is wider and no taller, so the page fits), at least MIN_SCALE.
    Never above 1: a short page keeps its type at the print CSS's size."""
    limit = PRINTABLE_HEIGHT_PX * _FIT_MARGIN
    return min(1.0, max(MIN_SCALE, limit / printed_height_px))


def _start_failure(exc: Exception, limit_s: float) -> str:
    """What a failed launch says, in a few words: Playwright's own message runs to dozens of lines."""
    text = str(exc)
    if "Timeout" in text:
        return f"did not start within {limit_s:g} s"
    exit_code = re.search(r"exitCode=(-?\d+)", text)
    return f"did not start (exit code {exit_code.group(1)})" if exit_code else "did not start"


class PdfPrinter:
    """One headless Chromium that prints any number of documents, each on one A4 page.

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
        page = await browser.new_page(viewport={"width": int(PRINTABLE_WIDTH_PX), "height": 400})
        await page.route("**/*", lambda route: route.abort())  # self-contained: nothing may load
        await page.emulate_media(media="print")
        return page

    async def _print_on(self, page: Any, html: str) -> PrintedPdf:
        await page.set_content(html, wait_until="load")  # laid out at the printable width: scale 1
        scale, dropped = await self._fit(page)
        for _ in range(_MAX_PRINTS):
            pdf: bytes = await page.pdf(scale=scale, prefer_css_page_size=True, print_background=True)
            if pdf_page_count(pdf) == 1:
                return PrintedPdf(pdf=pdf, scale=scale, dropped=dropped)
            scale *= _SHRINK_ON_OVERFLOW
        raise PdfError(f"the document does not fit on one page even at print scale {scale:.2f}")

    @staticmethod
    async def _fit(page: Any) -> tuple[float, tuple[int, ...]]:
        """The print scale, and the droppable ranks hidden, that fit the page: readable type first, then fewer tables."""
        limit = PRINTABLE_HEIGHT_PX * _FIT_MARGIN
        if await _printed_height(page, 1.0) <= limit:
            return 1.0, ()
        dropped: list[int] = []
        ranks = [int(rank) for rank in await page.evaluate(_DROP_RANKS_JS)]
        readable = await _printed_height(page, READABLE_SCALE) <= limit
        while not readable and ranks:
            rank = ranks.pop(0)
            await page.evaluate(_DROP_JS, rank)
            dropped.append(rank)
            readable = await _printed_height(page, READABLE_SCALE) <= limit
        if dropped and await _printed_height(page, 1.0) <= limit:  # the dropped tables made room for the full size
            return 1.0, tuple(dropped)
        low = READABLE_SCALE if readable else fitting_scale(await _printed_height(page, 1.0))  # either fits
        return await _largest_fitting_scale(page, low, limit), tuple(dropped)

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


async def _printed_height(page: Any, scale: float) -> float:
    """The page's printed height at a print scale, in CSS pixels: laid out at (printable width / scale), times scale."""
    await page.set_viewport_size({"width": round(PRINTABLE_WIDTH_PX / scale), "height": 400})
    return float(await page.evaluate(_HEIGHT_JS)) * scale


async def _largest_fitting_scale(page: Any, fits: float, limit: float) -> float:
    """The largest print scale under 1 at which the page fits, by bisection from `fits`, a scale at which it does."""
    low, high = fits, 1.0
    for _ in range(_FIT_STEPS):
        middle = (low + high) / 2
        if await _printed_height(page, middle) <= limit:
            low = middle
        else:
            high = middle
    return low


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


def render_pdf(design: Any, name: DesignName | None = None) -> bytes:
    """The one-page design document as PDF bytes (the page; the appendix is not printed), by the process's shared browser."""
    return shared_printer().print_html(render_html(design, name))
