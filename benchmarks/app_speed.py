"""Speed of the app: server-side time to re-render each page after a sidebar control changes.

For every page, AppTest moves the duty-cycle slider (or the request rate, for a rate brief) to a value
not seen before, so the plan is computed afresh each time (no cache hit), and times the rerun. Prints
the median and the 90th percentile per page and preset; the target is a median of at most 150 ms.

    .venv/bin/python benchmarks/app_speed.py [--runs 15] [--presets capstone,qps10-tp4]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from streamlit.testing.v1 import AppTest  # noqa: E402

from ui.pages import PAGES  # noqa: E402

TARGET_MS = 150.0


def _move(at: AppTest, i: int, rate_brief: bool) -> None:
    if rate_brief:
        at.number_input(key="sb.workload.request_rate").set_value(5.0 + 0.25 * i)
    else:
        at.slider(key="sb.workload.duty_cycle").set_value(round(0.04 + 0.01 * i, 2))


def time_page(page: str, preset: str, runs: int) -> list[float]:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    at.query_params["preset"] = preset
    at.run()
    at.switch_page(page).run()
    try:
        at.number_input(key="sb.workload.request_rate")
        rate_brief = True
    except KeyError:
        rate_brief = False
    times = []
    for i in range(runs):
        _move(at, i, rate_brief)
        start = time.perf_counter()
        at.run()
        times.append((time.perf_counter() - start) * 1e3)
        assert not at.exception, [e.value for e in at.exception]
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--presets", default="capstone,qps10-tp4,variation-f")
    args = parser.parse_args()
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores (other work on the machine slows every figure)")
    print(f"{'page':<16} {'preset':<12} {'min ms':>8} {'median ms':>10} {'p90 ms':>8} {'max ms':>8}")
    worst = 0.0
    for preset in args.presets.split(","):
        for path, title, _ in PAGES:
            times = sorted(time_page(path, preset, args.runs))
            median = statistics.median(times)
            p90 = times[min(len(times) - 1, int(0.9 * len(times)))]
            worst = max(worst, median)
            print(f"{title:<16} {preset:<12} {times[0]:>8.1f} {median:>10.1f} {p90:>8.1f} {times[-1]:>8.1f}")
    verdict = "within" if worst <= TARGET_MS else "OVER"
    print(f"slowest page median: {worst:.1f} ms ({verdict} the {TARGET_MS:.0f} ms target)")


if __name__ == "__main__":
    main()
