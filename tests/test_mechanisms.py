"""Prefill/decode disaggregation and speculative decoding (issue 14, mechanisms 1 and 2): the presets' figures
derived by hand, the mechanisms' invariants, and the simulator against the plan on each."""

from __future__ import annotations

import itertools
import json
import math

import pytest

from planner import load_brief
from planner.design import plan
from planner.fmt import num
from planner.replica import shape_of
from planner.simulator import SimSettings, simulate, step_costs
from planner.speculative import draft_constants, speculative_analysis
from planner.step_model import spec_constants, speculative_step_time_s, step_time_s, tokens_per_step
from tests.conftest import run_cli

pytestmark = pytest.mark.unit


@pytest.fixture(scope="module")
def disagg():
    return plan(load_brief("chat-disaggregated"))


@pytest.fixture(scope="module")
def spec():
    return plan(load_brief("chat-speculative"))


# --- chat-disaggregated: 200 req/s, 2,000 in / 500 out, 12 prefill + 4 decode nodes of 8 x H100, TP=8 -----------


def test_disaggregated_kv_transfer(disagg):
    """KV of one token, whole model: 2 (K and V) x 80 layers x 8 KV heads x 128 x 1 byte (FP8) = 163,840 B.
    A 2,000-token prompt: 327.7 MB over 8 GPUs x 400 Gb/s / 8 bits x 70% = 280 GB/s: 1.170 ms, + 1 ms set-up = 2.170 ms.
    Tolerance 0.5%."""
    d = disagg.disaggregation
    assert d.kv_bytes_per_token == pytest.approx(163_840, rel=0.005)
    assert d.kv_transfer_mb_mean == pytest.approx(327.68, rel=0.005)
    assert d.link_gb_per_s == pytest.approx(280, rel=0.005)
    assert d.transfer_ms_mean == pytest.approx(2.170, rel=0.005)


def test_disaggregated_prefill_pool(disagg):
    """A prompt alone on a prefill replica: 2,000 tokens x 2 x 70.6e9 FLOPs / (8 x 1,979 TFLOP/s x 40%) = 44.6 ms,
    + 1.5 ms fixed a step = 46.1 ms (the causal attention adds a few tenths). 200 req/s / 12 replicas = 16.7 req/s;
    busy 16.7 x 46.1 ms = 77%; M/D/1 wait rho S / (2 (1 - rho)) = 0.77 x 46.1 / (2 x 0.23) = 77 ms. Tolerance 3%."""
    d = disagg.disaggregation
    assert (d.prefill_nodes, d.decode_nodes, d.prefill_replicas, d.decode_replicas) == (12, 4, 12, 4)
    assert d.prefill_service_ms_mean == pytest.approx(46.1, rel=0.03)
    assert d.prefill_busy == pytest.approx(200 / 12 * 0.0461, rel=0.03)
    assert d.prefill_wait_ms_mean == pytest.approx(77, rel=0.05)


def test_disaggregated_decode_pool(disagg):
    """A decode replica at 200 / 4 = 50 req/s runs pure decode steps (the seed's roofline step, bytes bind):
    weights 70.6 GB / (8 x 3.35 TB/s) = 2.634 ms, + 1.5 ms fixed; each sequence reads 2,250 tokens (2,000 + 500 / 2)
    x 163,840 B = 368.6 MB / 26.8 TB/s = 0.01375 ms. Little's law: B = 50 x (499 gaps + 1.5) x (4.134 + 0.01375 B) ms
    gives B = 103.45 / (1 - 0.3441) = 157.7 and a step of 6.30 ms; at the p95 batch 157.7 + 1.645 sqrt(157.7) = 178.4,
    6.59 ms. Tolerance 2%."""
    d = disagg.disaggregation
    assert d.decode_batch == pytest.approx(157.7, rel=0.02)
    assert d.decode_step_ms == pytest.approx(6.30, rel=0.02)
    assert disagg.slo.itl_p95_ms == pytest.approx(6.59, rel=0.02)
    assert disagg.slo.tpot_p50_ms == pytest.approx(6.30, rel=0.02)


def test_disaggregated_full_batch_bound_is_the_decode_pools(disagg):
    """The engine command is the decode pool's, so its max-num-seqs bound is a decode replica with all 512 slots taken:
    pure decode steps at the KV-sizing context (2,000 + 500 / 2 = 2,250 tokens), no prompt chunk in any step, so p50
    and p95 are the same step; the aggregated figures (a chunk beside every other step) belong to qps200-chat."""
    full = disagg.slo.at_max_batch
    shape = disagg.shape
    assert (full.batch, full.context_tokens, full.mixed_step_share, full.chunk_step_ms) == (512, 2250, 0.0, None)
    assert full.decode_step_ms == pytest.approx(shape.decode_step_s(512.0, 2250.0) * 1e3, rel=1e-9)
    assert full.itl_p50_ms == full.itl_p95_ms == full.tpot_p50_ms > disagg.slo.itl_p95_ms  # a full batch: the slowest gap
    seqs = next(f.why for f in disagg.config.flags if f.flag == "--max-num-seqs")
    assert f"decode replica running the ITL would be {num(full.itl_p50_ms, 'ms')}" in seqs and "chunk" not in seqs
    batched = next(f.why for f in disagg.config.flags if f.flag == "--max-num-batched-tokens")
    assert "decode pool" in batched and f"p95 TTFT {num(disagg.slo.ttft_p95_ms, 'ms')}" in batched
    assert "% of token gaps" not in batched  # the aggregated chunk-step account does not describe this command
    aggregated = plan(load_brief("qps200-chat")).slo.at_max_batch
    assert aggregated.chunk_step_ms is not None and aggregated.mixed_step_share > 0


