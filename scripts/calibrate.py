"""Fit the step model's efficiency constants to published serving measurements, cross-validate, write the report.

    .venv/bin/python scripts/calibrate.py [--workers N]   # fit, cross-validate, write docs/calibration.md and .json
                                                          # and planner/calibration/bands.json (the plan's error bands)

Each row of calibration/benchmarks.csv (a copy of ../shared/calibration/benchmarks.csv) becomes a brief (model, GPU,
TP, precisions, engine limits) and a load (a static batch, every request at once, or Poisson arrivals), which the
simulator runs; the metric it reports is compared with the measured one. The constants of planner.calibration.fit
(each with a physical range) are fitted by minimizing the weighted mean |ln(predicted / measured)|; rows from
engine releases before 2024 count half (the file's notes say old releases are slower). Then every source is
predicted with constants fitted without it (leave one source out): that error is the one the report leads with.
"""

from __future__ import annotations

import argparse
import csv
import json
import math
import os
import re
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from planner.brief import Brief, Efficiency  # noqa: E402
from planner.calibration.fit import PARAMETERS, FitResult, cross_validate, fit, group_errors, median_abs  # noqa: E402
from planner.simulator import SimResult, SimSettings, simulate  # noqa: E402

CSV = ROOT / "calibration" / "benchmarks.csv"  # a copy of ../shared/calibration/benchmarks.csv, kept in the repo
REPORT_MD = ROOT / "docs" / "calibration.md"
REPORT_JSON = ROOT / "docs" / "calibration.json"

FITTED = tuple(p.name for p in PARAMETERS)
# held fixed: the all-reduce moves its bytes instead of the seeds' flat TP factor; kernels are what they are
FIXED = {"tp_comm_overhead": 0.0, "real_kernel_factor": 1.0, "compute_peak": "auto", "allreduce_bytes_moved": True, "step_roofline": False}
MAX_EVALUATIONS = 300  # the full fit
FOLD_EVALUATIONS = 60  # each cross-validation fold, from the full fit
MAX_REQUESTS = 3000  # a max-load row's throughput settles well within this many requests
COVERAGE = 0.8  # the error bands span the 10th to the 90th percentile of the held-out residuals
BANDS_JSON = ROOT / "planner" / "calibration" / "bands.json"

MODELS = {"Llama-2-70B": "llama-2-70b", "Llama-3.1-70B": "llama-3.1-70b", "Llama-3.1-8B": "llama-3.1-8b"}
GPUS = {"H100": "h100-sxm", "H200": "h200", "A100": "a100-80gb"}
TRT_MAX_BATCH, TRT_MAX_TOKENS = 2048, 8192  # TensorRT-LLM's default max_batch_size and max_num_tokens
ENGINE_FAMILIES = {"tensorrt-llm": "trtllm", "vllm": "vllm", "sglang": "sglang", "lmdeploy": "lmdeploy"}
ACTIVATIONS_GB = 1.0  # per GPU, kept out of the KV pool before the engine takes its fraction of what is free


@dataclass(frozen=True)
class Setup:
    row: dict[str, str]
    brief: Brief
    settings: SimSettings
    weight: float


