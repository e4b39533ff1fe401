"""Fit the step model's efficiency constants to measurements, and say honestly how well they predict unseen ones.

Few constants, each with a meaning and a physical range (PARAMETERS). The fit minimizes the weighted mean
|ln(predicted / measured)| (robust to a stray row) with scipy's bounded Nelder-Mead from a fixed start, so it is
reproducible. A constant that ends at its range's edge is reported: it means the model misses something.

Honest error: leave-one-source-out cross-validation. Each source (a vendor page, a release's table, a blog post)
is predicted with constants fitted without it, since rows of one source share their engine build, harness and
conventions, and a held-out row of a source the fit saw says little about a new setup. The residuals, per group
(engine family, GPU, metric kind, load type), give the error bands the plan shows (planner.uncertainty).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from typing import Any, Protocol

import numpy as np
from pydantic import BaseModel, ConfigDict
from scipy.optimize import minimize

__all__ = ["FAMILY_SPLIT", "PARAMETERS", "FitResult", "Parameter", "cross_validate", "family_constants", "fit", "group_errors"]


class Parameter(BaseModel):
    """One fitted constant: an Efficiency field, the range a real GPU and engine can have, and the fit's start. With a
    `family`, the constant applies only to that engine family's rows (the others keep the shared one)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str
    low: float
    high: float
    start: float
    why_range: str
    family: str | None = None

    @property
    def key(self) -> str:
        """The constant's name in a fit's result: the field, or 'field:family' for a family's own value."""
        return self.name if self.family is None else f"{self.name}:{self.family}"


PARAMETERS: tuple[Parameter, ...] = (
    Parameter(
        name="compute_fraction",
        low=0.30,
        high=0.85,
        start=0.6,
        why_range="large dense GEMMs reach 60-80% of the tensor-core peak; below 30% the kernels would be broken",
    ),
    Parameter(
        name="bandwidth_fraction",
        low=0.55,
        high=0.95,
        start=0.85,
        why_range="streaming weight reads reach 80-92% of HBM peak; no kernel exceeds ~95%",
    ),
    Parameter(
        name="attention_bandwidth_fraction",
        low=0.30,
        high=0.95,
        start=0.6,
        why_range="paged decode-attention kernels reach 50-85% of HBM bandwidth on long contexts, less on short",
    ),
    Parameter(
        name="step_overhead_ms",
        low=0.1,
        high=8.0,
        start=1.5,
        why_range="a step's scheduling, launch and sampling set-up: ~0.3 ms (C++ runtimes, CUDA graphs) to a few ms",
    ),
    Parameter(
        name="per_sequence_us",
        low=0.0,
        high=60.0,
        start=5.0,
        why_range="per sequence a step: sampling, detokenizing, bookkeeping; tens of microseconds at most",
    ),
    Parameter(
        name="allreduce_latency_us",
        low=2.0,
        high=40.0,
        start=10.0,
        why_range="one small all-reduce over NVLink: ~5-15 us (custom one-shot kernels) to ~30 us (NCCL)",
    ),
    Parameter(
        name="interconnect_fraction",
        low=0.4,
        high=0.95,
        start=0.7,
        why_range="all-reduce bus bandwidth reaches 60-85% of the NVLink figure for large messages",
    ),
)


def _family_copy(name: str, family: str) -> Parameter:
    shared = next(p for p in PARAMETERS if p.name == name)
    return shared.model_copy(update={"family": family})


# The engine-family split the calibration tries: TensorRT-LLM's C++ runtime gets its own step and per-sequence costs;
# vLLM (the planner's engine) and the families with one source or none (LMDeploy, SGLang) share the rest, since a
# family seen in one source only cannot be cross-validated (its held-out fold would have no rows to fit on).
FAMILY_SPLIT: tuple[Parameter, ...] = (
    *PARAMETERS,
    _family_copy("step_overhead_ms", "trtllm"),
    _family_copy("per_sequence_us", "trtllm"),
)


def family_constants(constants: dict[str, Any], family: str) -> dict[str, Any]:
    """The constants one engine family's rows run with: the shared ones, overridden by the family's own."""
    shared = {k: v for k, v in constants.items() if ":" not in k}
    own = {k.split(":")[0]: v for k, v in constants.items() if k.endswith(f":{family}")}
    return shared | own


class Observation(Protocol):
    """A measurement the fit can predict (planner.calibration.measurements.Measurement fits it)."""

    @property
    def id(self) -> str: ...
    @property
    def source(self) -> str: ...
    @property
    def value(self) -> float: ...
    @property
    def weight(self) -> float: ...
    @property
    def family(self) -> str: ...


Predict = Callable[[Any, dict[str, Any]], float]


