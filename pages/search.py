"""Search: the cheapest design that meets the SLO with N+1, the cost/latency frontier, and the knobs that matter.

The search runs on a process pool of this machine's cores (the CLI's `search --ray` runs it on a Ray cluster);
its result stays in the session with the brief it searched from, so clicking a frontier point opens that design
on every page (through the URL's overrides) and the chart stays to compare it with the others.
"""

from typing import Any

import streamlit as st

from planner import Brief
from planner.brief import KvPrecision, Precision
from planner.catalog import GPUS
from planner.fmt import num, pct
from planner.search import PoolRunner, SearchResult, SerialRunner, default_workers, gap_from_uncomputable, gap_to_best, search
from planner.search_space import SearchSpace, default_space
from ui import state
from ui.charts_search import FRONTIER_AXES, frontier_chart
from ui.show import Fig, fig, figure_row, md, text_table
from ui.sidebar import page_setup

RESULT_KEY = "search.result"  # {"preset", "overrides", "result"}: the last search and the brief it started from
CHART_KEY = "search.chart"

design = page_setup("Search")  # None when the current design cannot be computed (the page says why above)
brief = design.brief if design is not None else state.current_brief()  # the search still runs over the space around it


SPACE_KEYS = ("search.gpu", "search.tp", "search.weights", "search.kv_cache", "search.seqs", "search.tokens", "search.nodes")
SPACE_FOR = "search.space_for"  # the brief the space controls were seeded from


def _space_form(brief: Brief) -> SearchSpace:
    """The default space of the brief, each axis narrowed by the user; the controls start again from the default
    when the brief changes (a clicked frontier point, a slider)."""
    default = default_space(brief)
    if st.session_state.get(SPACE_FOR) != brief.model_dump_json():
        for key in SPACE_KEYS:
            st.session_state.pop(key, None)
        st.session_state[SPACE_FOR] = brief.model_dump_json()
    with st.expander(f"The space: {default.size:,} candidates by default", expanded=False):
        left, right = st.columns(2)
        with left:
            gpus = st.multiselect(
                "GPUs (at their prices)",
                list(default.gpu),
                default=list(default.gpu),
                key="search.gpu",
                format_func=lambda k: f"{GPUS[k].name} (${default.usd_per_gpu_hour[k]:g}/GPU-hour)",
                help="Every catalog GPU with a price; the brief's own GPU at the brief's price.",
            )
            tps = st.multiselect("TP", list(default.tp), default=list(default.tp), key="search.tp")
            weights = st.multiselect("Weights", [p.value for p in Precision], default=list(default.weights), key="search.weights")
            kv = st.multiselect("KV cache", [p.value for p in KvPrecision], default=list(default.kv_cache), key="search.kv_cache")
        with right:
            seqs = st.multiselect("max-num-seqs", list(default.max_num_seqs), default=list(default.max_num_seqs), key="search.seqs")
            tokens = st.multiselect(
                "max-num-batched-tokens",
                list(default.max_num_batched_tokens),
                default=list(default.max_num_batched_tokens),
                key="search.tokens",
            )
            low, high = st.slider(
                "Nodes", min_value=1, max_value=max(default.nodes), value=(min(default.nodes), max(default.nodes)), key="search.nodes"
            )
    nodes = tuple(n for n in default.nodes if low <= n <= high) or (low,)
    chosen: dict[str, Any] = {
        "gpu": tuple(gpus) or default.gpu,
        "tp": tuple(tps) or default.tp,
        "weights": tuple(weights) or default.weights,
        "kv_cache": tuple(kv) or default.kv_cache,
        "max_num_seqs": tuple(seqs) or default.max_num_seqs,
        "max_num_batched_tokens": tuple(tokens) or default.max_num_batched_tokens,
        "nodes": nodes,
    }
    return default.model_copy(update=chosen)


def _run(brief: Brief, space: SearchSpace) -> None:
    bar = st.progress(0.0, text=f"searching {space.size:,} candidates")

    def progress(fraction: float, text: str) -> None:
        bar.progress(min(max(fraction, 0.0), 1.0), text=text)

    workers = default_workers()
    with SerialRunner() if workers == 1 else PoolRunner(workers) as runner:
        result = search(brief, space, runner, progress=progress)
    st.session_state[RESULT_KEY] = {"preset": state.current_preset(), "overrides": state.current_overrides(), "result": result}
    bar.empty()


def _open(overrides: dict[str, Any], label: str) -> None:
    """Make a searched design current: the brief the search started from, with the design's overrides."""
    stored = st.session_state[RESULT_KEY]
    base = state.brief_for(stored["preset"], stored["overrides"])
    if stored["preset"] != state.current_preset():
        state.select_preset(stored["preset"])
    state.load_brief_as_current(base.with_changes(overrides))
    state.set_notice(f"Opened the searched design: {label}")


def _on_select() -> None:
    event = st.session_state.get(CHART_KEY)
    points = (event or {}).get("selection", {}).get("points", []) if isinstance(event, dict) else event.selection.points
    if not points:
        return
    index = points[0].get("customdata")
    index = index[0] if isinstance(index, list) else index
    result: SearchResult = st.session_state[RESULT_KEY]["result"]
    point = result.best if index is None or index < 0 else result.frontier[int(index)]
    if point is not None:
        _open(point.overrides, point.label)


def _cost_text(value: float | None) -> str:
    return "none meets" if value is None else f"${num(value)}"


