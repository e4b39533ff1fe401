"""Many users on one app process: reruns a second, slider-change latency and server memory under load.

    .venv/bin/python -m benchmarks.app_load [--sessions 20] [--seconds 60] [--think 1.0] [--trivial]

Starts `streamlit run app.py` on 127.0.0.1 (with the repository's .streamlit/config.toml) and connects
`--sessions` websocket clients (benchmarks.live.LiveSession: what a browser tab sends and receives, without
drawing), spread over the seven pages of the capstone design. Each session first gets its own number of
users (so no two sessions draw the same design), then, for `--seconds`, waits `--think` seconds (a
uniformly random 50-150% of it, so the sessions do not move in step), moves the duty-cycle slider to a value
it has not used (after 98 moves, its number of users instead) and waits for the rerun to finish. Every
rerun therefore plans a new design.

Prints: completed reruns a second, the slider-change latency (send to the run's end; median, p95, max),
the server's CPU use (from /proc: 1.0 is one core busy) and its resident memory every ten seconds. The
targets (issue 17): at least 12 reruns a second with 20 sessions, p95 at most 1.5 s, memory flat.
`--trivial` runs the same load against a one-slider app first (with the same .streamlit/config.toml), for what
Streamlit itself costs here.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import os
import random
import statistics
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from benchmarks.live import ROOT, LiveSession, Server, Widget, copy_streamlit_config, cpu_seconds, exit_on_sigterm, rss_mb, serve
from benchmarks.machine import load_average_line
from ui.pages import PAGES

TARGET_RERUNS_PER_S = 12.0
TARGET_P95_S = 1.5
_SAMPLE_EVERY_S = 1.0
TRIVIAL_APP = """import streamlit as st

value = st.sidebar.slider("Duty cycle", 0.01, 1.0, 0.08, 0.01, key="duty")
users = st.sidebar.number_input("Users at peak", 1, 10**9, 10000, key="users")
st.title("Trivial")
st.write(f"{users} users at duty {value:.2f}")
"""


@dataclass
class LoadResult:
    """What one load run measured."""

    seconds: float
    reruns: int = 0
    latencies_s: list[float] = field(default_factory=list)  # slider changes
    failures: list[str] = field(default_factory=list)
    memory_mb: list[tuple[float, float]] = field(default_factory=list)  # (seconds since start, RSS)
    cpu_cores: float = 0.0  # server CPU seconds per wall second over the run

    @property
    def reruns_per_s(self) -> float:
        return self.reruns / self.seconds

    def percentile_s(self, q: float) -> float:
        ordered = sorted(self.latencies_s)
        return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else float("nan")


@dataclass
class _User:
    """One connected session and the two inputs it changes."""

    index: int
    session: LiveSession
    duty: Widget
    users: Widget


def _changes(user: _User) -> Iterator[tuple[Widget, int | float]]:
    """The inputs a session makes, each giving a design it has not drawn: the duty cycle walks 0.02 .. 0.99 from a
    session-specific start, and after each walk the session's number of users moves on by 100."""
    values = [round(0.02 + 0.01 * k, 2) for k in range(98)]
    start = (user.index * 7) % len(values)
    for walk in itertools.count(1):
        for value in values[start:] + values[:start]:
            yield user.duty, value
        yield user.users, 10_000 + user.index + 1 + 100 * walk


async def _connect(server: Server, index: int) -> _User:
    """Open a session on its page and give it its own number of users (not timed)."""
    _, _, url_path = PAGES[index % len(PAGES)]
    session = LiveSession(server, url_path, "preset=capstone")
    first = await session.open()
    users = first.widgets["Users at peak"]
    own = await session.rerun({users: 10_000 + index + 1})
    return _User(index=index, session=session, duty=own.widgets["Duty cycle"], users=users)


