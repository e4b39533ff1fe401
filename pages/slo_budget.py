"""SLO budget: TTFT and ITL as waterfalls against their targets, p50 and p95, and the engine-limit trade-offs."""

import streamlit as st

from planner.fmt import num
from ui.charts import tradeoff_chart, waterfall_chart
from ui.show import Fig, arithmetic_expander, figure_row, md
from ui.sidebar import page_setup
from ui.simulator_check import simulator_check

design = page_setup("SLO budget")
if design is None:
    st.stop()
slo, dep = design.slo, design.brief.deployment


def _verdict(ok: bool) -> str:
    return "meets the target" if ok else "misses the target"


figure_row(
    [
        Fig("TTFT p50", num(slo.ttft_p50_ms, "ms")),
        Fig(
            "TTFT p95",
            num(slo.ttft_p95_ms, "ms"),
            help=f"Target {num(slo.ttft_target_ms, 'ms')} for prompts up to {slo.ttft_input_cap_tokens:,} tokens.",
        ),
        Fig("ITL p50", num(slo.itl_p50_ms, "ms")),
        Fig("ITL p95", num(slo.itl_p95_ms, "ms"), help=f"Target {num(slo.itl_target_ms, 'ms')}."),
    ],
    arithmetic_title="Show the arithmetic of the latency model",
)
(st.success if slo.ttft_ok else st.error)(
    f"p95 TTFT {num(slo.ttft_p95_ms, 'ms')} {_verdict(slo.ttft_ok)} of {num(slo.ttft_target_ms, 'ms')}."
)
(st.success if slo.itl_ok else st.error)(f"p95 ITL {num(slo.itl_p95_ms, 'ms')} {_verdict(slo.itl_ok)} of {num(slo.itl_target_ms, 'ms')}.")

left, right = st.columns(2)
with left:
    st.plotly_chart(
        waterfall_chart(
            f"Time to first token (prompts up to {slo.ttft_input_cap_tokens:,} tokens)",
            [(s.component, s.ms) for s in slo.ttft_waterfall],
            slo.ttft_target_ms,
            slo.ttft_p50_ms,
            slo.ttft_p95_ms,
        ),
        key="chart.ttft",
    )
with right:
    st.plotly_chart(
        waterfall_chart(
            "Inter-token latency", [(s.component, s.ms) for s in slo.itl_waterfall], slo.itl_target_ms, slo.itl_p50_ms, slo.itl_p95_ms
        ),
        key="chart.itl",
    )
st.caption(f"Queue model: {md(slo.queue_model)}")
st.caption(f"Percentiles: {md(slo.percentile_method)}")
st.caption(f"Basis: {md(slo.basis)}")
arithmetic_expander(slo.arithmetic.items())

st.header("Engine limits: the trade-off")
left, right = st.columns(2)
with left:
    st.plotly_chart(
        tradeoff_chart(
            "Prefill chunk (max-num-batched-tokens)",
            "tokens per step",
            slo.tradeoff_batched_tokens,
            dep.max_num_batched_tokens,
            slo.ttft_target_ms,
            slo.itl_target_ms,
        ),
        key="chart.tradeoff_tokens",
    )
with right:
    st.plotly_chart(
        tradeoff_chart(
            "Batch limit (max-num-seqs)", "sequences", slo.tradeoff_max_num_seqs, dep.max_num_seqs, slo.ttft_target_ms, slo.itl_target_ms
        ),
        key="chart.tradeoff_seqs",
    )
st.caption(
    "A bigger prefill chunk shortens TTFT but makes the steps that carry it longer; a bigger batch limit admits more sequences per step."
)

simulator_check(design)
