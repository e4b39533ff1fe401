"""Brief.with_changes validates a changed value as an assignment to its section, several changes of one section
together: the brief must be the one the section validated again gives (the same values and types, the other sections kept as they are), and a refused value
must read as the whole brief's validation words it."""

from __future__ import annotations

import math
import random
from typing import Any

import pytest
from pydantic import BaseModel, ValidationError

from planner import load_brief, preset_names
from planner.brief import Brief, set_paths
from planner.errors import BriefError, validation_message

pytestmark = pytest.mark.unit

_VALUES: tuple[Any, ...] = (0, 1, 7, 16, 4096, 2048.0, 0.5, 0.05, 0.999, -1, 1e9, True, False, None, "x", "fp8", math.inf, math.nan, [1])


def _same(a: object, b: object) -> bool:
    """Equal, and of the same types all the way down (1 is not 1.0: the JSON would read differently)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, BaseModel):
        fields = list(type(a).model_fields)
        return [k for k in a.__dict__ if k in fields] == fields and all(_same(getattr(a, f), getattr(b, f)) for f in fields)
    if isinstance(a, tuple):
        assert isinstance(b, tuple)
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    return a == b or (isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b))


def _validated_again(brief: Brief, changes: dict[str, Any]) -> Brief | BriefError:
    """The changed sections validated again whole (a refused value: the whole brief's validation words it)."""
    by_section: dict[str, dict[str, Any]] = {}
    for path, value in changes.items():
        section, _, leaf = path.partition(".")
        by_section.setdefault(section, {})[leaf] = value
    try:
        update = {
            section: type(current).model_validate(current.model_dump(mode="json") | leaves)
            for section, leaves in by_section.items()
            for current in (getattr(brief, section),)
        }
        return brief.model_copy(update=update)
    except ValidationError:
        try:
            return Brief.model_validate(set_paths(brief.model_dump(mode="json"), changes))
        except ValidationError as exc:
            return validation_message(exc)


def _check(brief: Brief, changes: dict[str, Any]) -> None:
    """with_changes gives what the changed sections validated again give (or the whole brief's error words)."""
    expected = _validated_again(brief, changes)
    try:
        changed: Brief | BriefError = brief.with_changes(changes)
    except BriefError as exc:
        changed = exc
    if isinstance(expected, BriefError):
        assert isinstance(changed, BriefError) and changed.args == expected.args, changes
    else:
        assert _same(changed, expected) and changed == expected and hash(changed) == hash(expected), changes


@pytest.mark.parametrize("name", preset_names())
def test_a_changed_section_is_the_section_validated_again(name: str) -> None:
    rng = random.Random(name)
    brief = load_brief(name)
    sections = [s for s in Brief.model_fields if s != "model" and isinstance(getattr(brief, s), BaseModel)]
    for _ in range(60):
        changes = {}
        for _ in range(rng.choice((1, 1, 2, 3))):
            section = rng.choice(sections)
            field = rng.choice(list(type(getattr(brief, section)).model_fields))
            changes[f"{section}.{field}"] = rng.choice((*_VALUES, getattr(getattr(brief, section), field)))
        _check(brief, changes)


@pytest.mark.parametrize("name", preset_names())
def test_pairs_of_one_section_are_the_section_validated_again(name: str) -> None:
    """Two or three fields of one section changed at once, each value drawn near the field's current one (scaled or
    swapped with a sibling's), so many pass only together: the section validated again whole decides."""
    rng = random.Random(f"pairs {name}")
    brief = load_brief(name)
    sections = [s for s in Brief.model_fields if s != "model" and isinstance(getattr(brief, s), BaseModel)]
    for _ in range(60):
        section = rng.choice(sections)
        current = getattr(brief, section)
        fields = list(type(current).model_fields)
        changes = {}
        for field in rng.sample(fields, min(rng.choice((2, 2, 3)), len(fields))):
            value = getattr(current, field)
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                value = type(value)(value * rng.choice((0.5, 2, 3, 10)))
            else:
                value = rng.choice((*_VALUES, value, getattr(current, rng.choice(fields))))
            changes[f"{section}.{field}"] = value
        _check(brief, changes)


@pytest.mark.parametrize("name", preset_names())
def test_a_prompt_mean_and_p95_raised_together_take_the_section_path(name: str) -> None:
    """The multimodal image tokens' change (planner.multimodal.with_image_tokens): the mean raised past the old p95
    with the p95 raised too is refused one field at a time, accepted as the section validated again, without the
    whole brief's validation."""
    brief = load_brief(name)
    w = brief.workload
    changes = {"workload.input_tokens_mean": w.input_tokens_p95 + 1000.0, "workload.input_tokens_p95": w.input_tokens_p95 + 5000.0}
    assert brief._with_section_changes(changes) is not None
    _check(brief, changes)
