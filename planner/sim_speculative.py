"""The engine loop of one replica with speculative decoding, turned on and off step by step by the running batch.

vLLM's `disable_by_batch_size`: a step whose running requests number more than the threshold is a plain decode
step (one token a sequence); at or below it the step drafts k tokens a sequence and verifies them
(planner.step_model.speculative_step_time_s), and each decoding sequence emits the accepted run of drafts plus
one: j tokens with probability a^(j-1) (1 - a) for j <= k, k + 1 with probability a^k, drawn per sequence and
step. A sequence's KV grows by the tokens it emits; one gap between streamed chunks a step goes to the ITL
histogram. Admission (TensorRT-LLM's whole-request reservation included), chunked prefill, the token budget,
recompute preemption, the prefix cache and the vision encoder's time in the step that first admits a request are
as in planner.sim_engine; the decoders are kept one by
one (a speculative batch is small), not in lockstep.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from planner.sim_engine import F64, I64, ITL_BINS, ITL_BINS_PER_DECADE, ITL_LOW_S

__all__ = ["speculative_engine_loop"]

_WAITING, _PREFILL, _DECODE, _DONE = 0, 1, 2, 3


def speculative_engine_loop(  # one function, so numba compiles the whole loop
    arrival: F64,
    prompt: I64,
    output: I64,
    cached: I64,
    clients: int,
    step_k: tuple[float, ...],
    step_time: Callable[..., Any],  # step_model.step_time_s, compiled
    spec_k: tuple[float, ...],
    spec_time: Callable[..., Any],  # step_model.speculative_step_time_s, compiled
    off_above: int,
    acceptance: float,
    draft_tokens: int,
    seed: int,
    max_batched: int,
    max_seqs: int,
    kv_capacity: int,
    chunked: bool,
    encoder_s: float,
    reserve_whole: bool,
) -> tuple[F64, F64, F64, F64, I64, F64, int, int, float, int]:
    """Simulate until every request ends; as planner.sim_engine.engine_loop, plus the steps that were speculative."""
    np.random.seed(seed)
    n = arrival.shape[0]
    if clients > 0:
        arrival = arrival.copy()
    max_seqs = min(max_seqs, max_batched)
    scheduled = np.full(n, np.nan)
    first_tok = np.full(n, np.nan)
    finish = np.full(n, np.nan)
    state = np.zeros(n, dtype=np.int8)
    generated = np.zeros(n, dtype=np.int64)
    computed = np.zeros(n, dtype=np.int64)  # tokens whose KV exists
    last_tok = np.zeros(n, dtype=np.float64)
    chunk = np.zeros(n, dtype=np.int64)
    run = np.empty(max_seqs + 1, dtype=np.int64)  # running requests in admission order
    n_run = 0
    queue = np.empty(n + 1, dtype=np.int64)  # ring buffer: preempted requests go to its front
    q_head = 0
    q_len = 0
    itl_count = np.zeros(ITL_BINS, dtype=np.int64)
    itl_sum = np.zeros(ITL_BINS, dtype=np.float64)
    bins_per_e = ITL_BINS_PER_DECADE / math.log(10.0)
    known = min(clients, n) if clients > 0 else n
    next_arrival = 0
    kv_used = 0
    reserved = 0  # prompt + reply of every running request: the KV they hold once they end
    t = 0.0
    steps = 0
    spec_steps = 0
    preemptions = 0
    busy = 0.0
    done = 0
    most = draft_tokens + 1
    while done < n:
        while next_arrival < known and arrival[next_arrival] <= t:
            queue[(q_head + q_len) % (n + 1)] = next_arrival
            q_len += 1
            next_arrival += 1
        if n_run == 0 and q_len == 0:
            if next_arrival < known:
                t = arrival[next_arrival]
                continue
            break
        n_dec = 0
        for j in range(n_run):
            if state[run[j]] == _DECODE:
                n_dec += 1
        on = n_run <= off_above
        # --- 1. decodes: room for the tokens they may emit; preempt the newest running request while short ---
        preempted = False
        while n_dec > 0 and kv_used + n_dec * (most if on else 1) > kv_capacity:
            victim = run[n_run - 1]
            n_run -= 1
            if state[victim] == _DECODE:
                n_dec -= 1
                last_tok[victim] = t
            kv_used -= computed[victim]
            reserved -= prompt[victim] + output[victim]
            computed[victim] = 0
            state[victim] = _WAITING
            q_head = (q_head - 1) % (n + 1)
            queue[q_head] = victim
            q_len += 1
            preemptions += 1
            preempted = True
            on = n_run <= off_above
        reserve = n_dec * (most if on else 1)
        budget = max_batched - n_dec
        tokens = n_dec
        context = 0.0
        pairs = 0.0
        n_pre = 0
        encode = 0.0  # the vision encoder's time for the requests this step admits for the first time
        for j in range(n_run):
            r = run[j]
            if state[r] == _DECODE:
                context += computed[r] + 1
                continue
            take = max(min(prompt[r] + generated[r] - computed[r], budget, kv_capacity - kv_used - reserve), 0)
            chunk[r] = take
            n_pre += 1
            if take > 0:
                kv_used += take
                budget -= take
                tokens += take
                context += computed[r] + take
                pairs += take * computed[r] + take * (take + 1.0) / 2.0
        # --- 2. waiting requests, first come first served -----------------------------------------
        while not preempted and q_len > 0 and n_run < max_seqs and budget > 0:
            r = queue[q_head]
            hit = cached[r]
            want = prompt[r] + generated[r] - hit
            take = min(want, budget)
            if not chunked and take < want and n_run > 0:
                break
            if kv_used + reserve + hit + take > kv_capacity:
                break
            if reserve_whole and reserved + prompt[r] + output[r] > kv_capacity:
                break  # GUARANTEED_NO_EVICT, as planner.sim_engine
            q_head = (q_head + 1) % (n + 1)
            q_len -= 1
            if np.isnan(scheduled[r]):
                scheduled[r] = t
                encode += encoder_s
            computed[r] = hit
            state[r] = _PREFILL
            kv_used += hit + take
            reserved += prompt[r] + output[r]
            run[n_run] = r
            n_run += 1
            chunk[r] = take
            n_pre += 1
            budget -= take
            tokens += take
            context += hit + take
            pairs += take * hit + take * (take + 1.0) / 2.0
        if tokens == 0:
            if n_run > 0:  # prefills stuck without KV and nothing decoding: free the newest
                r = run[n_run - 1]
                n_run -= 1
                kv_used -= computed[r]
                reserved -= prompt[r] + output[r]
                computed[r] = 0
                state[r] = _WAITING
                q_head = (q_head - 1) % (n + 1)
                queue[q_head] = r
                q_len += 1
                preemptions += 1
            elif q_len > 0:  # the head of the queue can never fit: drop it so the run ends
                q_head = (q_head + 1) % (n + 1)
                q_len -= 1
                done += 1
                if clients > 0 and known < n:
                    arrival[known] = t
                    known += 1
            continue
        # --- 3. the step's time: speculative while the running batch is at or under the threshold ------
        spec = on and n_dec > 0
        seqs = float(n_dec + n_pre)
        dt = spec_time(spec_k, float(tokens), seqs, context, pairs) if spec else step_time(step_k, float(tokens), seqs, context, pairs)
        dt += encode  # the images' encoder runs on the same GPUs, before the step (as planner.sim_engine)
        t += dt
        busy += dt
        steps += 1
        spec_steps += 1 if spec else 0
        # --- 4. every sequence that caught up samples: decoders their accepted run + 1, prefills their next token ---
        k = 0
        for j in range(n_run):
            r = run[j]
            if state[r] == _DECODE:
                emit = 1
                if spec and acceptance > 0:
                    emit = min(np.random.geometric(1.0 - acceptance), most)
                emit = min(emit, output[r] - generated[r])
                generated[r] += emit
                computed[r] += emit  # the KV grows by the tokens emitted
                kv_used += emit
                gap = t - last_tok[r]
                b = min(int(math.log(gap / ITL_LOW_S) * bins_per_e), ITL_BINS - 1) if gap > ITL_LOW_S else 0
                itl_count[b] += 1
                itl_sum[b] += gap
            else:
                computed[r] += chunk[r]
                if computed[r] < prompt[r] + generated[r]:
                    run[k] = r
                    k += 1
                    continue
                generated[r] += 1
                if generated[r] == 1:
                    first_tok[r] = t
                else:  # the first token after a preemption: one gap, since the token before it
                    gap = t - last_tok[r]
                    b = min(int(math.log(gap / ITL_LOW_S) * bins_per_e), ITL_BINS - 1) if gap > ITL_LOW_S else 0
                    itl_count[b] += 1
                    itl_sum[b] += gap
                state[r] = _DECODE
            last_tok[r] = t
            if generated[r] >= output[r]:
                finish[r] = t
                state[r] = _DONE
                kv_used -= computed[r]
                reserved -= prompt[r] + output[r]
                done += 1
                if clients > 0 and known < n:
                    arrival[known] = t
                    known += 1
                continue
            run[k] = r
            k += 1
        n_run = k
    return arrival, scheduled, first_tok, finish, itl_count, itl_sum, steps, preemptions, busy, spec_steps
