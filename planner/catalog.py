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
from planner.textfile import read_text_file

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
    interconnect_gb_per_s: float = Field(
        description="Scale-up (NVLink / Infinity Fabric) bandwidth per GPU, one direction (GB/s): what a tensor-parallel all-reduce moves bytes at."
    )
    generation: str = Field(
        description="Architecture generation (ampere, ada, hopper, blackwell, cdna3, xe2): what its tensor cores run natively."
    )
    scale_up_domain: str = Field(
        default="scale-up domain",
        description="What joins a node's GPUs for tensor parallelism, as the vendor names it (e.g. 'NVSwitch domain',"
        " 'Infinity Fabric mesh', 'PCIe server without NVLink'): the words of the TP decision.",
    )
    matrix_units: str = Field(
        default="matrix units",
        description="The vendor's name for the units that run the GEMMs (NVIDIA: tensor cores; AMD: matrix cores; Intel: XMX engines).",
    )
    source: str
    usd_per_gpu_hour: float | None = Field(
        default=None, description="Reference price of one GPU-hour, reserved ($): what the design search prices this GPU at."
    )
    price_source: str = ""

    def peak_tflops(self, precision: str) -> float:
        """Dense peak for a math precision; a GPU without it (A100 and fp8) runs at its bf16 peak."""
        return self.dense_tflops.get(precision, self.dense_tflops["bf16"])

    def runs_natively(self, precision: str) -> bool:
        """Whether the tensor cores compute in this precision (else the engine dequantizes to bf16: weight-only)."""
        return precision in self.dense_tflops


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
    vocab_size: int = Field(default=0, description="Vocabulary size: the LM head's rows (0 = not known: counted with the other weights).")
    tied_embeddings: bool = Field(default=False, description="Whether the LM head shares the input embedding's weights.")
    kv_lora_rank: int = Field(
        default=0, description="Multi-head latent attention (MLA): width of the compressed KV per token and layer (0 = standard GQA)."
    )
    qk_rope_head_dim: int = Field(default=0, description="MLA: the decoupled rotary key's width, stored beside the compressed KV.")
    sliding_window_layers: int = Field(
        default=0,
        description="Layers whose attention sees only the last sliding_window_tokens (sliding or chunked local attention; 0 = none).",
    )
    sliding_window_tokens: int = Field(
        default=0, description="Window of those layers (tokens): the KV such a layer keeps per sequence is at most this."
    )
    source: str
    hf_repo: str = Field(
        default="",
        description="The Hugging Face repo id (or local model directory) the engine loads: vllm serve <hf_repo> (empty: a custom model given none).",
    )
    dense_layers: int = Field(
        default=0, description="MoE models: leading layers with a dense MLP instead of routed experts (DeepSeek's first_k_dense_replace)."
    )

    @property
    def is_moe(self) -> bool:
        return self.experts > 1

    @property
    def moe_layers(self) -> int:
        """Layers whose MLP is routed experts: each sends its tokens out and back by all-to-all under expert parallelism."""
        return self.layers - self.dense_layers if self.is_moe else 0

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
            interconnect_gb_per_s=450,  # NVLink 4: 900 GB/s both directions
            generation="hopper",
            scale_up_domain="NVSwitch domain",  # HGX H100: four third-generation NVSwitch chips join the 8 GPUs
            matrix_units="tensor cores",
            source="NVIDIA H100 datasheet (SXM5): 80 GB HBM3, 3.35 TB/s, 989 TFLOP/s BF16 and 1,979 FP8 dense, NVLink 900 GB/s",
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
            interconnect_gb_per_s=450,  # NVLink 4: 900 GB/s both directions
            generation="hopper",
            scale_up_domain="NVSwitch domain",  # HGX H200: NVSwitch, as HGX H100
            matrix_units="tensor cores",
            source="NVIDIA H200 datasheet: 141 GB HBM3e, 4.8 TB/s, NVLink 900 GB/s; same Hopper tensor cores as H100 SXM",
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
            interconnect_gb_per_s=300,  # NVLink 3: 600 GB/s both directions
            generation="ampere",
            scale_up_domain="NVSwitch domain",  # HGX A100: six second-generation NVSwitch chips join the 8 GPUs
            matrix_units="tensor cores",
            source="NVIDIA A100 datasheet (SXM 80GB): 2,039 GB/s, 312 TFLOP/s BF16, 624 TOP/s INT8 dense, NVLink 600 GB/s; no FP8",
            usd_per_gpu_hour=1.60,
            price_source="variation G's stated reserved price ($1.60 against the H100's $2.50)",
        ),
        GpuSpec(
            key="b200",
            name="NVIDIA B200 (HGX) 180GB",
            memory_gb=180,
            hbm_tb_per_s=7.7,
            dense_tflops={"bf16": 2250.0, "fp8": 4500.0, "int8": 4500.0, "fp4": 9000.0},
            nvlink_domain_gpus=8,
            scale_out_gb_per_s=50,  # ConnectX-7, 400 Gb/s per GPU
            interconnect_gb_per_s=900,  # NVLink 5: 1.8 TB/s both directions
            generation="blackwell",
            scale_up_domain="NVSwitch domain",  # HGX B200: two NVLink 5 switch chips join the 8 GPUs
            matrix_units="tensor cores",
            source="NVIDIA HGX B200 datasheet: 180 GB HBM3e and 7.7 TB/s per GPU, 2.25 PFLOP/s BF16, 4.5 FP8 and 9 FP4 dense, NVLink 1.8 TB/s",
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
            interconnect_gb_per_s=448,  # 7 Infinity Fabric links x 64 GB/s each way to the other GPUs
            generation="cdna3",
            scale_up_domain="Infinity Fabric mesh",  # AMD MI300X platform: each GPU links point to point to the other 7 (no switch)
            matrix_units="matrix cores",  # AMD CDNA 3 Matrix Cores (AMD's name; NVIDIA's are tensor cores)
            source="AMD MI300X datasheet: 192 GB HBM3, 5.3 TB/s, 1,307 TFLOP/s BF16 and 2,615 FP8 dense, 896 GB/s Infinity Fabric peer bandwidth",
            usd_per_gpu_hour=2.00,
            price_source="assumed reserved price: the median MI300X rental of May 2026 across neoclouds (~$1.99)",
        ),
        GpuSpec(
            key="mi325x",
            name="AMD Instinct MI325X 256GB",
            memory_gb=256,
            hbm_tb_per_s=6.0,
            dense_tflops={"bf16": 1307.4, "fp8": 2614.9, "int8": 2614.9},  # the MI300X's CDNA 3 compute die, more HBM
            nvlink_domain_gpus=8,  # Infinity Fabric joins the 8 GPUs of a platform
            scale_out_gb_per_s=50,  # 400 Gb/s NIC per GPU
            interconnect_gb_per_s=448,  # 7 Infinity Fabric links x 64 GB/s each way, as on MI300X
            generation="cdna3",
            scale_up_domain="Infinity Fabric mesh",  # as the MI300X platform
            matrix_units="matrix cores",  # AMD CDNA 3 Matrix Cores
            source="AMD Instinct MI325X datasheet: 256 GB HBM3E, 6.0 TB/s, 1,307.4 TFLOP/s BF16 and 2,614.9 FP8 dense, 896 GB/s Infinity Fabric peer bandwidth",
        ),
        GpuSpec(
            key="l40s",
            name="NVIDIA L40S 48GB (PCIe)",
            memory_gb=48,
            hbm_tb_per_s=0.864,  # GDDR6, not HBM: the field is the memory bandwidth
            dense_tflops={"bf16": 362.05, "fp8": 733.0, "int8": 733.0},
            nvlink_domain_gpus=8,  # no NVLink: the 8 GPUs of a server share PCIe, which carries the all-reduce
            scale_out_gb_per_s=25,  # 200 Gb/s per GPU, typical of L40S servers
            interconnect_gb_per_s=32,  # PCIe Gen4 x16: 64 GB/s both directions
            generation="ada",
            scale_up_domain="PCIe server without NVLink",
            matrix_units="tensor cores",
            source="NVIDIA L40S datasheet: 48 GB GDDR6, 864 GB/s, 362.05 TFLOP/s BF16 and 733 FP8 dense (1,466 with sparsity), PCIe Gen4 x16 (64 GB/s both directions), no NVLink",
        ),
        GpuSpec(
            key="gh200",
            name="NVIDIA GH200 96GB (Grace Hopper)",
            memory_gb=96,
            hbm_tb_per_s=4.0,
            dense_tflops=_H100_TFLOPS,  # the H100's Hopper GPU
            nvlink_domain_gpus=1,  # one superchip per node (NVL2 boards join two)
            scale_out_gb_per_s=50,  # 400 Gb/s NDR per superchip
            interconnect_gb_per_s=450,  # NVLink 4: 900 GB/s both directions (NVLink-C2C to Grace is separate)
            generation="hopper",
            scale_up_domain="NVLink domain",  # one superchip's Hopper GPU (NVL2 boards join two by NVLink)
            matrix_units="tensor cores",
            source="NVIDIA GH200 Grace Hopper Superchip datasheet: 96 GB HBM3, 4 TB/s, 989 TFLOP/s BF16 and 1,979 FP8 dense (H100 tensor cores), NVLink 900 GB/s",
        ),
        GpuSpec(
            key="gb200",
            name="NVIDIA GB200 (per Blackwell GPU, NVL72)",
            memory_gb=186,  # what the engine sees (MLPerf 'GB200-186GB'); 192 GB nominal
            hbm_tb_per_s=8.0,
            dense_tflops={"bf16": 2500.0, "fp8": 5000.0, "int8": 5000.0, "fp4": 10000.0},
            nvlink_domain_gpus=72,
            scale_out_gb_per_s=50,  # one 400 Gb/s ConnectX-7 per GPU in a compute tray
            interconnect_gb_per_s=900,  # NVLink 5: 1.8 TB/s both directions
            generation="blackwell",
            scale_up_domain="NVLink Switch domain",  # NVL72: nine NVLink Switch trays join the 72 GPUs
            matrix_units="tensor cores",
            source="NVIDIA GB200 NVL72 datasheet divided by its 72 GPUs: 13.4 TB HBM3e (186 GB usable each), 576 TB/s (8 TB/s each), 360/720/1,440 PFLOP/s BF16/FP8/FP4 with sparsity (2.5/5/10 PFLOP/s dense each), NVLink 5 1.8 TB/s per GPU",
        ),
        GpuSpec(
            key="rtx-pro-6000",
            name="NVIDIA RTX PRO 6000 Blackwell Server Edition 96GB",
            memory_gb=96,
            hbm_tb_per_s=1.792,  # GDDR7: 512-bit x 28 Gb/s
            dense_tflops={"bf16": 500.0, "fp8": 1000.0, "int8": 1000.0, "fp4": 2000.0},  # 4,000 FP4 TOPS sparse, halved per step
            nvlink_domain_gpus=8,  # no NVLink: the 8 GPUs of a server share PCIe
            scale_out_gb_per_s=50,  # 400 Gb/s per GPU in RTX PRO servers
            interconnect_gb_per_s=64,  # PCIe Gen5 x16: 128 GB/s both directions
            generation="blackwell",
            scale_up_domain="PCIe server without NVLink",
            matrix_units="tensor cores",
            source="NVIDIA RTX PRO 6000 Blackwell: 96 GB GDDR7 on a 512-bit bus at 28 Gb/s (1,792 GB/s), 4,000 AI TOPS (FP4 with sparsity: 2,000 dense FP4, 1,000 FP8, 500 BF16), PCIe Gen5 x16, no NVLink",
        ),
        GpuSpec(
            key="arc-pro-b60",
            name="Intel Arc Pro B60 24GB",
            memory_gb=24,
            hbm_tb_per_s=0.456,  # GDDR6: 192-bit x 19 Gb/s
            dense_tflops={"bf16": 98.5, "int8": 197.0},  # XMX engines: BF16 at half the INT8 rate; no FP8 or FP4 math
            nvlink_domain_gpus=8,  # no GPU link: the GPUs of a workstation share PCIe
            scale_out_gb_per_s=12.5,  # 100 Gb/s Ethernet, typical of Arc Pro workstations
            interconnect_gb_per_s=32,  # PCIe 5.0 x8: 64 GB/s both directions
            generation="xe2",
            scale_up_domain="PCIe workstation without a GPU link",
            matrix_units="XMX engines",  # Xe2's Xe Matrix eXtensions
            source="Intel Arc Pro B60 product brief: 20 Xe2 cores, 160 XMX engines, up to 197 TOPS INT8 (98.5 TFLOP/s BF16), 24 GB GDDR6 at 456 GB/s (as vLLM's Arc Pro B-series post states), PCIe 5.0 x8",
        ),
    )
}


