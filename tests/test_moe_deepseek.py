"""MoE at scale and multi-node replicas (issue 14, mechanisms 4 and 5): the moe-deepseek preset's golden figures,
the step model against a published DeepSeek measurement, pipeline stages for 405B in BF16, and the errors.

Golden figures are the planner's own at this commit (the preset states every input); each physical figure is
also derived by hand in the test, so a change in the arithmetic fails here rather than moving silently.
"""

from __future__ import annotations

import math

import pytest
from conftest import cli_json, run_cli

from planner import load_brief, plan
from planner.catalog import MODELS
from planner.operating_point import kv_running_limit
from planner.replica import shape_of
from planner.scaleout import step_parts
from planner.step_model import A2A_LATENCY_S, A2A_S_PER_TOKEN, PP_LATENCY_S, PP_S_PER_TOKEN, StepConstants, step_time_s

pytestmark = pytest.mark.unit

TOL = 0.02
R1 = MODELS["deepseek-r1"]


@pytest.fixture(scope="module")
def moe():
    return plan(load_brief("moe-deepseek"))


def test_deepseek_catalog_matches_config_json():
    # deepseek-ai/DeepSeek-R1 and -V3 config.json: 61 layers, first_k_dense_replace 3, 256 routed top-8, MLA 512 + 64
    for key in ("deepseek-r1", "deepseek-v3"):
        m = MODELS[key]
        assert (m.layers, m.dense_layers, m.moe_layers, m.hidden_size) == (61, 3, 58, 7168)
        assert (m.experts, m.experts_per_token, m.kv_lora_rank, m.qk_rope_head_dim) == (256, 8, 512, 64)
    # one routed expert: gate, up and down projections of 7,168 x 2,048 in each of the 58 MoE layers (~1% off the
    # catalog's figure, which spreads the 671e9 - 37e9 parameters evenly)
    assert R1.expert_params == pytest.approx(3 * 7168 * 2048 * 58, rel=0.02)


def test_preset_memory(moe):
    shape, mem = moe.shape, moe.memory
    assert (shape.gpus, shape.attention_groups, shape.replica_nodes, shape.replicas) == (16, 16, 2, 6)
    experts = R1.experts * R1.expert_params
    by_hand = ((R1.params - experts) / 1 + experts / 16) * 1.0 / 1e9  # shared whole on each rank, experts over 16 GPUs, FP8
    assert mem.weights_gb_per_gpu == pytest.approx(by_hand, rel=1e-9)
    assert mem.weights_gb_per_gpu == pytest.approx(57.45, rel=TOL)
    assert mem.kv_bytes_per_token_per_gpu == 61 * (512 + 64) * 2  # MLA latent + rotary key, BF16, whole on the rank
    # 16 ranks each hold their own sequences: the replica's pool is 16 GPUs' KV
    per_gpu_tokens = mem.kv_gb_per_gpu * 1e9 / mem.kv_bytes_per_token_per_gpu
    assert mem.kv_capacity_tokens_per_replica == pytest.approx(16 * per_gpu_tokens, rel=1e-9)
    assert mem.max_sequences_per_replica == pytest.approx(3326, rel=TOL)


def test_preset_verdict_and_operating_point(moe):
    assert moe.verdict.feasible and moe.verdict.meets_slo and moe.verdict.availability_ok
    op = moe.operating_point
    assert op.rate_per_replica_per_s == pytest.approx(40 / 6)
    assert op.tpot_ms == pytest.approx(42.4, rel=TOL)
    # 9.42 req/s since the wait for a batch slot counts as a distribution in the p95 TTFT (9.46 before; max-rate: 11.3)
    assert op.capacity_rate_per_s == pytest.approx(9.42, rel=TOL)
    assert moe.cost.usd_per_million_output_tokens == pytest.approx(1.22, rel=TOL)