async def _act(user: _User, deadline: float, think_s: float, result: LoadResult, rng: random.Random) -> None:
    """Think, change an input to a new value, wait for the rerun; until the deadline. Every rerun counts towards
    the rate, the slider's towards the latency."""
    for widget, value in _changes(user):
        await asyncio.sleep(think_s * rng.uniform(0.5, 1.5))
        if time.perf_counter() >= deadline:
            return
        run = await user.session.rerun({widget: value})
        if run.exceptions or run.status != "FINISHED_SUCCESSFULLY":
            result.failures.append(f"session {user.index}: {run.status} {run.exceptions[:1]}")
        elif time.perf_counter() <= deadline:
            result.reruns += 1
            if widget is user.duty:
                result.latencies_s.append(run.seconds)


async def _sample_memory(server: Server, start: float, deadline: float, result: LoadResult) -> None:
    while time.perf_counter() < deadline:
        result.memory_mb.append((time.perf_counter() - start, rss_mb(server.pid)))
        await asyncio.sleep(_SAMPLE_EVERY_S)


async def _load(server: Server, sessions: int, seconds: float, think_s: float) -> LoadResult:
    users = [await _connect(server, i) for i in range(sessions)]  # one by one, like people arriving
    rng = random.Random(17)
    result = LoadResult(seconds=seconds)
    start = time.perf_counter()
    deadline = start + seconds
    cpu_before = cpu_seconds(server.pid)
    actions = [_act(user, deadline, think_s, result, random.Random(rng.random())) for user in users]
    await asyncio.gather(_sample_memory(server, start, deadline, result), *actions)
    elapsed = time.perf_counter() - start
    result.seconds = min(elapsed, seconds)
    result.cpu_cores = (cpu_seconds(server.pid) - cpu_before) / elapsed
    for user in users:
        await user.session.close()
    return result


def run_load(script: Path, cwd: Path, sessions: int, seconds: float, think_s: float) -> LoadResult:
    with serve(script, cwd=cwd) as server:
        return asyncio.run(_load(server, sessions, seconds, think_s))


def _report(name: str, result: LoadResult, sessions: int, think_s: float) -> None:
    lat = result.latencies_s
    print(f"\n{name}: {sessions} sessions, think {think_s:g} s, {result.seconds:.0f} s")
    if not lat:
        print("  no rerun finished")
        return
    print(f"  reruns a second      {result.reruns_per_s:6.1f}   (target >= {TARGET_RERUNS_PER_S:g})  [{result.reruns} reruns]")
    p95 = result.percentile_s(0.95)
    print(
        f"  slider change        median {statistics.median(lat):.2f} s, p95 {p95:.2f} s (target <= {TARGET_P95_S:g} s), max {max(lat):.2f} s"
    )
    print(f"  server CPU           {result.cpu_cores:.2f} cores busy on average (of {os.cpu_count()})")
    every = max(1, int(10 / _SAMPLE_EVERY_S))
    samples = result.memory_mb[::every]
    print("  server memory (MB)   " + ", ".join(f"{t:.0f}s {mb:.0f}" for t, mb in samples))
    if result.memory_mb:
        first, last = result.memory_mb[0][1], result.memory_mb[-1][1]
        print(f"                       start {first:.0f}, end {last:.0f}, max {max(mb for _, mb in result.memory_mb):.0f}")
    if result.failures:
        print(f"  failed reruns        {len(result.failures)}: {result.failures[:3]}")


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--sessions", type=int, default=20)
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--think", type=float, default=1.0, help="seconds between a session's changes (0: as fast as the server answers)")
    parser.add_argument("--trivial", action="store_true", help="first the same load on a one-slider app")
    args = parser.parse_args()
    exit_on_sigterm()
    print(load_average_line())
    if args.trivial:
        with tempfile.TemporaryDirectory() as folder:
            script = Path(folder) / "trivial.py"
            script.write_text(TRIVIAL_APP)
            copy_streamlit_config(Path(folder))
            _report("trivial app", run_load(script, Path(folder), args.sessions, args.seconds, args.think), args.sessions, args.think)
    _report("this app", run_load(ROOT / "app.py", ROOT, args.sessions, args.seconds, args.think), args.sessions, args.think)


if __name__ == "__main__":
    main()