def _llama_70b(key: str, name: str, context: int, source: str, hf_repo: str) -> ModelSpec:
    return ModelSpec(
        key=key,
        name=name,
        hf_repo=hf_repo,
        layers=80,
        hidden_size=8192,
        attention_heads=64,
        kv_heads=8,
        head_dim=128,
        params=70.6e9,
        active_params=70.6e9,
        max_context_tokens=context,
        vocab_size=128_256,
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
            "meta-llama/Meta-Llama-3-70B-Instruct",
        ),
        _llama_70b(
            "llama-3.1-70b",
            "Llama-3.1-70B",
            131_072,
            "Meta Llama 3.1 config.json: Llama-3-70B architecture, 128k context",
            "meta-llama/Llama-3.1-70B-Instruct",
        ),
        _llama_70b(
            "llama-3.3-70b",
            "Llama-3.3-70B",
            131_072,
            "Meta Llama 3.3 config.json: Llama-3.1-70B architecture, 128k context",
            "meta-llama/Llama-3.3-70B-Instruct",
        ),
        ModelSpec(
            key="llama-2-70b",
            hf_repo="meta-llama/Llama-2-70b-chat-hf",
            name="Llama-2-70B",
            layers=80,
            hidden_size=8192,
            attention_heads=64,
            kv_heads=8,
            head_dim=128,
            params=68.98e9,
            active_params=68.98e9,
            max_context_tokens=4096,
            vocab_size=32_000,
            source="Llama 2 paper and config.json: 80 layers, d 8192, GQA with 8 KV heads, 32k vocab, 69.0e9 params",
        ),
        ModelSpec(
            key="llama-3.1-8b",
            hf_repo="meta-llama/Llama-3.1-8B-Instruct",
            name="Llama-3.1-8B",
            layers=32,
            hidden_size=4096,
            attention_heads=32,
            kv_heads=8,
            head_dim=128,
            params=8.03e9,
            active_params=8.03e9,
            max_context_tokens=131_072,
            vocab_size=128_256,
            source="Meta Llama 3.1 8B config.json: 32 layers, d 4096, 32 heads, 8 KV heads; 8.03e9 params",
        ),
        ModelSpec(
            key="llama-3.1-405b",
            hf_repo="meta-llama/Llama-3.1-405B-Instruct",
            name="Llama-3.1-405B",
            layers=126,
            hidden_size=16_384,
            attention_heads=128,
            kv_heads=8,
            head_dim=128,
            params=405.9e9,
            active_params=405.9e9,
            max_context_tokens=131_072,
            vocab_size=128_256,
            source="Meta Llama 3.1 405B config.json: 126 layers, d 16384, 128 heads, 8 KV heads; 405.9e9 params",
        ),
        ModelSpec(
            key="mixtral-8x7b",
            hf_repo="mistralai/Mixtral-8x7B-Instruct-v0.1",
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
            vocab_size=32_000,
            source="Mistral AI Mixtral-8x7B announcement and config.json: 46.7e9 total, 12.9e9 active, 8 experts, top-2",
        ),
        ModelSpec(
            key="qwen3-30b-a3b",
            hf_repo="Qwen/Qwen3-30B-A3B",
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
            vocab_size=151_936,
            source="Qwen3 technical report and config.json: 30.5e9 total, 3.3e9 active, 128 experts, top-8, 4 KV heads",
        ),
        ModelSpec(
            key="llama-2-7b",
            hf_repo="meta-llama/Llama-2-7b-chat-hf",
            name="Llama-2-7B",
            layers=32,
            hidden_size=4096,
            attention_heads=32,
            kv_heads=32,
            head_dim=128,
            params=6.74e9,
            active_params=6.74e9,
            max_context_tokens=4096,
            vocab_size=32_000,
            source="Llama 2 paper and config.json: 32 layers, d 4096, 32 heads (no GQA), 32k vocab, 6.74e9 params",
        ),
        ModelSpec(
            key="llama-2-13b",
            hf_repo="meta-llama/Llama-2-13b-chat-hf",
            name="Llama-2-13B",
            layers=40,
            hidden_size=5120,
            attention_heads=40,
            kv_heads=40,
            head_dim=128,
            params=13.02e9,
            active_params=13.02e9,
            max_context_tokens=4096,
            vocab_size=32_000,
            source="Llama 2 paper and config.json: 40 layers, d 5120, 40 heads (no GQA), 32k vocab, 13.0e9 params",
        ),
        ModelSpec(
            key="mistral-7b",
            hf_repo="mistralai/Mistral-7B-Instruct-v0.1",
            name="Mistral-7B",
            layers=32,
            hidden_size=4096,
            attention_heads=32,
            kv_heads=8,
            head_dim=128,
            params=7.24e9,
            active_params=7.24e9,
            max_context_tokens=32_768,
            vocab_size=32_000,
            sliding_window_layers=32,
            sliding_window_tokens=4096,
            source="Mistral-7B-v0.1 config.json: 32 layers, d 4096, 32 heads, 8 KV heads, sliding window 4,096 on every layer; 7.24e9 params",
        ),
        ModelSpec(
            key="gpt-oss-20b",
            hf_repo="openai/gpt-oss-20b",
            name="gpt-oss-20b",
            layers=24,
            hidden_size=2880,
            attention_heads=64,
            kv_heads=8,
            head_dim=64,
            params=20.91e9,
            active_params=3.61e9,
            experts=32,
            experts_per_token=4,
            max_context_tokens=131_072,
            vocab_size=201_088,
            sliding_window_layers=12,
            sliding_window_tokens=128,
            source="openai/gpt-oss-20b config.json and model card: 24 layers (sliding 128-token and full attention alternate), d 2880, 64 heads of 64, 8 KV heads,"
            " 32 experts, top-4, 201,088 vocab; 20.9e9 total, 3.6e9 active; experts MXFP4, attention and embeddings BF16",
        ),
        ModelSpec(
            key="gpt-oss-120b",
            hf_repo="openai/gpt-oss-120b",
            name="gpt-oss-120b",
            layers=36,
            hidden_size=2880,
            attention_heads=64,
            kv_heads=8,
            head_dim=64,
            params=116.83e9,
            active_params=5.13e9,
            experts=128,
            experts_per_token=4,
            max_context_tokens=131_072,
            vocab_size=201_088,
            sliding_window_layers=18,
            sliding_window_tokens=128,
            source="openai/gpt-oss-120b config.json and model card: 36 layers (sliding 128-token and full attention alternate), d 2880, 64 heads of 64, 8 KV heads,"
            " 128 experts, top-4, 201,088 vocab; 116.8e9 total, 5.1e9 active; experts MXFP4, attention and embeddings BF16",
        ),
        ModelSpec(
            key="llama-4-maverick",
            hf_repo="meta-llama/Llama-4-Maverick-17B-128E-Instruct",
            name="Llama-4-Maverick-17B-128E",
            layers=48,
            hidden_size=5120,
            attention_heads=40,
            kv_heads=8,
            head_dim=128,
            params=400e9,
            active_params=17e9,
            experts=128,
            experts_per_token=1,
            max_context_tokens=1_048_576,
            vocab_size=202_048,
            sliding_window_layers=36,
            sliding_window_tokens=8192,
            source="meta-llama/Llama-4-Maverick-17B-128E config.json (text_config) and model card: 48 layers, d 5120, 40 heads, 8 KV heads, 128 routed experts top-1"
            " plus a shared expert on every other layer, 202,048 vocab, chunked attention (8,192) on 3 of 4 layers; 400e9 total, 17e9 active",
        ),
        ModelSpec(
            key="deepseek-r1",
            hf_repo="deepseek-ai/DeepSeek-R1",
            name="DeepSeek-R1",
            layers=61,
            hidden_size=7168,
            attention_heads=128,
            kv_heads=128,
            head_dim=128,  # v_head_dim; queries and keys are 128 + 64 rotary wide
            params=671e9,
            active_params=37e9,
            experts=256,
            experts_per_token=8,
            max_context_tokens=163_840,
            vocab_size=129_280,
            kv_lora_rank=512,
            qk_rope_head_dim=64,
            dense_layers=3,
            source="deepseek-ai/DeepSeek-R1 config.json and DeepSeek-V3 report: 61 layers (first_k_dense_replace 3: 3 dense, 58 MoE), d 7168, 128 heads,"
            " MLA kv_lora_rank 512 + qk_rope_head_dim 64, 256 routed experts (moe_intermediate_size 2048) top-8 + 1 shared, 129,280 vocab;"
            " 671e9 total (685e9 with the MTP module), 37e9 active",
        ),
        ModelSpec(
            key="deepseek-v3",
            hf_repo="deepseek-ai/DeepSeek-V3",
            name="DeepSeek-V3",
            layers=61,
            hidden_size=7168,
            attention_heads=128,
            kv_heads=128,
            head_dim=128,  # v_head_dim; queries and keys are 128 + 64 rotary wide
            params=671e9,
            active_params=37e9,
            experts=256,
            experts_per_token=8,
            max_context_tokens=163_840,
            vocab_size=129_280,
            kv_lora_rank=512,
            qk_rope_head_dim=64,
            dense_layers=3,
            source="deepseek-ai/DeepSeek-V3 config.json and technical report (arXiv 2412.19437): the R1 architecture (R1 is V3 post-trained):"
            " 61 layers (3 dense), d 7168, 128 heads, MLA kv_lora_rank 512 + rope 64, 256 routed experts top-8 + 1 shared; 671e9 total, 37e9 active",
        ),
        ModelSpec(
            key="falcon-180b",
            hf_repo="tiiuae/falcon-180B-chat",
            name="Falcon-180B",
            layers=80,
            hidden_size=14_848,
            attention_heads=232,
            kv_heads=8,
            head_dim=64,
            params=178.6e9,
            active_params=178.6e9,
            max_context_tokens=2048,
            vocab_size=65_024,
            tied_embeddings=True,
            source="tiiuae/falcon-180B config.json: 80 layers, d 14848, 232 heads of 64, 8 KV heads, 4d MLP, 65,024 vocab tied;"
            " 178.6e9 params from those (the model card rounds to 180B)",
        ),
        ModelSpec(
            key="internlm-20b",
            hf_repo="internlm/internlm-chat-20b",
            name="InternLM-20B",
            layers=60,
            hidden_size=5120,
            attention_heads=40,
            kv_heads=40,
            head_dim=128,
            params=20.09e9,
            active_params=20.09e9,
            max_context_tokens=4096,
            vocab_size=103_168,
            source="internlm/internlm-20b config.json: 60 layers, d 5120, 40 heads (no GQA), MLP 13,824, 103,168 vocab; 20.1e9 params from those",
        ),
    )
}


def gpu_spec(key: str) -> GpuSpec:
    try:
        return GPUS[key]
    except KeyError:
        raise BriefError("hardware.gpu", f"unknown GPU '{key}'; known: {', '.join(GPUS)}") from None


def _from_custom(custom: CustomModel, display_name: str | None, hf_repo: str | None) -> ModelSpec:
    return ModelSpec(
        key="custom",
        name=display_name or "custom model",
        hf_repo=hf_repo or "",
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
        return _from_custom(choice.custom, choice.display_name, choice.hf_repo)
    try:
        spec = MODELS[choice.name]
    except KeyError:
        raise BriefError("model.name", f"unknown model '{choice.name}'; known: {', '.join(MODELS)} or 'custom'") from None
    return spec.model_copy(update={"hf_repo": choice.hf_repo}) if choice.hf_repo else spec


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
    text = read_text_file(path, HF_CONFIG_MAX_BYTES, "a config.json")
    try:
        return model_from_hf_config_text(text)
    except BriefError as exc:
        raise BriefError(str(path), f"{exc.field}: {exc.reason}") from None