def test_preset_step_carries_the_all_to_all(moe):
    shape = moe.shape
    k = shape.step
    # per MoE layer and token: 8 copies x 7,168 x 3 B (FP8 out, BF16 back) / 16 GPUs, half of them to the other node,
    # over a 400 Gb/s NIC at 85%; NVLink's half is faster and runs at once
    network = 50e9 * 0.85
    assert k.a2a_s_per_token == pytest.approx(58 * 8 * 7168 * 3 / 16 * (8 / 16) / network, rel=1e-9)
    assert k.a2a_latency_s == pytest.approx(2 * 58 * (20 + 10) * 1e-6)  # the calibrated 20 us a collective + 10 us over the network
    assert k.pp_s_per_token == 0 and k.pp_latency_s == 0
    parts = step_parts(shape, moe.operating_point.in_flight, moe.brief.running_context_tokens)
    names = [p.component for p in parts]
    assert "EP all-to-alls (dispatch + combine)" in names and "TP all-reduces" not in names  # TP=1 ranks: no all-reduce
    total = shape.decode_step_s(moe.operating_point.in_flight, moe.brief.running_context_tokens) * 1e3
    assert sum(p.ms for p in parts) == pytest.approx(total, rel=1e-9)


def test_preset_conclusion_names_the_mechanism(moe):
    so = moe.scale_out
    assert so is not None
    assert "What binds:" in so.conclusion and "DP attention" in so.conclusion
    by_name = {o.name: o for o in so.options}
    one_node_tp = by_name["TP=8 with EP=8 in one node, no DP attention"]
    one_node_dp = by_name["DP attention with EP=8 in one node"]
    # MLA under TP=8 keeps the whole latent on each of the 8 GPUs: the pool holds ~1/8 x the (heavier) weights' leftover
    assert one_node_tp.max_sequences_per_replica < moe.memory.max_sequences_per_replica / 10
    # two nodes' EP halves the experts a GPU holds: more KV, more sequences, and more rate a node under the SLO
    assert one_node_dp.max_sequences_per_replica < moe.memory.max_sequences_per_replica / 4
    assert so.capacity_rate_per_node_per_s > 1.5 * one_node_dp.capacity_rate_per_node_per_s


def test_step_model_lands_near_sglang_large_scale_ep():
    """SGLang's large-scale EP blog (lmsys.org/blog/2025-05-05-large-scale-ep): 22.3k output tokens/s per H100 node
    in decode, EP72 over 9 nodes with DP attention, 256 sequences a GPU (--cuda-graph-bs 256), 2,000-token inputs.
    The same step model, moved to that setup, gives 22.2k (-0.6%); the tolerance is 10%."""
    brief = load_brief("moe-deepseek").with_changes(
        {
            "hardware.gpu": "h100-sxm",
            "hardware.nodes": 9,
            "deployment.ep": 72,
            "deployment.reserve_gb_per_gpu": 5.0,
            "workload.input_tokens_mean": 2000,
            "workload.input_tokens_p95": 2000,
            "workload.output_tokens_mean": 100,
            "workload.output_tokens_p95": 100,
        }
    )
    shape = shape_of(brief)
    batch = 256 * 72
    step_s = shape.decode_step_s(batch, brief.running_context_tokens)
    per_node = batch / step_s / 9
    assert per_node == pytest.approx(22_300, rel=0.10)


def test_mechanisms_off_by_default_leave_the_step_unchanged():
    capstone = shape_of(load_brief("capstone"))
    k = capstone.step
    assert (k.a2a_latency_s, k.a2a_s_per_token, k.pp_latency_s, k.pp_s_per_token) == (0, 0, 0, 0)
    assert (capstone.pp, capstone.ep, capstone.attention_groups, capstone.replica_nodes) == (1, 1, 1, 1)
    # the formula adds the new constants as communication, at their own positions in the tuple
    only = StepConstants.only(a2a_latency_s=1e-3, a2a_s_per_token=1e-6, pp_latency_s=2e-3, pp_s_per_token=2e-6)
    assert step_time_s(only.values(), 100, 100, 0, 0) == pytest.approx(1e-3 + 1e-4 + 2e-3 + 2e-4)
    positions = (A2A_LATENCY_S, A2A_S_PER_TOKEN, PP_LATENCY_S, PP_S_PER_TOKEN)
    assert tuple(only.values()[i] for i in positions) == (1e-3, 1e-6, 2e-3, 2e-6)


