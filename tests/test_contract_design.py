"""`plan --json` carries the design keys of ../shared/spec/contract.md beyond steps 1-3: SLO, config, architecture, failures, cost."""

from __future__ import annotations

import pytest
from conftest import CONTRACT_SCENARIOS

from tests.conftest import cli_json, run_cli

pytestmark = pytest.mark.unit

SLO_KEYS = ("ttft_p50_ms", "ttft_p95_ms", "itl_p50_ms", "itl_p95_ms", "ttft_ok", "itl_ok", "ttft_waterfall", "itl_waterfall")


@pytest.fixture(scope="module")
def capstone_json():
    return cli_json("plan", "capstone")


def test_slo_keys(capstone_json):
    slo = capstone_json["slo"]
    for key in SLO_KEYS:
        assert key in slo, key
    for step in slo["ttft_waterfall"] + slo["itl_waterfall"]:
        assert set(step) == {"component", "ms"}
    assert isinstance(slo["ttft_ok"], bool)
    assert slo["queue_model"] and slo["percentile_method"]


def test_config_and_architecture_keys(capstone_json):
    assert capstone_json["config"]["command"].startswith("vllm serve")
    for flag in capstone_json["config"]["flags"]:
        assert {"flag", "value", "why"} <= set(flag)
    for pool in capstone_json["architecture"]["pools"]:
        assert {"name", "nodes", "role"} <= set(pool)
    assert capstone_json["architecture"]["dot"].startswith("digraph")


def test_infinite_latencies_serialize_as_null():
    data = cli_json("plan", "capstone", "--set", "deployment.max_num_seqs=20")
    assert data["slo"]["ttft_p95_ms"] is None
    assert data["verdict"]["meets_slo"] is False
    assert any(p["field"] == "deployment.max_num_seqs" for p in data["verdict"]["problems"])


def test_plan_json_is_strict_json():
    proc = run_cli("plan", "capstone", "--set", "deployment.max_num_seqs=20", "--json")
    assert proc.returncode == 0
    assert "Infinity" not in proc.stdout and "NaN" not in proc.stdout


def test_failures_and_cost_keys(capstone_json):
    names = [f["scenario"] for f in capstone_json["failures"]]
    for name in CONTRACT_SCENARIOS:
        assert name in names
    for f in capstone_json["failures"]:
        assert {"scenario", "utilization", "utilization_no_prefix_cache", "ok"} <= set(f)
    for key in ("usd_per_hour", "usd_per_year", "usd_per_million_output_tokens"):
        assert key in capstone_json["cost"]
    assert capstone_json["failure_summary"]["binding_scenario"] in names


def test_variation_keys():
    data = cli_json("plan", "variation-a")
    v = data["variation"]
    assert v["key"] == "a"
    assert v["findings"] and v["options"] and v["diff"]
    for d in v["diff"]:
        assert {"figure", "baseline", "value", "change_pct"} <= set(d)
    assert cli_json("plan", "capstone")["variation"] is None


def test_one_model_keys(capstone_json):
    """Issue 11's keys: the verdict's availability, the engine configuration analysed and printed, per-token ITL
    beside TPOT, the ITL bound at a full batch, and each failure row's overrides."""
    assert isinstance(capstone_json["verdict"]["availability_ok"], bool)
    engine = capstone_json["config"]["engine"]
    for key in ("max_num_seqs", "max_num_batched_tokens", "gpu_memory_utilization", "max_model_len"):
        assert key in engine
        assert f"--{key.replace('_', '-')} " in capstone_json["config"]["command"]
    assert f"--max-num-seqs {engine['max_num_seqs']}" in capstone_json["config"]["command"]
    slo = capstone_json["slo"]
    for key in ("itl_p50_ms", "itl_p95_ms", "tpot_p50_ms", "tpot_p95_ms"):
        assert isinstance(slo[key], float), key
    assert {"itl_p50_ms", "itl_p95_ms"} <= set(slo["at_max_batch"])
    for row in capstone_json["failures"]:
        assert isinstance(row["overrides"], dict)
        assert all(path.count(".") == 1 for path in row["overrides"])  # brief paths, as --set takes them


