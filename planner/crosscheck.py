"""The plan against the step-level simulator on the same basis: one general-pool replica at the plan's rate per
replica, the engine configuration the plan analyses, the brief's lengths and prefix hits (`simulate BRIEF`).

`generated_briefs` draws varied briefs (models, GPUs, TP, lengths, hit rates, loads up to 90% of a replica's
SLO capacity) so the agreement is checked away from the presets too (tests/test_crosscheck.py, docs/crosscheck.md).
"""

from __future__ import annotations

import math
import random

from pydantic import BaseModel, ConfigDict

from planner.brief import Brief
from planner.design import plan
from planner.errors import BriefError

__all__ = ["GENERATED", "OUTLIERS_ALLOWED", "TOLERANCE", "VERDICT_MARGIN", "Comparison", "compare", "generated_briefs"]

# plan vs simulator, relative: TTFT p95 and ITL p95 within 20%, TPOT p50 within 15%; the verdicts agree whenever
# the simulator's margin to a target exceeds 15%
TOLERANCE = {"ttft_p95_ms": 0.20, "itl_p95_ms": 0.20, "tpot_p50_ms": 0.15}
VERDICT_MARGIN = 0.15
GENERATED = 40  # generated briefs in the gate (tests/test_crosscheck.py) and the report (docs/crosscheck.md)
OUTLIERS_ALLOWED = 2  # of GENERATED: above ~80% of capacity the queue model's limits show (docs/crosscheck.md)


