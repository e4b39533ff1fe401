"""Published serving measurements as data: one `Measurement` per CSV row, every assumption in its note.

    calibration/benchmarks*.csv ──read_csv()──▶ [Measurement] ──setups.setup()──▶ Setup ──predict()──▶ figure

A row fixes the engine (family and release), model, GPU and parallelism, precisions, the prompt and reply
lengths (fixed, or a dataset's distribution), the load (a static batch, every request at once, Poisson
arrivals, or closed-loop clients), engine limits it states, and one metric in one unit basis. Reading a row
turns its free text into these fields; what the text leaves open is assumed and said in `note`.

Units change between sources: TensorRT-LLM's throughput tables give the output tokens/s of the whole TP group
up to v1.0 and per GPU after it; MLPerf gives the whole system (num_gpus / (tp x pp) replicas); latencies are
per request. `value` is in the metric's unit (ms for latencies, tokens/s or requests/s); `published` keeps the
row's own figure and unit.
"""

from __future__ import annotations

import csv
import math
import re
from enum import StrEnum
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from planner.brief import KvPrecision, Precision
from planner.calibration.datasets import DatasetLengths, dataset_for
from planner.catalog import GPUS, MODELS
from planner.errors import BriefError

__all__ = [
    "BUNDLED_CSVS",
    "Basis",
    "EngineFamily",
    "EngineLimits",
    "Lengths",
    "Load",
    "LoadKind",
    "Measurement",
    "MetricKind",
    "gpu_key",
    "measurement_from_row",
    "model_key",
    "read_csv",
    "release_tuple",
    "source_group",
]

_ROOT = Path(__file__).resolve().parent.parent.parent
BUNDLED_CSVS = (_ROOT / "calibration" / "benchmarks.csv", _ROOT / "calibration" / "benchmarks-2.csv")

CSV_COLUMNS = (
    "id",
    "source",
    "engine",
    "model",
    "weights_dtype",
    "kv_dtype",
    "gpu",
    "num_gpus",
    "tp",
    "pp",
    "input_len",
    "output_len",
    "concurrency_or_rate",
    "metric",
    "value",
    "unit",
    "notes",
)


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class EngineFamily(StrEnum):
    trtllm = "trtllm"
    vllm = "vllm"
    sglang = "sglang"
    lmdeploy = "lmdeploy"


class MetricKind(StrEnum):
    """What a row measured; throughputs are of the row's basis, latencies per request (ms)."""

    output_tok_s_total = "output_tok_s_total"
    output_tok_s_per_gpu = "output_tok_s_per_gpu"
    request_per_s = "request_per_s"
    ttft_mean_ms = "ttft_mean_ms"
    ttft_p50_ms = "ttft_p50_ms"
    ttft_p99_ms = "ttft_p99_ms"
    tpot_mean_ms = "tpot_mean_ms"
    tpot_p50_ms = "tpot_p50_ms"
    tpot_p99_ms = "tpot_p99_ms"
    itl_mean_ms = "itl_mean_ms"
    itl_p50_ms = "itl_p50_ms"
    itl_p99_ms = "itl_p99_ms"
    e2e_latency_mean_ms = "e2e_latency_mean_ms"

    @property
    def is_latency(self) -> bool:
        return self.value.endswith("_ms")


class Basis(StrEnum):
    """What a throughput counts: one GPU, one engine instance (the TP x PP group), or the whole system of replicas."""

    per_gpu = "per_gpu"
    replica = "replica"
    system = "system"
    request = "request"  # latencies: per request, whatever the system


class LoadKind(StrEnum):
    static_batch = "static_batch"  # every request at t = 0, prefilled together, decoded in lockstep
    max_load = "max_load"  # every request at t = 0, continuous batching within the engine's limits
    poisson = "poisson"  # Poisson arrivals at rate_per_s
    concurrency = "concurrency"  # closed-loop clients: a client sends its next request when its reply ends


