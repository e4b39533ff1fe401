"""How long a command-line call takes, start-up included: what a script feels on every call.

    .venv/bin/python benchmarks/cli_startup.py [--runs 7] [--presets capstone rag ...] [--keep-env]

Prints the median wall time (and CPU time) of a bare `python -c pass`, of the imports alone (`import planner.__main__`:
the command line's imports as `python -m planner` makes them, with numpy's BLAS on one thread and the collector paused),
and of `python -m planner plan <preset> --json` for every preset (or the ones named) over the same number of fresh
processes, each preset's difference from the bare interpreter, and the worst. The wall time is the target; on a
machine others share, the CPU time is the steadier figure to compare two versions by. Target: every preset's plan costs at most 0.3 s more than the bare interpreter
(issue 17), which it can only do if it imports neither numba (the simulator), SciPy, nor the export layer.

The processes run as an installed copy does: with PYTHONDONTWRITEBYTECODE unset, so the untimed first run leaves
the planner's .pyc files (site-packages has its own). With the variable set, as in some sandboxes, every call
compiles the planner's ~45 modules from source again (~0.1 s on a 2-core machine); --keep-env measures that.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TARGET_EXTRA_S = 0.3
BARE = [sys.executable, "-c", "pass"]
IMPORTS = [sys.executable, "-c", "import planner.__main__"]  # the command line's imports, set up as `python -m planner` does


def _wall_and_cpu_s(command: list[str], env: dict[str, str]) -> tuple[float, float]:
    """The process's wall time, and its CPU time (user + system; what it costs with others on the cores)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(command, cwd=ROOT, env=env, check=True, stdout=subprocess.DEVNULL)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def _median_s(name: str, command: list[str], runs: int, env: dict[str, str]) -> float:
    """Median wall time of `command` over `runs` fresh processes, after one untimed run (the page cache and the
    .pyc files, as a user's second call sees them); the CPU time's median is printed beside it."""
    _wall_and_cpu_s(command, env)
    walls, cpus = zip(*(_wall_and_cpu_s(command, env) for _ in range(runs)), strict=True)
    median = statistics.median(walls)
    print(
        f"{name:<52} median {median * 1e3:6.0f} ms over {runs} runs (min {min(walls) * 1e3:.0f} ms;"
        f" CPU median {statistics.median(cpus) * 1e3:.0f} ms)"
    )
    return median


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--runs", type=int, default=7, help="fresh processes per command (default 7)")
    parser.add_argument("--presets", nargs="+", help="presets to plan (default: every preset in presets/)")
    parser.add_argument("--keep-env", action="store_true", help="keep PYTHONDONTWRITEBYTECODE if it is set")
    args = parser.parse_args()
    env = dict(os.environ)
    if not args.keep_env and env.pop("PYTHONDONTWRITEBYTECODE", None) is not None:
        print("PYTHONDONTWRITEBYTECODE unset for the timed processes (as installed: .pyc files kept; --keep-env: not)")
    presets = args.presets or sorted(path.stem for path in (ROOT / "presets").glob("*.toml"))
    bare = _median_s("bare interpreter (python -c pass)", BARE, args.runs, env)
    imports = _median_s("the imports alone (python -c 'import planner.__main__')", IMPORTS, args.runs, env)
    print(f"  the imports take {(imports - bare) * 1e3:.0f} ms more than the bare interpreter")
    extra_s = {}
    for preset in presets:
        command = [sys.executable, "-m", "planner", "plan", preset, "--json"]
        extra_s[preset] = _median_s(f"python -m planner plan {preset} --json", command, args.runs, env) - bare
    for preset, extra in extra_s.items():
        print(f"  {preset:<24} {extra * 1e3:5.0f} ms more than the bare interpreter")
    worst = max(extra_s, key=lambda preset: extra_s[preset])
    verdict = "meets" if extra_s[worst] <= TARGET_EXTRA_S else "misses"
    print(f"worst: {worst}, {extra_s[worst] * 1e3:.0f} ms more than the bare interpreter", end=" ")
    print(f"({verdict} the target of {TARGET_EXTRA_S * 1e3:.0f} ms on every preset)")


if __name__ == "__main__":
    main()
