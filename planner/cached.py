"""A frozen pydantic model that keeps values derived from its fields (functools.cached_property) and drops them
from a copy: pydantic's model_copy copies the instance dict, cached values included, so a copy with changed
fields would otherwise read its original's."""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache, cached_property
from typing import Any, Self

from pydantic import BaseModel

__all__ = ["CachingModel"]


class CachingModel(BaseModel):
    def model_copy(self, *, update: Mapping[str, Any] | None = None, deep: bool = False) -> Self:
        copied = super().model_copy(update=update, deep=deep)
        for name in _cached_names(type(self)):
            copied.__dict__.pop(name, None)
        return copied


@cache
def _cached_names(cls: type) -> tuple[str, ...]:
    return tuple(name for klass in cls.__mro__ for name, value in vars(klass).items() if isinstance(value, cached_property))
