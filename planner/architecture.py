"""Step 4a of the method: the serving architecture. Pools, the decisions behind them, routing, and a diagram.

The diagram is Graphviz DOT text drawn from the pool list: one box per pool with its nodes, replicas, TP,
precision and load at peak, filled by its load level (see LOAD_COLORS and LOAD_LEGEND, which the app and the
design document print beside it). Two layouts of one picture: `dot` runs left to right with the pools stacked
(a wide screen and the printed page), `dot_narrow` stacks everything (a phone). Graphviz itself runs in the
export layer (report.diagram), never in the browser.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, replace
from functools import cached_property
from html import escape

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, computed_field

from planner.brief import Brief, KvPrecision, Precision
from planner.cached import CachingModel
from planner.capacity import Demand
from planner.catalog import gpu_spec
from planner.disagg import DisaggAnalysis, link_gbps_per_gpu
from planner.fmt import num, pct
from planner.pools import LONG_PROMPT_FACTOR, SIZING_UTILIZATION, Load, load_of
from planner.quantization import prefill_peak, weight_scheme
from planner.replica import ReplicaShape
from planner.trusted import trusted

__all__ = [
    "DIAGRAM_FONT_PT",
    "LOAD_COLORS",
    "LOAD_COLOR_NAMES",
    "LOAD_LEGEND",
    "LOAD_WORDS",
    "LONG_PROMPT_FACTOR",
    "Architecture",
    "Decision",
    "Pool",
    "architecture",
    "diagram_dot",
    "long_context_utilization",
]


DIAGRAM_FONT_PT = 12  # the boxes' type in Graphviz points: a page scales the drawing to set it at its own size
GATEWAY_NODES = 6  # CPU nodes: auth, rate limit, tokenization, SSE streaming
ROUTER_NODES = 3  # CPU nodes: prefix-aware routing with session affinity

LOAD_COLORS: dict[Load, tuple[str, str]] = {  # (fill, border) of a pool's box at each load level
    Load.ok: ("#dafbe1", "#1a7f37"),
    Load.near: ("#fff1c2", "#9a6700"),
    Load.over: ("#ffd8d3", "#b42318"),
    Load.idle: ("#f6f8fa", "#8c959f"),
}
LOAD_COLOR_NAMES = {Load.ok: "green", Load.near: "amber", Load.over: "red", Load.idle: "grey, dashed"}  # the legend in plain text
LOAD_WORDS = {Load.over: "OVER capacity", Load.near: "near the limit"}  # said in the box too: colour is not the only cue
LOAD_LEGEND: tuple[tuple[Load, str], ...] = (
    (Load.ok, f"under {pct(SIZING_UTILIZATION)} at peak"),
    (Load.near, f"{pct(SIZING_UTILIZATION)} to 100%: near the limit"),
    (Load.over, "over 100%: cannot carry the peak"),
    (Load.idle, "spare, idle until a node fails"),
)


DEADLINE_BASIS = "deadline"  # a job judged on its deadline: the general pool's load is the share of it the work takes


class _Model(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class Pool(_Model):
    """One pool of GPU nodes: what the pool table lists and the diagram draws as one box."""

    name: str = Field(description="The pool's name: general, long-context, spare/canary (prefill, decode when disaggregated).")
    nodes: int = Field(description="GPU nodes in the pool.")
    replicas: int = Field(description="Engine replicas the pool runs.")
    replicas_per_node: int = Field(description="Replicas on one node (GPUs per node / TP).")
    tp: int = Field(description="Tensor-parallel degree: GPUs per replica, inside one node.")
    weights: Precision = Field(description="Weight precision the replicas run.")
    kv_cache: KvPrecision = Field(description="KV-cache precision the replicas run.")
    role: str = Field(description="What the pool is for.")
    route: str = Field(description="Which requests reach the pool (the diagram's arrow label).")
    upstream: str | None = Field(
        default=None,
        description="The pool whose requests this one continues (a decode pool after its prefill pool); None: the router feeds it.",
    )
    utilization: float = Field(
        description="Share of the pool's capacity the peak load takes (0 for the idle spare), see utilization_basis."
    )
    utilization_basis: str = Field(
        description="What the utilization is a share of ('SLO capacity', 'GPU time', 'deadline': the work's time); empty for an idle pool."
    )
    load: Load = Field(description="The load level the diagram colours: over 100%, near the limit, fine, or idle.")
    pp: int = Field(default=1, description="Pipeline stages of a replica, each on its own node (1 = none).")
    ep: int = Field(default=1, description="Expert-parallel degree: GPUs a replica's routed experts spread over (1 = none).")
    dp_attention: bool = Field(default=False, description="Whether attention runs data-parallel in EP / TP groups of each stage.")
    replica_nodes: int = Field(default=1, description="Nodes one replica spans: PP stages x the nodes of a stage.")

    @property
    def load_text(self) -> str:
        """The load at peak: '27.0% of SLO capacity at peak', '87.9% of GPU time at peak', or 'idle at peak'."""
        if self.load is Load.idle:
            return "idle at peak"
        if self.utilization_basis == DEADLINE_BASIS:
            return (
                f"the work takes {pct(self.utilization)} of its deadline" if math.isfinite(self.utilization) else "the work never finishes"
            )
        if not math.isfinite(self.utilization):
            return f"more than its {self.utilization_basis} at peak: no steady state"
        return f"{pct(self.utilization)} of {self.utilization_basis} at peak"


class Decision(_Model):
    decision: str
    why: str


Extras = Callable[[], tuple[list[str], list[Decision]]]  # a mechanism's diagram lines and decisions (mechanism_diagram)


@dataclass(frozen=True)
class _Words:
    """What an architecture's decisions, routing and diagram are written from: written the first time they are read (a
    page, the JSON, the document), so a plan pays for its numbers alone."""

    brief: Brief
    multi_node_shape: ReplicaShape | None  # a replica over several nodes or expert-parallel: its decisions (None: neither)
    tp: int
    replicas: int  # engine replicas of the whole fleet
    weights_gb_per_gpu: float
    unchunked_prefill_p95_ms: float
    fleet_utilization: float
    fleet_utilization_no_prefix_cache: float
    long_context_nodes: int
    spare_nodes: int
    disaggregation: DisaggAnalysis | None
    extras: Extras | None = None  # the mechanisms' boxes and decisions, after the pools' (None: every mechanism off)


class Architecture(CachingModel):
    """The pools with their loads (worked out by plan()); the decisions, routing and diagram written on first read."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    pools: tuple[Pool, ...]
    gateway_nodes: int
    router_nodes: int
    _words: _Words = PrivateAttr()

    @computed_field  # type: ignore[prop-decorator]
    @cached_property
    def decisions(self) -> tuple[Decision, ...]:
        """The decisions behind the pools and the replica, each with its reason (the mechanisms' last)."""
        extra = self._extras[1] if self._words.extras is not None else []
        return (*_decisions(self._words), *extra)

    @computed_field  # type: ignore[prop-decorator]
    @cached_property
    def routing(self) -> tuple[Decision, ...]:
        """How the router sends requests to replicas and pools."""
        return _routing(self._words.brief.workload.long_context_threshold_tokens, self._words.long_context_nodes)

    @computed_field(  # type: ignore[prop-decorator]
        description="The diagram as Graphviz DOT, left to right with the pools stacked (wide screens, the printed page)."
    )
    @cached_property
    def dot(self) -> str:
        return self._dots[0]

    @computed_field(description="The same diagram stacked top to bottom (a phone's width).")  # type: ignore[prop-decorator]
    @cached_property
    def dot_narrow(self) -> str:
        return self._dots[1]

    @cached_property
    def _extras(self) -> tuple[list[str], list[Decision]]:
        assert self._words.extras is not None
        return self._words.extras()

    @cached_property
    def _dots(self) -> tuple[str, str]:
        dots = _diagram_dots(self.pools, self.gateway_nodes, self.router_nodes)
        if self._words.extras is None:
            return dots
        lines = self._extras[0]
        return _with_lines(dots[0], lines), _with_lines(dots[1], lines)

    def with_extras(self, extras: Extras) -> Architecture:
        """The same architecture with a mechanism's boxes and decisions added after the pools' (written on first read)."""
        with_them = trusted(Architecture, pools=self.pools, gateway_nodes=self.gateway_nodes, router_nodes=self.router_nodes)
        with_them._words = replace(self._words, extras=extras)
        return with_them


