"""How long the design document takes to render, per format: what the app's download buttons cost.

    .venv/bin/python -m benchmarks.export_speed

Prints medians: Markdown and HTML per render (HTML with Graphviz's SVG cached, as the app re-renders
the same diagram, and cold), the PDF per document with one browser kept open (PdfPrinter), and
render_pdf, which starts and stops Chromium each call.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable

from planner import load_brief, plan, preset_names
from report import PdfPrinter, render_html, render_markdown, render_pdf
from report.diagram import svg_from_dot


def _median_ms(fn: Callable[[], object], runs: int) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        times.append((time.perf_counter() - start) * 1e3)
    return statistics.median(times)


def _html_cold(design: object) -> str:
    svg_from_dot.cache_clear()
    return render_html(design)


def main() -> None:
    design = plan(load_brief("capstone"))
    designs = [plan(load_brief(name)) for name in preset_names()]
    md = _median_ms(lambda: render_markdown(design), 50)
    html_warm = _median_ms(lambda: render_html(design), 50)
    html_cold = _median_ms(lambda: _html_cold(design), 10)
    with PdfPrinter() as printer:
        html = render_html(design)
        pdf_warm = _median_ms(lambda: printer.print_html(html), 5)
        start = time.perf_counter()
        for d in designs:
            printer.print_html(render_html(d))
        every_preset_s = time.perf_counter() - start
    pdf_cold = _median_ms(lambda: render_pdf(design), 3)
    print("capstone design document, medians:")
    print(f"  markdown                     {md:8.2f} ms")
    print(f"  html (diagram cached)        {html_warm:8.2f} ms")
    print(f"  html (dot run each time)     {html_cold:8.2f} ms")
    print(f"  pdf, browser kept open       {pdf_warm:8.0f} ms")
    print(f"  pdf, render_pdf (cold start) {pdf_cold:8.0f} ms   ({pdf_cold / pdf_warm:.1f}x the warm print)")
    print(f"  pdf for all {len(designs)} presets, one browser: {every_preset_s:.1f} s")


if __name__ == "__main__":
    main()