def read_rows(path: Path = CSV) -> list[dict[str, str]]:
    with path.open(newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


def _gpu_key(name: str) -> str:
    return next(key for prefix, key in GPUS.items() if name.startswith(prefix))


def _load(row: dict[str, str], prompt: int) -> tuple[int, float, int, int]:
    """(requests, rate, max_num_seqs, max_num_batched_tokens) for the row's load column."""
    load = row["concurrency_or_rate"]
    static = re.match(r"batch=(\d+)", load)
    if static:  # a static batch: every request at once, the whole batch prefilled in one step
        batch = int(static.group(1))
        return batch, math.inf, batch, min(max(batch * prompt, 16), 1_048_576)
    if load.startswith("max load"):
        count = int(re.search(r"\((\d+) req", load).group(1))  # type: ignore[union-attr]
        return count, math.inf, TRT_MAX_BATCH, TRT_MAX_TOKENS
    if "QPS=INF" in load:
        return 500, math.inf, TRT_MAX_BATCH, TRT_MAX_TOKENS  # the online table runs 500 requests
    rate = float(re.search(r"QPS=([\d.]+)", load).group(1))  # type: ignore[union-attr]
    return 500, rate, TRT_MAX_BATCH, TRT_MAX_TOKENS


def setup(row: dict[str, str], efficiency: dict[str, Any] | None = None) -> Setup:
    """The brief and load that describe one row; efficiency fields default to the planner's defaults."""
    prompt, output = int(row["input_len"]), int(row["output_len"])
    count, rate, seqs, tokens = _load(row, prompt)
    weights = "fp8" if row["weights_dtype"] == "fp8" else "bf16"
    kv = "bf16" if row["kv_dtype"].startswith(("fp16", "bf16")) else "fp8"  # 'unstated' with FP8 weights: FP8
    changes: dict[str, Any] = {
        "model.name": MODELS[row["model"]],
        "hardware.gpu": _gpu_key(row["gpu"]),
        "deployment.tp": int(row["tp"]),
        "deployment.weights": weights,
        "deployment.kv_cache": kv,
        "deployment.max_num_seqs": seqs,
        "deployment.max_num_batched_tokens": tokens,
        "deployment.max_model_len": max(256, prompt + output),
        "deployment.prefix_caching": False,
        "workload.users": None,
        "workload.request_rate": rate if math.isfinite(rate) else 1.0,
        "workload.prefix_hit_rate": 0.0,
        "latency.scheduler_ms": 0.0,  # the calibrated step overhead holds the engine's scheduling (simulator.BENCHMARK_ENGINE)
    }
    changes |= {f"efficiency.{k}": v for k, v in (efficiency or {}).items()}
    brief = Brief().with_changes(changes)
    # The engine takes a fraction of the memory left after weights and activations (TensorRT-LLM's
    # kv_cache_free_gpu_mem_fraction: 0.9, or 0.95 where the row says so).
    fraction = 0.95 if "0.95" in row["notes"] else 0.9
    from planner.replica import shape_of

    shape = shape_of(brief)
    free = shape.gpu.memory_gb - shape.weights_gb_per_gpu - ACTIVATIONS_GB
    reserve = ACTIVATIONS_GB + (1 - fraction) * free
    brief = brief.with_changes({"deployment.gpu_memory_utilization": 1.0, "deployment.reserve_gb_per_gpu": round(reserve, 3)})
    settings = SimSettings(requests=count, rate_per_s=rate, input_tokens=prompt, output_tokens=output, seed=0)
    old = any(tag in row["engine"] for tag in ("v0.5", "v0.6", "v0.7", "LMDeploy v0.1"))
    return Setup(row=row, brief=brief, settings=settings, weight=0.5 if old else 1.0)


def metric_of(row: dict[str, str], result: SimResult) -> float:
    """The simulated figure the row measured, in the row's unit."""
    metric = row["metric"]
    if metric.startswith("output throughput per GPU"):
        return result.output_tokens_per_s / int(row["num_gpus"])
    if metric.startswith("output throughput"):
        return result.output_tokens_per_s
    if "first-token latency" in metric or metric == "mean TTFT":
        return result.ttft_ms.mean
    if "decode latency p50" in metric:
        return result.tpot_ms.p50
    if metric == "mean ITL":
        return result.itl_ms.mean
    raise ValueError(f"row {row['id']}: unknown metric {metric!r}")


def predict(row: dict[str, str], efficiency: dict[str, Any] | None = None) -> float:
    s = setup(row, efficiency)
    settings = s.settings.model_copy(update={"requests": min(s.settings.requests, MAX_REQUESTS)})
    return metric_of(row, simulate(s.brief, settings))


@dataclass(frozen=True)
class Observation:
    """One row as the fit sees it: what was measured, how much it counts, and the groups its error is reported in."""

    id: str
    source: str
    value: float
    weight: float
    groups: dict[str, str]
    row: dict[str, str]


def _engine_family(engine: str) -> str:
    lowered = engine.lower()
    return next((family for key, family in ENGINE_FAMILIES.items() if key in lowered), "other")


def _metric_kind(metric: str) -> str:
    lowered = metric.lower()
    if "first-token" in lowered or "ttft" in lowered:
        return "ttft"
    if "itl" in lowered or "decode latency" in lowered or "tpot" in lowered:
        return "itl"
    return "throughput"


def _load_kind(load: str) -> str:
    if load.startswith("batch="):
        return "static batch"
    if load.startswith("max load") or "QPS=INF" in load:
        return "max load"
    return "online"


def observation(row: dict[str, str]) -> Observation:
    s = setup(row)
    groups = {
        "engine": _engine_family(row["engine"]),
        "gpu": _gpu_key(row["gpu"]),
        "metric": _metric_kind(row["metric"]),
        "load": _load_kind(row["concurrency_or_rate"]),
    }
    return Observation(id=row["id"], source=row["source"], value=float(row["value"]), weight=s.weight, groups=groups, row=row)


def predict_observation(obs: Observation, efficiency: dict[str, Any]) -> float:
    """The fit's prediction function (top level, so a process pool can run it)."""
    return predict(obs.row, efficiency)


def current_defaults() -> dict[str, float]:
    eff = Efficiency()
    return {k: float(getattr(eff, k)) for k in FITTED}


def evaluate(observations: list[Observation], cv_errors: dict[str, float]) -> list[dict[str, Any]]:
    """Every row at the planner's current defaults, beside its held-out (cross-validated) error."""
    table = []
    defaults = current_defaults() | FIXED
    for obs in observations:
        row = obs.row
        predicted = predict(row, defaults)
        table.append(
            {
                "id": int(row["id"]),
                "setup": f"{row['model']} {row['weights_dtype']}/{row['kv_dtype'].split()[0]} on {row['num_gpus']} x {row['gpu']} TP{row['tp']}",
                "engine": row["engine"],
                "lengths": f"{row['input_len']}/{row['output_len']}",
                "load": row["concurrency_or_rate"],
                "metric": row["metric"],
                "unit": row["unit"],
                "measured": obs.value,
                "predicted": predicted,
                "error": predicted / obs.value - 1,
                "held_out_error": cv_errors.get(obs.id),
                "weight": obs.weight,
                "groups": obs.groups,
            }
        )
    return table


def _pct(x: float) -> str:
    return f"{x * 100:.1f}%"


def write_report(
    table: list[dict[str, Any]], result: FitResult, cv_errors: dict[str, float], groups: dict[str, Any], wall_s: float
) -> None:
    in_sample = float(np.median([abs(r["error"]) for r in table]))
    held_out = median_abs(cv_errors)
    sources = sorted({r["engine"] for r in table})
    lines = [
        "# Calibration against published serving measurements",
        "",
        "Generated by `scripts/calibrate.py` from `calibration/benchmarks.csv` (published measurements); do not edit by hand.",
        "",
        "Each row's setup (model, GPU, TP, precisions, engine limits, load) is simulated by the planner's step-level",
        "simulator (planner/step_model.py: GEMMs, attention, all-reduce, fixed and per-sequence costs) with the",
        "constants below, the same for every model and GPU.",
        "",
        "## Fitted constants (`planner.brief.Efficiency` defaults)",
        "",
        "| constant | value | physical range | why that range |",
        "|---|---|---|---|",
    ]
    for param in PARAMETERS:
        edge = " (at its range's edge)" if param.name in result.at_edge else ""
        lines.append(f"| `{param.name}` | {result.constants[param.name]:g}{edge} | {param.low:g}-{param.high:g} | {param.why_range} |")
    for key, value in FIXED.items():
        lines.append(f"| `{key}` | {value} | held fixed | {Efficiency.model_fields[key].description} |")
    lines += [
        "",
        f"Fit: weighted mean |ln error| {result.objective:.4f} after {result.evaluations} evaluations of every row;"
        f" the whole run (fit and cross-validation) took {wall_s:.0f} s.",
        "",
        "## How well it predicts",
        "",
        f"- In sample (fitted on every row): median |error| **{_pct(in_sample)}** over {len(table)} rows.",
        f"- Held out (leave one source out: each source predicted with constants fitted without it): median |error|"
        f" **{_pct(held_out)}** over {len(cv_errors)} rows from {len({r['engine'] for r in table})} engine releases.",
        "",
        "Held-out error per group (median and worst |error|, rows):",
        "",
        "| group | value | rows | median | worst |",
        "|---|---|---|---|---|",
    ]
    for grouping, values in groups.items():
        for value, summary in values.items():
            lines.append(
                f"| {grouping} | {value} | {int(summary['rows'])} | {_pct(summary['median_abs_error'])} | {_pct(summary['worst_abs_error'])} |"
            )
    lines += [
        "",
        "## Method",
        "",
        "- Static-batch rows: every request at t = 0, max-num-seqs = the batch and a token budget that prefills",
        "  the whole batch in one step, so the run is one prefill and then lockstep decode, as the static engine runs it.",
        f"- Max-load rows: every request at t = 0 (at most {MAX_REQUESTS:,} of them: throughput has settled by then) with",
        "  TensorRT-LLM's default limits (2,048 sequences, 8,192 tokens a step).",
        "- Online rows: Poisson arrivals at the stated rate, 500 requests; mean TTFT and mean ITL as the table reports them.",
        "- KV pool: the engine takes 90% (95% where the row says so) of the memory left after the weights and 1 GB of activations.",
        "- Per-GPU throughput rows divide the replica's output tokens/s by its GPUs; latencies are the engine's own.",
        "- Rows from releases before 2024 count half in the fit (weight 0.5): the file's notes say old engines are slower.",
        "- The fit minimizes the weighted mean |ln(predicted / measured)| with scipy's bounded Nelder-Mead from fixed",
        "  starts, each constant held inside its physical range; a constant at its range's edge is flagged above.",
        f"- Error bands: the 10th-90th percentile of the held-out ln errors per metric kind ({int(COVERAGE * 100)}% coverage),",
        "  stored in planner/calibration/bands.json and shown beside the plan's figures (`uncertainty` in the JSON).",
        "",
        "## Rows",
        "",
        "| id | setup | engine | in/out | load | metric | measured | predicted | error | held out |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in table:
        held = "" if r["held_out_error"] is None else f"{r['held_out_error'] * 100:+.1f}%"
        lines.append(
            f"| {r['id']} | {r['setup']} | {r['engine']} | {r['lengths']} | {r['load']} | {r['metric']} ({r['unit']})"
            f" | {r['measured']:,.1f} | {r['predicted']:,.1f} | {r['error'] * 100:+.1f}% | {held} |"
        )
    lines.append("")
    REPORT_MD.parent.mkdir(exist_ok=True)
    REPORT_MD.write_text("\n".join(lines), encoding="utf-8")
    report = {
        "fitted": result.constants,
        "fixed": FIXED,
        "ranges": {p.name: [p.low, p.high] for p in PARAMETERS},
        "at_edge": list(result.at_edge),
        "objective": result.objective,
        "in_sample": {"median_abs_error": in_sample},
        "cross_validation": {"method": "leave one source out", "median_abs_error": held_out, "groups": groups, "rows": cv_errors},
        "sources": sources,
        "rows": table,
    }
    REPORT_JSON.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")


def write_bands(observations: list[Observation], cv_errors: dict[str, float]) -> None:
    """The held-out spread per metric kind, for planner.uncertainty."""
    by_kind: dict[str, list[float]] = {}
    for obs in observations:
        if obs.id in cv_errors:
            by_kind.setdefault(obs.groups["metric"], []).append(math.log1p(cv_errors[obs.id]))
    low_q, high_q = (1 - COVERAGE) / 2, 1 - (1 - COVERAGE) / 2
    bands = {
        "coverage": COVERAGE,
        "rows": len(cv_errors),
        "sources": len({o.source for o in observations}),
        "gpus": sorted({o.groups["gpu"] for o in observations}),
        "engines": {
            family: sum(o.groups["engine"] == family for o in observations) for family in sorted({o.groups["engine"] for o in observations})
        },
        "by_kind": {
            kind: {"rows": len(logs), "log_p10": float(np.quantile(logs, low_q)), "log_p90": float(np.quantile(logs, high_q))}
            for kind, logs in sorted(by_kind.items())
        },
    }
    BANDS_JSON.write_text(json.dumps(bands, indent=2) + "\n", encoding="utf-8")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 1, help="processes that simulate rows in parallel")
    args = parser.parse_args()
    started = time.perf_counter()
    observations = [observation(row) for row in read_rows()]
    with ProcessPoolExecutor(max_workers=args.workers) as pool:
        result = fit(observations, predict_observation, fixed=FIXED, max_evaluations=MAX_EVALUATIONS, pool=pool)
        print("fitted:", result.constants, "objective", round(result.objective, 4), "at edge:", result.at_edge, flush=True)
        cv_errors = cross_validate(observations, predict_observation, result, fixed=FIXED, max_evaluations=FOLD_EVALUATIONS, pool=pool)
    groups = group_errors(cv_errors, {o.id: o.groups for o in observations})
    if result.constants != current_defaults():
        print("set these as the defaults of planner.brief.Efficiency (the report below uses the current defaults):", result.constants)
    table = evaluate(observations, cv_errors)
    write_report(table, result, cv_errors, groups, time.perf_counter() - started)
    write_bands(observations, cv_errors)
    print(f"wrote {REPORT_MD.relative_to(ROOT)}: held-out median |error| {median_abs(cv_errors) * 100:.1f}%")


if __name__ == "__main__":
    main()
