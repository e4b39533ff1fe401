"""LoRA adapters: the memory they take on each GPU, and what the verdict says about them.

Every resource a brief names is checked against the GPU's memory: adapters that do not fit beside the
weights and the reserve make the design infeasible (a verdict, not a figure nobody reads), whether or not
the brief poses variation C. The adapter cache, its misses, routing and the engine options are
planner.lora_serving's; LoRA fields set without adapters are reported instead of dropped silently.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

from planner.brief import Brief, Lora, LoraModules
from planner.catalog import ModelSpec
from planner.fmt import num
from planner.trusted import trusted
from planner.verdict import Problem

__all__ = ["SGMV_KERNEL_US", "LoraMemory", "lora_check", "lora_kernels", "lora_memory", "lora_slots"]

ADAPTER_BYTES_PER_PARAM = 2  # adapters stay in BF16
# One segmented-gather kernel (Punica's SGMV shrink or expand) at serving batch sizes: Punica adds ~2 ms a decode step
# on a 7B model on A100 (Chen et al. 2024, abstract) over 32 layers x 7 adapted projections x 2 kernels = 448 kernels,
# 4.5 us each; taken as 3 us on H100-class GPUs in CUDA graphs (calibrated, not measured here), which with the
# adapters' reads and FLOPs puts the lora-platform preset at ~8% and variation C at ~13% of a decode step, inside the
# 5-15% S-LoRA and Punica measure.
SGMV_KERNEL_US = 3.0


class LoraMemory(BaseModel):
    """The adapters of one replica: parameters each, GB each, GB all, GB per GPU (split over TP and the PP stages)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    modules: str  # "q, v" or "q, k, v, o"
    widths_per_layer: int  # in + out widths of the adapted projections of one layer
    params_per_adapter: float
    gb_per_adapter: float
    gb_per_replica: float
    gb_per_gpu: float


def lora_memory(lora: Lora, model: ModelSpec, tp: int, groups: int = 1, *, pp: int = 1) -> LoraMemory:
    """An adapter's size and where it sits: split over a TP group's GPUs and over the `pp` pipeline stages (a stage
    holds only its own layers' adapters), one copy in each of the replica's `groups` attention groups (DP attention:
    each DP rank is an engine with its own adapters)."""
    hidden, kv_dim = model.hidden_size, model.kv_heads * model.head_dim
    widths = (hidden + hidden) + (hidden + kv_dim)  # q: hidden -> hidden, v: hidden -> kv
    modules = "q, v"
    if lora.modules is LoraModules.qkvo:
        widths += (hidden + kv_dim) + (hidden + hidden)  # k and o
        modules = "q, k, v, o"
    params = float(lora.rank * widths * model.layers)  # A (d_in x r) + B (r x d_out) per module
    gb_each = params * ADAPTER_BYTES_PER_PARAM / 1e9
    total = gb_each * lora.adapters
    return trusted(
        LoraMemory,
        modules=modules,
        widths_per_layer=widths,
        params_per_adapter=params,
        gb_per_adapter=gb_each,
        gb_per_replica=total * groups,
        gb_per_gpu=total / tp / pp,  # a TP group's share of one stage's layers
    )


def lora_slots(lora: Lora) -> int:
    """Adapters resident on a replica's GPU that a step's sequences draw from: --max-loras, else every adapter."""
    return min(lora.max_loras, lora.adapters) if lora.max_loras > 0 else lora.adapters


def lora_kernels(lora: Lora, model: ModelSpec) -> int:
    """Segmented kernels a step launches: a shrink and an expand per adapted projection, every layer."""
    projections = 4 if lora.modules is LoraModules.qkvo else 2
    return 2 * projections * model.layers


_NO_LORA = Lora()  # the section a brief without adapters leaves out


def lora_check(brief: Brief, model: ModelSpec, tp: int, pp: int, kv_gb_per_gpu: float) -> tuple[bool, tuple[Problem, ...]]:
    """(whether the adapters fit in the memory the weights and the reserve leave, the problems to report): adapters
    that do not fit, and LoRA fields the design does not use. A GPU holds its TP share of its stage's layers."""
    lora = brief.lora
    fits, problems = True, []
    if lora.adapters > 0:
        resident = lora.model_copy(update={"adapters": min(lora.adapters, lora.max_loras or lora.adapters)})
        mem = lora_memory(resident, model, tp, pp=pp)  # the GPU holds its slots' adapters (all of them without --max-loras)
        if mem.gb_per_gpu >= kv_gb_per_gpu:
            fits = False
            most = int(kv_gb_per_gpu * tp * pp / mem.gb_per_adapter) if mem.gb_per_adapter > 0 else 0
            problems.append(
                Problem(
                    field="lora.adapters",
                    problem=(
                        f"{resident.adapters:,} GPU-resident adapters of rank {lora.rank} take {num(mem.gb_per_gpu, 'GB')} per GPU,"
                        f" more than the {num(kv_gb_per_gpu, 'GB')} the weights and the reserve leave for them and the KV cache"
                    ),
                    change=f"serve fewer adapters (under {most:,} fit with no room for KV), lower the rank, raise TP or PP, or page adapters in from host memory",
                )
            )
    if lora.adapters == 0 and lora != _NO_LORA:
        problems.append(
            Problem(
                field="lora",
                problem="the LoRA fields have no effect: lora.adapters is 0",
                change="set lora.adapters to the adapters served, or leave the lora section out",
            )
        )
    return fits, tuple(problems)
