"""The step constants' flat tuple: each named position reads the field it names (values() follows the field order)."""

from __future__ import annotations

import math
import random

import numpy as np
import pytest

import planner.step_model as sm
from planner import load_brief, preset_names
from planner.replica import shape_of
from planner.step_model import StepConstants

_POSITIONS = {
    "weights_s": sm.WEIGHTS_S,
    "experts_s": sm.EXPERTS_S,
    "expert_miss": sm.EXPERT_MISS,
    "gemm_s_per_token": sm.GEMM_S_PER_TOKEN,
    "lm_head_s_per_seq": sm.LM_HEAD_S_PER_SEQ,
    "kv_s_per_token": sm.KV_S_PER_TOKEN,
    "attn_s_per_pair": sm.ATTN_S_PER_PAIR,
    "allreduces": sm.ALLREDUCES,
    "allreduce_latency_s": sm.AR_LATENCY_S,
    "one_shot_s_per_token": sm.AR_ONE_SHOT_S_PER_TOKEN,
    "two_shot_s_per_token": sm.AR_TWO_SHOT_S_PER_TOKEN,
    "overhead_s": sm.OVERHEAD_S,
    "per_sequence_s": sm.PER_SEQ_S,
    "roofline": sm.ROOFLINE,
    "a2a_latency_s": sm.A2A_LATENCY_S,
    "a2a_s_per_token": sm.A2A_S_PER_TOKEN,
    "pp_latency_s": sm.PP_LATENCY_S,
    "pp_s_per_token": sm.PP_S_PER_TOKEN,
    "lora_slots": sm.LORA_SLOTS,
    "lora_adapter_s": sm.LORA_ADAPTER_S,
    "lora_s_per_token": sm.LORA_S_PER_TOKEN,
    "lora_kernels_s": sm.LORA_KERNELS_S,
}


def test_every_position_reads_the_field_it_names() -> None:
    assert set(_POSITIONS) == set(StepConstants.model_fields)
    assert len(_POSITIONS) == sm.CONSTANTS
    distinct = StepConstants(**{name: float(i + 1) for i, name in enumerate(StepConstants.model_fields)})
    values = distinct.values()
    for name, position in _POSITIONS.items():
        assert values[position] == getattr(distinct, name), name


def test_masked_keeps_only_the_named_positions_and_is_stable() -> None:
    k = StepConstants(**{name: 2.0 for name in StepConstants.model_fields})
    masked = k.masked((sm.WEIGHTS_S, sm.OVERHEAD_S))
    assert masked[sm.WEIGHTS_S] == 2.0 and masked[sm.OVERHEAD_S] == 2.0
    assert sum(masked) == 4.0
    assert k.masked((sm.WEIGHTS_S, sm.OVERHEAD_S)) is masked  # built once per replica
    assert k.model_dump() == {name: 2.0 for name in StepConstants.model_fields}  # the cache is not a field


def test_a_copy_with_changed_fields_does_not_read_its_originals_cached_values() -> None:
    k = StepConstants(**{name: 1.0 for name in StepConstants.model_fields})
    k.values(), k.masked((sm.OVERHEAD_S,))
    copy = k.model_copy(update={"overhead_s": 5.0})
    assert copy.values()[sm.OVERHEAD_S] == 5.0
    assert copy.masked((sm.OVERHEAD_S,))[sm.OVERHEAD_S] == 5.0
    assert k.values()[sm.OVERHEAD_S] == 1.0


def test_a_copied_replica_starts_its_own_memo() -> None:
    from planner import load_brief
    from planner.replica import shape_of

    shape = shape_of(load_brief("capstone"))
    shape.memo[("x",)] = 1
    copy = shape.model_copy(update={"replicas": shape.replicas + 1})
    assert ("x",) not in copy.memo and shape.memo[("x",)] == 1


def _random_constants(rng: random.Random, **fixed: float) -> StepConstants:
    values = {name: rng.uniform(1e-6, 1e-3) for name in StepConstants.model_fields}
    values |= {"expert_miss": rng.uniform(0.5, 0.99), "allreduces": float(rng.randint(0, 160)), "roofline": float(rng.randint(0, 1))}
    values |= {"lora_slots": float(rng.choice((0, 1, 8, 64)))}
    return StepConstants(**(values | fixed))


@pytest.mark.parametrize("seed", range(12))
def test_step_times_s_is_step_time_s_element_by_element(seed: int) -> None:
    """The array form (the ITL quantiles' grid of decode steps) must cost every step as the scalar one does: MoE
    expert reads, a roofline step, all-reduce algorithms, LoRA slots, and the speculative step built on each."""
    rng = random.Random(seed)
    k = _random_constants(rng, experts_s=rng.choice((0.0, 2e-3))).values()
    batches = np.array([0.5, 1.0, 1.7, 8.0, 63.2, 256.0, 1000.0])
    context = rng.uniform(100, 30_000)
    array = sm.step_times_s(k, batches, batches, batches * context, 0.0)
    np.testing.assert_allclose(array, [sm.step_time_s(k, b, b, b * context, 0.0) for b in batches], rtol=1e-14, atol=0)
    spec = sm.spec_constants(StepConstants(**dict(zip(StepConstants.model_fields, k, strict=True))), _random_constants(rng), 3)
    array = sm.speculative_step_times_s(spec, batches, batches, batches * context, 0.0)
    scalar = [sm.speculative_step_time_s(spec, b, b, b * context, 0.0) for b in batches]
    np.testing.assert_allclose(array, scalar, rtol=1e-14, atol=0)


