"""How long the design document takes to render, per format: what the app's download buttons cost.

    .venv/bin/python -m benchmarks.export_speed [--warm-runs 20] [--cold-runs 5]

Prints medians. Markdown and HTML per render (HTML with Graphviz's SVG cached, as for a second click on
the same design, and with `dot` run each time). The PDF warm: render_pdf with the process's shared browser
already running, as for every click after the first in the app. The PDF cold: the first render_pdf in a
fresh Python process (Playwright's driver and Chromium start inside it; the interpreter and the imports
are not counted), and the whole `python -m planner export --format pdf` command. Also five PDFs asked for
at once from five threads (one browser, at most two documents in it at a time) and every preset in turn.
The target is a warm PDF of at most 300 ms.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path

from benchmarks.machine import load_average_line
from planner import load_brief, plan, preset_names
from report import render_html, render_markdown, render_pdf, shared_printer
from report.diagram import svgs_from_dots

ROOT = Path(__file__).resolve().parent.parent
TARGET_WARM_MS = 300.0

_FIRST_PDF = """
import time
from planner import load_brief, plan
from report import render_pdf
design = plan(load_brief("capstone"))
start = time.perf_counter()
render_pdf(design)
print((time.perf_counter() - start) * 1e3)
"""


def _median_ms(fn: Callable[[], object], runs: int) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        times.append((time.perf_counter() - start) * 1e3)
    return statistics.median(times)


def _html_cold(design: object) -> str:
    svgs_from_dots.cache_clear()
    return render_html(design)


def _first_pdf_in_a_fresh_process_ms() -> float:
    out = subprocess.run([sys.executable, "-c", _FIRST_PDF], cwd=ROOT, capture_output=True, text=True, check=True, timeout=120)
    return float(out.stdout.strip().splitlines()[-1])


def _export_command_ms() -> float:
    with tempfile.TemporaryDirectory() as folder:
        command = [sys.executable, "-m", "planner", "export", "capstone", "--format", "pdf", "--out", str(Path(folder) / "d.pdf")]
        start = time.perf_counter()
        subprocess.run(command, cwd=ROOT, capture_output=True, check=True, timeout=120)
        return (time.perf_counter() - start) * 1e3


def _at_once_ms(design: object, clicks: int) -> float:
    html = render_html(design)
    printer = shared_printer()
    threads = [threading.Thread(target=printer.print_html, args=(html,)) for _ in range(clicks)]
    start = time.perf_counter()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return (time.perf_counter() - start) * 1e3


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--warm-runs", type=int, default=20)
    parser.add_argument("--cold-runs", type=int, default=5)
    args = parser.parse_args()
    print(load_average_line())
    design = plan(load_brief("capstone"))
    designs = [plan(load_brief(name)) for name in preset_names()]
    md = _median_ms(lambda: render_markdown(design), 50)
    html_warm = _median_ms(lambda: render_html(design), 50)
    html_cold = _median_ms(lambda: _html_cold(design), 10)
    first_in_process = _median_ms(lambda: render_pdf(design), 1)  # starts the shared browser
    pdf_warm = _median_ms(lambda: render_pdf(design), args.warm_runs)
    pdf_cold = statistics.median(_first_pdf_in_a_fresh_process_ms() for _ in range(args.cold_runs))
    command = statistics.median(_export_command_ms() for _ in range(args.cold_runs))
    at_once = _at_once_ms(design, 5)
    start = time.perf_counter()
    for d in designs:
        render_pdf(d)
    every_preset_s = time.perf_counter() - start
    print("capstone design document, medians:")
    print(f"  markdown                                 {md:8.2f} ms")
    print(f"  html (diagram cached)                    {html_warm:8.2f} ms")
    print(f"  html (dot run each time)                 {html_cold:8.2f} ms")
    print(
        f"  pdf warm (shared browser running)        {pdf_warm:8.0f} ms   ({'within' if pdf_warm <= TARGET_WARM_MS else 'OVER'} the {TARGET_WARM_MS:.0f} ms target)"
    )
    print(
        f"  pdf cold (first in a fresh process)      {pdf_cold:8.0f} ms   ({pdf_cold / pdf_warm:.1f}x warm; this run's own first: {first_in_process:.0f} ms)"
    )
    print(f"  export --format pdf, whole command       {command:8.0f} ms")
    print(f"  five pdfs asked for at once              {at_once:8.0f} ms   (all five done; one browser, two at a time)")
    print(f"  pdf for all {len(designs)} presets in turn        {every_preset_s * 1e3:8.0f} ms")


if __name__ == "__main__":
    main()
