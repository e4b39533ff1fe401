"""Objectives other than latency: an offline job judged on throughput and cost, an RL rollout on its makespan.

An offline job has no TTFT or ITL target: every replica runs at its largest batch (max-num-seqs, or what the KV pool
holds) and the job's time is its tokens over the fleet's throughput. A full batch of B sequences emits B tokens a
step, and a request finishing every `output` steps a sequence is replaced by a new one whose prompt is prefilled in
the same steps: each step carries B x uncached / output prompt tokens beside the decode batch (the latency model's
mixed step, planner.slo.full_batch_turnover, the basis of the SLO budget's full-batch bound too), so a replica's time
per request is
    t = output x step(B, B x uncached / output) / B
(prefill-bound when those tokens exceed the step's budget: then t = uncached x step / budget). The simulator's
closed loop at the batch gives the same figure (tests/test_golden_problems.py).

An RL rollout batch of N prompts ends when its longest output ends. Output lengths are gamma-distributed with the
brief's mean and p95; the longest of N is near their 1 - 1/N quantile (capped at the rollout's limit). The bulk of
the batch runs at full batch; the stragglers decode at a small batch long after, so the makespan is the larger of
the bulk's work time and the straggler's own prefill + decode, and the straggler share is the part of the makespan
the fleet spends under-filled waiting on them.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from functools import cached_property
from typing import Any, NamedTuple

from pydantic import BaseModel, ConfigDict, PrivateAttr, computed_field

from planner.brief import Brief, ObjectiveKind
from planner.capacity import Memory
from planner.fmt import num, pct
from planner.lengths import gamma_quantile, length_cv2
from planner.replica import ReplicaShape
from planner.slo import Turnover, engine, full_batch_turnover
from planner.verdict import Problem

__all__ = ["TAIL_SHARE", "ObjectiveAnalysis", "duration_text", "objective_analysis", "rollout_makespan_s"]

TAIL_SHARE = 0.05  # the stragglers: the longest 5% of a rollout batch's outputs decode together at the end


class ObjectiveAnalysis(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    kind: ObjectiveKind
    batch_per_replica: float  # sequences a replica runs at once
    decode_step_ms: float  # at that batch
    request_s: float  # a replica's time per request at that batch
    tokens_per_s: float  # the fleet, input and output tokens
    output_tokens_per_s: float  # the fleet
    output_tokens_per_s_per_replica: float  # one replica at its full batch (what the simulator's objective check runs)
    usd_per_m_tokens: float  # input and output tokens
    usd_per_m_output_tokens: float
    time_s: float  # the job's time (throughput) or the batch's makespan (batch completion)
    deadline_s: float
    meets: bool
    nodes_for_deadline: int  # nodes the work alone needs to finish by the deadline
    longest_output_tokens: float  # batch completion: the straggler's output (0 for throughput)
    straggler_s: float  # batch completion: the straggler's own prefill + decode
    straggler_share: float  # batch completion: the makespan's share spent waiting on stragglers
    time_one_node_lost_s: float  # the same work on one node fewer (inf with a single node)
    problems: tuple[Problem, ...]
    _words: Callable[[], tuple[str, dict[str, str]]] = PrivateAttr()  # (headline, arithmetic), written on first read

    # The headline and the arithmetic are written the first time they are read (a page, the JSON, the conclusion): the
    # headroom's and the failure table's re-plans read only the figures.

    @computed_field  # type: ignore[prop-decorator]
    @cached_property
    def headline(self) -> str:
        return self._written[0]

    @computed_field  # type: ignore[prop-decorator]
    @cached_property
    def arithmetic(self) -> dict[str, str]:
        """Each figure's arithmetic in words."""
        return self._written[1]

    @cached_property
    def _written(self) -> tuple[str, dict[str, str]]:
        return self._words()


def _longest_output(brief: Brief, prompts: int) -> float:
    """The longest of `prompts` gamma-distributed outputs: the 1 - 1/N quantile, capped at the rollout's limit."""
    w, o = brief.workload, brief.objective
    cv2 = length_cv2(w.output_tokens_mean, w.output_tokens_p95)
    if cv2 <= 0:
        return min(w.output_tokens_mean, o.output_tokens_max)
    k = 1 / cv2
    q = 1 - 1 / (prompts + 1)
    return min(gamma_quantile(k, q) / k * w.output_tokens_mean, o.output_tokens_max)


