"""Fit the step model's efficiency constants to published serving measurements, cross-validate, write the report.

    .venv/bin/python scripts/calibrate.py [--workers N]   # fit, cross-validate, write docs/calibration.md and .json
                                                          # and planner/calibration/bands.json (the plan's error bands)

Each row of calibration/benchmarks*.csv (copies of ../shared/calibration/) becomes a brief (model, GPU,
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
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from planner.brief import Efficiency  # noqa: E402
from planner.calibration import BUNDLED_CSVS, Measurement, measurement_from_row, read_csv, source_group  # noqa: E402
from planner.calibration import predict as predict_setup  # noqa: E402
from planner.calibration import setup as setup_of  # noqa: E402
from planner.calibration.fit import (  # noqa: E402
    FAMILY_SPLIT,
    PARAMETERS,
    FitResult,
    Parameter,
    cross_validate,
    family_constants,
    fit,
    group_errors,
    median_abs,
)

REPORT_MD = ROOT / "docs" / "calibration.md"
REPORT_JSON = ROOT / "docs" / "calibration.json"

FITTED = tuple(p.name for p in PARAMETERS)
# held fixed: the all-reduce moves its bytes instead of the seeds' flat TP factor; kernels are what they are
FIXED = {"tp_comm_overhead": 0.0, "real_kernel_factor": 1.0, "compute_peak": "auto", "allreduce_bytes_moved": True, "step_roofline": False}
MAX_EVALUATIONS = 600  # the full fit
FOLD_EVALUATIONS = 200  # each cross-validation fold, from the full fit
MAX_REQUESTS = 3000  # a run's throughput and latency percentiles settle well within this many requests
COVERAGE = 0.8  # the error bands span the 10th to the 90th percentile of the held-out residuals
BANDS_JSON = ROOT / "planner" / "calibration" / "bands.json"


def read_rows() -> list[dict[str, str]]:
    """Every row of the bundled CSVs (calibration/benchmarks*.csv, copies of ../shared/calibration/)."""
    rows: list[dict[str, str]] = []
    for path in BUNDLED_CSVS:
        with path.open(newline="", encoding="utf-8") as f:
            rows += [row | {"_file": path.name} for row in csv.DictReader(f)]
    return rows


def measurement(row: dict[str, str]) -> Measurement:
    return measurement_from_row({k: v for k, v in row.items() if k != "_file"}, row.get("_file", "calibration CSV"))


def predict_measurement(m: Measurement, efficiency: dict[str, Any] | None = None) -> float:
    """The simulated figure for one measurement, at most MAX_REQUESTS requests."""
    s = setup_of(m, efficiency)
    settings = s.settings.model_copy(update={"requests": min(s.settings.requests, MAX_REQUESTS)})
    return predict_setup(s.model_copy(update={"settings": settings}))


def predict(row: dict[str, str], efficiency: dict[str, Any] | None = None) -> float:
    return predict_measurement(measurement(row), efficiency)


@dataclass(frozen=True)
class Observation:
    """One row as the fit sees it: what was measured, how much it counts, its source (the unit cross-validation
    leaves out) and the groups its error is reported in."""

    id: str
    source: str
    value: float
    weight: float
    groups: dict[str, str]
    measurement: Measurement

    @property
    def family(self) -> str:
        return self.groups["engine"]


def _metric_kind(m: Measurement) -> str:
    kind = m.metric.value
    if kind.startswith("ttft"):
        return "ttft"
    if kind.startswith(("tpot", "itl", "e2e")):
        return "itl"
    return "throughput"


def observation(m: Measurement) -> Observation:
    groups = {"engine": m.engine.value, "gpu": m.gpu, "metric": _metric_kind(m), "load": m.load.kind.value}
    return Observation(id=m.id, source=source_group(m), value=m.value, weight=m.weight, groups=groups, measurement=m)


def predict_observation(obs: Observation, efficiency: dict[str, Any]) -> float:
    """The fit's prediction function (top level, so a process pool can run it); a family's own constants
    ('step_overhead_ms:trtllm') replace the shared ones for that family's rows."""
    return predict_measurement(obs.measurement, family_constants(efficiency, obs.family))


