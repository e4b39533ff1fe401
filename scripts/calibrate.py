"""Fit the planner's default efficiency factors to published serving measurements.

    .venv/bin/python scripts/calibrate.py            # fit, then write docs/calibration.md and .json
    .venv/bin/python scripts/calibrate.py --report   # only re-simulate every row at the current defaults

Each row of calibration/benchmarks.csv (a copy of ../shared/calibration/benchmarks.csv) becomes a brief (model, GPU, TP, precisions, engine
limits) and a load (a static batch, every request at once, or Poisson arrivals), which the simulator
runs; the metric it reports is compared with the measured one. Five physical parameters, the same for
every model and GPU, are fitted by minimizing the mean |ln(predicted / measured)| (Nelder-Mead, fixed
start and iteration count, so the fit is reproducible). Rows from engine releases before 2024 count
half: the file's notes say old releases are slower than current ones.
"""

from __future__ import annotations

import argparse
import csv
import json
import math
import sys
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from planner.brief import Efficiency  # noqa: E402
from planner.calibration import Setup, measurement_from_row, metric_of  # noqa: E402
from planner.calibration import predict as predict_setup  # noqa: E402
from planner.calibration import setup as setup_of  # noqa: E402
from planner.simulator import simulate  # noqa: E402

CSV = ROOT / "calibration" / "benchmarks.csv"  # a copy of ../shared/calibration/benchmarks.csv, kept in the repo
REPORT_MD = ROOT / "docs" / "calibration.md"
REPORT_JSON = ROOT / "docs" / "calibration.json"

FITTED = ("compute_fraction", "bandwidth_fraction", "attention_bandwidth_fraction", "step_overhead_ms", "allreduce_latency_us")
START = (0.5, 0.8, 0.3, 3.0, 30.0)
STEP = (0.1, 0.1, 0.1, 2.0, 15.0)
BOUNDS = ((0.05, 1.0), (0.05, 1.0), (0.02, 1.0), (0.0, 100.0), (0.0, 500.0))
FIXED = {"tp_comm_overhead": 0.0, "real_kernel_factor": 1.0, "compute_peak": "auto"}  # the all-reduce latency replaces the +x% TP factor
ITERATIONS = 200


