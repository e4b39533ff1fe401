"""The simulator's serving mechanisms: speculative decoding in a replica, and the two pools of a disaggregated design.

Speculative decoding: planner.sim_speculative's loop, speculative step by step while the running batch is at or
under the plan's disable_by_batch_size, plain above it; a sequence's tokens a speculative step are drawn per step
(the accepted run of drafts plus one), and its KV grows by the tokens it emits.

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

__all__ = ["disaggregated_output", "speculative_costs"]

I64 = npt.NDArray[np.int64]


def speculative_costs(brief: Brief, shape: ReplicaShape, costs: StepCosts, analysis: SpeculativeAnalysis, seed: int) -> StepCosts:
    """The engine's costs with speculation by batch: the speculative step's constants (the draft's and the
    verification's), the threshold above which a step is plain, the acceptance rate and k."""
    draft, _ = draft_constants(brief, shape)
    return costs.model_copy(
        update={
            "speculative": spec_constants(costs.step, draft, analysis.num_speculative_tokens),
            "spec_off_above_batch": analysis.off_above_batch,
            "acceptance_rate": analysis.acceptance_rate,
            "draft_tokens": analysis.num_speculative_tokens,
            "seed": seed + 7919,  # its own stream: the request draw stays the same with speculation on or off
        }
    )


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
