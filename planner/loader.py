"""Reading and writing briefs: presets, TOML and JSON files, and dotted-path overrides.

Every failure is a BriefError naming the file or the field, so the CLI prints one line and the app
shows the message beside the field.
"""

from __future__ import annotations

import json
import math
import tomllib
from pathlib import Path
from typing import Any

import tomli_w
from pydantic import ValidationError

from planner.brief import Brief
from planner.catalog import model_from_hf_config
from planner.errors import BriefError

__all__ = [
    "MAX_BRIEF_BYTES",
    "PRESETS_DIR",
    "apply_overrides",
    "brief_from_data",
    "brief_from_text",
    "brief_to_json",
    "brief_to_toml",
    "load_brief",
    "parse_override",
    "preset_names",
]

PRESETS_DIR = Path(__file__).resolve().parent.parent / "presets"
MAX_BRIEF_BYTES = 1_000_000


def preset_names() -> list[str]:
    """Preset stems in a stable order: the capstone, its variations, then the rest."""
    stems = sorted(p.stem for p in PRESETS_DIR.glob("*.toml"))
    order = {"capstone": 0}
    return sorted(stems, key=lambda s: (order.get(s, 1 if s.startswith("variation-") else 2), s))


def _field_of(error: Any) -> str:
    loc = [str(part) for part in error.get("loc", ()) if not str(part).startswith("function-after")]
    return ".".join(loc) or "brief"


def validation_message(exc: ValidationError) -> BriefError:
    """The first pydantic error as a BriefError; a model-level message 'field: reason' keeps its field."""
    first = exc.errors()[0]
    field, reason = _field_of(first), str(first.get("msg", "invalid value"))
    reason = reason.removeprefix("Value error, ")
    if ": " in reason and first.get("type") == "value_error":
        sub, _, rest = reason.partition(": ")
        if sub.replace("_", "").isalnum():
            field, reason = (f"{field}.{sub}" if field != "brief" else sub), rest
    if first.get("type") == "extra_forbidden":
        reason = "unknown field"
    return BriefError(field, reason)


def _resolve_hf_config(data: dict[str, Any], base_dir: Path) -> None:
    """Replace model.hf_config (a local config.json) by the architecture numbers it holds."""
    model = data.get("model")
    if not isinstance(model, dict) or not model.get("hf_config"):
        return
    ref = model["hf_config"]
    if not isinstance(ref, str):
        raise BriefError("model.hf_config", "must be a path to a config.json")
    if len(ref) > 1000:
        raise BriefError("model.hf_config", f"path is {len(ref):,} characters; at most 1,000")
    path = Path(ref) if Path(ref).is_absolute() else base_dir / ref
    try:
        custom = model_from_hf_config(path)
    except BriefError as exc:  # name the field the user set, with the file in the reason
        raise BriefError("model.hf_config", f"{exc.field}: {exc.reason}") from None
    model.update(name="custom", custom=custom.model_dump(), hf_config=None)
    model.setdefault("display_name", path.parent.name or "custom model")


def brief_from_data(data: Any, source: str = "brief", base_dir: Path | None = None) -> Brief:
    if not isinstance(data, dict):
        raise BriefError(source, "a brief must be a table of sections (model, hardware, workload, ...)")
    _resolve_hf_config(data, base_dir or Path.cwd())
    try:
        return Brief.model_validate(data)
    except ValidationError as exc:
        raise validation_message(exc) from None


def _reject_constant(name: str) -> float:
    raise ValueError(f"{name} is not a number a brief accepts")


def brief_from_text(text: str, fmt: str, source: str = "brief", base_dir: Path | None = None) -> Brief:
    """Parse TOML or JSON text ('toml' or 'json') into a validated brief."""
    if len(text.encode("utf-8", errors="replace")) > MAX_BRIEF_BYTES:
        raise BriefError(source, f"file is larger than {MAX_BRIEF_BYTES // 1000} kB; a brief is a few kB")
    if "\x00" in text:
        raise BriefError(source, "file is binary, not a TOML or JSON brief")
    try:
        # NaN and Infinity parse to floats here so that _reject_non_finite names the field that holds them.
        data = json.loads(text) if fmt == "json" else tomllib.loads(text)
    except (json.JSONDecodeError, tomllib.TOMLDecodeError, ValueError, RecursionError) as exc:
        raise BriefError(source, f"malformed {fmt.upper()}: {str(exc).splitlines()[0]}") from None
    _reject_non_finite(data, "")
    return brief_from_data(data, source, base_dir)


