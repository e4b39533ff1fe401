"""Golden figures of the problem-library presets (issue 14c): each mechanism's arithmetic redone by hand from the
preset's stated numbers, and the design's conclusion naming what binds and which mechanism it turns on."""

from __future__ import annotations

import math

import pytest

from planner.brief import ObjectiveKind
from planner.design import Design, plan
from planner.failures import Scenario, hit_rate_floor
from planner.loader import load_brief
from planner.mechanisms import resolve
from planner.replica import shape_of
from planner.search import SerialRunner, search
from planner.search_space import space_from_data
from planner.simulator import SimSettings, simulate
from planner.slo import engine, pace

KV_BYTES_70B_FP8 = 80 * 8 * 128 * 2 * 1  # layers x KV heads x head dim x (K and V) x 1 byte


def _plan(name: str) -> Design:
    return plan(load_brief(name))


def test_agent_platform_derives_its_hit_rate_from_the_cpu_tier() -> None:
    d = _plan("agent-platform")
    tiers = d.kv_tiers
    assert tiers is not None
    # 30 req/s x (15 s generating + 120 s think) = 4,050 sessions over 8 replicas
    assert tiers.sessions_per_replica == pytest.approx(30 * 135 / 8)
    # 19 of 20 turns return; 1 - 800 / 8,000 of their prompt is history; the CPU tier holds every session
    assert tiers.resident_all == 1.0 and tiers.resident_hbm < 1
    assert tiers.hit_rate == pytest.approx(19 / 20 * (1 - 800 / 8000))
    assert d.brief.workload.prefix_hit_rate == pytest.approx(tiers.hit_rate)  # the derived rate replaces the stated 50%
    assert load_brief("agent-platform").workload.prefix_hit_rate == 0.5
    # the CPU tier per replica: 1,024 GB / 164 kB per token
    assert tiers.cpu_tokens == pytest.approx(1024e9 / KV_BYTES_70B_FP8)
    # a capped prompt's 16,000 x 90% history over 8 GPUs x 50 GB/s
    assert tiers.cpu_reload_ms == pytest.approx(16000 * 0.9 * KV_BYTES_70B_FP8 / (8 * 50e9) * 1e3)
    assert tiers.ttft_reload_ms == pytest.approx(tiers.cpu_reload_ms)  # over 5% of requests reload from CPU
    assert tiers.cpu_reload_ms < tiers.recompute_ms / 10
    reload = next(s for s in d.slo.mechanisms if s.component.startswith("KV reload from the CPU tier"))
    assert reload.ms == pytest.approx(tiers.ttft_reload_ms)
    assert "--kv-offloading-backend native" in d.config.command and "--kv-offloading-size 954" in d.config.command  # 1,024 GB in GiB
    assert d.verdict.feasible and d.verdict.meets_slo
    assert d.conclusion is not None and "The KV tiers turn on" in d.conclusion and "HBM alone: 51.5%" in d.conclusion


def test_the_tiers_hit_rate_falls_when_the_cpu_tier_shrinks_and_rises_with_nvme() -> None:
    base = load_brief("agent-platform")
    small = plan(base.with_changes({"kv_tiers.cpu_gb_per_node": 64})).kv_tiers
    with_nvme = plan(base.with_changes({"kv_tiers.cpu_gb_per_node": 64, "kv_tiers.nvme_gb_per_node": 4000})).kv_tiers
    assert small is not None and with_nvme is not None
    assert small.hit_rate < with_nvme.hit_rate == pytest.approx(19 / 20 * (1 - 800 / 8000))
    assert with_nvme.share_from_nvme > 0.05 and with_nvme.ttft_reload_ms == pytest.approx(with_nvme.nvme_reload_ms)
    assert "--kv-transfer-config" in plan(base.with_changes({"kv_tiers.nvme_gb_per_node": 4000})).config.command


def test_resolving_a_brief_twice_changes_nothing() -> None:
    for name in ("agent-platform", "multimodal", "capstone"):
        once = resolve(load_brief(name))
        assert resolve(once) == once
    assert resolve(load_brief("capstone")) == load_brief("capstone")


