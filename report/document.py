"""The one-page design document as data: sections of tables, lines and charts, built from a Design.

`build_document(design)` decides what the document says; markdown.py and html.py only lay it out, so the
formats cannot disagree. Every figure goes through `Figures` (see figures.py): this module holds no
arithmetic and writes no number of its own.

Two parts. The page is what a reviewer needs, curated to print on one A4 sheet at a readable size: the brief,
the verdict, the architecture diagram, the engine configuration, the SLO table, the binding failure, the
cost, the critical dependencies and the validation plan. The appendix holds the full arithmetic behind every
figure (capacity, operating point, waterfalls, every failure mode, cost levers, decisions, flags): it follows
the page in the HTML and the Markdown and is left off the print. A page table with a `drop` rank may leave
the print too, lowest rank first, when a design's page would not fit otherwise; the appendix repeats it.
"""

from __future__ import annotations

import math
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from planner.architecture import LOAD_COLOR_NAMES, LOAD_COLORS, LOAD_LEGEND
from planner.mechanism_diagram import MECHANISM_COLORS, MECHANISM_LEGEND, has_mechanisms
from planner.mechanism_view import mechanism_paths
from planner.naming import DesignName, design_name
from report.figures import Figure, Figures

__all__ = ["APPENDIX_TITLE", "Block", "Bullets", "Code", "Diagram", "Document", "Lines", "Section", "Table", "Waterfall", "build_document"]

APPENDIX_TITLE = "Appendix: the arithmetic behind the page"


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class Table(_Frozen):
    """Rows of cells; `note_column` (if any) holds the arithmetic or a reason, set in a muted colour."""

    kind: Literal["table"] = "table"
    header: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]
    note_column: int | None = None
    emphasis_rows: tuple[int, ...] = ()  # rows to set in bold (the binding one)
    drop: int = 0  # on the page: 0 always printed; 1, 2, ...: may leave the print to fit it, 1 first (DROP_*)


class Lines(_Frozen):
    """Short labelled lines: ("Verdict", "feasible, meets the SLO")."""

    kind: Literal["lines"] = "lines"
    items: tuple[tuple[str, str], ...]
    inline: bool = False  # short items: printed on one line, one after another
    drop: int = 0  # as a Table's


class Bullets(_Frozen):
    kind: Literal["bullets"] = "bullets"
    items: tuple[str, ...]
    numbered: bool = False


class Waterfall(_Frozen):
    """A latency budget: components end to end, then marks (p50, p95, target) drawn across them, and the range the
    real engine's p95 falls in (planner.uncertainty), or the reason the plan gives none."""

    kind: Literal["waterfall"] = "waterfall"
    title: str
    steps: tuple[tuple[str, str, float], ...]  # (component, shown ms, ms): the ms only places the bar
    marks: tuple[tuple[str, str, float], ...]  # (name, shown ms, ms)
    band: tuple[str, str, float, float] | None = None  # (legend, shown "86.3 ms to 135 ms", low ms, high ms)
    band_note: str = ""  # said instead of a band: the setup lies outside the calibrated data


class Diagram(_Frozen):
    """The architecture as Graphviz DOT source (rendered to SVG by the HTML, kept as source in Markdown), with the
    legend of its box colours: (fill, border, colour's name, meaning)."""

    kind: Literal["diagram"] = "diagram"
    dot: str
    legend: tuple[tuple[str, str, str, str], ...]


class Code(_Frozen):
    """A command line, shown verbatim; `wrap`: its continued lines (a backslash at the end) may run together."""

    kind: Literal["code"] = "code"
    text: str
    language: str = "sh"
    wrap: bool = False


Block = Table | Lines | Bullets | Waterfall | Diagram | Code

# What leaves a crowded page's print first (report.pdf), each rank with all before it; the appendix repeats them all.
DROP_RANGES = 1  # the line of the p95s' ranges (the appendix's waterfalls draw them)
DROP_TABLES = 2  # the failure table, the mechanisms' figures
DROP_OPTIONS = 3  # a variation's options


class Section(_Frozen):
    key: str
    title: str
    blocks: tuple[Block, ...]


class Document(_Frozen):
    title: str  # the design's name (planner.naming): follows the design as edited
    subtitle: str
    summary: str  # one line: model, fleet, verdict
    sections: tuple[Section, ...]  # the page
    appendix: tuple[Section, ...]  # the arithmetic behind the page: HTML and Markdown, not the print
    figures: tuple[Figure, ...]  # every figure shown, with the Design path it came from

    @property
    def all_sections(self) -> tuple[Section, ...]:
        return self.sections + self.appendix


# --- the page -----------------------------------------------------------------------------------------


def _arith(f: Figures, section: str, key: str) -> str:
    """The planner's arithmetic for one figure, or nothing when the planner gives none."""
    table: dict[str, str] = f.value(f"{section}.arithmetic")
    return f.text(f"{section}.arithmetic.{key}") if key in table else ""


def _summary(f: Figures) -> str:
    verdict = "feasible" if f.value("verdict.feasible") else "NOT feasible"
    judged = "the SLO" if f.value("objective") is None else "its deadline"
    slo = f"meets {judged}" if f.value("verdict.meets_slo") else f"misses {judged}"
    slo += "" if f.value("verdict.availability_ok") else ", no N+1"
    slo += "" if f.value("verdict.headroom_ok") else ", short of its stated headroom"
    units = (  # capacity.replicas counts a PP replica's micro-batch streams
        f"PP={f.num('shape.pp')}, {f.num('capacity.replicas')} micro-batch streams"
        if f.value("shape.pp") > 1
        else f"{f.num('capacity.replicas')} replicas"
    )
    return (
        f"{f.text('model_name')} on {f.num('brief.hardware.nodes')} nodes x {f.num('brief.hardware.gpus_per_node')}"
        f" {f.text('gpu_name')}, TP={f.num('shape.tp')}, {units}"
        f" · {f.text('brief.deployment.weights')} weights, {f.text('brief.deployment.kv_cache')} KV"
        f" · utilization {f.pct('capacity.utilization')} · {verdict}, {slo}"
    )


