"""Engine configuration and architecture (step 4): the capstone's flags derived from its constraints,
its pools and routing, and a DOT diagram that Graphviz accepts and whose labels follow the brief."""

from __future__ import annotations

import math
import re
import shutil
import subprocess
from html import unescape

import pytest

from planner import load_brief, plan
from planner.architecture import LOAD_COLORS, Pool, diagram_dot
from planner.brief import KvPrecision, Precision
from planner.catalog import MODELS
from planner.pools import Load, general_prompt_cap_tokens, load_of

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
    assert flags["--max-num-seqs"].value == "160"  # the seed's; the analysis runs the printed configuration
    assert flags["--max-num-batched-tokens"].value == "2048"
    # the engine takes (80 - 5 GB reserve) / 80 of each GPU: the KV pool analysed is the one this flag gives
    # (the seed prints 0.90 but sizes its 66 GB of KV with only the 5 GB reserve held back)
    assert flags["--gpu-memory-utilization"].value == "0.9375"
    assert "--enable-prefix-caching" in flags and "--enable-chunked-prefill" in flags
    assert "7,200" in flags["--max-model-len"].why
    assert "26.2 sequences run at the operating point" in flags["--max-num-seqs"].why
    assert "5 GB reserve" in flags["--gpu-memory-utilization"].why
    assert not capstone.config.recommendations  # the worked configuration needs no change


def test_the_command_prints_the_configuration_analysed(capstone):
    """config.engine is what the analysis uses and the simulator runs; the command prints exactly it."""
    engine, brief = capstone.config.engine, capstone.brief
    assert engine.max_num_seqs == brief.deployment.max_num_seqs
    assert engine.max_num_batched_tokens == brief.deployment.max_num_batched_tokens
    assert engine.max_model_len == brief.deployment.max_model_len
    assert engine.gpu_memory_utilization * 80 == pytest.approx(capstone.shape.usable_gb_per_gpu - capstone.shape.reserve_gb_per_gpu)
    for flag, value in (
        ("--max-num-seqs", engine.max_num_seqs),
        ("--max-num-batched-tokens", engine.max_num_batched_tokens),
        ("--max-model-len", engine.max_model_len),
        ("--gpu-memory-utilization", "0.9375"),
    ):
        assert f"{flag} {value}" in capstone.config.command
    off = plan(load_brief("capstone").with_changes({"deployment.prefix_caching": False, "deployment.chunked_prefill": False}))
    assert "--no-enable-prefix-caching" in off.config.command and "--no-enable-chunked-prefill" in off.config.command
    assert off.config.engine.enable_prefix_caching is False


def test_gpu_memory_utilization_is_at_most_0_95_with_the_reason():
    for name in ("qps10-tp4", "qps200-chat"):  # both size their KV with 0.9 x 80 GB
        flag = _flags(plan(load_brief(name)))["--gpu-memory-utilization"]
        assert flag.value == "0.90" and "capped" not in flag.why
    whole = plan(load_brief("qps10-tp4").with_changes({"deployment.gpu_memory_utilization": 1.0}))
    flag = _flags(whole)["--gpu-memory-utilization"]
    assert flag.value == "0.95" and "capped at 0.95" in flag.why
    assert whole.shape.usable_gb_per_gpu == pytest.approx(80 * 0.95)  # the KV pool analysed is the capped one


def test_a_custom_model_name_is_shell_quoted_in_the_command():
    from tests.crafted import CUSTOM_70B_LINK

    custom = {"model.name": "custom", "model.display_name": "my model; rm -rf ~"} | {k: int(v) for k, v in CUSTOM_70B_LINK.items()}
    command = plan(load_brief("capstone").with_changes(custom)).config.command
    assert command.startswith("vllm serve 'my model; rm -rf ~'")


def test_flags_follow_the_brief():
    base = load_brief("capstone")
    longer = plan(
        base.with_changes({"workload.input_tokens_p95": 10_000, "model.name": "llama-3.1-70b", "workload.long_context_share": 0.0})
    )
    assert _flags(longer)["--max-model-len"].value == "8192"  # the brief's limit is what runs ...
    (rec,) = longer.config.recommendations  # ... and the analysis recommends a longer one, with the override
    assert int(rec.value) >= 11_200 and int(rec.value) % 1024 == 0
    assert rec.flag == "--max-model-len" and rec.overrides == {"deployment.max_model_len": int(rec.value)}
    busier = plan(base.with_changes({"workload.users": 20_000}))
    assert _flags(busier)["--max-num-seqs"].value == "160"
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


def _label(dot: str, node: str) -> str:
    """The text of one node's HTML-like label, its lines joined by ' | '."""
    label = re.search(rf"  {node} \[label=<(.*?)>, ", dot)
    assert label, node
    return " | ".join(unescape(re.sub(r"</?B>", "", line)) for line in label.group(1).split("<BR/>"))


