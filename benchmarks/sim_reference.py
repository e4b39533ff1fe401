"""The straightforward simulator the fast one is measured against: the same scheduler, in plain Python.

A pass over the running sequences per step, Python lists and one small object per request, no
compilation, no bookkeeping tricks. It takes the same requests and step costs as
planner.sim_engine.run_engine and returns the same per-request times, so the benchmark can compare
both the speed and the results.
"""

from __future__ import annotations

import math
from collections import deque
from dataclasses import dataclass, field

from planner.sim_engine import StepCosts
from planner.step_model import chunk_pairs, step_time_s

__all__ = ["ReferenceOutput", "reference_run"]

WAITING, PREFILL, DECODE, DONE = range(4)


@dataclass(eq=False)
class _Request:
    arrival: float
    prompt: int
    output: int
    cached: int
    state: int = WAITING
    computed: int = 0
    generated: int = 0
    scheduled: float = math.nan
    first_token: float = math.nan
    finish: float = math.nan
    last_token: float = 0.0


@dataclass
class ReferenceOutput:
    arrival_s: list[float]
    first_token_s: list[float]
    finish_s: list[float]
    itl_gaps_s: list[float] = field(default_factory=list)  # one entry per inter-token gap
    steps: int = 0
    preemptions: int = 0


def _preempt(r: _Request, waiting: deque[_Request]) -> int:
    """Drop a request's KV and put it back at the front of the queue; returns the KV tokens freed."""
    freed = r.computed
    r.computed, r.state = 0, WAITING
    waiting.appendleft(r)
    return freed


def reference_run(arrival: list[float], prompt: list[int], output: list[int], cached: list[int], costs: StepCosts) -> ReferenceOutput:
    """Open-loop arrivals (the benchmark's workload): decodes first, then running prefills, then the queue."""
    reqs = [_Request(arrival[i], prompt[i], output[i], cached[i]) for i in range(len(arrival))]
    max_seqs = min(costs.max_num_seqs, costs.max_num_batched_tokens)
    cap = costs.kv_capacity_tokens
    constants = costs.step.values()
    waiting: deque[_Request] = deque()
    running: list[_Request] = []  # admission order
    gaps: list[float] = []
    kv_used, t, steps, preemptions, next_arrival, done = 0, 0.0, 0, 0, 0, 0
    n = len(reqs)
    while done < n:
        while next_arrival < n and reqs[next_arrival].arrival <= t:
            waiting.append(reqs[next_arrival])
            next_arrival += 1
        if not running and not waiting:
            if next_arrival < n:
                t = reqs[next_arrival].arrival
                continue
            break
        decoders = [r for r in running if r.state == DECODE]
        prefills = [r for r in running if r.state == PREFILL]
        preempted = False
        while decoders and kv_used + len(decoders) > cap:  # preempt the newest running request
            victim = running.pop()
            (decoders if victim.state == DECODE else prefills).remove(victim)
            victim.last_token = t if victim.state == DECODE else victim.last_token
            kv_used -= _preempt(victim, waiting)
            preemptions += 1
            preempted = True
        budget = costs.max_num_batched_tokens - len(decoders)
        tokens = len(decoders)
        context = sum(r.computed + 1 for r in decoders)
        pairs = 0.0
        kv_used += len(decoders)
        chunks = []
        for r in prefills:
            take = max(min(r.prompt + r.generated - r.computed, budget, cap - kv_used), 0)
            chunks.append(take)
            if take > 0:
                kv_used += take
                budget -= take
                tokens += take
                context += r.computed + take
                pairs += chunk_pairs(r.computed, take)
        while not preempted and waiting and len(decoders) + len(prefills) < max_seqs and budget > 0:
            r = waiting[0]
            hit = r.cached
            want = r.prompt + r.generated - hit
            take = min(want, budget)
            if not costs.chunked_prefill and take < want and (decoders or prefills):
                break
            if kv_used + hit + take > cap:
                break
            if costs.reserve_whole_request and sum(x.prompt + x.output for x in running) + r.prompt + r.output > cap:
                break  # TensorRT-LLM's GUARANTEED_NO_EVICT: room for the whole of every running request and this one
            waiting.popleft()
            if math.isnan(r.scheduled):
                r.scheduled = t
            r.computed, r.state = hit, PREFILL
            kv_used += hit + take
            running.append(r)
            prefills.append(r)
            chunks.append(take)
            budget -= take
            tokens += take
            context += hit + take
            pairs += chunk_pairs(hit, take)
        if tokens == 0:
            if prefills:  # stuck without KV and nothing decoding: free the newest
                r = prefills[-1]
                running.remove(r)
                kv_used -= _preempt(r, waiting)
                preemptions += 1
            elif waiting:  # can never fit: drop it
                waiting.popleft()
                done += 1
            continue
        dt = float(step_time_s(constants, tokens, len(decoders) + len(prefills), context, pairs))
        t += dt
        steps += 1
        for r in decoders:
            r.computed += 1
            r.generated += 1
            gaps.append(t - r.last_token)
            r.last_token = t
            if r.generated >= r.output:
                r.finish, r.state = t, DONE
                kv_used -= r.computed
                done += 1
        for r, take in zip(prefills, chunks, strict=True):
            r.computed += take
            if r.computed < r.prompt + r.generated:
                continue
            r.generated += 1
            if r.generated == 1:
                r.first_token = t
            else:
                gaps.append(t - r.last_token)
            r.last_token = t
            if r.generated >= r.output:
                r.finish, r.state = t, DONE
                kv_used -= r.computed
                done += 1
            else:
                r.state = DECODE
        running = [r for r in running if r.state != DONE]
    return ReferenceOutput(
        arrival_s=[r.arrival for r in reqs],
        first_token_s=[r.first_token for r in reqs],
        finish_s=[r.finish for r in reqs],
        itl_gaps_s=gaps,
        steps=steps,
        preemptions=preemptions,
    )
