"""How long a command-line call takes, start-up included: what a script feels on every call.

    .venv/bin/python -m benchmarks.cli_startup [--runs 7] [--presets capstone rag ...] [--keep-env]

Prints the median wall time (and CPU time) of a bare `python -c pass`, of the two libraries every plan stands on
(numpy, and pydantic with one model class: the floor any planner on them pays), of the planner's imports alone
(`import planner.__main__`: the command line's imports as `python -m planner` makes them, with numpy's BLAS on one
thread and the collector paused), and of `python -m planner plan <preset> --json` for every preset (or the ones named);
then each preset's difference from the bare interpreter, and the worst. The commands run in rounds, each once a round,
so that all of them meet the machine's slow and fast minutes alike. The wall time is the target; on a machine others
share, the CPU time is the steadier figure to compare two versions by. Target: every preset's plan costs at most 0.3 s
more than the bare interpreter (issue 17), which it can only do if it imports neither numba (the simulator), SciPy, nor
the export layer.

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

from benchmarks.machine import OtherWork

ROOT = Path(__file__).resolve().parent.parent
TARGET_EXTRA_S = 0.3
BARE = [sys.executable, "-c", "pass"]
# the libraries' own import cost, first model class included (pydantic loads its schema machinery for the first one),
# set up as planner/__main__.py sets up the planner's: numpy's BLAS on one thread, the collector paused
LIBRARIES = [
    sys.executable,
    "-c",
    "import gc, os\nos.environ.setdefault('OPENBLAS_NUM_THREADS', '1')\ngc.disable()\nimport numpy, pydantic\n"
    "class _Floor(pydantic.BaseModel):\n    value: int = 0",
]
IMPORTS = [sys.executable, "-c", "import planner.__main__"]  # the command line's imports, set up as `python -m planner` does


class _Timed:
    """One command's timings over the rounds: wall and CPU seconds of each fresh process."""

    def __init__(self, label: str, command: list[str]) -> None:
        self.label = label
        self.command = command
        self.walls_s: list[float] = []
        self.cpus_s: list[float] = []

    def run(self, env: dict[str, str]) -> None:
        wall, cpu = _wall_and_cpu_s(self.command, env)
        self.walls_s.append(wall)
        self.cpus_s.append(cpu)

    @property
    def median_s(self) -> float:
        return statistics.median(self.walls_s)

    def line(self) -> str:
        return (
            f"{self.label:<52} median {self.median_s * 1e3:6.0f} ms over {len(self.walls_s)} runs"
            f" (min {min(self.walls_s) * 1e3:.0f} ms; CPU median {statistics.median(self.cpus_s) * 1e3:.0f} ms)"
        )


def _wall_and_cpu_s(command: list[str], env: dict[str, str]) -> tuple[float, float]:
    """The process's wall time, and its CPU time (user + system; what it costs with others on the cores)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(command, cwd=ROOT, env=env, check=True, stdout=subprocess.DEVNULL)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--runs", type=int, default=7, help="rounds: fresh processes per command (default 7)")
    parser.add_argument("--presets", nargs="+", help="presets to plan (default: every preset in presets/)")
    parser.add_argument("--keep-env", action="store_true", help="keep PYTHONDONTWRITEBYTECODE if it is set")
    args = parser.parse_args()
    env = dict(os.environ)
    if not args.keep_env and env.pop("PYTHONDONTWRITEBYTECODE", None) is not None:
        print("PYTHONDONTWRITEBYTECODE unset for the timed processes (as installed: .pyc files kept; --keep-env: not)")
    presets = args.presets or sorted(path.stem for path in (ROOT / "presets").glob("*.toml"))
    bare = _Timed("bare interpreter (python -c pass)", BARE)
    libraries = _Timed("numpy and pydantic alone, one model class", LIBRARIES)
    imports = _Timed("the imports alone (python -c 'import planner.__main__')", IMPORTS)
    plans = {
        preset: _Timed(f"python -m planner plan {preset} --json", [sys.executable, "-m", "planner", "plan", preset, "--json"])
        for preset in presets
    }
    timed = [bare, libraries, imports, *plans.values()]
    for timing in timed:  # untimed: the page cache and the .pyc files, as a user's second call sees them
        _wall_and_cpu_s(timing.command, env)
    others = OtherWork()
    for _ in range(args.runs):
        for timing in timed:
            timing.run(env)
    for timing in timed:
        print(timing.line())
    print(
        f"  the libraries take {(libraries.median_s - bare.median_s) * 1e3:.0f} ms more than the bare interpreter;"
        f" the planner's imports {(imports.median_s - bare.median_s) * 1e3:.0f} ms, of which its own modules"
        f" {(imports.median_s - libraries.median_s) * 1e3:.0f} ms"
    )
    extra_s = {preset: plan.median_s - bare.median_s for preset, plan in plans.items()}
    for preset, extra in extra_s.items():
        print(f"  {preset:<24} {extra * 1e3:5.0f} ms more than the bare interpreter")
    worst = max(extra_s, key=lambda preset: extra_s[preset])
    verdict = "meets" if extra_s[worst] <= TARGET_EXTRA_S else "misses"
    print(f"worst: {worst}, {extra_s[worst] * 1e3:.0f} ms more than the bare interpreter", end=" ")
    print(f"({verdict} the target of {TARGET_EXTRA_S * 1e3:.0f} ms on every preset)")
    print(others.line())


if __name__ == "__main__":
    main()