def test_disaggregated_design_against_chunked_prefill(disagg):
    """The same 16 nodes aggregated (qps200-chat) give p95 ITL 48 ms (13.7% of the gaps on a step carrying a prompt
    chunk); disaggregated 6.6 ms. TTFT p95 rises (prompts queue for 12 replicas, not 16) but stays under 2 s."""
    c = disagg.disaggregation.comparison
    aggregated = plan(load_brief("qps200-chat"))
    assert c.chunked_itl_p95_ms == pytest.approx(aggregated.slo.itl_p95_ms)
    assert c.chunked_ttft_p95_ms == pytest.approx(aggregated.slo.ttft_p95_ms)
    assert c.beats_chunked and c.disaggregated_itl_p95_ms < c.chunked_itl_p95_ms / 5
    assert c.chunked_ttft_p95_ms < disagg.slo.ttft_p95_ms < 2000
    assert disagg.verdict.feasible and disagg.verdict.meets_slo
    assert c.balanced_prefill_nodes == 13  # 55.7% prefill / (55.7% + 14.4% decode) of 16 nodes = 12.7


def test_disaggregated_pools_command_and_diagram(disagg):
    pools = {p.name: p for p in disagg.architecture.pools}
    assert (pools["prefill"].role, pools["decode"].role, pools["decode"].upstream) == ("prefill", "decode", "prefill")
    assert "general" not in pools and pools["prefill"].nodes + pools["decode"].nodes == 16
    assert "--kv-transfer-config" in disagg.config.command and "NixlConnector" in disagg.config.command
    assert disagg.config.prefill_command is not None and "--kv-transfer-config" in disagg.config.prefill_command
    assert 'pool0 -> pool1 [label="KV cache"' in disagg.architecture.dot
    components = [s.component for s in disagg.slo.ttft_waterfall]
    assert any("KV transfer" in c for c in components) and any("prefill-pool queue" in c for c in components)
    assert "Compute binds" in (disagg.mechanism_conclusion or "") and "Disaggregation turns on" in (disagg.mechanism_conclusion or "")


def test_a_split_without_a_decode_pool_is_a_verdict(disagg):
    d = plan(load_brief("chat-disaggregated").with_changes({"disaggregation.prefill_nodes": 16}))
    assert any(p.field == "disaggregation.prefill_nodes" for p in d.verdict.problems)


def test_too_few_prefill_nodes_overload_the_prefill_pool():
    """Four prefill replicas at 50 req/s x 46 ms = 230% busy: infeasible, the fix names the prefill nodes."""
    d = plan(load_brief("chat-disaggregated").with_changes({"disaggregation.prefill_nodes": 4}))
    assert not d.verdict.feasible and not d.disaggregation.comparison.beats_chunked
    assert any(p.field == "disaggregation.prefill_nodes" and "busy" in p.problem for p in d.verdict.problems)


def test_a_slow_link_shows_in_the_ttft():
    """At 10 Gb/s a GPU the 327.7 MB move at 8 x 1.25 GB/s x 70% = 7 GB/s: 46.8 ms + 1 ms, 22x the InfiniBand figure."""
    d = plan(load_brief("chat-disaggregated").with_changes({"disaggregation.kv_link_gbps_per_gpu": 10.0}))
    assert d.disaggregation.transfer_ms_mean == pytest.approx(47.8, rel=0.01)


# --- chat-speculative: Llama-3-70B, TP=4 FP8 on H100, 1 req/s a replica, EAGLE k=3 at a = 0.7 -------------------------


def test_tokens_per_step_formula():
    """(1 - a^(k+1)) / (1 - a): 1 at a = 0, k + 1 as a -> 1; (1 - 0.7^4) / 0.3 = 2.533."""
    assert tokens_per_step(0.0, 3) == 1.0
    assert tokens_per_step(0.7, 3) == pytest.approx(2.533, abs=1e-3)
    assert tokens_per_step(0.999999, 5) == pytest.approx(6.0, rel=1e-4)


