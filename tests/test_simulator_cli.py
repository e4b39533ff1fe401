"""`simulate` and `max-rate` as ../shared/spec/contract.md states them: keys, flags, exit codes."""

from __future__ import annotations

import json

import pytest
from conftest import cli_json, run_cli

pytestmark = pytest.mark.unit

SIM_KEYS = {"requests", "duration_s", "output_tokens_per_s", "requests_per_s", "ttft_ms", "tpot_ms", "slo_attainment", "wall_ms"}
PCT_KEYS = {"mean", "p50", "p90", "p95", "p99"}


def test_simulate_contract_keys():
    out = cli_json("simulate", "qps200-chat", "--rate", "2", "--requests", "50", "--seed", "3")
    assert out.keys() >= SIM_KEYS
    assert out["ttft_ms"].keys() >= PCT_KEYS
    assert out["tpot_ms"].keys() >= PCT_KEYS
    assert out["requests"] == 50
    assert 0 <= out["slo_attainment"] <= 1
    assert out["wall_ms"] > 0


def test_simulate_without_brief_describes_a_benchmark_setup():
    out = cli_json(
        "simulate",
        "--set",
        "model.name=llama-3.1-8b",
        "--set",
        "hardware.gpu=h100-sxm",
        "--set",
        "deployment.tp=1",
        "--rate",
        "inf",
        "--requests",
        "300",
        "--input",
        "128",
        "--output",
        "128",
    )
    assert out["requests"] == 300
    assert out["rate_per_s"] is None  # inf is not JSON: null, with every request at t = 0
    assert out["output_tokens_per_s"] > 0


def test_simulate_concurrency():
    out = cli_json("simulate", "qps200-chat", "--concurrency", "3", "--requests", "12", "--input", "100", "--output", "20")
    assert out["concurrency"] == 3
    assert out["requests"] == 12


def test_simulate_brief_is_the_plan_check_at_its_own_length():
    """Without --rate, --concurrency or --requests: the plan check's 20,000 requests; a benchmark run's default is 1,000."""
    check = cli_json("simulate", "variation-a")
    assert check["requests"] == 20_000 and check["slo"]["meets_slo"] is True
    assert cli_json("simulate", "qps200-chat", "--rate", "2")["requests"] == 1000


def test_the_plan_check_says_what_the_plan_judges_beyond_its_run():
    """Review s4 finding 11: with a duty cycle of 0.16 and 10% of prompts long the plan fails on the long-context pool
    (126.9% busy) while the run of one general-pool replica meets; the check says which replica it runs, the plan's
    verdict, and what lies outside."""
    sets = ("--set", "workload.duty_cycle=0.16", "--set", "workload.long_context_share=0.1")
    args = ("simulate", "capstone", *sets, "--requests", "2000")
    check = cli_json(*args)["slo"]
    plan = cli_json("plan", "capstone", *sets)["verdict"]
    assert check["meets_slo"] is True and plan["meets_slo"] is False and check["plan_meets_slo"] is False
    assert "general-pool replica" in check["scope"]
    assert "long-context pool" in check["not_simulated"] and "126.9%" in check["not_simulated"]
    text = run_cli(*args, check=True).stdout
    assert "the plan misses the SLO" in text and "long-context pool" in text and "general-pool replica" in text
    baseline = cli_json("simulate", "capstone", "--requests", "2000")["slo"]
    assert baseline["plan_meets_slo"] is True and baseline["not_simulated"] == ""


def test_max_rate_contract_keys():
    out = cli_json("max-rate", "qps200-chat")
    for key in ("max_rate_per_s", "replicas_needed", "replicas_with_headroom", "gpus", "usd_per_million_output_tokens"):
        assert key in out
    assert out["gpus"] == 128
    assert out["converged"] is True
    assert out["probe_requests"] == out["probe_lengths_tried"][-1] == out["confidence"]["requests"][-1]
    assert out["confidence"]["replicas_needed"] == [out["replicas_needed"]] * 2
    for key in ("tolerance", "relative_change", "rates_per_s", "rate_low_per_s", "rate_high_per_s", "capped_at_slot_bound", "statement"):
        assert key in out["confidence"]


def test_max_rate_text_says_how_the_probe_length_was_chosen():
    given = run_cli("max-rate", "qps200-chat", "--requests", "300", check=True).stdout
    assert "probe length     not checked: the probe length was given (300 requests a probe)" in given


@pytest.mark.parametrize(
    ("args", "names"),
    [
        (("simulate", "--rate", "-3"), "--rate"),
        (("simulate", "--rate", "fast"), "--rate"),
        (("simulate", "--requests", "0"), "--requests"),
        (("simulate", "--input", "0"), "--input"),
        (("simulate", "--rate", "2", "--concurrency", "4"), "--concurrency"),
        (("simulate", "no-such-preset"), "no-such-preset"),
        (("simulate", "--set", "deployment.tp=3"), "deployment.tp"),
        (("simulate", "--set", "model.name=gpt-9"), "model.name"),
        (("max-rate", "qps200-chat", "--set", "slo.attainment_target=2"), "slo.attainment_target"),
        (("max-rate",), "BRIEF"),
    ],
)
def test_bad_input_exits_2_with_one_line(args, names):
    proc = run_cli(*args)
    assert proc.returncode == 2, proc.stderr
    assert names in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1
    assert "Traceback" not in proc.stderr


def test_weights_that_do_not_fit_print_a_verdict():
    proc = run_cli("simulate", "--set", "model.name=llama-3.1-405b", "--set", "deployment.tp=1", "--json")
    assert proc.returncode == 2
    verdict = json.loads(proc.stdout)["verdict"]
    assert verdict["feasible"] is False
    assert verdict["problems"]


def test_the_plan_check_of_an_offline_job_runs_its_full_batch():
    """simulate BRIEF on a design judged on its deadline adds `objective`: a closed loop of the plan's full batch, the
    simulated output tokens/s a replica beside the plan's (within 5%: offline-batch 5,418 against 5,589), and the
    job's time at the simulated pace against the deadline; a latency design has none."""
    out = cli_json("simulate", "offline-batch")
    check = out["objective"]
    assert check["batch_per_replica"] == 512 and check["meets"] is True
    assert check["plan_output_tokens_per_s"] == pytest.approx(check["output_tokens_per_s"], rel=0.05)
    assert check["time_s"] == pytest.approx(check["plan_time_s"] * check["plan_output_tokens_per_s"] / check["output_tokens_per_s"])
    assert cli_json("simulate", "capstone")["objective"] is None
    text = run_cli("simulate", "offline-batch", check=True).stdout
    assert "objective check" in text and "the plan meets its deadline" in text and "no latency target judges" in text