def test_a_failure_rows_overrides_reproduce_it_through_the_cli(capstone_json):
    row = next(r for r in capstone_json["failures"] if r["scenario"] == "prefix_hit_rate_drops")
    sets = [arg for path, value in row["overrides"].items() for arg in ("--set", f"{path}={value}")]
    again = cli_json("plan", "capstone", *sets)
    assert (again["verdict"]["feasible"] and again["verdict"]["meets_slo"]) == row["ok"]
    assert again["capacity"]["utilization"] == row["utilization"]


def test_simulate_brief_checks_the_plan_on_its_own_keys():
    out = cli_json("simulate", "capstone", "--requests", "2000")
    plan = cli_json("plan", "capstone")
    slo = out["slo"]
    assert {"ttft_p50_ms", "ttft_p95_ms", "itl_p50_ms", "itl_p95_ms", "tpot_p50_ms", "meets_slo"} <= set(slo)
    assert slo["rate_per_replica_per_s"] == plan["operating_point"]["rate_per_replica_per_s"]
    assert slo["ttft_p95_ms"] == pytest.approx(plan["slo"]["ttft_p95_ms"], rel=0.25)
    assert slo["itl_p95_ms"] == pytest.approx(plan["slo"]["itl_p95_ms"], rel=0.25)
    assert cli_json("simulate", "capstone", "--rate", "2", "--requests", "200").get("slo") is None  # a chosen rate is no plan check


@pytest.mark.parametrize("scenario", ["traffic_doubles", "prefix_hit_rate_drops"])
def test_agent_platform_rows_reproduce_through_the_cli(scenario):
    """Review s4 #1: the KV tiers derive agent-platform's hit rate; its traffic-doubles row said 96.4% of capacity and
    met while `plan --set workload.request_rate=60.0` missed at the re-derived hit rate, and its hit-rate row set a
    field the tiers ignore. Each row's overrides now give its verdict and utilization through the CLI."""
    row = next(r for r in cli_json("plan", "agent-platform")["failures"] if r["scenario"] == scenario)
    sets = [arg for path, value in row["overrides"].items() for arg in ("--set", f"{path}={value}")]
    again = cli_json("plan", "agent-platform", *sets)
    assert (again["verdict"]["feasible"] and again["verdict"]["meets_slo"]) == row["ok"] is False
    assert again["capacity"]["utilization"] == row["utilization"]
    assert again["operating_point"]["load_vs_capacity"] == row["load_vs_capacity"]
    assert (again["ignored_fields"] == []) == (scenario == "prefix_hit_rate_drops")  # with the tiers off the stated rate counts


def test_the_failure_table_and_the_engine_command_are_worked_out_when_first_read():
    """plan() leaves the failure table and the engine configuration (their ~10 re-plans: every scenario, the hit-rate
    floor, the BF16 revert) to the first read, so a page that shows neither does not wait for them. Read, they are
    what the core design gives, and `plan --json` lists them where it always did."""
    from planner import load_brief, plan
    from planner.design import _plan_cached
    from planner.failures import failure_modes

    brief = load_brief("capstone").with_changes({"workload.duty_cycle": 0.0811})
    _plan_cached.cache_clear()
    design = plan(brief)
    assert not {"config", "failures", "failure_summary"} & set(vars(design))  # not worked out yet
    one = next(m for m in design.failures if m.scenario.value == "one_node_lost")
    assert design.verdict.availability_ok == one.ok  # the verdict's N+1 row is the table's
    assert (design.failures, design.failure_summary) == failure_modes(design, brief)
    assert design.config.engine.max_num_seqs == brief.deployment.max_num_seqs
    keys = list(cli_json("plan", "capstone"))
    assert keys[keys.index("architecture") : keys.index("architecture") + 5] == [
        "architecture",
        "config",
        "failures",
        "failure_summary",
        "cost",
    ]


def test_a_variations_analysis_is_worked_out_when_first_read():
    """A variation's options re-plan the design several times over: plan() leaves them to the first read (the
    Variations page, the JSON, the document), and `plan --json` lists the analysis where it always did."""
    from planner import load_brief, plan
    from planner.design import _plan_cached

    _plan_cached.cache_clear()
    design = plan(load_brief("variation-a").with_changes({"workload.duty_cycle": 0.0811}))
    assert "variation" not in vars(design)  # not worked out yet
    assert design.variation is not None and design.variation.key.value == "a" and design.variation.options
    assert "variation" in vars(design)  # worked out once, then kept
    keys = list(cli_json("plan", "variation-a"))
    assert keys[keys.index("headroom") : keys.index("headroom") + 3] == ["headroom", "variation", "scale_out"]