def test_speculative_gain_at_batch_1(spec):
    """Batch 1, calibrated defaults: weights 70.6 GB / (4 x 3.35 TB/s x 68%) = 7.75 ms, 160 all-reduces x 14 us =
    2.24 ms, 2.6 ms fixed, the sequence's 33 us and KV: 12.7 ms a token. A speculative step: the same reads for 4
    tokens (12.8 ms) + 3 EAGLE passes (one layer + the LM head, 1.9e9 of 70.6e9 weights: 0.21 ms, 2 all-reduces,
    0.2 ms launch: 0.44 ms each) = 14.2 ms for 2.533 tokens: 5.6 ms a token, x2.26. Tolerance 3%."""
    s = spec.speculative
    one = s.points[0]
    assert one.batch == 1
    assert one.plain_step_ms == pytest.approx(12.7, rel=0.03)
    assert one.spec_step_ms == pytest.approx(14.2, rel=0.03)
    assert s.gain_at_batch_1 == pytest.approx(2.26, rel=0.03)


def test_speculation_turns_on_at_load_and_has_a_crossover(spec):
    """At 1 req/s a replica the batch is ~5.4 without speculation and ~2.4 with it (Little's law at the speculative
    pace: replies end x2.2 sooner): on, x2.2; the gain falls with the batch and crosses 1 above max-num-seqs' reach
    (the off switch is the crossover's floor). TPOT p95 falls from 14.8 ms to ~7.3 ms (the simulator: 14.5 and 7.2)."""
    s = spec.speculative
    gains = [p.gain for p in s.points]
    assert all(a >= b for a, b in itertools.pairwise(gains))
    assert s.on_at_load and s.gain_at_load > 2
    assert math.isfinite(s.crossover_batch) and s.off_above_batch == int(s.crossover_batch)
    plain = plan(load_brief("chat-speculative").with_changes({"speculative.enabled": False}))
    assert plain.slo.tpot_p95_ms == pytest.approx(14.8, rel=0.03)
    assert plain.operating_point.in_flight == pytest.approx(5.4, rel=0.03)
    assert spec.operating_point.in_flight == pytest.approx(2.4, rel=0.03) == s.operating_batch
    assert spec.slo.tpot_p95_ms == pytest.approx(7.3, rel=0.05)
    assert spec.verdict.meets_slo


def test_speculation_costs_more_than_it_saves_past_the_crossover():
    """A compute-bound batch: every one of the k + 1 tokens costs its FLOPs, the drafts add on top."""
    brief = load_brief("chat-speculative")
    shape = shape_of(brief)
    a = speculative_analysis(brief, shape, 4 * 215.0, brief.running_context_tokens)
    assert a.gain_at_load < 1 and not a.on_at_load


def test_speculation_off_above_a_given_batch():
    d = plan(load_brief("chat-speculative").with_changes({"speculative.off_above_batch": 2}))
    assert not d.speculative.on_at_load
    assert d.slo.tpot_p95_ms == pytest.approx(
        plan(load_brief("chat-speculative").with_changes({"speculative.enabled": False})).slo.tpot_p95_ms
    )


def test_speculative_config_in_the_command(spec):
    value = spec.config.command.split("--speculative-config ")[1].split(" \\")[0].strip("'")
    config = json.loads(value)
    assert config == {
        "method": "eagle",
        "model": "yuhuili/EAGLE-LLaMA3-Instruct-70B",
        "num_speculative_tokens": 3,
        "disable_by_batch_size": spec.speculative.off_above_batch,
    }


def test_a_draft_model_costs_more_than_an_eagle_head():
    brief = load_brief("chat-speculative")
    draft = brief.with_changes({"speculative.method": "draft", "speculative.draft_model": "llama-3.1-8b"})
    shape = shape_of(brief)
    eagle = speculative_analysis(brief, shape, 1.0, brief.running_context_tokens)
    small = speculative_analysis(draft, shape, 1.0, brief.running_context_tokens)
    assert small.gain_at_batch_1 < eagle.gain_at_batch_1 and "draft_model" in small.config_json


def test_a_draft_method_without_a_draft_model_is_refused():
    proc = run_cli("plan", "chat-speculative", "--set", "speculative.method=draft")
    assert proc.returncode == 2 and "draft_model" in proc.stderr and "Traceback" not in proc.stderr


def test_the_simulator_steps_through_the_planners_formula():
    """The speculative step the simulator compiles is step_model's: the same constants give the same time."""
    brief = load_brief("chat-speculative")
    shape = shape_of(brief)
    draft, _ = draft_constants(brief, shape)
    k = spec_constants(shape.step, draft, 3)
    import numba

    compiled = numba.njit(step_time_s)
    from planner.step_model import speculative_step

    fast = numba.njit(speculative_step(compiled))
    assert fast(k, 8.0, 8.0, 8 * 1900.0, 0.0) == pytest.approx(speculative_step_time_s(k, 8.0, 8.0, 8 * 1900.0, 0.0), rel=1e-12)
    assert step_costs(brief, shape).speculative is None  # the costs gain the speculative constants only when it is on


# --- the simulator against the plan ---------------------------------------------------------------------------------


