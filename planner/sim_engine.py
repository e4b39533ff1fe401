"""The engine loop of one replica, step by step, as a vLLM-style continuous-batching scheduler runs it.

Each step:
1. Running requests first, in admission order: a decoding one gets 1 token, one still prefilling gets
   the rest of its prompt up to the remaining token budget (chunked prefill). When the KV cache cannot
   hold the new tokens, the most recently admitted running request is preempted (its KV is dropped and
   recomputed later, vLLM's recompute preemption) and goes back to the front of the queue.
2. Then waiting requests, first come first served, while the token budget (max-num-batched-tokens),
   the sequence limit (max-num-seqs) and the KV cache allow. With `reserve_whole_request` (TensorRT-LLM's
   default capacity policy, GUARANTEED_NO_EVICT) a request is admitted only when the KV cache can also hold
   its whole prompt and reply besides the whole lengths of the running ones, so no request is ever preempted. The prefix cache covers a request's
   cached prompt tokens at admission: they hold KV but cost no compute. A request's images run through the
   vision encoder in the step that first admits it (its mean encoder time, on the same GPUs, before the step).
3. The step takes planner.step_model.step_time_s of its tokens, sequences, KV read and prefill attention
   pairs (GEMMs, attention, all-reduce, fixed and per-sequence costs). A request whose KV catches up with
   its tokens samples one token at the end of the step: the first one sets its TTFT, the last one ends it.

The loop is written in the subset of Python that numba compiles (`cache=True`, so later processes
load the machine code instead of compiling it again); `run_engine` calls the compiled version.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
import numpy.typing as npt
from pydantic import BaseModel, ConfigDict

from planner.step_model import StepConstants, speculative_step, step_time_s

__all__ = ["ITL_BINS", "ITL_BINS_PER_DECADE", "ITL_LOW_S", "EngineOutput", "StepCosts", "engine_loop", "run_engine", "warm_up"]

F64 = npt.NDArray[np.float64]
I64 = npt.NDArray[np.int64]

# The inter-token gaps go into a fixed histogram, so a run's memory follows its requests, not its steps.
# Bins are log-spaced, 2,000 a decade from 0.1 us to 1e5 s (shorter and longer gaps go to the end bins),
# so each spans a factor 10^(1/2000) = 1.00115. A bin keeps its token count and the sum of its gaps: a
# percentile is the mean gap of the bin that holds the exact percentile, off by less than the bin's
# width (0.12%); the mean (every bin's sum / every bin's count) is exact.
ITL_BINS_PER_DECADE = 2000
ITL_LOW_S = 1e-7
ITL_BINS = 12 * ITL_BINS_PER_DECADE


class StepCosts(BaseModel):
    """What one engine step costs (planner.step_model) and the engine's limits (see simulator.step_costs)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    step: StepConstants
    max_num_batched_tokens: int
    max_num_seqs: int
    kv_capacity_tokens: int
    chunked_prefill: bool
    speculative: tuple[float, ...] | None = None  # step_model.spec_constants: a speculative step verifies k + 1 tokens a sequence
    spec_off_above_batch: int = 0  # speculation runs while the running requests are at most this many (disable_by_batch_size)
    acceptance_rate: float = 0.0  # each draft token's chance of acceptance
    draft_tokens: int = 0  # k
    seed: int = 0  # the per-step draws of the tokens a speculative step emits
    encoder_s: float = 0.0  # a request's vision encoder time, in the step that first admits it (planner.multimodal)
    reserve_whole_request: bool = False  # admit only what can run to its last token without preemption (TensorRT-LLM)


class EngineOutput(BaseModel):
    """Raw per-request times from one run (s; NaN for a request that never got that far)."""

    model_config = ConfigDict(frozen=True, extra="forbid", arbitrary_types_allowed=True)

    arrival_s: F64
    scheduled_s: F64  # first admission
    first_token_s: F64
    finish_s: F64
    itl_bin_count: I64  # tokens whose inter-token gap fell in each bin (see ITL_BINS_PER_DECADE) ...
    itl_bin_sum_s: F64  # ... and the sum of those gaps
    steps: int
    preemptions: int
    busy_s: float
    speculative_steps: int = 0  # steps that ran speculative (the running batch at or under the threshold)


