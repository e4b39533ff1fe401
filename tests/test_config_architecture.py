"""Engine configuration and architecture (step 4): the capstone's flags derived from its constraints,
its pools and routing, and a DOT diagram that Graphviz accepts and whose labels follow the brief."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from planner import load_brief, plan

pytestmark = pytest.mark.unit


@pytest.fixture(scope="module")
def capstone():
    return plan(load_brief("capstone"))


def _flags(design):
    return {f.flag: f for f in design.config.flags}


def test_capstone_flags_match_the_worked_configuration(capstone):
    flags = _flags(capstone)
    # capstone-64xH100-design.txt, step 3: exact values
    assert flags["--quantization"].value == "fp8"
    assert flags["--kv-cache-dtype"].value == "fp8"
    assert flags["--tensor-parallel-size"].value == "8"
    assert flags["--max-model-len"].value == "8192"  # 6,000 + 1,200 = 7,200 with headroom
    # the worked design: 800 / 6 general nodes = 133, +20% = 160; the long-context pool takes 5% of the requests,
    # so the general pool runs 800 x 95% / 6 = 127, +20% = 152 (a multiple of 8, vLLM's CUDA-graph batch sizes)
    assert flags["--max-num-seqs"].value == "152"
    assert flags["--max-num-batched-tokens"].value == "2048"
    assert flags["--gpu-memory-utilization"].value == "0.90"  # (80 - 5) / 80 = 0.94, rounded down
    assert "--enable-prefix-caching" in flags and "--enable-chunked-prefill" in flags
    assert "7,200" in flags["--max-model-len"].why
    assert "127 in flight" in flags["--max-num-seqs"].why
    assert "5 GB reserve" in flags["--gpu-memory-utilization"].why


def test_every_flag_has_a_reason_and_appears_in_the_command(capstone):
    cfg = capstone.config
    assert cfg.command.startswith("vllm serve meta-llama/Meta-Llama-3-70B-Instruct")
    for f in cfg.flags:
        assert len(f.why) > 20, f.flag
        assert f"{f.flag} {f.value}".strip() in cfg.command


def test_flags_follow_the_brief():
    base = load_brief("capstone")
    longer = plan(base.with_changes({"workload.input_tokens_p95": 10_000, "model.name": "llama-3.1-70b"}))
    model_len = int(_flags(longer)["--max-model-len"].value)
    assert model_len >= 11_200 and model_len % 1024 == 0
    busier = plan(base.with_changes({"workload.users": 20_000}))
    assert int(_flags(busier)["--max-num-seqs"].value) == 304  # 1,600 x 95% / 6 = 253, +20%
    reserve = plan(base.with_changes({"deployment.reserve_gb_per_gpu": 12.0}))
    assert _flags(reserve)["--gpu-memory-utilization"].value == "0.85"  # (80 - 12) / 80 = 0.85
    bf16 = plan(base.with_changes({"deployment.weights": "bf16", "deployment.kv_cache": "bf16"}))
    assert "--quantization" not in _flags(bf16) and _flags(bf16)["--kv-cache-dtype"].value == "auto"


def test_a100_uses_int8_and_bf16_kv():
    flags = _flags(plan(load_brief("variation-g")))
    assert flags["--quantization"].value == "compressed-tensors"
    assert flags["--kv-cache-dtype"].value == "auto"


def test_dependencies_and_measurements(capstone):
    deps = capstone.config.dependencies
    assert any("FP8" in d.what for d in deps)
    assert any("hit rate" in d.what for d in deps)
    assert any("long-context" in d.what for d in deps)
    assert all(d.breaks_if for d in deps)
    assert any("hit rate" in m for m in capstone.config.measure_first)
    assert any("ITL" in m for m in capstone.config.measure_first)


def test_capstone_pools(capstone):
    pools = {p.name: p for p in capstone.architecture.pools}
    assert (pools["general"].nodes, pools["long-context"].nodes, pools["spare/canary"].nodes) == (6, 1, 1)
    assert pools["general"].replicas == 6
    assert 0 < pools["general"].utilization < 1
    assert pools["spare/canary"].utilization == 0
    assert sum(p.nodes for p in pools.values()) == 8
    decisions = " ".join(d.decision for d in capstone.architecture.decisions)
    assert "TP=8, DP=8" in decisions
    routing = " ".join(d.decision for d in capstone.architecture.routing)
    assert "prefix-aware" in routing and "session affinity" in routing


def test_dot_carries_live_figures(capstone):
    dot = capstone.architecture.dot
    assert dot.startswith("digraph") and "clients" in dot and "gateway" in dot and "router" in dot
    assert dot.count("TP=8") == 8  # one box per node
    assert "6 replicas" in dot
    general = next(p for p in capstone.architecture.pools if p.name == "general")
    assert f"{general.utilization * 100:.1f}% busy" in dot
    smaller = plan(load_brief("capstone").with_changes({"hardware.nodes": 5})).architecture.dot
    assert "3 replicas" in smaller and smaller.count("TP=8") == 5


def test_large_fleets_draw_one_box_per_pool():
    dot = plan(load_brief("capstone").with_changes({"hardware.nodes": 40, "workload.users": 50_000})).architecture.dot
    assert "38 nodes x 1 x TP=8" in dot


@pytest.mark.skipif(shutil.which("dot") is None, reason="Graphviz dot is not installed")
@pytest.mark.parametrize("preset", ["capstone", "qps10-tp4", "variation-a"])
def test_graphviz_renders_the_diagram(preset):
    dot = plan(load_brief(preset)).architecture.dot
    proc = subprocess.run(["dot", "-Tsvg"], input=dot, capture_output=True, text=True, timeout=30)
    assert proc.returncode == 0, proc.stderr
    assert "<svg" in proc.stdout


def test_max_model_len_is_capped_by_the_model():
    d = plan(load_brief("capstone").with_changes({"workload.input_tokens_p95": 10_000}))
    flag = _flags(d)["--max-model-len"]
    assert flag.value == "8192" and "model stops at 8,192" in flag.why