def test_simulated_disaggregation_agrees_with_the_plan(disagg):
    """One prefill replica feeding one decode replica, 2,000 requests. Tolerances: TPOT and ITL p50/p95 within 10%
    (pure decode steps on both sides), TTFT p95 within 20% (the plan sums p95s; the prefill replica packs prompts)."""
    sim = simulate(load_brief("chat-disaggregated"), SimSettings(requests=2000)).slo
    assert sim is not None
    assert sim.tpot_p50_ms == pytest.approx(disagg.slo.tpot_p50_ms, rel=0.10)
    assert sim.itl_p95_ms == pytest.approx(disagg.slo.itl_p95_ms, rel=0.10)
    assert sim.ttft_p95_ms == pytest.approx(disagg.slo.ttft_p95_ms, rel=0.20)
    assert sim.meets_slo


def test_simulated_speculation_agrees_with_the_plan(spec):
    """Every step speculative, tokens a step drawn per sequence. Tolerances: TPOT p50 and p95 within 12%, the gap
    between streamed chunks (ITL p50) within 10%; and the TPOT is less than half the simulation without it."""
    brief = load_brief("chat-speculative")
    sim = simulate(brief, SimSettings(requests=1500)).slo
    off = simulate(brief.with_changes({"speculative.enabled": False}), SimSettings(requests=1500)).slo
    assert sim is not None and off is not None
    assert sim.tpot_p50_ms == pytest.approx(spec.slo.tpot_p50_ms, rel=0.12)
    assert sim.tpot_p95_ms == pytest.approx(spec.slo.tpot_p95_ms, rel=0.12)
    assert sim.itl_p50_ms == pytest.approx(spec.slo.itl_p50_ms, rel=0.10)
    assert sim.tpot_p50_ms < off.tpot_p50_ms / 2


def test_a_prefill_tp_that_cannot_form_a_replica_names_the_prefill_field():
    proc = run_cli("plan", "chat-disaggregated", "--set", "disaggregation.prefill_tp=3")
    assert proc.returncode == 2 and proc.stderr.startswith("error: disaggregation.prefill_tp:") and "Traceback" not in proc.stderr


@pytest.mark.parametrize(
    ("preset", "overrides", "field"),
    [
        ("chat-disaggregated", ("deployment.pp=2",), "deployment.pp"),  # two pipeline stages: a replica on 2 nodes
        ("moe-deepseek", ("disaggregation.enabled=true", "disaggregation.prefill_nodes=4"), "deployment.ep"),  # EP=16 on 2 nodes
    ],
)
def test_disaggregation_refuses_a_replica_that_spans_nodes(preset, overrides, field):
    """The pools split whole nodes: a replica over two nodes would be counted per GPU (32 one-GPU DeepSeek-R1 prefill
    replicas, a PP=2 command over 16 single-node replicas), so it is one line naming the field, exit 2."""
    sets = [arg for o in overrides for arg in ("--set", o)]
    proc = run_cli("plan", preset, *sets)
    assert proc.returncode == 2 and proc.stderr.startswith(f"error: {field}: disaggregation splits whole nodes")
    assert "spans 2 nodes" in proc.stderr and "Traceback" not in proc.stderr


def test_a_draft_model_with_another_vocabulary_is_not_feasible():
    """Llama-2-7B's 32,000 tokens cannot be verified by Llama-3-70B's 128,256-token head."""
    d = plan(load_brief("chat-speculative").with_changes({"speculative.method": "draft", "speculative.draft_model": "llama-2-7b"}))
    assert not d.verdict.feasible and any(p.field == "speculative.draft_model" for p in d.verdict.problems)


def test_a_model_without_a_published_eagle_head_says_so():
    d = plan(load_brief("chat-speculative").with_changes({"model.name": "llama-3.1-70b"}))
    assert any(p.field == "speculative.method" and "EAGLE head" in p.problem for p in d.verdict.problems)


def test_every_other_preset_leaves_both_mechanisms_off():
    from planner import preset_names

    for name in preset_names():
        d = plan(load_brief(name))
        on = (d.disaggregation is not None, d.speculative is not None)
        assert on == (name == "chat-disaggregated", name == "chat-speculative"), name
        assert ("--kv-transfer-config" in d.config.command) == on[0] and ("--speculative-config" in d.config.command) == on[1]


def test_the_kv_link_defaults_to_the_gpus_nic():
    """Empty: the catalog's scale-out NIC, 50 GB/s = 400 Gb/s on an H100, 25 GB/s = 200 Gb/s on an A100 (HDR):
    the same prompt's transfer 1.17 ms + 1 ms on H100, 2.34 ms + 1 ms on A100 (TP=8, 70%)."""
    brief = load_brief("chat-disaggregated").with_changes({"disaggregation.kv_link_gbps_per_gpu": None})
    assert plan(brief).disaggregation.transfer_ms_mean == pytest.approx(2.170, rel=0.005)
    a100 = plan(brief.with_changes({"hardware.gpu": "a100-80gb", "deployment.weights": "int8", "deployment.kv_cache": "bf16"}))
    assert a100.disaggregation.kv_bytes_per_token == pytest.approx(327_680)  # BF16 KV: twice the bytes
    assert a100.disaggregation.transfer_ms_mean == pytest.approx(1 + 2000 * 327_680 / (8 * 25e9 * 0.7) * 1e3, rel=0.005)