def _with_lines(dot: str, lines: list[str]) -> str:
    body = dot.rstrip().removesuffix("}")
    return body + "\n".join(lines) + "\n}\n"


def long_context_utilization(brief: Brief, shape: ReplicaShape, dem: Demand, replicas: int, share: float | None = None) -> float:
    """Share of the long-context pool's GPU time its requests take: prefill after cache hits plus decode."""
    w = brief.workload
    share = w.long_context_share if share is None else share
    if replicas <= 0 or share <= 0:
        return 0.0
    prompt = LONG_PROMPT_FACTOR * w.long_context_threshold_tokens
    rate = dem.request_rate_per_s * share / replicas
    prefill = rate * prompt * (1 - brief.effective_hit_rate) / shape.prefill_tokens_per_s
    batch = max(dem.generating_sequences * share / replicas, 1.0)
    if not math.isfinite(batch):  # the sizing relation has no steady state at this load
        return math.inf
    decode = rate * w.output_tokens_mean * shape.decode_step_real_s(batch, prompt + w.output_tokens_mean / 2) / batch
    return prefill + decode


def architecture(
    brief: Brief,
    *,
    general_nodes: int,
    long_context_nodes: int,
    spare_nodes: int,
    replicas_per_node: int,
    tp: int,
    weights_gb_per_gpu: float,
    general_utilization: float,
    long_context_utilization: float,
    unchunked_prefill_p95_ms: float,
    fleet_utilization: float,
    fleet_utilization_no_prefix_cache: float,
    shape: ReplicaShape | None = None,
    disaggregation: DisaggAnalysis | None = None,
    general_basis: str = "SLO capacity",
) -> Architecture:
    """The pools, with the decisions, routing and diagram written on first read. With `shape`, replicas may span nodes
    (pipeline stages, EP over nodes): a pool counts whole replicas of shape.replica_nodes nodes."""
    hw, dep, w = brief.hardware, brief.deployment, brief.workload
    threshold = num(w.long_context_threshold_tokens, "tokens")
    multi = shape is not None and (shape.pp > 1 or shape.ep > 1)

    def engine_replicas(nodes: int) -> int:
        return shape.replicas_in(nodes) // shape.pp if shape is not None else nodes * replicas_per_node

    def pool(name: str, nodes: int, role: str, route: str, utilization: float, basis: str) -> Pool:
        parallel = (
            {"pp": shape.pp, "ep": shape.ep, "dp_attention": shape.attention_groups > 1, "replica_nodes": shape.replica_nodes}
            if shape is not None and multi
            else {}
        )
        return trusted(
            Pool,
            name=name,
            nodes=nodes,
            replicas=engine_replicas(nodes),
            replicas_per_node=replicas_per_node,
            **parallel,
            tp=tp,
            weights=dep.weights,
            kv_cache=dep.kv_cache,
            role=role,
            route=route,
            utilization=utilization,
            utilization_basis=basis,
            load=load_of(utilization, serving=bool(basis)),
        )

    # the general pool's load against its replicas' capacity under the SLO; the long-context pool's busy GPU time
    pools = [
        pool(
            "general",
            general_nodes,
            f"chat traffic up to {threshold} of prompt",
            f"prompts up to {threshold}" if long_context_nodes else "every request",
            general_utilization,
            general_basis,
        )
    ]
    if disaggregation is not None:
        pools = list(_disaggregated_pools(brief, disaggregation, tp))
    if long_context_nodes:
        pools.append(
            pool(
                "long-context",
                long_context_nodes,
                f"prompts over {threshold} ({pct(w.long_context_share)} of requests)",
                f"prompts over {threshold}",
                long_context_utilization,
                "GPU time",
            )
        )
    if spare_nodes:
        pools.append(
            pool("spare/canary", spare_nodes, "N+1 for a failed node; canary target for rollouts", "a failed node's share", 0.0, "")
        )
    arch = trusted(Architecture, pools=tuple(pools), gateway_nodes=GATEWAY_NODES, router_nodes=ROUTER_NODES)
    arch._words = _Words(
        brief=brief,
        multi_node_shape=shape if multi else None,
        tp=tp,
        replicas=engine_replicas(hw.nodes),
        weights_gb_per_gpu=weights_gb_per_gpu,
        unchunked_prefill_p95_ms=unchunked_prefill_p95_ms,
        fleet_utilization=fleet_utilization,
        fleet_utilization_no_prefix_cache=fleet_utilization_no_prefix_cache,
        long_context_nodes=long_context_nodes,
        spare_nodes=spare_nodes,
        disaggregation=disaggregation,
    )
    return arch


