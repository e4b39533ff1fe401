"""How long a command-line call takes, start-up included: what a script feels on every call.

    .venv/bin/python benchmarks/cli_startup.py [--runs 7]

Prints the median wall time of `python -m planner plan capstone --json` and of a bare `python -c pass`
over the same number of fresh processes, and their difference. Target: the plan costs at most 0.3 s
more than the bare interpreter (issue 17), which it can only do if it imports neither numba (the
simulator) nor the export layer.
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
COMMANDS = {
    "bare interpreter (python -c pass)": [sys.executable, "-c", "pass"],
    "python -m planner plan capstone --json": [sys.executable, "-m", "planner", "plan", "capstone", "--json"],
}


def _wall_s(command: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(command, cwd=ROOT, check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--runs", type=int, default=7, help="fresh processes per command (default 7)")
    args = parser.parse_args()
    medians: dict[str, float] = {}
    for name, command in COMMANDS.items():
        _wall_s(command)  # one untimed run: the page cache and the .pyc files, as a user's second call sees them
        times = [_wall_s(command) for _ in range(args.runs)]
        medians[name] = statistics.median(times)
        print(f"{name:<40} median {medians[name] * 1e3:6.0f} ms over {args.runs} runs (min {min(times) * 1e3:.0f} ms)")
    bare, plan = medians.values()
    verdict = "meets" if plan - bare <= TARGET_EXTRA_S else "misses"
    print(f"plan costs {(plan - bare) * 1e3:.0f} ms more than the bare interpreter ({verdict} the target of {TARGET_EXTRA_S * 1e3:.0f} ms)")


if __name__ == "__main__":
    main()