def _show(result: SearchResult, stored: dict[str, Any]) -> None:
    searched_from = state.brief_for(stored["preset"], stored["overrides"])
    searched_name = state.name_for(stored["preset"], stored["overrides"]).title  # the design's own name once it is edited
    st.caption(
        md(
            f"Searched {result.evaluated:,} candidates around “{searched_name}” in {num(result.wall_s, 's')} on"
            f" {result.workers} worker(s) ({result.backend}); {result.accepted:,} meet the SLO with N+1 at their replica's fewest nodes."
            f" {result.judged}"
        )
    )
    best = result.best
    if best is None:
        st.warning(md(result.why_no_best))
    else:
        gap = gap_to_best(design, best, result.knobs) if design is not None else gap_from_uncomputable(searched_from, best)
        sim = best.simulated
        figure_row(
            [
                Fig("Best $ per M output tokens", f"${num(best.usd_per_million_output_tokens)}", best.label),
                Fig(
                    "Best p95 TTFT",
                    num(best.ttft_p95_ms, "ms"),
                    f"plan()'s figure; its p95 ITL is {num(best.itl_p95_ms, 'ms')}",
                ),
                Fig("Saving against this design", pct(gap.saving) if design is not None else "-", gap.text),
                Fig(
                    "Best, simulated p95 TTFT",
                    num(sim.ttft_p95_ms, "ms") if sim else "not simulated",
                    f"analytic {num(best.ttft_p95_ms, 'ms')}; simulated ITL {num(sim.itl_p95_ms, 'ms') if sim else '-'}",
                ),
            ],
            arithmetic_title="Show the best design",
        )
        st.info(md(gap.text))
        if result.stated_headroom is not None and best.kept_multiple is not None:  # the best keeps it: a candidate must
            st.caption(
                md(
                    f"The best design's pools reach their SLO capacity at {num(best.kept_multiple)}x the peak with every node up: it"
                    f" keeps the {pct(result.stated_headroom)} headroom stated, which the search asks of every candidate as the"
                    f" verdict does; its first limit, N+1 included, comes at {num(best.headroom_multiple)}x."
                )
            )
        if gap.changes:
            st.button("Open the best design", key="search.open_best", on_click=_open, args=(best.overrides, best.label), type="primary")

    if result.frontier:
        y_label = st.radio("Against", list(FRONTIER_AXES), horizontal=True, key="search.axis")
        targets = {"ttft_p95_ms": searched_from.slo.ttft_p95_ms, "itl_p95_ms": searched_from.slo.itl_p95_ms}
        st.plotly_chart(
            frontier_chart(result, y_label, targets), key=CHART_KEY, on_select=_on_select, selection_mode="points", use_container_width=True
        )
        st.caption("Click a point to open that design on every page (the link in the address bar carries it).")

    if result.knobs:
        st.subheader("The knobs that matter most")
        around = "the best design's" if result.knobs[0].best_value is not None else "any"
        st.caption(f"Each knob turned alone, every other one at {around} value, the fleet sized again: the cheapest $/M with each value.")
        text_table(
            [
                {
                    "knob": k.axis + (f" (best: {k.best_value})" if k.best_value is not None else ""),
                    "cheapest $/M with each value": " · ".join(f"{v}: {_cost_text(c)}" for v, c in k.cheapest_usd_per_million.items()),
                    "spread": pct(k.spread) + (f", {k.values_without_design} value(s) never meet" if k.values_without_design else ""),
                }
                for k in result.knobs
            ]
        )
    with st.expander(f"The frontier ({len(result.frontier)} designs) and why the rest were rejected"):
        text_table(
            [
                {
                    "$ per M": f"${num(p.usd_per_million_output_tokens)}",
                    "p95 TTFT": num(p.ttft_p95_ms, "ms"),
                    "p95 ITL": num(p.itl_p95_ms, "ms"),
                    "SLO": ("met" + (" with N+1" if p.availability_ok else ", no N+1")) if p.meets_slo else "missed",
                    "simulated": f"{num(p.simulated.ttft_p95_ms, 'ms')} / {num(p.simulated.itl_p95_ms, 'ms')}" if p.simulated else "-",
                    "design": p.label,
                }
                for p in result.frontier
            ]
        )
        text_table([{"rejected": count, "reason": reason} for reason, count in result.rejected.items()])


st.markdown(
    "The cheapest design that meets the SLO with N+1 (one node lost), and the frontier: designs meeting the SLO that no"
    " other beats on cost, p95 TTFT and p95 ITL at once, each planned in full and checked by the simulator."
)
space = _space_form(brief)
figure_row(
    [
        Fig(
            "Candidates",
            f"{space.size:,}",
            "the product of the axes' values: " + " x ".join(str(len(v)) for v in space.as_table().values()),
        ),
        Fig(
            "Workers",
            f"{default_workers()} processes",
            "a process pool of this machine's cores (the command line's --ray runs on a cluster)",
        ),
        *(
            [fig(design, "cost.usd_per_million_output_tokens"), fig(design, "verdict.availability_ok")]  # to set against the best below
            if design is not None
            else []
        ),
    ],
    arithmetic_title="Show the space",
)
if st.button(f"Search {space.size:,} candidates", key="search.run"):
    _run(brief, space)
stored = st.session_state.get(RESULT_KEY)
if stored is None:
    st.info("Run the search to see the best design and the frontier (the command line: python -m planner search PRESET).")
else:
    _show(stored["result"], stored)