def _spec_run(outputs: list[int], arrival_gap_s: float, off_above: int, acceptance: float = 0.7):
    """chat-speculative's replica with speculation by batch over the given replies (10-token prompts)."""
    import numpy as np

    from planner.sim_engine import run_engine
    from planner.sim_mechanisms import speculative_costs

    brief = load_brief("chat-speculative").with_changes({"speculative.acceptance_rate": acceptance})
    shape = shape_of(brief)
    spec = plan(brief).speculative
    costs = speculative_costs(brief, shape, step_costs(brief, shape), spec, seed=0).model_copy(update={"spec_off_above_batch": off_above})
    out = np.array(outputs, dtype=np.int64)
    arrival = np.arange(out.size) * arrival_gap_s
    return run_engine(arrival, np.full(out.size, 10, dtype=np.int64), out, np.zeros(out.size, dtype=np.int64), 0, costs)


def test_the_simulators_speculative_steps_emit_the_expected_tokens():
    """400 replies of 1,001 tokens, each alone (batch 1, under the threshold): 1,000 tokens after the first at
    (1 - 0.7^4) / 0.3 = 2.533 a step is 394.7 speculative steps each; the draws' mean within 1%. With the threshold
    at 0 no step is speculative and each reply takes its 1,000 plain steps (+1 for the prompt)."""
    on = _spec_run([1001] * 400, 1000.0, 8)
    assert on.speculative_steps / 400 == pytest.approx(1000 / tokens_per_step(0.7, 3), rel=0.01)
    assert on.steps == on.speculative_steps + 400  # one prompt step each, plain (no decoder in it)
    off = _spec_run([1001] * 400, 1000.0, 0)
    assert off.speculative_steps == 0 and off.steps == 400 * 1001


def test_the_simulator_turns_speculation_on_and_off_step_by_step():
    """32 replies of 40 to 1,280 tokens all at once, off above 8 running: the first steps run 32 sequences (plain),
    the batch drains as short replies end, and the last steps (at most 8 left) are speculative; the same replies with
    the threshold at 64 are speculative throughout, and take fewer steps."""
    outputs = [40 * (i + 1) for i in range(32)]
    switching = _spec_run(outputs, 0.0, 8)
    always = _spec_run(outputs, 0.0, 64)
    assert 0 < switching.speculative_steps < switching.steps - 1
    assert always.speculative_steps == always.steps - 1  # all but the prompts' step
    assert always.steps < switching.steps
    assert (switching.finish_s >= always.finish_s).all()


def test_the_splits_show_where_disaggregation_stops_paying(disagg):
    """Prefill needs 200 x 46.4 ms = 9.3 replicas' time: 9 prefill nodes or fewer is over 100% busy (TTFT unbounded).
    The decode pool's batch grows as it shrinks: at 14 prefill nodes two decode replicas cannot hold the load within
    512 sequences. 10 to 13 meet the SLO."""
    splits = {p.prefill_nodes: p for p in disagg.disaggregation.splits}
    assert list(splits) == list(range(1, 16))
    assert [n for n, p in splits.items() if p.meets_slo] == [10, 11, 12, 13]
    assert splits[9].prefill_busy > 1 and math.isinf(splits[9].ttft_p95_ms)
    assert math.isinf(splits[14].decode_batch)
    assert "10 to 13 on prefill" in disagg.disaggregation.arithmetic["splits"]


def test_a_disaggregated_run_takes_a_rate_not_closed_loop_clients():
    proc = run_cli("simulate", "chat-disaggregated", "--concurrency", "20", "--requests", "50")
    assert proc.returncode == 2 and proc.stderr.startswith("error: --concurrency:") and "Traceback" not in proc.stderr


def test_the_prefill_pool_runs_the_mechanisms_options_too():
    """Images with disaggregation: the encoder runs at prefill, so the prefill pool's command carries the same
    multimodal options as the decode pool's (they were on the decode pool's alone); only the step budget, the TP and
    speculation differ."""
    d = plan(load_brief("multimodal").with_changes({"disaggregation.enabled": True}))
    assert d.config.prefill_command is not None

    def options(command: str) -> set[str]:
        return {line.strip().split(" ")[0] for line in command.split("\\\n")[1:]}

    assert "--limit-mm-per-prompt" in options(d.config.command)
    assert options(d.config.prefill_command) == options(d.config.command) - {"--speculative-config"}


def test_an_nvme_tier_and_disaggregation_need_two_kv_connectors():
    """LMCache (the NVMe tier) and NIXL (the KV transfer) each need --kv-transfer-config: a verdict naming the field."""
    changes = {"kv_tiers.nvme_gb_per_node": 1000.0, "deployment.prefix_caching": True}
    d = plan(load_brief("chat-disaggregated").with_changes(changes))
    assert not d.verdict.feasible
    assert any(p.field == "kv_tiers.nvme_gb_per_node" and "--kv-transfer-config" in p.problem for p in d.verdict.problems)


# --- issue 11's cross-check at two loads each: TTFT p95 and ITL p95 within 20%, TPOT p50 within 15% -------------------


