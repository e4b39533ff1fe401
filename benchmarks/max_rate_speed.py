"""How long does `max-rate` take now that it chooses its probe length? Wall time of the CLI in fresh processes.

    .venv/bin/python benchmarks/max_rate_speed.py [--repeats N] [--tree DIR] [PRESET ...]

For each preset (default: capstone, qps200-chat, moe-deepseek) it runs `python -m planner max-rate PRESET --json`
in a fresh process, once with the default (converged) probe length and once with `--requests 1500` (the old
default, one length), and prints the median wall time, the search's own time (`wall_ms`), the probe lengths
tried, whether they converged and the replicas. `--tree DIR` runs the CLI from another checkout of the project
(e.g. `git archive <commit> | tar -x -C DIR`) with this interpreter, to set a before beside the after.
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


def _run(tree: Path, preset: str, extra: list[str]) -> tuple[float, dict[str, object]]:
    """Seconds one fresh `max-rate` process takes, and its JSON."""
    start = time.perf_counter()
    out = subprocess.run(
        [sys.executable, "-m", "planner", "max-rate", preset, "--json", *extra], cwd=tree, capture_output=True, text=True, check=True
    )
    return time.perf_counter() - start, json.loads(out.stdout)


def _row(tree: Path, preset: str, extra: list[str], repeats: int) -> str:
    runs = [_run(tree, preset, extra) for _ in range(repeats)]
    wall = statistics.median(t for t, _ in runs)
    result = runs[-1][1]
    search_ms = statistics.median(float(r["wall_ms"]) for _, r in runs)  # type: ignore[arg-type]
    lengths = result.get("probe_lengths_tried", [result.get("requests_per_probe")])
    label = " ".join(extra) or "default"
    return (
        f"{preset:<14} {label:<16} median {wall:5.2f} s a process (search {search_ms:6.0f} ms) over {repeats};"
        f" lengths {lengths}, converged {result.get('converged', 'n/a')}, {float(result['max_rate_per_s']):.2f} req/s,"  # type: ignore[arg-type]
        f" {result['replicas_needed']} replicas ({result['replicas_with_headroom']} with headroom)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("presets", nargs="*", default=["capstone", "qps200-chat", "moe-deepseek"])
    parser.add_argument("--repeats", type=int, default=5, help="fresh processes per row (default 5)")
    parser.add_argument("--tree", type=Path, default=ROOT, help="the checkout to run (default: this one)")
    args = parser.parse_args()
    _run(args.tree, args.presets[0], ["--requests", "100"])  # the first process may compile the loop into the cache
    print(f"tree: {args.tree}")
    for preset in args.presets:
        for extra in ([], ["--requests", "1500"]):
            print(_row(args.tree, preset, extra, args.repeats), flush=True)


if __name__ == "__main__":
    main()
