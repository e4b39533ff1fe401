"""Result models built from values the planner has just worked out, without validating them again.

Pydantic validates every field of a model it builds (~2-5 us a model, 40-115 models a plan). A brief, a link, an upload
or a --set comes from a user and is validated where it is read; a result section (a replica's shape, the demand, the
memory arithmetic) is numbers the planner computed with the types its fields declare, so `trusted` builds it as
`model_construct` does, in the fields' declared order, at a fraction of either's cost.

A model built this way must be the model validation would build: tests/test_trusted.py plans every preset with
CHECKING on, which builds each one validated too and compares them value by value, types and field order included.
"""

from __future__ import annotations

import math
from typing import Any, NamedTuple, TypeVar

from pydantic import BaseModel
from pydantic_core import PydanticUndefined

__all__ = ["trusted"]

M = TypeVar("M", bound=BaseModel)

CHECKING = False  # tests: build each model validated as well and require the two to be the same
_set = object.__setattr__  # frozen models refuse their own __setattr__


class _Layout(NamedTuple):
    """What a class's instances hold besides the values passed: its fields in declared order, the immutable defaults
    of those a call may leave out, its private attributes' defaults (None: it has no private attributes)."""

    names: tuple[str, ...]
    defaults: dict[str, Any]
    private: dict[str, Any] | None


def trusted(model: type[M], /, **fields: Any) -> M:
    """`model(**fields)` for values the planner worked out with the types the fields declare: not validated again.
    Only for classes without validators (checked once a class)."""
    layout = _LAYOUTS.get(model) or _layout_of(model)
    values = fields if tuple(fields) == layout.names else {n: fields[n] if n in fields else layout.defaults[n] for n in layout.names}
    built = model.__new__(model)
    _set(built, "__dict__", values)
    _set(built, "__pydantic_fields_set__", set(fields))
    _set(built, "__pydantic_extra__", None)
    _set(built, "__pydantic_private__", None if layout.private is None else dict(layout.private))
    if CHECKING:
        _require_same(built, model(**fields))
    return built


def _layout_of(model: type[BaseModel]) -> _Layout:
    decorators = model.__pydantic_decorators__
    if decorators.validators or decorators.field_validators or decorators.model_validators or decorators.root_validators:
        raise TypeError(f"{model.__name__} validates its values: build it with {model.__name__}(...)")
    infos = model.model_fields
    if any(info.default_factory is not None for info in infos.values()):
        raise TypeError(f"{model.__name__} has a default factory: build it with {model.__name__}(...)")
    private = model.__private_attributes__
    layout = _Layout(
        names=tuple(infos),
        defaults={name: info.default for name, info in infos.items() if _immutable(info.default)},
        private={name: attr.default for name, attr in private.items() if attr.default is not PydanticUndefined} if private else None,
    )
    _LAYOUTS[model] = layout
    return layout


def _immutable(default: object) -> bool:
    """A default an instance can share (pydantic copies a mutable one: a field with one must be passed)."""
    return default is not PydanticUndefined and not isinstance(default, list | dict | set)


# By class, found at its first build: what a class declares, not what a plan works out (nothing a plan does changes it).
_LAYOUTS: dict[type[BaseModel], _Layout] = {}


def _require_same(built: BaseModel, validated: BaseModel) -> None:
    """Raise AssertionError unless the trusted build holds what validation gives: the same fields, in the same order,
    each the same type and value (1 is not 1.0 here: the JSON would read differently)."""
    name = type(validated).__name__
    if list(built.__dict__) != list(validated.__dict__):
        raise AssertionError(f"{name}: fields {list(built.__dict__)} against {list(validated.__dict__)}")
    if built.__pydantic_fields_set__ != validated.__pydantic_fields_set__ or built.__pydantic_private__ != validated.__pydantic_private__:
        raise AssertionError(f"{name}: fields set or private attributes differ")
    for field, value in validated.__dict__.items():
        if not _same(built.__dict__[field], value):
            raise AssertionError(f"{name}.{field}: {built.__dict__[field]!r} built, {value!r} validated")


def _same(a: object, b: object) -> bool:
    if type(a) is not type(b):
        return False
    if isinstance(a, tuple | list):
        assert isinstance(b, tuple | list)
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict):
        assert isinstance(b, dict)
        return list(a) == list(b) and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, float):
        assert isinstance(b, float)
        return a == b or (math.isnan(a) and math.isnan(b))
    return a is b or a == b