@pytest.mark.parametrize(
    ("preset", "changes"),
    [
        ("chat-disaggregated", {}),  # 50 req/s a decode replica, 80% of the two pools' SLO capacity
        ("chat-disaggregated", {"workload.request_rate": 150.0}),  # 37.5 req/s a decode replica
        ("chat-speculative", {}),  # 1 req/s a replica, batch 2.4, speculative throughout
        ("chat-speculative", {"workload.request_rate": 16.0}),  # 4 req/s a replica, batch 13.7: prompt chunks in speculative steps
        ("chat-speculative", {"workload.request_rate": 16.0, "speculative.off_above_batch": 8}),  # batch 27.5: mostly plain steps
    ],
)
def test_the_simulator_confirms_the_mechanisms_plan(preset, changes):
    brief = load_brief(preset).with_changes(changes) if changes else load_brief(preset)
    d = plan(brief)
    sim = simulate(brief, SimSettings(requests=2000)).slo
    assert sim is not None
    assert sim.ttft_p95_ms == pytest.approx(d.slo.ttft_p95_ms, rel=0.20)
    assert sim.itl_p95_ms == pytest.approx(d.slo.itl_p95_ms, rel=0.20)
    assert sim.tpot_p50_ms == pytest.approx(d.slo.tpot_p50_ms, rel=0.15)
    assert sim.meets_slo == (d.slo.ttft_ok and d.slo.itl_ok)  # the latency verdict (the fleet's sizing arithmetic aside)


def test_a_disaggregated_design_describes_its_decode_replica(disagg):
    """The operating point is a decode replica at 200 / 4 = 50 req/s with the decode pool's batch and pure-decode TPOT;
    the capacity under the SLO scales both pools: at x1.25 the peak (62 req/s a decode replica) the prefill queue's
    TTFT reaches 2 s first."""
    op, dis = disagg.operating_point, disagg.disaggregation
    assert (op.general_replicas, op.rate_per_replica_per_s) == (4, pytest.approx(50.0))
    assert op.in_flight == pytest.approx(dis.decode_batch) and op.tpot_ms == pytest.approx(disagg.slo.tpot_p50_ms)
    assert op.interference == 0.0
    assert op.capacity_rate_per_s == pytest.approx(62.3, rel=0.02) and dis.binding_pool == "prefill"
    assert op.load_vs_capacity == pytest.approx(50 / op.capacity_rate_per_s)
    assert "prefill pool's queue (TTFT) binds" in op.arithmetic["capacity_rate_per_s"]


def test_a_lost_node_is_lost_from_a_named_pool(disagg):
    """One node lost: from the prefill pool (12 -> 11) the prefill replicas run 87.5% of the two pools' capacity,
    from the decode pool (4 -> 3) 83%: the prefill loss is the row, and it says which pool binds and how the other fares.
    Two lost: the decode pool (4 -> 2) cannot hold the batch, and the row names it."""
    one = next(m for m in disagg.failures if m.scenario.value == "one_node_lost")
    assert one.pool == "prefill" and one.ok
    assert "the prefill pool binds" in one.change and "(12 -> 11)" in one.change and "decode pool (4 -> 3)" in one.change
    assert one.overrides["disaggregation.prefill_nodes"] == 11 and one.overrides["hardware.nodes"] == 15
    assert one.note.startswith("the prefill pool binds (12 -> 11 nodes")  # the document's table shows the note
    again = plan(load_brief("chat-disaggregated").with_changes(one.overrides))
    assert again.operating_point.load_vs_capacity == pytest.approx(one.load_vs_capacity)
    two = next(m for m in disagg.failures if m.scenario.value == "two_nodes_lost")
    assert two.pool == "decode" and not two.ok and "the decode pool binds" in two.change


def test_the_fleet_sizing_reads_the_speculative_step():
    """At 16 req/s (4 a replica) the sizing arithmetic with the plain step put the fleet at 138% busy and the design
    not feasible, while the SLO model had each replica at 63% of its capacity; with a token's share of the
    speculative step the fleet is ~41% busy and feasible. Without speculation the same load is 35.5% at 1 req/s
    (calibrated defaults of docs/calibration.md)."""
    fast = plan(load_brief("chat-speculative").with_changes({"workload.request_rate": 16.0}))
    assert fast.capacity.utilization == pytest.approx(0.41, rel=0.05)
    assert fast.verdict.feasible and fast.verdict.meets_slo
    assert "speculative step" in fast.capacity.utilization_basis
    plain = plan(load_brief("chat-speculative").with_changes({"speculative.enabled": False}))
    assert plain.capacity.utilization == pytest.approx(0.355, rel=0.05)


def test_deepseek_drafts_with_its_own_mtp_layer():
    """DeepSeek-R1 ships one multi-token-prediction module: speculation runs as vLLM's method "mtp" with no head to
    name (an EAGLE head would be a placeholder and a problem), and the design has no speculative problem."""
    d = plan(load_brief("moe-deepseek").with_changes({"speculative.enabled": True}))
    assert '"method": "mtp"' in d.config.command and "EAGLE head" not in d.config.command
    assert not any(p.field.startswith("speculative") for p in d.verdict.problems)
    other = plan(load_brief("capstone").with_changes({"speculative.enabled": True, "model.name": "llama-3.1-70b"}))
    assert any(p.field == "speculative.method" for p in other.verdict.problems)  # no published head: a verdict


