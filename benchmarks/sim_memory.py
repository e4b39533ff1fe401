"""How much time and memory a million-request simulation takes (issue 17).

    .venv/bin/python benchmarks/sim_memory.py [--requests 1000000] [--runs 3]

1. In process, on a light workload (the calibrated benchmark engine with llama-3.1-8b, 128-token prompts
   and replies, every request at t = 0): the median time of drawing the requests, of the engine kernel and
   of the summary (percentiles, attainment). Target: kernel + summary under 0.5 s for 1M requests.
2. The whole `python -m planner simulate ... --requests N --json` command in a fresh process: wall time
   and peak RSS, for the light workload (all at t = 0, and Poisson arrivals), and for one where each request runs nearly alone (1 req/s: an
   engine step per token, so the steps outnumber the requests ~100 to 1). Target: under 300 MB for 1M
   light requests, and memory that follows the requests, not the steps.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from planner.sim_engine import run_engine, warm_up  # noqa: E402
from planner.simulator import SimSettings, _replica, _requests, _summarize, benchmark_brief, step_costs  # noqa: E402

TARGET_IN_PROCESS_S = 0.5
TARGET_RSS_MB = 300.0
MODEL = "llama-3.1-8b"
LIGHT = ["--set", f"model.name={MODEL}", "--input", "128", "--output", "128", "--rate", "inf"]
POISSON = ["--set", f"model.name={MODEL}", "--input", "128", "--output", "128", "--rate", "20"]
ONE_AT_A_TIME = ["--set", f"model.name={MODEL}", "--input", "128", "--output", "128", "--rate", "1"]

# runs the command given after it and prints the peak RSS (KB on Linux) of that child process
_PEAK_RSS = "import resource, subprocess, sys; subprocess.run(sys.argv[1:], check=True, stdout=subprocess.DEVNULL); print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)"


def _in_process(requests: int, runs: int) -> dict[str, float]:
    """Median seconds of each phase of simulate() on the light workload."""
    brief = benchmark_brief({"model.name": MODEL})
    settings = SimSettings(requests=requests, rate_per_s=float("inf"), input_tokens=128, output_tokens=128)
    shape = _replica(brief)
    costs = step_costs(brief, shape)
    max_len = min(brief.deployment.max_model_len, costs.kv_capacity_tokens)
    warm_up()
    phases: dict[str, list[float]] = {"requests": [], "kernel": [], "summary": []}
    for _ in range(runs):
        t0 = time.perf_counter()
        reqs = _requests(brief, settings, float("inf"), max_len)
        t1 = time.perf_counter()
        out = run_engine(reqs.arrival_s, reqs.prompt_tokens, reqs.output_tokens, reqs.cached_tokens, reqs.clients, costs)
        t2 = time.perf_counter()
        _summarize(brief, settings, float("inf"), reqs, out, t2 - t1)
        t3 = time.perf_counter()
        for name, seconds in zip(phases, (t1 - t0, t2 - t1, t3 - t2), strict=True):
            phases[name].append(seconds)
    return {name: statistics.median(times) for name, times in phases.items()}


def _command(args: list[str], requests: int) -> tuple[float, float, int]:
    """Wall seconds, peak RSS (MB) and engine steps of one `simulate` command in a fresh process."""
    command = [sys.executable, "-m", "planner", "simulate", *args, "--requests", str(requests), "--json"]
    start = time.perf_counter()
    rss = subprocess.run([sys.executable, "-c", _PEAK_RSS, *command], cwd=ROOT, capture_output=True, text=True, check=True)
    wall = time.perf_counter() - start
    steps = json.loads(subprocess.run(command, cwd=ROOT, capture_output=True, text=True, check=True).stdout)["steps"]
    return wall, int(rss.stdout.strip()) / 1024, int(steps)


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--requests", type=int, default=1_000_000, help="requests in the light runs (default 1,000,000)")
    parser.add_argument("--runs", type=int, default=3, help="in-process repeats (default 3)")
    args = parser.parse_args()
    n = args.requests
    phases = _in_process(n, args.runs)
    busy = phases["kernel"] + phases["summary"]
    print(f"light workload: benchmark engine, {MODEL}, 128 in / 128 out, all at t = 0, {n:,} requests (median of {args.runs})")
    print(f"  draw requests {phases['requests'] * 1e3:7.0f} ms")
    print(f"  kernel        {phases['kernel'] * 1e3:7.0f} ms")
    print(f"  summary       {phases['summary'] * 1e3:7.0f} ms")
    print(
        f"  kernel + summary {busy * 1e3:.0f} ms ({'meets' if busy <= TARGET_IN_PROCESS_S else 'misses'} the target of {TARGET_IN_PROCESS_S * 1e3:.0f} ms)"
    )
    _, base_mb, _ = _command(LIGHT, 1)
    print(f"simulate with 1 request: peak RSS {base_mb:.0f} MB (the interpreter, numpy, pydantic, numba)")
    for label, flags, count in (
        ("light, all at t = 0", LIGHT, n),
        ("light, Poisson 20 req/s", POISSON, n),
        ("one request at a time, 1 req/s", ONE_AT_A_TIME, max(n // 5, 1)),
    ):
        wall, rss_mb, steps = _command(flags, count)
        print(
            f"simulate {label}: {count:,} requests, {steps:,} steps: wall {wall:.2f} s, peak RSS {rss_mb:.0f} MB"
            f" ({(rss_mb - base_mb) * 2**20 / count:,.0f} bytes a request above the 1-request run)"
        )
    print(f"target: peak RSS under {TARGET_RSS_MB:.0f} MB for 1M light requests")


if __name__ == "__main__":
    main()
