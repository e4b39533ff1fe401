"""Step 4a of the method: the serving architecture. Pools, the decisions behind them, routing, and a diagram.

The diagram is Graphviz DOT text whose labels carry the live figures (replicas, TP, utilization), so the
app and the design document draw the same picture from the same numbers.
"""

from __future__ import annotations

import math

from pydantic import BaseModel, ConfigDict

from planner.brief import Brief, KvPrecision, Precision
from planner.capacity import Demand
from planner.fmt import num, pct
from planner.replica import ReplicaShape

__all__ = ["LONG_PROMPT_FACTOR", "Architecture", "Decision", "Pool", "architecture", "long_context_utilization"]

LONG_PROMPT_FACTOR = 1.5  # a long-context prompt is taken as 1.5x the long-context threshold (24k at 16k)

GATEWAY_NODES = 6  # CPU nodes: auth, rate limit, tokenization, SSE streaming
ROUTER_NODES = 3  # CPU nodes: prefix-aware routing with session affinity
MAX_DRAWN_NODES = 12  # larger fleets draw one box per pool with a count


class _Model(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class Pool(_Model):
    name: str
    nodes: int
    replicas: int
    role: str
    utilization: float  # share of the pool's GPU time the peak load takes (0 for the idle spare)


class Decision(_Model):
    decision: str
    why: str


class Architecture(_Model):
    pools: tuple[Pool, ...]
    decisions: tuple[Decision, ...]
    routing: tuple[Decision, ...]
    gateway_nodes: int
    router_nodes: int
    dot: str


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
) -> Architecture:
    hw, dep, w = brief.hardware, brief.deployment, brief.workload
    pools = [
        Pool(
            name="general",
            nodes=general_nodes,
            replicas=general_nodes * replicas_per_node,
            role=f"chat traffic up to {num(w.long_context_threshold_tokens, 'tokens')} of prompt",
            utilization=general_utilization,
        )
    ]
    if long_context_nodes:
        pools.append(
            Pool(
                name="long-context",
                nodes=long_context_nodes,
                replicas=long_context_nodes * replicas_per_node,
                role=f"prompts over {num(w.long_context_threshold_tokens, 'tokens')} ({pct(w.long_context_share)} of requests)",
                utilization=long_context_utilization,
            )
        )
    if spare_nodes:
        pools.append(
            Pool(
                name="spare/canary",
                nodes=spare_nodes,
                replicas=spare_nodes * replicas_per_node,
                role="N+1 for a failed node; canary target for rollouts",
                utilization=0.0,
            )
        )
    replicas = hw.nodes * replicas_per_node
    decisions = [
        Decision(
            decision=f"TP={tp}, DP={replicas}",
            why=f"TP={tp} stays inside one {hw.gpus_per_node}-GPU NVSwitch domain (all-reduce every layer needs NVLink);"
            f" crossing nodes would put it on InfiniBand; data parallelism across {replicas} replicas adds throughput",
        ),
        Decision(
            decision=f"{dep.weights.value.upper()} weights",
            why=f"{num(weights_gb_per_gpu, 'GB')} per GPU; {_precision_why(dep.weights)}",
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
                f" {pct(fleet_utilization)} with it, {pct(fleet_utilization_no_prefix_cache)} without",
            )
        )
    if dep.chunked_prefill:
        decisions.append(
            Decision(
                decision=f"chunked prefill, {dep.max_num_batched_tokens} tokens per step",
                why=f"an unchunked p95 prompt ({num(w.input_tokens_p95, 'tokens')}) holds the GPU for {num(unchunked_prefill_p95_ms, 'ms')},"
                " stalling every running sequence",
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
    routing = (
        Decision(
            decision="prefix-aware routing",
            why="send a prompt to the replica that already holds its prefix; random routing hits ~1/replicas as often",
        ),
        Decision(decision="session affinity by conversation id", why="every turn of a conversation lands where its history is cached"),
        Decision(decision="least KV load within the affinity group", why="balances new conversations without breaking affinity"),
        Decision(
            decision=f"prompts over {num(w.long_context_threshold_tokens, 'tokens')} to the long-context pool"
            if long_context_nodes
            else "no long-context pool: long prompts share the general pool",
            why="keeps the general pool's batches and prefill queue short"
            if long_context_nodes
            else "the brief reserves no nodes for them",
        ),
    )
    arch_pools = tuple(pools)
    return Architecture(
        pools=arch_pools,
        decisions=tuple(decisions),
        routing=routing,
        gateway_nodes=GATEWAY_NODES,
        router_nodes=ROUTER_NODES,
        dot=_dot(brief, arch_pools, tp, replicas_per_node),
    )


def _precision_why(weights: Precision) -> str:
    return {
        Precision.bf16: "no quantization risk, but twice the bytes per decode step of FP8",
        Precision.fp8: "half the bytes of BF16 per decode step and per GPU; Hopper-native",
        Precision.int8: "W8A8: half the bytes of BF16 where the GPU has no FP8",
        Precision.int4: "W4A16: a quarter of the BF16 bytes; decode-bound work gains most",
        Precision.fp4: "NVFP4: about a quarter of the BF16 bytes; Blackwell computes in FP4, other GPUs dequantize to BF16",
    }[weights]


def _quote(text: str) -> str:
    """A DOT string literal; label line breaks (backslash-n) are written by the caller and kept."""
    return '"' + text.replace('"', '\\"') + '"'


def _dot(brief: Brief, pools: tuple[Pool, ...], tp: int, replicas_per_node: int) -> str:
    gpu = brief.hardware.gpu
    newline = "\\n"  # a line break inside a DOT label
    gateway = f"API gateway ({GATEWAY_NODES} CPU nodes){newline}auth, rate limit, tokenization, SSE"
    router = f"router ({ROUTER_NODES} CPU nodes){newline}prefix-aware, session affinity, least KV load"
    lines = [
        "digraph serving {",
        "  rankdir=TB;",
        "  compound=true;",
        '  node [shape=box, style="rounded,filled", fillcolor="#f5f5f5", fontname="Helvetica", fontsize=10];',
        '  edge [fontname="Helvetica", fontsize=9];',
        f"  clients [label={_quote('clients')}, shape=ellipse, fillcolor=white];",
        f"  gateway [label={_quote(gateway)}];",
        f"  router [label={_quote(router)}];",
        "  clients -> gateway;",
        "  gateway -> router;",
    ]
    node_index = 0
    for i, pool in enumerate(pools):
        cluster = f"cluster_{i}"
        label = f"{pool.name} pool: {pool.nodes} node{'s' if pool.nodes != 1 else ''}, {pool.replicas} replica{'s' if pool.replicas != 1 else ''}"
        if pool.name == "general":  # the general pool's load against its replicas' capacity under the SLO
            label += f", at {pct(pool.utilization)} of its SLO capacity at peak"
        elif pool.name != "spare/canary":
            label += f", {pct(pool.utilization)} busy at peak"
        lines.append(f"  subgraph {cluster} {{")
        lines.append(f"    label={_quote(label)};")
        lines.append('    style="rounded,dashed";')
        if pool.nodes <= MAX_DRAWN_NODES:
            for _ in range(pool.nodes):
                name = f"node{node_index}"
                text = f"{name}{newline}{replicas_per_node} x TP={tp} ({gpu})"
                lines.append(f"    {name} [label={_quote(text)}];")
                node_index += 1
            first = f"node{node_index - pool.nodes}"
        else:
            first = f"pool{i}"
            text = f"{pool.nodes} nodes x {replicas_per_node} x TP={tp} ({gpu})"
            lines.append(f"    {first} [label={_quote(text)}];")
            node_index += pool.nodes
        lines.append("  }")
        style = ", style=dashed" if pool.name == "spare/canary" else ""
        lines.append(f"  router -> {first} [lhead={cluster}, label={_quote(pool.name)}{style}];")
    lines.append("}")
    return "\n".join(lines) + "\n"