def _workload(f: Figures) -> Section:
    w = "brief.workload"
    if f.value(f"{w}.users") is not None:
        traffic = (
            f"{f.num(f'{w}.users')} users at peak, {f.pct(f'{w}.duty_cycle')} duty cycle,"
            f" {f.num(f'{w}.generation_s_per_turn', 's')} of generation per turn"
        )
    else:
        traffic = f"{f.num(f'{w}.request_rate', 'req/s')} at peak (given as a rate)"
    lengths = (
        f"input {f.num(f'{w}.input_tokens_mean')} mean / {f.num(f'{w}.input_tokens_p95')} p95 tokens;"
        f" output {f.num(f'{w}.output_tokens_mean')} / {f.num(f'{w}.output_tokens_p95')};"
        f" prefix hit rate {f.pct(f'{w}.prefix_hit_rate')}"
    )
    slo = (
        f"p95 TTFT < {f.num('brief.slo.ttft_p95_ms', 'ms')} for inputs ≤ {f.num('brief.slo.ttft_input_cap_tokens', 'tokens')};"
        f" p95 {_judged_gap(f)} < {f.num('brief.slo.itl_p95_ms', 'ms')}; availability {f.pct('brief.slo.availability')}"
        if f.value("objective") is None
        else ""
    )
    budget = (
        f"{f.num('brief.hardware.nodes')} nodes x {f.num('brief.hardware.gpus_per_node')} GPUs"
        f" at {f.usd('brief.cost.usd_per_gpu_hour')} per GPU-hour"
    )
    judged = ("SLO", slo) if slo else ("Deadline", _deadline_line(f))
    return Section(
        key="workload",
        title="Brief",
        blocks=(Lines(items=(("Traffic", traffic), ("Lengths", lengths), judged, ("Budget", budget))),),
    )


def _deadline_line(f: Figures) -> str:
    """What judges an offline job or a rollout batch: its work by its deadline; the brief's latency targets judge nothing."""
    o = "brief.objective"
    work = (
        f.num(f"{o}.job_tokens", "tokens")
        if f.value("objective.kind") == "throughput"
        else f"a batch of {f.num(f'{o}.batch_prompts', 'prompts')}"
    )
    return f"{work} within {f.duration('objective.deadline_s')}; no latency target; availability {f.pct('brief.slo.availability')}"


def _availability(f: Figures) -> str:
    """Whether the availability target holds; a target under 99% needs no N+1, so it can hold with N+1 lost: say so."""
    held = f.yes_no("verdict.availability_ok")
    if not f.value("verdict.availability_ok") or f.value("failure_summary.n_plus_one_ok"):
        return held
    judged = "the SLO" if f.value("objective") is None else "the deadline"
    return f"{held}: a {f.pct('brief.slo.availability')} target needs no N+1 (losing a node breaks {judged})"


def _headroom_kept(f: Figures) -> str:
    """Whether the pools keep the slo.headroom the brief states and, short of it, the fleet that does (Design.headroom_fix)."""
    if f.value("verdict.headroom_ok"):
        return f.yes_no("verdict.headroom_ok")
    fleet = f.value("headroom_fix")
    if fleet is None:
        return "no"
    split = f", {f.num('headroom_fix.prefill_nodes')} prefill" if fleet.prefill_nodes is not None else ""
    return f"no: {f.num('headroom_fix.nodes')} nodes{split} keep it"


def _verdict(f: Figures) -> Section:
    problems = f.value("verdict.problems")
    answers = (
        ("Feasible", f.yes_no("verdict.feasible")),
        ("Meets the SLO" if f.value("objective") is None else "Meets its deadline", f.yes_no("verdict.meets_slo")),
        ("Availability (N+1)", _availability(f)),
        *((("Stated headroom kept", _headroom_kept(f)),) if f.value("brief.slo.headroom") is not None else ()),
    )
    items = []
    fixed = f.value("fix") is not None  # one re-planned fleet fixes every problem: it stands for their changes
    for i in range(len(problems)):
        p = f"verdict.problems.{i}"
        if f.value(f"{p}.field") == "slo.headroom":  # stated in the answers above, in one line: the page has no room for more
            continue
        items.append((f.text(f"{p}.field"), f.text(f"{p}.problem") if fixed else f"{f.text(f'{p}.problem')}; {f.text(f'{p}.change')}"))
    if fixed:
        items.append(("The change that fixes it", f.text("fix.text")))
    blocks: tuple[Block, ...] = (Lines(items=answers, inline=True), *((Lines(items=tuple(items)),) if items else ()))
    return Section(key="verdict", title="Verdict", blocks=blocks)


def _option_row(f: Figures, at: str, name: str) -> tuple[str, ...]:
    """A variation option's row (or one of its pools' rows, `at` its path): busy, p95s, and whether it meets the SLO."""
    return (
        name,
        f.pct(f"{at}.utilization"),
        f.num(f"{at}.ttft_p95_ms", "ms"),
        f.num(f"{at}.itl_p95_ms", "ms"),
        f.yes_no(f"{at}.ok") + (f": {f.text(f'{at}.why_not')}" if f.value(f"{at}.why_not") else ""),
    )


def _variation(f: Figures) -> Section:
    v = "variation"
    options = tuple(  # an option that runs as several pools (an overflow model's): a row each, its re-plan's figures
        row
        for i in range(len(f.value(f"{v}.options")))
        for row in (
            [
                _option_row(
                    f, f"{v}.options.{i}.pools.{j}", f"{f.text(f'{v}.options.{i}.name')}: {f.text(f'{v}.options.{i}.pools.{j}.name')}"
                )
                for j in range(len(f.value(f"{v}.options.{i}.pools")))
            ]
            or [_option_row(f, f"{v}.options.{i}", f.text(f"{v}.options.{i}.name"))]
        )
    )
    blocks: list[Block] = [
        Lines(items=(("Question", f.text(f"{v}.question")),), drop=DROP_TABLES),  # the section's title names it already
        Lines(items=(("Conclusion", f.text(f"{v}.conclusion")),)),
    ]
    if options:
        blocks.append(Table(header=("Option", "Busy", "p95 TTFT", "p95 ITL", "OK"), rows=options, drop=DROP_OPTIONS))
    return Section(key="variation", title=f"Variation: {f.text(f'{v}.title')}", blocks=tuple(blocks))


