"""The design space a search walks: one list of values per axis, each axis a brief path.

    default_space(brief)          every catalog GPU with a price, every TP that fits a node and the KV heads,
                                  every weight and KV precision, max-num-seqs and max-num-batched-tokens at half,
                                  once and twice the brief's, and fleets of 1 to about twice the brief's nodes
    space_from_toml(text, brief)  a space file: each axis it names replaces the default's values

A candidate is one value per axis. Its overrides (brief path -> value, the GPU's price included) applied to the
brief give the design: `plan BRIEF --set path=value ...` with them reproduces it.
"""

from __future__ import annotations

import math
import tomllib
from collections.abc import Iterator, Mapping
from itertools import product
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict

from planner.brief import MAX_NODES, Brief, KvPrecision, Precision
from planner.catalog import GPUS, model_spec
from planner.core import fewest_nodes
from planner.errors import BriefError
from planner.operating_point import SEQS_STEP
from planner.textfile import read_text_file

__all__ = [
    "AXES",
    "LONG_CONTEXT_PATH",
    "PRICE_PATH",
    "REPLICA_AXES",
    "SearchSpace",
    "default_space",
    "load_space",
    "space_from_toml",
]

# Axis name in a space file -> the brief path it sets.
AXES: dict[str, str] = {
    "gpu": "hardware.gpu",
    "tp": "deployment.tp",
    "weights": "deployment.weights",
    "kv_cache": "deployment.kv_cache",
    "max_num_seqs": "deployment.max_num_seqs",
    "max_num_batched_tokens": "deployment.max_num_batched_tokens",
    "nodes": "hardware.nodes",
}
REPLICA_AXES = tuple(a for a in AXES if a != "nodes")  # what one replica is; the node counts share it
PRICE_PATH = "cost.usd_per_gpu_hour"
LONG_CONTEXT_PATH = "deployment.long_context_nodes"  # not an axis: the search sizes that pool for each replica
PRICES_TABLE = "usd_per_gpu_hour"  # the space file's table of GPU prices
MAX_SPACE_FILE_BYTES = 100_000
MAX_AXIS_VALUES = 512
_DEFAULT_NODE_STEPS = 40  # the default nodes axis lists every count up to this, then this many counts spread evenly


class SearchSpace(BaseModel):
    """The values of each axis, and the price of each GPU in it ($ per GPU-hour)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    gpu: tuple[str, ...]
    tp: tuple[int, ...]
    weights: tuple[str, ...]
    kv_cache: tuple[str, ...]
    max_num_seqs: tuple[int, ...]
    max_num_batched_tokens: tuple[int, ...]
    nodes: tuple[int, ...]
    usd_per_gpu_hour: dict[str, float]

    @property
    def size(self) -> int:
        """Candidates in the space: the product of the axes' lengths."""
        return math.prod(len(getattr(self, axis)) for axis in AXES)

    def replicas(self) -> Iterator[dict[str, Any]]:
        """Every replica configuration (one value per axis but nodes), in a fixed order."""
        for values in product(*(getattr(self, axis) for axis in REPLICA_AXES)):
            yield dict(zip(REPLICA_AXES, values, strict=True))

    def overrides(self, replica: Mapping[str, Any], nodes: int, long_context_nodes: int | None = None) -> dict[str, Any]:
        """The brief paths and values of one candidate, its GPU's price included, and the long-context pool the search
        sized for its replica (None: the brief's pool as it is)."""
        changes = {AXES[axis]: value for axis, value in replica.items()}
        changes[AXES["nodes"]] = nodes
        changes[PRICE_PATH] = self.usd_per_gpu_hour[replica["gpu"]]
        if long_context_nodes is not None:
            changes[LONG_CONTEXT_PATH] = long_context_nodes
        return changes

    def as_table(self) -> dict[str, list[Any]]:
        return {axis: list(getattr(self, axis)) for axis in AXES}