_WAITING, _PREFILL, _DECODE, _DONE = 0, 1, 2, 3


def engine_loop(  # one function, so numba compiles the whole loop
    arrival: F64,
    prompt: I64,
    output: I64,
    cached: I64,
    clients: int,
    step_k: tuple[float, ...],
    max_batched: int,
    max_seqs: int,
    kv_capacity: int,
    chunked: bool,
    encoder_s: float,
    reserve_whole: bool,
) -> tuple[F64, F64, F64, F64, I64, F64, int, int, float]:
    """Simulate until every request ends; per-request times and the histogram of the ITL gaps.

    Decoding requests advance in lockstep (one token each per step), so they are kept as a count and
    a context sum, and each is filed under the step it will finish in: a step costs O(1) for its
    decodes plus O(1) per prefilling request, instead of a pass over every running sequence.
    """
    n = arrival.shape[0]
    if clients > 0:
        arrival = arrival.copy()  # closed loop: filled in as clients send
    max_seqs = min(max_seqs, max_batched)  # every running decode needs one token of the step's budget
    # per request: 65 bytes besides the inputs (int32 holds indices up to 2e9 and lengths up to 10M tokens)
    scheduled = np.full(n, np.nan)
    first_tok = np.full(n, np.nan)
    finish = np.full(n, np.nan)
    state = np.zeros(n, dtype=np.int8)
    generated = np.zeros(n, dtype=np.int32)  # output tokens sampled so far (decoders: at entry)
    computed = np.zeros(n, dtype=np.int32)  # tokens whose KV exists (decoders: at entry)
    entry = np.zeros(n, dtype=np.int64)  # decoders: the step that sampled the token they entered with
    last_tok = np.zeros(n, dtype=np.float64)
    # decoders filed by finishing step: doubly linked lists in a ring of buckets
    ring = int(output.max()) + 2 if n > 0 else 2
    head = np.full(ring, -1, dtype=np.int32)
    nxt = np.full(n, -1, dtype=np.int32)
    prv = np.full(n, -1, dtype=np.int32)
    bucket = np.zeros(n, dtype=np.int32)
    # at most max_seqs requests run at once: these arrays are sized by it, not by the requests
    running = min(max_seqs, n) + 1
    # running requests in admission order (finished ones are skipped when popping a victim, and dropped
    # when the stack fills: it holds twice the running limit, so that happens at most every max_seqs pushes)
    stack = np.empty(2 * running, dtype=np.int64)
    top = 0
    prefilling = np.empty(running, dtype=np.int64)  # requests still prefilling, in admission order
    chunk = np.empty(running, dtype=np.int64)
    n_pre = 0
    queue = np.empty(n + 1, dtype=np.int32)  # ring buffer: preempted requests go to its front
    q_head = 0
    q_len = 0
    itl_count = np.zeros(ITL_BINS, dtype=np.int64)
    itl_sum = np.zeros(ITL_BINS, dtype=np.float64)
    bins_per_e = ITL_BINS_PER_DECADE / math.log(10.0)
    known = min(clients, n) if clients > 0 else n  # closed loop: a client sends its next request when one ends
    next_arrival = 0
    n_dec = 0
    dec_context = 0  # KV tokens the decoders hold at the start of the step
    kv_used = 0
    reserved = 0  # prompt + reply of every running request: the KV they hold once they end
    t = 0.0
    steps = 0
    preemptions = 0
    busy = 0.0
    done = 0
    while done < n:
        while next_arrival < known and arrival[next_arrival] <= t:
            queue[(q_head + q_len) % (n + 1)] = next_arrival
            q_len += 1
            next_arrival += 1
        if n_dec + n_pre == 0 and q_len == 0:
            if next_arrival < known:
                t = arrival[next_arrival]
                continue
            break
        step = steps + 1
        # --- 1. decodes: one token each; preempt the newest running request while the KV is short ---
        preempted = False
        while n_dec > 0 and kv_used + n_dec > kv_capacity:
            while state[stack[top - 1]] == _DONE:
                top -= 1
            victim = stack[top - 1]
            top -= 1
            if state[victim] == _DECODE:
                held = computed[victim] + (step - 1 - entry[victim])
                generated[victim] += step - 1 - entry[victim]
                last_tok[victim] = t
                n_dec -= 1
                dec_context -= held
                b = bucket[victim]
                if prv[victim] >= 0:
                    nxt[prv[victim]] = nxt[victim]
                else:
                    head[b] = nxt[victim]
                if nxt[victim] >= 0:
                    prv[nxt[victim]] = prv[victim]
            else:
                held = computed[victim]
                k = 0
                for j in range(n_pre):
                    if prefilling[j] != victim:
                        prefilling[k] = prefilling[j]
                        k += 1
                n_pre = k
            kv_used -= held
            reserved -= prompt[victim] + output[victim]
            computed[victim] = 0
            state[victim] = _WAITING
            q_head = (q_head - 1) % (n + 1)
            queue[q_head] = victim
            q_len += 1
            preemptions += 1
            preempted = True
        budget = max_batched - n_dec
        tokens = n_dec
        context = dec_context + n_dec
        pairs = 0.0  # (query, key) pairs of the prompt chunks' attention
        encode = 0.0  # the vision encoder's time for the requests this step admits for the first time
        kv_used += n_dec
        # --- 2. running prefills, oldest first, within the budget and the free KV ---------------------
        for j in range(n_pre):
            r = prefilling[j]
            take = min(prompt[r] + generated[r] - computed[r], budget, kv_capacity - kv_used)
            take = max(take, 0)
            chunk[j] = take
            if take > 0:
                kv_used += take
                budget -= take
                tokens += take
                context += computed[r] + take
                pairs += take * computed[r] + take * (take + 1.0) / 2.0
        # --- 3. waiting requests, first come first served -----------------------------------------
        while not preempted and q_len > 0 and n_dec + n_pre < max_seqs and budget > 0:
            r = queue[q_head]
            hit = cached[r]
            want = prompt[r] + generated[r] - hit
            take = min(want, budget)
            if not chunked and take < want and n_dec + n_pre > 0:
                break  # without chunking a prompt runs whole, alone if it must
            if kv_used + hit + take > kv_capacity:
                break
            if reserve_whole and reserved + prompt[r] + output[r] > kv_capacity:
                break  # GUARANTEED_NO_EVICT: it waits until the running requests leave room for all of it
            q_head = (q_head + 1) % (n + 1)
            q_len -= 1
            if np.isnan(scheduled[r]):
                scheduled[r] = t
                encode += encoder_s
            computed[r] = hit
            state[r] = _PREFILL
            kv_used += hit + take
            reserved += prompt[r] + output[r]
            stack[top] = r
            top += 1
            if top == stack.shape[0]:  # drop finished requests from the stack
                k = 0
                for j in range(top):
                    if state[stack[j]] != _DONE:
                        stack[k] = stack[j]
                        k += 1
                top = k
            prefilling[n_pre] = r
            chunk[n_pre] = take
            n_pre += 1
            budget -= take
            tokens += take
            context += hit + take
            pairs += take * hit + take * (take + 1.0) / 2.0
        if tokens == 0:
            if n_pre > 0:  # prefills stuck without KV and nothing decoding: free the newest
                r = prefilling[n_pre - 1]
                n_pre -= 1
                while stack[top - 1] != r:
                    top -= 1
                top -= 1
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
        # --- 4. the step's time ---------------------------------------------------------------
        dt = step_time_s(step_k, float(tokens), float(n_dec + n_pre), float(context), pairs) + encode
        t += dt
        busy += dt
        steps = step
        # --- 5. decoders sample a token; those filed under this step end ---------------------------
        if n_dec > 0:
            gap_bin = min(int(math.log(dt / ITL_LOW_S) * bins_per_e), ITL_BINS - 1) if dt > ITL_LOW_S else 0
            itl_count[gap_bin] += n_dec
            itl_sum[gap_bin] += dt * n_dec
            dec_context += n_dec
        b = step % ring
        r = head[b]
        while r >= 0:
            held = computed[r] + (step - entry[r])
            finish[r] = t
            state[r] = _DONE
            kv_used -= held
            reserved -= prompt[r] + output[r]
            dec_context -= held
            n_dec -= 1
            done += 1
            if clients > 0 and known < n:
                arrival[known] = t
                known += 1
            r = nxt[r]
        head[b] = -1
        # --- 6. prefills that caught up sample a token: the first, or the next after a preemption --
        k = 0
        for j in range(n_pre):
            r = prefilling[j]
            computed[r] += chunk[j]
            if computed[r] < prompt[r] + generated[r]:
                prefilling[k] = r
                k += 1
                continue
            generated[r] += 1
            if generated[r] == 1:
                first_tok[r] = t
            else:  # the first token after a preemption: one gap, since the token before it
                gap = t - last_tok[r]
                gap_bin = min(int(math.log(gap / ITL_LOW_S) * bins_per_e), ITL_BINS - 1) if gap > ITL_LOW_S else 0
                itl_count[gap_bin] += 1
                itl_sum[gap_bin] += gap
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
            state[r] = _DECODE
            entry[r] = step
            n_dec += 1
            dec_context += computed[r]
            b = (step + output[r] - generated[r]) % ring
            bucket[r] = b
            prv[r] = -1
            nxt[r] = head[b]
            if head[b] >= 0:
                prv[head[b]] = r
            head[b] = r
        n_pre = k
    return arrival, scheduled, first_tok, finish, itl_count, itl_sum, steps, preemptions, busy


