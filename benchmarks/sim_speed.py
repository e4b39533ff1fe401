"""How fast is the simulator? The compiled loop against the straightforward one, on the same workload.

    .venv/bin/python benchmarks/sim_speed.py [--repeats N]

Workload (issue 4): qps200-chat at 15 req/s, 20,000 requests, 2,000 in / 500 out, seed 0. Prints the
median wall time of each simulator, the ratio, both results' percentiles and their largest relative
difference, the qps200-chat max-rate search time (one 1,500-request probe length; benchmarks/max_rate_speed.py
times the converged default), and what numba's start-up costs (loading the cached
machine code in a fresh process, and compiling it from scratch), so one can see whether it pays.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.sim_reference import reference_run  # noqa: E402
from planner import load_brief  # noqa: E402
from planner.replica import shape_of  # noqa: E402
from planner.sim_engine import run_engine, warm_up  # noqa: E402
from planner.sim_workload import make_requests  # noqa: E402
from planner.simulator import max_rate, step_costs  # noqa: E402

RATE, REQUESTS, PROMPT, OUTPUT = 15.0, 20_000, 2000, 500


def _percentiles(values_s: np.ndarray) -> dict[str, float]:
    ms = values_s * 1e3
    return {"mean": float(ms.mean()), **{f"p{q}": float(np.percentile(ms, q)) for q in (50, 90, 95, 99)}}


def _metrics(arrival: np.ndarray, first: np.ndarray, finish: np.ndarray) -> dict[str, dict[str, float]]:
    return {"ttft_ms": _percentiles(first - arrival), "tpot_ms": _percentiles((finish - first) / (OUTPUT - 1))}


def _median_time(fn, repeats: int) -> tuple[float, object]:  # type: ignore[no-untyped-def]
    times, result = [], None
    for _ in range(repeats):
        start = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times), result


def _startup_s(cache_dir: str | None) -> float:
    """Seconds a fresh process spends importing the engine and getting the kernel ready."""
    env = dict(os.environ)
    if cache_dir is not None:
        env["NUMBA_CACHE_DIR"] = cache_dir
    code = "import time; t = time.perf_counter(); from planner.sim_engine import warm_up; warm_up(); print(time.perf_counter() - t)"
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, check=True)
    return float(out.stdout.strip())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3, help="runs of the straightforward loop (the fast one runs 5x as many)")
    args = parser.parse_args()
    brief = load_brief("qps200-chat")
    costs = step_costs(brief, shape_of(brief))
    reqs = make_requests(
        count=REQUESTS,
        rate_per_s=RATE,
        clients=0,
        prompt_mean=PROMPT,
        prompt_p95=PROMPT,
        output_mean=OUTPUT,
        output_p95=OUTPUT,
        max_model_len=brief.deployment.max_model_len,
        prefix_hit_rate=0.0,
        seed=0,
    )
    warm_up()
    lists = (reqs.arrival_s.tolist(), reqs.prompt_tokens.tolist(), reqs.output_tokens.tolist(), reqs.cached_tokens.tolist())
    fast_s, fast = _median_time(
        lambda: run_engine(reqs.arrival_s, reqs.prompt_tokens, reqs.output_tokens, reqs.cached_tokens, 0, costs), 5 * args.repeats
    )
    ref_s, ref = _median_time(lambda: reference_run(*lists, costs), args.repeats)
    fast_m = _metrics(fast.arrival_s, fast.first_token_s, fast.finish_s)  # type: ignore[attr-defined]
    ref_m = _metrics(np.array(ref.arrival_s), np.array(ref.first_token_s), np.array(ref.finish_s))  # type: ignore[attr-defined]
    worst = max(abs(fast_m[k][q] - ref_m[k][q]) / ref_m[k][q] for k in fast_m for q in fast_m[k])

    print(f"workload: qps200-chat, Poisson {RATE:g} req/s, {REQUESTS:,} requests, {PROMPT} in / {OUTPUT} out, seed 0")
    print(f"steps simulated: {fast.steps:,} (fast) / {ref.steps:,} (straightforward)")  # type: ignore[attr-defined]
    print(f"straightforward per-step Python loop: median {ref_s * 1e3:,.0f} ms over {args.repeats} runs")
    print(f"compiled loop (numba):               median {fast_s * 1e3:,.1f} ms over {5 * args.repeats} runs")
    print(f"ratio: {ref_s / fast_s:,.0f}x faster")
    for key in ("ttft_ms", "tpot_ms"):
        for name, m in (("straightforward", ref_m), ("compiled", fast_m)):
            row = ", ".join(f"{q} {v:.3f}" for q, v in m[key].items())
            print(f"  {key} {name:<15} {row}")
    print(f"largest relative difference in a percentile: {worst:.2e} (target: within 2%)")

    search_s, search = _median_time(lambda: max_rate(brief, requests=1500), 5)
    print(
        f"qps200-chat max-rate search, 1,500-request probes: median {search_s * 1e3:.0f} ms over 5 runs (target < 300 ms);"
        f" {search.max_rate_per_s:.2f} req/s, {search.replicas_needed} replicas, {search.replicas_with_headroom} with headroom"  # type: ignore[attr-defined]
    )
    warm = statistics.median(_startup_s(None) for _ in range(3))
    with tempfile.TemporaryDirectory() as empty:
        cold = _startup_s(empty)
    print(f"numba start-up in a fresh process: {warm * 1e3:.0f} ms with the on-disk cache, {cold * 1e3:.0f} ms compiling from scratch")
    print(
        f"start-up pays once a process simulates more than ~{warm / (ref_s / fast.steps) if fast.steps else 0:,.0f} steps"  # type: ignore[attr-defined]
        f" (the straightforward loop's cost per step is {ref_s / max(ref.steps, 1) * 1e6:.0f} us)"  # type: ignore[attr-defined]
    )


if __name__ == "__main__":
    main()
