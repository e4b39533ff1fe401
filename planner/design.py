"""plan(brief) -> Design: the one object that carries the whole answer.

Pages, the CLI and the design document all render a Design, so they can never disagree.
"""

from __future__ import annotations

from functools import lru_cache

from pydantic import BaseModel, ConfigDict

from planner.brief import Brief
from planner.capacity import Capacity, Demand, Memory, capacity, demand, memory
from planner.fmt import num, pct
from planner.operating_point import OperatingPoint, context_tokens, operating_point
from planner.replica import ReplicaShape, shape_of
from planner.verdict import InfeasibleDesign, Problem, Verdict

__all__ = ["Design", "Pools", "plan"]


class Pools(BaseModel):
    """How the fleet's nodes split; the general pool gets what the others leave (at least one node)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    general_nodes: int
    long_context_nodes: int
    spare_nodes: int
    serving_replicas: int  # every replica but the spares': what carries load if a spare is used up


class Design(BaseModel):
    """The whole analytical design for one brief."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    brief: Brief
    model_name: str
    gpu_name: str
    shape: ReplicaShape
    pools: Pools
    demand: Demand
    memory: Memory
    capacity: Capacity
    operating_point: OperatingPoint
    verdict: Verdict


def _pools(brief: Brief, shape: ReplicaShape) -> tuple[Pools, list[Problem]]:
    nodes = brief.hardware.nodes
    dep = brief.deployment
    spare = min(dep.spare_nodes, nodes - 1)
    long_ctx = min(dep.long_context_nodes, nodes - 1 - spare)
    problems = []
    if (spare, long_ctx) != (dep.spare_nodes, dep.long_context_nodes):
        problems.append(
            Problem(
                field="deployment.spare_nodes",
                problem=f"the {nodes}-node fleet cannot hold {dep.spare_nodes} spare and {dep.long_context_nodes} long-context nodes beside a general pool",
                change=f"using {spare} spare and {long_ctx} long-context; add nodes or shrink those pools",
            )
        )
    pools = Pools(
        general_nodes=nodes - spare - long_ctx,
        long_context_nodes=long_ctx,
        spare_nodes=spare,
        serving_replicas=(nodes - spare) * shape.replicas_per_node,
    )
    return pools, problems


def _fatal_problems(brief: Brief, shape: ReplicaShape) -> tuple[Problem, ...]:
    """Designs that cannot be computed: the weights do not fit, or not one sequence's KV does."""
    if shape.kv_gb_per_gpu <= 0:
        need = shape.weights_gb_per_gpu + shape.reserve_gb_per_gpu
        return (
            Problem(
                field="deployment.tp",
                problem=(
                    f"weights do not fit: {num(shape.weights_gb_per_gpu, 'GB')} weights + {num(shape.reserve_gb_per_gpu, 'GB')} reserve per GPU"
                    f" exceed the {num(shape.usable_gb_per_gpu, 'GB')} usable on a {shape.gpu.name}"
                ),
                change=f"raise TP, quantize the weights, or pick a GPU with more than {num(need, 'GB')}",
            ),
        )
    _, held = context_tokens(brief)
    if shape.kv_capacity_tokens < held:
        return (
            Problem(
                field="deployment.reserve_gb_per_gpu",
                problem=(
                    f"no room for one sequence's KV: {num(shape.kv_capacity_tokens, 'tokens')} fit per replica,"
                    f" one sequence holds {num(held, 'tokens')}"
                ),
                change="raise TP, quantize the weights or the KV cache, lower the reserve, or shorten the context",
            ),
        )
    return ()


def _problems(brief: Brief, shape: ReplicaShape, cap: Capacity, mem: Memory, op: OperatingPoint) -> list[Problem]:
    problems = []
    if cap.utilization > 1:
        problems.append(
            Problem(
                field="hardware.nodes",
                problem=f"utilization {pct(cap.utilization)} exceeds 100%: the fleet cannot carry the peak",
                change=f"add nodes (about x{num(cap.utilization)}), raise the prefix hit rate, or quantize",
            )
        )
    if cap.kv_fraction > 1:
        problems.append(
            Problem(
                field="workload.kv_context_tokens",
                problem=f"the KV cache holds {num(mem.max_sequences_per_replica)} sequences per replica, the load needs {num(cap.batch_per_replica)}",
                change="add nodes, use FP8 KV, or shorten the context",
            )
        )
    if not op.stable or op.tpot_ms > brief.slo.itl_p95_ms:
        problems.append(
            Problem(
                field="slo.itl_p95_ms",
                problem=f"TPOT at the operating point is {num(op.tpot_ms, 'ms')}, over the {num(brief.slo.itl_p95_ms, 'ms')} target",
                change=f"add replicas: one carries {num(op.capacity_rate_per_s, 'req/s')} at the target, it is given {num(op.rate_per_replica_per_s, 'req/s')}",
            )
        )
    if brief.deployment.max_model_len > shape.model.max_context_tokens:
        problems.append(
            Problem(
                field="deployment.max_model_len",
                problem=f"{brief.deployment.max_model_len} tokens is beyond the model's {shape.model.max_context_tokens}-token context",
                change=f"set it to at most {shape.model.max_context_tokens}",
            )
        )
    return problems


def plan(brief: Brief) -> Design:
    """The whole design for a brief; raises InfeasibleDesign when it cannot be computed at all."""
    return _plan_cached(brief)


@lru_cache(maxsize=256)
def _plan_cached(brief: Brief) -> Design:
    shape = shape_of(brief)
    fatal = _fatal_problems(brief, shape)
    if fatal:
        raise InfeasibleDesign(fatal)
    pools, pool_problems = _pools(brief, shape)
    dem = demand(brief, shape)
    mem = memory(brief, shape)
    cap = capacity(brief, shape, dem, mem)
    op = operating_point(brief, shape, dem.request_rate_per_s, pools.serving_replicas)
    problems = pool_problems + _problems(brief, shape, cap, mem, op)
    feasible = cap.utilization <= 1 and cap.kv_fraction <= 1 and op.stable
    meets_slo = feasible and op.tpot_ms <= brief.slo.itl_p95_ms
    return Design(
        brief=brief,
        model_name=shape.model.name,
        gpu_name=shape.gpu.name,
        shape=shape,
        pools=pools,
        demand=dem,
        memory=mem,
        capacity=cap,
        operating_point=op,
        verdict=Verdict(feasible=feasible, meets_slo=meets_slo, problems=tuple(problems)),
    )