def _scale_out_arithmetic(f: Figures) -> Section:
    s = "scale_out"
    parts = tuple(
        (f.text(f"{s}.step_parts.{i}.component"), f.num(f"{s}.step_parts.{i}.ms", "ms")) for i in range(len(f.value(f"{s}.step_parts")))
    )
    options = tuple(
        (
            f.text(f"{s}.options.{i}.name"),
            f.num(f"{s}.options.{i}.max_sequences_per_replica"),
            f.num(f"{s}.options.{i}.decode_step_ms", "ms"),
            f.num(f"{s}.options.{i}.capacity_rate_per_node_per_s", "req/s"),
        )
        if f.value(f"{s}.options.{i}.feasible")
        else (f.text(f"{s}.options.{i}.name"), "-", "-", f.text(f"{s}.options.{i}.reason"))
        for i in range(len(f.value(f"{s}.options")))
    )
    blocks: list[Block] = [
        Lines(items=(("Binds", f.text(f"{s}.binds")), ("Step", f.text(f"{s}.arithmetic.step")))),
        Table(header=("Part of the decode step", "Time"), rows=parts),
    ]
    if options:
        blocks.append(
            Table(header=("The same brief with", "Sequences a replica", "Step, same batch", "A node under the SLO"), rows=options)
        )
    return Section(
        key="scale_out_arithmetic", title="Scale-out: the step part by part, and the design without its mechanism", blocks=tuple(blocks)
    )


def _mechanisms(f: Figures, design: Any) -> Section:
    """A problem-library design: its conclusion (what binds, which mechanism it turns on) and the mechanisms' figures."""
    rows = tuple((f.label(path), f.figure(path)) for path in mechanism_paths(design))
    blocks: list[Block] = [Lines(items=(("Conclusion", f.text("conclusion")),))]
    if rows:
        blocks.append(Table(header=("Mechanism figure", "Value"), rows=rows, drop=DROP_TABLES))
    return Section(key="mechanisms", title="Conclusion and mechanisms", blocks=tuple(blocks))


def _legend(design: Any) -> tuple[tuple[str, str, str, str], ...]:
    pools = tuple((*LOAD_COLORS[load], LOAD_COLOR_NAMES[load], text) for load, text in LOAD_LEGEND)
    return (*pools, (*MECHANISM_COLORS, "blue", MECHANISM_LEGEND)) if has_mechanisms(design) else pools


def _architecture(f: Figures, design: Any) -> Section:
    return Section(key="architecture", title="Architecture", blocks=(Diagram(dot=f.dot("architecture.dot"), legend=_legend(design)),))


def _engine_config(f: Figures) -> Section:
    if f.value("config.prefill_command") is not None:  # disaggregated: one command a pool
        prefill = f"the same command with --tensor-parallel-size {f.num('disaggregation.prefill_tp')} and the prefill step budget, printed in full in the appendix"
        blocks = (
            Lines(items=(("Decode pool", "the KV connector receives each prompt's KV"),)),
            Code(text=f.text("config.command"), wrap=True),
            Lines(items=(("Prefill pool", prefill),)),
        )
        return Section(key="config", title="Engine configuration (decode and prefill pools)", blocks=blocks)
    return Section(key="config", title="Engine configuration (general pool)", blocks=(Code(text=f.text("config.command"), wrap=True),))


def _mechanism(f: Figures) -> Section:
    """The serving mechanism the design turns on, in short: disaggregation's comparison with chunked prefill,
    speculation's gain at batch 1, at the load and its crossover (the whole argument is the appendix's)."""
    blocks: list[Block] = []
    if f.value("disaggregation") is not None:
        c = "disaggregation.comparison"
        rows = (
            (
                "chunked prefill, same GPUs",
                f.num(f"{c}.chunked_ttft_p95_ms", "ms"),
                f.num(f"{c}.chunked_itl_p95_ms", "ms"),
                f.yes_no(f"{c}.chunked_meets_slo"),
            ),
            (
                "disaggregated",
                f.num(f"{c}.disaggregated_ttft_p95_ms", "ms"),
                f.num(f"{c}.disaggregated_itl_p95_ms", "ms"),
                f.yes_no(f"{c}.disaggregated_meets_slo"),
            ),
        )
        blocks.append(
            Lines(
                items=(("Split", f.text("disaggregation.arithmetic.split")), ("KV transfer", f.text("disaggregation.arithmetic.transfer")))
            )
        )
        blocks.append(Table(header=("Design", "p95 TTFT", "p95 ITL", "Meets"), rows=rows))
    if f.value("speculative") is not None:
        s = "speculative"
        blocks.append(
            Lines(
                items=(
                    ("Tokens a step", f.text(f"{s}.arithmetic.tokens_per_step")),
                    (
                        "Gain",
                        f"x{f.num(f'{s}.gain_at_batch_1')} at batch 1, x{f.num(f'{s}.gain_at_load')} at the running batch of {f.num(f'{s}.operating_batch')}",
                    ),
                    ("Off", f.text(f"{s}.arithmetic.crossover")),
                )
            )
        )
    return Section(key="mechanism", title="Mechanism: against the design without it", blocks=tuple(blocks))


