"""The planner: brief in, design out. Pure: no Streamlit, no IO outside the loaders."""

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
