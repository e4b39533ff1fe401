"""Architecture: the serving diagram, the decisions with their reasons, and the engine command with a reason per flag."""

import streamlit as st

from planner.figures import show
from planner.fmt import num, pct
from ui.diagram import architecture_diagram
from ui.show import arithmetic_expander, fig, figure_row, md, table, text_table
from ui.sidebar import page_setup

design = page_setup("Architecture")
if design is None:
    st.stop()
arch, cfg = design.architecture, design.config

architecture_diagram(design)
# a disaggregated general pool runs two kinds of replica: each pool's count, with the split that gives them
replicas = (
    ("disaggregation.prefill_replicas", "disaggregation.decode_replicas")
    if design.disaggregation is not None
    else ("pools.general_replicas",)
)
figure_row([fig(design, path) for path in ("architecture.gateway_nodes", "architecture.router_nodes", "brief.hardware.nodes", *replicas)])

st.header("Pools")
table(
    [
        {
            "pool": p.name,
            "nodes": show(design, f"architecture.pools.{i}.nodes"),
            "replicas": show(design, f"architecture.pools.{i}.replicas"),
            "busy at peak": show(design, f"architecture.pools.{i}.utilization"),
            "role": p.role,
        }
        for i, p in enumerate(arch.pools)
    ]
)

if design.scale_out is not None:
    so = design.scale_out
    st.header("Scale-out: the decode step part by part, and the design without its mechanism")
    text_table([{"part of the decode step": p.component, "ms": num(p.ms, "ms")} for p in so.step_parts])
    text_table(
        [
            {
                "the same brief with": o.name,
                "sequences a replica": num(o.max_sequences_per_replica) if o.feasible else "-",
                "step at the same batch": num(o.decode_step_ms, "ms") if o.feasible else "-",
                "req/s a node under the SLO": num(o.capacity_rate_per_node_per_s) if o.feasible else o.reason,
            }
            for o in so.options
        ]
    )
    arithmetic_expander(so.arithmetic.items())

regions = design.variation.regions if design.variation is not None else ()
if regions:  # variation D: users are global
    st.header("Regions")
    st.caption(
        "Users are global: each region serves its own users at a regional round trip, sized for its own traffic and for a"
        " degraded failover of its largest neighbour. Sessions and prefix caches stay in their region."
    )
    table(
        [
            {
                "region": r.region,
                "share of users": pct(r.share),
                "nodes for its own traffic": str(r.own_nodes),
                "with a neighbour's failover": f"{r.failover_nodes} ({pct(r.failover_share)} of users, degraded)",
                "nodes held": str(r.nodes),
            }
            for r in regions
        ]
    )
    st.markdown(
        f"**{sum(r.nodes for r in regions)} nodes** across {len(regions)} regions, against {design.brief.hardware.nodes} in one region."
    )
if design.disaggregation is not None:
    dis = design.disaggregation
    st.subheader("The KV link")
    st.markdown(
        md(
            f"Each prompt's KV crosses from the prefill pool to the decode pool: {dis.arithmetic['transfer']}"
            f" ({num(dis.transfer_ms_p95, 'ms')} for the p95 covered prompt)."
        )
    )

st.header("Decisions")
text_table([{"decision": d.decision, "why": d.why} for d in arch.decisions])
st.subheader("Routing")
text_table([{"rule": d.decision, "why": d.why} for d in arch.routing])

st.header("Engine configuration")
if cfg.prefill_command is not None:
    st.caption("Decode pool")
st.code(cfg.command, language="bash")
if cfg.prefill_command is not None:
    st.caption("Prefill pool: the same engine with its own TP and step budget, and the same KV connector")
    st.code(cfg.prefill_command, language="bash")
text_table([{"flag": f.flag, "value": f.value, "why": f.why} for f in cfg.flags])
arithmetic_expander(cfg.arithmetic.items(), title="Show the arithmetic behind the tuned values")

st.header("Critical dependencies")
for dep in cfg.dependencies:
    st.markdown(f"- **{md(dep.what)}**: breaks if {md(dep.breaks_if)}")
st.subheader("What to measure first in production")
st.markdown("\n".join(f"- {md(item)}" for item in cfg.measure_first))
