"""Case counters for the property and fuzz suites: tests add to them, conftest prints them in the summary.

CI output then shows how many generated cases actually ran, not only that the tests passed.
"""

from __future__ import annotations

from collections import Counter

__all__ = ["COUNTS", "count"]

COUNTS: Counter[str] = Counter()


def count(kind: str, n: int = 1) -> None:
    COUNTS[kind] += n
