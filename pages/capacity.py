"""Capacity: demand, memory per GPU, KV capacity, the decode step, utilization, the binding resource, the operating point."""

import streamlit as st

from planner.breakdowns import decode_step_stack, memory_stack, utilization_stacks
from planner.disagg import decode_batch_words
from planner.fmt import num, pct
from planner.headroom import sizing_words
from planner.operating_point import running_in_general_pool
from planner.replica import units_text
from planner.sweeps import utilization_vs_traffic
from ui.charts import stacked_bars, utilization_vs_traffic_chart
from ui.mechanisms import conclusion_box, mechanism_sections, objective_section
from ui.show import chart, fig, figure_row, md, table
from ui.sidebar import page_setup

design = page_setup("Capacity")
if design is None:
    st.stop()
d, m, c, op = design.demand, design.memory, design.capacity, design.operating_point
conclusion_box(design)
objective_section(design)
mechanism_sections(design)

st.header("Demand at peak")
figure_row(
    [
        fig(design, f"demand.{key}")
        for key in (
            "request_rate_per_s",
            "generating_sequences",
            "input_tokens_per_s",
            "output_tokens_per_s",
            "prefill_tokens_per_s_after_cache",
        )
    ]
)

if design.brief.workload.request_rate is None:
    engine_running = running_in_general_pool(op)
    st.caption(
        f"{num(d.generating_sequences)} generating is the worked design's conservative sizing figure: every reply is held for the"
        f" users' {num(design.brief.workload.generation_s_per_turn, 's')} of reading. The engine frees a slot when it stops"
        f" generating, so at its own pace the general pool runs about {num(engine_running)} sequences"
        f" ({num(op.in_flight)} per replica, the operating point below): the sizing arithmetic on this page is the safe side,"
        " the SLO budget is what the engine runs."
    )

st.header("Memory per GPU")
chart(stacked_bars([memory_stack(m)], f"Memory of one {design.gpu_name}"), key="chart.memory")
figure_row(
    [
        fig(design, f"memory.{key}")
        for key in ("weights_gb_per_gpu", "kv_gb_per_gpu", "kv_bytes_per_token_per_gpu", "max_sequences_per_replica", "max_sequences_fleet")
    ]
)
st.caption(
    f"KV sized for {num(m.kv_context_tokens, 'tokens')} of context per sequence; {num(m.max_sequences_per_node)} sequences per node."
)

st.header("Decode and prefill")
_AGGREGATED = (
    "The decode-step, utilization and traffic figures in this and the next section stay aggregated: the fleet's GPU time"
    f" as if every node ran prompts and replies together (decode batch {num(c.batch_per_replica)} a replica)."
    + (
        f" Disaggregated, the prefill pool is {pct(design.disaggregation.prefill_busy)} busy and each decode replica runs"
        f" {decode_batch_words(design.disaggregation, design.brief.deployment.max_num_seqs)} in pure decode steps: the operating point at the foot of the page"
        " is the decode pool's."
        if design.disaggregation is not None
        else ""
    )
)
if design.disaggregation is not None:
    st.caption(_AGGREGATED)
chart(stacked_bars([decode_step_stack(c)], "Bytes one decode step reads per GPU", height=180), key="chart.step")
figure_row(
    [
        fig(design, f"capacity.{key}")
        for key in (
            "batch_per_replica",
            "decode_step_bytes_gb_per_gpu",
            "decode_step_ideal_ms",
            "decode_step_ms",
            "decode_tokens_per_s",
            "prefill_tokens_per_s",
        )
    ]
)
st.caption(
    f"At max-num-seqs {design.brief.deployment.max_num_seqs}: {num(c.step_bytes_at_max_num_seqs_gb, 'GB')} per GPU per step,"
    f" {num(c.step_at_max_num_seqs_ideal_ms, 'ms')} ideal, {num(c.step_at_max_num_seqs_ms, 'ms')} real."
    f" An unchunked p95 prompt takes {num(c.unchunked_prefill_p95_ms, 'ms')} of one replica."
    f" These steps are at the sizing batch ({num(c.batch_per_replica)} a replica); at the operating point's running batch"
    f" ({num(op.in_flight)}) the step is {num(op.decode_step_ms, 'ms')}, the figure the SLO budget uses."
)