def _fill(dot: str, node: str) -> str:
    found = re.search(rf'  {node} \[label=<.*?>, fillcolor="(#[0-9a-f]+)"', dot)
    assert found, node
    return found.group(1)


def test_dot_carries_live_figures(capstone):
    """One box per pool: nodes, replicas, TP, precision, the requests it serves, its load at peak."""
    dot = capstone.architecture.dot
    assert dot.startswith("digraph") and "clients" in dot and "API gateway" in dot and "router" in dot
    general = next(p for p in capstone.architecture.pools if p.name == "general")
    assert _label(dot, "pool0") == (
        "general pool: 6 nodes, 6 replicas | TP=8, FP8 weights, FP8 KV | prompts up to 6,000 tokens"
        f" | {general.utilization * 100:.1f}% of SLO capacity at peak"
    )
    assert (
        _label(dot, "pool1")
        == "long-context pool: 1 node, 1 replica | TP=8, FP8 weights, FP8 KV | prompts over 6,000 tokens | 39.9% of GPU time at peak"
    )
    assert _label(dot, "pool2") == "spare/canary pool: 1 node, 1 replica | TP=8, FP8 weights, FP8 KV | idle until a node fails"
    smaller = plan(load_brief("capstone").with_changes({"hardware.nodes": 5, "deployment.kv_cache": "bf16"})).architecture.dot
    assert _label(smaller, "pool0").startswith("general pool: 3 nodes, 3 replicas | TP=8, FP8 weights, BF16 KV")


def test_pools_are_coloured_by_load(capstone):
    """Green under the 85% sizing target, amber up to 100%, red above (said in words too), grey dashed for the spare."""
    assert [p.load for p in capstone.architecture.pools] == [Load.ok, Load.ok, Load.idle]
    busier = plan(load_brief("capstone").with_changes({"workload.long_context_share": 0.14}))  # long-context pool ~92% busy
    assert [p.load for p in busier.architecture.pools] == [Load.ok, Load.near, Load.idle]
    dot = busier.architecture.dot
    assert [_fill(dot, f"pool{i}") for i in range(3)] == [LOAD_COLORS[Load.ok][0], LOAD_COLORS[Load.near][0], LOAD_COLORS[Load.idle][0]]
    assert _label(dot, "pool1").endswith("of GPU time at peak | near the limit")
    over = plan(load_brief("capstone").with_changes({"workload.users": 40_000}))
    general = over.architecture.pools[0]
    assert general.utilization > 1 and general.load is Load.over
    assert _fill(over.architecture.dot, "pool0") == LOAD_COLORS[Load.over][0]
    assert _label(over.architecture.dot, "pool0").endswith("| OVER capacity")
    assert load_of(0.8499) is Load.ok and load_of(0.85) is Load.near and load_of(1.0) is Load.near
    assert load_of(1.0001) is Load.over and load_of(math.inf) is Load.over and load_of(math.nan) is Load.over
    assert load_of(5.0, serving=False) is Load.idle


def test_large_fleets_draw_one_box_per_pool():
    dot = plan(load_brief("capstone").with_changes({"hardware.nodes": 40, "workload.users": 50_000})).architecture.dot
    assert _label(dot, "pool0").startswith("general pool: 38 nodes, 38 replicas | TP=8")
    assert dot.count("label=<") == 2 + 3  # gateway, router and one box per pool


def test_replicas_per_node_show_when_tp_is_smaller_than_the_node():
    dot = plan(load_brief("capstone").with_changes({"deployment.tp": 4})).architecture.dot
    assert _label(dot, "pool0").startswith("general pool: 6 nodes, 12 replicas | TP=4 (2 a node), FP8 weights")


def _pool(name: str, upstream: str | None = None, utilization: float = 0.5) -> Pool:
    return Pool(
        name=name,
        nodes=2,
        replicas=4,
        replicas_per_node=2,
        tp=4,
        weights=Precision.fp8,
        kv_cache=KvPrecision.fp8,
        role=f"{name} work",
        route=f"{name} requests",
        upstream=upstream,
        utilization=utilization,
        utilization_basis="GPU time",
        load=load_of(utilization),
    )