class Lengths(_Frozen):
    """Prompt and reply lengths (tokens): fixed when p95 equals the mean, else a dataset's distribution."""

    input_mean_tokens: float = Field(gt=0)
    input_p95_tokens: float = Field(gt=0)
    output_mean_tokens: float = Field(gt=0)
    output_p95_tokens: float = Field(gt=0)
    max_tokens: int = Field(ge=2, description="Longest prompt + reply a request can have (the run's max_model_len).")
    dataset: str | None = None

    @property
    def fixed(self) -> bool:
        return self.input_p95_tokens == self.input_mean_tokens and self.output_p95_tokens == self.output_mean_tokens

    @model_validator(mode="after")
    def _p95_not_below_mean(self) -> Lengths:
        if self.input_p95_tokens < self.input_mean_tokens or self.output_p95_tokens < self.output_mean_tokens:
            raise ValueError("lengths: a p95 below its mean")
        return self


class Load(_Frozen):
    """How the benchmark loaded the engine; counts and rates are of the row's whole system."""

    kind: LoadKind
    requests: int = Field(ge=1, description="Requests the run sent (a static batch's size).")
    rate_per_s: float | None = Field(default=None, gt=0, description="Poisson arrival rate of the whole system (req/s).")
    concurrency: int | None = Field(default=None, ge=1, description="Closed-loop clients.")


class EngineLimits(_Frozen):
    """Engine settings the row states; None leaves the engine family's default (planner.calibration.setups)."""

    max_num_seqs: int | None = Field(default=None, ge=1)
    max_num_batched_tokens: int | None = Field(default=None, ge=16)
    chunked_prefill: bool | None = None
    kv_memory_fraction: float | None = Field(default=None, gt=0, le=1)
    multi_step: bool = Field(default=False, description="vLLM V0 multi-step scheduling (num_scheduler_steps > 1).")


