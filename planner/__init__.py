"""The planner: brief in, design out. Pure: no Streamlit, no IO outside the loaders."""

from planner.brief import Brief
from planner.capacity import Binding, Capacity, Demand, Memory
from planner.catalog import GPUS, MODELS, GpuSpec, ModelSpec, model_from_hf_config
from planner.design import Design, Pools, plan
from planner.errors import BriefError
from planner.loader import apply_overrides, brief_to_json, brief_to_toml, load_brief, preset_names
from planner.operating_point import OperatingPoint
from planner.verdict import InfeasibleDesign, Problem, Verdict

__all__ = [
    "GPUS",
    "MODELS",
    "Binding",
    "Brief",
    "BriefError",
    "Capacity",
    "Demand",
    "Design",
    "GpuSpec",
    "InfeasibleDesign",
    "Memory",
    "ModelSpec",
    "OperatingPoint",
    "Pools",
    "Problem",
    "Verdict",
    "apply_overrides",
    "brief_to_json",
    "brief_to_toml",
    "load_brief",
    "model_from_hf_config",
    "plan",
    "preset_names",
]
