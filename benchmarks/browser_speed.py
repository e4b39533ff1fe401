"""A control change in the real browser, this app against a trivial Streamlit app, interleaved (issue 16: at most 1.5x).

    .venv/bin/python -m benchmarks.browser_speed [--preset capstone] [--presses 6] [--rounds 2]

Both apps are served at once by `streamlit run` on 127.0.0.1 (benchmarks.live.serve, the repository's
.streamlit/config.toml for both), each driven by its own headless Debian chromium through Playwright. For every
page of the preset, in each round: the page is opened at a URL that gives it its own number of users (so no
design repeats and no timed rerun hits a cached plan), the trivial app is reopened, and then the duty-cycle
slider is moved one step down by an arrow key, alternately in this app and in the trivial app, `--presses`
times each. So every figure for a page has its trivial-app figures taken between its own inputs, under the same
load from whatever else the machine runs.

Timed, in the page's own clock, from the key press to idle: the last change to the page's DOM once Streamlit no
longer runs and nothing has changed for half a second (the quiet half second is not counted). The server's CPU
time over each input is read from /proc. Printed per page: the medians and 90th percentiles of both apps, their
ratio (the target: at most 1.5), and the mean server CPU per input.

Why 1.5x is out of reach (measured here, December 2026): the trivial app idles ~20 ms after a press on ~5 ms of server
CPU, while a new design's plan() alone is ~35 ms of CPU and the page's run ~20-30 ms more. In the browser, a metric
whose value changed costs ~1.5 ms and an unchanged element ~0.5 ms (the pages draw 40-140 elements with the
sidebar), and a Plotly chart whose figure changed ~30-45 ms: Streamlit's element id hashes the figure, so the chart
is mounted and drawn anew, even a two-point line. What the pages themselves controlled is gone: arithmetic drawn
only in an open expander, no Plotly mode bar, margins that Plotly's auto-margin never has to widen (each widening drew
the chart again), static tables instead of st.dataframe (whose grid rewrote its cells ~200 ms after the run).

After the December 2026 pass on the pages (3 presses a page, one round, the machine at a load of 3-4 from other work,
so every wall time here is above a quiet machine's): the SLO budget's two engine-limit charts and the Capacity page's
share of GPU time and limits-by-traffic charts sit in tabs that draw only the open one, so a slider move mounts 3 Plotly
charts on the SLO budget (was 4) and 2 on Capacity (was 3). (Building charts without plotly's property validation saved
~5 ms a chart but needs a private plotly argument, so it was not kept.) Server CPU per input, mean over the pages,
80 -> 64 ms (SLO budget 103 -> 63 ms); the page's own run excluding plan() (AppTest, the plan cached, the least of 12
reruns) 23 -> 16 ms on the SLO budget, 22 -> 18 ms on Capacity, 19 -> 16 ms on Failure modes. Key press to idle over
all pages 250 -> 226 ms median against the trivial app's ~30 ms in the same runs (8.2x -> 7.8x; per page 4.5x to
12.9x), a difference within the noise of the load. What is left is not the pages' own: plan() (~35-50 ms of CPU a new
design; the Cost page's fleet-size sweep re-plans every fleet, ~27 ms more), Streamlit's work per element on the
server and in the browser, and one Plotly mount for each chart the load moves and issue 16 asks to see at once (the
TTFT and ITL waterfalls, the two failure charts side by side, the cost by fleet size).

After the December 2026 passes on plan() (a new design's parts that a page does not show are worked out on first read;
fewer and cheaper re-plans), measured on an idle machine, 3 presses a page, two rounds: server CPU per input 22-63 ms
(mean 41 ms, was 59-80), key press to idle 75-309 ms, median 170 ms against the trivial app's 24 ms (6.9x; per page
3.3x on Compare to 14.2x on the SLO budget). The 'run end' column (the page marks the server's run finished) is
75-215 ms against ~20 ms for the trivial app although the server's CPU per input is 22-63 ms: the browser applies every
element of the run (~100 with the sidebar) before it marks the run finished. The rest is the Plotly mounts above.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

from benchmarks.live import CHROMIUM, CHROMIUM_FLAGS, ROOT, copy_streamlit_config, cpu_seconds, exit_on_sigterm, serve
from benchmarks.machine import load_average_line
from ui.pages import PAGES

TARGET_RATIO = 1.5
_TIMEOUT_MS = 60_000
QUIET_MS = 500
_SLIDER_STEP = 0.01  # the duty-cycle slider's step and minimum (ui.sidebar), in both apps
_SLIDER = '[data-testid="stSidebar"] input[type="range"][aria-label="Duty cycle"]'
TRIVIAL_APP = """import streamlit as st