def _decisions(words: _Words) -> list[Decision]:
    """The decisions behind the pools and the replica (Architecture.decisions, before the mechanisms')."""
    brief, tp, replicas = words.brief, words.tp, words.replicas
    hw, dep, w = brief.hardware, brief.deployment, brief.workload
    long_context_nodes, spare_nodes = words.long_context_nodes, words.spare_nodes
    gpu = gpu_spec(hw.gpu)
    scheme = weight_scheme(dep.weights, gpu)
    peak = prefill_peak(dep.weights, brief.efficiency.compute_peak, gpu)  # the peak the capacity is sized at
    decisions = [
        Decision(
            decision=f"TP={tp}, DP={replicas}",
            why=f"TP={tp} stays inside one {hw.gpus_per_node}-GPU {gpu.scale_up_domain} (every layer's all-reduce"
            f" stays on its links, {num(gpu.interconnect_gb_per_s, 'GB/s')} a GPU each way); crossing nodes would put it"
            f" on the network, {num(gpu.scale_out_gb_per_s, 'GB/s')} a GPU; data parallelism across {replicas} replicas adds throughput",
        ),
        *(parallel_decisions(brief, words.multi_node_shape) if words.multi_node_shape is not None else []),
        Decision(
            decision=f"{scheme.scheme} weights",
            why=f"{num(words.weights_gb_per_gpu, 'GB')} per GPU; {peak.why}",
        ),
        Decision(
            decision=f"{dep.kv_cache.value.upper()} KV cache",
            why="twice the sequences per GB and half the KV bytes per decode step"
            if dep.kv_cache is KvPrecision.fp8
            else "KV in the model's precision",
        ),
    ]
    if dep.prefix_caching:
        decisions.append(
            Decision(
                decision="prefix caching on",
                why=f"chat re-sends its history every turn: {pct(w.prefix_hit_rate)} of prompt tokens hit; utilization"
                f" {pct(words.fleet_utilization)} with it, {pct(words.fleet_utilization_no_prefix_cache)} without",
            )
        )
    if dep.chunked_prefill:
        decisions.append(
            Decision(
                decision=f"chunked prefill, {dep.max_num_batched_tokens} tokens per step",
                why=f"an unchunked p95 prompt ({num(w.input_tokens_p95, 'tokens')}) holds the GPU for {num(words.unchunked_prefill_p95_ms, 'ms')},"
                " stalling every running sequence",
            )
        )
    if words.disaggregation is not None:
        dis = words.disaggregation
        decisions.append(
            Decision(
                decision=f"prefill/decode disaggregation: {dis.prefill_nodes} prefill + {dis.decode_nodes} decode nodes",
                why=f"{dis.comparison.verdict}; each prompt's KV ({num(dis.kv_transfer_mb_mean, 'MB')}) crosses the network in"
                f" {num(dis.transfer_ms_mean, 'ms')}",
            )
        )
    if long_context_nodes:
        decisions.append(
            Decision(
                decision=f"separate long-context pool ({long_context_nodes} node{'s' if long_context_nodes > 1 else ''})",
                why="a very long prompt takes many times the KV and blocks prefill; segregating it protects the general pool's tail latency",
            )
        )
    if spare_nodes:
        decisions.append(
            Decision(
                decision=f"{spare_nodes} spare node{'s' if spare_nodes > 1 else ''}",
                why=f"N+1 for the {pct(brief.slo.availability)} availability target, and the canary for rolling one node at a time",
            )
        )
    return decisions


