"""Speed of the app after a sidebar change, measured where a user feels it, against a trivial Streamlit app.

    .venv/bin/python benchmarks/app_speed.py [--runs 15] [--presets capstone,qps10-tp4,variation-f] [--presses 6]

1. Server side (AppTest, in process), every page of every preset: the timed change is the duty-cycle slider
   (the request rate for a brief that gives one) set to a value no earlier rerun of this run used, and each
   page first gets its own number of users (an untimed change), so no design repeats: every timed rerun
   plans afresh. The benchmark checks that (it fails on a repeated design). Printed per page: the wall-clock
   median and 90th percentile and the median CPU time of the process over the rerun.
2. In the real browser, interleaved with a trivial Streamlit app: benchmarks/browser_speed.py (one round over
   the capstone's pages; run that module for more rounds or another preset).

The server-side target is a median of at most 150 ms per rerun.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from streamlit.testing.v1 import AppTest  # noqa: E402

from benchmarks import browser_speed  # noqa: E402
from benchmarks.live import exit_on_sigterm  # noqa: E402
from benchmarks.machine import load_average_line  # noqa: E402
from ui.pages import PAGES  # noqa: E402

TARGET_MS = 150.0


# --- 1. server side, AppTest -------------------------------------------------------------------------------


def _median(values: list[float]) -> float:
    return statistics.median(values) if values else float("nan")


def _p90(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(0.9 * len(ordered)))]


def _has(at: AppTest, key: str) -> bool:
    try:
        at.number_input(key=key)
    except KeyError:
        return False
    return True


class _Designs:
    """Every design a timed rerun drew (preset and overrides): a repeat would have hit a cache."""

    def __init__(self) -> None:
        self._seen: set[str] = set()

    def add(self, preset: str, at: AppTest) -> None:
        design = json.dumps([preset, at.session_state["state.overrides"]], sort_keys=True)
        if design in self._seen:
            raise AssertionError(f"a timed rerun repeated a design, so it may have hit a cache: {design}")
        self._seen.add(design)


def _change(at: AppTest, rate_brief: bool, page_index: int, i: int) -> None:
    if rate_brief:
        at.number_input(key="sb.workload.request_rate").set_value(round(5.0 + page_index + 0.01 * (i + 1), 2))
    else:
        at.slider(key="sb.workload.duty_cycle").set_value(round(0.04 + 0.01 * i, 2))


def time_page(path: str, page_index: int, preset: str, runs: int, designs: _Designs) -> tuple[list[float], list[float]]:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    at.query_params["preset"] = preset
    at.run()
    at.switch_page(path).run()
    rate_brief = _has(at, "sb.workload.request_rate")
    if not rate_brief:  # this page's own number of users: its duty-cycle values make designs no other page drew
        users = at.number_input(key="sb.workload.users")
        users.set_value(int(users.value) + page_index + 1).run()
    wall, cpu = [], []
    for i in range(runs):
        _change(at, rate_brief, page_index, i)
        start, start_cpu = time.perf_counter(), time.process_time()
        at.run()
        wall.append((time.perf_counter() - start) * 1e3)
        cpu.append((time.process_time() - start_cpu) * 1e3)
        assert not at.exception, [e.value for e in at.exception]
        designs.add(preset, at)
    return wall, cpu


def server_side(presets: list[str], runs: int) -> tuple[float, float]:
    """Print the per-page table; the slowest page's wall-clock and CPU medians."""
    print(f"{'page':<14} {'preset':<12} {'wall median':>12} {'wall p90':>9} {'CPU median':>11}  (ms; every rerun a new design)")
    designs = _Designs()
    worst_wall = worst_cpu = 0.0
    for preset in presets:
        for page_index, (path, title, _) in enumerate(PAGES):
            wall, cpu = time_page(path, page_index, preset, runs, designs)
            median, cpu_median = _median(wall), _median(cpu)
            worst_wall, worst_cpu = max(worst_wall, median), max(worst_cpu, cpu_median)
            print(f"{title:<14} {preset:<12} {median:>12.1f} {_p90(wall):>9.1f} {cpu_median:>11.1f}")
    return worst_wall, worst_cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--runs", type=int, default=15, help="timed reruns per page and preset (server side)")
    parser.add_argument("--presets", default="capstone,qps10-tp4,variation-f")
    parser.add_argument("--presses", type=int, default=6, help="slider presses per page in the browser, in each app")
    parser.add_argument("--no-browser", action="store_true", help="the server-side table only")
    args = parser.parse_args()
    exit_on_sigterm()
    print(load_average_line())
    worst_wall, worst_cpu = server_side(args.presets.split(","), args.runs)
    for name, worst in (("CPU", worst_cpu), ("wall-clock", worst_wall)):
        verdict = "within" if worst <= TARGET_MS else "OVER"
        print(f"slowest page, {name} median: {worst:.1f} ms ({verdict} the {TARGET_MS:.0f} ms target)")
    if not args.no_browser:
        titles = [title for _, title, _ in PAGES]
        browser_speed.report(browser_speed.measure("capstone", args.presses, rounds=1, titles=titles), "capstone")


if __name__ == "__main__":
    main()
