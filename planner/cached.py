"""A frozen pydantic model that keeps values derived from its fields (functools.cached_property) and drops them
from a copy: pydantic's model_copy copies the instance dict, cached values included, so a copy with changed
fields would otherwise read its original's."""

from __future__ import annotations

from collections.abc import Mapping
from functools import cached_property
from typing import Any, Self

from pydantic import BaseModel
from pydantic_core import PydanticUndefined

__all__ = ["CachingModel", "cached_names"]

_set = object.__setattr__  # frozen models refuse their own __setattr__


class CachingModel(BaseModel):
    @classmethod
    def __pydantic_init_subclass__(cls, **kwargs: Any) -> None:
        super().__pydantic_init_subclass__(**kwargs)
        _CACHED_NAMES[cls] = _names_of(cls)

    def model_copy(self, *, update: Mapping[str, Any] | None = None, deep: bool = False) -> Self:
        if deep or self.__pydantic_extra__:
            copied = super().model_copy(update=update, deep=deep)
            for name in cached_names(type(self)):
                copied.__dict__.pop(name, None)
            return copied
        # pydantic's shallow copy written out, without the kept values: a plan copies a brief and the sections it
        # changes at each change (planner.brief's with_changes)
        cls = type(self)
        values = self.__dict__.copy()
        for name in _CACHED_NAMES.get(cls) or cached_names(cls):
            values.pop(name, None)
        return self._copied(values, update)

    def copy_keeping(self, update: Mapping[str, Any], dropped: tuple[str, ...]) -> Self:
        """A shallow copy with `update`'s fields changed that keeps the values worked out on this one but `dropped` (those
        that read a changed field, or belong to one instance): model_copy, without dropping the rest to work them out
        again (planner.replica.shape_of's copy of a replica for another fleet)."""
        values = self.__dict__.copy()  # the fields in their declared order, then the kept values
        for name in dropped:
            values.pop(name, None)
        return self._copied(values, update)

    def _copied(self, values: dict[str, Any], update: Mapping[str, Any] | None) -> Self:
        """A model of this class holding `values` with `update` applied, as pydantic's shallow copy builds one."""
        cls = type(self)
        fields_set = self.__pydantic_fields_set__.copy()
        if update:
            values.update(update)
            fields_set.update(update)
        private = self.__pydantic_private__
        copied = cls.__new__(cls)
        _set(copied, "__dict__", values)
        _set(copied, "__pydantic_fields_set__", fields_set)
        _set(copied, "__pydantic_extra__", None)
        _set(copied, "__pydantic_private__", None if private is None else {k: v for k, v in private.items() if v is not PydanticUndefined})
        return copied

    def __getstate__(self) -> dict[Any, Any]:
        """A pickled model leaves its worked-out values behind: a kept hash is of this process's string hashes, which a
        spawned worker (the design search's) hashes differently, and the rest are worked out again on first read."""
        state = super().__getstate__()
        cached = cached_names(type(self))
        return state | {"__dict__": {name: value for name, value in state["__dict__"].items() if name not in cached}}


def cached_names(cls: type) -> tuple[str, ...]:
    """The names of a class's kept values (its cached_property attributes, inherited ones included)."""
    names = _CACHED_NAMES.get(cls)
    if names is None:  # a class made before this module's hook saw it (none in the planner)
        names = _CACHED_NAMES[cls] = _names_of(cls)
    return names


def _names_of(cls: type) -> tuple[str, ...]:
    return tuple(name for klass in cls.__mro__ for name, value in vars(klass).items() if isinstance(value, cached_property))


# By class, found as each class is made (CachingModel.__pydantic_init_subclass__): what a class defines, not what a
# plan works out, so nothing a plan does changes it (a functools.cache here was emptied with the planner's caches and
# walked the class's MRO again at a cold plan's first copy: ~30 us a class).
_CACHED_NAMES: dict[type, tuple[str, ...]] = {}
