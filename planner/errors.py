"""The one error type for input the planner cannot accept: it names the field (or file) and the reason."""

from __future__ import annotations

__all__ = ["BriefError"]


class BriefError(ValueError):
    """Invalid input: `field` is a dotted brief path or a file name, `reason` says what is wrong."""

    def __init__(self, field: str, reason: str) -> None:
        super().__init__(f"{field}: {reason}")
        self.field = field
        self.reason = reason