value = st.sidebar.slider("Duty cycle", 0.01, 1.0, 0.08, 0.01, key="duty")
st.title("Trivial")
st.write(f"value {value:.2f}")
"""

# Records, in the page's own clock, every key press, the last change to the page's DOM and the last time Streamlit's
# run state turned to notRunning (the server's run has ended and its elements have arrived). Streamlit's run state
# alone does not mark idle: a run shorter than a frame never shows as running, and charts draw after it ends.
_RECORDER = """() => {
  window.__keys = []; window.__lastChange = 0; window.__finished = 0;
  if (window.__recording) return;
  window.__recording = true;
  const app = document.querySelector('[data-testid="stApp"]');
  new MutationObserver(() => { window.__lastChange = performance.now(); })
    .observe(document.body, {subtree: true, childList: true, attributes: true, characterData: true});
  new MutationObserver(() => {
    if (app.getAttribute('data-test-script-state') === 'notRunning') window.__finished = performance.now();
  }).observe(app, {attributes: true, attributeFilter: ['data-test-script-state']});
  document.addEventListener('keydown', () => window.__keys.push(performance.now()), true);
}"""
# Idle: after the last key press the page changed, Streamlit is not running, and nothing changed for QUIET_MS;
# resolves with [key press to the last change, key press to the run's end] (the quiet wait itself is not counted).
_IDLE_AFTER_KEY = f"""() => new Promise((resolve, reject) => {{
  const key = window.__keys[window.__keys.length - 1];
  const app = document.querySelector('[data-testid="stApp"]');
  const check = () => {{
    const now = performance.now();
    if (now - key > {_TIMEOUT_MS}) {{ reject(new Error('the page did not settle')); return; }}
    const idle = app.getAttribute('data-test-script-state') === 'notRunning';
    if (window.__lastChange > key && idle && now - window.__lastChange >= {QUIET_MS}) {{
      resolve([window.__lastChange - key, window.__finished > key ? window.__finished - key : null]); return;
    }}
    setTimeout(check, 10);
  }};
  check();
}})"""
_IDLE_NOW = "() => document.querySelector('[data-testid=\"stApp\"]').getAttribute('data-test-script-state') === 'notRunning'"


@dataclass
class Samples:
    """Input-to-idle (ms) and the server's CPU time (ms) of each input."""

    idle_ms: list[float] = field(default_factory=list)
    server_cpu_ms: list[float] = field(default_factory=list)
    run_end_ms: list[float] = field(default_factory=list)  # key press to the run's end, where the page showed it running

    @staticmethod
    def merged(parts: list[Samples]) -> Samples:
        return Samples(
            [ms for s in parts for ms in s.idle_ms],
            [ms for s in parts for ms in s.server_cpu_ms],
            [ms for s in parts for ms in s.run_end_ms],
        )

    @property
    def median_ms(self) -> float:
        return statistics.median(self.idle_ms)

    @property
    def p90_ms(self) -> float:
        ordered = sorted(self.idle_ms)
        return ordered[min(len(ordered) - 1, int(0.9 * len(ordered)))]

    @property
    def run_end_median_ms(self) -> float:
        return statistics.median(self.run_end_ms) if self.run_end_ms else float("nan")

    @property
    def cpu_mean_ms(self) -> float:
        """The mean, not the median: /proc counts CPU time in 10 ms ticks, so single inputs read 0, 10 or 20 ms."""
        return statistics.fmean(self.server_cpu_ms)


@dataclass
class PageResult:
    title: str
    app: Samples = field(default_factory=Samples)
    trivial: Samples = field(default_factory=Samples)

    @property
    def ratio(self) -> float:
        return self.app.median_ms / self.trivial.median_ms