def _mechanism_arithmetic(f: Figures) -> Section:
    """Speculation's gain at every batch (what binds and the mechanism's arithmetic are the page's conclusion)."""
    points = f.value("speculative.points")
    gains = tuple(
        (
            f.num(f"speculative.points.{i}.batch"),
            f.num(f"speculative.points.{i}.plain_step_ms", "ms"),
            f.num(f"speculative.points.{i}.spec_ms_per_token", "ms"),
            f.num(f"speculative.points.{i}.gain"),
        )
        for i in range(len(points))
    )
    table = Table(header=("Batch", "Token without", "Token with", "Gain"), rows=gains)
    return Section(key="mechanism_arithmetic", title="Speculation: the gain at every batch", blocks=(table,))


def _slo(f: Figures) -> Section:
    s = "slo"
    judged = f.value(f"{s}.itl_metric").value  # which gap figure the ITL target judges: itl or tpot
    if f.value("objective") is not None:  # an offline job or a rollout: no TTFT or ITL target, latency for reference
        reference = tuple(
            (name, f.num(f"{s}.{key}_p50_ms", "ms"), f.num(f"{s}.{key}_p95_ms", "ms")) for name, key in (("TTFT", "ttft"), ("ITL", "itl"))
        )
        note = ("Targets", "none: the objective (its deadline) judges this design, not latency")
        return Section(
            key="slo",
            title="Latency (for reference)",
            blocks=(Table(header=("Latency", "p50", "p95"), rows=reference), *_page_ranges(f), Lines(items=(note,))),
        )

    def row(label: str, name: str, target: bool, ok: str) -> tuple[str, ...]:
        shown_target = f.num(f"{s}.{'ttft' if name == 'ttft' else 'itl'}_target_ms", "ms") if target else ""
        return (label, f.num(f"{s}.{name}_p50_ms", "ms"), f.num(f"{s}.{name}_p95_ms", "ms"), shown_target, f.yes_no(ok) if target else "")

    rows = (
        row("TTFT", "ttft", True, f"{s}.ttft_ok"),
        row("ITL (token gaps)", "itl", judged == "itl", f"{s}.itl_ok"),
        row("TPOT (reply mean)", "tpot", judged == "tpot", f"{s}.itl_ok"),
    )
    scope = f"TTFT end to end, for prompts up to {f.num(f'{s}.ttft_input_cap_tokens', 'tokens')}"
    return Section(
        key="slo",
        title="SLO",
        blocks=(Table(header=("Latency", "p50", "p95", "Target", "Meets"), rows=rows), *_page_ranges(f), Lines(items=(("Scope", scope),))),
    )


def _judged_gap(f: Figures) -> str:
    """The gap figure the brief's ITL target judges (slo.itl_metric): "ITL" (per-token gaps) or "TPOT" (a reply's mean gap)."""
    return str(f.value("slo.itl_metric").value).upper()


def _failure_rows(f: Figures, *, notes: bool) -> Table:
    """The failure table: each scenario's figures, the binding row in bold. A latency design leads with its p95s (the
    figures its targets judge); an offline job or a rollout batch with its time to finish against the deadline (what
    judges it), its latency only in the appendix, marked as having no target."""
    binding = f.value("failure_summary.binding_scenario")
    gap = _judged_gap(f)  # the column the ITL target judges: ITL or TPOT
    deadline = f.value("objective") is not None
    if deadline:
        figures = ["time", "share", *(["busy", "no_cache", "ttft", "gap"] if notes else [])]  # the page: what judges it
        header = [
            "Scenario",
            "Time to finish",
            "Of the deadline",
            *(["Busy", "No cache", "p95 TTFT, no target", f"p95 {gap}, no target"] if notes else []),
        ]
    else:
        figures = ["busy", *(["no_cache"] if notes else []), "ttft", "gap"]
        header = ["Scenario", "Busy", *(["No cache"] if notes else []), "p95 TTFT", f"p95 {gap}"]

    def cell(p: str, name: str) -> str:
        paths = {"busy": f"{p}.utilization", "no_cache": f"{p}.utilization_no_prefix_cache", "share": f"{p}.objective_share"}
        if name in paths:
            return f.pct(paths[name])
        if name == "time":
            return f.duration(f"{p}.objective_time_s")
        return f.num(f"{p}.{'ttft' if name == 'ttft' else gap.lower()}_p95_ms", "ms")

    rows, emphasis = [], []
    for i, mode in enumerate(f.value("failures")):
        p = f"failures.{i}"
        if not mode.applicable:  # it changes nothing for this brief: its figures would be the baseline's
            row = [f.text(f"{p}.title"), *(["–"] * len(figures)), "n/a"]
        elif not mode.runs:  # the changed brief cannot be computed at all: no figure, the reason in words
            row = [f.text(f"{p}.title"), *(["-"] * len(figures)), "cannot run at all"]
        else:
            row = [f.text(f"{p}.title"), *(cell(p, name) for name in figures), f.yes_no(f"{p}.ok")]
        if notes:
            row.append(f.text(f"{p}.note"))
        rows.append(tuple(row))
        if mode.applicable and mode.scenario == binding:
            emphasis.append(i)
    header += ["OK", *(["Note"] if notes else [])]
    if notes:
        return Table(header=tuple(header), rows=tuple(rows), note_column=len(header) - 1, emphasis_rows=tuple(emphasis))
    return Table(header=tuple(header), rows=tuple(rows), emphasis_rows=tuple(emphasis), drop=DROP_TABLES)


def _failures(f: Figures) -> Section:
    s = "failure_summary"
    lines = (
        ("Binds first", f.text(f"{s}.binding_reason")),
        ("N+1", f"{f.yes_no(f'{s}.n_plus_one_ok')}: {f.text(f'{s}.availability_note')}"),
    )
    return Section(key="failures", title="The binding failure", blocks=(Lines(items=lines), _failure_rows(f, notes=False)))


def _not_served(f: Figures) -> str:
    """A fleet that cannot carry the peak: its $/M is its cost over the brief's tokens, not the cost of serving them."""
    if f.value("cost.carries_peak"):
        return ""
    at_fix = f.value("cost.usd_per_million_output_tokens_at_fix")
    fix = f"; {f.usd('cost.usd_per_million_output_tokens_at_fix')} on {f.text('fix.fleet')}" if at_fix is not None else ""
    return f" (not the cost of serving: this fleet cannot carry the peak{fix})"


