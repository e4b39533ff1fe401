"""A design's name: what the pages, the design document and its file names call the design.

A brief's title and description are its author's words for the brief as written ("Capstone: Llama-3-70B for
10,000 chat users on 64 H100"). They go stale the moment a field changes under them (6 nodes), so a design edited
from the brief it started from (a preset, a loaded file) is named from its own facts ("Llama-3-70B for 10,000
users on 6 x 8 NVIDIA H100 SXM 80GB"), and its description says what the edit changed. A title or description
the edit rewrote is the editor's own words, and is kept.
"""

from __future__ import annotations

import re
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from planner.brief import Brief
from planner.catalog import GPUS, MODELS
from planner.fmt import num

__all__ = ["DesignName", "design_name", "facts_title", "file_stem"]

_OWN_WORDS = ("title", "description")  # the brief's fields that describe it rather than state it
_CHANGES_LISTED = 4  # an edit's description names this many changed fields, then counts the rest
_STEM_CHARS = 60


class DesignName(BaseModel):
    """What a design is called.

    Attributes:
        title: the heading of every page and of the design document.
        description: one line under it (empty when there is nothing true to say).
        edited: the design differs from the brief it started from in more than its title and description.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    title: str = Field(description="The heading of every page and of the design document.")
    description: str = Field(description="One line under the title (may be empty).")
    edited: bool = Field(description="The design differs from the brief it started from in more than its words.")

    @property
    def file_stem(self) -> str:
        """The name of a downloaded file (without its extension)."""
        return file_stem(self.title)


def file_stem(title: str) -> str:
    """A safe file name from a title: lower case, dashes, at most 60 characters."""
    stem = re.sub(r"[^a-z0-9]+", "-", title.lower()).strip("-")[:_STEM_CHARS].strip("-")
    return stem or "design"


def _model_name(brief: Brief) -> str:
    choice = brief.model
    if choice.name == "custom":
        return choice.display_name or "a custom model"
    return MODELS[choice.name].name if choice.name in MODELS else choice.name


def facts_title(brief: Brief) -> str:
    """The design in its own facts: model, traffic, fleet ('Llama-3-70B for 10,000 users on 6 x 8 NVIDIA H100 SXM 80GB')."""
    w, hw = brief.workload, brief.hardware
    traffic = f"{num(w.users)} users" if w.users is not None else num(w.request_rate or 0.0, "req/s")
    gpu = GPUS[hw.gpu].name if hw.gpu in GPUS else hw.gpu
    return f"{_model_name(brief)} for {traffic} on {hw.nodes} x {hw.gpus_per_node} {gpu}"


def _leaves(data: Any, prefix: str = "") -> dict[str, Any]:
    """{'hardware': {'nodes': 8}} -> {'hardware.nodes': 8}."""
    if not isinstance(data, dict):
        return {prefix: data}
    leaves: dict[str, Any] = {}
    for key, value in data.items():
        leaves.update(_leaves(value, f"{prefix}{key}."))
    return {path.rstrip("."): value for path, value in leaves.items()}


def _shown(value: Any) -> str:
    if isinstance(value, bool) or value is None:
        return {True: "on", False: "off", None: "none"}[value]
    if isinstance(value, int | float):
        return num(float(value))
    if isinstance(value, list):
        return f"{len(value)} item{'' if len(value) == 1 else 's'}"
    return str(value)


def _changes(brief: Brief, source: Brief) -> list[str]:
    """Each field the edit changed, in words: 'nodes 8 → 6'."""
    before, after = _leaves(source.model_dump(mode="json")), _leaves(brief.model_dump(mode="json"))
    changed = []
    for path in sorted(before.keys() | after.keys()):
        if path in _OWN_WORDS or before.get(path) == after.get(path):
            continue
        label = path.rsplit(".", 1)[-1].replace("_", " ")
        changed.append(f"{label} {_shown(before.get(path))} → {_shown(after.get(path))}")
    return changed


def design_name(brief: Brief, source: Brief | None = None) -> DesignName:
    """The name of the design `brief` describes; `source` is the brief it was edited from (None: not edited)."""
    changes = _changes(brief, source) if source is not None else []
    if not changes:
        return DesignName(title=brief.title, description=brief.description, edited=False)
    assert source is not None
    title = brief.title if brief.title != source.title else facts_title(brief)
    if brief.description != source.description:
        description = brief.description
    else:
        more = len(changes) - _CHANGES_LISTED
        listed = "; ".join(changes[:_CHANGES_LISTED]) + (f"; and {more} more" if more > 0 else "")
        description = f"Edited from the brief it started from: {listed}."
    return DesignName(title=title, description=description, edited=True)