def test_dp_attention_replicas_size_the_mechanisms_by_their_own_gpus():
    """moe-deepseek's replica is 16 GPUs in 16 attention groups of TP=1: the KV reload and the vision encoder run on
    all 16 (as its prefill does), each group keeps its own adapters in host memory."""
    base = load_brief("moe-deepseek")
    shape = shape_of(base)
    assert (shape.tp, shape.attention_groups, shape.gpus) == (1, 16, 16)
    tiers = plan(base.with_changes({"kv_tiers.cpu_gb_per_node": 512})).kv_tiers
    assert tiers is not None
    assert tiers.cpu_reload_ms * 16 * 50e9 / 1e3 == pytest.approx(tiers.reload_tokens_p95 * shape.kv_bytes_per_token)
    assert "over 16 GPUs (16 attention groups of TP=1)" in tiers.arithmetic["reload"]
    mm = plan(base.with_changes({"multimodal.images_per_request": 1})).multimodal
    assert mm is not None
    flops_per_s = shape.gpu.dense_tflops["bf16"] * 1e12 * 16 * shape.compute_fraction
    assert mm.encoder_ms_per_image == pytest.approx(mm.encoder_tflop_per_image * 1e12 / flops_per_s * 1e3)
    assert "x 16 GPUs (16 attention groups of TP=1)" in mm.arithmetic["encoder"]
    lora = plan(base.with_changes({"lora.adapters": 10})).lora_serving
    assert lora is not None
    assert lora.cpu_gb_per_replica == pytest.approx(lora.cpu_slots * lora.gb_per_adapter * 16)
    assert "each of the 16 attention groups" in lora.arithmetic["memory"]
    variation = plan(base.with_changes({"variation": "c", "lora.adapters": 10})).variation
    assert variation is not None
    total = next(f for f in variation.findings if f.label == "memory for all adapters")
    assert total.value == pytest.approx(10 * lora.gb_per_adapter * 16)


def test_the_speculative_simulator_runs_the_vision_encoder_as_the_plain_one():
    """An 8B-parameter encoder (13.8 ms an image, 2 images x (1 - 20% cached) a request): the simulator's TTFT p50
    rises by the same with speculation on as off (the speculative loop ran no encoder: 33 ms against 56 ms)."""
    heavy = {"multimodal.encoder_params": 8e9}
    gains = []
    for on in (False, True):
        brief = load_brief("multimodal").with_changes({**heavy, "speculative.enabled": on})
        cached = brief.with_changes({"multimodal.encoder_cache_hit_rate": 1.0})  # the same tokens, no encoder work
        runs = [simulate(b, SimSettings(requests=1500)) for b in (brief, cached)]
        assert ("speculative" in runs[0].arithmetic) is on  # the speculative loop ran
        sim = [r.slo for r in runs]
        assert sim[0] is not None and sim[1] is not None
        gains.append(sim[0].ttft_p50_ms - sim[1].ttft_p50_ms)
    assert gains[0] > 2 * 0.8 * 13.8
    assert gains[1] == pytest.approx(gains[0], rel=0.1)


_SHORT_DECODE = {"hardware.nodes": 14, "deployment.spare_nodes": 0}  # 12 prefill + 2 decode nodes: the decode pool is short


def test_a_short_decode_pool_reads_like_an_overloaded_replica():
    """Review s4 finding 8: with 2 decode replicas for 200 req/s the decode pool has no steady state. Prompts wait for a
    decode slot without bound, so the TTFT is unbounded (it showed 357 ms, 'missed'); the running sequences' gaps are a
    full batch's (512), judged by their value; no text says 'batch of unbounded' or 'unbounded sequences'."""
    d = plan(load_brief("chat-disaggregated").with_changes(_SHORT_DECODE))
    dis, slo = d.disaggregation, d.slo
    assert not dis.stable and math.isinf(dis.decode_batch)
    assert math.isinf(slo.ttft_p95_ms) and math.isinf(slo.ttft_p50_ms) and not slo.ttft_ok
    assert slo.judged_itl_p95_ms == pytest.approx(13.6, abs=0.1) and slo.itl_ok  # a full batch of 512 pure decode steps
    assert d.operating_point.limit.value == "slots"
    assert [p.field for p in d.verdict.problems] == ["hardware.nodes"]  # not a KV problem with 'unbounded sequences'
    texts = [
        *(p.problem for p in d.verdict.problems),
        *d.operating_point.arithmetic.values(),
        *dis.arithmetic.values(),
        *(s.component for s in (*slo.ttft_waterfall, *slo.itl_waterfall)),
        *(p.load_text for p in d.architecture.pools),
    ]
    for text in texts:
        assert "of unbounded" not in text and "unbounded sequences" not in text and "unbounded running" not in text, text
    assert "exceeds max-num-seqs 512" in dis.arithmetic["decode"]


