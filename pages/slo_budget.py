"""SLO budget: TTFT and ITL as waterfalls against their targets, p50 and p95, and the engine-limit trade-offs."""

import math

import streamlit as st

from planner.breakdowns import ttft_paths
from planner.disagg import decode_batch_words, splits_summary
from planner.figures import cause_of, show
from planner.fmt import num, pct
from planner.slo import batch_slot_words, chunk_tradeoff_words
from planner.speculative import speculative_summary
from ui.charts import itl_waterfall_chart, speculative_gain_chart, tradeoff_chart, ttft_waterfall_chart
from ui.mechanisms import objective_section
from ui.show import arithmetic_expander, chart, fig, figure_row, md, text_table
from ui.sidebar import page_setup
from ui.simulator_check import simulator_check

design = page_setup("SLO budget")
if design is None:
    st.stop()
slo, dep = design.slo, design.brief.deployment
metric = slo.itl_metric.value.upper()
judged = "slo.itl_p95_ms" if slo.itl_metric.value == "itl" else "slo.tpot_p95_ms"
objective_section(design)  # an offline job or a rollout batch: its deadline judges it, the latency below is for reference
judging = design.objective is None
# the targets the charts draw: none for a design its deadline judges (its latency is for reference, no target)
ttft_target_ms, itl_target_ms = (slo.ttft_target_ms, slo.itl_target_ms) if judging else (None, None)

figure_row(
    [
        fig(design, "slo.ttft_p50_ms"),
        fig(
            design,
            "slo.ttft_p95_ms",
            note=f"target {show(design, 'slo.ttft_target_ms')}: {'met' if slo.ttft_ok else 'missed'}" if judging else "no target",
        ),
        fig(design, "slo.itl_p50_ms"),
        fig(
            design,
            judged,
            note=f"target {show(design, 'slo.itl_target_ms')}: {'met' if slo.itl_ok else 'missed'}" if judging else "no target",
        ),
    ],
    arithmetic_title="Show the arithmetic",
)
p = slo.point
dis, spec = design.disaggregation, design.speculative
if dis is not None:
    st.markdown(
        f"Disaggregated: a prompt waits for one of {dis.prefill_replicas} prefill replicas ({pct(dis.prefill_busy)} busy), is prefilled"
        f" with no decode in its steps, its KV ({num(dis.kv_transfer_mb_mean, 'MB')}) crosses to a decode replica in"
        f" {num(dis.transfer_ms_mean, 'ms')}, and the decode replica's next step samples its first token. Decode steps carry no"
        f" prompt chunk: the token gap is a pure decode step at {decode_batch_words(dis, dep.max_num_seqs)} on the decode pool."
        " The **p95 path** sums each part's 95th percentile; the **mean path** is where an average request spends its time."
    )
else:
    st.markdown(
        f"One general-pool replica at {num(p.rate_per_replica_per_s, 'req/s')} with {num(p.running_batch)} sequences running and"
        f" {pct(p.hit_rate)} of each prompt in the prefix cache. A request crosses the fixed path (network, gateway, tokenization,"
        " first token out),"
        + (batch_slot_words(p, dep.max_num_seqs) if p.admission_busy >= 0.005 else "")
        + " waits for the prefill slot, then its uncached tokens are prefilled in chunks between decode steps."
        " The **p95 path** puts the queue at its 95th percentile, so its bars add up to the p95 TTFT"
        f"{' that the target judges' if judging else ' (for reference: no latency target judges this design)'};"
        " the **mean path** is where an average request spends its time."
    )
left, right = st.columns(2)
with left:
    if math.isfinite(slo.ttft_p95_ms) and math.isfinite(slo.ttft_mean_ms):
        ttft_band = design.uncertainty.band("slo.ttft_p95_ms")
        band = (ttft_band.low, ttft_band.high, f"{design.uncertainty.legend} of the p95") if ttft_band else None
        chart(ttft_waterfall_chart(ttft_paths(design.brief.latency, slo, dis), ttft_target_ms, band), key="chart.ttft")
    else:
        st.error(f"TTFT is unbounded: {cause_of(design)}, so the queue grows without bound and no waterfall can be drawn.")
with right:
    if all(math.isfinite(s.ms) for s in slo.itl_waterfall):
        mean_gap_ms = sum(s.ms for s in slo.itl_waterfall)
        low, high = design.uncertainty.range_of(mean_gap_ms, "itl")
        gap_band = (low, high, f"{design.uncertainty.legend} of the mean gap")
        itl_chart = itl_waterfall_chart(slo.itl_waterfall, slo.judged_itl_p95_ms, itl_target_ms, metric, gap_band)
        chart(itl_chart, key="chart.itl")
    else:
        st.error(f"ITL is unbounded: {cause_of(design)}.")