def test_offline_batch_is_judged_on_throughput_at_its_largest_batch() -> None:
    d = _plan("offline-batch")
    goal = d.objective
    assert goal is not None and goal.kind is ObjectiveKind.throughput
    assert goal.batch_per_replica == 512  # max-num-seqs; the KV pool holds more
    # each step carries 512 x 600 uncached / 300 out = 1,024 prompt tokens beside the decode batch (the latency
    # model's mixed step); the fleet's tokens/s: replicas / (output x step / batch) x tokens per request
    eng = engine(d.brief, d.shape)
    assert goal.decode_step_ms == pytest.approx(float(eng.mixed_step_s(512 * 600 / 300, 1.0, 512.0)) * 1e3)
    request_s = 300 * goal.decode_step_ms / 1e3 / 512
    assert goal.request_s == pytest.approx(request_s)
    assert goal.tokens_per_s == pytest.approx(1 / request_s * 1800)
    assert goal.time_s == pytest.approx(1e9 / goal.tokens_per_s)
    assert goal.usd_per_m_tokens == pytest.approx(8 * 2.5 / 3600 / goal.tokens_per_s * 1e6)
    assert goal.time_s / 3600 == pytest.approx(8.28, abs=0.01) and goal.meets  # at the calibrated defaults (docs/calibration.md)
    assert d.verdict.meets_slo and not any(p.field.startswith("slo.") for p in d.verdict.problems)
    assert d.conclusion is not None and d.conclusion.startswith("Judged on throughput, not latency")
    pool = d.architecture.pools[0]  # no latency target judges the pool: its load is the share of the deadline the work takes
    assert pool.utilization == pytest.approx(goal.time_s / goal.deadline_s) and pool.load.value == "ok"
    assert pool.load_text == "the work takes 34.5% of its deadline" and "SLO capacity" not in d.architecture.dot


@pytest.mark.parametrize(("preset", "requests"), [("offline-batch", 20_000), ("rl-rollout", 8_000)])
def test_an_objectives_throughput_is_the_simulators_at_the_full_batch(preset: str, requests: int) -> None:
    """A job's pace is a replica at its full batch: the simulator's closed loop of that many clients (the brief's length
    distributions, prompts prefilled beside the decode batch) gives the output tokens/s the plan states, within 5%
    (offline-batch: plan 5,589 against 5,502 tok/s a replica; the decode-only step it used before gave 7,424)."""
    d = _plan(preset)
    goal = d.objective
    assert goal is not None
    per_replica = goal.output_tokens_per_s / d.shape.replicas
    sim = simulate(d.brief, SimSettings(concurrency=int(goal.batch_per_replica), requests=requests))
    assert per_replica == pytest.approx(sim.output_tokens_per_s, rel=0.05)


def test_an_offline_job_past_its_deadline_is_a_verdict_naming_the_nodes() -> None:
    d = plan(load_brief("offline-batch").with_changes({"objective.job_tokens": 5e9}))
    assert d.objective is not None and not d.objective.meets
    assert d.verdict.feasible and not d.verdict.meets_slo
    problem = next(p for p in d.verdict.problems if p.field == "objective.deadline_hours")
    assert f"run on {math.ceil(d.objective.time_s / 86400)} nodes" in problem.change


def test_rl_rollout_makespan_is_set_by_the_stragglers() -> None:
    d = _plan("rl-rollout")
    goal = d.objective
    assert goal is not None and goal.kind is ObjectiveKind.batch_completion
    assert goal.longest_output_tokens == 16384  # the 1 - 1/4,097 quantile of the gamma lies beyond the cap
    bulk = 4096 * goal.request_s / 16
    assert goal.time_s == pytest.approx(goal.straggler_s) and goal.straggler_s > bulk
    assert goal.straggler_share == pytest.approx(1 - bulk / goal.straggler_s)
    assert goal.time_s == pytest.approx(244.0, abs=0.5) and goal.meets  # at the calibrated defaults (docs/calibration.md)
    capped = plan(load_brief("rl-rollout").with_changes({"objective.output_tokens_max": 8192})).objective
    assert capped is not None and capped.time_s < goal.time_s and capped.straggler_share < goal.straggler_share
    assert d.conclusion is not None and "the stragglers set it" in d.conclusion