def _cost(f: Figures) -> Section:
    c = "cost"
    rows: tuple[tuple[str, str], ...] = (
        ("Fleet per hour", f.usd(f"{c}.usd_per_hour")),
        ("Fleet per year", f.usd(f"{c}.usd_per_year")),
        ("Per million output tokens", f.usd(f"{c}.usd_per_million_output_tokens") + _not_served(f)),
        ("Per million input tokens", f.usd(f"{c}.usd_per_million_input_tokens")),
    )
    if f.value("objective") is not None:  # two bases: the fleet kept all year at the brief's average load, or hired for the work
        rows = (
            *rows[:2],
            ("Per million output tokens, the fleet kept all year at the brief's average load", rows[2][1]),
            rows[3],
            (
                "Per million output tokens, the fleet paid only while the work runs at full batch",
                f.usd("objective.usd_per_m_output_tokens"),
            ),
            ("Per million tokens (input + output), the same", f.usd("objective.usd_per_m_tokens")),
        )
    return Section(key="cost", title="Cost", blocks=(Table(header=("Cost", "Value"), rows=rows, emphasis_rows=(2,)),))


def _dependencies(f: Figures) -> Section:
    c = "config.dependencies"
    items = tuple((f.text(f"{c}.{i}.what"), f"breaks if {f.text(f'{c}.{i}.breaks_if')}") for i in range(len(f.value(c))))
    return Section(key="dependencies", title="Critical dependencies", blocks=(Lines(items=items),))


def _objective_steps(f: Figures) -> tuple[str, ...]:
    """A design judged on its deadline is confirmed by its pace at the full batch and the work's time, not by latency."""
    o = "objective"
    replica = (
        f"One replica at its full batch: {f.num(f'{o}.batch_per_replica')} sequences running (a closed loop of that many"
        f" requests with the brief's lengths): the plan predicts a {f.num(f'{o}.decode_step_ms', 'ms')} step and"
        f" {f.num(f'{o}.output_tokens_per_s_per_replica', 'output tok/s')}; the simulator's plan check of this brief runs the same load (its objective block)."
    )
    arithmetic = f.value(f"{o}.arithmetic")
    whole = (
        f"The whole job on the fleet: {f.text(f'{o}.arithmetic.job')}; a slower measured pace stretches the time in proportion."
        if "job" in arithmetic
        else f"The whole batch on the fleet: {f.text(f'{o}.arithmetic.makespan')}."
    )
    lost = f"Then take one node away: {f.text(f'{o}.arithmetic.one_node_lost')}."
    return replica, whole, lost


def _validation(f: Figures) -> Section:
    if f.value("objective") is not None:
        measure = "; ".join(f.text(f"config.measure_first.{i}") for i in range(len(f.value("config.measure_first"))))
        return Section(
            key="validation",
            title="Validation: what to measure first, the run that would confirm it",
            blocks=(Lines(items=(("Measure first", measure),)), Bullets(items=_objective_steps(f), numbered=True)),
        )
    op = "operating_point"
    rate, capacity = f.value(f"{op}.rate_per_replica_per_s"), f.value(f"{op}.capacity_rate_per_s")
    if f.value(f"{op}.stable") and rate < capacity:
        replica = (
            f"One replica, the brief's prompt and reply lengths, at {f.num(f'{op}.rate_per_replica_per_s', 'req/s')} (its peak share):"
            f" the plan predicts TPOT {f.num(f'{op}.tpot_ms', 'ms')}, {f.num(f'{op}.in_flight')} sequences in flight,"
            f" {f.num(f'{op}.kv_in_use_gb', 'GB')} of KV in use."
        )
        ramp = (
            f"Raise the rate toward {f.num(f'{op}.capacity_rate_per_s', 'req/s')}: by the plan, {f.text(f'{op}.capacity_reached')};"
            " where that happens is the replica's measured capacity."
        )
    else:  # the peak share is past what a replica carries: measure the capacity from below, then test the fixed design
        replica = (
            f"One replica, the brief's prompt and reply lengths, from a trickle up: by the plan it meets the targets up to"
            f" {f.num(f'{op}.capacity_rate_per_s', 'req/s')}, {f.text(f'{op}.capacity_reached')}; that is its measured capacity."
        )
        past = (
            "the queue grows without bound there"
            if not f.value(f"{op}.stable")
            else f"there p95 TTFT {f.num('slo.ttft_p95_ms', 'ms')} and p95 {_judged_gap(f)} {f.num(f'slo.{_judged_gap(f).lower()}_p95_ms', 'ms')}"
        )
        fix = (
            f"test the change that fixes it instead, {f.text('fix.fleet')}"
            if f.value("fix") is not None
            else "no fleet size fixes it: change the replica or the targets"
        )
        ramp = f"Its peak share, {f.num(f'{op}.rate_per_replica_per_s', 'req/s')}, is past it: by the plan {past}; {fix}."
    fleet = (
        f"Then the fleet test of the fixed design at {f.num('demand.request_rate_per_s', 'req/s')}, with one node drained (its own"
        " plan and document give the figures it must show)."
        if not (f.value(f"{op}.stable") and rate < capacity)
        else f"Fleet: {f.num('demand.request_rate_per_s', 'req/s')} to the {f.num('pools.general_replicas')} general-pool"
        f" {'micro-batch streams' if f.value('pools.streams_per_replica') > 1 else 'replicas'}"
        f" through the router; the plan predicts p95 TTFT {f.num('slo.ttft_p95_ms', 'ms')} and p95 {_judged_gap(f)}"
        f" {f.num(f'slo.{_judged_gap(f).lower()}_p95_ms', 'ms')};"
        f" under {f.num('brief.slo.ttft_p95_ms', 'ms')} and {f.num('brief.slo.itl_p95_ms', 'ms')} confirms the design."
        f" Then drain one node: the plan's N+1 case must hold too."
    )
    measure = "; ".join(f.text(f"config.measure_first.{i}") for i in range(len(f.value("config.measure_first"))))
    return Section(
        key="validation",
        title="Validation: what to measure first, the load test that would confirm it",
        blocks=(Lines(items=(("Measure first", measure),)), Bullets(items=(replica, ramp, fleet), numbered=True)),
    )


