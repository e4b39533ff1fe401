"""The user's own measurements: the JSON `vllm bench serve --save-result` writes, the JSON lines SGLang's
`bench_serving --output-file` appends, or a CSV in the calibration format, as Measurements.

Keys read (vllm/benchmarks/serve.py and benchmarks/benchmark_serving.py `result_json`; sglang/bench_serving.py
`result`):

- both: `completed`, `total_input_tokens`, `total_output_tokens`, `request_rate` (a number, "inf" or Infinity),
  `max_concurrency` (null for none), `request_throughput`, `output_throughput`, and what latency statistics the run
  kept: `mean_/median_/p99_` + `ttft_ms`, `tpot_ms`, `itl_ms`; `input_lens` / `output_lens` when the run saved its
  details (they give the lengths' p95).
- vLLM: `model_id`; end to end `mean_e2el_ms`; anything passed with `--metadata KEY=VALUE` lands at the top level,
  and these keys are read when present: `gpu`, `tp` or `tensor_parallel_size`, `num_gpus`, `engine_version` or
  `vllm_version`, `quantization` or `weights`, `kv_cache_dtype`, `max_num_seqs`, `max_num_batched_tokens`,
  `gpu_memory_utilization`.
- SGLang: `dataset_name`, `random_input_len`, `random_output_len`, `random_range_ratio`, end to end
  `mean_e2e_latency_ms`, and `server_info` (the server's /get_server_info: `model_path`, `tp_size`, `dp_size`,
  `quantization`, `kv_cache_dtype`, `max_running_requests`, `chunked_prefill_size`, `mem_fraction_static`, `version`).

Neither tool records the GPU, and vLLM's client does not record TP: they come from `--metadata` (vLLM) or from the
caller's `gpu=`, `tp=` (and `model=` when the file names a model the catalog lacks). A value the run needs and
nobody gives raises one BriefError naming the file and the field.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from planner.brief import KvPrecision, Precision
from planner.calibration.measurements import (
    Basis,
    EngineFamily,
    EngineLimits,
    Lengths,
    Load,
    LoadKind,
    Measurement,
    MetricKind,
    gpu_key,
    model_key,
    read_csv,
)
from planner.catalog import GPUS, MODELS
from planner.errors import BriefError
from planner.textfile import read_text_file

__all__ = ["MAX_USER_FILE_BYTES", "read_sglang_results", "read_user_file", "read_vllm_result"]

MAX_USER_FILE_BYTES = 100_000_000  # a result with every request's details stays well below this

_STATISTICS = (("mean", "mean"), ("median", "p50"), ("p99", "p99"))
_REQUIRED = ("completed", "total_input_tokens", "total_output_tokens", "request_rate")


def _read_text(path: Path) -> str:
    return read_text_file(path, MAX_USER_FILE_BYTES, "a benchmark result")


def _json_runs(text: str, name: str) -> list[dict[str, Any]]:
    """One JSON object, or JSON lines (SGLang appends a line a run; vLLM's --append-result too)."""
    try:
        whole = json.loads(text)
        runs = whole if isinstance(whole, list) else [whole]
    except json.JSONDecodeError:
        runs = []
        for number, line in enumerate(text.splitlines(), start=1):
            if not line.strip():
                continue
            try:
                runs.append(json.loads(line))
            except json.JSONDecodeError as exc:
                raise BriefError(f"{name} line {number}", f"not JSON: {exc.msg}") from None
    if not runs or not all(isinstance(run, dict) for run in runs):
        raise BriefError(name, "not a benchmark result: expected JSON objects (one, or one a line)")
    return runs


# --- values a run holds ----------------------------------------------------------------------------------------


def _where(name: str, index: int, count: int) -> str:
    return name if count == 1 else f"{name} run {index + 1}"


def _number(run: dict[str, Any], key: str, where: str) -> float:
    if key not in run or run[key] is None:
        raise BriefError(f"{where}: {key}", "missing (the benchmark tool writes it)")
    value = run[key]
    if isinstance(value, str) and value.lower() in ("inf", "infinity"):
        return math.inf
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise BriefError(f"{where}: {key}", f"{str(value)[:40]!r} is not a number")
    return float(value)


def _optional_int(value: Any, key: str, where: str) -> int | None:
    if value is None or value == "":
        return None
    try:
        number = int(str(value))
    except ValueError:
        raise BriefError(f"{where}: {key}", f"{str(value)[:40]!r} is not a whole number") from None
    if number < 1:
        raise BriefError(f"{where}: {key}", f"{number} is not a positive count")
    return number


def _weights_of(text: Any, model: str) -> Precision:
    lowered = str(text or "").lower()
    if "fp4" in lowered:
        return Precision.fp4
    if "fp8" in lowered:
        return Precision.fp8
    if any(word in lowered for word in ("awq", "gptq", "int4", "w4a16")):
        return Precision.int4
    if "int8" in lowered or "w8a8" in lowered:
        return Precision.int8
    if lowered in ("bf16", "bfloat16", "fp16", "float16", "half"):
        return Precision.bf16
    return Precision.fp4 if model.startswith("gpt-oss") else Precision.bf16  # no quantization: the checkpoint's own


def _kv_of(text: Any) -> KvPrecision:
    return KvPrecision.fp8 if str(text or "").lower().startswith("fp8") else KvPrecision.bf16  # 'auto': the model's BF16


def _p95(values: Any) -> float | None:
    if not isinstance(values, list) or not values or not all(isinstance(v, int | float) and not isinstance(v, bool) for v in values):
        return None
    ordered = sorted(float(v) for v in values)
    return ordered[min(math.ceil(0.95 * len(ordered)) - 1, len(ordered) - 1)]


def _lengths(run: dict[str, Any], completed: float, where: str, context: int) -> tuple[Lengths, str]:
    prompt = _number(run, "total_input_tokens", where) / completed
    reply = _number(run, "total_output_tokens", where) / completed
    prompt_p95, reply_p95 = _p95(run.get("input_lens")), _p95(run.get("output_lens"))
    note = ""
    if prompt_p95 is not None and reply_p95 is not None:
        longest = max(run["input_lens"]) + max(run["output_lens"])
        note = "lengths: the run's own (input_lens, output_lens)"
    elif str(run.get("dataset_name", "")).startswith("random") and run.get("random_input_len") and run.get("random_output_len"):
        ratio = float(run.get("random_range_ratio") or 0.0)  # SGLang draws uniformly between ratio x len and len
        prompt_p95 = float(run["random_input_len"]) * (ratio + 0.95 * (1 - ratio))
        reply_p95 = float(run["random_output_len"]) * (ratio + 0.95 * (1 - ratio))
        longest = int(run["random_input_len"]) + int(run["random_output_len"])
        note = f"lengths: SGLang's random dataset, uniform between {ratio:g} x and 1 x the stated lengths"
    else:
        prompt_p95, reply_p95 = prompt, reply
        longest = math.ceil(prompt + reply)
        note = "lengths: only totals recorded, taken as fixed at the means (save the run's details for their spread)"
    lengths = Lengths(
        input_mean_tokens=prompt,
        input_p95_tokens=max(prompt_p95, prompt),
        output_mean_tokens=reply,
        output_p95_tokens=max(reply_p95, reply),
        max_tokens=max(min(longest, context), 256, math.ceil(prompt + reply)),
    )
    return lengths, note


def _load(run: dict[str, Any], completed: int, where: str) -> tuple[Load, str]:
    rate = _number(run, "request_rate", where)
    concurrency = _optional_int(run.get("max_concurrency"), "max_concurrency", where)
    if math.isfinite(rate):
        note = f"max_concurrency {concurrency} also capped the run; the simulator runs the Poisson arrivals uncapped" if concurrency else ""
        return Load(kind=LoadKind.poisson, requests=completed, rate_per_s=rate), note
    if concurrency:
        return Load(kind=LoadKind.concurrency, requests=completed, concurrency=concurrency), ""
    return Load(kind=LoadKind.max_load, requests=completed), ""


def _metrics(run: dict[str, Any], e2e_key: str, basis: Basis, where: str) -> list[tuple[MetricKind, Basis, float, str]]:
    """(kind, basis, value, the file's key) for every statistic the run kept as a positive number."""
    keys: list[tuple[str, MetricKind, Basis]] = [
        ("output_throughput", MetricKind.output_tok_s_total, basis),
        ("request_throughput", MetricKind.request_per_s, basis),
        (e2e_key, MetricKind.e2e_latency_mean_ms, Basis.request),
    ]
    for family in ("ttft", "tpot", "itl"):
        keys += [(f"{prefix}_{family}_ms", MetricKind(f"{family}_{stat}_ms"), Basis.request) for prefix, stat in _STATISTICS]
    found = []
    for key, kind, kind_basis in keys:
        if key not in run or run[key] is None:
            continue
        value = _number(run, key, where)
        if math.isfinite(value) and value > 0:  # 0 or NaN: the run did not measure it (one-token replies have no TPOT)
            found.append((kind, kind_basis, value, key))
    if not found:
        raise BriefError(f"{where}: output_throughput", "missing: the run holds no throughput or latency figure")
    return found


def _catalog(key_of: Callable[[str], str], recorded: Any, given: Any, field: str, where: str, known: dict[str, Any]) -> str:
    """A catalog key from what the file records, else from the caller's `field=`; neither: one error naming the field."""
    hint = f"give {field}= (a catalog key: {', '.join(known)})"
    if recorded:
        try:
            return key_of(str(recorded))
        except ValueError as exc:
            if not given:
                raise BriefError(f"{where}: {field}", f"{exc}; {hint}") from None
    if not given:
        raise BriefError(f"{where}: {field}", f"the file does not record it: {hint}")
    try:
        return key_of(str(given))
    except ValueError as exc:
        raise BriefError(f"{field}=", str(exc)) from None


# --- the two tools ---------------------------------------------------------------------------------------------


def _measurements(
    run: dict[str, Any],
    *,
    where: str,
    engine: EngineFamily,
    facts: dict[str, Any],
    e2e_key: str,
    source: str,
) -> list[Measurement]:
    completed = int(_number(run, "completed", where))
    if completed < 1:
        raise BriefError(f"{where}: completed", f"{completed} requests completed: nothing to calibrate on")
    model = facts["model"]
    lengths, length_note = _lengths(run, completed, where, MODELS[model].max_context_tokens)
    load, load_note = _load(run, completed, where)
    tp, dp = facts["tp"], facts["dp"]
    basis = Basis.system if dp > 1 else Basis.replica
    limits = EngineLimits(
        max_num_seqs=facts.get("max_num_seqs"),
        max_num_batched_tokens=facts.get("max_num_batched_tokens"),
        kv_memory_fraction=facts.get("kv_memory_fraction"),
    )
    note = "; ".join(n for n in (length_note, load_note, facts.get("note", "")) if n)
    out = []
    for kind, kind_basis, value, key in _metrics(run, e2e_key, basis, where):
        try:
            out.append(
                Measurement(
                    id=f"{where}:{key}",
                    source=source,
                    engine=engine,
                    engine_release=facts["release"],
                    model=model,
                    gpu=facts["gpu"],
                    num_gpus=tp * dp,
                    tp=tp,
                    weights=facts["weights"],
                    kv_cache=facts["kv"],
                    lengths=lengths,
                    load=load,
                    limits=limits,
                    metric=kind,
                    value=value,
                    basis=kind_basis,
                    published=f"{key} = {value:g}",
                    note=note,
                )
            )
        except ValidationError as exc:
            first = exc.errors()[0]
            raise BriefError(where, str(first.get("msg", "invalid")).removeprefix("Value error, ")) from None
    return out


def _fraction(value: Any, key: str, where: str) -> float | None:
    if value is None or value == "":
        return None
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise BriefError(f"{where}: {key}", f"{str(value)[:40]!r} is not a number") from None
    if not 0 < number <= 1:
        raise BriefError(f"{where}: {key}", f"{number} is not a fraction in (0, 1]")
    return number


def _vllm_facts(run: dict[str, Any], where: str, given: dict[str, Any]) -> dict[str, Any]:
    model = _catalog(model_key, run.get("model_id"), given.get("model"), "model", where, MODELS)
    tp = _optional_int(run.get("tp", run.get("tensor_parallel_size")), "tp", where) or _optional_int(given.get("tp"), "tp", where)
    if tp is None:
        raise BriefError(f"{where}: tp", "the file does not record it: give tp= (or --metadata tp=N when benchmarking)")
    gpus = _optional_int(run.get("num_gpus"), "num_gpus", where)
    return {
        "model": model,
        "gpu": _catalog(gpu_key, run.get("gpu"), given.get("gpu"), "gpu", where, GPUS),
        "tp": tp,
        "dp": max((gpus or tp) // tp, 1),
        "release": str(run.get("engine_version") or run.get("vllm_version") or given.get("engine_release") or "unstated"),
        "weights": _weights_of(run.get("quantization") or run.get("weights") or given.get("weights"), model),
        "kv": _kv_of(run.get("kv_cache_dtype") or given.get("kv_cache")),
        "max_num_seqs": _optional_int(run.get("max_num_seqs"), "max_num_seqs", where),
        "max_num_batched_tokens": _optional_int(run.get("max_num_batched_tokens"), "max_num_batched_tokens", where),
        "kv_memory_fraction": _fraction(run.get("gpu_memory_utilization"), "gpu_memory_utilization", where),
    }


def _sglang_facts(run: dict[str, Any], where: str, given: dict[str, Any]) -> dict[str, Any]:
    recorded = run.get("server_info")
    info: dict[str, Any] = recorded if isinstance(recorded, dict) else {}
    model = _catalog(model_key, info.get("model_path"), given.get("model"), "model", where, MODELS)
    tp = _optional_int(info.get("tp_size"), "server_info.tp_size", where) or _optional_int(given.get("tp"), "tp", where)
    if tp is None:
        raise BriefError(f"{where}: tp", "the file records no server_info.tp_size: give tp=")
    return {
        "model": model,
        "gpu": _catalog(gpu_key, None, given.get("gpu"), "gpu", where, GPUS),
        "tp": tp,
        "dp": _optional_int(info.get("dp_size"), "server_info.dp_size", where) or 1,
        "release": str(info.get("version") or given.get("engine_release") or "unstated"),
        "weights": _weights_of(info.get("quantization") or given.get("weights"), model),
        "kv": _kv_of(info.get("kv_cache_dtype") or given.get("kv_cache")),
        "max_num_seqs": _optional_int(info.get("max_running_requests"), "server_info.max_running_requests", where),
        "max_num_batched_tokens": _optional_int(info.get("chunked_prefill_size"), "server_info.chunked_prefill_size", where),
        "kv_memory_fraction": _fraction(info.get("mem_fraction_static"), "server_info.mem_fraction_static", where),
    }


def _is_sglang(run: dict[str, Any]) -> bool:
    return "dataset_name" in run or "server_info" in run


def read_vllm_result(path: Path | str, **given: Any) -> list[Measurement]:
    """The figures of a `vllm bench serve --save-result` file (one run, or one a line with --append-result)."""
    path = Path(path)
    runs = _json_runs(_read_text(path), path.name)
    return _from_runs(path, runs, given, sglang=False)


def read_sglang_results(path: Path | str, **given: Any) -> list[Measurement]:
    """The figures of an SGLang `bench_serving --output-file` JSON-lines file (a line a run)."""
    path = Path(path)
    runs = _json_runs(_read_text(path), path.name)
    return _from_runs(path, runs, given, sglang=True)


def _from_runs(path: Path, runs: list[dict[str, Any]], given: dict[str, Any], *, sglang: bool) -> list[Measurement]:
    out: list[Measurement] = []
    for index, run in enumerate(runs):
        where = _where(path.name, index, len(runs))
        for key in _REQUIRED:
            _number(run, key, where)  # a missing or mistyped required key names itself first
        if sglang:
            facts = _sglang_facts(run, where, given)
            out += _measurements(
                run,
                where=where,
                engine=EngineFamily.sglang,
                facts=facts,
                e2e_key="mean_e2e_latency_ms",
                source=f"{path.name} (SGLang bench_serving)",
            )
        else:
            facts = _vllm_facts(run, where, given)
            out += _measurements(
                run, where=where, engine=EngineFamily.vllm, facts=facts, e2e_key="mean_e2el_ms", source=f"{path.name} (vllm bench serve)"
            )
    return out


def read_user_file(path: Path | str, **given: Any) -> list[Measurement]:
    """Measurements from a benchmark file, told apart by content: a calibration CSV (by its .csv name), vLLM's result
    JSON (it names model_id), or SGLang's JSON lines (dataset_name, server_info). `given` fills what the file lacks:
    model=, gpu=, tp=, engine_release=, weights=, kv_cache= (catalog keys and the brief's precision names)."""
    path = Path(path)
    if path.suffix.lower() == ".csv":
        return read_csv(path)
    runs = _json_runs(_read_text(path), path.name)
    if all(_is_sglang(run) for run in runs):
        return _from_runs(path, runs, given, sglang=True)
    if all("model_id" in run for run in runs):
        return _from_runs(path, runs, given, sglang=False)
    raise BriefError(
        path.name, "neither vllm bench serve's result (no model_id) nor SGLang bench_serving's (no dataset_name or server_info)"
    )