def _routing(threshold_tokens: int, long_context_nodes: int) -> tuple[Decision, ...]:
    return (
        Decision(
            decision="prefix-aware routing",
            why="send a prompt to the replica that already holds its prefix; random routing hits ~1/replicas as often",
        ),
        Decision(decision="session affinity by conversation id", why="every turn of a conversation lands where its history is cached"),
        Decision(decision="least KV load within the affinity group", why="balances new conversations without breaking affinity"),
        Decision(
            decision=f"prompts over {num(threshold_tokens, 'tokens')} to the long-context pool"
            if long_context_nodes
            else "no long-context pool: long prompts share the general pool",
            why="keeps the general pool's batches and prefill queue short"
            if long_context_nodes
            else "the brief reserves no nodes for them",
        ),
    )


def parallel_decisions(brief: Brief, shape: ReplicaShape) -> list[Decision]:
    """The decisions behind a multi-node replica: pipeline stages, expert parallelism and DP attention, with their costs."""
    hw, m = brief.hardware, shape.model
    k = shape.step
    out = []
    if shape.pp > 1:
        out.append(
            Decision(
                decision=f"PP={shape.pp}: a replica is {shape.pp} stages of TP={shape.tp}, one node each",
                why=f"{num(shape.weights_gb_per_gpu * shape.pp, 'GB')} of weights a GPU in one stage"
                f" {'would not fit its' if shape.weights_gb_per_gpu * shape.pp > shape.usable_gb_per_gpu else 'would crowd the KV out of its'}"
                f" {num(shape.gpu.memory_gb, 'GB')};"
                f" {shape.pp} stages hold {num(shape.weights_gb_per_gpu, 'GB')} a GPU. Each step crosses {shape.pp - 1} stage boundar"
                f"{'y' if shape.pp == 2 else 'ies'} over {num(hw_network_gb_per_s(shape), 'GB/s')} a GPU of network"
                f" ({num(k.pp_latency_s * 1e6, 'us')} latency); a token's latency is the sum of the stages,"
                f" the throughput {shape.pp} micro-batches' (one in each stage)",
            )
        )
    if shape.ep > 1:
        span = "over the network" if shape.gpus > hw.gpus_per_node else f"over the node's {shape.gpu.scale_up_domain}"
        groups = (
            f"; attention data-parallel in {shape.attention_groups} groups of TP={shape.tp}, each with its own sequences' KV"
            if shape.attention_groups > 1
            else ""
        )
        out.append(
            Decision(
                decision=f"EP={shape.ep} over {_plural(max(shape.gpus // hw.gpus_per_node, 1), 'node')}"
                + (f", DP attention x{shape.attention_groups}" if shape.attention_groups > 1 else ""),
                why=f"{m.experts} routed experts, {num(m.experts / shape.gpus)} a GPU{groups}; each MoE layer's dispatch and combine"
                f" all-to-all ({m.experts_per_token} copies of each token, FP8 out, BF16 back) runs {span}:"
                f" {num(k.a2a_s_per_token * 1e6, 'us')} a token and {num(k.a2a_latency_s * 1e3, 'ms')} of latency a step"
                f" over {m.moe_layers} MoE layers",
            )
        )
    return out