_compiled: list[Callable[..., Any]] = []


def _engine_cache_locator() -> Any:
    """numba's cache locator for the compiled engine_loop, whose source stamp covers step_model.py too: the loop's
    machine code holds the step function, so a change to either file must recompile it."""
    import hashlib

    from numba.core import caching, config

    from planner import step_model

    # numba's locator for NUMBA_CACHE_DIR when it is set, else for a module with a writable __pycache__
    base: Any = caching.UserProvidedCacheLocator if getattr(config, "CACHE_DIR", "") else caching.InTreeCacheLocator

    class EngineCacheLocator(base):  # type: ignore[misc]
        def get_source_stamp(self) -> tuple[Any, str]:
            with open(step_model.__file__, "rb") as f:
                return super().get_source_stamp(), hashlib.sha256(f.read()).hexdigest()

        @classmethod
        def from_function(cls, py_func: Any, py_file: str) -> Any:
            return super().from_function(py_func, py_file) if py_func.__code__ is engine_loop.__code__ else None

    return EngineCacheLocator


def _kernel() -> Callable[..., Any]:
    """The compiled loop over the compiled step function (speculative runs use planner.sim_speculative's loop).

    numba compiles a copy of engine_loop whose global `step_time_s` is the compiled step function: a call to a
    compiled global is cached with the loop, where a compiled function passed as an argument is not (its type names
    its address, so every new process compiled the loop again, ~5 s, and added a copy of it to the cache)."""
    if not _compiled:
        import types

        import numba  # ~0.3 s to import: only a run loads it, not `import planner.simulator`
        from numba.core.caching import CacheImpl

        locator = _engine_cache_locator()
        if not any(c.__name__ == locator.__name__ for c in CacheImpl._locator_classes):
            CacheImpl._locator_classes.insert(0, locator)  # it answers for engine_loop only
        names = dict(engine_loop.__globals__) | {"step_time_s": numba.njit(nogil=True)(step_time_s)}
        loop = types.FunctionType(engine_loop.__code__, names, engine_loop.__name__)
        loop.__qualname__ = engine_loop.__qualname__
        _compiled.append(numba.njit(cache=True, nogil=True)(loop))
    return _compiled[0]