def _valid_tps(brief: Brief) -> tuple[int, ...]:
    """TP degrees that split a node's GPUs and the model's KV heads evenly (planner.replica's rule)."""
    per_node, kv_heads = brief.hardware.gpus_per_node, model_spec(brief.model).kv_heads
    return tuple(tp for tp in range(1, per_node + 1) if per_node % tp == 0 and kv_heads % tp == 0)


def _around(value: int, low: int, high: int, step: int = 1) -> tuple[int, ...]:
    """Half, once and twice a value (rounded to `step`), kept in [low, high]."""
    half = max(low, (value // 2) // step * step or step)
    return tuple(sorted({v for v in (half, value, value * 2) if low <= v <= high}))


def _default_nodes(brief: Brief) -> tuple[int, ...]:
    """1 to twice the larger of the brief's fleet and the fewest nodes its sizing needs: every count up to
    _DEFAULT_NODE_STEPS, then that many counts spread evenly (the brief's own count always in). Where the brief's own
    replica cannot be sized (it cannot be built: its weights do not fit, say), there is no need to read: every count up
    to _DEFAULT_NODE_STEPS or twice the brief's fleet, not counts spread up to MAX_NODES, thousands of nodes apart."""
    need = fewest_nodes(brief)
    own = brief.hardware.nodes
    top = min(MAX_NODES, 2 * max(own, need)) if need < MAX_NODES else max(2 * own, _DEFAULT_NODE_STEPS)
    if top <= _DEFAULT_NODE_STEPS:
        return tuple(range(1, top + 1))
    spread = {max(1, round(top * k / _DEFAULT_NODE_STEPS)) for k in range(1, _DEFAULT_NODE_STEPS + 1)}
    return tuple(sorted(spread | {brief.hardware.nodes}))


def _prices(brief: Brief, extra: Mapping[str, float] | None = None) -> dict[str, float]:
    """The brief's own GPU at the brief's price; every other catalog GPU at its reference price; `extra` on top."""
    prices = {key: gpu.usd_per_gpu_hour for key, gpu in GPUS.items() if gpu.usd_per_gpu_hour is not None}
    prices[brief.hardware.gpu] = brief.cost.usd_per_gpu_hour
    return prices | dict(extra or {})


def default_space(brief: Brief) -> SearchSpace:
    dep = brief.deployment
    prices = _prices(brief)
    return SearchSpace(
        gpu=tuple(key for key in GPUS if key in prices),
        tp=_valid_tps(brief),
        weights=tuple(p.value for p in Precision),
        kv_cache=tuple(p.value for p in KvPrecision),
        max_num_seqs=_around(dep.max_num_seqs, 1, 16_384, SEQS_STEP),
        max_num_batched_tokens=_around(dep.max_num_batched_tokens, 16, 1_048_576),
        nodes=_default_nodes(brief),
        usd_per_gpu_hour=prices,
    )


# --- space files -------------------------------------------------------------------------------------


def _field(axis: str) -> str:
    return f"space.{axis}"


def _axis_values(axis: str, raw: Any) -> list[Any]:
    """An axis as a list of values: a list, one value, or (nodes only) a table {min, max, step}."""
    if axis == "nodes" and isinstance(raw, dict):
        unknown = set(raw) - {"min", "max", "step"}
        if unknown:
            raise BriefError(_field(axis), f"unknown key '{sorted(unknown)[0]}' in the range; give min, max and optionally step")
        bounds = {"min": raw.get("min", 1), "max": raw.get("max"), "step": raw.get("step", 1)}
        for name, v in bounds.items():
            if isinstance(v, bool) or not isinstance(v, int):
                raise BriefError(_field(axis), f"{name} must be a whole number of nodes, got {v!r}")
        low, high, step = int(bounds["min"]), int(bounds["max"]), int(bounds["step"])
        if not 1 <= low <= high <= MAX_NODES or step < 1:
            raise BriefError(
                _field(axis), f"the range must satisfy 1 <= min <= max <= {MAX_NODES} and step >= 1, got {low}..{high} step {step}"
            )
        return list(range(low, high + 1, step))
    values = raw if isinstance(raw, list) else [raw]
    if not values:
        raise BriefError(_field(axis), "an axis needs at least one value")
    if len(values) > MAX_AXIS_VALUES:
        raise BriefError(_field(axis), f"{len(values)} values; at most {MAX_AXIS_VALUES}")
    return values


def _checked(brief: Brief, axis: str, values: list[Any]) -> tuple[Any, ...]:
    """Each value as the brief's field takes it (its type and range); an unknown GPU is named."""
    path = AXES[axis]
    kept: list[Any] = []
    for value in values:
        if axis == "gpu" and value not in GPUS:
            raise BriefError(_field(axis), f"unknown GPU {value!r}; known: {', '.join(GPUS)}")
        try:
            changed = brief.with_changes({path: value})
        except BriefError as exc:
            raise BriefError(_field(axis), f"value {value!r}: {exc.reason}") from None
        section, name = path.split(".")
        parsed = getattr(getattr(changed, section), name)
        kept.append(parsed.value if isinstance(parsed, Precision | KvPrecision) else parsed)
    return tuple(dict.fromkeys(kept))  # repeated values once, in the file's order


def _checked_prices(brief: Brief, raw: Any) -> dict[str, float]:
    if not isinstance(raw, dict):
        raise BriefError(_field(PRICES_TABLE), "must be a table of GPU -> $ per GPU-hour, e.g. h200 = 3.2")
    prices: dict[str, float] = {}
    for gpu, price in raw.items():
        if gpu not in GPUS:
            raise BriefError(_field(f"{PRICES_TABLE}.{gpu}"), f"unknown GPU; known: {', '.join(GPUS)}")
        try:
            prices[gpu] = brief.with_changes({PRICE_PATH: price}).cost.usd_per_gpu_hour
        except BriefError as exc:
            raise BriefError(_field(f"{PRICES_TABLE}.{gpu}"), exc.reason) from None
    return prices


def space_from_data(data: Mapping[str, Any], brief: Brief) -> SearchSpace:
    """The default space with each axis the data names replaced; every value checked as the brief takes it."""
    known = (*AXES, PRICES_TABLE)
    for key in data:
        if key not in known:
            raise BriefError(_field(str(key)), f"unknown axis; known: {', '.join(known)}")
    base = default_space(brief)
    prices = _prices(brief, _checked_prices(brief, data[PRICES_TABLE]) if PRICES_TABLE in data else None)
    axes = {axis: _checked(brief, axis, _axis_values(axis, data[axis])) for axis in AXES if axis in data}
    gpus = axes.get("gpu", tuple(g for g in base.gpu if g in prices))
    unpriced = [g for g in gpus if g not in prices]
    if unpriced:
        raise BriefError(_field("gpu"), f"no price for {unpriced[0]}: add it under [{PRICES_TABLE}] ({unpriced[0]} = <$ per GPU-hour>)")
    return base.model_copy(update={**axes, "gpu": gpus, "usd_per_gpu_hour": {g: prices[g] for g in gpus}})


def space_from_toml(text: str, brief: Brief, source: str = "space file") -> SearchSpace:
    if len(text.encode("utf-8", errors="replace")) > MAX_SPACE_FILE_BYTES:
        raise BriefError(source, f"file is larger than {MAX_SPACE_FILE_BYTES // 1000} kB; a space file is a few lines")
    try:
        data = tomllib.loads(text)
    except (tomllib.TOMLDecodeError, ValueError, RecursionError) as exc:
        raise BriefError(source, f"malformed TOML: {str(exc).splitlines()[0] if str(exc) else type(exc).__name__}") from None
    return space_from_data(data, brief)


def load_space(path: Path | str, brief: Brief) -> SearchSpace:
    """A space file (TOML) read from disk; every failure is a BriefError naming the file or the axis."""
    path = Path(path)
    text = read_text_file(path, MAX_SPACE_FILE_BYTES, "a space file (TOML)")
    return space_from_toml(text, brief, source=str(path))