def hw_network_gb_per_s(shape: ReplicaShape) -> float:
    """The scale-out bandwidth a GPU sends a stage's activations over (the GPU's NIC)."""
    return shape.gpu.scale_out_gb_per_s


def _disaggregated_pools(brief: Brief, dis: DisaggAnalysis, tp: int) -> tuple[Pool, Pool]:
    """The general pool split in two: prefill (fed by the router) and decode (fed by the prefill pool's KV)."""
    dep, gpn = brief.deployment, brief.hardware.gpus_per_node
    link = f"{num(link_gbps_per_gpu(brief))} Gb/s a GPU"
    decode_load = dis.decode_batch / dep.max_num_seqs if math.isfinite(dis.decode_batch) else math.inf
    prefill = trusted(
        Pool,
        name="prefill",
        nodes=dis.prefill_nodes,
        replicas=dis.prefill_replicas,
        replicas_per_node=gpn // dis.prefill_tp,
        tp=dis.prefill_tp,
        weights=dep.weights,
        kv_cache=dep.kv_cache,
        role="prefill",
        route="every prompt",
        utilization=dis.prefill_busy,
        utilization_basis="GPU time",
        load=load_of(dis.prefill_busy),
    )
    decode = trusted(
        Pool,
        name="decode",
        nodes=dis.decode_nodes,
        replicas=dis.decode_replicas,
        replicas_per_node=gpn // tp,
        tp=tp,
        weights=dep.weights,
        kv_cache=dep.kv_cache,
        role="decode",
        route=f"KV transfer, {link}: {num(dis.transfer_ms_mean, 'ms')} a prompt",
        upstream="prefill",
        utilization=decode_load,
        utilization_basis="batch slots",
        load=load_of(decode_load),
    )
    return prefill, decode


