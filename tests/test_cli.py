"""The command line per ../shared/spec/contract.md: keys, exit codes, one-line errors naming the field."""

from __future__ import annotations

import json

import pytest

from tests.conftest import cli_json, run_cli

pytestmark = pytest.mark.unit

CONTRACT_KEYS = {
    "demand": ("request_rate_per_s", "generating_sequences", "input_tokens_per_s", "output_tokens_per_s"),
    "memory": ("weights_gb_per_gpu", "kv_gb_per_gpu", "kv_bytes_per_token_per_gpu", "max_sequences_per_replica"),
    "capacity": (
        "decode_step_ms",
        "decode_tokens_per_s",
        "prefill_tokens_per_s",
        "prefill_fraction",
        "decode_fraction",
        "utilization",
        "utilization_no_prefix_cache",
        "binding_constraint",
    ),
    "operating_point": ("in_flight", "tpot_ms", "kv_in_use_gb", "capacity_rate_per_s"),
    "verdict": ("feasible", "meets_slo", "problems"),
}


@pytest.mark.parametrize("preset", ["capstone", "qps10-tp4"])
def test_plan_json_carries_the_contract_keys(preset):
    data = cli_json("plan", preset)
    for section, keys in CONTRACT_KEYS.items():
        for key in keys:
            assert key in data[section], f"{section}.{key}"
    assert data["capacity"]["binding_constraint"] in ("memory", "bandwidth", "compute")


def test_plan_capstone_reference_figures_from_the_cli():
    data = cli_json("plan", "capstone")
    assert data["demand"]["request_rate_per_s"] == pytest.approx(55.6, rel=0.02)
    assert data["capacity"]["utilization_no_prefix_cache"] == pytest.approx(0.514, rel=0.02)
    assert data["memory"]["kv_bytes_per_token_per_gpu"] == 20_480


def test_plan_text_output_is_readable():
    proc = run_cli("plan", "capstone", check=True)
    assert "Utilization at peak" in proc.stdout and "55.6 req/s" in proc.stdout and "Cost per M output tokens   " in proc.stdout


def test_presets_lists_every_required_preset():
    names = {p["name"] for p in cli_json("presets")["presets"]}
    required = {"capstone", "qps10-tp4", *(f"variation-{k}" for k in "abcdefg")}
    assert required <= names


def _assert_one_line_error(proc, *needles):
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert "Traceback" not in proc.stderr
    for needle in needles:
        assert needle in lines[0], lines[0]


def test_unknown_preset_exits_2():
    _assert_one_line_error(run_cli("plan", "no-such-preset"), "no-such-preset", "unknown preset")


def test_malformed_toml_exits_2(tmp_path):
    bad = tmp_path / "bad.toml"
    bad.write_text("[workload\nusers = 3\n")
    _assert_one_line_error(run_cli("plan", str(bad)), "bad.toml", "malformed TOML")


def test_malformed_json_exits_2(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text('{"workload": {"users": 3,}}')
    _assert_one_line_error(run_cli("plan", str(bad)), "bad.json", "malformed JSON")


def test_unknown_field_in_file_exits_2(tmp_path):
    bad = tmp_path / "extra.toml"
    bad.write_text('[workload]\nusers = 100\nvibes = "high"\n')
    _assert_one_line_error(run_cli("plan", str(bad)), "workload.vibes", "unknown field")


def test_unknown_override_path_exits_2():
    _assert_one_line_error(run_cli("plan", "capstone", "--set", "workload.vibes=1"), "workload.vibes", "unknown field")


def test_out_of_range_value_names_the_field():
    _assert_one_line_error(run_cli("plan", "capstone", "--set", "workload.duty_cycle=1.5"), "workload.duty_cycle")


def test_wrong_type_names_the_field():
    _assert_one_line_error(run_cli("plan", "capstone", "--set", "hardware.nodes=lots"), "hardware.nodes")


def test_unknown_catalog_key_names_the_field():
    _assert_one_line_error(run_cli("plan", "capstone", "--set", "hardware.gpu=tpu-v9"), "hardware.gpu", "unknown GPU")


def test_model_that_does_not_fit_is_exit_2_with_a_json_verdict():
    proc = run_cli("plan", "capstone", "--set", "model.name=llama-3.1-405b", "--set", "deployment.tp=1", "--json")
    _assert_one_line_error(proc, "deployment.tp", "do not fit")
    verdict = json.loads(proc.stdout)["verdict"]
    assert verdict["feasible"] is False
    assert verdict["problems"][0]["field"] == "deployment.tp"
    assert "raise TP" in verdict["problems"][0]["change"]


def test_tp_larger_than_a_node_exits_2():
    _assert_one_line_error(run_cli("plan", "capstone", "--set", "deployment.tp=16"), "deployment.tp", "larger than a node")


def test_tp_not_dividing_kv_heads_exits_2():
    proc = run_cli("plan", "capstone", "--set", "model.name=qwen3-30b-a3b", "--set", "deployment.tp=8")
    _assert_one_line_error(proc, "deployment.tp", "KV heads")


def test_utilization_over_100_percent_is_a_verdict_not_an_error():
    data = cli_json("plan", "capstone", "--set", "hardware.nodes=2", "--set", "workload.prefix_hit_rate=0")
    assert data["capacity"]["utilization"] > 1
    assert data["verdict"]["feasible"] is False
    assert any(p["field"] == "hardware.nodes" for p in data["verdict"]["problems"])


def test_bad_command_line_exits_2_with_one_line():
    _assert_one_line_error(run_cli("plan", "capstone", "--bogus"), "--bogus")


def test_plan_text_shows_the_gap_figure_the_itl_target_judges():
    """agent-platform's ITL target judges TPOT: the text prints p95 TPOT against it, the capstone p95 ITL."""
    text = run_cli("plan", "agent-platform", check=True).stdout
    assert "p95 TPOT" in text and "(target 60 ms)" in text.split("p95 TPOT", 1)[1].splitlines()[0]
    assert "p95 ITL " not in text
    assert "p95 ITL " in run_cli("plan", "capstone", check=True).stdout


@pytest.mark.parametrize("name", ["offline-batch", "rl-rollout"])
def test_a_deadline_designs_latency_figures_print_as_reference(name):
    """An offline job or a rollout has no latency target: its capacity and p95 lines say they are for reference and
    which targets the capacity was found at, and no line claims a target."""
    lines = run_cli("plan", name, check=True).stdout.splitlines()
    for label in ("Capacity under the SLO", "p95 TTFT", "p95 ITL"):
        line = next(x for x in lines if x.strip().startswith(label))
        assert "for reference: the deadline judges this design" in line and "(target" not in line
    assert "at the brief's p95 TTFT 500 ms and p95 ITL 40 ms" in next(x for x in lines if "Capacity under the SLO" in x)