def read_rows(path: Path = CSV) -> list[dict[str, str]]:
    with path.open(newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


def setup(row: dict[str, str], efficiency: dict[str, Any] | None = None) -> Setup:
    """The brief and load that describe one row (planner.calibration); efficiency fields default to the planner's defaults."""
    return setup_of(measurement_from_row(row, CSV.name), efficiency)


def predict(row: dict[str, str], efficiency: dict[str, Any] | None = None) -> float:
    return predict_setup(setup(row, efficiency))


def loss(params: np.ndarray, rows: list[dict[str, str]]) -> float:
    if any(not lo <= p <= hi for p, (lo, hi) in zip(params, BOUNDS, strict=True)):
        return 1e9
    eff = dict(zip(FITTED, (float(p) for p in params), strict=True)) | FIXED
    total = weights = 0.0
    for row in rows:
        s = setup(row, eff)
        error = abs(math.log(metric_of(s, simulate(s.brief, s.settings)) / s.measurement.value))
        total += s.weight * error
        weights += s.weight
    return total / weights


def nelder_mead(f: Any, start: tuple[float, ...], step: tuple[float, ...], iterations: int) -> tuple[np.ndarray, float]:
    """Plain Nelder-Mead (reflect, expand, contract, shrink) with a fixed number of iterations."""
    points = [np.array(start, dtype=float)] + [np.array(start, dtype=float) + np.eye(len(start))[i] * step[i] for i in range(len(start))]
    values = [f(p) for p in points]
    for _ in range(iterations):
        order = np.argsort(values)
        points, values = [points[i] for i in order], [values[i] for i in order]
        centre = np.mean(points[:-1], axis=0)
        reflected = centre + (centre - points[-1])
        fr = f(reflected)
        if fr < values[0]:
            expanded = centre + 2 * (centre - points[-1])
            fe = f(expanded)
            points[-1], values[-1] = (expanded, fe) if fe < fr else (reflected, fr)
        elif fr < values[-2]:
            points[-1], values[-1] = reflected, fr
        else:
            contracted = centre + 0.5 * (points[-1] - centre)
            fc = f(contracted)
            if fc < values[-1]:
                points[-1], values[-1] = contracted, fc
            else:
                points = [points[0] + 0.5 * (p - points[0]) for p in points]
                values = [f(p) for p in points]
    best = int(np.argmin(values))
    return points[best], values[best]


def rounded(params: np.ndarray) -> dict[str, float]:
    """Two significant figures: the data do not pin the factors any closer."""
    return {k: float(f"{v:.2g}") for k, v in zip(FITTED, params, strict=True)}


def current_defaults() -> dict[str, float]:
    eff = Efficiency()
    return {k: float(getattr(eff, k)) for k in FITTED}


def evaluate(rows: list[dict[str, str]]) -> list[dict[str, Any]]:
    """Every row simulated at the planner's current defaults."""
    table = []
    for row in rows:
        s = setup(row)
        predicted = metric_of(s, simulate(s.brief, s.settings))
        measured = s.measurement.value
        table.append(
            {
                "id": int(row["id"]),
                "setup": f"{row['model']} {row['weights_dtype']}/{row['kv_dtype'].split()[0]} on {row['num_gpus']} x {row['gpu']} TP{row['tp']}",
                "engine": row["engine"],
                "lengths": f"{row['input_len']}/{row['output_len']}",
                "load": row["concurrency_or_rate"],
                "metric": row["metric"],
                "unit": row["unit"],
                "measured": measured,
                "predicted": predicted,
                "error": predicted / measured - 1,
                "weight": s.weight,
            }
        )
    return table


def write_report(table: list[dict[str, Any]], fitted: dict[str, float], fit_loss: float | None) -> None:
    errors = [abs(r["error"]) for r in table]
    modern = [abs(r["error"]) for r in table if r["weight"] == 1.0]
    lines = [
        "# Calibration against published serving measurements",
        "",
        "Generated by `scripts/calibrate.py` from `calibration/benchmarks.csv` (published measurements); do not edit by hand.",
        "",
        "Each row's setup (model, GPU, TP, precisions, engine limits, load) is simulated by the planner's",
        "step-level simulator with the default efficiency factors below, the same for every model and GPU.",
        "",
        "## Fitted defaults (`planner.brief.Efficiency`)",
        "",
        "| parameter | value | meaning |",
        "|---|---|---|",
    ]
    for key, value in fitted.items():
        desc = Efficiency.model_fields[key].description or ""
        lines.append(f"| `{key}` | {value:g} | {desc} |")
    for key, value in FIXED.items():
        lines.append(f"| `{key}` | {value} | held fixed: {Efficiency.model_fields[key].description} |")
    lines += [
        "",
        f"Median absolute error: **{np.median(errors) * 100:.1f}%** over {len(table)} rows"
        f" ({np.median(modern) * 100:.1f}% over the {len(modern)} rows from 2024 engine releases);"
        f" mean {np.mean(errors) * 100:.1f}%."
        + (f" Fit objective (weighted mean |ln error|): {fit_loss:.4f}." if fit_loss is not None else ""),
        "",
        "## Method",
        "",
        "- Static-batch rows: every request at t = 0, max-num-seqs = the batch and a token budget that prefills",
        "  the whole batch in one step, so the run is one prefill and then lockstep decode, as the static engine runs it.",
        "- Max-load rows: every request at t = 0 with TensorRT-LLM's default limits (2,048 sequences, 8,192 tokens a step).",
        "- Online rows: Poisson arrivals at the stated rate, 500 requests; mean TTFT and mean ITL as the table reports them.",
        "- KV pool: the engine takes 90% (95% where the row says so) of the memory left after the weights and 1 GB of activations.",
        "- Per-GPU throughput rows divide the replica's output tokens/s by its GPUs; latencies are the engine's own.",
        "- Rows from releases before 2024 count half in the fit (weight 0.5): the file's notes say old engines are slower.",
        "",
        "## Rows",
        "",
        "| id | setup | engine | in/out | load | metric | measured | predicted | error |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for r in table:
        lines.append(
            f"| {r['id']} | {r['setup']} | {r['engine']} | {r['lengths']} | {r['load']} | {r['metric']} ({r['unit']})"
            f" | {r['measured']:,.1f} | {r['predicted']:,.1f} | {r['error'] * 100:+.1f}% |"
        )
    lines += [
        "",
        "## Where it misses, and why",
        "",
        "- Batch-1 first-token latencies of TensorRT-LLM v0.5 (rows 8-10) are under-predicted: that release's",
        "  context phase carried fixed costs well above a modern step's; the fit counts these rows half.",
        "- Max-load rows run TensorRT-LLM's guaranteed-no-evict scheduler, which reserves KV for a request's full",
        "  length at admission; the simulator admits on demand and preempts (vLLM's policy), so where KV binds",
        "  (FP16 KV, one H200) it runs a different batch than the engine did.",
        "- One efficiency per parameter for every GPU: A100 reaches a larger fraction of its (lower) tensor-core peak",
        "  than H100, so compute-bound A100 rows come out low and H100 rows high by a few percent.",
        "",
    ]
    REPORT_MD.parent.mkdir(exist_ok=True)
    REPORT_MD.write_text("\n".join(lines), encoding="utf-8")
    REPORT_JSON.write_text(json.dumps({"fitted": fitted, "fixed": FIXED, "rows": table}, indent=2) + "\n", encoding="utf-8")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--report", action="store_true", help="skip the fit: re-simulate every row at the current defaults")
    args = parser.parse_args()
    rows = read_rows()
    fit_loss = None
    if not args.report:
        params, fit_loss = nelder_mead(lambda p: loss(p, rows), START, STEP, ITERATIONS)
        fitted = rounded(params)
        print("fitted:", fitted, "objective", round(fit_loss, 4))
        if fitted != current_defaults():
            print("set these as the defaults of planner.brief.Efficiency, then run with --report")
            return
    fitted = current_defaults()
    table = evaluate(rows)
    write_report(table, fitted, fit_loss)
    print(f"wrote {REPORT_MD.relative_to(ROOT)}: median |error| {np.median([abs(r['error']) for r in table]) * 100:.1f}%")


if __name__ == "__main__":
    main()
