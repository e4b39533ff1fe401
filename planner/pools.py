"""How the fleet's nodes split into pools, and the share of the traffic the general pool carries.

One basis serves the whole design: the operating point, the SLO budget, the engine configuration and the
general pool's utilization all describe one general-pool replica carrying its share of the peak.
"""

from __future__ import annotations

import math
from enum import StrEnum

from pydantic import BaseModel, ConfigDict

from planner.brief import Brief
from planner.fmt import num, pct
from planner.lengths import share_above
from planner.replica import ReplicaShape, units_text
from planner.trusted import trusted
from planner.verdict import Problem

__all__ = [
    "LONG_PROMPT_FACTOR",
    "MODEL_LEN_HEADROOM",
    "MODEL_LEN_STEP",
    "SIZING_UTILIZATION",
    "Load",
    "Pools",
    "general_prompt_cap_tokens",
    "load_of",
    "max_model_len_for",
    "pools_of",
    "routing_problems",
]

SIZING_UTILIZATION = 0.85  # fleets are sized to carry the peak at this utilization without the prefix cache
LONG_PROMPT_FACTOR = 1.5  # a long-context prompt is taken as 1.5x the long-context threshold (24k at 16k)
MODEL_LEN_HEADROOM = 0.10  # max-model-len above the longest prompt the general pool is sent + a p95 reply
MODEL_LEN_STEP = 1024  # max-model-len rounds up to a multiple of this


class Load(StrEnum):
    """How hard a pool runs at the peak, as the diagram colours it."""

    over = "over"  # above 100%: the pool cannot carry its peak
    near = "near"  # from the sizing target (85%) to 100%: no headroom left for a burst
    ok = "ok"  # under the sizing target
    idle = "idle"  # a spare: it serves only when a node fails


def load_of(utilization: float, *, serving: bool = True) -> Load:
    """The load level of a pool at `utilization` (a fraction; unbounded reads as over); a pool that does not serve is idle."""
    if not serving:
        return Load.idle
    if not utilization <= 1:  # above 100%, or unbounded
        return Load.over
    return Load.near if utilization >= SIZING_UTILIZATION else Load.ok


class Pools(BaseModel):
    """The general pool gets the nodes the long-context and spare pools leave (at least one)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    general_nodes: int
    long_context_nodes: int
    spare_nodes: int
    general_replicas: int  # the replicas the general pool's requests spread over
    general_share: float  # share of the requests the general pool serves: all but the long-context pool's
    streams_per_replica: int = 1  # PP: a replica's micro-batch streams, each counted in general_replicas
    arithmetic: dict[str, str] = {}  # general_replicas: the nodes the other pools leave, in whole replicas

    def general_rate_per_replica(self, request_rate_per_s: float) -> float:
        return request_rate_per_s * self.general_share / max(self.general_replicas, 1)

    def general_rate_text(self, request_rate_per_s: float) -> str:
        """The arithmetic of general_rate_per_replica."""
        share = "" if self.general_share == 1 else f" x {pct(self.general_share)} (the long-context pool takes the rest)"
        units = (
            f"{self.general_replicas} micro-batch streams ({self.general_replicas // self.streams_per_replica} PP={self.streams_per_replica} replicas)"
            if self.streams_per_replica > 1
            else f"{self.general_replicas} general-pool replicas"
        )
        return (
            f"{num(request_rate_per_s, 'req/s')}{share} / {units} (spares excluded)"
            f" = {num(self.general_rate_per_replica(request_rate_per_s), 'req/s')}"
        )


def pools_of(brief: Brief, shape: ReplicaShape) -> tuple[Pools, list[Problem]]:
    """The pools the fleet holds, and a problem when it cannot hold the brief's spare and long-context nodes."""
    nodes, dep = brief.hardware.nodes, brief.deployment
    spare = min(dep.spare_nodes, nodes - 1)
    long_ctx = min(dep.long_context_nodes, nodes - 1 - spare)
    problems = []
    if (spare, long_ctx) != (dep.spare_nodes, dep.long_context_nodes):
        problems.append(
            Problem(
                field="deployment.spare_nodes",
                problem=(
                    f"the {nodes}-node fleet cannot hold {dep.spare_nodes} spare and {dep.long_context_nodes} long-context nodes beside a general pool,"
                    f" so it runs {spare} spare and {long_ctx} long-context"
                ),
                change=f"give the fleet at least {dep.spare_nodes + dep.long_context_nodes + 1} nodes, or shrink those pools",
            )
        )
    general = nodes - spare - long_ctx
    if general % shape.replica_nodes:
        problems.append(
            Problem(
                field="hardware.nodes",
                problem=f"the general pool's {general} nodes hold {general // shape.replica_nodes} whole {shape.replica_nodes}-node replicas;"
                f" {general % shape.replica_nodes} node(s) idle",
                change=f"give the general pool a multiple of {shape.replica_nodes} nodes",
            )
        )
    if long_ctx and shape.replicas_in(long_ctx) == 0:  # a multi-node replica needs its nodes together
        problems.append(
            Problem(
                field="deployment.long_context_nodes",
                problem=f"{long_ctx} long-context node(s) hold no whole replica: one spans {shape.replica_nodes} nodes",
                change=f"give the long-context pool a multiple of {shape.replica_nodes} nodes, or none",
            )
        )
    share = 1 - brief.workload.long_context_share if long_ctx > 0 else 1.0
    replicas = shape.replicas_in(general)
    return trusted(
        Pools,
        general_nodes=general,
        long_context_nodes=long_ctx,
        spare_nodes=spare,
        general_replicas=replicas,
        general_share=share,
        streams_per_replica=shape.pp,
        arithmetic={"general_replicas": _general_replicas_text(shape, nodes, spare, long_ctx, general, replicas)},
    ), problems


