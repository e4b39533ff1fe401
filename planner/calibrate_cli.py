"""`python -m planner calibrate RESULTS... --out profile.toml`: fit the step model's constants to your own runs.

RESULTS are the JSON that `vllm bench serve --save-result` writes, the JSON lines SGLang's `bench_serving` writes, or
CSVs in the calibration format (planner.calibration.user_files). Each run becomes a setup the simulator runs; the same
constants the bundled calibration fits (planner.calibration.fit.PARAMETERS, within their physical ranges) are fitted
to them from the planner's defaults, and written as a profile a brief can name (`efficiency_profile = "..."`).
With few runs, few constants are pinned: the JSON says which ended at a range's edge and how far each run is off
before and after.
"""

from __future__ import annotations

import argparse
import math
from pathlib import Path
from typing import Any

import numpy as np

from planner.brief import Efficiency
from planner.calibration import Measurement, predict, read_user_file, setup
from planner.calibration.fit import PARAMETERS, fit
from planner.cli import jsonable, register, say
from planner.errors import BriefError
from planner.profile import profile_toml

__all__ = ["add_commands", "calibrate"]

MAX_RUNS = 200  # each fit evaluation simulates every run: a profile is fitted to a benchmark sweep, not a log
FIXED = {"tp_comm_overhead": 0.0, "real_kernel_factor": 1.0, "compute_peak": "auto", "allreduce_bytes_moved": True, "step_roofline": False}
MAX_EVALUATIONS = 300


def _predict(m: Measurement, efficiency: dict[str, Any]) -> float:
    return predict(setup(m, efficiency))


def _errors(measurements: list[Measurement], efficiency: dict[str, Any]) -> list[float]:
    return [_predict(m, efficiency) / m.value - 1 for m in measurements]


def calibrate(paths: list[Path], given: dict[str, Any]) -> dict[str, Any]:
    """Fit the constants to the runs in `paths`; `given` supplies what the files do not record (model, gpu, tp)."""
    try:
        measurements = [m for path in paths for m in read_user_file(path, **given)]
    except BriefError as exc:  # the readers say `give gpu=`; on the command line that is --gpu
        reason = exc.reason
        for key in ("model", "gpu", "tp"):
            reason = reason.replace(f"give {key}=", f"give --{key} ")
        raise BriefError(exc.field, reason) from None
    if not measurements:
        raise BriefError("RESULTS", "the files hold no run to fit")
    if len(measurements) > MAX_RUNS:
        raise BriefError("RESULTS", f"{len(measurements):,} measurements; at most {MAX_RUNS} (a sweep of runs, not a log)")
    defaults = {p.name: float(getattr(Efficiency(), p.name)) for p in PARAMETERS}
    before = _errors(measurements, defaults | FIXED)
    result = fit(measurements, _predict, fixed=FIXED, start=defaults, max_evaluations=MAX_EVALUATIONS)
    after = _errors(measurements, result.constants | FIXED)
    return {
        "constants": result.constants,
        "fixed": FIXED,
        "measurements": len(measurements),
        "at_edge": list(result.at_edge),
        "median_abs_error_at_defaults": float(np.median(np.abs(before))),
        "median_abs_error_fitted": float(np.median(np.abs(after))),
        "rows": [
            {"id": m.id, "metric": m.metric.value, "measured": m.value, "at_defaults": b, "fitted": a}
            for m, b, a in zip(measurements, before, after, strict=True)
        ],
    }


def _header(result: dict[str, Any], paths: list[Path]) -> list[str]:
    return [
        f"Efficiency profile: the step model's constants fitted by `python -m planner calibrate` to {result['measurements']}",
        f"measurements from {', '.join(p.name for p in paths)}.",
        f"Median |error|: {result['median_abs_error_at_defaults'] * 100:.1f}% at the planner's defaults,"
        f" {result['median_abs_error_fitted'] * 100:.1f}% fitted.",
        *(
            [f"At a range's edge (the runs do not pin it, or the model misses something): {', '.join(result['at_edge'])}."]
            if result["at_edge"]
            else []
        ),
        'A brief uses it with a top-level line: efficiency_profile = "<this file>" (relative to the brief file).',
    ]


def cmd_calibrate(args: argparse.Namespace) -> int:
    import json

    given = {k: v for k, v in (("model", args.model), ("gpu", args.gpu), ("tp", args.tp)) if v is not None}
    paths = [Path(p) for p in args.results]
    result = calibrate(paths, given)
    if args.out:
        out = Path(args.out)
        try:
            out.write_text(profile_toml(result["constants"] | FIXED, _header(result, paths)), encoding="utf-8")
        except OSError as exc:
            raise BriefError(str(out)[:120], f"cannot write the profile: {exc.strerror or type(exc).__name__}") from None
        result["out"] = str(out)
    if args.json:
        print(json.dumps(jsonable(result), indent=2, allow_nan=False))
    else:
        for line in _header(result, paths):
            say(line)
        for key, value in result["constants"].items():
            say(f"  {key} = {value:g}")
        if args.out:
            say(f"wrote {args.out}")
    return 0


def _tp(text: str) -> int:
    value = int(text)
    if not 1 <= value <= 64 or math.log2(value) % 1:
        raise argparse.ArgumentTypeError(f"{text} is not a tensor-parallel degree (1, 2, 4, ... 64)")
    return value


def add_commands(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("calibrate", help="fit the step model's constants to your own benchmark results")
    p.add_argument("results", nargs="+", metavar="RESULTS", help="vllm bench serve / SGLang bench_serving JSON, or a calibration CSV")
    p.add_argument("--model", help="catalog model key, when the files do not name one the catalog knows")
    p.add_argument("--gpu", help="catalog GPU key (neither tool records the GPU)")
    p.add_argument("--tp", type=_tp, help="tensor-parallel degree (vLLM's client does not record it)")
    p.add_argument("--out", metavar="FILE", help="write the profile (TOML) a brief can name with efficiency_profile")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(func=cmd_calibrate)


register(add_commands)
