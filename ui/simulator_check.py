"""'Check with the simulator': the step-level simulation of one replica beside the analytic percentiles.

The run is started by a button (it takes a fraction of a second to a few seconds), shows a progress bar
while the max-rate search runs, and is kept for the design it was run on until the brief changes.
"""

from __future__ import annotations

import math

import streamlit as st

from planner import Design
from planner.crosscheck import TOLERANCE
from planner.errors import BriefError
from planner.figures import label, resolve, show
from planner.fmt import num, pct
from planner.objective import duration_text
from planner.simulator import MaxRateResult, SimObjective, SimResult, SimSettings, SimSlo, max_rate, simulate
from ui.show import arithmetic_expander, table

__all__ = ["simulator_check"]

_RESULT_KEY = "sim.result"


def _run(design: Design) -> tuple[SimResult, MaxRateResult]:
    bar = st.progress(0.0, text="Simulating one general-pool replica at the plan's load")
    sim = simulate(design.brief, SimSettings())  # no rate: the plan check, on the plan's own basis

    def progress(fraction: float, text: str) -> None:
        bar.progress(min(max(fraction, 0.0), 1.0), text=f"Searching the highest rate under the SLO: {text}")

    found = max_rate(design.brief, progress)
    bar.empty()
    return sim, found


def _agreement(plan_value: float, simulated: float, tolerance: float | None) -> str:
    if not (math.isfinite(plan_value) and math.isfinite(simulated)) or simulated <= 0:
        return "no steady state" if not math.isfinite(plan_value) else "-"
    error = plan_value / simulated - 1
    if tolerance is None:
        return f"{error:+.0%}"
    return f"{error:+.0%} ({'within' if abs(error) <= tolerance else 'outside'} {tolerance:.0%})"


def _rows(design: Design, sim: SimSlo, found: MaxRateResult) -> list[dict[str, str]]:
    op = design.operating_point
    figures = (  # (plan path, the simulator's figure, the tolerance the tests hold)
        ("slo.ttft_p50_ms", sim.ttft_p50_ms, None),
        ("slo.ttft_p95_ms", sim.ttft_p95_ms, TOLERANCE["ttft_p95_ms"]),
        ("slo.itl_p50_ms", sim.itl_p50_ms, None),
        ("slo.itl_p95_ms", sim.itl_p95_ms, TOLERANCE["itl_p95_ms"]),
        ("slo.tpot_p50_ms", sim.tpot_p50_ms, TOLERANCE["tpot_p50_ms"]),
        ("slo.tpot_p95_ms", sim.tpot_p95_ms, None),
    )
    rows = [
        {
            "figure": label(path),
            "plan": show(design, path, short=True),
            "simulator": num(simulated, "ms"),
            "agreement": _agreement(resolve(design, path), simulated, tol),
        }
        for path, simulated, tol in figures
    ]
    rows.append(
        {
            "figure": label("operating_point.capacity_rate_per_s"),
            "plan": show(design, "operating_point.capacity_rate_per_s", short=True),
            "simulator": num(found.max_rate_per_s, "req/s"),
            "agreement": _agreement(op.capacity_rate_per_s, found.max_rate_per_s, None),
        }
    )
    return rows


def _objective_rows(check: SimObjective | None) -> list[dict[str, str]]:
    """An offline job's or a rollout's pace: a replica's output tokens/s at its full batch, planned and simulated."""
    if check is None:
        return []
    return [
        {
            "figure": f"Output tokens/s a replica at the full batch ({check.batch_per_replica})",
            "plan": num(check.plan_output_tokens_per_s, "tok/s"),
            "simulator": num(check.output_tokens_per_s, "tok/s"),
            "agreement": _agreement(check.plan_output_tokens_per_s, check.output_tokens_per_s, None),
        }
    ]


def _objective_sentence(design: Design, check: SimObjective) -> None:
    st.markdown(
        f"The plan {'meets' if design.verdict.meets_slo else 'misses'} its deadline. The simulator runs {check.scope}:"
        f" at its pace the work takes {duration_text(check.time_s, check.kind)} of the {duration_text(check.deadline_s, check.kind)} deadline"
        f" ({duration_text(check.plan_time_s, check.kind)} planned), so the deadline is {'met' if check.meets else 'missed'}."
        " No latency target judges this design; the latency rows are the plan's rate for reference."
    )


def simulator_check(design: Design) -> None:
    st.header("Check with the simulator")
    st.caption(
        "A step-level simulation of continuous batching with chunked prefill on one general-pool replica at the plan's"
        " rate per replica, with the engine configuration the plan analyses, the brief's prompt and reply"
        " lengths and its prefix hits; then a search for the highest rate one replica sustains under the SLO."
    )
    if design.disaggregation is not None or design.speculative is not None:
        runs = "one prefill replica feeding one decode replica" if design.disaggregation is not None else "every step speculative"
        st.caption(f"This design's plan check runs its mechanism ({runs}); the max-rate search runs the aggregated replica without it.")
    stored = st.session_state.get(_RESULT_KEY)
    if st.button("Check with the simulator", key="sim.run"):
        try:
            sim, found = _run(design)
        except BriefError as exc:  # a brief too large to simulate (planner.simulator's work limits): say why
            st.error(f"The simulator cannot run this brief: {exc}")
            return
        stored = (design.brief, sim, found)
        st.session_state[_RESULT_KEY] = stored
    if stored is None or stored[0] != design.brief:
        return
    _, sim, found = stored
    check = sim.slo
    assert check is not None  # simulate() without a rate is the plan check
    table(_rows(design, check, found) + _objective_rows(sim.objective))
    if sim.objective is not None:
        _objective_sentence(design, sim.objective)
        return
    plan_verdict = "meets" if design.verdict.meets_slo else "misses"
    sim_verdict = "meets" if check.meets_slo else "misses"
    replicas = design.operating_point.general_replicas
    beyond = f" The run checks {check.scope}; {check.not_simulated}." if check.not_simulated else ""
    st.markdown(
        f"The plan {plan_verdict} the SLO; the simulator {sim_verdict} it at {num(check.rate_per_replica_per_s, 'req/s')} per replica"
        f" (its p95 TTFT and p95 {design.slo.itl_metric.value.upper()} against the targets, as the plan and the max-rate search"
        f" judge them; {pct(sim.slo_attainment)} of {sim.requests:,} requests meet both at once).{beyond} At the simulator's highest rate the whole"
        f" peak needs {found.replicas_needed if found.replicas_needed is not None else 'more replicas than any fleet'} such replicas"
        f" ({found.replicas_with_headroom if found.replicas_with_headroom is not None else '-'} with the brief's headroom);"
        f" the design has {replicas} in its general pool, beside its long-context and spare nodes."
    )
    st.caption(
        f"Both sides add the same fixed request path to TTFT ({num(check.fixed_ms, 'ms')}: network, gateway, tokenization,"
        " first sample, first write). The agreement the tests hold on every preset and 40 generated briefs is in docs/crosscheck.md."
    )
    arithmetic_expander([*sim.arithmetic.items(), *found.arithmetic.items()], title="Show the simulator's arithmetic")