def test_405b_bf16_on_h100_plans_with_two_pipeline_stages():
    base = ("plan", "capstone", "--set", "model.name=llama-3.1-405b", "--set", "deployment.weights=bf16")
    proc = run_cli(*base)
    assert proc.returncode == 2 and "weights do not fit" in proc.stderr and "deployment.pp" in proc.stderr
    d = cli_json(*base, "--set", "deployment.pp=2", "--set", "deployment.long_context_nodes=0", "--set", "deployment.spare_nodes=0")
    assert d["memory"]["weights_gb_per_gpu"] == pytest.approx(405.9e9 * 2 / 8 / 2 / 1e9)  # TP 8 x PP 2
    assert d["memory"]["kv_bytes_per_token_per_gpu"] == 2 * 126 * 1 * 128 * 1 / 2  # K,V x layers x 1 head x 128 x FP8 / 2 stages
    assert "--pipeline-parallel-size 2" in d["config"]["command"]
    assert d["config"]["engine"]["pipeline_parallel_size"] == 2
    general = d["architecture"]["pools"][0]
    assert (general["nodes"], general["replicas"], general["replica_nodes"], general["pp"]) == (8, 4, 2, 2)
    one = next(f for f in d["failures"] if f["scenario"] == "one_node_lost")
    assert one["overrides"]["hardware.nodes"] == 6  # the lost node takes its whole 2-node replica out
    shape = shape_of(
        load_brief("capstone").with_changes({"model.name": "llama-3.1-405b", "deployment.weights": "bf16", "deployment.pp": 2})
    )
    k = shape.step
    assert k.pp_s_per_token == pytest.approx(16_384 * 2 / (50e9 * 0.85))  # one BF16 activation row over the NIC
    assert shape.replicas_in(8) == 8 and shape.replicas_in(7) == 6 and shape.nodes_for(5) == 6  # streams: 2 a replica


def test_engine_command_for_dp_attention_prints_per_rank_limits(moe):
    engine, command = moe.config.engine, moe.config.command
    assert (engine.data_parallel_size, engine.enable_expert_parallel, engine.tensor_parallel_size) == (16, True, 1)
    assert engine.max_num_seqs == 4096 // 16 and f"--max-num-seqs {engine.max_num_seqs}" in command
    for flag in ("--data-parallel-size 16", "--data-parallel-size-local 8", "--enable-expert-parallel"):
        assert flag in command
    why = {f.flag: f.why for f in moe.config.flags}
    assert "all-to-all" in why["--enable-expert-parallel"] and "16 ranks x 256" in why["--max-num-seqs"]


def test_slots_beyond_the_kv_pool_are_named_and_lowered(moe):
    """4,096 slots (256 a rank) against the 2,505 sequences the KV pool holds at the running context (804 + 3,748 / 2
    tokens): the engine would admit more than fit and preempt (the simulator shows it at 12 req/s). The reason says
    so and the recommendation lowers the limit to what fits, 152 a rank (a multiple of 8) = 2,432; re-planned with it,
    nothing is left to recommend and the verdict is unchanged (the analysis already capped the batch at the KV pool)."""
    kv = kv_running_limit(moe.brief, moe.shape)
    assert kv == pytest.approx(2505, rel=0.01)
    why = next(f.why for f in moe.config.flags if f.flag == "--max-num-seqs")
    assert "kept under" not in why and "the engine preempts" in why
    rec = next(r for r in moe.config.recommendations if r.flag == "--max-num-seqs")
    assert (rec.value, rec.overrides) == ("152", {"deployment.max_num_seqs": 2432}) and kv >= 2432
    lowered = plan(load_brief("moe-deepseek").with_changes(rec.overrides))
    assert not any(r.flag == "--max-num-seqs" for r in lowered.config.recommendations)
    assert "kept under" in next(f.why for f in lowered.config.flags if f.flag == "--max-num-seqs")
    assert lowered.verdict.meets_slo == moe.verdict.meets_slo and lowered.slo.ttft_p95_ms == pytest.approx(moe.slo.ttft_p95_ms, rel=1e-6)


