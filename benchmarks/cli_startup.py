"""How long a command-line call takes, start-up included: what a script feels on every call.

    .venv/bin/python benchmarks/cli_startup.py [--runs 7] [--presets capstone rag ...]

Prints the median wall time of a bare `python -c pass` and of `python -m planner plan <preset> --json` for every
preset (or the ones named) over the same number of fresh processes, each preset's difference from the bare
interpreter, and the worst. Target: every preset's plan costs at most 0.3 s more than the bare interpreter
(issue 17), which it can only do if it imports neither numba (the simulator), SciPy, nor the export layer.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TARGET_EXTRA_S = 0.3
BARE = [sys.executable, "-c", "pass"]


def _wall_s(command: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(command, cwd=ROOT, check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - start


def _median_s(name: str, command: list[str], runs: int) -> float:
    """Median wall time of `command` over `runs` fresh processes, after one untimed run (the page cache and the
    .pyc files, as a user's second call sees them)."""
    _wall_s(command)
    times = [_wall_s(command) for _ in range(runs)]
    median = statistics.median(times)
    print(f"{name:<52} median {median * 1e3:6.0f} ms over {runs} runs (min {min(times) * 1e3:.0f} ms)")
    return median


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--runs", type=int, default=7, help="fresh processes per command (default 7)")
    parser.add_argument("--presets", nargs="+", help="presets to plan (default: every preset in presets/)")
    args = parser.parse_args()
    presets = args.presets or sorted(path.stem for path in (ROOT / "presets").glob("*.toml"))
    bare = _median_s("bare interpreter (python -c pass)", BARE, args.runs)
    extra_s = {}
    for preset in presets:
        command = [sys.executable, "-m", "planner", "plan", preset, "--json"]
        extra_s[preset] = _median_s(f"python -m planner plan {preset} --json", command, args.runs) - bare
    for preset, extra in extra_s.items():
        print(f"  {preset:<24} {extra * 1e3:5.0f} ms more than the bare interpreter")
    worst = max(extra_s, key=lambda preset: extra_s[preset])
    verdict = "meets" if extra_s[worst] <= TARGET_EXTRA_S else "misses"
    print(f"worst: {worst}, {extra_s[worst] * 1e3:.0f} ms more than the bare interpreter", end=" ")
    print(f"({verdict} the target of {TARGET_EXTRA_S * 1e3:.0f} ms on every preset)")


if __name__ == "__main__":
    main()
