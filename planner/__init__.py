"""The planner: brief in, design out. Pure: no Streamlit, no IO outside the loaders.

Its public names load on first use (PEP 562): `import planner.x` and `python -m planner` pay only for the modules they
reach, and the command line sets the process up before numpy loads (planner.__main__).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from planner.architecture import Architecture, Decision, Pool
    from planner.brief import Brief
    from planner.capacity import Binding, Capacity, Demand, Memory
    from planner.catalog import GPUS, MODELS, GpuSpec, ModelSpec, model_from_hf_config
    from planner.config import Dependency, EngineConfig, Flag
    from planner.core import CoreDesign, core_design
    from planner.cost import CostAnalysis, Lever
    from planner.design import Design, plan
    from planner.errors import BriefError
    from planner.failures import FailureMode, FailureSummary, Scenario
    from planner.loader import apply_overrides, brief_to_json, brief_to_toml, load_brief, preset_names
    from planner.operating_point import OperatingPoint
    from planner.pools import Pools
    from planner.slo import SloBudget, TradeoffPoint, WaterfallStep
    from planner.variations import FigureDiff, Finding, Option, VariationAnalysis, diff_designs
    from planner.verdict import InfeasibleDesign, Problem, Verdict

_EXPORTS = {  # each public name and the module that defines it
    "Architecture": "planner.architecture",
    "Decision": "planner.architecture",
    "Pool": "planner.architecture",
    "Brief": "planner.brief",
    "Binding": "planner.capacity",
    "Capacity": "planner.capacity",
    "Demand": "planner.capacity",
    "Memory": "planner.capacity",
    "GPUS": "planner.catalog",
    "GpuSpec": "planner.catalog",
    "MODELS": "planner.catalog",
    "ModelSpec": "planner.catalog",
    "model_from_hf_config": "planner.catalog",
    "Dependency": "planner.config",
    "EngineConfig": "planner.config",
    "Flag": "planner.config",
    "CoreDesign": "planner.core",
    "core_design": "planner.core",
    "CostAnalysis": "planner.cost",
    "Lever": "planner.cost",
    "Design": "planner.design",
    "plan": "planner.design",
    "BriefError": "planner.errors",
    "FailureMode": "planner.failures",
    "FailureSummary": "planner.failures",
    "Scenario": "planner.failures",
    "apply_overrides": "planner.loader",
    "brief_to_json": "planner.loader",
    "brief_to_toml": "planner.loader",
    "load_brief": "planner.loader",
    "preset_names": "planner.loader",
    "OperatingPoint": "planner.operating_point",
    "Pools": "planner.pools",
    "SloBudget": "planner.slo",
    "TradeoffPoint": "planner.slo",
    "WaterfallStep": "planner.slo",
    "FigureDiff": "planner.variations",
    "Finding": "planner.variations",
    "Option": "planner.variations",
    "VariationAnalysis": "planner.variations",
    "diff_designs": "planner.variations",
    "InfeasibleDesign": "planner.verdict",
    "Problem": "planner.verdict",
    "Verdict": "planner.verdict",
}


__all__ = [
    "GPUS",
    "MODELS",
    "Architecture",
    "Binding",
    "Brief",
    "BriefError",
    "Capacity",
    "CoreDesign",
    "CostAnalysis",
    "Decision",
    "Demand",
    "Dependency",
    "Design",
    "EngineConfig",
    "FailureMode",
    "FailureSummary",
    "FigureDiff",
    "Finding",
    "Flag",
    "GpuSpec",
    "InfeasibleDesign",
    "Lever",
    "Memory",
    "ModelSpec",
    "OperatingPoint",
    "Option",
    "Pool",
    "Pools",
    "Problem",
    "Scenario",
    "SloBudget",
    "TradeoffPoint",
    "VariationAnalysis",
    "Verdict",
    "WaterfallStep",
    "apply_overrides",
    "brief_to_json",
    "brief_to_toml",
    "core_design",
    "diff_designs",
    "load_brief",
    "model_from_hf_config",
    "plan",
    "preset_names",
]


def __getattr__(name: str) -> Any:
    """A public name, imported from its module on first use (then kept as a plain attribute)."""
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'planner' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