def test_the_full_batch_is_what_the_kv_pool_holds(moe):
    """Review s7 finding 2: 4,096 slots, but the KV pool holds 2,504 sequences at the 6,044-token context the bound reads;
    the engine preempts the rest, so the full-batch bound and an overloaded row run 2,504 (p95 ITL 80.1 ms with the
    packed prompts the token gaps count since December 2026, not 110 ms at 4,096 sequences the pool cannot hold), as they
    do with the recommended 2,432 slots."""
    full = moe.slo.at_max_batch
    assert full.batch == math.floor(moe.shape.kv_capacity_tokens / full.context_tokens) < moe.brief.deployment.max_num_seqs
    assert "all the KV pool holds" in full.arithmetic and full.itl_p95_ms < 90
    rows = {m.scenario.value: m for m in moe.failures}
    lowered = {m.scenario.value: m for m in plan(load_brief("moe-deepseek").with_changes({"deployment.max_num_seqs": 2432})).failures}
    for name in ("two_nodes_lost", "traffic_doubles"):
        assert rows[name].itl_p95_ms == pytest.approx(lowered[name].itl_p95_ms, rel=0.05)


@pytest.mark.parametrize(
    ("overrides", "field", "needle"),
    [
        (["--set", "deployment.ep=8"], "deployment.ep", "no routed experts"),
        (["--set", "deployment.dp_attention=true"], "deployment.dp_attention", "EP is 1"),
        (["--set", "deployment.tp=16"], "deployment.tp", "deployment.pp"),
    ],
)
def test_parallel_errors_name_the_field(overrides, field, needle):
    proc = run_cli("plan", "capstone", *overrides)
    assert proc.returncode == 2
    line = proc.stderr.strip()
    assert len(line.splitlines()) == 1 and field in line and needle in line


def test_a_multi_node_replica_needs_its_nodes():
    proc = run_cli("plan", "moe-deepseek", "--set", "hardware.nodes=1")
    assert proc.returncode == 2 and "hardware.nodes" in proc.stderr and "spans 2 nodes" in proc.stderr


def test_speculation_on_the_ep_replica_reads_its_16_gpus():
    """EP=16 with DP attention at TP=1: a decode step reads the weights on all 16 GPUs of the replica, not TP's one."""
    d = plan(load_brief("moe-deepseek").with_changes({"speculative.enabled": True}))
    assert d.shape.gpus_per_replica == 16
    assert "reads all 16 GPUs' weights" in (d.mechanism_conclusion or "")


def test_max_rate_stops_at_the_slots_bound():
    """1,500 requests of 3,748-token replies fit in the 4,096 slots at once, so no simulated run overloads; the
    search's answer is capped by Little's law (slots / (reply tokens x the step at that batch)), about 14.6 req/s
    (the uncapped search said 73.8 req/s and 1 replica against the plan's 6)."""
    r = cli_json("max-rate", "moe-deepseek", "--requests", "1500")
    assert 13 < r["max_rate_per_s"] < 16 and "capped at the slots' bound" in r["arithmetic"]["max_rate_per_s"]
    assert r["confidence"]["capped_at_slot_bound"] is True
    assert r["replicas_needed"] >= 3