st.header("Utilization and the binding resource")
# The two charts in tabs that draw only the open one: both move with every control, and a Plotly chart whose figure
# changed is drawn anew in the browser (30-45 ms each here, benchmarks/browser_speed.py).
share_tab, traffic_tab = st.tabs(["Share of GPU time", "Each limit as traffic grows"], key="capacity.utilization", on_change="rerun")
if share_tab.open:
    with share_tab:
        chart(stacked_bars(utilization_stacks(c), "Share of GPU time at peak, sizing arithmetic", percent=True), key="chart.utilization")
if traffic_tab.open:
    with traffic_tab:
        chart(
            utilization_vs_traffic_chart(utilization_vs_traffic(design.brief), design.headroom.multiple, design.headroom.long_context_pool),
            key="chart.traffic",
        )
figure_row(
    [
        fig(design, f"capacity.{key}")
        for key in ("utilization", "utilization_no_prefix_cache", "prefill_fraction", "decode_fraction", "binding_constraint")
    ]
)
st.markdown(f"**Binding:** {md(c.binding_reason)}.")
st.markdown(f"**Headroom:** {md(design.headroom.text)}.")
st.caption(
    f"Basis: {c.utilization_basis}. {sizing_words(design.headroom, c.utilization, c.sizing_load_multiple)}"
    ' (each pool\'s capacity), which the tab "Each limit as traffic grows" above draws.'
)
if design.disaggregation is not None:
    st.caption(_AGGREGATED)

spike = design.variation.spike if design.variation is not None else None
if spike is not None:  # variation E: a spiky peak
    st.header("The spike")
    st.caption(
        f"The peak is {num(spike.peak_to_average)}x the daily average and rises faster than a {num(spike.node_cold_start_s, 's')} node cold start:"
        " autoscaling cannot follow it, so the fleet either holds the spike's nodes or holds fewer and sheds the rest."
    )
    table(
        [
            {"fleet": "sized for the spike", "nodes": str(spike.nodes_for_spike), "the spike without prefix cache": "carried"},
            {
                "fleet": "sized for the average",
                "nodes": str(spike.nodes_for_average),
                "the spike without prefix cache": f"{pct(spike.spike_utilization_on_average_fleet)} busy: the degradation ladder sheds the rest",
            },
        ]
    )

st.header("The operating point (Little's law)")
if design.disaggregation is not None:
    dis = design.disaggregation
    st.caption(
        f"One replica of the decode pool ({op.general_replicas} decode replicas carry the peak; {dis.prefill_replicas} prefill"
        " replicas run the prompts), its batch from Little's law on pure decode steps. The capacity under the SLO scales both"
        f" pools with the load: {md(op.arithmetic['capacity_rate_per_s'])}."
    )
else:
    unit = "micro-batch stream" if design.shape.pp > 1 else "replica"  # PP: the operating point is one stream's
    st.caption(
        f"One {unit} of the general pool ({units_text(op.general_replicas, design.shape.pp)} carry its share of the peak;"
        " long-context and spare nodes excluded), solved together with the step time its batch implies. The SLO budget"
        f" and the engine configuration describe this same {unit}."
    )
figure_row(
    [
        fig(design, f"operating_point.{key}")
        for key in ("rate_per_replica_per_s", "in_flight", "tpot_ms", "kv_in_use_gb", "capacity_rate_per_s")
    ]
)
seed = op.seed_relation
st.caption(
    f"Load / capacity under the SLO: {pct(op.load_vs_capacity)}. Memory in use: {op.arithmetic['memory_used_gb']}."
    + (
        f" The worked designs' hand relation{' on the aggregated replica' if design.disaggregation is not None else ''}"
        " (TPOT = step / (1 - prefill share), prefill and decode not overlapping):"
        f" {num(seed.in_flight)} in flight, TPOT {num(seed.tpot_ms, 'ms')} real / {num(seed.tpot_ideal_ms, 'ms')} ideal,"
        f" capacity at the ITL target {num(seed.capacity_rate_per_s, 'req/s')} real / {num(seed.capacity_rate_ideal_per_s, 'req/s')} ideal."
        if seed is not None
        else ""
    )
)