with st.expander("How the latency model works"):
    st.markdown(f"**Queue.** {md(slo.queue_model)}")
    st.markdown(f"**Percentiles.** {md(slo.percentile_method)}")
    st.markdown(f"**Basis.** {md(slo.basis)}")
arithmetic_expander(slo.arithmetic.items(), title="Show the arithmetic of the latency model")
if dis is not None:
    st.header("Disaggregated against chunked prefill")
    c = dis.comparison
    text_table(
        [
            {
                "design": "chunked prefill on the same GPUs",
                "p95 TTFT": num(c.chunked_ttft_p95_ms, "ms"),
                "p95 ITL": num(c.chunked_itl_p95_ms, "ms"),
                "p95 TPOT": num(c.chunked_tpot_p95_ms, "ms"),
                "meets the SLO": "yes" if c.chunked_meets_slo else "no",
            },
            {
                "design": "prefill/decode disaggregated",
                "p95 TTFT": num(c.disaggregated_ttft_p95_ms, "ms"),
                "p95 ITL": num(c.disaggregated_itl_p95_ms, "ms"),
                "p95 TPOT": num(c.disaggregated_tpot_p95_ms, "ms"),
                "meets the SLO": "yes" if c.disaggregated_meets_slo else "no",
            },
        ]
    )
    st.markdown(md(c.verdict))
    st.subheader("Every split of the same nodes")
    st.caption(md(splits_summary(dis, design.brief)))
    text_table(
        [
            {
                "prefill nodes": str(sp.prefill_nodes),
                "prefill busy": pct(sp.prefill_busy),
                "decode batch": num(sp.decode_batch),
                "p95 TTFT": num(sp.ttft_p95_ms, "ms"),
                "p95 ITL": num(sp.itl_p95_ms, "ms"),
                "meets the SLO": ("yes" if sp.meets_slo else "no") + (" (the brief's)" if sp.prefill_nodes == dis.prefill_nodes else ""),
            }
            for sp in dis.splits
        ]
    )
    arithmetic_expander(dis.arithmetic.items(), title="Show the arithmetic of the two pools")
if spec is not None:
    st.header("Speculative decoding: the gain by batch")
    st.markdown(md(speculative_summary(spec)))
    chart(speculative_gain_chart(spec.points, spec.operating_batch, spec.crossover_batch), key="chart.speculative")
    text_table(
        [
            {
                "batch": str(r.batch),
                "step without": num(r.plain_step_ms, "ms"),
                "speculative step": num(r.spec_step_ms, "ms"),
                "a token with it": num(r.spec_ms_per_token, "ms"),
                "gain": f"x{num(r.gain)}",
            }
            for r in spec.points
        ]
    )
    arithmetic_expander(spec.arithmetic.items(), title="Show the arithmetic of speculation")

st.header("Engine limits: the trade-off")
if dis is not None:
    st.caption("The curves below are the aggregated design on the same GPUs (chunked prefill), the comparison's other side.")
chunk_moves = chunk_tradeoff_words(slo.tradeoff_batched_tokens, design.brief.deployment.max_num_batched_tokens)
st.caption((f"Prefill chunk: {chunk_moves}. " if chunk_moves else "") + "A bigger batch limit admits more sequences per step.")
# One limit at a time, in tabs that draw only the open one: each curve moves with every control, and a Plotly chart
# whose figure changed is drawn anew in the browser (30-45 ms each here, benchmarks/browser_speed.py).
chunk_tab, batch_tab = st.tabs(["Prefill chunk", "Batch limit"], key="slo.tradeoff", on_change="rerun")
if chunk_tab.open:
    with chunk_tab:
        chart(
            tradeoff_chart(
                "Prefill chunk (max-num-batched-tokens)",
                "tokens per step",
                slo.tradeoff_batched_tokens,
                dep.max_num_batched_tokens,
                ttft_target_ms,
                itl_target_ms,
                log_x=True,
                metric=metric,
                uncertainty=design.uncertainty,
            ),
            key="chart.tradeoff_tokens",
        )
if batch_tab.open:
    with batch_tab:
        chart(
            tradeoff_chart(
                "Batch limit (max-num-seqs)",
                "sequences",
                slo.tradeoff_max_num_seqs,
                dep.max_num_seqs,
                ttft_target_ms,
                itl_target_ms,
                metric=metric,
                uncertainty=design.uncertainty,
            ),
            key="chart.tradeoff_seqs",
        )

simulator_check(design)
