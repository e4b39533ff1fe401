"""Every override path in contract.md moves the design the way the physics says."""

from __future__ import annotations

import pytest

from planner import apply_overrides, load_brief, plan

pytestmark = pytest.mark.unit


@pytest.fixture(scope="module")
def capstone():
    return load_brief("capstone")


def _plan(brief, **changes):
    return plan(apply_overrides(brief, {k.replace("__", "."): v for k, v in changes.items()}))


def test_model_name(capstone):
    base = plan(capstone)
    small = _plan(capstone, model__name="llama-3.1-8b")
    assert small.memory.weights_gb_per_gpu < base.memory.weights_gb_per_gpu / 5
    assert small.capacity.prefill_tokens_per_s > 5 * base.capacity.prefill_tokens_per_s
    big = _plan(capstone, model__name="llama-3.1-405b")
    assert big.memory.weights_gb_per_gpu == pytest.approx(50.7, rel=0.02)  # variation F: 405.9 GB / 8
    assert big.capacity.decode_step_ms > base.capacity.decode_step_ms


def test_hardware_gpu(capstone):
    base = plan(capstone)
    h200 = _plan(capstone, hardware__gpu="h200")
    a100 = _plan(capstone, hardware__gpu="a100-80gb", deployment__weights="int8")
    assert h200.capacity.decode_step_ideal_ms < base.capacity.decode_step_ideal_ms
    assert h200.memory.kv_gb_per_gpu > base.memory.kv_gb_per_gpu  # 141 GB vs 80
    assert a100.capacity.decode_step_ideal_ms == pytest.approx(base.capacity.decode_step_ideal_ms * 3.35 / 2.039, rel=0.01)


def test_hardware_nodes(capstone):
    base = plan(capstone)
    more = _plan(capstone, hardware__nodes=16)
    fewer = _plan(capstone, hardware__nodes=4)
    assert more.capacity.utilization < base.capacity.utilization < fewer.capacity.utilization
    # variation A (32 GPUs): ~90% without the prefix cache when the batch follows the load
    assert fewer.capacity.utilization_no_prefix_cache == pytest.approx(0.90, abs=0.02)


def test_hardware_gpus_per_node(capstone):
    base = plan(capstone)
    half = _plan(capstone, hardware__gpus_per_node=4, deployment__tp=4)
    assert half.capacity.replicas == base.capacity.replicas  # one TP=4 replica per 4-GPU node
    assert half.capacity.utilization > base.capacity.utilization  # half the GPUs


def test_deployment_tp(capstone):
    base = plan(capstone)
    tp4 = _plan(capstone, deployment__tp=4)
    assert tp4.memory.weights_gb_per_gpu == pytest.approx(2 * base.memory.weights_gb_per_gpu)
    assert tp4.memory.kv_bytes_per_token_per_gpu == 2 * base.memory.kv_bytes_per_token_per_gpu
    assert tp4.capacity.replicas == 2 * base.capacity.replicas


def test_deployment_weights(capstone):
    base = plan(capstone)
    bf16 = _plan(capstone, deployment__weights="bf16")
    int4 = _plan(capstone, deployment__weights="int4")
    assert bf16.memory.weights_gb_per_gpu == pytest.approx(2 * base.memory.weights_gb_per_gpu)  # 17.6 GB
    assert int4.memory.weights_gb_per_gpu == pytest.approx(base.memory.weights_gb_per_gpu / 2)
    assert bf16.capacity.decode_step_ms > base.capacity.decode_step_ms > int4.capacity.decode_step_ms


def test_deployment_kv_cache(capstone):
    base = plan(capstone)
    bf16 = _plan(capstone, deployment__kv_cache="bf16")
    assert bf16.memory.kv_bytes_per_token_per_gpu == 2 * base.memory.kv_bytes_per_token_per_gpu
    assert bf16.memory.max_sequences_per_replica == pytest.approx(base.memory.max_sequences_per_replica / 2)