# --- the appendix: the arithmetic behind the page ------------------------------------------------------


def _capacity(f: Figures) -> Section:
    def row(label: str, section: str, key: str, shown: str, arith_key: str | None = None) -> tuple[str, str, str]:
        return (label, shown, _arith(f, section, arith_key or key))

    rows = [
        row("Request rate", "demand", "request_rate_per_s", f.num("demand.request_rate_per_s", "req/s")),
        row("Generating at once", "demand", "generating_sequences", f.num("demand.generating_sequences", "sequences")),
        row("Input tokens", "demand", "input_tokens_per_s", f.num("demand.input_tokens_per_s", "tok/s")),
        row("Output tokens", "demand", "output_tokens_per_s", f.num("demand.output_tokens_per_s", "tok/s")),
        row(
            "Prefill after prefix cache",
            "demand",
            "prefill_tokens_per_s_after_cache",
            f.num("demand.prefill_tokens_per_s_after_cache", "tok/s"),
        ),
        row("Weights per GPU", "memory", "weights_gb_per_gpu", f.num("memory.weights_gb_per_gpu", "GB")),
        row("KV cache per GPU", "memory", "kv_gb_per_gpu", f.num("memory.kv_gb_per_gpu", "GB")),
        row("KV per token per GPU", "memory", "kv_bytes_per_token_per_gpu", f.num("memory.kv_bytes_per_token_per_gpu", "B")),
        row("KV room per replica", "memory", "max_sequences_per_replica", f.num("memory.max_sequences_per_replica", "sequences")),
        row("Sizing batch per replica", "capacity", "batch_per_replica", f.num("capacity.batch_per_replica", "sequences")),
        row("Decode step at the sizing batch, ideal", "capacity", "decode_step_ideal_ms", f.num("capacity.decode_step_ideal_ms", "ms")),
        row("Decode step at the sizing batch, real", "capacity", "decode_step_ms", f.num("capacity.decode_step_ms", "ms")),
        row("Decode capacity (fleet)", "capacity", "decode_tokens_per_s", f.num("capacity.decode_tokens_per_s", "tok/s")),
        row("Prefill capacity (fleet)", "capacity", "prefill_tokens_per_s", f.num("capacity.prefill_tokens_per_s", "tok/s")),
        row("Prefill share of GPU time", "capacity", "prefill_fraction", f.pct("capacity.prefill_fraction")),
        row("Decode share of GPU time", "capacity", "decode_fraction", f.pct("capacity.decode_fraction")),
        row("Utilization", "capacity", "utilization", f.pct("capacity.utilization")),
        row("Without prefix cache", "capacity", "utilization_no_prefix_cache", f.pct("capacity.utilization_no_prefix_cache")),
        row("Binding resource", "capacity", "binding_constraint", f.text("capacity.binding_constraint")),
    ]
    emphasis = tuple(i for i, r in enumerate(rows) if r[0] in ("Utilization", "Binding resource"))
    return Section(
        key="capacity",
        title="Capacity: demand, memory, utilization",
        blocks=(Table(header=("Figure", "Value", "Arithmetic"), rows=tuple(rows), note_column=2, emphasis_rows=emphasis),),
    )


def _operating_point(f: Figures) -> Section:
    op = "operating_point"
    pool = "decode" if f.value("disaggregation") is not None else "general-pool"  # disaggregated: the decode pool's replica
    rows = [
        (f"Load per {pool} replica", f.num(f"{op}.rate_per_replica_per_s", "req/s"), _arith(f, op, "rate_per_replica_per_s")),
        ("In flight (Little's law)", f.num(f"{op}.in_flight", "sequences"), _arith(f, op, "in_flight")),
        ("TPOT at this load", f.num(f"{op}.tpot_ms", "ms"), _arith(f, op, "tpot_ms")),
        ("KV in use", f.num(f"{op}.kv_in_use_gb", "GB"), _arith(f, op, "kv_in_use_gb")),
        ("Capacity under the SLO", f.num(f"{op}.capacity_rate_per_s", "req/s"), _arith(f, op, "capacity_rate_per_s")),
        ("Load / capacity under the SLO", f.pct(f"{op}.load_vs_capacity"), ""),
        ("Headroom", "x" + f.num("headroom.multiple"), f.text("headroom.text")),
    ]
    return Section(
        key="operating_point",
        title=f"Operating point: one {pool} replica",
        blocks=(Table(header=("Figure", "Value", "Arithmetic"), rows=tuple(rows), note_column=2),),
    )


def _waterfall(f: Figures, name: str, title: str) -> Waterfall:
    s = "slo"
    steps = tuple(
        (
            f.text(f"{s}.{name}_waterfall.{i}.component"),
            f.num(f"{s}.{name}_waterfall.{i}.ms", "ms"),
            float(f.value(f"{s}.{name}_waterfall.{i}.ms")),
        )
        for i in range(len(f.value(f"{s}.{name}_waterfall")))
    )
    judged: tuple[tuple[str, str], ...] = (("target", f"{s}.{name}_target_ms"),)
    if f.value("objective") is not None:  # an offline job or a rollout: its deadline judges it, no latency target
        judged = ()
    elif name == "itl" and f.value(f"{s}.itl_metric") == "tpot":  # the target judges each reply's mean gap, not these gaps
        judged = (("p95 TPOT (what the target judges)", f"{s}.tpot_p95_ms"), ("target (on p95 TPOT)", f"{s}.itl_target_ms"))
    marks = tuple(
        (mark, f.num(path, "ms"), float(f.value(path)))
        for mark, path in (("p50", f"{s}.{name}_p50_ms"), ("p95", f"{s}.{name}_p95_ms"), *judged)
    )
    return Waterfall(title=title, steps=steps, marks=marks, **_p95_range(f, f"{s}.{name}_p95_ms"))