def warm_up() -> None:
    """Load (or, the first time on a machine, compile) the kernel, so timed runs measure simulation only."""
    global _warm
    if not _warm:
        one = np.ones(1, dtype=np.int64)
        constants = StepConstants.only(weights_s=1e-3, gemm_s_per_token=1e-6, kv_s_per_token=1e-9)
        _kernel()(np.zeros(1), one * 2, one, one * 0, 0, constants.values(), 16, 1, 64, True, 0.0, False)
        _warm = True


_warm = False


_spec_compiled: list[Callable[..., Any]] = []


def _speculative_kernel() -> Callable[..., Any]:
    """planner.sim_speculative's loop over the compiled plain and speculative step functions."""
    if not _spec_compiled:
        import numba

        from planner.sim_speculative import speculative_engine_loop

        plain: Callable[..., Any] = numba.njit(cache=True, nogil=True)(step_time_s)
        spec = numba.njit(nogil=True)(speculative_step(plain))
        loop = numba.njit(nogil=True)(speculative_engine_loop)

        def run(
            arrival: F64,
            prompt: I64,
            output: I64,
            cached: I64,
            clients: int,
            step_k: tuple[float, ...],
            spec_k: tuple[float, ...],
            *rest: Any,
        ) -> Any:
            return loop(arrival, prompt, output, cached, clients, step_k, plain, spec_k, spec, *rest)

        _spec_compiled.append(run)
    return _spec_compiled[0]


