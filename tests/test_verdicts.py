"""Impossible designs are verdicts, not exceptions: each names the field and what to change.

Contract (../shared/spec/contract.md): a design that computes but does not work (utilization over
100%) exits 0 with `verdict.feasible` false; a design that cannot be computed at all (weights do not
fit, no room for one sequence's KV, TP larger than a node or not dividing the KV heads) exits 2 with
one line on stderr, and with --json still prints {"verdict": {"feasible": false, "problems": [...]}}.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from conftest import run_cli

from planner import InfeasibleDesign, load_brief, plan
from planner.cli import main

pytestmark = pytest.mark.unit

UNCOMPUTABLE = {
    "weights do not fit": (
        ["--set", "model.name=llama-3.1-405b", "--set", "deployment.weights=bf16"],
        "deployment.tp",
        "weights do not fit",
    ),
    "no room for one sequence": (["--set", "workload.kv_context_tokens=5000000"], "deployment.reserve_gb_per_gpu", "one sequence"),
    "TP larger than a node": (["--set", "deployment.tp=16"], "deployment.tp", "larger than a node"),
    "TP does not divide the node": (["--set", "deployment.tp=3"], "deployment.tp", "does not divide the 8 GPUs"),
    "TP does not divide the KV heads": (
        ["--set", "model.name=qwen3-30b-a3b", "--set", "deployment.tp=8"],
        "deployment.tp",
        "does not divide the model's 4 KV heads",
    ),
}


def _run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def _assert_problem(problem: dict[str, Any], field: str, words: str) -> None:
    assert problem["field"] == field
    assert words in problem["problem"]
    assert problem["change"], "a problem says what to change"


@pytest.mark.parametrize("case", sorted(UNCOMPUTABLE))
def test_uncomputable_design_exits_2_and_prints_its_verdict(case: str, capsys: pytest.CaptureFixture[str]) -> None:
    sets, field, words = UNCOMPUTABLE[case]
    code, out, err = _run(["plan", "capstone", "--json", *sets], capsys)
    assert code == 2
    assert err.count("\n") == 1 and err.startswith(f"error: {field}: ") and words in err
    payload = json.loads(out)
    assert set(payload) == {"verdict"}
    assert payload["verdict"]["feasible"] is False and payload["verdict"]["meets_slo"] is False
    _assert_problem(payload["verdict"]["problems"][0], field, words)


@pytest.mark.parametrize("case", sorted(UNCOMPUTABLE))
def test_uncomputable_design_is_an_infeasible_design_from_plan(case: str) -> None:
    sets, field, words = UNCOMPUTABLE[case]
    changes = dict(s.split("=", 1) for s in sets[1::2])
    brief = load_brief("capstone").with_changes({k: int(v) if v.isdigit() else v for k, v in changes.items()})
    with pytest.raises(InfeasibleDesign) as info:
        plan(brief)
    verdict = info.value.verdict
    assert not verdict.feasible and verdict.problems[0].field == field and words in verdict.problems[0].problem


def test_utilization_over_100_percent_is_exit_0_with_a_verdict(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = _run(["plan", "capstone", "--json", "--set", "workload.users=60000"], capsys)
    assert code == 0 and err == ""
    design = json.loads(out)
    assert design["capacity"]["utilization"] > 1
    assert design["verdict"]["feasible"] is False and design["verdict"]["meets_slo"] is False
    problem = next(p for p in design["verdict"]["problems"] if p["field"] == "hardware.nodes")
    assert "exceeds 100%" in problem["problem"] and "add nodes" in problem["change"]


def test_an_overloaded_replica_is_a_verdict_with_strict_json(capsys: pytest.CaptureFixture[str]) -> None:
    """So much traffic that the queue grows without bound: in flight is infinite, the JSON says null, not Infinity; a
    running sequence's TPOT is the full batch's step, as the SLO budget has it."""
    code, out, _ = _run(["plan", "qps10-tp4", "--json", "--set", "workload.request_rate=100000"], capsys)
    assert code == 0
    design = json.loads(out)  # json.loads accepts Infinity; the CLI must not print it
    assert "Infinity" not in out and "NaN" not in out
    assert design["operating_point"]["in_flight"] is None and design["slo"]["ttft_p95_ms"] is None
    assert design["operating_point"]["tpot_ms"] == pytest.approx(design["slo"]["tpot_p50_ms"], rel=1e-9)
    assert design["verdict"]["feasible"] is False
    steady = [p for p in design["verdict"]["problems"] if "cannot keep up" in p["problem"]]
    assert steady and steady[0]["field"] == "hardware.nodes" and "prefill" in steady[0]["problem"]
    assert design["operating_point"]["limit"] == "prefill" and design["operating_point"]["stable"] is False


def test_uncomputable_design_exits_2_through_a_real_process() -> None:
    proc = run_cli("plan", "capstone", "--json", "--set", "deployment.tp=16")
    assert proc.returncode == 2
    assert proc.stderr.count("\n") == 1 and "Traceback" not in proc.stderr
    assert json.loads(proc.stdout)["verdict"]["problems"][0]["field"] == "deployment.tp"


def test_the_document_shows_the_verdict_of_an_overloaded_design(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "design.md"
    code, _, _ = _run(["export", "capstone", "--set", "workload.users=60000", "--format", "md", "--out", str(out)], capsys)
    assert code == 0
    text = out.read_text()
    assert "NOT feasible" in text and "hardware.nodes" in text and "add nodes" in text


def test_the_document_is_refused_for_an_uncomputable_design(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "design.md"
    code, _, err = _run(["export", "capstone", "--set", "deployment.tp=16", "--format", "md", "--out", str(out)], capsys)
    assert code == 2 and err.startswith("error: deployment.tp: ") and not out.exists()


def test_a_ttft_target_below_the_irreducible_path_says_so(capsys: pytest.CaptureFixture[str]) -> None:
    """40 ms is below network + gateway + tokenization + first sample + first write (49 ms in the capstone)."""
    code, out, _ = _run(["plan", "capstone", "--json", "--set", "slo.ttft_p95_ms=40"], capsys)
    assert code == 0
    design = json.loads(out)
    assert design["verdict"]["meets_slo"] is False and design["slo"]["ttft_ok"] is False
    ttft = [p for p in design["verdict"]["problems"] if "TTFT" in p["problem"]]
    assert len(ttft) == 1, "one problem, not also 'add nodes' advice that cannot help"
    _assert_problem(ttft[0], "slo.ttft_p95_ms", "below the irreducible 49 ms")
    assert "set the target above 49 ms" in ttft[0]["change"]


def test_an_itl_target_below_one_sequences_step_says_so(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _run(["plan", "capstone", "--json", "--set", "slo.itl_p95_ms=5"], capsys)
    assert code == 0
    design = json.loads(out)
    assert design["verdict"]["meets_slo"] is False and design["slo"]["itl_ok"] is False
    problem = next(p for p in design["verdict"]["problems"] if "irreducible" in p["problem"])
    _assert_problem(problem, "slo.itl_p95_ms", "ITL target is below the irreducible")
    assert "higher TP" in problem["change"]


def test_a_reachable_slo_has_no_irreducible_problem() -> None:
    design = plan(load_brief("capstone"))
    assert not [p for p in design.verdict.problems if "irreducible" in p.problem]


def test_an_overloaded_long_context_pool_is_a_verdict():
    """Variation G with 12% long-context traffic: the general pool fits, but the one long-context node is 166% busy."""
    design = plan(load_brief("variation-g").with_changes({"workload.long_context_share": 0.12}))
    long_pool = next(p for p in design.architecture.pools if p.name == "long-context")
    assert long_pool.utilization > 1
    assert design.verdict.feasible is False
    problem = next(p for p in design.verdict.problems if p.field == "deployment.long_context_nodes")
    assert "long-context pool" in problem.problem and "node" in problem.change


def test_a_burst_that_swamps_the_long_context_pool_fails_its_scenario():
    capstone = plan(load_brief("capstone"))
    burst = next(f for f in capstone.failures if f.scenario.value == "long_context_burst")
    assert burst.ok and "from 39.9% to 68.9% busy" in burst.note  # prompts over 6,000 tokens, modelled at 9,000
    design = plan(load_brief("capstone").with_changes({"workload.long_context_share": 0.10}))
    burst = next(f for f in design.failures if f.scenario.value == "long_context_burst")
    assert "126.9%" in burst.note  # the pool goes from 68.9% to 126.9% busy
    assert burst.ok is False


# --- LoRA adapters are a resource the verdict checks (planner.lora) ---------------------------------


def test_adapters_that_do_not_fit_the_gpu_make_the_design_infeasible() -> None:
    for preset in ("capstone", "variation-c"):
        design = plan(load_brief(preset).with_changes({"lora.adapters": 100_000, "lora.rank": 1024}))
        assert not design.verdict.feasible and not design.verdict.meets_slo
        problem = next(p for p in design.verdict.problems if p.field == "lora.adapters")
        assert "GB per GPU" in problem.problem and problem.change


def test_adapters_are_first_class_in_any_brief_and_fields_without_adapters_are_reported() -> None:
    design = plan(load_brief("capstone").with_changes({"lora.adapters": 5}))
    assert design.verdict.feasible  # five small adapters fit
    assert design.lora_serving is not None and design.lora_serving.adapters_per_replica == 1  # 5 adapters over 8 replicas
    assert "--enable-lora" in design.config.command and "--max-lora-rank 16" in design.config.command
    assert not any(p.field.startswith("lora") for p in design.verdict.problems)
    idle = plan(load_brief("capstone").with_changes({"lora.rank": 32}))
    assert any(p.field == "lora" and "lora.adapters is 0" in p.problem for p in idle.verdict.problems)
    assert idle.lora_serving is None and "--enable-lora" not in idle.config.command
    assert not any(p.field.startswith("lora") for p in plan(load_brief("variation-c")).verdict.problems)
    assert not any(p.field.startswith("lora") for p in plan(load_brief("capstone")).verdict.problems)


def test_a_disaggregated_miss_names_what_binds():
    """Last read: chat-disaggregated at 400 req/s on 24 nodes, 19 of them prefill, missed its 2,000 ms TTFT target
    (3,125 ms) with an empty problem list: the aggregated rules met, and the prefill pool's own wait was named by none.
    A verdict that misses always names a limit and a change."""
    design = plan(
        load_brief("chat-disaggregated").with_changes(
            {"workload.request_rate": 400, "hardware.nodes": 24, "disaggregation.prefill_nodes": 19}
        )
    )
    assert design.verdict.feasible and not design.verdict.meets_slo
    (problem,) = design.verdict.problems
    assert problem.field == "disaggregation.prefill_nodes" and "p95 TTFT" in problem.problem and "prefill pool" in problem.change


def test_a_disaggregated_verdict_is_its_pools_own():
    """Last read: chat-disaggregated at 400 req/s on 23 nodes said 'p95 TPOT is 58.6 ms, over the 50 ms target' while its
    slo.tpot_p95_ms was 5.74 and itl_ok true (the aggregated comparison's miss); on 16 nodes the aggregated replica's
    queue read '24 in all ... each general-pool replica' and the sizing '23 in all' beside the fix of 27 nodes with 21
    on prefill; on 8 nodes a re-plan at the advised count had no decode pool. Its problems are the pools': a miss the
    JSON's own slo figures show, and node advice that names the split (the fix) rather than a bare count."""
    base = load_brief("chat-disaggregated").with_changes({"workload.request_rate": 400})
    on_23 = plan(base.with_changes({"hardware.nodes": 23}))
    assert on_23.slo.itl_ok and not any("TPOT" in p.problem or "ITL" in p.problem for p in on_23.verdict.problems)
    assert not any("general-pool replica" in p.problem for p in on_23.verdict.problems)
    for nodes in (8, 16):
        design = plan(base.with_changes({"hardware.nodes": nodes}))
        assert design.fix is not None and design.fix.overrides.get("disaggregation.prefill_nodes")
        for p in design.verdict.problems:
            assert "general-pool replica" not in p.problem and "sizing load needs" not in p.problem
            assert " in all (" not in p.change, p.change  # no bare fleet count: a fleet without its split
        assert any("the change that fixes it names the fleet and its split" in p.change for p in design.verdict.problems)


def test_the_kv_advice_offers_fp8_only_where_the_cache_is_not_fp8_already():
    """A KV pool too small for the sizing load: 'use FP8 KV' is advice only for a BF16 cache (the capstone's is FP8)."""
    crowded = load_brief("capstone").with_changes({"workload.users": 100_000_000})
    change = next(p.change for p in plan(crowded).verdict.problems if p.field == "workload.kv_context_tokens")
    assert "FP8 KV" not in change and "FP8 already" in change
    bf16 = crowded.with_changes({"deployment.kv_cache": "bf16"})
    assert "use FP8 KV" in next(p.change for p in plan(bf16).verdict.problems if p.field == "workload.kv_context_tokens")


def test_a_replica_without_a_steady_state_names_its_limit_in_words() -> None:
    """moe-deepseek at 60 req/s fills its KV pool: the operating point's arithmetic read "(the kv limit)" and a failure
    row "(kv binds)", code names a reader has to decode. Every figure's words name the limit as the page does."""
    from planner.cli import design_json

    design = plan(load_brief("moe-deepseek").with_changes({"workload.request_rate": 60}))
    design.failures  # noqa: B018  (the failure rows are worked out on first read)
    text = json.dumps(design_json(design))
    assert "(the KV pool binds" in text
    for code in ("kv", "slots", "prefill", "batched_tokens"):
        assert f"({code} binds" not in text and f"the {code} limit" not in text