def test_lora_platform_adapter_cache_routing_and_flags() -> None:
    d = _plan("lora-platform")
    lora = d.lora_serving
    assert lora is not None
    assert lora.adapters_per_replica == math.ceil(2000 / 24)
    assert lora.gpu_hit_rate == pytest.approx(32 / 84) and lora.cpu_hit_rate == 1.0
    # rank 16 x (q 4096+4096, k 4096+1024, v 4096+1024, o 4096+4096) x 32 layers x 2 bytes
    assert lora.gb_per_adapter == pytest.approx(16 * (8192 + 5120 + 5120 + 8192) * 32 * 2 / 1e9)
    assert lora.ttft_load_ms == pytest.approx(lora.gb_per_adapter / 50 * 1e3)  # a miss reloads from host memory
    # the batched-LoRA kernels are in the step model: 2 x 4 projections x 32 layers x 3 us a step, plus the distinct
    # adapters' reads (at most the 32 slots) and their FLOPs; 5-15% of the decode step, and the SLO model carries them
    kernels_ms = 2 * 4 * 32 * 3e-3
    reads_ms = 32 * lora.gb_per_adapter / (3.35e3 * 0.7) * 1e3
    assert kernels_ms < lora.lora_step_ms < kernels_ms + reads_ms
    assert 0.05 < lora.overhead < 0.15 and lora.utilization_with_overhead == d.capacity.utilization
    plain = plan(load_brief("lora-platform").with_changes({"lora.adapters": 0}))
    assert d.capacity.utilization > plain.capacity.utilization and d.slo.itl_p95_ms > plain.slo.itl_p95_ms
    for flag in ("--enable-lora", "--max-loras 32", "--max-lora-rank 16", "--max-cpu-loras 128"):
        assert flag in d.config.command
    assert d.verdict.meets_slo
    assert d.conclusion is not None and "Multi-LoRA turns on" in d.conclusion


def test_multimodal_adds_image_tokens_and_the_encoder() -> None:
    d = _plan("multimodal")
    mm = d.multimodal
    assert mm is not None
    assert d.brief.workload.input_tokens_mean == 300 + 2 * 1024
    assert d.brief.workload.input_tokens_p95 == 1000 + 4 * 1024
    assert mm.encoder_tflop_per_image == pytest.approx(2 * 675e6 * 4096 / 1e12)
    assert mm.encoder_ms_per_image == pytest.approx(2 * 675e6 * 4096 / (989.4e12 * 8 * 0.6) * 1e3, rel=1e-3)
    assert mm.ttft_encoder_ms == pytest.approx(4 * mm.encoder_ms_per_image)
    assert """--limit-mm-per-prompt '{"image":4}'""" in d.config.command and "--mm-processor-cache-gb 8" in d.config.command
    assert d.verdict.meets_slo
    assert d.conclusion is not None and "the image tokens, not the encoder, drive prefill" in d.conclusion


def test_the_vision_encoder_enters_the_prefill_queue_in_the_plan_and_the_simulator() -> None:
    """Each prompt holds the prefill slot for its mean encoder time first: 2 images x (1 - 20% cached) x 1.16 ms. An
    8B-parameter encoder (13.8 ms an image) moves the plan's TTFT p50 by its queue and own time, and the simulator's
    (which runs the encoder in the step that admits a request) by the same within 15%."""
    brief = load_brief("multimodal")
    cached = brief.with_changes({"multimodal.encoder_cache_hit_rate": 1.0})  # the same tokens, no encoder work
    d = _plan("multimodal")
    assert d.multimodal is not None and d.multimodal.encoder_ms_per_request == pytest.approx(2 * 0.8 * d.multimodal.encoder_ms_per_image)
    shape, rate, batch = shape_of(resolve(brief)), d.operating_point.rate_per_replica_per_s, d.slo.point.running_batch
    with_encoder = pace(resolve(brief), shape, rate, batch).slot_service_ms
    without = pace(resolve(cached), shape, rate, batch).slot_service_ms
    assert with_encoder - without == pytest.approx(d.multimodal.encoder_ms_per_request, rel=1e-6)
    heavy = {"multimodal.encoder_params": 8e9}
    plan_gain = plan(brief.with_changes(heavy)).slo.ttft_p50_ms - plan(cached.with_changes(heavy)).slo.ttft_p50_ms
    sim = [simulate(b.with_changes(heavy), SimSettings(requests=1500)).slo for b in (brief, cached)]
    assert sim[0] is not None and sim[1] is not None
    assert sim[0].ttft_p50_ms - sim[1].ttft_p50_ms == pytest.approx(plan_gain, rel=0.15)
    assert plan_gain > 2 * 0.8 * 13.8  # more than the request's own mean encoder time: the queue carries the others'