def _reject_non_finite(data: Any, path: str) -> None:
    if isinstance(data, float) and not math.isfinite(data):
        raise BriefError(path or "brief", f"{data} is not a finite number")
    if isinstance(data, dict):
        for key, value in data.items():
            _reject_non_finite(value, f"{path}.{key}" if path else str(key))
    elif isinstance(data, list):
        for value in data:
            _reject_non_finite(value, path)


def _read_file(path: Path) -> Brief:
    try:
        if not path.is_file():  # /dev/zero, a FIFO or a socket would never end or never answer
            raise BriefError(str(path), "not a regular file")
        size = path.stat().st_size
        if size > MAX_BRIEF_BYTES:
            raise BriefError(str(path), f"file is {size:,} bytes; a brief is at most {MAX_BRIEF_BYTES:,}")
        with path.open("rb") as f:
            raw = f.read(MAX_BRIEF_BYTES + 1)  # bounded even if the file grows while it is read
        if len(raw) > MAX_BRIEF_BYTES:
            raise BriefError(str(path), f"file is larger than {MAX_BRIEF_BYTES:,} bytes; a brief is at most that")
    except OSError as exc:
        raise BriefError(str(path), f"cannot read: {exc.strerror or exc}") from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise BriefError(str(path), "file is not UTF-8 text (binary?)") from None
    fmt = "json" if path.suffix.lower() == ".json" else "toml"
    return brief_from_text(text, fmt, str(path), path.parent)


def load_brief(ref: str) -> Brief:
    """A preset name (file stem under presets/) or a path to a TOML or JSON brief."""
    if not ref.strip():
        raise BriefError("BRIEF", "empty: give a preset name or a brief file")
    path = Path(ref)
    if path.suffix.lower() in (".toml", ".json") or path.exists() or "/" in ref:
        if path.is_dir():
            raise BriefError(ref, "is a directory, not a brief file")
        if not path.exists():
            raise BriefError(ref, "no such file")
        return _read_file(path)
    preset = PRESETS_DIR / f"{ref}.toml"
    if not ref.replace("-", "").replace("_", "").isalnum() or not preset.exists():
        raise BriefError(ref, f"unknown preset; known: {', '.join(preset_names())}")
    return _read_file(preset)


def parse_override(text: str) -> tuple[str, Any]:
    """'workload.duty_cycle=0.16' -> ('workload.duty_cycle', 0.16); values as JSON where they parse."""
    path, sep, raw = text.partition("=")
    path = path.strip()
    if not sep or not path:
        raise BriefError("--set", f"'{text}' is not PATH=VALUE")
    raw = raw.strip()
    if raw.lower() in ("none", "null", ""):
        return path, None
    try:
        value = json.loads(raw, parse_constant=_reject_constant)
    except (json.JSONDecodeError, ValueError):
        value = raw
    if isinstance(value, float) and not math.isfinite(value):
        raise BriefError(path, f"{raw} is not a finite number")
    return path, value


def apply_overrides(brief: Brief, changes: dict[str, Any]) -> Brief:
    """A new brief with each dotted path set; unknown paths and bad values raise BriefError naming the path."""
    data = brief.model_dump(mode="json")
    for path, value in changes.items():
        parts = path.split(".")
        node: Any = data
        for part in parts[:-1]:
            if not isinstance(node, dict) or part not in node:
                raise BriefError(path, "unknown field")
            if node[part] is None:
                node[part] = {}
            node = node[part]
        if not isinstance(node, dict) or parts[-1] not in _known_keys(parts[:-1]):
            raise BriefError(path, "unknown field")
        node[parts[-1]] = value
    _resolve_hf_config(data, Path.cwd())
    try:
        return Brief.model_validate(data)
    except ValidationError as exc:
        raise validation_message(exc) from None


def _known_keys(section: list[str]) -> set[str]:
    model: Any = Brief
    for part in section:
        annotation = model.model_fields[part].annotation
        args = getattr(annotation, "__args__", None)
        model = next((a for a in args if hasattr(a, "model_fields")), None) if args else annotation
        if model is None or not hasattr(model, "model_fields"):
            return set()
    return set(model.model_fields)


def _drop_none(data: Any) -> Any:
    if isinstance(data, dict):
        return {k: _drop_none(v) for k, v in data.items() if v is not None}
    if isinstance(data, list):
        return [_drop_none(v) for v in data]
    return data


def brief_to_toml(brief: Brief) -> str:
    """TOML in the presets' format (empty optional fields are left out)."""
    return tomli_w.dumps(_drop_none(brief.model_dump(mode="json")))


def brief_to_json(brief: Brief) -> str:
    return json.dumps(brief.model_dump(mode="json"), indent=2)