class FitResult(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    constants: dict[str, float]
    objective: float  # weighted mean |ln(predicted / measured)|
    at_edge: tuple[str, ...]  # constants that ended at their range's edge: a model error to look at
    evaluations: int


def _rounded(values: Sequence[float], parameters: Sequence[Parameter]) -> dict[str, float]:
    """Two significant figures: the data do not pin the constants any closer."""
    return {p.key: float(f"{v:.2g}") for p, v in zip(parameters, values, strict=True)}


class _Evaluator:
    """Predicts every observation for one set of constants, over a process pool (numba runs outside the GIL too,
    but each process keeps its own compiled kernel and no state is shared)."""

    def __init__(self, observations: Sequence[Any], predict: Predict, fixed: dict[str, Any], pool: ProcessPoolExecutor | None) -> None:
        self.observations = list(observations)
        self.predict = predict
        self.fixed = fixed
        self.pool = pool
        self.calls = 0

    def predictions(self, constants: dict[str, Any]) -> np.ndarray:
        efficiency = self.fixed | constants
        self.calls += 1
        if self.pool is None:
            return np.array([self.predict(o, efficiency) for o in self.observations])
        return np.array(list(self.pool.map(self.predict, self.observations, [efficiency] * len(self.observations), chunksize=4)))

    def objective(self, constants: dict[str, Any]) -> float:
        predicted = self.predictions(constants)
        measured = np.array([o.value for o in self.observations])
        weights = np.array([o.weight for o in self.observations])
        errors = np.abs(np.log(np.maximum(predicted, 1e-12) / measured))
        return float((weights * errors).sum() / weights.sum())


def fit(
    observations: Sequence[Any],
    predict: Predict,
    *,
    parameters: Sequence[Parameter] = PARAMETERS,
    fixed: dict[str, Any] | None = None,
    start: dict[str, float] | None = None,
    max_evaluations: int = 300,
    pool: ProcessPoolExecutor | None = None,
) -> FitResult:
    """Constants minimizing the weighted mean |ln error| over the observations, within their ranges."""
    evaluator = _Evaluator(observations, predict, fixed or {}, pool)
    names = [p.key for p in parameters]
    x0 = [(start or {}).get(p.key, p.start) for p in parameters]
    bounds = [(p.low, p.high) for p in parameters]

    def objective(x: np.ndarray) -> float:
        return evaluator.objective(dict(zip(names, (float(v) for v in x), strict=True)))

    simplex_steps = [0.15 * (p.high - p.low) for p in parameters]
    initial = np.array([x0] + [np.add(x0, np.eye(len(x0))[i] * simplex_steps[i]) for i in range(len(x0))])
    initial = np.clip(initial, [b[0] for b in bounds], [b[1] for b in bounds])
    result = minimize(
        objective,
        np.array(x0),
        method="Nelder-Mead",
        bounds=bounds,
        options={"maxfev": max_evaluations, "initial_simplex": initial, "xatol": 1e-3, "fatol": 1e-4},
    )
    constants = _rounded(result.x, parameters)
    edge = tuple(p.key for p, v in zip(parameters, result.x, strict=True) if min(v - p.low, p.high - v) <= 0.01 * (p.high - p.low))
    return FitResult(constants=constants, objective=float(result.fun), at_edge=edge, evaluations=evaluator.calls)


def cross_validate(
    observations: Sequence[Any],
    predict: Predict,
    full: FitResult,
    *,
    parameters: Sequence[Parameter] = PARAMETERS,
    fixed: dict[str, Any] | None = None,
    max_evaluations: int = 80,
    pool: ProcessPoolExecutor | None = None,
) -> dict[str, float]:
    """Leave one source out: each observation's predicted / measured - 1 with constants fitted without its source
    (each fold starts from the full fit, so folds converge in few evaluations). A family's own constant is fitted in a
    fold only if rows of that family remain; otherwise the family's rows fall back to the shared constants."""
    sources = sorted({o.source for o in observations})
    errors: dict[str, float] = {}
    for source in sources:
        held = [o for o in observations if o.source == source]
        rest = [o for o in observations if o.source != source]
        if not rest:
            continue
        families = {o.family for o in rest}
        fold_parameters = [p for p in parameters if p.family is None or p.family in families]
        fold = fit(rest, predict, parameters=fold_parameters, fixed=fixed, start=full.constants, max_evaluations=max_evaluations, pool=pool)
        efficiency = (fixed or {}) | fold.constants
        for o in held:
            errors[o.id] = predict(o, efficiency) / o.value - 1
    return errors


def group_errors(errors: dict[str, float], groups: dict[str, dict[str, str]]) -> dict[str, dict[str, dict[str, float]]]:
    """Median and worst |error| per group value, for each grouping (engine, gpu, metric, load): {grouping: {value:
    {"rows", "median_abs_error", "worst_abs_error", "log_p10", "log_p90"}}}."""
    out: dict[str, dict[str, dict[str, float]]] = {}
    groupings = sorted({key for g in groups.values() for key in g})
    for grouping in groupings:
        by_value: dict[str, list[float]] = {}
        for obs_id, error in errors.items():
            by_value.setdefault(groups[obs_id][grouping], []).append(error)
        out[grouping] = {value: _summary(errs) for value, errs in sorted(by_value.items())}
    return out


def _summary(errors: list[float]) -> dict[str, float]:
    logs = np.log1p(np.array(errors))
    return {
        "rows": float(len(errors)),
        "median_abs_error": float(np.median(np.abs(errors))),
        "worst_abs_error": float(np.max(np.abs(errors))),
        "log_p10": float(np.quantile(logs, 0.10)) if len(errors) > 1 else -abs(float(logs[0])),
        "log_p90": float(np.quantile(logs, 0.90)) if len(errors) > 1 else abs(float(logs[0])),
    }


def median_abs(errors: dict[str, float]) -> float:
    return float(np.median(np.abs(list(errors.values())))) if errors else math.nan