@contextmanager
def playwright() -> Iterator[Any]:
    """One Playwright for the process: its sync API cannot start a second while the first runs."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        yield pw


@contextmanager
def browser_tab(pw: Any, viewport: dict[str, int] | None = None) -> Iterator[Any]:
    """A tab of its own headless chromium (a browser each, so neither app's tab is ever a background tab)."""
    with tempfile.TemporaryDirectory() as profile:
        context = pw.chromium.launch_persistent_context(
            profile,
            executable_path=str(CHROMIUM),
            headless=True,
            args=CHROMIUM_FLAGS,
            viewport=viewport or {"width": 1400, "height": 1000},
        )
        try:
            yield context.pages[0] if context.pages else context.new_page()
        finally:
            context.close()


def _open(tab: Any, url: str, title: str) -> None:
    tab.goto(url)
    tab.locator("h1", has_text=title).first.wait_for(timeout=_TIMEOUT_MS)
    tab.wait_for_function(_IDLE_NOW, timeout=_TIMEOUT_MS)
    tab.evaluate(_RECORDER)
    tab.locator(_SLIDER).focus()


def _press(tab: Any, server_pid: int, samples: Samples) -> None:
    cpu_before = cpu_seconds(server_pid)
    tab.locator(_SLIDER).press("ArrowLeft")  # one step of 0.01 down: a design this session has not drawn
    idle_ms, run_end_ms = tab.evaluate(_IDLE_AFTER_KEY)
    samples.idle_ms.append(float(idle_ms))
    if run_end_ms is not None:
        samples.run_end_ms.append(float(run_end_ms))
    samples.server_cpu_ms.append((cpu_seconds(server_pid) - cpu_before) * 1e3)
    tab.wait_for_function(_IDLE_NOW, timeout=_TIMEOUT_MS)


def measure(preset: str, presses: int, rounds: int, titles: list[str]) -> list[PageResult]:
    """The pages of the preset, each input in this app followed by one in the trivial app."""
    pages = [page for page in PAGES if page[1] in titles]
    results = [PageResult(title) for _, title, _ in pages]
    with tempfile.TemporaryDirectory() as folder:
        script = Path(folder) / "trivial.py"
        script.write_text(TRIVIAL_APP)
        copy_streamlit_config(Path(folder))
        with (
            serve(ROOT / "app.py") as app,
            serve(script, cwd=Path(folder)) as trivial,
            playwright() as pw,
            browser_tab(pw) as app_tab,
            browser_tab(pw) as trivial_tab,
        ):
            users = 10_000
            for _ in range(rounds):
                for (_, title, url_path), result in zip(pages, results, strict=True):
                    users -= 7  # a design no earlier page or round drew
                    _open(app_tab, f"{app.url}/{url_path}?{urlencode({'preset': preset, 'workload.users': users})}", title)
                    _open(trivial_tab, trivial.url, "Trivial")
                    for _ in range(presses):
                        _press(app_tab, app.pid, result.app)
                        _press(trivial_tab, trivial.pid, result.trivial)
    return results


def _row(name: str, app: Samples, trivial: Samples, note: str = "") -> str:
    ratio = app.median_ms / trivial.median_ms
    return (
        f"{name:<14} {app.median_ms:>7.0f} [{app.p90_ms:>5.0f}] {app.run_end_median_ms:>8.0f}"
        f" {trivial.median_ms:>7.0f} [{trivial.p90_ms:>5.0f}] {ratio:>6.2f}x {app.cpu_mean_ms:>8.1f} {trivial.cpu_mean_ms:>8.1f}{note}"
    )


def report(results: list[PageResult], preset: str) -> None:
    print(f"\n{preset}: key press to idle in Chromium, ms, median [p90]; 'run end': key press to the end of the server's run as")
    print("the page saw it (the rest of 'idle' is drawing); server CPU per input, ms, mean; ratio of the idle medians")
    print(f"{'page':<14} {'this app':>15} {'run end':>8} {'trivial':>15} {'ratio':>7} {'CPU app':>8} {'trivial':>8}")
    for r in results:
        print(_row(r.title, r.app, r.trivial, "" if r.ratio <= TARGET_RATIO else f"  over {TARGET_RATIO}x"))
    print(_row("all pages", Samples.merged([r.app for r in results]), Samples.merged([r.trivial for r in results])))
    worst = max(results, key=lambda r: r.ratio)
    print(f"slowest page: {worst.title}, {worst.ratio:.2f}x the trivial app (target: at most {TARGET_RATIO}x)")


def _steps_down(preset: str) -> int:
    """How many presses of ArrowLeft the preset's duty-cycle slider takes before it stops at its minimum."""
    from planner import load_brief

    return round((load_brief(preset).workload.duty_cycle - _SLIDER_STEP) / _SLIDER_STEP)


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--preset", default="capstone")
    parser.add_argument("--presses", type=int, default=6, help="inputs per page and round in each app")
    parser.add_argument("--rounds", type=int, default=2, help="passes over the pages")
    parser.add_argument("--pages", default=",".join(title for _, title, _ in PAGES), help="page titles, comma-separated")
    args = parser.parse_args()
    exit_on_sigterm()
    print(load_average_line())
    steps = _steps_down(args.preset)
    if args.presses > steps:  # a press at the slider's end changes nothing, and the page would never settle
        parser.error(f"--presses: the duty cycle of {args.preset!r} goes down {steps} steps at most")
    titles = [title.strip() for title in args.pages.split(",")]
    unknown = set(titles) - {title for _, title, _ in PAGES}
    if unknown:
        parser.error(f"--pages: no page titled {sorted(unknown)}")
    report(measure(args.preset, args.presses, args.rounds, titles), args.preset)


if __name__ == "__main__":
    main()