def test_rag_is_prefill_dominated() -> None:
    """Prefill takes well over decode's share of the fleet: 11.1% against 6.5% (decode's step carries the calibrated
    per-sequence and all-reduce costs: 9.1 ms at the sizing batch). The p95 TTFT, 767.9 ms at the calibrated defaults
    (docs/calibration.md), counts each prompt's attention over its own cached prefix (it grows as the prompt's length
    squared)."""
    d = _plan("rag")
    assert d.capacity.prefill_fraction > 1.6 * d.capacity.decode_fraction
    assert d.slo.ttft_p95_ms == pytest.approx(767.9, abs=1) and d.verdict.meets_slo
    assert d.conclusion is not None and "prefill dominates" in d.conclusion
    assert all(x is None for x in (d.kv_tiers, d.multimodal, d.objective, d.lora_serving))


def test_chat_presets_have_no_mechanism_and_no_conclusion() -> None:
    for name in ("capstone", "qps10-tp4", "qps200-chat", "variation-a"):
        d = _plan(name)
        assert all(x is None for x in (d.kv_tiers, d.multimodal, d.objective, d.lora_serving, d.conclusion)), name
        assert d.slo.mechanisms == ()


def test_longer_think_time_keeps_more_sessions_alive_and_lowers_the_hit_rate() -> None:
    base = load_brief("agent-platform").with_changes({"kv_tiers.cpu_gb_per_node": 128})
    rates = [plan(base.with_changes({"kv_tiers.think_time_s": t})).kv_tiers for t in (30.0, 120.0, 600.0)]
    assert all(r is not None for r in rates)
    hits = [r.hit_rate for r in rates if r is not None]
    assert hits[0] >= hits[1] > hits[2]


def test_tiers_without_prefix_caching_are_a_verdict_not_a_silent_figure() -> None:
    d = plan(load_brief("agent-platform").with_changes({"deployment.prefix_caching": False}))
    assert any(p.field == "deployment.prefix_caching" for p in d.verdict.problems)


def test_an_offline_job_has_no_latency_verdict() -> None:
    d = plan(load_brief("offline-batch").with_changes({"slo.ttft_p95_ms": 1.0, "slo.itl_p95_ms": 1.0}))
    assert d.verdict.meets_slo  # the deadline judges it; a 1 ms TTFT target is not part of the verdict
    assert not any(p.field.startswith("slo.") for p in d.verdict.problems)


def test_a_shared_prefix_hits_on_every_request() -> None:
    base = load_brief("agent-platform").with_changes({"kv_tiers.cpu_gb_per_node": 64})
    plain = plan(base).kv_tiers
    shared = plan(base.with_changes({"kv_tiers.shared_prefix_tokens": 2000})).kv_tiers
    assert plain is not None and shared is not None
    # 2,000 of 8,000 tokens hit on every request; the history share shrinks by the same tokens
    expected = 0.25 + 19 / 20 * (1 - 0.25 - 800 / 8000) * shared.resident_all
    assert shared.hit_rate == pytest.approx(expected) and shared.hit_rate > plain.hit_rate


PROBLEM_LIBRARY = (
    "agent-platform",
    "chat-disaggregated",
    "chat-speculative",
    "lora-platform",
    "moe-deepseek",
    "multimodal",
    "offline-batch",
    "rag",
    "rl-rollout",
)


