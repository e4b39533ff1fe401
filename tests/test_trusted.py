"""planner.trusted builds result models without validating them: each must be the model validation builds (the same
fields in the same order, each the same type and value), on every preset and at other loads and fleet sizes."""

from __future__ import annotations

import math
from collections.abc import Iterator

import pytest

import planner.trusted as trusted_module
from benchmarks.plan_speed import _clear_all
from planner import load_brief, plan, preset_names
from planner.cli import design_json
from planner.pools import Pools
from planner.trusted import trusted

pytestmark = pytest.mark.unit


@pytest.fixture
def checking() -> Iterator[None]:
    trusted_module.CHECKING = True
    try:
        yield
    finally:
        trusted_module.CHECKING = False


@pytest.mark.parametrize("name", preset_names())
@pytest.mark.parametrize("changes", ["stated", "busier", "more nodes"])
def test_every_model_a_plan_builds_unvalidated_is_the_validated_one(name: str, changes: str, checking: None) -> None:
    brief = load_brief(name)
    w = brief.workload
    if changes == "busier":
        brief = brief.with_changes(
            {"workload.request_rate": w.request_rate * 1.6}
            if w.request_rate is not None
            else {"workload.duty_cycle": min(1.0, w.duty_cycle * 1.6)}
        )
    elif changes == "more nodes":
        brief = brief.with_changes({"hardware.nodes": brief.hardware.nodes + 2})
    _clear_all()
    design_json(plan(brief))  # every part worked out on first read too; CHECKING raises at the first difference


def test_the_check_tells_an_int_from_a_float(checking: None) -> None:
    fields = {"general_nodes": 2, "long_context_nodes": 0, "spare_nodes": 0, "general_replicas": 4, "general_share": 1.0}
    assert trusted(Pools, **fields, arithmetic={}) == Pools(**fields, arithmetic={})
    with pytest.raises(AssertionError, match="general_share"):
        trusted(Pools, **(fields | {"general_share": 1}), arithmetic={})  # validation makes it 1.0: the JSON would read "1.0"
    assert math.isnan(trusted(Pools, **(fields | {"general_share": math.nan}), arithmetic={}).general_share)


def test_fields_come_in_their_declared_order_and_a_default_left_out_is_filled(checking: None) -> None:
    fields = {"general_share": 1.0, "general_replicas": 4, "spare_nodes": 0, "long_context_nodes": 0, "general_nodes": 2}
    built = trusted(Pools, **fields, arithmetic={})  # streams_per_replica left to its default; CHECKING compares the order
    assert list(built.__dict__) == list(Pools.model_fields)
    assert built.streams_per_replica == 1
    assert built.model_dump_json() == Pools(**fields, arithmetic={}).model_dump_json()


def test_a_mutable_default_is_not_shared() -> None:
    with pytest.raises(KeyError, match="arithmetic"):
        trusted(Pools, general_nodes=2, long_context_nodes=0, spare_nodes=0, general_replicas=4, general_share=1.0)


def test_a_model_that_validates_its_values_is_refused() -> None:
    from planner.brief import Workload

    with pytest.raises(TypeError, match="validates"):
        trusted(Workload, users=10)