def test_the_slo_page_of_a_short_decode_pool_says_unbounded_with_its_cause():
    from tests.apphelp import metrics, new_app, shown, visit

    at = visit(new_app({"preset": "chat-disaggregated", **{k: str(v) for k, v in _SHORT_DECODE.items()}}), "pages/slo_budget.py")
    assert metrics(at)["p95 TTFT"] == "unbounded"
    assert any(e.value.startswith("TTFT is unbounded: batch slots full") for e in at.error), [e.value for e in at.error]
    page = " ".join(shown(m.value) for m in [*at.markdown, *at.caption])
    assert "batch of unbounded" not in page and "planner.sim_mechanisms" not in page
    assert "a full batch of 512 (max-num-seqs" in page


def test_the_irreducible_gap_of_a_speculative_design_is_per_token():
    """Review s6 finding 7: with speculation on, one sequence's step emits 2.53 tokens, so the TPOT no load can go below
    is the speculative step over them: BF16 chat-speculative meets its 15 ms TPOT target at 10.7 ms and names no
    'irreducible 20.3 ms' problem; a target below the per-token floor is still named, with the tokens a step emits."""
    brief = load_brief("chat-speculative").with_changes({"deployment.weights": "bf16", "deployment.kv_cache": "bf16"})
    d = plan(brief)
    assert d.verdict.meets_slo and not d.verdict.problems and d.slo.tpot_p95_ms < 15
    tight = plan(brief.with_changes({"slo.itl_p95_ms": 3.0}))
    problem = next(p for p in tight.verdict.problems if p.field == "slo.itl_p95_ms")
    assert "irreducible" in problem.problem and "tokens a speculative step emits" in problem.problem


def test_chat_speculative_words_its_cutoff_and_its_judged_gap():
    """Review s7 finding 9: disable_by_batch_size 227 lies above max-num-seqs 64, so speculation never turns off at a
    batch the engine runs, and the target judges TPOT: the conclusion and the --max-num-seqs reason say both."""
    d = plan(load_brief("chat-speculative"))
    assert "beyond max-num-seqs 64: it stays on at every batch the engine runs" in (d.conclusion or "")
    why = next(f.why for f in d.config.flags if f.flag == "--max-num-seqs")
    assert "a reply's mean gap would be" in why and "which judges it (TPOT)" in why and "the ITL would be" not in why


def test_the_split_text_says_which_splits_keep_n_plus_one() -> None:
    """Review s10, finding 2: the conclusion said '10 to 13 on prefill meet the SLO', hiding that 10 and 13 lose the N+1
    the 99.9% availability asks for (one node lost breaks the SLO there). It names the splits that keep it, each as
    `plan --set disaggregation.prefill_nodes=P` judges it."""
    brief = load_brief("chat-disaggregated")
    d = plan(brief)
    assert d.conclusion is not None
    assert "10 to 13 on prefill meet the SLO, 11 to 12 of them with N+1;" in d.conclusion
    for prefill, keeps in ((10, False), (11, True), (12, True), (13, False)):
        v = plan(brief.with_changes({"disaggregation.prefill_nodes": prefill})).verdict
        assert v.meets_slo and v.availability_ok == keeps, prefill
    relaxed = plan(brief.with_changes({"slo.availability": 0.9}))  # no N+1 asked: no N+1 words
    assert relaxed.conclusion is not None and "with N+1" not in relaxed.conclusion


@pytest.mark.parametrize(
    ("preset", "changes"),
    [
        ("lora-platform", {}),
        ("lora-platform", {"lora.max_loras": 4, "lora.max_cpu_loras": 8}),
        ("lora-platform", {"lora.max_loras": 4, "lora.max_cpu_loras": 64, "hardware.nodes": 3}),
        ("variation-c", {}),
        ("variation-c", {"lora.max_loras": 2, "lora.tenant_routing": False}),
    ],
)
def test_the_adapter_load_in_the_ttft_is_the_designs_lora_serving(preset, changes):
    """The SLO budget's adapter-load terms (worked out from the cache's figures alone, lora_serving.adapter_loads) are
    the Design's LoraServing figures, which are worked out at the design's utilization and batch."""
    brief = load_brief(preset)
    design = plan(brief.with_changes(changes) if changes else brief)
    lora = design.lora_serving
    assert lora is not None
    p95 = [step.ms for step in design.slo.mechanisms if step.component.startswith("LoRA adapter load")]
    mean = [step.ms for step in design.slo.mechanisms_mean if step.component.startswith("LoRA adapter load")]
    if lora.ttft_load_ms == 0:
        assert p95 == mean == []
        return
    assert p95 == [lora.ttft_load_ms]
    from_cpu, from_storage = lora.cpu_hit_rate - lora.gpu_hit_rate, 1 - lora.cpu_hit_rate
    assert mean == [from_cpu * lora.load_from_cpu_ms + from_storage * lora.load_from_storage_ms]
