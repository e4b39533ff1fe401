"""Efficiency profiles: the step model's constants fitted to someone's own measurements, as a small TOML file.

`python -m planner calibrate RESULTS... --out profile.toml` writes one (planner.calibrate_cli); a brief names it with
a top-level `efficiency_profile = "profile.toml"` (read relative to the brief file, like model.hf_config), and the
app takes it as an upload. The profile's [efficiency] table sets the brief's efficiencies; a value the brief's own
[efficiency] table gives wins. Reading a profile is pure and light: `plan` never imports the calibration package.
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

import tomli_w
from pydantic import ValidationError

from planner.brief import Efficiency
from planner.errors import BriefError, validation_message
from planner.textfile import read_text_file

__all__ = ["MAX_PROFILE_BYTES", "PROFILE_KEY", "efficiency_from_profile", "efficiency_from_profile_text", "profile_toml"]

PROFILE_KEY = "efficiency_profile"  # the brief's top-level key naming a profile file
MAX_PROFILE_BYTES = 20_000  # a profile is a dozen lines and its comments


def efficiency_from_profile_text(text: str, source: str = "profile") -> dict[str, Any]:
    """The [efficiency] values of a profile's text, each checked as Efficiency checks it; a bad one names its field."""
    if len(text) > MAX_PROFILE_BYTES:
        raise BriefError(source, f"{len(text):,} characters; a profile is at most {MAX_PROFILE_BYTES:,}")
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise BriefError(source, f"malformed TOML: {str(exc).splitlines()[0]}") from None
    table = data.get("efficiency")
    if not isinstance(table, dict) or not table:
        raise BriefError(source, "no [efficiency] table: write one with `python -m planner calibrate ... --out FILE`")
    try:
        Efficiency.model_validate(table)
    except ValidationError as exc:
        error = validation_message(exc)
        raise BriefError(f"{source}: efficiency.{error.field}", error.reason) from None
    return dict(table)


def efficiency_from_profile(path: Path) -> dict[str, Any]:
    """A profile file's [efficiency] values (the CLI's path: a brief file names it)."""
    return efficiency_from_profile_text(read_text_file(path, MAX_PROFILE_BYTES, "a profile"), str(path))


def profile_toml(constants: dict[str, Any], header: list[str]) -> str:
    """A profile's text: comment lines saying where it comes from, then the [efficiency] table."""
    comments = "".join(f"# {line}\n" for line in header)
    return comments + tomli_w.dumps({"efficiency": constants})