@pytest.mark.parametrize("narrow", [False, True])
def test_the_pool_list_drives_the_drawing(narrow):
    """Disaggregated pools draw from the same list: the router feeds prefill, prefill hands its KV to decode."""
    pools = (_pool("prefill", utilization=1.2), _pool("decode", upstream="prefill", utilization=0.9))
    dot = diagram_dot(pools, 6, 3, narrow=narrow)
    assert "  router -> pool0" in dot and '  pool0 -> pool1 [label="KV cache"' in dot and "router -> pool1" not in dot
    assert _label(dot, "pool0").startswith("prefill pool: 2 nodes, 4 replicas | TP=4 (2 a node), FP8 weights, FP8 KV")
    assert (_fill(dot, "pool0"), _fill(dot, "pool1")) == (LOAD_COLORS[Load.over][0], LOAD_COLORS[Load.near][0])
    if shutil.which("dot"):
        assert subprocess.run(["dot", "-Tsvg"], input=dot, capture_output=True, text=True, timeout=30).returncode == 0


def test_two_layouts_of_one_picture(capstone):
    """The narrow layout stacks everything top to bottom; both draw the same boxes."""
    arch = capstone.architecture
    assert "rankdir=LR" in arch.dot and "rankdir=TB" in arch.dot_narrow
    for i in range(len(arch.pools)):
        assert _label(arch.dot, f"pool{i}") == _label(arch.dot_narrow, f"pool{i}")


@pytest.mark.skipif(shutil.which("dot") is None, reason="Graphviz dot is not installed")
@pytest.mark.parametrize("preset", ["capstone", "qps10-tp4", "variation-a"])
def test_graphviz_renders_the_diagram(preset):
    arch = plan(load_brief(preset)).architecture
    for dot in (arch.dot, arch.dot_narrow):
        proc = subprocess.run(["dot", "-Tsvg"], input=dot, capture_output=True, text=True, timeout=30)
        assert proc.returncode == 0, proc.stderr
        assert "<svg" in proc.stdout


def test_max_model_len_is_capped_by_the_model():
    d = plan(load_brief("capstone").with_changes({"workload.input_tokens_p95": 10_000, "workload.long_context_threshold_tokens": 10_000}))
    flag = _flags(d)["--max-model-len"]
    assert flag.value == "8192" and "model stops at 8,192" in flag.why
    assert not d.config.recommendations  # no longer limit to recommend: the model has none


def test_the_general_pool_takes_every_prompt_the_router_sends_it(capstone):
    """Review s4 finding 2: the router's long-context threshold + a p95 reply fits the general pool's max-model-len
    (the seed's 8,192), so the command, the routing text and the reason agree."""
    w, engine = capstone.brief.workload, capstone.config.engine
    cap = general_prompt_cap_tokens(capstone.brief, capstone.brief.deployment.long_context_nodes)
    assert cap == w.long_context_threshold_tokens == 6000
    assert cap + w.output_tokens_p95 <= engine.max_model_len == 8192
    assert f"--max-model-len {engine.max_model_len}" in capstone.config.command
    assert "prompts over 6,000 tokens to the long-context pool" in [r.decision for r in capstone.architecture.routing]
    assert "prompts up to 6,000 (longer go to the long-context pool)" in capstone.config.arithmetic["max_model_len"]


def test_a_general_pool_sent_prompts_beyond_its_max_model_len_is_not_feasible():
    """A router threshold above max-model-len, or no long-context pool for the brief's long prompts: the engine
    refuses them, so the design is not feasible and a search does not offer it."""
    from planner.search import evaluate

    base = load_brief("capstone")
    for changes in ({"workload.long_context_threshold_tokens": 16_000}, {"hardware.gpu": "b200", "hardware.nodes": 1}):
        design = plan(base.with_changes(changes))
        assert not design.verdict.feasible
        (refused,) = [p for p in design.verdict.problems if p.field == "deployment.max_model_len"]
        assert "the engine refuses the longer prompts" in refused.problem
    row, why = evaluate(base, {"hardware.gpu": "b200", "hardware.nodes": 1}, 0)
    assert row is None and why == "not feasible: the general pool refuses prompts the router sends it (max-model-len)"
    longer = plan(base.with_changes({"model.name": "llama-3.1-70b", "deployment.long_context_nodes": 0}))
    (rec,) = [r for r in longer.config.recommendations if r.flag == "--max-model-len"]
    assert rec.value == "11264"  # 9,000-token long prompts + a 1,200 reply + 10%, rounded to 1,024