class Measurement(_Frozen):
    """One published figure and everything the simulator needs to reproduce its setup."""

    id: str
    source: str
    engine: EngineFamily
    engine_release: str = Field(description="Release as published ('0.19', '0.10.0', 'unstated ...').")
    model: str = Field(description="Catalog key (planner.catalog.MODELS).")
    gpu: str = Field(description="Catalog key (planner.catalog.GPUS).")
    num_gpus: int = Field(ge=1)
    tp: int = Field(ge=1)
    pp: int = Field(default=1, ge=1)
    expert_parallel: int = Field(default=1, ge=1, description="GPUs the routed experts are spread over (EP).")
    attention_dp: bool = Field(
        default=False, description="Attention data parallel: each GPU of the TP group runs its own sequences' attention."
    )
    weights: Precision
    kv_cache: KvPrecision
    lengths: Lengths
    load: Load
    limits: EngineLimits = Field(default_factory=EngineLimits)
    metric: MetricKind
    value: float = Field(gt=0, description="The figure in the metric's unit (ms, tokens/s, requests/s).")
    basis: Basis
    published: str = Field(description="The figure and unit as the source printed them.")
    weight: float = Field(default=1.0, gt=0, le=1, description="Fit weight: 0.5 for engine releases before 2024.")
    note: str = Field(default="", description="What was assumed to turn the row into a setup.")
    excluded_reason: str | None = Field(default=None, description="Why the row cannot be simulated faithfully (None: it can).")

    @property
    def gpus_per_replica(self) -> int:
        return self.tp * self.pp

    @property
    def replicas(self) -> int:
        """Engine instances in the row's system."""
        return max(self.num_gpus // self.gpus_per_replica, 1)

    @model_validator(mode="after")
    def _consistent(self) -> Measurement:
        if self.model not in MODELS:
            raise ValueError(f"model: '{self.model}' is not in the catalog")
        if self.gpu not in GPUS:
            raise ValueError(f"gpu: '{self.gpu}' is not in the catalog")
        if self.num_gpus % self.gpus_per_replica:
            raise ValueError(f"num_gpus: {self.num_gpus} GPUs are not a whole number of TP {self.tp} x PP {self.pp} replicas")
        if self.metric.is_latency != (self.basis is Basis.request):
            raise ValueError(f"basis: {self.basis.value} does not go with {self.metric.value}")
        return self


# --- reading a row ---------------------------------------------------------------------------------------------


def release_tuple(release: str) -> tuple[int, ...]:
    """'0.7a' -> (0, 7), '0.9.0.2.dev' -> (0, 9, 0, 2); no leading number -> ()."""
    match = re.match(r"\d+(?:\.\d+)*", release.strip())
    return tuple(int(part) for part in match.group(0).split(".")) if match else ()


_FAMILY_NAMES = (
    ("tensorrt", EngineFamily.trtllm),
    ("vllm", EngineFamily.vllm),
    ("sglang", EngineFamily.sglang),
    ("lmdeploy", EngineFamily.lmdeploy),
)


def _family(engine: str) -> EngineFamily:
    lowered = engine.lower()
    family = next((family for words, family in _FAMILY_NAMES if words in lowered), None)
    if family is None:
        raise ValueError(f"'{engine[:60]}' names none of {', '.join(f.value for f in EngineFamily)}")
    return family


_RELEASE_PATTERNS = {
    EngineFamily.trtllm: (r"TensorRT-LLM v(\d[\w.]*)",),
    EngineFamily.vllm: (r"vllm:(\d+\.\d+(?:\.\d+)*)", r"vLLM\s*~?v?(\d+\.\d+(?:\.\d+)*)"),
    EngineFamily.sglang: (r"SGLang\s*v?(\d+\.\d+(?:\.\d+)*)",),
    EngineFamily.lmdeploy: (r"LMDeploy v?(\d[\w.]*)",),
}


def _release(engine: str, family: EngineFamily) -> str:
    for pattern in _RELEASE_PATTERNS[family]:
        match = re.search(pattern, engine, flags=re.IGNORECASE)
        if match:
            return match.group(1)
    return "unstated (MLPerf v5.1 harness)" if "mlperf" in engine.lower() else "unstated"


# Old releases are slower than current ones (the README): rows from releases before 2024 count half in a fit.
_FIRST_2024_RELEASE = {EngineFamily.trtllm: (0, 8), EngineFamily.lmdeploy: (0, 2), EngineFamily.vllm: (0, 3), EngineFamily.sglang: (0, 1)}


def _fit_weight(family: EngineFamily, release: str) -> float:
    numbers = release_tuple(release)
    return 0.5 if numbers and numbers < _FIRST_2024_RELEASE[family] else 1.0


# Llama-3-8B is Llama-3.1-8B's architecture (an 8k context instead of 128k)
_MODEL_ALIASES = {"llama-3-8b": "llama-3.1-8b", "llama-4-maverick-17b-128e": "llama-4-maverick", "internlm-20b-chat": "internlm-20b"}
_SUFFIXES = ("-instruct", "-chat", "-hf", "-v0.1", "-v0.2", "-v0.3", "-fp8", "-fp4")


def model_key(name: str) -> str:
    """The catalog key for a published model name ('Llama-3.1-70B-Instruct', 'meta-llama/Llama-2-70b-chat-hf', ...)."""
    key = name.split(" (")[0].strip().split("/")[-1].lower().removeprefix("meta-")
    changed = True
    while changed:
        trimmed = next((key.removesuffix(s) for s in _SUFFIXES if key.endswith(s)), key)
        changed, key = trimmed != key, trimmed
    key = _MODEL_ALIASES.get(key, key)
    if key not in MODELS:
        raise ValueError(f"'{name[:60]}' is not in the catalog (known: {', '.join(MODELS)})")
    return key


_GPU_PATTERNS = (
    (r"^GH200", "gh200"),
    (r"^GB200", "gb200"),
    (r"^H200", "h200"),
    (r"^H100", "h100-sxm"),
    (r"^A100", "a100-80gb"),
    (r"^B200", "b200"),
    (r"^MI325X", "mi325x"),
    (r"^MI300X", "mi300x"),
    (r"^L40S", "l40s"),
    (r"^RTX[- ]PRO[- ]6000", "rtx-pro-6000"),
    (r"Arc Pro B60", "arc-pro-b60"),
)


def gpu_key(name: str) -> str:
    """The catalog key for a published GPU name; name variants of one GPU map to its key."""
    key = name.strip().lower()
    if key in GPUS:
        return key
    match = next((k for pattern, k in _GPU_PATTERNS if re.search(pattern, name.strip(), flags=re.IGNORECASE)), None)
    if match is None:
        raise ValueError(f"'{name[:60]}' is not in the catalog (known: {', '.join(GPUS)})")
    return match


def _gpu_note(name: str, key: str) -> str:
    if key == "h100-sxm" and ("not stated" in name or name.strip() == "H100"):
        return "H100 variant not stated: the SXM 80GB taken"
    if key == "a100-80gb" and "SXM" not in name:
        return "A100 form factor not stated: the SXM 80GB taken"
    return ""


# Checkpoints whose default weights are not BF16 (an 'unstated' weights column takes these).
_CHECKPOINT_WEIGHTS = {"gpt-oss-20b": Precision.fp4, "gpt-oss-120b": Precision.fp4}


def _weights(text: str, model: str) -> tuple[Precision, str]:
    lowered = text.strip().lower()
    if lowered.startswith(("fp16", "bf16")):
        return Precision.bf16, ""
    for prefix, precision in (("fp8", Precision.fp8), ("fp4", Precision.fp4), ("mxfp4", Precision.fp4), ("nvfp4", Precision.fp4)):
        if lowered.startswith(prefix):
            note = "MXFP4 (experts) taken as the fp4 weight precision (NVFP4 bytes: within 6%)" if prefix == "mxfp4" else ""
            return precision, note
    if lowered.startswith(("int8", "int4")):
        return Precision(lowered[:4]), ""
    if lowered.startswith("unstated") or not lowered:
        default = _CHECKPOINT_WEIGHTS.get(model, Precision.bf16)
        return default, f"weights unstated: the checkpoint's {default.value} taken"
    raise ValueError(f"'{text[:40]}' is not a weight precision (bf16/fp16, fp8, fp4, mxfp4, int8, int4)")


def _kv(text: str, family: EngineFamily, weights: Precision) -> tuple[KvPrecision, str]:
    lowered = text.strip().lower()
    if lowered.startswith(("fp16", "bf16")):
        return KvPrecision.bf16, ""
    if lowered.startswith("fp8"):
        note = "FP8 KV except the sliding-window layers (BF16) taken as FP8 throughout" if "except" in lowered else ""
        return KvPrecision.fp8, note
    if lowered.startswith("unstated") or not lowered:
        if family is EngineFamily.trtllm and weights in (Precision.fp8, Precision.fp4):
            return KvPrecision.fp8, "KV unstated: FP8, as TensorRT-LLM's FP8/FP4 (ModelOpt) checkpoints quantize it"
        return KvPrecision.bf16, "KV unstated: the engine's 'auto', the model's BF16, taken"
    raise ValueError(f"'{text[:40]}' is not a KV precision (bf16/fp16, fp8)")


# --- lengths ---------------------------------------------------------------------------------------------------


def _number(text: str) -> float:
    return float(text.replace(",", ""))


def _realized_reply_tokens(value: float, unit: str, notes: str) -> float | None:
    """Tokens a reply generated on average, from a row that reports both samples/s and output tokens/s."""
    samples = re.search(r"([\d.,]+) samples/s", notes)
    if samples is None:
        return None
    tokens = value if unit.strip() == "tok/s" else None
    stated = re.search(r"([\d.,]+) tok/s", notes)
    if stated is not None:
        tokens = _number(stated.group(1))
    return tokens / _number(samples.group(1)) if tokens else None


def _dataset_lengths(dataset: DatasetLengths, reply_mean: float | None, context: int) -> tuple[Lengths, str]:
    out_mean, out_p95, note = dataset.output_mean_tokens, dataset.output_p95_tokens, f"lengths: {dataset.name} (datasets.py)"
    if reply_mean is not None:  # what the run generated; the dataset's spread kept
        out_p95 = max(reply_mean, min(dataset.output_p95_tokens / dataset.output_mean_tokens * reply_mean, dataset.output_max_tokens))
        out_mean = reply_mean
        note += f"; replies {reply_mean:,.1f} tokens a sample, from the row's tokens/s over samples/s"
    longest = min(
        dataset.input_max_tokens + max(dataset.output_max_tokens, math.ceil(out_mean)), dataset.total_max_tokens or context, context
    )
    lengths = Lengths(
        input_mean_tokens=dataset.input_mean_tokens,
        input_p95_tokens=dataset.input_p95_tokens,
        output_mean_tokens=out_mean,
        output_p95_tokens=out_p95,
        max_tokens=max(longest, 256),
        dataset=dataset.key,
    )
    return lengths, note


def _lengths(row: dict[str, str], reply_mean: float | None, context: int) -> tuple[Lengths, str]:
    prompt, reply, notes = row["input_len"].strip(), row["output_len"].strip(), row["notes"]
    if prompt.isdigit() and reply.isdigit():
        fixed_in, fixed_out = int(prompt), int(reply)
        fixed = Lengths(
            input_mean_tokens=fixed_in,
            input_p95_tokens=fixed_in,
            output_mean_tokens=fixed_out,
            output_p95_tokens=fixed_out,
            max_tokens=max(256, fixed_in + fixed_out),
        )
        return fixed, ""
    if prompt.startswith("~") and reply.startswith("~"):
        spread = re.search(r"\+/-\s*(\d+)%", notes)
        if spread is None:
            raise ValueError("approximate lengths without a stated spread (+/-N%)")
        ratio = int(spread.group(1)) / 100
        p, r = _number(prompt[1:]), _number(reply[1:])
        # uniform over mean x (1 +/- ratio): p95 = mean x (1 + 0.9 ratio), the longest mean x (1 + ratio)
        longest = math.ceil((p + r) * (1 + ratio))
        lengths = Lengths(
            input_mean_tokens=p,
            input_p95_tokens=p * (1 + 0.9 * ratio),
            output_mean_tokens=r,
            output_p95_tokens=r * (1 + 0.9 * ratio),
            max_tokens=min(longest, context),
        )
        return lengths, f"lengths uniform within +/-{spread.group(1)}% of the stated means"
    dataset = dataset_for(f"{prompt} {notes}")
    if dataset is None:
        raise ValueError(f"'{prompt[:30]}' is neither a length nor a dataset the notes name")
    return _dataset_lengths(dataset, reply_mean, context)


# --- load and limits -------------------------------------------------------------------------------------------

_MLPERF_MIN_DURATION_S = 600  # LoadGen's minimum run for the LLM benchmarks
_MLPERF_OFFLINE_MARGIN = 1.1  # LoadGen issues target_qps x min duration x 1.1 samples in the Offline query
_TRT_ONLINE_REQUESTS = 500  # TensorRT-LLM's online-serving table ran 500 requests a point (its row 31)
_VLLM_BENCH_PROMPTS = 1000  # vllm bench serve --num-prompts default


def _offline_requests(notes: str) -> int:
    samples = re.search(r"([\d.,]+) samples/s", notes)
    if samples is None:
        raise ValueError("an MLPerf Offline row without its samples/s")
    return max(round(_number(samples.group(1)) * _MLPERF_MIN_DURATION_S * _MLPERF_OFFLINE_MARGIN), 1)


def _load(text: str, notes: str) -> tuple[Load, str]:
    """The row's load column (and, for request counts it leaves out, its notes)."""
    static = re.match(r"batch=(\d+)", text)
    if static:
        return Load(kind=LoadKind.static_batch, requests=int(static.group(1))), ""
    if text.startswith("max load"):
        count = re.search(r"\((\d+) req", text)
        if count:
            return Load(kind=LoadKind.max_load, requests=int(count.group(1))), ""
        return Load(kind=LoadKind.max_load, requests=1500), "request count not listed: 1,500 taken (the table's count for 2k-token replies)"
    if text.startswith("Offline"):
        n = _offline_requests(notes)
        return Load(kind=LoadKind.max_load, requests=n), f"MLPerf Offline: {n:,} samples at once (measured samples/s x 600 s x 1.1)"
    server = re.search(r"Server Poisson, target_qps=([\d.]+)", text)
    if server:
        rate = float(server.group(1))
        n = max(round(rate * _MLPERF_MIN_DURATION_S), 100)
        return Load(kind=LoadKind.poisson, requests=n, rate_per_s=rate), f"MLPerf Server: Poisson {rate:g} req/s for 600 s ({n:,} requests)"
    if text.startswith("QPS=INF"):
        return Load(kind=LoadKind.max_load, requests=_TRT_ONLINE_REQUESTS), "QPS=INF: the table's 500 requests at once"
    qps = re.search(r"QPS=([\d.]+)", text)
    if qps:
        prompts = re.search(r"(\d+) prompts", text)
        n = int(prompts.group(1)) if prompts else _TRT_ONLINE_REQUESTS
        note = "" if prompts else "the table's 500 requests a point"
        return Load(kind=LoadKind.poisson, requests=n, rate_per_s=float(qps.group(1))), note
    offline = re.match(r"offline, (\d+) prompts", text)
    if offline:
        return Load(kind=LoadKind.max_load, requests=int(offline.group(1))), ""
    closed = re.match(r"concurrency=(\d+)", text)
    if closed:
        count_text = re.search(r"(\d+) requests at concurrency", notes)
        n = int(count_text.group(1)) if count_text else _VLLM_BENCH_PROMPTS
        note = "" if count_text else "request count not stated: vllm bench serve's default 1,000 prompts taken"
        return Load(kind=LoadKind.concurrency, requests=n, concurrency=int(closed.group(1))), note
    raise ValueError(f"'{text[:60]}' is no load this reader knows (batch=, max load, Offline, Server, QPS=, concurrency=)")


def _first_int(patterns: tuple[str, ...], text: str) -> int | None:
    for pattern in patterns:
        match = re.search(pattern, text)
        if match:
            return int(match.group(1))
    return None


def _limits(load_text: str, notes: str) -> EngineLimits:
    """Engine settings a row states in its load column or notes."""
    text = f"{load_text}; {notes}"
    seqs = _first_int((r"gpu_batch_size (\d+)", r"max_num_seqs (\d+)", r"--max-num-seqs[ =](\d+)", r"x TP\d+, batch (\d+)"), text)
    tokens = _first_int((r"max_num_tokens (\d+)", r"max_num_batched_tokens (\d+)", r"--max-num-batched-tokens[ =](\d+)"), text)
    lowered = text.lower()
    chunked: bool | None = None
    if "chunked prefill off" in lowered or "no chunked context" in lowered:
        chunked = False
    elif "chunked context" in lowered:
        chunked = True
    fraction = re.search(r"kv_cache_free_gpu_mem_fraction (0\.\d+)", text)
    steps = re.search(r"num_scheduler_steps (\d+)", text)
    return EngineLimits(
        max_num_seqs=seqs,
        max_num_batched_tokens=tokens,
        chunked_prefill=chunked,
        kv_memory_fraction=float(fraction.group(1)) if fraction else None,
        multi_step=bool(steps and int(steps.group(1)) > 1),
    )


# --- metric and basis ------------------------------------------------------------------------------------------

_LATENCY_METRICS = (
    ("end-to-end batch latency", MetricKind.e2e_latency_mean_ms),
    ("first-token latency", MetricKind.ttft_mean_ms),
    ("mean ttft", MetricKind.ttft_mean_ms),
    ("per-token decode latency p50", MetricKind.tpot_p50_ms),  # LMDeploy's static batch: every gap equal, TPOT p50 = ITL p50
    ("mean tpot", MetricKind.tpot_mean_ms),
    ("tpot (as published", MetricKind.tpot_mean_ms),
    ("mean itl", MetricKind.itl_mean_ms),
    ("median itl", MetricKind.itl_p50_ms),
)


def _metric(metric: str, unit: str, family: EngineFamily, release: str) -> tuple[MetricKind, Basis, str]:
    lowered, unit = metric.strip().lower(), unit.strip()
    for words, kind in _LATENCY_METRICS:
        if lowered.startswith(words):
            if unit not in ("ms", "s"):
                raise ValueError(f"a latency in '{unit}' (ms or s)")
            note = "TPOT taken as the mean (the table does not say mean or median)" if words == "tpot (as published" else ""
            return kind, Basis.request, note
    if lowered.startswith("request throughput"):
        return MetricKind.request_per_s, Basis.replica, ""
    if "output" not in lowered or not unit.startswith("tok/s"):
        raise ValueError(f"'{metric[:50]}' in '{unit}' is no metric this reader knows")
    if unit == "tok/s/GPU" or "per gpu" in lowered:
        return MetricKind.output_tok_s_per_gpu, Basis.per_gpu, ""
    if "system" in lowered:
        return MetricKind.output_tok_s_total, Basis.system, ""
    if family is EngineFamily.trtllm and release_tuple(release) >= (1, 0):
        return MetricKind.output_tok_s_per_gpu, Basis.per_gpu, "TensorRT-LLM >= 1.0 tables give output tokens/s per GPU"
    return MetricKind.output_tok_s_total, Basis.replica, ""


def _value_ms(value: float, unit: str) -> float:
    return value * 1e3 if unit.strip() == "s" else value


# --- the row ---------------------------------------------------------------------------------------------------


def _parallelism(row: dict[str, str]) -> tuple[int, int, int, bool]:
    """(tp, pp, expert parallel, attention DP) from the columns and the load text."""
    tp, pp = int(row["tp"]), int(row["pp"])
    text = f"{row['concurrency_or_rate']} {row['notes']}"
    ep = _first_int((r"\bEP(\d+)", r"moe_expert_parallelism (\d+)"), text) or 1
    dep = "attention-dp" in text.lower() or "enable_attention_dp" in text.lower()
    return tp, pp, ep, dep


def measurement_from_row(row: dict[str, str], origin: str = "calibration CSV") -> Measurement:
    """One CSV row (the calibration format's columns) as a Measurement; a bad field raises BriefError naming the row and column."""
    missing = [c for c in CSV_COLUMNS if c not in row or row[c] is None]
    row_id = (row.get("id") or "?").strip()
    if missing:
        raise BriefError(f"{origin} row {row_id}", f"missing column{'s' if len(missing) > 1 else ''} {', '.join(missing)}")
    column = "engine"
    try:
        family = _family(row["engine"])
        release = _release(row["engine"], family)
        column = "model"
        model = model_key(row["model"])
        column = "gpu"
        gpu = gpu_key(row["gpu"])
        column = "weights_dtype"
        weights, weights_note = _weights(row["weights_dtype"], model)
        column = "kv_dtype"
        kv, kv_note = _kv(row["kv_dtype"], family, weights)
        column = "value"
        value = _number(row["value"])
        column = "metric"
        metric, basis, metric_note = _metric(row["metric"], row["unit"], family, release)
        column = "input_len"
        reply_mean = _realized_reply_tokens(value, row["unit"], row["notes"])
        lengths, length_note = _lengths(row, reply_mean, MODELS[model].max_context_tokens)
        column = "concurrency_or_rate"
        load, load_note = _load(row["concurrency_or_rate"].strip(), row["notes"])
        limits = _limits(row["concurrency_or_rate"], row["notes"])
        column = "tp"
        tp, pp, ep, dep = _parallelism(row)
        num_gpus = int(row["num_gpus"])
    except (ValueError, KeyError) as exc:
        raise BriefError(f"{origin} row {row_id}: {column}", str(exc).removeprefix("Value error, ")) from None
    notes = [
        _gpu_note(row["gpu"], gpu),
        weights_note,
        kv_note,
        metric_note,
        length_note,
        load_note,
        "vLLM CI ran dummy (random) weights: the same speed as the real ones" if "load_format dummy" in row["notes"] else "",
        "DEP: attention data parallel (one TP=1 attention rank per GPU) with the experts spread over them" if dep else "",
        "pipeline stages folded into TP for the simulator (same bytes per GPU; bubbles ignored)" if pp > 1 else "",
        "--enforce-eager: no CUDA graphs, a larger fixed cost per step than the calibrated one" if "enforce-eager" in row["notes"] else "",
    ]
    try:
        return Measurement(
            id=row_id,
            source=row["source"].strip(),
            engine=family,
            engine_release=release,
            model=model,
            gpu=gpu,
            num_gpus=num_gpus,
            tp=tp,
            pp=pp,
            expert_parallel=ep,
            attention_dp=dep,
            weights=weights,
            kv_cache=kv,
            lengths=lengths,
            load=load,
            limits=limits,
            metric=metric,
            value=_value_ms(value, row["unit"]),
            basis=basis,
            published=f"{row['value'].strip()} {row['unit'].strip()}",
            weight=_fit_weight(family, release),
            note="; ".join(n for n in notes if n),
        )
    except ValidationError as exc:
        first = exc.errors()[0]
        raise BriefError(f"{origin} row {row_id}", str(first.get("msg", "invalid")).removeprefix("Value error, ")) from None


def read_csv(path: Path | str) -> list[Measurement]:
    """Every row of a calibration CSV as a Measurement; an unreadable file or a bad row raises BriefError naming it."""
    path = Path(path)
    try:
        with path.open(newline="", encoding="utf-8") as f:
            reader = csv.DictReader(f)
            missing = [c for c in CSV_COLUMNS if c not in (reader.fieldnames or ())]
            if missing:
                raise BriefError(path.name, f"not the calibration format: no column{'s' if len(missing) > 1 else ''} {', '.join(missing)}")
            return [measurement_from_row(row, path.name) for row in reader]
    except OSError as exc:
        raise BriefError(path.name, f"cannot read: {exc.strerror or type(exc).__name__}") from None
    except UnicodeDecodeError:
        raise BriefError(path.name, "not UTF-8 text") from None
    except csv.Error as exc:
        raise BriefError(path.name, f"not a CSV file: {exc}") from None


def source_group(m: Measurement) -> str:
    """The publication a row comes from, the unit a leave-one-source-out validation leaves out."""
    src = m.source
    if src.startswith("mlcommons/"):
        return f"MLPerf v5.1 ({'TensorRT-LLM' if m.engine is EngineFamily.trtllm else 'vLLM'})"
    if "buildkite.com/vllm" in src:
        return "vLLM CI"
    if "vllm-project.github.io" in src:
        return "vLLM blog"
    if src.startswith("InternLM/lmdeploy"):
        return "LMDeploy docs"
    if src.startswith("NVIDIA/TensorRT-LLM"):
        old = release_tuple(m.engine_release) < (0, 14)
        return "TensorRT-LLM docs v0.5-v0.8 (static)" if old else "TensorRT-LLM perf-overview v0.14-v0.21"
    return src.split(" (")[0]