class Comparison(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    label: str
    rate_per_replica_per_s: float
    load_vs_capacity: float
    plan: dict[str, float]
    simulated: dict[str, float]
    plan_meets_slo: bool
    simulated_meets_slo: bool
    clear_margin: bool  # the simulator's figures are more than VERDICT_MARGIN from both targets
    overloaded: bool  # the plan finds no steady state: its latencies are unbounded, the simulator's queue grows

    def error(self, key: str) -> float:
        plan, simulated = self.plan[key], self.simulated[key]
        if not (math.isfinite(plan) and math.isfinite(simulated)) or simulated <= 0:
            return math.inf
        return plan / simulated - 1

    @property
    def within_tolerance(self) -> bool:
        return all(abs(self.error(k)) <= tol for k, tol in TOLERANCE.items())

    @property
    def agrees(self) -> bool:
        """Within the tolerances, and the same verdict where the margin is clear; an overloaded plan agrees when the
        simulator misses the SLO too (its figures are then the length of the run, not a steady state)."""
        if self.overloaded:
            return not self.simulated_meets_slo
        return self.within_tolerance and (not self.clear_margin or self.plan_meets_slo == self.simulated_meets_slo)


_KEYS = ("ttft_p50_ms", "ttft_p95_ms", "itl_p50_ms", "itl_p95_ms", "tpot_p50_ms", "tpot_p95_ms")


def compare(brief: Brief, label: str, requests: int | None = None) -> Comparison:
    """The plan's SLO figures beside the simulator's on one general-pool replica at the plan's load (by default the
    plan check's own run, as `simulate BRIEF` and the app make it: planner.simulator.PLAN_CHECK_REQUESTS)."""
    from planner.simulator import SimSettings, simulate  # numba only where a simulation runs

    design = plan(brief)
    settings = SimSettings(seed=0) if requests is None else SimSettings(requests=requests, seed=0)
    sim = simulate(design.brief, settings).slo  # the brief the plan analyses (planner.mechanisms.resolve)
    assert sim is not None
    slo = design.slo
    judged = slo.judged_itl_p95_ms
    sim_judged = slo.itl_metric.judged(sim.itl_p95_ms, sim.tpot_p95_ms)
    margins = (abs(sim.ttft_p95_ms / slo.ttft_target_ms - 1), abs(sim_judged / slo.itl_target_ms - 1))
    return Comparison(
        label=label,
        rate_per_replica_per_s=design.operating_point.rate_per_replica_per_s,
        load_vs_capacity=design.operating_point.load_vs_capacity,
        plan={k: getattr(slo, k) for k in _KEYS},
        simulated={k: getattr(sim, k) for k in _KEYS},
        plan_meets_slo=bool(slo.ttft_ok and judged <= slo.itl_target_ms and design.operating_point.stable),
        simulated_meets_slo=sim.meets_slo,
        clear_margin=min(margins) > VERDICT_MARGIN,
        overloaded=not design.operating_point.stable,
    )


_SETUPS = (  # (model, gpu, tp choices, weights, kv)
    ("llama-3.1-8b", "h100-sxm", (1, 2), "fp8", "fp8"),
    ("llama-3.1-8b", "a100-80gb", (1, 2), "bf16", "bf16"),
    ("llama-3.1-70b", "h100-sxm", (4, 8), "fp8", "fp8"),
    ("llama-3-70b", "h200", (4, 8), "fp8", "bf16"),
    ("llama-3.1-70b", "a100-80gb", (4, 8), "int8", "bf16"),
    ("llama-3.3-70b", "h100-sxm", (8,), "bf16", "fp8"),
)


def generated_briefs(count: int, seed: int = 7) -> list[tuple[str, Brief]]:
    """`count` varied single-replica briefs, each loaded at 20-90% of its replica's SLO capacity."""
    rng = random.Random(seed)
    briefs: list[tuple[str, Brief]] = []
    while len(briefs) < count:
        model, gpu, tps, weights, kv = rng.choice(_SETUPS)
        tp = rng.choice(tps)
        prompt = rng.choice((200, 500, 1000, 1500, 3000))
        output = rng.choice((100, 300, 500, 800))
        hit = rng.choice((0.0, 0.0, 0.5, 0.8))
        spread = rng.choice((1.0, 2.0, 4.0))  # p95 / mean of the prompts
        base = Brief().with_changes(
            {
                "model.name": model,
                "hardware.gpu": gpu,
                "hardware.gpus_per_node": tp,
                "hardware.nodes": 1,
                "deployment.tp": tp,
                "deployment.weights": weights,
                "deployment.kv_cache": kv,
                "deployment.reserve_gb_per_gpu": 0.0,
                "deployment.gpu_memory_utilization": 0.9,
                "deployment.max_model_len": 16_384,
                "deployment.max_num_seqs": rng.choice((64, 128, 256)),
                "deployment.max_num_batched_tokens": rng.choice((1024, 2048, 4096, 8192)),
                "deployment.prefix_caching": hit > 0,
                "deployment.spare_nodes": 0,
                "deployment.long_context_nodes": 0,
                "workload.users": None,
                "workload.request_rate": 1.0,
                "workload.input_tokens_mean": prompt,
                "workload.input_tokens_p95": prompt * spread,
                "workload.output_tokens_mean": output,
                "workload.output_tokens_p95": output * rng.choice((1.0, 2.0, 3.0)),
                "workload.prefix_hit_rate": hit,
                "workload.kv_context_tokens": None,
                "slo.ttft_p95_ms": rng.choice((300, 1000, 3000)),
                "slo.ttft_input_cap_tokens": int(prompt * spread),
                "slo.itl_p95_ms": rng.choice((30, 50, 100)),
                "latency.scheduler_ms": rng.choice((0.0, 1.0, 3.0)),
            }
        )
        try:
            capacity = plan(base).operating_point.capacity_rate_per_s
        except BriefError:
            continue
        if not capacity > 0.05:
            continue
        load = rng.uniform(0.2, 0.9)
        label = f"{model} {gpu} TP{tp} {weights}/{kv} {prompt}/{output} tok x{spread:g} hit {hit:.0%} at {load:.0%}"
        briefs.append((label, base.with_changes({"workload.request_rate": capacity * load})))
    return briefs
