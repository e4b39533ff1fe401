"""Published serving measurements as simulator setups: the data the calibration fits and is judged on.

Pure (no Streamlit); `python -m planner plan` never imports it (setups runs the simulator).
"""

from planner.calibration.datasets import DATASETS, DatasetLengths
from planner.calibration.measurements import (
    BUNDLED_CSVS,
    Basis,
    EngineFamily,
    EngineLimits,
    Lengths,
    Load,
    LoadKind,
    Measurement,
    MetricKind,
    measurement_from_row,
    read_csv,
    source_group,
)
from planner.calibration.setups import EngineDefaults, Setup, engine_defaults, metric_of, predict, setup
from planner.calibration.user_files import read_sglang_results, read_user_file, read_vllm_result

__all__ = [
    "BUNDLED_CSVS",
    "DATASETS",
    "Basis",
    "DatasetLengths",
    "EngineDefaults",
    "EngineFamily",
    "EngineLimits",
    "Lengths",
    "Load",
    "LoadKind",
    "Measurement",
    "MetricKind",
    "Setup",
    "engine_defaults",
    "measurement_from_row",
    "metric_of",
    "predict",
    "read_csv",
    "read_sglang_results",
    "read_user_file",
    "read_vllm_result",
    "setup",
    "source_group",
]
