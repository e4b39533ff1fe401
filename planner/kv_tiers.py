"""KV tiers: the prefix cache spilling from HBM to host memory and local NVMe, and the hit rate that follows.

A session's context grows turn by turn; it hits the cache on its next turn only if its KV is still resident
after the user's think time and the tools' run time. With session affinity each replica serves its share of the
live sessions, and an LRU over HBM + CPU + NVMe keeps the most recently touched of them. When every session
returns at the same mean rate and its gaps are memoryless, the LRU's characteristic-time (Che) approximation gives
a resident fraction of capacity / demand (capped at 1): the share of returning sessions that still find their
context. The most recently touched sit in HBM, then CPU, then NVMe, so the tiers serve hits in that order.

Off while the brief sets neither tier: workload.prefix_hit_rate stands as given.
"""

from __future__ import annotations

from pydantic import ConfigDict

from planner.brief import Brief
from planner.fmt import num, pct
from planner.replica import GB, ReplicaShape, units_text
from planner.trusted import trusted
from planner.written import Written

__all__ = ["P95_TAIL", "KvTierAnalysis", "engines_per_node", "kv_tier_analysis"]

P95_TAIL = 0.05  # a tier serving more than this share of requests puts its reload inside the p95 TTFT


class KvTierAnalysis(Written):
    """What the tiers hold, the hit rate they give, and the reload time they charge (per replica)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    sessions_per_replica: float  # live sessions one replica holds a context for (session affinity)
    session_gap_s: float  # from one request of a session to its next
    held_tokens_per_session: float  # the context an idle session leaves in the cache
    demand_tokens: float  # sessions x held context: what the cache would need to keep every session
    hbm_tokens: float  # the HBM pool the running batch leaves to the prefix cache
    cpu_tokens: float
    nvme_tokens: float
    returning_share: float  # requests that are a session's second or later turn
    reused_share: float  # of a returning prompt, the history (the rest is the turn's new tokens)
    resident_hbm: float  # share of returning sessions whose context is in HBM (cumulative below)
    resident_cpu: float  # in HBM or CPU
    resident_all: float  # in any tier
    hit_rate_hbm_only: float  # the token hit rate HBM alone would give
    hit_rate: float  # the derived token hit rate, all tiers
    share_from_cpu: float  # requests whose history reloads from host memory
    share_from_nvme: float  # requests whose history reloads from NVMe
    reload_tokens_p95: float  # history a capped prompt reloads
    cpu_reload_ms: float  # that history over the host link
    nvme_reload_ms: float  # that history from NVMe
    recompute_ms: float  # the same history prefilled again instead
    ttft_reload_ms: float  # the reload the p95 TTFT carries: the slowest tier serving more than 5% of requests
    offload_gb_per_gpu: float  # the host memory each GPU's share of the CPU tier takes (vLLM's --kv-offloading-size)


def _sessions(brief: Brief, replicas: int) -> tuple[float, float]:
    """(live sessions per replica, the gap between a session's requests)."""
    w, t = brief.workload, brief.kv_tiers
    if w.users is not None and w.request_rate is None:
        gap = w.generation_s_per_turn / w.duty_cycle
        return w.users / replicas, gap
    rate = w.request_rate or 0.0
    gap = w.generation_s_per_turn + t.think_time_s
    sessions = rate * gap
    return sessions / replicas, gap


def _sessions_text(brief: Brief, units: str) -> str:
    """_sessions' arithmetic in words."""
    w, t = brief.workload, brief.kv_tiers
    if w.users is not None and w.request_rate is None:
        gap = w.generation_s_per_turn / w.duty_cycle
        return f"{num(w.users, 'users')} / {units}, each back every {num(gap, 's')} ({num(w.generation_s_per_turn, 's')} / {num(w.duty_cycle)} duty)"
    rate = w.request_rate or 0.0
    sessions = rate * (w.generation_s_per_turn + t.think_time_s)
    return (
        f"{num(rate, 'req/s')} x ({num(w.generation_s_per_turn, 's')} generating + {num(t.think_time_s, 's')} think/tool time)"
        f" = {num(sessions)} live sessions / {units} (Little's law)"
    )


def _running_tokens(brief: Brief, replicas: int) -> float:
    """KV the running batch holds per replica: sequences generating (Little's law on the brief's stream time) x context."""
    w = brief.workload
    if w.users is not None and w.request_rate is None:
        generating = w.users * w.duty_cycle
    else:
        generating = (w.request_rate or 0.0) * w.generation_s_per_turn
    return generating / replicas * brief.sizing_context_tokens


def _nodes_per_unit(shape: ReplicaShape) -> float:
    """A serving unit's share of the nodes whose host memory and NVMe it uses: 1/8 for TP=1 on 8-GPU nodes, 2 for
    DeepSeek-R1's EP=16 replica over two nodes, 1 for a PP=2 stream (its replica's 2 nodes, 2 streams)."""
    return shape.replica_nodes / shape.units_per_replica_group


def engines_per_node(shape: ReplicaShape) -> int:
    """vLLM engines on one node, each with its own offloading buffer: the node's serving units, or with DP attention
    every rank (each rank is an engine)."""
    return max(round(shape.attention_groups / _nodes_per_unit(shape)), 1)


def kv_tier_analysis(brief: Brief, shape: ReplicaShape) -> KvTierAnalysis | None:
    """The tiers' analysis, or None when the brief sets no tier."""
    t, w, hw = brief.kv_tiers, brief.workload, brief.hardware
    if not t.enabled:
        return None
    replicas = max(shape.replicas, 1)
    nodes = _nodes_per_unit(shape)
    token_bytes = shape.kv_bytes_per_token
    sessions, gap = _sessions(brief, replicas)
    held = w.input_tokens_mean + w.output_tokens_mean
    demand_tokens = max(sessions * held, 1.0)
    running = _running_tokens(brief, replicas)
    hbm = max(shape.kv_capacity_tokens - running, 0.0)
    cpu = t.cpu_gb_per_node * nodes * GB / token_bytes
    nvme = t.nvme_gb_per_node * nodes * GB / token_bytes
    r_hbm = min(1.0, hbm / demand_tokens)
    r_cpu = min(1.0, (hbm + cpu) / demand_tokens)
    r_all = min(1.0, (hbm + cpu + nvme) / demand_tokens)
    returning = (t.turns_per_session - 1) / t.turns_per_session
    shared = min(t.shared_prefix_tokens, w.input_tokens_mean) / w.input_tokens_mean  # every request hits it; it stays in HBM
    reused = max(0.0, 1 - shared - t.new_tokens_per_turn / w.input_tokens_mean)  # the session's own history
    hit = shared + returning * reused * r_all
    hbm_only = shared + returning * reused * r_hbm
    from_cpu, from_nvme = returning * (r_cpu - r_hbm), returning * (r_all - r_cpu)
    capped = min(float(brief.slo.ttft_input_cap_tokens), w.input_tokens_p95)
    reload_tokens = capped * reused
    reload_bytes = reload_tokens * token_bytes
    # each GPU reloads its own KV shard over its own link; with DP attention every group reloads its own sequences at
    # once, so the replica reloads over all its GPUs' links, as its prefill (the recompute) runs on all its GPUs
    cpu_ms = reload_bytes / (t.cpu_gb_s_per_gpu * GB * shape.gpus) * 1e3
    nvme_ms = max(reload_bytes / (t.nvme_gb_s_per_node * GB * nodes) * 1e3, cpu_ms)  # the node's drives, shared; then the host link
    recompute_ms = reload_tokens / shape.prefill_tokens_per_s * 1e3
    ttft_ms = nvme_ms if from_nvme > P95_TAIL else cpu_ms if from_cpu + from_nvme > P95_TAIL else 0.0
    analysis = trusted(
        KvTierAnalysis,
        sessions_per_replica=sessions,
        session_gap_s=gap,
        held_tokens_per_session=held,
        demand_tokens=demand_tokens,
        hbm_tokens=hbm,
        cpu_tokens=cpu,
        nvme_tokens=nvme,
        returning_share=returning,
        reused_share=reused,
        resident_hbm=r_hbm,
        resident_cpu=r_cpu,
        resident_all=r_all,
        hit_rate_hbm_only=hbm_only,
        hit_rate=hit,
        share_from_cpu=from_cpu,
        share_from_nvme=from_nvme,
        reload_tokens_p95=reload_tokens,
        cpu_reload_ms=cpu_ms,
        nvme_reload_ms=nvme_ms,
        recompute_ms=recompute_ms,
        ttft_reload_ms=ttft_ms,
        offload_gb_per_gpu=t.cpu_gb_per_node / hw.gpus_per_node,
    )

    def text() -> dict[str, str]:
        tier_text = (
            f"HBM {num(hbm)} (pool {num(shape.kv_capacity_tokens)} - running batch {num(running)}) + CPU {num(cpu)}"
            f" ({num(t.cpu_gb_per_node, 'GB')} / node x {num(nodes)} node(s) a replica / {num(token_bytes / 1e3)} kB per token) + NVMe {num(nvme)} tokens"
        )
        return {
            "sessions": _sessions_text(brief, units_text(replicas, shape.pp)),
            "demand": f"{num(sessions)} sessions x {num(held, 'tokens')} held (prompt + reply) = {num(demand_tokens, 'tokens')} per replica",
            "capacity": tier_text,
            "resident": (
                f"LRU resident share = capacity / demand (Che approximation): HBM {pct(r_hbm)}, + CPU {pct(r_cpu)}, + NVMe {pct(r_all)}"
            ),
            "hit_rate": (
                (f"{pct(shared)} shared prefix ({num(t.shared_prefix_tokens)} tokens) + " if shared > 0 else "")
                + f"{pct(returning)} returning ({num(t.turns_per_session)} turns per session) x {pct(reused)} of the prompt is history"
                f" (1 - {num(t.new_tokens_per_turn)} new{' - shared' if shared > 0 else ''} / {num(w.input_tokens_mean)}) x {pct(r_all)} resident = {pct(hit)}"
                f" (HBM alone: {pct(hbm_only)}); derived, in place of the brief's prefix hit rate ({pct(w.prefix_hit_rate)})"
            ),
            "reload": (
                f"a capped prompt's {num(reload_tokens, 'tokens')} of history x {num(token_bytes / 1e3)} kB = {num(reload_bytes / 1e6)} MB:"
                f" CPU {num(cpu_ms, 'ms')} over {shape.gpus_text} x {num(t.cpu_gb_s_per_gpu, 'GB/s')}, NVMe {num(nvme_ms, 'ms')}"
                f" at {num(t.nvme_gb_s_per_node, 'GB/s')} / node x {num(nodes)} node(s) a replica; recomputing it takes {num(recompute_ms, 'ms')}"
            ),
            "ttft": (
                f"{pct(from_cpu)} of requests reload from CPU, {pct(from_nvme)} from NVMe: the p95 TTFT carries"
                f" {num(ttft_ms, 'ms')} (the slowest tier serving over {pct(P95_TAIL)})"
            ),
        }

    analysis._text = text
    return analysis