def duration_text(seconds: float, kind: ObjectiveKind) -> str:
    """A job's time in hours, a rollout batch's in seconds: the unit its deadline is stated in."""
    return num(seconds / 3600, "h") if kind is ObjectiveKind.throughput else num(seconds, "s")


def _one_node_lost(time_s: float, nodes: int) -> float:
    """The bulk of the work on one node fewer: its time grows by nodes / (nodes - 1)."""
    return time_s * nodes / (nodes - 1) if nodes > 1 else math.inf


def _lost_text(time_s: float, lost_s: float, nodes: int, deadline_s: float) -> str:
    if not math.isfinite(lost_s):
        return "with its only node lost the job stops: keep a checkpoint and a spare, or accept a restart"
    verdict = "still met" if lost_s <= deadline_s else "missed"
    return f"one of {nodes} nodes lost: {num(time_s, 's')} -> {num(lost_s, 's')}, the deadline {verdict}"


class _FleetPace(NamedTuple):
    """A replica's full batch under an offline objective and its pace there (_fleet_pace)."""

    batch: float  # sequences a replica runs at once
    settled: str  # words where the token budget leaves prompts no room beside max-num-seqs and the batch settles lower
    uncached: float  # a prompt's uncached tokens
    prefill_s: float  # a lone prompt's prefill (the rollout's straggler)
    pace: Turnover  # full_batch_turnover at the batch


def _fleet_pace(brief: Brief, shape: ReplicaShape, mem: Memory, prompts: int) -> _FleetPace:
    """The full batch a replica runs and its pace there (a rollout of `prompts` prompts fills no more than its share)."""
    w, dep = brief.workload, brief.deployment
    batch = max(min(float(dep.max_num_seqs), math.floor(mem.max_sequences_per_replica)), 1.0)
    if brief.objective.kind is ObjectiveKind.batch_completion:
        batch = min(batch, max(math.ceil(prompts / max(shape.replicas, 1)), 1))
    eng = engine(brief, shape)  # the latency model's step constants at the brief's running context
    pace_at_batch = full_batch_turnover(eng, batch)  # the basis the SLO budget's full-batch bound shares
    settled = ""
    if not math.isfinite(pace_at_batch.request_s):  # the budget is the batch: no prompt has room beside it
        # the batch settles where the prompts its finishing sequences let in fit the room: b x uncached / out = budget - b
        cap = max(math.floor(dep.max_num_batched_tokens * w.output_tokens_mean / (w.output_tokens_mean + eng.uncached)), 1)
        settled = (
            f"; the {dep.max_num_batched_tokens}-token budget leaves prompts no room beside {num(batch)}, so the batch settles at {cap}"
        )
        batch = float(cap)
        pace_at_batch = full_batch_turnover(eng, batch)
    return _FleetPace(batch, settled, eng.uncached, eng.uncached / shape.prefill_tokens_per_s, pace_at_batch)


def _straggler(brief: Brief, shape: ReplicaShape, prompts: int, longest: float, prefill_s: float, units: int) -> tuple[float, float, float]:
    """(the tail's batch, its step, the straggler's time) of a rollout on `units` replicas: the longest 5% decode
    together, the longest output last."""
    batch = max(1.0, TAIL_SHARE * prompts / max(units, 1))
    step = shape.decode_step_s(batch, brief.workload.input_tokens_mean + longest / 2) + brief.latency.scheduler_ms / 1e3
    return batch, step, prefill_s + longest * step


class _Rollout(NamedTuple):
    """A rollout batch's bulk and its straggler (_rollout)."""

    work_s: float  # the bulk: the prompts at the fleet's full-batch pace
    longest_tokens: float  # the straggler's output
    tail_batch: float  # the longest 5% decoding together
    tail_step_s: float  # a step at that batch
    straggler_s: float  # the straggler's prefill and decode

    @property
    def makespan_s(self) -> float:
        return max(self.work_s, self.straggler_s)


def _rollout(brief: Brief, shape: ReplicaShape, prompts: int, fleet: _FleetPace) -> _Rollout:
    """A rollout batch of `prompts` prompts on the fleet's replicas at their full-batch pace."""
    replicas = max(shape.replicas, 1)
    longest = _longest_output(brief, prompts)
    tail_batch, tail_step_s, straggler_s = _straggler(brief, shape, prompts, longest, fleet.prefill_s, replicas)
    return _Rollout(prompts * fleet.pace.request_s / replicas, longest, tail_batch, tail_step_s, straggler_s)