def _plural(count: int, word: str) -> str:
    return f"{num(count)} {word}{'' if count == 1 else 's'}"


def _html_label(lines: list[str]) -> str:
    """A Graphviz HTML-like label: the lines escaped, the first in bold (what the box is)."""
    parts = [escape(line, quote=False) for line in lines]
    parts[0] = f"<B>{parts[0]}</B>"
    return "<" + "<BR/>".join(parts) + ">"


def _attrs(attrs: list[str]) -> str:
    return f" [{', '.join(attrs)}]" if attrs else ""


def _span_line(pool: Pool) -> str:
    """How a multi-node replica is laid out: '1 replica = 2 nodes: PP=2 stages of TP=8', or EP over nodes."""
    parts = []
    if pool.pp > 1:
        parts.append(f"PP={pool.pp}")
    if pool.ep > 1:
        parts.append(f"EP={pool.ep}" + (f", DP attention x{pool.ep // pool.tp}" if pool.dp_attention else ""))
    return f"a replica: {_plural(pool.replica_nodes, 'node')}, " + ", ".join(parts)


def _replica_cells(pool: Pool) -> list[str]:
    """One cell per node of a multi-node replica: which pipeline stage it runs and which EP ranks it holds."""
    stage_nodes = pool.replica_nodes // pool.pp
    ranks = pool.ep // stage_nodes if pool.ep > 1 and pool.dp_attention else 0  # EP ranks (GPUs) a node holds
    cells = []
    for node in range(pool.replica_nodes):
        stage, within = divmod(node, stage_nodes)
        parts = []
        if pool.pp > 1:
            parts.append(f"stage {stage + 1}")
        if ranks:
            parts.append(f"EP {within * ranks}-{(within + 1) * ranks - 1}")
        cells.append(f"node {node + 1}: " + ", ".join(parts))
    return cells


def _replica_label(lines: list[str], pool: Pool) -> str:
    """The pool's lines with one replica drawn as a row of node boxes, an arrow between pipeline stages."""
    rows = [f"<TR><TD>{escape(line, quote=False)}</TD></TR>" for line in lines]
    rows[0] = f"<TR><TD><B>{escape(lines[0], quote=False)}</B></TD></TR>"
    joint = "<TD>&#8594;</TD>" if pool.pp > 1 else ""
    cells = joint.join(f'<TD BORDER="1" BGCOLOR="white">{escape(cell, quote=False)}</TD>' for cell in _replica_cells(pool))
    replica = f'<TR><TD><TABLE BORDER="0" CELLBORDER="0" CELLSPACING="2" CELLPADDING="3"><TR>{cells}</TR></TABLE></TD></TR>'
    rows.insert(2, replica)
    return '<<TABLE BORDER="0" CELLBORDER="0" CELLSPACING="0" CELLPADDING="0">' + "".join(rows) + "</TABLE>>"


