"""Properties of the whole design: any valid brief gives a Design or an InfeasibleDesign verdict, never a crash,
and the design serializes to strict JSON. The cases perturb every preset along the sliders and engine limits."""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from planner import InfeasibleDesign, load_brief, plan, preset_names
from planner.cli import design_json
from planner.errors import BriefError

pytestmark = pytest.mark.unit

CHANGES = st.fixed_dictionaries(
    {},
    optional={
        "hardware.nodes": st.integers(1, 24),
        "workload.duty_cycle": st.floats(0.005, 1.0),
        "workload.prefix_hit_rate": st.floats(0.0, 1.0),
        "deployment.weights": st.sampled_from(["bf16", "fp8", "int8", "int4"]),
        "deployment.kv_cache": st.sampled_from(["bf16", "fp8"]),
        "deployment.max_num_seqs": st.integers(1, 2048),
        "deployment.max_num_batched_tokens": st.integers(16, 32768),
        "deployment.chunked_prefill": st.booleans(),
        "deployment.spare_nodes": st.integers(0, 3),
        "deployment.long_context_nodes": st.integers(0, 3),
        "workload.input_tokens_mean": st.floats(10, 20_000),
        "cost.average_duty": st.floats(0.01, 1.0),
    },
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(preset=st.sampled_from(preset_names()), changes=CHANGES)
def test_plan_is_total(preset, changes):
    brief = load_brief(preset)
    if "workload.input_tokens_mean" in changes:
        changes["workload.input_tokens_p95"] = max(changes["workload.input_tokens_mean"], brief.workload.input_tokens_p95)
    if "workload.duty_cycle" in changes and brief.workload.request_rate is not None:
        del changes["workload.duty_cycle"]
    seqs = changes.get("deployment.max_num_seqs", brief.deployment.max_num_seqs)
    if changes.get("deployment.max_num_batched_tokens", brief.deployment.max_num_batched_tokens) < seqs:
        with pytest.raises(BriefError) as refused:  # vLLM refuses a token budget under its batch slots: so does the brief
            brief.with_changes(changes)
        assert refused.value.field == "deployment.max_num_batched_tokens"
        return
    brief = brief.with_changes(changes)
    try:
        design = plan(brief)
    except InfeasibleDesign:
        return
    text = json.dumps(design_json(design), allow_nan=False)
    assert '"failures"' in text
    assert len(design.failures) == 7
    assert design.verdict.meets_slo <= (design.slo.ttft_ok and design.slo.itl_ok)