def test_the_default_max_rate_probe_fills_the_slots_and_overloads_them():
    """Without --requests the first probe is 8 x the 4,096 slots, cut to a third of the work limit (12,517 requests of
    4,552 tokens in 117 runs) so that a doubled length fits too: the runs overload the slots below their bound, the
    rate falls with the length (14.1 -> 11.4 req/s, 3 -> 4 replicas) and the work limit ends the doubling unconverged."""
    from planner.simulator import max_rate

    m = max_rate(load_brief("moe-deepseek"))
    c = m.confidence
    assert m.probe_lengths_tried == (12_517, 25_034)
    assert not c.capped_at_slot_bound and "capped at the slots' bound" not in m.arithmetic["max_rate_per_s"]
    assert m.max_rate_per_s < c.slot_bound_per_s
    assert m.converged is False and c.stopped_by == "work limit"
    assert c.replicas_needed[0] < c.replicas_needed[1] == m.replicas_needed


def test_a_pp_design_names_its_streams_not_replicas():
    """capacity.replicas counts a PP replica's micro-batch streams: 12 nodes of TP=8 at PP=2 are 6 replicas (the
    diagram's), 12 streams; the CLI's and the document's headlines and the fleet load test say streams, not 12 replicas."""
    from report import render_markdown

    proc = run_cli("plan", "rag", "--set", "deployment.pp=2")
    assert "TP=8, PP=2, 12 micro-batch streams" in proc.stdout.splitlines()[1]
    text = render_markdown(plan(load_brief("rag").with_changes({"deployment.pp": 2})))
    headline = next(line for line in text.splitlines() if line.startswith("**Llama"))
    assert "TP=8, PP=2, 12 micro-batch streams" in headline and "12 general-pool micro-batch streams" in text


def test_speculation_turns_off_per_dp_rank():
    """vLLM's disable_by_batch_size counts one engine's batch: with DP attention each of the 16 ranks is an engine
    (max-num-seqs 256 a rank), so the replica's crossover (about 1,142) becomes 1,142 // 16 = 71 a rank; the
    replica-wide figure never triggered."""
    d = plan(load_brief("moe-deepseek").with_changes({"speculative.enabled": True}))
    spec = d.speculative
    assert spec is not None and spec.off_above_batch_per_engine == spec.off_above_batch // 16
    assert f'"disable_by_batch_size": {spec.off_above_batch_per_engine}' in d.config.command
    assert f"disable_by_batch_size={spec.off_above_batch_per_engine} turns it off" in (d.conclusion or "")


def test_kv_tiers_on_a_two_node_dp_replica():
    """DeepSeek-R1's replica spans 2 nodes and runs 16 DP-attention engines, 8 a node: its CPU tier is both nodes'
    host memory (2 x 512 GB / 70,272 B a token), and each engine's offloading buffer is 512 GB / 8 = 64 GB = 59.6 GiB
    (it was a whole node's 477 GiB for each of the 8 engines, and half the tier for the replica)."""
    d = plan(load_brief("moe-deepseek").with_changes({"kv_tiers.cpu_gb_per_node": 512.0, "deployment.prefix_caching": True}))
    assert d.kv_tiers is not None
    assert d.kv_tiers.cpu_tokens == pytest.approx(2 * 512e9 / d.shape.kv_bytes_per_token)
    assert "--kv-offloading-size 60" in d.config.command  # 59.6 GiB rounded


def test_a_pp_designs_arithmetic_divides_by_streams_not_replicas():
    """RAG at PP=2: the capacity's batch, prefill and the KV tiers' sessions divide by 12 micro-batch streams, the 6
    replicas' 2 each; the CLI's JSON and the document say the same."""
    from report import render_markdown

    streams = "12 micro-batch streams (6 replicas x PP=2)"
    d = plan(load_brief("rag").with_changes({"deployment.pp": 2, "kv_tiers.cpu_gb_per_node": 512}))
    assert d.capacity.replicas == 12 and d.shape.units_text == streams
    assert f"generating / {streams} =" in d.capacity.arithmetic["batch_per_replica"]
    assert f"per micro-batch stream x {streams} =" in d.capacity.arithmetic["prefill_tokens_per_s"]
    assert d.kv_tiers is not None and f"live sessions / {streams} (Little's law)" in d.kv_tiers.arithmetic["sessions"]
    cli = cli_json("plan", "rag", "--set", "deployment.pp=2")
    assert f"generating / {streams} =" in cli["capacity"]["arithmetic"]["batch_per_replica"]
    text = render_markdown(d)
    assert f"generating / {streams} =" in text and "/ 12 replicas" not in text and "x 12 replicas" not in text
    assert plan(load_brief("rag")).shape.units_text == "12 replicas"  # without PP a replica is the unit