def _general_replicas_text(shape: ReplicaShape, nodes: int, spare: int, long_ctx: int, general: int, replicas: int) -> str:
    """The arithmetic of Pools.general_replicas: the nodes the spare and long-context pools leave, in whole replicas."""

    def plural(n: int, word: str) -> str:
        return f"{n} {word}{'' if n == 1 else 's'}"

    others = "".join(f" - {n} {name}" for n, name in ((spare, "spare"), (long_ctx, "long-context")) if n)
    pool = plural(general, "general-pool node")
    nodes_text = f"{nodes} nodes{others} = {pool}" if others else pool
    span = "per node" if shape.replica_nodes == 1 else f"per {shape.replica_nodes} nodes"
    per = plural(shape.units_per_replica_group, "micro-batch stream" if shape.pp > 1 else "replica")
    result = units_text(replicas, shape.pp) if shape.pp > 1 else plural(replicas, "replica")
    return (
        f"{nodes_text}; {general // shape.replica_nodes} x {per} {span}"
        f" ({shape.gpus_text} a {'stage' if shape.pp > 1 else 'replica'}) = {result}"
    )


def general_prompt_cap_tokens(brief: Brief, long_context_nodes: int) -> float:
    """The longest prompt the router sends the general pool: the long-context threshold when a long-context pool takes
    the longer ones; without one every request, so the long prompts the brief expects (LONG_PROMPT_FACTOR x the
    threshold, its long_context_share of requests) when it has any, else its p95 prompt."""
    w = brief.workload
    if w.long_context_share <= 0:
        return float(w.input_tokens_p95)
    if long_context_nodes > 0:
        return float(w.long_context_threshold_tokens)
    return LONG_PROMPT_FACTOR * w.long_context_threshold_tokens


SHARE_TOLERANCE = (0.02, 0.5)  # the lengths' tail may pass the stated long-context share by 2 points or half the share


def share_problems(brief: Brief, long_context_nodes: int) -> list[Problem]:
    """The router sends every prompt over the long-context threshold to the long-context pool, so it sends at least the
    share the brief's prompt lengths put over it: a stated share well below that sizes the long-context pool for less
    than it is sent (the plan reads the share; the simulator draws the lengths). A stated share above the lengths'
    is the user's own statement of the mix (a burst, a what-if) and stands."""
    w = brief.workload
    if long_context_nodes == 0 and w.long_context_share <= 0:  # no pool and no long prompts stated: the threshold routes nothing
        return []
    tail = share_above(w.input_tokens_mean, w.input_tokens_p95, w.long_context_threshold_tokens)
    points, fraction = SHARE_TOLERANCE
    if tail - w.long_context_share <= max(points, fraction * w.long_context_share):
        return []
    return [
        Problem(
            field="workload.long_context_share",
            problem=(
                f"the prompt lengths (mean {num(w.input_tokens_mean, 'tokens')}, p95 {num(w.input_tokens_p95, 'tokens')}) put"
                f" {pct(tail)} of prompts over the {num(w.long_context_threshold_tokens, 'tokens')} long-context threshold, where the"
                f" brief states {pct(w.long_context_share)}: the pools would be sized for a share the router does not send"
            ),
            change=f"set workload.long_context_share to {round(tail, 4)} (the lengths' share), or state the lengths the traffic has",
            overrides={"workload.long_context_share": round(tail, 4)},
        )
    ]


def max_model_len_for(sequence_tokens: float, model_max_tokens: int) -> int:
    """The max-model-len a sequence of this length needs: + MODEL_LEN_HEADROOM, rounded up to MODEL_LEN_STEP, at most the model's context."""
    return min(int(math.ceil(sequence_tokens * (1 + MODEL_LEN_HEADROOM) / MODEL_LEN_STEP) * MODEL_LEN_STEP), model_max_tokens)


def routing_problems(brief: Brief, long_context_nodes: int, model_max_tokens: int) -> list[Problem]:
    """The general pool sent prompts longer than its max-model-len refuses them: part of the brief is not served."""
    w, dep = brief.workload, brief.deployment
    cap = general_prompt_cap_tokens(brief, long_context_nodes)
    if w.long_context_share <= 0 or cap < dep.max_model_len:  # a brief without long prompts: its p95 is a recommendation
        return []
    sent = (
        f"prompts up to the {num(w.long_context_threshold_tokens, 'tokens')} long-context threshold"
        if long_context_nodes > 0
        else f"every request (no long-context pool), {pct(w.long_context_share)} of them near {num(cap, 'tokens')},"
    )
    wanted = max_model_len_for(cap + w.output_tokens_p95, model_max_tokens)
    route = (
        f"route prompts over {num(max(dep.max_model_len - w.output_tokens_p95, 1))} tokens to a long-context pool"
        " (workload.long_context_threshold_tokens, deployment.long_context_nodes)"
    )
    raise_it = (
        f"raise deployment.max_model_len to {num(wanted)} ({num(cap)} + a p95 reply of {num(w.output_tokens_p95)} + {pct(MODEL_LEN_HEADROOM)}), or "
        if wanted > dep.max_model_len
        else f"the model stops at {num(model_max_tokens, 'tokens')}: "
    )
    return [
        Problem(
            field="deployment.max_model_len",
            problem=f"the general pool is sent {sent} but takes at most {num(dep.max_model_len, 'tokens')} (max-model-len): the engine refuses the longer prompts",
            change=raise_it + route,
            overrides={"deployment.max_model_len": wanted} if wanted > dep.max_model_len else {},
        )
    ]
