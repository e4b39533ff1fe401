"""The one error type for input the planner cannot accept: it names the field (or file) and the reason."""

from __future__ import annotations

from typing import Any

from pydantic import ValidationError

__all__ = ["BriefError", "validation_message"]


class BriefError(ValueError):
    """Invalid input: `field` is a dotted brief path or a file name, `reason` says what is wrong."""

    def __init__(self, field: str, reason: str) -> None:
        super().__init__(f"{field}: {reason}")
        self.field = field
        self.reason = reason


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