def current_defaults() -> dict[str, float]:
    eff = Efficiency()
    return {k: float(getattr(eff, k)) for k in FITTED}


def evaluate(observations: list[Observation], cv_errors: dict[str, float], constants: dict[str, float]) -> list[dict[str, Any]]:
    """Every row at the kept fit's constants (its family's own where the split is kept), beside its held-out
    (cross-validated) error."""
    table = []
    for obs in observations:
        m = obs.measurement
        predicted = predict_observation(obs, constants | FIXED)
        lengths = m.lengths
        table.append(
            {
                "id": int(m.id),
                "setup": f"{m.model} {m.weights.value}/{m.kv_cache.value} on {m.num_gpus} x {m.gpu} TP{m.tp}",
                "engine": f"{m.engine.value} {m.engine_release}",
                "source": obs.source,
                "lengths": f"{lengths.input_mean_tokens:.0f}/{lengths.output_mean_tokens:.0f}",
                "load": m.load.kind.value,
                "metric": m.metric.value,
                "unit": m.basis.value,
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


@dataclass(frozen=True)
class Variant:
    """One way of fitting: the constants (shared, or with an engine family's own), its fit and its held-out errors."""

    name: str
    parameters: tuple[Parameter, ...]
    result: FitResult
    cv_errors: dict[str, float]

    @property
    def held_out(self) -> float:
        return median_abs(self.cv_errors)


def fit_variant(name: str, parameters: tuple[Parameter, ...], observations: list[Observation], pool: ProcessPoolExecutor) -> Variant:
    result = fit(observations, predict_observation, parameters=parameters, fixed=FIXED, max_evaluations=MAX_EVALUATIONS, pool=pool)
    print(f"{name}:", result.constants, "objective", round(result.objective, 4), "at edge:", result.at_edge, flush=True)
    cv_errors = cross_validate(
        observations, predict_observation, result, parameters=parameters, fixed=FIXED, max_evaluations=FOLD_EVALUATIONS, pool=pool
    )
    print(f"{name}: held-out median |error| {median_abs(cv_errors) * 100:.1f}%", flush=True)
    return Variant(name=name, parameters=parameters, result=result, cv_errors=cv_errors)


def kept_variant(shared: Variant, split: Variant) -> Variant:
    """The engine-family split is kept only if it predicts held-out sources better."""
    return split if split.held_out < shared.held_out else shared


def _family_lines(shared: Variant, split: Variant, kept: Variant, observations: list[Observation]) -> list[str]:
    engines = {o.id: {"engine": o.groups["engine"]} for o in observations}
    per_engine = {v.name: group_errors(v.cv_errors, engines)["engine"] for v in (shared, split)}
    own = ", ".join(f"`{p.key}`" for p in split.parameters if p.family)
    lines = [
        "## One set of constants, or one per engine family",
        "",
        f"The fit was run twice: every constant shared by all engine families, and with TensorRT-LLM's own {own}",
        "(vLLM, the engine the planner writes commands for, and LMDeploy, seen in one source only, share the rest; a family",
        "from one source cannot be cross-validated). The split is kept only if the held-out median |error| improves.",
        "",
        "| fit | constants | held-out median | " + " | ".join(f"{e} median / worst" for e in sorted(per_engine[shared.name])) + " |",
        "|---|---|---|" + "---|" * len(per_engine[shared.name]),
    ]
    for v in (shared, split):
        cells = " | ".join(f"{_pct(g['median_abs_error'])} / {_pct(g['worst_abs_error'])}" for _, g in sorted(per_engine[v.name].items()))
        constants = ", ".join(
            f"{k} {v.result.constants[k]:g}" for k in v.result.constants if k.split(":")[0] in ("step_overhead_ms", "per_sequence_us")
        )
        lines.append(f"| {v.name} | {constants} | **{_pct(v.held_out)}** | {cells} |")
    verdict = "kept: it predicts held-out sources better" if kept is split else "not kept: it does not predict held-out sources better"
    lines += ["", f"The split is {verdict} ({_pct(split.held_out)} against {_pct(shared.held_out)}).", ""]
    return lines


def write_report(
    table: list[dict[str, Any]],
    kept: Variant,
    family_lines: list[str],
    family_json: dict[str, Any],
    groups: dict[str, Any],
    wall_s: float,
) -> None:
    result, cv_errors = kept.result, kept.cv_errors
    in_sample = float(np.median([abs(r["error"]) for r in table]))
    held_out = median_abs(cv_errors)
    sources = sorted({r["source"] for r in table})
    lines = [
        "# Calibration against published serving measurements",
        "",
        "Generated by `scripts/calibrate.py` from `calibration/benchmarks*.csv` (published measurements); do not edit by hand.",
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
    for param in kept.parameters:
        edge = " (at its range's edge)" if param.key in result.at_edge else ""
        lines.append(f"| `{param.key}` | {result.constants[param.key]:g}{edge} | {param.low:g}-{param.high:g} | {param.why_range} |")
    for key, value in FIXED.items():
        lines.append(f"| `{key}` | {value} | held fixed | {Efficiency.model_fields[key].description} |")
    lines += [
        "",
        f"Fit: weighted mean |ln error| {result.objective:.4f} after {result.evaluations} evaluations of every row;"
        f" the whole run (both fits of the engine-family comparison below, each cross-validated) took {wall_s:.0f} s.",
        "",
        "## How well it predicts",
        "",
        f"- In sample (fitted on every row): median |error| **{_pct(in_sample)}** over {len(table)} rows.",
        f"- Held out (leave one source out: each source predicted with constants fitted without it): median |error|"
        f" **{_pct(held_out)}** over {len(cv_errors)} rows from {len(sources)} sources.",
        "",
        *family_lines,
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
        "- Each row becomes a setup (planner.calibration): its engine family's own defaults for max-num-seqs, the",
        "  token budget and the KV pool, the lengths it states (an MLPerf dataset's distribution where it runs one), and",
        "  its load: a static batch (one prefill, lockstep decode), every request at once, Poisson arrivals or closed-loop",
        f"  clients, at most {MAX_REQUESTS:,} requests a run. Each row's note says what was assumed (docs/calibration.json).",
        "- Throughputs are read in the row's basis (per GPU, per TP group, or the whole system of replicas).",
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
        "ranges": {p.key: [p.low, p.high] for p in kept.parameters},
        "engine_family_split": family_json,
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
    observations = [observation(m) for path in BUNDLED_CSVS for m in read_csv(path) if m.excluded_reason is None]
    with ProcessPoolExecutor(max_workers=args.workers) as pool:
        shared = fit_variant("shared", PARAMETERS, observations, pool)
        split = fit_variant("per engine family", FAMILY_SPLIT, observations, pool)
    write_all(observations, shared, split, time.perf_counter() - started)


def write_all(observations: list[Observation], shared: Variant, split: Variant, wall_s: float) -> None:
    kept = kept_variant(shared, split)
    family_json = {
        "kept": kept.name,
        "variants": {
            v.name: {"constants": v.result.constants, "objective": v.result.objective, "held_out_median_abs_error": v.held_out}
            for v in (shared, split)
        },
    }
    groups = group_errors(kept.cv_errors, {o.id: o.groups for o in observations})
    shared_constants = {k: v for k, v in kept.result.constants.items() if ":" not in k}
    if shared_constants != current_defaults():
        print("set these as the defaults of planner.brief.Efficiency:", shared_constants)
    table = evaluate(observations, kept.cv_errors, kept.result.constants)
    write_report(table, kept, _family_lines(shared, split, kept, observations), family_json, groups, wall_s)
    write_bands(observations, kept.cv_errors)
    print(f"wrote {REPORT_MD.relative_to(ROOT)}: held-out median |error| {kept.held_out * 100:.1f}% ({kept.name})")


if __name__ == "__main__":
    main()