@pytest.mark.parametrize("name", PROBLEM_LIBRARY)
def test_every_problem_library_preset_has_one_conclusion(name: str) -> None:
    """The Capacity page, the document and the CLI show Design.conclusion: it holds the scale-out and the
    disaggregation/speculation texts when the design has them, and the document's page states it once."""
    from report import render_markdown

    d = _plan(name)
    assert d.conclusion is not None
    for part in (d.scale_out.conclusion if d.scale_out is not None else None, d.mechanism_conclusion):
        assert part is None or d.conclusion.count(part) == 1
    page = render_markdown(d).split("## Appendix")[0]
    assert page.count("**Conclusion:**") == 1, name


def test_a_combined_design_states_each_mechanism_once() -> None:
    """DeepSeek-R1's scale-out with speculation on: one conclusion with both texts, neither shown on its own."""
    d = plan(load_brief("moe-deepseek").with_changes({"speculative.enabled": True}))
    assert d.scale_out is not None and d.mechanism_conclusion is not None and d.conclusion is not None
    assert d.conclusion.startswith(d.scale_out.conclusion) and d.conclusion.endswith(d.mechanism_conclusion)


def test_an_objective_prices_the_replicas_gpus_not_tp() -> None:
    """DeepSeek-R1's replica is 16 GPUs at TP=1 (EP=16, DP attention): judged on throughput, the job's $ per M tokens
    prices 6 replicas x 16 = 96 GPUs, the Cost section's fleet (it priced 6)."""
    d = plan(load_brief("moe-deepseek").with_changes({"objective.kind": "throughput"}))
    assert d.objective is not None
    assert d.objective.arithmetic["cost"].startswith(f"{d.cost.gpus} GPUs") and d.cost.gpus == 96
    usd_per_s = 96 * d.brief.cost.usd_per_gpu_hour / 3600
    assert d.objective.usd_per_m_tokens == pytest.approx(usd_per_s / d.objective.tokens_per_s * 1e6, rel=1e-9)


def test_failure_rows_of_an_offline_job_are_judged_on_its_deadline() -> None:
    """Doubled traffic breaks the offline job's ITL (a figure it has no target for) but not its deadline: the row is
    ok, as `plan --set` with its overrides says."""
    d = _plan("offline-batch")
    doubled = next(m for m in d.failures if m.scenario is Scenario.traffic_doubles)
    assert doubled.ok and not doubled.itl_ok and doubled.note.startswith("deadline met")
    again = plan(load_brief("offline-batch").with_changes(doubled.overrides))
    assert again.objective is not None and again.objective.meets == doubled.ok == again.verdict.meets_slo
    late = plan(load_brief("offline-batch").with_changes({"objective.job_tokens": 1e10}))  # 10x the tokens: ~60 h of 24
    assert not any(m.ok for m in late.failures) and not late.verdict.meets_slo


def test_search_for_an_offline_job_takes_the_cheapest_fleet_that_meets_the_deadline() -> None:
    """10B tokens in 24 h: one node takes ~60 h, so the fewest nodes that finish in time is the cheapest design; its
    cost is the job's $/M output tokens at full batch, not the peak-rate serving cost."""
    brief = load_brief("offline-batch").with_changes({"objective.job_tokens": 1e10})
    one = plan(brief)
    assert one.objective is not None
    need = one.objective.nodes_for_deadline
    data = {
        "gpu": ["h100-sxm"],
        "tp": [8],
        "weights": ["fp8"],
        "kv_cache": ["fp8"],
        "max_num_seqs": [512],
        "max_num_batched_tokens": [16384],
        "nodes": {"min": 1, "max": need + 1},
    }
    with SerialRunner() as runner:
        result = search(brief, space_from_data(data, brief), runner, requests=100)
    assert result.best is not None and result.best.overrides["hardware.nodes"] == need
    assert result.best.meets_slo and result.best.simulated is None
    best = plan(brief.with_changes(result.best.overrides))
    assert best.objective is not None and result.best.usd_per_million_output_tokens == pytest.approx(best.objective.usd_per_m_output_tokens)
    assert result.rejected.get("misses its deadline") == need - 1


