"""The calibration's data (planner.calibration): every published row becomes a Measurement and a setup the simulator
runs, in the row's own units; the user's benchmark files read the same way.

Spot checks pin what a row's notes say (units per GPU, per TP group or per system; MLPerf's dataset lengths; the
engine limits a row states) against the setup built from it.
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import pytest

from planner.brief import Precision
from planner.calibration import (
    BUNDLED_CSVS,
    DATASETS,
    Basis,
    EngineFamily,
    LoadKind,
    Measurement,
    MetricKind,
    measurement_from_row,
    metric_of,
    predict,
    read_csv,
    read_sglang_results,
    read_user_file,
    read_vllm_result,
    setup,
)
from planner.catalog import GPUS, MODELS
from planner.errors import BriefError
from planner.replica import shape_of
from planner.simulator import simulate

pytestmark = pytest.mark.unit

DATA = Path(__file__).resolve().parent / "data"
SHARED = Path("/work/shared/calibration")

# Rows that cannot be simulated faithfully, with the reason the lead sees. None today: every row runs, its
# assumptions stated in its note (DEP as attention-DP ranks, pipeline stages folded into TP, ...).
EXCLUDED: dict[str, str] = {}


@pytest.fixture(scope="module")
def rows() -> dict[str, Measurement]:
    return {m.id: m for path in BUNDLED_CSVS for m in read_csv(path)}


def test_every_row_of_both_files_parses(rows):
    firsts = read_csv(BUNDLED_CSVS[0])
    seconds = read_csv(BUNDLED_CSVS[1])
    assert (len(firsts), len(seconds)) == (29, 78)
    assert len(rows) == 107  # ids are unique across the two files
    assert {m.id: m.excluded_reason for m in rows.values() if m.excluded_reason} == EXCLUDED


@pytest.mark.skipif(not SHARED.is_dir(), reason="the shared calibration folder is not on this machine")
def test_the_repository_copies_are_the_shared_files():
    for path in BUNDLED_CSVS:
        assert path.read_bytes() == (SHARED / path.name).read_bytes(), path.name


def test_every_setup_simulates_to_a_finite_positive_figure(rows):
    for m in rows.values():
        value = predict(setup(m))
        assert math.isfinite(value) and value > 0, (m.id, value)


def test_units_per_gpu_per_tp_group_and_per_system(rows):
    assert (rows["1"].metric, rows["1"].basis) == (MetricKind.output_tok_s_per_gpu, Basis.per_gpu)  # v0.6.1: OSL*BS/latency/TP
    assert (rows["18"].metric, rows["18"].basis) == (MetricKind.output_tok_s_total, Basis.replica)  # v0.14: the TP group's total
    assert (rows["108"].basis, rows["126"].basis) == (Basis.replica, Basis.replica)  # v0.19-v0.21: still the TP group's total
    assert (rows["149"].basis, rows["16"].basis) == (Basis.system, Basis.replica)  # MLPerf: the system; LMDeploy: 4 GPUs total
    assert rows["33"].basis is Basis.replica and rows["189"].metric is MetricKind.request_per_s
    # the same simulated replica read three ways: per GPU divides by the TP group, a system multiplies by its replicas
    static, system = setup(rows["1"]), setup(rows["149"])
    assert (static.units, static.gpus_per_unit, system.units, system.gpus_per_unit) == (1, 2, 8, 1)
    result = simulate(system.brief, system.settings)
    assert metric_of(system, result) == pytest.approx(8 * result.output_tokens_per_s)
    result = simulate(static.brief, static.settings)
    assert metric_of(static, result) == pytest.approx(result.output_tokens_per_s / 2)


def test_mlperf_rows_run_their_datasets(rows):
    llama2, r405, r8b, deepseek = rows["149"], rows["175"], rows["154"], rows["156"]
    assert llama2.lengths.dataset == "mlperf-llama2-70b" and llama2.lengths.input_mean_tokens == 222.3
    assert llama2.lengths.output_mean_tokens == pytest.approx(101527 / 371.423)  # what the run generated: tok/s / samples/s
    assert llama2.lengths.output_p95_tokens == pytest.approx(563 / 218.9 * 101527 / 371.423)  # the dataset's spread kept
    assert (r405.lengths.input_mean_tokens, r405.lengths.input_p95_tokens) == (9428.6, 15_831)
    assert (
        r8b.lengths.output_mean_tokens == pytest.approx(129.0, abs=0.05) and r8b.lengths.output_p95_tokens == r8b.lengths.output_mean_tokens
    )
    assert deepseek.lengths.max_tokens == 3140 + 20_000  # the rows' max_seq 3140 + 20000
    # Offline: every sample at once, as many as LoadGen issues (samples/s x 600 s x 1.1); Server: Poisson for 600 s
    assert (llama2.load.kind, llama2.load.requests) == (LoadKind.max_load, round(371.423 * 660))
    server = rows["150"]
    assert (server.load.kind, server.load.rate_per_s, server.load.requests) == (LoadKind.poisson, 364.0, 364 * 600)
    s = setup(server)
    assert s.settings.rate_per_s == pytest.approx(364 / 8) and s.settings.input_tokens is None  # lengths drawn, not fixed
    assert s.brief.workload.input_tokens_p95 == 614


def test_the_engine_limits_a_row_states_reach_the_brief(rows):
    offline = setup(rows["149"]).brief.deployment  # gpu_batch_size 2048, max_num_tokens 3584
    assert (offline.max_num_seqs, offline.max_num_batched_tokens) == (2048, 3584)
    amd = setup(rows["160"]).brief.deployment  # max_num_seqs 1792, max_num_batched_tokens 40960, chunked prefill off
    assert (amd.max_num_seqs, amd.max_num_batched_tokens, amd.chunked_prefill) == (1792, 40_960, False)
    assert rows["160"].limits.multi_step  # num_scheduler_steps 11: vLLM V0
    redhat = setup(rows["167"]).brief.deployment  # --max-num-seqs 1024 --max-num-batched-tokens 4096
    assert (redhat.max_num_seqs, redhat.max_num_batched_tokens) == (1024, 4096)
    assert rows["24"].limits.kv_memory_fraction == 0.95 and rows["18"].limits.kv_memory_fraction is None


def test_engine_family_defaults(rows):
    trt = setup(rows["108"]).brief.deployment
    assert (trt.max_num_seqs, trt.max_num_batched_tokens, trt.gpu_memory_utilization) == (2048, 8192, 1.0)
    v1_server = setup(rows["198"]).brief.deployment  # vLLM 0.19, vllm bench serve on an H100: >= 70 GiB
    assert (v1_server.max_num_seqs, v1_server.max_num_batched_tokens, v1_server.gpu_memory_utilization) == (1024, 8192, 0.9)
    v1_server_small = setup(rows["170"]).brief.deployment  # vLLM 0.10 serving on an L40S: the smaller GPUs' defaults
    assert (v1_server_small.max_num_seqs, v1_server_small.max_num_batched_tokens, v1_server_small.chunked_prefill) == (256, 2048, True)
    v0 = setup(rows["190"]).brief.deployment  # the CI's Mixtral on vLLM V0: chunked prefill off, a step of its 32k context
    assert (v0.max_num_seqs, v0.max_num_batched_tokens, v0.chunked_prefill) == (256, 32_768, False)
    static = setup(rows["1"]).brief.deployment  # a static batch of 1024 x 128-token prompts prefilled in one step
    assert (static.max_num_seqs, static.max_num_batched_tokens) == (1024, 1024 * 128)
    # TensorRT-LLM's in-flight batching admits only whole requests (GUARANTEED_NO_EVICT); vLLM, SGLang and a static batch do not
    assert setup(rows["124"]).settings.reserve_whole_request and setup(rows["149"]).settings.reserve_whole_request
    assert not any(setup(rows[i]).settings.reserve_whole_request for i in ("1", "167", "198", "160"))


def test_trt_kv_pool_is_its_fraction_of_free_memory(rows):
    """TensorRT-LLM takes its fraction of what the weights and 1 GB of activations leave; the planner caps an engine
    at 95% of the GPU (replica.MAX_ENGINE_MEMORY_FRACTION), which binds on one H200 at 0.95 and is said in the note."""
    s = setup(rows["22"])  # one A100, 8B BF16, the default 0.9
    free = 80 - 16.06 - 1.0  # memory - weights - activations
    assert shape_of(s.brief).kv_gb_per_gpu == pytest.approx(0.9 * free, abs=0.01)
    capped = setup(rows["24"])  # one H200, 70B FP8, kv_cache_free_gpu_mem_fraction 0.95
    assert capped.brief.deployment.reserve_gb_per_gpu == pytest.approx(1 + 0.05 * (141 - 70.6 - 1), abs=1e-3)
    assert shape_of(capped.brief).kv_gb_per_gpu == pytest.approx(0.95 * 141 - 70.6)
    assert "cap on an engine's share" in capped.note


def test_parallel_layouts(rows):
    pp = setup(rows["152"])  # 2 instances of TP2 PP2 on 8 B200: each simulated as one TP4 group
    assert (pp.units, pp.gpus_per_unit, pp.brief.deployment.tp) == (2, 4, 4)
    dep = rows["156"]  # TP8 EP8 attention-DP: 8 ranks of TP1 attention, 1/8 of the experts each
    assert dep.attention_dp and dep.expert_parallel == 8
    rank = setup(dep)
    custom = rank.brief.model.custom
    assert custom is not None and rank.brief.deployment.tp == 1 and rank.units == 8
    spec = MODELS["deepseek-r1"]
    assert custom.experts == 32 and custom.params == pytest.approx(spec.shared_params + 32 * spec.expert_params)
    assert custom.kv_heads * custom.head_dim * 2 == spec.kv_lora_rank + spec.qk_rope_head_dim  # MLA's latent bytes
    assert rank.settings.requests == math.ceil(dep.load.requests / 8)


def test_precisions_units_and_releases(rows):
    assert rows["206"].value == pytest.approx(139.0) and rows["208"].value == pytest.approx(17.0)  # seconds become ms
    assert rows["202"].weights is Precision.fp4 and "MXFP4" in rows["202"].note  # gpt-oss's MXFP4 experts
    assert rows["200"].weights is Precision.fp4  # 'unstated (openai/gpt-oss-20b checkpoint)'
    assert rows["199"].kv_cache.value == "fp8" and rows["198"].kv_cache.value == "bf16"
    assert rows["12"].kv_cache.value == "fp8"  # TensorRT-LLM, FP8 weights, KV unstated
    assert rows["191"].kv_cache.value == "bf16"  # vLLM, KV unstated: 'auto'
    assert (rows["198"].engine, rows["198"].engine_release) == (EngineFamily.vllm, "0.19.1")
    assert rows["202"].engine_release == "0.10.2" and rows["13"].engine_release == "0.7a"
    old = {i for i, m in rows.items() if m.weight == 0.5}
    assert old == {str(i) for i in (*range(1, 18), *range(205, 211))}  # TRT-LLM v0.5-v0.7 and LMDeploy v0.1


def test_lengths_the_notes_give(rows):
    blog = rows["198"]  # ~20k / ~2k tokens, +/-15%
    assert (blog.lengths.input_mean_tokens, blog.lengths.input_p95_tokens) == (20_000, pytest.approx(22_700))
    assert (blog.load.kind, blog.load.concurrency, blog.load.requests) == (LoadKind.concurrency, 8, 150)
    share = rows["189"]  # ShareGPT as vLLM samples it: prompts <= 1,024, prompt + reply <= 2,048
    assert share.lengths.dataset == "sharegpt" and share.lengths.max_tokens == 2048
    assert rows["119"].load.requests == 1500 and "not listed" in rows["119"].note


def test_catalog_entries_the_rows_use(rows):
    assert {m.gpu for m in rows.values()} <= set(GPUS) and {m.model for m in rows.values()} <= set(MODELS)
    for key in ("l40s", "gh200", "gb200", "mi325x", "rtx-pro-6000", "arc-pro-b60"):
        gpu = GPUS[key]
        assert len(gpu.source) > 40 and gpu.interconnect_gb_per_s > 0
        assert gpu.runs_natively("fp4") == (gpu.generation == "blackwell"), key
    deepseek = MODELS["deepseek-r1"]
    assert (deepseek.kv_lora_rank, deepseek.qk_rope_head_dim, deepseek.layers) == (512, 64, 61)
    assert MODELS["gpt-oss-20b"].sliding_window_layers == 12 and MODELS["gpt-oss-20b"].sliding_window_tokens == 128


def test_fp4_weights_bytes_and_compute(rows):
    assert Precision.fp4.bytes_per_value == 0.5625  # NVFP4: 4 bits and an FP8 scale per 16 values
    blackwell = shape_of(setup(rows["108"]).brief)
    hopper = shape_of(setup(rows["200"]).brief)
    assert blackwell.peak_tflops_per_gpu == GPUS["b200"].dense_tflops["fp4"]
    assert hopper.peak_tflops_per_gpu == GPUS["h100-sxm"].dense_tflops["bf16"]  # no FP4 tensor cores: W4A16
    assert blackwell.weights_gb_per_gpu == pytest.approx(70.6 * 0.5625)


def test_a_bad_row_names_its_row_and_column():
    good = next(iter(_csv_rows(BUNDLED_CSVS[1])))
    with pytest.raises(BriefError, match=r"x\.csv row 100: gpu: 'TPU v5' is not in the catalog"):
        measurement_from_row(good | {"gpu": "TPU v5"}, "x.csv")
    with pytest.raises(BriefError, match=r"row 100: concurrency_or_rate: 'sometimes' is no load"):
        measurement_from_row(good | {"concurrency_or_rate": "sometimes"}, "x.csv")
    with pytest.raises(BriefError, match="row 100: missing column notes"):
        measurement_from_row({k: v for k, v in good.items() if k != "notes"}, "x.csv")


def _csv_rows(path: Path) -> list[dict[str, str]]:
    import csv

    with path.open(newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


# --- the user's own files ---------------------------------------------------------------------------------------


def test_vllm_bench_serve_result():
    ms = read_vllm_result(DATA / "vllm_bench_serve_result.json")
    by_kind = {m.metric: m for m in ms}
    assert set(by_kind) == {
        MetricKind.output_tok_s_total,
        MetricKind.request_per_s,
        MetricKind.e2e_latency_mean_ms,
        *(MetricKind(f"{f}_{s}_ms") for f in ("ttft", "tpot", "itl") for s in ("mean", "p50", "p99")),
    }
    m = by_kind[MetricKind.output_tok_s_total]
    assert (m.engine, m.engine_release, m.model, m.gpu, m.tp) == (EngineFamily.vllm, "0.10.1", "llama-3.1-8b", "h100-sxm", 1)
    assert (m.load.kind, m.load.rate_per_s, m.load.requests) == (LoadKind.poisson, 4.0, 200)
    assert (m.lengths.input_mean_tokens, m.lengths.output_mean_tokens) == (1024, 128) and m.lengths.fixed
    assert by_kind[MetricKind.itl_p50_ms].value == 8.02 and by_kind[MetricKind.itl_p50_ms].basis is Basis.request
    assert all(math.isfinite(predict(setup(x))) for x in ms)


def test_vllm_file_without_metadata_takes_the_callers_gpu_and_tp():
    path = DATA / "vllm_bench_serve_no_metadata.json"
    with pytest.raises(BriefError, match=re.escape("vllm_bench_serve_no_metadata.json: tp: the file does not record it")):
        read_vllm_result(path)
    with pytest.raises(BriefError, match=re.escape("vllm_bench_serve_no_metadata.json: gpu: the file does not record it")):
        read_vllm_result(path, tp=1)
    ms = read_vllm_result(path, tp=2, gpu="h200")
    assert {(m.gpu, m.tp) for m in ms} == {("h200", 2)}
    with pytest.raises(BriefError, match="gpu=: 'tpu' is not in the catalog"):
        read_vllm_result(path, tp=1, gpu="tpu")


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("vllm_bench_serve_bad_type.json", "vllm_bench_serve_bad_type.json: output_throughput: 'fast' is not a number"),
        ("vllm_bench_serve_missing_key.json", "vllm_bench_serve_missing_key.json: total_output_tokens: missing"),
        ("not_calibration_format.csv", "not_calibration_format.csv: not the calibration format: no columns source, engine"),
    ],
)
def test_bad_user_files_name_the_file_and_field(name: str, message: str):
    with pytest.raises(BriefError) as caught:
        read_user_file(DATA / name)
    assert str(caught.value).startswith(message)
    assert "\n" not in str(caught.value)


def test_sglang_bench_serving_lines():
    ms = read_sglang_results(DATA / "sglang_bench_serving.jsonl", gpu="h100-sxm")
    runs = {m.id.split(":")[0] for m in ms}
    assert runs == {"sglang_bench_serving.jsonl run 1", "sglang_bench_serving.jsonl run 2"}
    first = next(m for m in ms if m.id.startswith("sglang_bench_serving.jsonl run 1:output_throughput"))
    assert (first.engine, first.engine_release, first.model, first.tp, first.weights) == (
        EngineFamily.sglang,
        "0.4.9",
        "llama-3.1-8b",
        1,
        Precision.fp8,
    )
    assert first.limits.max_num_batched_tokens == 8192 and first.limits.kv_memory_fraction == 0.88  # from server_info
    assert first.lengths.input_p95_tokens == pytest.approx(2048 * (0.5 + 0.95 * 0.5))  # uniform in [0.5 x 2048, 2048]
    second = next(m for m in ms if m.id.startswith("sglang_bench_serving.jsonl run 2:"))
    assert (second.load.kind, second.load.concurrency) == (LoadKind.concurrency, 32)  # request_rate Infinity, 32 clients
    assert all(math.isfinite(predict(setup(m))) for m in ms[:3])


def test_sglang_file_needs_the_gpu_and_what_server_info_lacks():
    with pytest.raises(BriefError, match=re.escape("sglang_bench_serving.jsonl run 1: gpu: the file does not record it")):
        read_sglang_results(DATA / "sglang_bench_serving.jsonl")
    bare = DATA / "sglang_bench_serving_no_server_info.jsonl"
    with pytest.raises(BriefError, match=re.escape("sglang_bench_serving_no_server_info.jsonl: model: the file does not record it")):
        read_sglang_results(bare, gpu="h100-sxm")
    with pytest.raises(BriefError, match=re.escape("no_server_info.jsonl: tp: the file records no server_info.tp_size")):
        read_sglang_results(bare, gpu="h100-sxm", model="llama-3.1-8b")
    assert {m.tp for m in read_sglang_results(bare, gpu="h100-sxm", model="llama-3.1-8b", tp=2)} == {2}


def test_read_user_file_tells_the_formats_apart(tmp_path: Path):
    assert {m.engine for m in read_user_file(DATA / "vllm_bench_serve_result.json")} == {EngineFamily.vllm}
    assert {m.engine for m in read_user_file(DATA / "sglang_bench_serving.jsonl", gpu="b200")} == {EngineFamily.sglang}
    csv_rows = read_user_file(DATA / "user_calibration.csv")
    assert [(m.id, m.metric, m.load.requests) for m in csv_rows] == [
        ("u1", MetricKind.output_tok_s_total, 640),
        ("u2", MetricKind.itl_p50_ms, 640),
    ]
    other = tmp_path / "other.json"
    other.write_text(json.dumps({"completed": 3}))
    with pytest.raises(BriefError, match=re.escape("other.json: neither vllm bench serve's result")):
        read_user_file(other)
    junk = tmp_path / "junk.jsonl"
    junk.write_text('{"a": 1}\nnot json\n')
    with pytest.raises(BriefError, match=r"junk.jsonl line 2: not JSON"):
        read_user_file(junk)


def test_dataset_table_is_consistent():
    for d in DATASETS.values():
        assert d.input_p95_tokens >= d.input_mean_tokens and d.output_p95_tokens >= d.output_mean_tokens, d.key
        assert d.input_max_tokens >= d.input_p95_tokens and len(d.source) > 40, d.key
