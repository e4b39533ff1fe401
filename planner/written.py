"""Arithmetic in words written the first time it is read: a design re-plans its brief many times (failure rows, fleet
searches, headroom, a disaggregated design's every split) and reads the words of none of those re-plans."""

from __future__ import annotations

from collections.abc import Callable
from functools import cached_property

from pydantic import BaseModel, ConfigDict, PrivateAttr, computed_field

__all__ = ["Written"]


class Written(BaseModel):
    """A frozen section whose `arithmetic` is written by `_text` on first read. It compares by its fields and its words
    (as when the words were a field), and hashes by its fields."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    _text: Callable[[], dict[str, str]] = PrivateAttr()

    @computed_field  # type: ignore[prop-decorator]
    @cached_property
    def arithmetic(self) -> dict[str, str]:
        """Each figure's arithmetic in words."""
        return self._text()

    def __eq__(self, other: object) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        assert isinstance(other, Written)
        fields = type(self).model_fields
        return all(getattr(self, f) == getattr(other, f) for f in fields) and self.arithmetic == other.arithmetic

    def __hash__(self) -> int:
        return hash(tuple(getattr(self, f) for f in type(self).model_fields))