def test_agent_contexts_of_24k_mostly_cached_keep_the_ttft_p95_with_the_simulator() -> None:
    """At 24K-token contexts (p95 60K) with ~59% of each prompt cached, a prompt's attention over its own prefix grows as
    its length squared: the long prompts dominate the prefill slot's work. Taken at the mean length the plan's p95 TTFT
    was 28% under the simulator's (305 against 421 ms at 20 req/s); with each prompt's own prefix within 10%, and the
    mean gap (TPOT p50) within 3%."""
    brief = load_brief("agent-platform").with_changes(
        {"workload.input_tokens_mean": 24000, "workload.input_tokens_p95": 60000, "workload.request_rate": 20.0}
    )
    d = plan(brief)
    sim = simulate(resolve(brief), SimSettings(requests=4000)).slo  # the CLI resolves the hit rate the KV tiers give
    assert sim is not None
    assert d.slo.ttft_p95_ms == pytest.approx(sim.ttft_p95_ms, rel=0.10)
    assert d.slo.tpot_p50_ms == pytest.approx(sim.tpot_p50_ms, rel=0.03)


def test_an_offline_jobs_hit_rate_dependency_is_judged_on_its_deadline() -> None:
    """Review s6 finding 4: the hit-rate floor of a job judged on its deadline is found by the deadline's verdict, as
    `plan --set workload.prefix_hit_rate=...` gives it (it said 'misses its SLO at 55.3%' while the job met its
    deadline there): at 0% the job still finishes in time, so the dependency says nothing judged breaks."""
    d = _plan("offline-batch")
    assert hit_rate_floor(d, d.brief) is None
    cold = plan(load_brief("offline-batch").with_changes({"workload.prefix_hit_rate": 0.0}))
    assert cold.objective is not None and cold.objective.meets and cold.verdict.meets_slo
    prefix = next(x for x in d.config.dependencies if "hit rate" in x.what)
    assert prefix.breaks_if.startswith("nothing the deadline judges: the design meets its deadline even at a 0% hit rate")


@pytest.mark.parametrize(("preset", "work"), [("offline-batch", "objective.job_tokens"), ("rl-rollout", "objective.batch_prompts")])
def test_traffic_doubling_doubles_an_objectives_work(preset: str, work: str) -> None:
    """Review s6 finding 5: for a job judged on its deadline the 'traffic doubles' row doubles the work its time is
    judged on (it kept the base's 6.24 h / 244 s), and `plan --set` with the row's overrides gives the row's time."""
    d = _plan(preset)
    row = next(m for m in d.failures if m.scenario is Scenario.traffic_doubles)
    assert row.overrides[work] == 2 * getattr(d.brief.objective, work.split(".")[1])
    again = plan(load_brief(preset).with_changes(row.overrides))
    assert again.objective is not None and d.objective is not None and again.objective.time_s > d.objective.time_s * 1.2
    assert row.ok == (again.verdict.feasible and again.verdict.meets_slo)


def test_a_rollouts_headroom_is_the_work_that_still_finishes() -> None:
    """The makespan is the straggler's decode until the bulk's work overtakes it, so the headroom is found by working
    the objective out with more prompts, not by deadline / time (600 / 244 = x2.45 before): 30,686 prompts finish in
    600 s, 30,687 do not (x7.49)."""
    d = _plan("rl-rollout")
    low, high = 30_686, 30_687
    assert d.headroom.multiple == pytest.approx(high / 4096, abs=0.01) and f"{low:,} prompts still finishes in time" in d.headroom.text
    for prompts, meets in ((low, True), (high, False)):
        again = plan(load_brief("rl-rollout").with_changes({"objective.batch_prompts": prompts}))
        assert again.verdict.meets_slo is meets


