"""Case counters for the property and fuzz suites: tests add to them, conftest prints them in the summary.

CI output then shows how many generated cases actually ran, not only that the tests passed.
"""

from __future__ import annotations

from collections import Counter

__all__ = ["COUNTS", "count", "examples"]

COUNTS: Counter[str] = Counter()


def count(kind: str, n: int = 1) -> None:
    COUNTS[kind] += n


def examples(n: int) -> int:
    """A test's example count under the CI profile; HYPOTHESIS_PROFILE=explore runs ten times as many."""
    import os

    return n * (10 if os.environ.get("HYPOTHESIS_PROFILE") == "explore" else 1)
