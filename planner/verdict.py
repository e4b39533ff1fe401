"""Verdicts: what is wrong with a design, which field to change and how."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict

from planner.errors import BriefError

__all__ = ["InfeasibleDesign", "Problem", "Verdict"]


class Problem(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    field: str  # dotted brief path the problem is about
    problem: str
    change: str  # what to change to fix it
    overrides: dict[str, Any] = {}  # the brief changes the change names (a setting, a fleet), as `plan --set` takes them ({}: none)

    def line(self) -> str:
        return f"{self.field}: {self.problem}; {self.change}"


class Verdict(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    feasible: bool  # the design can run: weights and one sequence fit, utilization at most 100%
    meets_slo: bool
    availability_ok: bool = True  # N+1 holds where the availability target needs it (plan() judges it from the failure table)
    headroom_ok: bool = True  # the pools keep the slo.headroom a brief states above the peak (plan() judges it; none stated: True)
    problems: tuple[Problem, ...]


class InfeasibleDesign(BriefError):
    """A brief that parsed but cannot be computed at all (weights do not fit, no room for one sequence)."""

    def __init__(self, problems: tuple[Problem, ...]) -> None:
        first = problems[0]
        super().__init__(first.field, f"{first.problem}; {first.change}")
        self.problems = problems

    @property
    def verdict(self) -> Verdict:
        return Verdict(feasible=False, meets_slo=False, problems=self.problems)
