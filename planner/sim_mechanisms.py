"""The simulator's serving mechanisms: speculative decoding in a replica, and the two pools of a disaggregated design.

Speculative decoding: every step is the speculative step (planner.step_model.speculative_step_time_s, the
planner's own formula, compiled), and a sequence emits a random number of tokens a step: the accepted run of
drafts plus one, j tokens with probability a^(j-1) (1 - a) for j <= k, k + 1 with probability a^k. Each
request's steps are drawn up front, so the engine's lockstep loop runs them as its "tokens"; TPOT and the output
rate count the real tokens, the ITL histogram the gaps between streamed chunks (one a step). The KV a sequence
holds grows one token a step instead of the tokens it emits (under 1% of a 2,000-token context over a reply).

Disaggregation: one prefill replica and one decode replica, the same requests through both. The prefill replica
runs each prompt to its first token (max one output token, no decode in its steps) at the prefill pool's rate per
replica; each prompt's KV then crosses the network (planner.disagg.kv_transfer_s) and arrives at the decode
replica with its prompt cached (one token left to compute, as a KV connector leaves it), at the decode pool's rate
per replica: the same arrival sequence on a clock scaled by prefill replicas / decode replicas, so each pool sees
its own Poisson rate. A request's TTFT runs from its arrival to its first token on the decode replica.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from planner.brief import Brief
from planner.replica import ReplicaShape
from planner.sim_engine import EngineOutput, StepCosts, run_engine
from planner.speculative import SpeculativeAnalysis, draft_constants
from planner.step_model import spec_constants

__all__ = ["disaggregated_output", "speculative_costs", "speculative_steps"]

I64 = npt.NDArray[np.int64]
_BLOCK = 256  # requests drawn at once: a block's draws are (block, longest reply) small integers


def speculative_steps(output_tokens: I64, acceptance_rate: float, speculative_tokens: int, seed: int) -> I64:
    """Engine steps each reply takes after its first token, + 1 for that token: the run the lockstep loop sees."""
    rng = np.random.default_rng(seed + 7919)  # its own stream: the request draw stays the same with speculation on or off
    steps = np.ones_like(output_tokens)
    n = speculative_tokens + 1
    for start in range(0, output_tokens.size, _BLOCK):
        need = np.maximum(output_tokens[start : start + _BLOCK] - 1, 0)
        longest = int(need.max(initial=0))
        if longest == 0:
            continue
        emitted = (
            np.minimum(rng.geometric(1.0 - acceptance_rate, size=(need.size, longest)), n)
            if acceptance_rate > 0
            else np.ones((need.size, longest), dtype=np.int64)
        )
        done = np.cumsum(emitted, axis=1)
        steps[start : start + _BLOCK] += np.argmax(done >= need[:, None], axis=1) + 1
        steps[start : start + _BLOCK][need == 0] = 1
    return steps


def speculative_costs(brief: Brief, shape: ReplicaShape, costs: StepCosts, analysis: SpeculativeAnalysis) -> StepCosts:
    """The engine's costs with every step speculative (the draft's and the verification's constants)."""
    draft, _ = draft_constants(brief, shape)
    return costs.model_copy(update={"speculative": spec_constants(costs.step, draft, analysis.num_speculative_tokens)})


def disaggregated_output(
    arrival_s: npt.NDArray[np.float64],
    prompt: I64,
    output_steps: I64,
    cached: I64,
    prefill_costs: StepCosts,
    decode_costs: StepCosts,
    prefill_per_decode_replicas: float,
    transfer_s: npt.NDArray[np.float64],
) -> EngineOutput:
    """Run the prefill replica, then the decode replica on the transferred requests; times on the arrivals' clock."""
    prefill_clock = arrival_s * prefill_per_decode_replicas  # the prefill replica's own Poisson rate
    pre = run_engine(prefill_clock, prompt, np.ones_like(prompt), cached, 0, prefill_costs)
    prefill_s = pre.first_token_s - prefill_clock
    ready = np.where(
        np.isfinite(prefill_s), arrival_s + prefill_s + transfer_s, np.inf
    )  # a prompt the prefill replica dropped never arrives
    order = np.argsort(ready, kind="stable")
    dec = run_engine(ready[order], prompt[order], output_steps[order], np.maximum(prompt[order] - 1, 0), 0, decode_costs)
    back = np.empty_like(order)
    back[order] = np.arange(order.size)
    return EngineOutput(
        arrival_s=arrival_s,
        scheduled_s=arrival_s + (pre.scheduled_s - prefill_clock),
        first_token_s=dec.first_token_s[back],
        finish_s=dec.finish_s[back],
        itl_bin_count=dec.itl_bin_count,
        itl_bin_sum_s=dec.itl_bin_sum_s,
        steps=dec.steps,
        preemptions=dec.preemptions + pre.preemptions,
        busy_s=dec.busy_s,
    )