_OUTSIDE_THE_DATA = "none, the setup lies outside the calibrated data"  # said instead of a range (planner.uncertainty)


def _p95_range(f: Figures, figure: str) -> dict[str, Any]:
    """The chart's range on a p95 (planner.uncertainty's band, in the app's legend), or, where the setup lies outside
    the calibrated data, a note instead: its band there is the widest spread doubled, a guess a chart would show as
    a measured range. Nothing when the p95 has no band (an unbounded queue)."""
    u = f.value("uncertainty")
    index = next((i for i, b in enumerate(u.bands) if b.figure == figure), None)
    if index is None:
        return {}
    if not u.calibrated:
        return {"band_note": f"{u.legend}: {_OUTSIDE_THE_DATA}"}
    low, high = f"uncertainty.bands.{index}.low", f"uncertainty.bands.{index}.high"
    shown = f"{f.num(low, 'ms')} to {f.num(high, 'ms')}" + _plan_error(f, index, short=True)
    return {"band": (f"{u.legend} of the p95", shown, float(f.value(low)), float(f.value(high)))}


def _p95_ranges(f: Figures) -> list[str]:
    """Where the real engine's p95s fall (planner.uncertainty): 'p95 TTFT 86.3 ms to 135 ms', for the TTFT and the
    judged gap metric, where the plan bands them."""
    s = "slo"
    judged = f.value(f"{s}.itl_metric").value
    wanted = {f"{s}.ttft_p95_ms": "p95 TTFT", f"{s}.{judged}_p95_ms": f"p95 {judged.upper()}"}
    return [
        f"{wanted[b.figure]} {f.num(f'uncertainty.bands.{i}.low', 'ms')} to {f.num(f'uncertainty.bands.{i}.high', 'ms')}"
        + _plan_error(f, i)
        for i, b in enumerate(f.value("uncertainty.bands"))
        if b.figure in wanted and math.isfinite(b.low) and math.isfinite(b.high)
    ]


def _plan_error(f: Figures, index: int, *, short: bool = False) -> str:
    """Why a range leaves out the plan's own p95 (planner.uncertainty.outside_note, in the plan's figures): ': the
    plan's 85.6 ms under-predicts it by 0.8% to 57.8%', or for a chart's legend row ' (plan 0.8% to 57.8% low)'."""
    band = f"uncertainty.bands.{index}"
    error = f.value(f"{band}.plan_error")
    if not error:
        return ""
    near, far = f.pct(f"{band}.plan_error_near"), f.pct(f"{band}.plan_error_far")
    if short:
        return f" (plan {near} to {far} {'low' if error == 'under' else 'high'})"
    return f": the plan's {f.num(f'{band}.value', 'ms')} {error}-predicts it by {near} to {far}"


def _error_bands(f: Figures) -> tuple[str, str] | None:
    """The ranges with their basis: how far the planner missed measurements it had not seen."""
    ranges = _p95_ranges(f)
    if not ranges:
        return None
    return f"{f.pct('uncertainty.coverage')} range", "; ".join(ranges) + f" ({f.text('uncertainty.basis')})"


def _page_ranges(f: Figures) -> tuple[Lines, ...]:
    """The page's line of ranges, in the app's legend (the verdict bar's and the charts' words); outside the calibrated
    data it says so instead (the band there is the widest spread doubled, not a measured range). The first to leave a
    crowded print."""
    u = f.value("uncertainty")
    ranges = _p95_ranges(f)
    if not ranges:
        return ()
    text = "; ".join(ranges) if u.calibrated else _OUTSIDE_THE_DATA
    return (Lines(items=((u.legend, text),), drop=DROP_RANGES),)


def _slo_budget(f: Figures) -> Section:
    s = "slo"
    bands = _error_bands(f)
    return Section(
        key="slo_budget",
        title="SLO budget: the latency waterfalls and the model"
        if f.value("objective") is None
        else "Latency, for reference (no target): the waterfalls and the model",
        blocks=(
            _waterfall(f, "ttft", "Time to first token, mean path"),
            _waterfall(f, "itl", "Inter-token latency"),
            Lines(
                items=(
                    ("Queue", f.text(f"{s}.queue_model")),
                    ("Percentiles", f.text(f"{s}.percentile_method")),
                    ("Basis", f.text(f"{s}.basis")),
                    *((bands,) if bands else ()),
                )
            ),
        ),
    )


def _failure_modes(f: Figures) -> Section:
    basis = Lines(items=(("Basis", f.text("failure_summary.load_scaling")),))
    return Section(key="failure_modes", title="Failure modes, each re-planned", blocks=(_failure_rows(f, notes=True), basis))


def _cost_arithmetic(f: Figures) -> Section:
    c = "cost"
    rows = (
        ("Fleet per hour", f.usd(f"{c}.usd_per_hour"), _arith(f, c, "usd_per_hour")),
        ("Fleet per year", f.usd(f"{c}.usd_per_year"), _arith(f, c, "usd_per_year")),
        ("Output tokens per year", f.num(f"{c}.output_tokens_per_year"), _arith(f, c, "output_tokens_per_year")),
        ("Per million output tokens", f.usd(f"{c}.usd_per_million_output_tokens"), _arith(f, c, "usd_per_million_output_tokens")),
        ("Per million input tokens", f.usd(f"{c}.usd_per_million_input_tokens"), _arith(f, c, "usd_per_million_input_tokens")),
    )
    levers = tuple(
        (
            f.text(f"{c}.levers.{i}.name"),
            f.usd(f"{c}.levers.{i}.usd_per_million_output_tokens"),
            f.text(f"{c}.levers.{i}.change"),
            f.text(f"{c}.levers.{i}.arithmetic"),
        )
        for i in range(len(f.value(f"{c}.levers")))
    )
    return Section(
        key="cost_arithmetic",
        title="Cost: the arithmetic and the levers",
        blocks=(
            Table(header=("Figure", "Value", "Arithmetic"), rows=rows, note_column=2, emphasis_rows=(3,)),
            Table(header=("Lever", "$/M output", "Change", "Arithmetic"), rows=levers, note_column=3),
        ),
    )


