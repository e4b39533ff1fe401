"""Catalogs of GPUs and models, each figure with its source.

Compute figures are dense (no 2:4 sparsity), per GPU, in TFLOP/s (TOP/s for int8). Memory is in GB
(1e9 bytes) and bandwidth in TB/s (1e12 bytes/s), as vendors publish them.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from planner.brief import CustomModel, ModelChoice
from planner.errors import BriefError

__all__ = [
    "GPUS",
    "HF_CONFIG_MAX_BYTES",
    "MODELS",
    "GpuSpec",
    "ModelSpec",
    "gpu_spec",
    "model_from_hf_config",
    "model_from_hf_config_text",
    "model_spec",
]


class GpuSpec(BaseModel):
    """One accelerator as the arithmetic needs it."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    key: str
    name: str
    memory_gb: float = Field(description="HBM capacity per GPU (GB).")
    hbm_tb_per_s: float = Field(description="HBM bandwidth per GPU (TB/s).")
    dense_tflops: dict[str, float] = Field(description="Dense tensor-core peak per math precision (TFLOP/s).")
    nvlink_domain_gpus: int = Field(description="GPUs one NVLink/NVSwitch (or Infinity Fabric) domain joins.")
    scale_out_gb_per_s: float = Field(description="Scale-out network bandwidth per GPU (GB/s).")
    source: str
    usd_per_gpu_hour: float | None = Field(
        default=None, description="Reference price of one GPU-hour, reserved ($): what the design search prices this GPU at."
    )
    price_source: str = ""

    def peak_tflops(self, precision: str) -> float:
        """Dense peak for a math precision; a GPU without it (A100 and fp8) runs at its bf16 peak."""
        return self.dense_tflops.get(precision, self.dense_tflops["bf16"])