def rollout_makespan_s(brief: Brief, shape: ReplicaShape, mem: Memory, prompts: int) -> float:
    """A rollout batch's makespan with `prompts` prompts: objective_analysis's time_s for the brief with that batch,
    without the analysis around it (the headroom's deadline search asks for the time alone at several batches)."""
    return _rollout(brief, shape, prompts, _fleet_pace(brief, shape, mem, prompts)).makespan_s


def objective_analysis(brief: Brief, shape: ReplicaShape, mem: Memory) -> ObjectiveAnalysis | None:
    """The design judged on its objective, or None for the latency objective (the SLO budget judges it)."""
    o, w, dep = brief.objective, brief.workload, brief.deployment
    if o.kind is ObjectiveKind.latency:
        return None
    replicas = max(shape.replicas, 1)
    fleet = _fleet_pace(brief, shape, mem, o.batch_prompts)
    batch, settled, uncached, pace_at_batch = fleet.batch, fleet.settled, fleet.uncached, fleet.pace
    turnover, carried, step_s = pace_at_batch.prompt_tokens, pace_at_batch.carried_tokens, pace_at_batch.step_s
    bound = "prefill" if pace_at_batch.prefill_bound else "batch"
    request_s = pace_at_batch.request_s
    per_request_tokens = w.input_tokens_mean + w.output_tokens_mean
    rate = replicas / request_s  # requests/s, the fleet
    tokens_per_s = rate * per_request_tokens
    gpus = shape.replicas * shape.gpus  # serving units x a unit's GPUs (TP x DP attention groups; a PP stream's stage)
    usd_per_s = gpus * brief.cost.usd_per_gpu_hour / 3600
    usd_per_m = usd_per_s / tokens_per_s * 1e6
    usd_per_m_out = usd_per_s / (rate * w.output_tokens_mean) * 1e6
    nodes = brief.hardware.nodes

    def pace_words() -> dict[str, str]:
        return {
            "batch": f"min(max-num-seqs {dep.max_num_seqs}, {num(mem.max_sequences_per_replica)} sequences the KV pool holds){settled} = {num(batch)} per replica",
            "request": (
                f"each step carries {num(batch)} x {num(uncached, 'tokens')} uncached / {num(w.output_tokens_mean, 'tokens')} out"
                f" = {num(turnover, 'prompt tokens')} beside the batch's decode: a step of {num(step_s * 1e3, 'ms')};"
                + (
                    f" {num(w.output_tokens_mean, 'tokens')} x {num(step_s * 1e3, 'ms')} / {num(batch)}"
                    if bound == "batch"
                    else f" more than the {num(carried, 'tokens')} a step has room for, so prefill binds: {num(uncached, 'tokens')} x {num(step_s * 1e3, 'ms')} / {num(carried)}"
                )
                + f" = {num(request_s * 1e3, 'ms')} of a replica per request"
            ),
            "throughput": (
                f"{replicas} replicas / {num(request_s, 's')} = {num(rate, 'req/s')} x {num(per_request_tokens, 'tokens')} = {num(tokens_per_s, 'tokens/s')}"
            ),
            "cost": f"{gpus} GPUs x ${num(brief.cost.usd_per_gpu_hour)}/h / {num(tokens_per_s * 3600 / 1e6)}M tokens/h = ${num(usd_per_m)} per M tokens",
        }

    pace: dict[str, Any] = {  # what both objectives report of the fleet's pace and price
        "kind": o.kind,
        "batch_per_replica": batch,
        "decode_step_ms": step_s * 1e3,
        "request_s": request_s,
        "tokens_per_s": tokens_per_s,
        "output_tokens_per_s": rate * w.output_tokens_mean,
        "output_tokens_per_s_per_replica": w.output_tokens_mean / request_s,
        "usd_per_m_tokens": usd_per_m,
        "usd_per_m_output_tokens": usd_per_m_out,
    }
    if o.kind is ObjectiveKind.throughput:
        time_s = o.job_tokens / tokens_per_s
        deadline_s = o.deadline_hours * 3600
        meets = time_s <= deadline_s
        need = max(math.ceil(nodes * time_s / deadline_s), 1)
        lost_s = _one_node_lost(time_s, nodes)

        def job_words() -> tuple[str, dict[str, str]]:
            job = (
                f"{num(o.job_tokens / 1e9)}B tokens / {num(tokens_per_s, 'tokens/s')} = {num(time_s / 3600, 'h')}"
                f" vs the {num(o.deadline_hours, 'h')} deadline: {'met' if meets else 'missed'}; {need} node(s) finish it in time"
            )
            headline = (
                f"The job takes {num(time_s / 3600, 'h')} of its {num(o.deadline_hours, 'h')} at {num(tokens_per_s, 'tokens/s')}"
                f" (${num(usd_per_m)} per M tokens, batch {num(batch)} per replica)"
            )
            return headline, pace_words() | {"one_node_lost": _lost_text(time_s, lost_s, nodes, deadline_s), "job": job}

        problems = (
            ()
            if meets
            else (
                Problem(
                    field="objective.deadline_hours",
                    problem=f"the job takes {num(time_s / 3600, 'h')}, over its {num(o.deadline_hours, 'h')} deadline",
                    change=f"run on {need} nodes (hardware.nodes), quantize, or move the deadline",
                ),
            )
        )
        job = ObjectiveAnalysis(
            **pace,
            time_s=time_s,
            deadline_s=deadline_s,
            meets=meets,
            nodes_for_deadline=need,
            longest_output_tokens=0.0,
            straggler_s=0.0,
            straggler_share=0.0,
            time_one_node_lost_s=lost_s,
            problems=problems,
        )
        job._words = job_words
        return job
    prompts = o.batch_prompts
    work_s, longest, tail_batch, tail_step_s, straggler_s = run = _rollout(brief, shape, prompts, fleet)
    makespan = run.makespan_s
    lost_s = (
        max(_one_node_lost(work_s, nodes), _straggler(brief, shape, prompts, longest, fleet.prefill_s, shape.replicas_in(nodes - 1))[2])
        if nodes > 1
        else math.inf
    )
    share = 1 - work_s / makespan if makespan > 0 else 0.0
    deadline_s = o.batch_deadline_s
    meets = makespan <= deadline_s
    need = max(math.ceil(nodes * work_s / deadline_s), 1) if straggler_s <= deadline_s else 0  # 0: no fleet beats the straggler
    binds = "the stragglers set it" if straggler_s > work_s else "the bulk's work sets it"

    def rollout_words() -> tuple[str, dict[str, str]]:
        longest_words = (
            f"the longest of {prompts:,} outputs (gamma, mean {num(w.output_tokens_mean)}, p95 {num(w.output_tokens_p95)}): its 1 - 1/{prompts + 1:,}"
            f" quantile, capped at {num(o.output_tokens_max)} = {num(longest, 'tokens')}"
        )
        makespan_words = (
            f"bulk: {prompts:,} x {num(request_s, 's')} / {replicas} replicas = {num(work_s, 's')};"
            f" straggler: {num(fleet.prefill_s * 1e3, 'ms')} prefill + {num(longest)} x {num(tail_step_s * 1e3, 'ms')} (step at the tail's batch {num(tail_batch)})"
            f" = {num(straggler_s, 's')}; makespan max = {num(makespan, 's')}, {pct(share)} of it waiting on stragglers"
        )
        headline = (
            f"A {prompts:,}-prompt batch finishes in {num(makespan, 's')} of its {num(deadline_s, 's')}: {binds}"
            f" ({pct(share)} of the makespan waits on the longest output, {num(longest, 'tokens')})"
        )
        lost = _lost_text(makespan, lost_s, nodes, o.batch_deadline_s)
        return headline, pace_words() | {"longest": longest_words, "makespan": makespan_words, "one_node_lost": lost}

    problems_list: list[Problem] = []
    if not meets:
        if straggler_s > deadline_s:
            change = (
                f"cap the rollout's output (objective.output_tokens_max, now {num(o.output_tokens_max)}), use partial rollouts"
                " (carry unfinished outputs to the next batch), or shorten the step (lower-precision weights, higher TP)"
            )
        else:
            change = f"run on {need} nodes (hardware.nodes), or raise the batch per replica"
        problems_list.append(
            Problem(
                field="objective.batch_deadline_s",
                problem=f"the batch finishes in {num(makespan, 's')}, over its {num(deadline_s, 's')} deadline ({binds})",
                change=change,
            )
        )
    rollout = ObjectiveAnalysis(
        **pace,
        time_s=makespan,
        deadline_s=deadline_s,
        meets=meets,
        nodes_for_deadline=need,
        longest_output_tokens=longest,
        straggler_s=straggler_s,
        straggler_share=share,
        time_one_node_lost_s=lost_s,
        problems=tuple(problems_list),
    )
    rollout._words = rollout_words
    return rollout