def _request_arrays(arrival: F64, prompt: I64, output: I64, cached: I64) -> tuple[F64, I64, I64, I64]:
    """The requests as the compiled loops take them: contiguous float64 arrivals and int64 token counts."""
    return (
        np.ascontiguousarray(arrival, dtype=np.float64),
        np.ascontiguousarray(prompt, dtype=np.int64),
        np.ascontiguousarray(output, dtype=np.int64),
        np.ascontiguousarray(cached, dtype=np.int64),
    )


def _limits(costs: StepCosts) -> tuple[int, int, int, bool, float, bool]:
    """The engine limits both loops take after their step constants."""
    return (
        costs.max_num_batched_tokens,
        costs.max_num_seqs,
        costs.kv_capacity_tokens,
        costs.chunked_prefill,
        costs.encoder_s,
        costs.reserve_whole_request,
    )


def _engine_output(res: tuple[Any, ...], speculative_steps: int = 0) -> EngineOutput:
    """A loop's first nine results (the same in both loops) as an EngineOutput."""
    arrival_s, scheduled, first_tok, finish, itl_count, itl_sum, steps, preemptions, busy = res[:9]
    return EngineOutput(
        arrival_s=arrival_s,
        scheduled_s=scheduled,
        first_token_s=first_tok,
        finish_s=finish,
        itl_bin_count=itl_count,
        itl_bin_sum_s=itl_sum,
        steps=int(steps),
        preemptions=int(preemptions),
        busy_s=float(busy),
        speculative_steps=speculative_steps,
    )


def _run_speculative(arrival: F64, prompt: I64, output: I64, cached: I64, clients: int, costs: StepCosts) -> EngineOutput:
    assert costs.speculative is not None
    res = _speculative_kernel()(
        *_request_arrays(arrival, prompt, output, cached),
        int(clients),
        costs.step.values(),
        costs.speculative,
        costs.spec_off_above_batch,
        costs.acceptance_rate,
        costs.draft_tokens,
        costs.seed,
        *_limits(costs),
    )
    return _engine_output(res, speculative_steps=int(res[9]))


def run_engine(arrival: F64, prompt: I64, output: I64, cached: I64, clients: int, costs: StepCosts) -> EngineOutput:
    """Run the compiled loop over one set of requests (with speculative decoding: planner.sim_speculative's)."""
    if costs.speculative is not None:
        return _run_speculative(arrival, prompt, output, cached, clients, costs)
    res = _kernel()(*_request_arrays(arrival, prompt, output, cached), int(clients), costs.step.values(), *_limits(costs))
    return _engine_output(res)