class ModelSpec(BaseModel):
    """One model's architecture as the arithmetic needs it."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    key: str
    name: str
    layers: int
    hidden_size: int
    attention_heads: int
    kv_heads: int
    head_dim: int
    params: float = Field(description="Total parameters (count).")
    active_params: float = Field(description="Parameters a token passes through (count); equals params for dense models.")
    experts: int = 1
    experts_per_token: int = 1
    max_context_tokens: int
    source: str

    @property
    def is_moe(self) -> bool:
        return self.experts > 1

    @property
    def expert_params(self) -> float:
        """Parameters of one routed expert, summed over layers (0 for a dense model)."""
        if not self.is_moe:
            return 0.0
        return (self.params - self.active_params) / (self.experts - self.experts_per_token)

    @property
    def shared_params(self) -> float:
        """Parameters every token reads: attention, embeddings, norms, shared experts."""
        return self.active_params - self.experts_per_token * self.expert_params

    def params_read_per_step(self, batch: float) -> float:
        """Weights one decode step reads at a batch: a MoE step reads only the experts its tokens hit."""
        if not self.is_moe:
            return self.params
        untouched_per_expert: float = (1 - self.experts_per_token / self.experts) ** max(batch, 1.0)
        return self.shared_params + self.experts * self.expert_params * (1 - untouched_per_expert)


_H100_TFLOPS = {"bf16": 989.4, "fp8": 1978.9, "int8": 1978.9}

GPUS: dict[str, GpuSpec] = {
    g.key: g
    for g in (
        GpuSpec(
            key="h100-sxm",
            name="NVIDIA H100 SXM 80GB",
            memory_gb=80,
            hbm_tb_per_s=3.35,
            dense_tflops=_H100_TFLOPS,
            nvlink_domain_gpus=8,
            scale_out_gb_per_s=50,  # one 400 Gb/s NDR InfiniBand port per GPU
            source="NVIDIA H100 datasheet (SXM5): 80 GB HBM3, 3.35 TB/s, 989 TFLOP/s BF16 and 1,979 FP8 dense",
            usd_per_gpu_hour=2.50,
            price_source="the capstone's stated reserved price (seeds: 64 H100s at $2.50/GPU-hour)",
        ),
        GpuSpec(
            key="h200",
            name="NVIDIA H200 SXM 141GB",
            memory_gb=141,
            hbm_tb_per_s=4.8,
            dense_tflops=_H100_TFLOPS,
            nvlink_domain_gpus=8,
            scale_out_gb_per_s=50,  # 400 Gb/s NDR per GPU
            source="NVIDIA H200 datasheet: 141 GB HBM3e, 4.8 TB/s; same Hopper tensor cores as H100 SXM",
            usd_per_gpu_hour=3.50,
            price_source="assumed reserved price: the low end of specialty clouds' H200 SXM on-demand range in May 2026 ($3.50-4.50)",
        ),
        GpuSpec(
            key="a100-80gb",
            name="NVIDIA A100 SXM 80GB",
            memory_gb=80,
            hbm_tb_per_s=2.039,
            dense_tflops={"bf16": 312.0, "int8": 624.0},
            nvlink_domain_gpus=8,
            scale_out_gb_per_s=25,  # 200 Gb/s HDR InfiniBand per GPU
            source="NVIDIA A100 datasheet (SXM 80GB): 2,039 GB/s, 312 TFLOP/s BF16, 624 TOP/s INT8 dense; no FP8",
            usd_per_gpu_hour=1.60,
            price_source="variation G's stated reserved price ($1.60 against the H100's $2.50)",
        ),
        GpuSpec(
            key="b200",
            name="NVIDIA B200 (HGX) 180GB",
            memory_gb=180,
            hbm_tb_per_s=7.7,
            dense_tflops={"bf16": 2250.0, "fp8": 4500.0, "int8": 4500.0},
            nvlink_domain_gpus=8,
            scale_out_gb_per_s=50,  # ConnectX-7, 400 Gb/s per GPU
            source="NVIDIA HGX B200 datasheet: 180 GB HBM3e and 7.7 TB/s per GPU, 2.25 PFLOP/s BF16 and 4.5 FP8 dense",
            usd_per_gpu_hour=5.00,
            price_source="assumed reserved price: within neocloud B200 on-demand listings of mid-2026 ($3.75-5.60)",
        ),
        GpuSpec(
            key="mi300x",
            name="AMD Instinct MI300X 192GB",
            memory_gb=192,
            hbm_tb_per_s=5.3,
            dense_tflops={"bf16": 1307.4, "fp8": 2614.9, "int8": 2614.9},
            nvlink_domain_gpus=8,  # Infinity Fabric joins the 8 GPUs of a platform
            scale_out_gb_per_s=50,  # 400 Gb/s NIC per GPU
            source="AMD MI300X datasheet: 192 GB HBM3, 5.3 TB/s, 1,307 TFLOP/s BF16 and 2,615 FP8 dense",
            usd_per_gpu_hour=2.00,
            price_source="assumed reserved price: the median MI300X rental of May 2026 across neoclouds (~$1.99)",
        ),
    )
}


def _llama_70b(key: str, name: str, context: int, source: str) -> ModelSpec:
    return ModelSpec(
        key=key,
        name=name,
        layers=80,
        hidden_size=8192,
        attention_heads=64,
        kv_heads=8,
        head_dim=128,
        params=70.6e9,
        active_params=70.6e9,
        max_context_tokens=context,
        source=source,
    )


MODELS: dict[str, ModelSpec] = {
    m.key: m
    for m in (
        _llama_70b(
            "llama-3-70b",
            "Llama-3-70B",
            8192,
            "Meta Llama 3 model card and config.json: 80 layers, d 8192, 64 heads, 8 KV heads; 70.6e9 params (70.6 GB at FP8)",
        ),
        _llama_70b("llama-3.1-70b", "Llama-3.1-70B", 131_072, "Meta Llama 3.1 config.json: Llama-3-70B architecture, 128k context"),
        _llama_70b("llama-3.3-70b", "Llama-3.3-70B", 131_072, "Meta Llama 3.3 config.json: Llama-3.1-70B architecture, 128k context"),
        ModelSpec(
            key="llama-2-70b",
            name="Llama-2-70B",
            layers=80,
            hidden_size=8192,
            attention_heads=64,
            kv_heads=8,
            head_dim=128,
            params=68.98e9,
            active_params=68.98e9,
            max_context_tokens=4096,
            source="Llama 2 paper and config.json: 80 layers, d 8192, GQA with 8 KV heads, 32k vocab, 69.0e9 params",
        ),
        ModelSpec(
            key="llama-3.1-8b",
            name="Llama-3.1-8B",
            layers=32,
            hidden_size=4096,
            attention_heads=32,
            kv_heads=8,
            head_dim=128,
            params=8.03e9,
            active_params=8.03e9,
            max_context_tokens=131_072,
            source="Meta Llama 3.1 8B config.json: 32 layers, d 4096, 32 heads, 8 KV heads; 8.03e9 params",
        ),
        ModelSpec(
            key="llama-3.1-405b",
            name="Llama-3.1-405B",
            layers=126,
            hidden_size=16_384,
            attention_heads=128,
            kv_heads=8,
            head_dim=128,
            params=405.9e9,
            active_params=405.9e9,
            max_context_tokens=131_072,
            source="Meta Llama 3.1 405B config.json: 126 layers, d 16384, 128 heads, 8 KV heads; 405.9e9 params",
        ),
        ModelSpec(
            key="mixtral-8x7b",
            name="Mixtral-8x7B",
            layers=32,
            hidden_size=4096,
            attention_heads=32,
            kv_heads=8,
            head_dim=128,
            params=46.7e9,
            active_params=12.9e9,
            experts=8,
            experts_per_token=2,
            max_context_tokens=32_768,
            source="Mistral AI Mixtral-8x7B announcement and config.json: 46.7e9 total, 12.9e9 active, 8 experts, top-2",
        ),
        ModelSpec(
            key="qwen3-30b-a3b",
            name="Qwen3-30B-A3B",
            layers=48,
            hidden_size=2048,
            attention_heads=32,
            kv_heads=4,
            head_dim=128,
            params=30.5e9,
            active_params=3.3e9,
            experts=128,
            experts_per_token=8,
            max_context_tokens=32_768,
            source="Qwen3 technical report and config.json: 30.5e9 total, 3.3e9 active, 128 experts, top-8, 4 KV heads",
        ),
    )
}


def gpu_spec(key: str) -> GpuSpec:
    try:
        return GPUS[key]
    except KeyError:
        raise BriefError("hardware.gpu", f"unknown GPU '{key}'; known: {', '.join(GPUS)}") from None


def _from_custom(custom: CustomModel, display_name: str | None) -> ModelSpec:
    return ModelSpec(
        key="custom",
        name=display_name or "custom model",
        layers=custom.layers,
        hidden_size=custom.hidden_size,
        attention_heads=custom.attention_heads,
        kv_heads=custom.kv_heads,
        head_dim=custom.head_dim,
        params=custom.params,
        active_params=custom.active_params or custom.params,
        experts=custom.experts,
        experts_per_token=custom.experts_per_token,
        max_context_tokens=custom.max_context_tokens,
        source="given in the brief",
    )


def model_spec(choice: ModelChoice) -> ModelSpec:
    if choice.name == "custom":
        assert choice.custom is not None  # the brief's validator guarantees it
        return _from_custom(choice.custom, choice.display_name)
    try:
        return MODELS[choice.name]
    except KeyError:
        raise BriefError("model.name", f"unknown model '{choice.name}'; known: {', '.join(MODELS)} or 'custom'") from None


HF_CONFIG_MAX_BYTES = 1_000_000  # a config.json is a few kB
_HF_INT_MAX = 10**13  # larger than any architecture number a brief accepts; keeps the arithmetic finite


def _hf_int(cfg: dict[str, Any], key: str, default: int | None = None, *, minimum: int = 1) -> int:
    """A whole number from a config.json: a JSON integer (or a float with no fraction) in range, else one BriefError naming it."""
    value = cfg.get(key)
    if value is None:
        if default is None:
            raise BriefError(key, "missing (a config.json of a transformer names it)")
        return default
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise BriefError(key, f"{str(value)[:40]!r} is not a whole number")
    if isinstance(value, float) and not (math.isfinite(value) and value.is_integer()):
        raise BriefError(key, f"{value} is not a whole number")
    number = int(value)
    if not minimum <= number <= _HF_INT_MAX:
        shown = f"{number:,}" if abs(number) <= _HF_INT_MAX else f"a {len(str(abs(number)))}-digit number"
        raise BriefError(key, f"{shown} is out of range ({minimum} to {_HF_INT_MAX:.0e})")
    return number


def _estimate_params(cfg: dict[str, Any], layers: int, hidden: int, kv_heads: int, head_dim: int) -> tuple[float, float]:
    """Total and active parameters from a Hugging Face config: attention, MLP (or experts), embeddings."""
    heads = _hf_int(cfg, "num_attention_heads")
    vocab = _hf_int(cfg, "vocab_size", 32_000)
    experts = _hf_int(cfg, "num_local_experts", _hf_int(cfg, "num_experts", 1))
    top_k = _hf_int(cfg, "num_experts_per_tok", 1)
    ffn = _hf_int(cfg, "moe_intermediate_size", _hf_int(cfg, "intermediate_size", 4 * hidden))
    attention = hidden * heads * head_dim * 2 + hidden * kv_heads * head_dim * 2  # q, o and k, v projections
    mlp_one = 3 * hidden * ffn  # gate, up and down projections
    tied = cfg.get("tie_word_embeddings", False) is True
    embeddings = vocab * hidden * (1 if tied else 2)
    total = layers * (attention + experts * mlp_one) + embeddings  # Python ints: exact, never overflow
    active = layers * (attention + top_k * mlp_one) + embeddings
    return float(min(total, _HF_INT_MAX)), float(min(active, _HF_INT_MAX))


def _reject_constant(name: str) -> float:
    raise ValueError(f"{name} is not a number a config.json may hold")


def _hf_config_dict(text: str) -> dict[str, Any]:
    try:
        cfg = json.loads(text, parse_constant=_reject_constant)
    except (json.JSONDecodeError, ValueError, RecursionError) as exc:
        raise BriefError("config.json", f"not valid JSON: {str(exc).splitlines()[0][:120]}") from None
    if not isinstance(cfg, dict):
        raise BriefError("config.json", "not a JSON object of architecture fields")
    return cfg


def model_from_hf_config_text(text: str) -> CustomModel:
    """The architecture in a Hugging Face config.json's text; a bad field raises BriefError naming it (never reads files)."""
    if len(text) > HF_CONFIG_MAX_BYTES:
        raise BriefError("config.json", f"{len(text):,} characters; a config.json is at most {HF_CONFIG_MAX_BYTES:,}")
    cfg = _hf_config_dict(text)
    layers = _hf_int(cfg, "num_hidden_layers")
    hidden = _hf_int(cfg, "hidden_size")
    heads = _hf_int(cfg, "num_attention_heads")
    kv_heads = _hf_int(cfg, "num_key_value_heads", heads)
    head_dim = _hf_int(cfg, "head_dim", max(1, hidden // heads))
    total, active = _estimate_params(cfg, layers, hidden, kv_heads, head_dim)
    experts = _hf_int(cfg, "num_local_experts", _hf_int(cfg, "num_experts", 1))
    try:
        return CustomModel(
            layers=layers,
            hidden_size=hidden,
            attention_heads=heads,
            kv_heads=kv_heads,
            head_dim=head_dim,
            params=total,
            active_params=active if experts > 1 else None,
            experts=experts,
            experts_per_token=_hf_int(cfg, "num_experts_per_tok", 1),
            max_context_tokens=_hf_int(cfg, "max_position_embeddings", 131_072),
        )
    except ValidationError as exc:
        first = exc.errors()[0]
        field = ".".join(str(part) for part in first.get("loc", ())) or "config.json"
        reason = str(first.get("msg", "out of range")).removeprefix("Value error, ")
        raise BriefError(field, f"out of range for a custom model: {reason}") from None


def model_from_hf_config(path: Path | str) -> CustomModel:
    """Read a local Hugging Face config.json (nothing is downloaded) into a custom model: the CLI's path."""
    path = Path(path)
    # a config.json is a few kB: refuse missing paths, devices, FIFOs and huge files before reading them
    try:
        if not path.is_file():
            raise BriefError(str(path), "no such config.json (not a regular file)")
        if path.stat().st_size > HF_CONFIG_MAX_BYTES:
            raise BriefError(str(path), f"config.json is {path.stat().st_size:,} bytes; at most {HF_CONFIG_MAX_BYTES:,}")
        text = path.read_text(encoding="utf-8")
    except OSError as exc:  # a name too long, a permission, a vanished file
        raise BriefError(str(path)[:120], f"cannot read config.json: {exc.strerror or type(exc).__name__}") from None
    except UnicodeDecodeError:
        raise BriefError(str(path), "config.json is not UTF-8 text") from None
    try:
        return model_from_hf_config_text(text)
    except BriefError as exc:
        raise BriefError(str(path), f"{exc.field}: {exc.reason}") from None