def test_deployment_max_num_seqs(capstone):
    base = plan(capstone)
    more = _plan(capstone, deployment__max_num_seqs=320)
    assert more.capacity.step_bytes_at_max_num_seqs_gb > base.capacity.step_bytes_at_max_num_seqs_gb


def test_workload_duty_cycle(capstone):
    base = plan(capstone)
    busier = _plan(capstone, workload__duty_cycle=0.16)
    assert busier.demand.request_rate_per_s == pytest.approx(2 * base.demand.request_rate_per_s)
    assert busier.demand.generating_sequences == pytest.approx(1600)
    assert busier.capacity.utilization > base.capacity.utilization


def test_workload_prefix_hit_rate(capstone):
    base = plan(capstone)
    low = _plan(capstone, workload__prefix_hit_rate=0.2)
    assert low.capacity.prefill_fraction > base.capacity.prefill_fraction
    assert low.capacity.utilization > base.capacity.utilization
    assert low.capacity.utilization_no_prefix_cache == pytest.approx(base.capacity.utilization_no_prefix_cache)
    # reference-figures.md: hit rate 20% gives ~45% at the configured basis (the seed's 78% is inconsistent)
    assert low.capacity.utilization == pytest.approx(0.45, abs=0.02)


def test_workload_request_rate():
    qps10 = load_brief("qps10-tp4")
    base = plan(qps10)
    busier = plan(apply_overrides(qps10, {"workload.request_rate": 12}))
    assert busier.operating_point.tpot_ms > base.operating_point.tpot_ms
    assert busier.operating_point.in_flight > base.operating_point.in_flight
    assert busier.capacity.utilization > base.capacity.utilization


def test_workload_lengths(capstone):
    base = plan(capstone)
    longer_in = _plan(capstone, workload__input_tokens_mean=2400)
    longer_out = _plan(capstone, workload__output_tokens_mean=700, workload__output_tokens_p95=1400)
    assert longer_in.capacity.prefill_fraction == pytest.approx(2 * base.capacity.prefill_fraction)
    assert longer_out.capacity.decode_fraction == pytest.approx(2 * base.capacity.decode_fraction)


_SECTION_CHANGES = (
    {"hardware.nodes": 5},
    {"hardware.nodes": 3, "workload.duty_cycle": 0.3},
    {"deployment.max_num_seqs": 64, "slo.ttft_p95_ms": 150.0},
    {"disaggregation.prefill_nodes": 2},
    {"hardware.nodes": 0},  # refused: the error is the whole brief's
    {"hardware.nodes": True},
    {"hardware.nodez": 1},
    {"workload.input_tokens_p95": 1},  # a section's own rule
    {"model.name": "llama-3.1-8b"},  # the model section: the whole brief is validated again
)


@pytest.mark.parametrize("preset", ["capstone", "agent-platform", "chat-disaggregated", "variation-d"])
def test_a_change_to_some_sections_is_the_whole_brief_validated_again(preset):
    """with_changes validates only the sections it changes (a re-plan's `hardware.nodes` is a handful of fields, not
    the whole brief): the brief, its JSON and every refusal are those of the whole brief validated again."""
    from pydantic import ValidationError

    from planner.brief import Brief, set_paths
    from planner.errors import BriefError, validation_message

    brief = load_brief(preset)
    for changes in _SECTION_CHANGES:
        try:
            whole = Brief.model_validate(set_paths(brief.model_dump(mode="json"), changes))
        except (BriefError, ValidationError) as exc:
            expected = str(validation_message(exc) if isinstance(exc, ValidationError) else exc)
            with pytest.raises(BriefError) as refused:
                brief.with_changes(changes)
            assert str(refused.value) == expected
            continue
        changed = brief.with_changes(changes)
        assert changed == whole and hash(changed) == hash(whole) and changed.model_dump_json() == whole.model_dump_json()
    moved = brief.with_changes({"hardware.nodes": 5})
    assert moved.workload is brief.workload and moved.hardware.nodes == 5  # the other sections kept, not re-validated