def test_a_job_at_a_high_availability_target_needs_n_plus_one_on_its_deadline() -> None:
    """Review s7 finding 1: at 99.9% a job's availability needs its deadline held with one node lost, as its failure row
    judges it (offline-batch on 2 nodes with 4B tokens: one node lost takes 33.1 h of 24 h), and its headroom counts
    that (rl-rollout: 15,343 prompts finish on one node, x3.74, before the two nodes' 30,686, x7.49)."""
    job = plan(load_brief("offline-batch").with_changes({"slo.availability": 0.999, "hardware.nodes": 2, "objective.job_tokens": 4e9}))
    row = next(m for m in job.failures if m.scenario is Scenario.one_node_lost)
    assert job.verdict.meets_slo and not row.ok and not job.verdict.availability_ok
    assert any(p.problem.startswith("no N+1: with one node lost, the job takes 33.1 h") for p in job.verdict.problems)
    rollout = plan(load_brief("rl-rollout").with_changes({"slo.availability": 0.999}))
    assert rollout.headroom.binding == "N+1 is lost" and rollout.headroom.multiple == pytest.approx(15_344 / 4096, abs=0.01)
    one_node = load_brief("rl-rollout").with_changes({"hardware.nodes": 1})
    assert plan(one_node.with_changes({"objective.batch_prompts": 15_343})).verdict.meets_slo
    assert not plan(one_node.with_changes({"objective.batch_prompts": 15_344})).verdict.meets_slo


def test_a_rollouts_lost_node_doubles_its_stragglers_batch() -> None:
    """Review s7 finding 5: with one of two nodes lost the straggler's batch doubles (12.8 -> 25.6), so its step and the
    makespan grow (244 -> 299 s), as the failure row and `plan --set hardware.nodes=1` say; the objective said 244."""
    d = _plan("rl-rollout")
    row = next(m for m in d.failures if m.scenario is Scenario.one_node_lost)
    alone = plan(load_brief("rl-rollout").with_changes({"hardware.nodes": 1})).objective
    assert d.objective is not None and alone is not None
    assert (
        d.objective.time_one_node_lost_s == pytest.approx(alone.time_s, rel=1e-9)
        and "244 s -> 299 s" in d.objective.arithmetic["one_node_lost"]
    )
    assert "299 s of 600 s" in row.note


def test_a_jobs_tp_reason_weighs_the_fleets_pace() -> None:
    """Review s7 finding 4: for a job judged on its deadline the TP reason sets the fleet's tokens/s at half the TP
    beside this one's (offline-batch: TP=4 runs two replicas a node, 52,445 against 33,533 tokens/s), not 'slower'."""
    d = _plan("offline-batch")
    why = next(f.why for f in d.config.flags if f.flag == "--tensor-parallel-size")
    half = plan(load_brief("offline-batch").with_changes({"deployment.tp": 4})).objective
    assert half is not None and d.objective is not None and half.tokens_per_s > d.objective.tokens_per_s
    assert "(slower tokens)" not in why and "faster: worth a measured trial (plan --set deployment.tp=4)" in why


def test_a_jobs_cost_states_the_full_pace_basis_on_the_page_and_in_the_trough_lever() -> None:
    """Review s7 finding 7: the trough lever of a job said 0.0% of the day is idle ($2.88, no change) though the job takes
    8.28 h of 24 h; it now fills the idle 65.5% at the job's pace ($0.99, the price while the work runs), and the Cost
    page states that basis beside the year-round one."""
    from tests.apphelp import new_app, visit

    d = _plan("offline-batch")
    trough = d.cost.levers[0]
    assert d.objective is not None and trough.usd_per_million_output_tokens == pytest.approx(d.objective.usd_per_m_output_tokens)
    assert "65.5% of the deadline's time is idle after the work" in trough.arithmetic
    at = visit(new_app({"preset": "offline-batch"}), "pages/cost.py")
    assert not at.exception
    text = " ".join(m.value for m in at.markdown)
    assert "the same fleet costs $0.99 per M output tokens" in text and "8.28 h of its 24 h deadline" in text


def test_a_jobs_verdict_bar_states_its_time_in_its_deadlines_unit() -> None:
    """Review s7: the verdict bar read '29,821 s' of 'deadline 86,400 s' for a job stated in hours; a rollout stays in
    seconds (its deadline's unit)."""
    from ui.mechanisms import objective_tiles

    job = objective_tiles(_plan("offline-batch"))[0]
    assert job[1] == "8.28 h" and job[2] == "deadline 24 h: met"
    rollout = objective_tiles(_plan("rl-rollout"))[0]
    assert rollout[1].endswith(" s") and rollout[2].startswith("deadline 600 s")