def _pool_node(node_id: str, pool: Pool) -> str:
    fill, border = LOAD_COLORS[pool.load]
    per_node = f" ({pool.replicas_per_node} a node)" if pool.replicas_per_node > 1 else ""
    lines = [
        f"{pool.name} pool: {_plural(pool.nodes, 'node')}, {_plural(pool.replicas, 'replica')}",
        f"TP={pool.tp}{per_node}, {pool.weights.value.upper()} weights, {pool.kv_cache.value.upper()} KV",
    ]
    if pool.pp > 1 or pool.ep > 1:
        lines.insert(1, _span_line(pool))
    if pool.load is Load.idle:
        lines.append("idle until a node fails")
    else:
        lines += [pool.route, pool.load_text]
    if pool.load in LOAD_WORDS:
        lines.append(LOAD_WORDS[pool.load])
    style = "rounded,filled,dashed" if pool.load is Load.idle else "rounded,filled"
    label = _replica_label(lines, pool) if pool.replica_nodes > 1 and pool.load is not Load.idle else _html_label(lines)
    return f'  {node_id} [label={label}, fillcolor="{fill}", color="{border}", penwidth=1.6, style="{style}"];'


def diagram_dot(pools: tuple[Pool, ...], gateway_nodes: int, router_nodes: int, *, narrow: bool = False) -> str:
    """The serving diagram as Graphviz DOT: clients, gateway and router, then one box per pool, fed by the router or by
    the pool it continues (`upstream`). Wide: left to right with the pools stacked; narrow: one column."""
    return _diagram(pools, _pool_boxes(pools), gateway_nodes, router_nodes, narrow)


def _diagram_dots(pools: tuple[Pool, ...], gateway_nodes: int, router_nodes: int) -> tuple[str, str]:
    """diagram_dot wide and narrow, the pools' boxes (the same in both) written once."""
    boxes = _pool_boxes(pools)
    return _diagram(pools, boxes, gateway_nodes, router_nodes, False), _diagram(pools, boxes, gateway_nodes, router_nodes, True)


def _pool_boxes(pools: tuple[Pool, ...]) -> list[str]:
    return [_pool_node(f"pool{i}", p) for i, p in enumerate(pools)]


def _diagram(pools: tuple[Pool, ...], boxes: list[str], gateway_nodes: int, router_nodes: int, narrow: bool) -> str:
    ids = {p.name: f"pool{i}" for i, p in enumerate(pools)}
    gateway = ["API gateway", _plural(gateway_nodes, "CPU node"), "auth, rate limit,", "tokenization, SSE"]
    router = ["router", _plural(router_nodes, "CPU node"), "prefix-aware,", "session affinity"]
    if narrow:  # two lines each: a phone's column is narrow, not short
        gateway = [f"API gateway, {gateway[1]}", "auth, rate limit, tokenization, SSE"]
        router = [f"router, {router[1]}", "prefix-aware, session affinity"]
    lines = [
        "digraph serving {",
        f"  rankdir={'TB' if narrow else 'LR'}; nodesep=0.12; ranksep=0.3; pad=0.05;",
        f'  node [shape=box, style="rounded,filled", fillcolor="#f6f8fa", color="#8c959f", fontname="DejaVu Sans", fontsize={DIAGRAM_FONT_PT},'
        ' margin="0.15,0.08"];',
        '  edge [color="#59636e", arrowsize=0.7];',
        "  clients [label=clients, shape=ellipse, fillcolor=white];",
        f"  gateway [label={_html_label(gateway)}];",
        f"  router [label={_html_label(router)}];",
        "  clients -> gateway;",
        "  gateway -> router;",
    ]
    lines += boxes
    fed_by_router = [p for p in pools if p.upstream not in ids]
    for i, p in enumerate(pools):
        source = ids.get(p.upstream or "", "router")
        attrs = ["style=dashed"] if p.load is Load.idle else []
        if p.upstream in ids:  # the link between pools: what crosses it
            attrs += ['label="KV cache"', 'fontname="DejaVu Sans"', f"fontsize={DIAGRAM_FONT_PT}", "penwidth=2"]
        if narrow and source == "router" and p is not fed_by_router[0]:
            attrs.append("constraint=false")  # the router's pools hang in one column: only the first edge sets the ranks
        lines.append(f"  {source} -> {ids[p.name]}{_attrs(attrs)};")
        if not narrow and p.upstream in ids:  # wide: a pool that continues another stacks under it, the link runs down
            lines.append(f"  {{rank=same; {source}; {ids[p.name]}}}")
        if narrow and i > 0:
            lines.append(f"  {ids[pools[i - 1].name]} -> {ids[p.name]} [style=invis];")
    lines.append("}")
    return "\n".join(lines) + "\n"