def _printed_by(engine, flag: str) -> str | None:
    """The value config.engine gives a flag of the command (None: the flag has no field there)."""
    fields = {
        "--quantization": engine.quantization,
        "--dtype": "bfloat16" if engine.quantization is None else None,
        "--kv-cache-dtype": engine.kv_cache_dtype,
        "--tensor-parallel-size": str(engine.tensor_parallel_size),
        "--pipeline-parallel-size": str(engine.pipeline_parallel_size),
        "--data-parallel-size": str(engine.data_parallel_size),
        "--enable-expert-parallel": "" if engine.enable_expert_parallel else None,
        "--max-model-len": str(engine.max_model_len),
        "--max-num-seqs": str(engine.max_num_seqs),
        "--max-num-batched-tokens": str(engine.max_num_batched_tokens),
        "--enable-prefix-caching": "" if engine.enable_prefix_caching else None,
        "--no-enable-prefix-caching": None if engine.enable_prefix_caching else "",
        "--enable-chunked-prefill": "" if engine.enable_chunked_prefill else None,
        "--no-enable-chunked-prefill": None if engine.enable_chunked_prefill else "",
        "--scheduling-policy": engine.scheduling_policy,
        "--port": str(engine.port),
    }
    return fields[flag] if flag in fields else engine.extra_args.get(flag)


@pytest.mark.parametrize("preset", ["capstone", "agent-platform", "moe-deepseek", "chat-speculative", "chat-disaggregated"])
def test_every_flag_of_the_command_is_in_config_engine(preset):
    """Review s4 finding 15: the command printed --scheduling-policy and --kv-offloading-* that config.engine did not
    hold; now every flag it prints is a field of config.engine or one of its extra_args, with the same value."""
    config = plan(load_brief(preset)).config
    assert config.flags and all(
        f"{f.flag} " in config.command or config.command.endswith(f.flag) or f"{f.flag} \\" in config.command for f in config.flags
    )
    for f in config.flags:
        if f.flag == "--gpu-memory-utilization":
            assert float(f.value) == config.engine.gpu_memory_utilization
            assert len(repr(config.engine.gpu_memory_utilization)) <= 6  # 0.879, not 0.8790000000000001
            continue
        if f.flag == "--dtype":
            assert config.engine.quantization is None
            continue
        assert _printed_by(config.engine, f.flag) == f.value, f.flag
    if preset == "agent-platform":
        assert config.engine.extra_args["--kv-offloading-backend"] == "native" and config.engine.scheduling_policy == "priority"


@pytest.mark.parametrize("key", sorted(MODELS))
def test_every_catalog_models_command_loads_its_hugging_face_repo(key):
    """vLLM loads a Hugging Face repo id (org/name), not a display name: every catalog model carries its own, and the
    command names it (8 of 18 had none, so their command named the display name, e.g. 'vllm serve Falcon-180B')."""
    spec = MODELS[key]
    assert re.fullmatch(r"[\w.-]+/[\w.-]+", spec.hf_repo), (key, spec.hf_repo)
    preset = "moe-deepseek" if key.startswith("deepseek") else "qps10-tp4" if key == "qwen3-30b-a3b" else "capstone"  # one each forms
    design = plan(load_brief(preset).with_changes({"model.name": key}))
    assert design.config.command.startswith(f"vllm serve {spec.hf_repo} ")


def test_the_multimodal_command_loads_qwen25_vl_by_its_repo_and_a_custom_model_without_one_says_so():
    """multimodal is a custom model shown as 'Qwen2.5-VL-72B': its command loads Qwen/Qwen2.5-VL-72B-Instruct (it read
    'vllm serve Qwen2.5-VL-72B', which vLLM cannot load). A custom model given no repo id names its display name, and
    the dependencies say the command needs model.hf_repo."""
    design = plan(load_brief("multimodal"))
    assert design.config.command.startswith("vllm serve Qwen/Qwen2.5-VL-72B-Instruct ")
    assert design.config.engine.model == "Qwen/Qwen2.5-VL-72B-Instruct"
    assert not any("model.hf_repo" in d.breaks_if for d in design.config.dependencies)
    unnamed = plan(load_brief("multimodal").with_changes({"model.hf_repo": None}))
    assert unnamed.config.command.startswith("vllm serve Qwen2.5-VL-72B ")
    assert "set model.hf_repo" in unnamed.config.dependencies[0].breaks_if


def _quality_dependency(design):
    return next(d for d in design.config.dependencies if "acceptable quality" in d.what)


def test_the_quantization_fallback_is_a_method_other_than_the_one_that_runs():
    g = _quality_dependency(plan(load_brief("variation-g")))  # INT8 W8A8 weights, BF16 KV on the A100
    assert g.what.startswith("INT8 weights keep") and "KV" not in g.what
    assert "forces the weights back to BF16" in g.breaks_if
    fallback = g.breaks_if.split("fallback")[1]
    assert "INT8" not in fallback and "FP8" in fallback


def test_bf16_weights_name_only_the_kv_cache_as_what_would_revert():
    brief = load_brief("capstone").with_changes({"deployment.weights": "bf16"})
    dep = _quality_dependency(plan(brief))
    assert dep.what.startswith("FP8 KV keeps") and "BF16" not in dep.what
    assert "forces the KV cache back to BF16" in dep.breaks_if and "fallback" not in dep.breaks_if