def _decisions(f: Figures) -> Section:
    a = "architecture"
    pools = tuple(
        (
            f.text(f"{a}.pools.{i}.name"),
            f.num(f"{a}.pools.{i}.nodes"),
            f.num(f"{a}.pools.{i}.replicas"),
            f.pct(f"{a}.pools.{i}.utilization"),
            f.text(f"{a}.pools.{i}.role"),
        )
        for i in range(len(f.value(f"{a}.pools")))
    )
    decisions = tuple(
        (f.text(f"{a}.{group}.{i}.decision"), f.text(f"{a}.{group}.{i}.why"))
        for group in ("decisions", "routing")
        for i in range(len(f.value(f"{a}.{group}")))
    )
    return Section(
        key="decisions",
        title="Architecture: pools, decisions and routing",
        blocks=(
            Table(header=("Pool", "Nodes", "Replicas", "Busy", "Role"), rows=pools, note_column=4),
            Table(header=("Decision", "Why"), rows=decisions, note_column=1),
        ),
    )


def _flags(f: Figures) -> Section:
    c = "config"
    flags = tuple(
        (f.text(f"{c}.flags.{i}.flag"), f.text(f"{c}.flags.{i}.value"), f.text(f"{c}.flags.{i}.why"))
        for i in range(len(f.value(f"{c}.flags")))
    )
    blocks: tuple[Block, ...] = (Table(header=("Flag", "Value", "Why"), rows=flags, note_column=2),)
    if f.value(f"{c}.prefill_command") is not None:  # disaggregated: the prefill pool's own command
        blocks += (Lines(items=(("Prefill pool", "its command"),)), Code(text=f.text(f"{c}.prefill_command"), wrap=True))
    return Section(key="flags", title="Engine flags, each with its reason", blocks=blocks)


def _variation_arithmetic(f: Figures) -> Section:
    v = "variation"
    findings = tuple(
        (
            f.text(f"{v}.findings.{i}.label"),
            f"{_by_unit(f, f'{v}.findings.{i}.value', f.value(f'{v}.findings.{i}.unit'))} ({f.text(f'{v}.findings.{i}.arithmetic')})",
        )
        for i in range(len(f.value(f"{v}.findings")))
    )
    options = tuple((f.text(f"{v}.options.{i}.name"), f.text(f"{v}.options.{i}.change")) for i in range(len(f.value(f"{v}.options"))))
    diff = tuple(
        (
            f.label(f.value(f"{v}.diff.{i}.figure")),  # the registry's name of the figure (planner.figures), never its path
            f.figure(f"{v}.diff.{i}.baseline", f.value(f"{v}.diff.{i}.figure")),
            f.figure(f"{v}.diff.{i}.value", f.value(f"{v}.diff.{i}.figure")),
            f.change(f"{v}.diff.{i}.change_pct"),
        )
        for i in range(len(f.value(f"{v}.diff")))
    )
    blocks: list[Block] = [Lines(items=findings)] if findings else []
    if options:
        blocks.append(Table(header=("Option", "Change"), rows=options, note_column=1))
    if diff:
        blocks.append(Table(header=("Against the capstone", "Capstone", "This design", "Change"), rows=diff))
    return Section(
        key="variation_arithmetic", title="Variation: findings, options and the difference to the capstone", blocks=tuple(blocks)
    )


def _by_unit(f: Figures, path: str, unit: str) -> str:
    """A figure whose unit the planner states beside it: fractions as percentages, dollars, the rest with the unit."""
    if unit == "fraction":
        return f.pct(path)
    if unit.startswith("$"):
        return f.usd(path, unit.removeprefix("$").strip())
    return f.num(path, unit)


def _assumptions(f: Figures) -> Section:
    count = len(f.value("brief.assumptions"))
    items = tuple(f.text(f"brief.assumptions.{i}") for i in range(count))
    if not items:
        items = ("The brief states no assumptions beyond its inputs.",)
    return Section(key="assumptions", title="Assumptions", blocks=(Bullets(items=items),))


def build_document(design: Any, name: DesignName | None = None) -> Document:
    """The document for one Design: the page, then the appendix. `name` is the design's name (planner.naming,
    which knows whether the design was edited from its brief); without it the brief's own title and description."""
    f = Figures(design)
    name = name or design_name(design.brief)
    has_variation = f.value("variation") is not None
    has_scale_out = f.value("scale_out") is not None
    has_conclusion = f.value("conclusion") is not None
    page = (
        _workload(f),
        _verdict(f),
        *((_variation(f),) if has_variation else ()),
        *((_mechanisms(f, design),) if has_conclusion and not has_variation else ()),
        *((_mechanism(f),) if f.value("mechanism_conclusion") is not None else ()),
        _architecture(f, design),
        _engine_config(f),
        _slo(f),
        _failures(f),
        _cost(f),
        _dependencies(f),
        _validation(f),
    )
    has_speculation = f.value("speculative") is not None
    appendix = (
        *((_variation_arithmetic(f),) if has_variation else ()),
        *((_mechanism_arithmetic(f),) if has_speculation else ()),
        *((_mechanisms(f, design),) if has_conclusion and has_variation else ()),  # the variation's own section leads the page
        _capacity(f),
        _operating_point(f),
        _slo_budget(f),
        _failure_modes(f),
        _cost_arithmetic(f),
        _decisions(f),
        _flags(f),
        *((_scale_out_arithmetic(f),) if has_scale_out else ()),
        _assumptions(f),
    )
    return Document(title=name.title, subtitle=name.description, summary=_summary(f), sections=page, appendix=appendix, figures=f.used)
