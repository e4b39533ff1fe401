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

from planner.brief import HF_CONFIG_PATH_REFUSED, Brief, set_paths
from planner.catalog import model_from_hf_config
from planner.errors import BriefError, validation_message
from planner.profile import PROFILE_KEY, efficiency_from_profile
from planner.textfile import read_text_file

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
    "parse_value",
    "preset_names",
]

PRESETS_DIR = Path(__file__).resolve().parent.parent / "presets"
MAX_BRIEF_BYTES = 1_000_000


def preset_names() -> list[str]:
    """Preset stems in a stable order: the capstone, its variations, then the rest."""
    stems = sorted(p.stem for p in PRESETS_DIR.glob("*.toml"))
    order = {"capstone": 0}
    return sorted(stems, key=lambda s: (order.get(s, 1 if s.startswith("variation-") else 2), s))


def _resolve_hf_config(data: dict[str, Any], base_dir: Path | None) -> None:
    """Replace model.hf_config (a local config.json) by the architecture numbers it holds.

    `base_dir` is the folder a relative path is read from; None (an uploaded brief, a link, the app) refuses
    any path without touching the file system, so a brief from elsewhere can never make the server open a file.
    """
    model = data.get("model")
    if not isinstance(model, dict) or not model.get("hf_config"):
        return
    ref = model["hf_config"]
    if not isinstance(ref, str):
        raise BriefError("model.hf_config", "must be a path to a config.json")
    if base_dir is None:
        raise BriefError("model.hf_config", HF_CONFIG_PATH_REFUSED)
    if len(ref) > 1000:
        raise BriefError("model.hf_config", f"path is {len(ref):,} characters; at most 1,000")
    path = Path(ref) if Path(ref).is_absolute() else base_dir / ref
    try:
        custom = model_from_hf_config(path)
    except BriefError as exc:  # name the field the user set, with the file in the reason
        raise BriefError("model.hf_config", f"{exc.field}: {exc.reason}") from None
    model.update(name="custom", custom=custom.model_dump(), hf_config=None)
    model.setdefault("display_name", path.parent.name or "custom model")


def _resolve_profile(data: dict[str, Any], base_dir: Path | None) -> None:
    """Replace a top-level efficiency_profile (a file `python -m planner calibrate` wrote) by its [efficiency] values,
    under the brief's own [efficiency] values. Like model.hf_config, a path is read only from a brief file."""
    ref = data.pop(PROFILE_KEY, None)
    if ref is None:
        return
    if not isinstance(ref, str) or not ref:
        raise BriefError(PROFILE_KEY, "must be a path to a profile TOML file")
    if base_dir is None:
        raise BriefError(PROFILE_KEY, "a file path is not accepted here (the server reads no files); upload the profile instead")
    if len(ref) > 1000:
        raise BriefError(PROFILE_KEY, f"path is {len(ref):,} characters; at most 1,000")
    path = Path(ref) if Path(ref).is_absolute() else base_dir / ref
    try:
        profile = efficiency_from_profile(path)
    except BriefError as exc:
        raise BriefError(PROFILE_KEY, f"{exc.field}: {exc.reason}") from None
    own = data.get("efficiency")
    data["efficiency"] = profile | (own if isinstance(own, dict) else {})


def brief_from_data(data: Any, source: str = "brief", base_dir: Path | None = None) -> Brief:
    """A validated brief from parsed data; `base_dir` is where model.hf_config and efficiency_profile paths are read
    (None: paths refused)."""
    if not isinstance(data, dict):
        raise BriefError(source, "a brief must be a table of sections (model, hardware, workload, ...)")
    _resolve_hf_config(data, base_dir)
    _resolve_profile(data, base_dir)
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
    _reject_deep(data, source)
    _reject_non_finite(data, "")
    return brief_from_data(data, source, base_dir)


MAX_NESTING = 8  # a brief nests sections, a custom model and lists of text: three levels; deeper is never a brief


def _nesting(value: Any) -> int:
    """How deep lists and tables nest in a parsed value (iterative: deep input cannot exhaust the stack)."""
    deepest, stack = 0, [(value, 0)]
    while stack:
        node, depth = stack.pop()
        if isinstance(node, dict | list | tuple):
            if depth + 1 > MAX_NESTING:
                return depth + 1
            deepest = max(deepest, depth + 1)
            stack.extend((child, depth + 1) for child in (node.values() if isinstance(node, dict) else node))
    return deepest