@pytest.mark.parametrize("seed", range(12))
def test_the_parts_are_step_time_s_with_every_other_constant_zeroed(seed: int) -> None:
    """The planner's closed forms take a step apart through weights_part_s, compute_part_s and comm_part_s: each must
    be step_time_s over the constants masked to its part, to the last bit (MoE expert reads, a roofline step, the
    all-reduce algorithms, all-to-alls and stage sends)."""
    rng = random.Random(seed)
    step = _random_constants(rng, experts_s=rng.choice((0.0, 2e-3)))
    k = step.values()
    for tokens in (0.5, 1.0, 1.7, 8.0, 63.2, 256.0, 1000.0, 9000.5):
        kv = tokens * rng.uniform(0.0, 30_000) * rng.choice((0.0, 1.0))
        assert sm.weights_part_s(k, tokens, kv) == sm.step_time_s(step.masked(sm.WEIGHTS_PART), tokens, 0.0, kv, 0.0)
        assert sm.compute_part_s(k, tokens, tokens) == sm.step_time_s(step.masked(sm.COMPUTE_PART), tokens, tokens, 0.0, 0.0)
        assert sm.comm_part_s(k, tokens) == sm.step_time_s(step.masked(sm.COMM_PART), tokens, 0.0, 0.0, 0.0)


def test_a_step_that_does_not_communicate_has_no_communication_at_any_size() -> None:
    """communicates (the SLO model skips a prompt token's share of the communication where it is False) is False exactly
    where comm_part_s is 0 at every size: a free all-reduce (a count with no latency or bytes: the seeds' flat TP
    factor), no all-reduce, or costs with no all-reduce to pay them; True with any all-reduce cost, all-to-all or send."""
    zero = {name: 0.0 for name in ("allreduce_latency_s", "one_shot_s_per_token", "two_shot_s_per_token", "a2a_latency_s")}
    zero |= {name: 0.0 for name in ("a2a_s_per_token", "pp_latency_s", "pp_s_per_token")}
    cases = [
        (StepConstants.only(**zero, allreduces=160.0), False),
        (StepConstants.only(**zero), False),
        (StepConstants.only(**zero | {"allreduce_latency_s": 5e-6, "one_shot_s_per_token": 1e-7}), False),
        (StepConstants.only(**zero | {"allreduce_latency_s": 5e-6}, allreduces=160.0), True),
        (StepConstants.only(**zero | {"two_shot_s_per_token": 1e-7}, allreduces=2.0), True),
        (StepConstants.only(**zero | {"a2a_latency_s": 1e-5}), True),
        (StepConstants.only(**zero | {"pp_s_per_token": 1e-8}), True),
    ]
    cases += [(shape_of(load_brief(name)).step, None) for name in preset_names()]
    for step, want in cases:
        k = step.values()
        talks = sm.communicates(k)
        assert want is None or talks == want, step
        if not talks:
            assert all(sm.comm_part_s(k, tokens) == 0.0 for tokens in (0.0, 1.0, 37.5, 2048.0, 1e6)), step


@pytest.mark.parametrize("seed", range(24))
def test_decode_step_function_is_step_time_s_to_the_last_bit(seed: int) -> None:
    """decode_step_function (a replica's decode step at one context, as a function of the batch) must be step_time_s
    of a pure decode step bitwise: its written-out dense and roofline steps, with all-reduces or none, with per-sequence
    costs or none, over the replica's constants and its compute-free ones (decode_step_real_s'); None exactly where
    expert reads, all-to-alls, stage sends or LoRA are on."""
    rng = random.Random(seed)
    off = {name: 0.0 for name in ("a2a_latency_s", "a2a_s_per_token", "pp_latency_s", "pp_s_per_token", "lora_slots", "experts_s")}
    fixed = off if seed % 4 else {"experts_s": rng.choice((0.0, 2e-3))}
    fixed |= {"per_sequence_s": rng.choice((0.0, 3e-5)), "allreduces": float(rng.choice((0, 160)))}
    written_out = 0
    for constants in (_random_constants(rng, **fixed).values(), _random_constants(rng, **fixed).masked(_ALL_BUT_GEMMS)):
        families = [
            constants[i] for i in (sm.EXPERTS_S, sm.LORA_SLOTS, sm.A2A_LATENCY_S, sm.A2A_S_PER_TOKEN, sm.PP_LATENCY_S, sm.PP_S_PER_TOKEN)
        ]
        for context in (0.0, 1.0, rng.uniform(100, 30_000)):
            step = sm.decode_step_function(constants, context)
            assert (step is None) == any(families)
            if step is not None:
                written_out += 1
                for b in (1.0, 1.7, 8.0, 63.2, 256.0, 512.0, 1000.0, rng.uniform(1, 4096)):
                    assert step(b) == sm.step_time_s(constants, b, b, b * context, 0.0)
    assert written_out or seed % 4 == 0


_ALL_BUT_GEMMS = tuple(i for i in range(sm.CONSTANTS) if i not in sm.COMPUTE_PART)  # as the replica's decode_step_real_s


@pytest.mark.parametrize("name", preset_names())
def test_a_replicas_decode_steps_are_step_time_s(name: str) -> None:
    """ReplicaShape.decode_step_s and decode_step_real_s (kept decode_step_functions by context) over every preset's
    replica: step_time_s of its constants, bitwise, and infinite past a finite batch."""
    shape = shape_of(load_brief(name))
    for context in (512.0, 3000.5):
        for b in (0.5, 1.0, 7.3, 64.0, 255.9, 2048.0):
            assert shape.decode_step_s(b, context) == sm.step_time_s(shape.step.values(), b, b, b * context, 0.0)
            assert shape.decode_step_real_s(b, context) == sm.step_time_s(shape.real_step_constants, b, b, b * context, 0.0)
    assert shape.decode_step_s(math.inf, 512.0) == math.inf == shape.decode_step_real_s(math.inf, 512.0)