def test_tenant_routing_partitions_adapters_over_whole_pp_replicas():
    """405B BF16 at PP=2 on 8 nodes: 4 replicas of two stages (8 micro-batch streams). Tenant routing spreads 100
    adapters over the 4 replicas, 25 each: a stream is not a replica a tenant can be routed to (25 GPU slots hold them)."""
    changes = {
        "model.name": "llama-3.1-405b",
        "deployment.weights": "bf16",
        "deployment.pp": 2,
        "deployment.long_context_nodes": 0,
        "deployment.spare_nodes": 0,
        "lora.adapters": 100,
        "lora.max_loras": 25,
    }
    d = plan(load_brief("capstone").with_changes(changes))
    assert (d.shape.replicas, d.shape.pp) == (8, 2)
    assert d.lora_serving is not None
    assert d.lora_serving.arithmetic["routing"] == "tenant-aware routing: 100 adapters / 4 general-pool replicas = 25 per replica"


def test_pp_stages_divide_each_gpus_adapter_memory():
    """A stage holds only its own layers' adapters: at PP=2 (same TP=8) 100 adapters of 131 MB take 0.819 GB a GPU,
    half of PP=1's 1.64 GB, in the serving figures, their arithmetic, variation C and the memory check; a miss loads
    each stage's half over its own host links, all stages at once."""
    from planner.lora import lora_check, lora_memory

    changes = {"deployment.long_context_nodes": 0, "deployment.spare_nodes": 0, "lora.adapters": 100}
    one, two = (plan(load_brief("capstone").with_changes({**changes, "deployment.pp": pp})) for pp in (1, 2))
    assert (one.shape.tp, one.shape.pp, two.shape.tp, two.shape.pp) == (8, 1, 8, 2)
    a, b = one.lora_serving, two.lora_serving
    assert a is not None and b is not None
    assert a.gpu_gb_per_gpu == pytest.approx(100 * a.gb_per_adapter / 8)  # 1.64 GB
    assert b.gpu_gb_per_gpu == pytest.approx(a.gpu_gb_per_gpu / 2)
    assert b.load_from_cpu_ms == pytest.approx(a.load_from_cpu_ms / 2)
    assert "/ TP 8 = 1.64 GB per GPU" in a.arithmetic["memory"]
    assert "/ TP 8 / PP 2 stages = 0.819 GB per GPU" in b.arithmetic["memory"]
    assert "over 8 x 2 stages x 50 GB/s" in b.arithmetic["load"]
    per_gpu = []
    for pp in (1, 2):
        variation = plan(load_brief("capstone").with_changes({**changes, "deployment.pp": pp, "variation": "c"})).variation
        assert variation is not None
        per_gpu.append(next(f.value for f in variation.findings if f.label == "adapter memory per GPU"))
    assert per_gpu[1] == pytest.approx(per_gpu[0] / 2)
    # the memory check: adapters taking 1.5x a GPU's free memory at PP=1 take 0.75x at PP=2, with the same free memory
    brief = load_brief("capstone").with_changes({"lora.adapters": 1000})
    free_gb = lora_memory(brief.lora, one.shape.model, 8).gb_per_gpu / 1.5
    fits_one, problems_one = lora_check(brief, one.shape.model, 8, 1, free_gb)
    fits_two, problems_two = lora_check(brief, one.shape.model, 8, 2, free_gb)
    assert not fits_one and fits_two and not problems_two
    assert "under 666 fit" in problems_one[0].change  # 1,000 / 1.5
