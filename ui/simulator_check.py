"""'Check with the simulator': the step-level simulation of one replica beside the analytic percentiles.

The run is started by a button (it takes a fraction of a second to a few seconds), shows a progress bar
while the max-rate search runs, and is kept for the design it was run on until the brief changes.
"""

from __future__ import annotations

import streamlit as st

from planner import Design
from planner.fmt import num, pct
from planner.simulator import MaxRateResult, SimResult, SimSettings, max_rate, simulate
from ui.show import arithmetic_expander, table

__all__ = ["simulator_check"]

_RESULT_KEY = "sim.result"


def _run(design: Design) -> tuple[SimResult, MaxRateResult]:
    bar = st.progress(0.0, text="Simulating one replica at the operating point")
    sim = simulate(design.brief, SimSettings(rate_per_s=design.operating_point.rate_per_replica_per_s))

    def progress(fraction: float, text: str) -> None:
        bar.progress(min(max(fraction, 0.0), 1.0), text=f"Searching the highest rate under the SLO: {text}")

    found = max_rate(design.brief, progress)
    bar.empty()
    return sim, found


def simulator_check(design: Design) -> None:
    st.header("Check with the simulator")
    st.caption(
        "A step-level simulation of continuous batching with chunked prefill on one replica, at the operating point's"
        " rate, with the same replica physics; then a search for the highest rate one replica sustains under the SLO."
    )
    stored = st.session_state.get(_RESULT_KEY)
    if st.button("Check with the simulator", key="sim.run"):
        sim, found = _run(design)
        stored = (design.brief, sim, found)
        st.session_state[_RESULT_KEY] = stored
    if stored is None or stored[0] != design.brief:
        return
    _, sim, found = stored
    slo = design.slo
    table(
        [
            {"figure": "TTFT p50", "analytic": num(slo.ttft_p50_ms, "ms"), "simulated": num(sim.ttft_ms.p50, "ms")},
            {"figure": "TTFT p95", "analytic": num(slo.ttft_p95_ms, "ms"), "simulated": num(sim.ttft_ms.p95, "ms")},
            {"figure": "ITL p50", "analytic": num(slo.itl_p50_ms, "ms"), "simulated": num(sim.itl_ms.p50, "ms")},
            {"figure": "ITL p95", "analytic": num(slo.itl_p95_ms, "ms"), "simulated": num(sim.itl_ms.p95, "ms")},
            {"figure": "TPOT mean", "analytic": num(design.operating_point.tpot_ms, "ms"), "simulated": num(sim.tpot_ms.mean, "ms")},
            {
                "figure": "highest rate per replica under the SLO",
                "analytic": num(design.operating_point.capacity_rate_per_s, "req/s"),
                "simulated": num(found.max_rate_per_s, "req/s"),
            },
        ]
    )
    st.markdown(
        f"Simulated {sim.requests:,} requests at {num(sim.rate_per_s or 0.0, 'req/s')}: {pct(sim.slo_attainment)} meet both targets."
        f" Replicas needed for the peak: {found.replicas_needed if found.replicas_needed is not None else 'none meets the SLO'}"
        f" ({found.replicas_with_headroom if found.replicas_with_headroom is not None else '-'} with headroom)."
    )
    st.caption(
        "The analytic percentiles include the network, gateway and streaming components of the waterfall; the simulator"
        " times one replica from arrival to tokens."
    )
    arithmetic_expander([*sim.arithmetic.items(), *found.arithmetic.items()], title="Show the simulator's arithmetic")