def _reject_deep(data: Any, field: str) -> None:
    if _nesting(data) > MAX_NESTING:
        raise BriefError(field, f"lists or tables nested more than {MAX_NESTING} deep; a brief field is a number, a word or a short list")


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
    text = read_text_file(path, MAX_BRIEF_BYTES, "a brief (TOML or JSON)")
    fmt = "json" if path.suffix.lower() == ".json" else "toml"
    return brief_from_text(text, fmt, str(path), path.parent)


MAX_REF_CHARS = 1000


def _is_preset_name(ref: str) -> bool:
    return len(ref) <= 80 and ref.isascii() and ref.replace("-", "").replace("_", "").isalnum()


def load_brief(ref: str) -> Brief:
    """A preset name (file stem under presets/) or a path to a TOML or JSON brief."""
    if not ref.strip():
        raise BriefError("BRIEF", "empty: give a preset name or a brief file")
    if len(ref) > MAX_REF_CHARS:
        raise BriefError("BRIEF", f"{len(ref):,} characters; a preset name or a path is at most {MAX_REF_CHARS:,}")
    if _is_preset_name(ref) and ref in preset_names():
        return _read_file(PRESETS_DIR / f"{ref}.toml")
    path = Path(ref)
    try:
        looks_like_file = path.suffix.lower() in (".toml", ".json") or "/" in ref or path.exists()
        if looks_like_file:
            if path.is_dir():
                raise BriefError(ref, "is a directory, not a brief file")
            if not path.exists():
                raise BriefError(ref, "no such file")
    except OSError as exc:  # a name too long for the file system, a permission on a folder
        raise BriefError(ref[:120], f"cannot use this path: {exc.strerror or type(exc).__name__}") from None
    if looks_like_file:
        return _read_file(path)
    raise BriefError(ref[:120], f"unknown preset; known: {', '.join(preset_names())}")


MAX_PATH_CHARS = 100
MAX_OVERRIDE_CHARS = 60_000  # the longest value a brief holds: 50 assumptions of up to 1,000 characters


def parse_override(text: str) -> tuple[str, Any]:
    """'workload.duty_cycle=0.16' -> ('workload.duty_cycle', 0.16); values as JSON where they parse."""
    path, sep, raw = text.partition("=")
    path = path.strip()
    if not sep or not path:
        raise BriefError("--set", f"'{text[:80]}' is not PATH=VALUE")
    return path, parse_value(path, raw)


def parse_value(path: str, raw: str) -> Any:
    """The value of one override as text (a --set, a link parameter): JSON where it parses, else the text itself."""
    raw = raw.strip()
    if len(path) > MAX_PATH_CHARS:
        raise BriefError(path[:60], f"a field path of {len(path):,} characters; a brief's paths are short")
    if len(raw) > MAX_OVERRIDE_CHARS:
        raise BriefError(path, f"value of {len(raw):,} characters; at most {MAX_OVERRIDE_CHARS:,}")
    if raw.lower() in ("none", "null", ""):
        return None
    try:
        value = json.loads(raw, parse_constant=_reject_constant)
    except RecursionError:
        raise BriefError(
            path, f"lists or tables nested more than {MAX_NESTING} deep; a brief field is a number, a word or a short list"
        ) from None
    except (json.JSONDecodeError, ValueError):
        value = raw
    _reject_deep(value, path)
    if isinstance(value, float) and not math.isfinite(value):
        raise BriefError(path, f"{raw} is not a finite number")
    _reject_non_finite(value, path)
    return value


def apply_overrides(brief: Brief, changes: dict[str, Any], base_dir: Path | None = None) -> Brief:
    """A new brief with each dotted path set; unknown paths and bad values raise BriefError naming the path.

    `base_dir` is where a model.hf_config path is read from (the CLI: the working directory); None refuses paths.
    """
    data = set_paths(brief.model_dump(mode="json"), changes)
    _resolve_hf_config(data, base_dir)
    try:
        return Brief.model_validate(data)
    except ValidationError as exc:
        raise validation_message(exc) from None


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
