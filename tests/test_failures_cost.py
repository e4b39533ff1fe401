"""Failure modes (step 6) and cost (step 7): golden figures from reference-figures.md with their tolerances,
and invariants of the re-planned scenarios."""

from __future__ import annotations

import json
import math
import re
import subprocess
import sys

import pytest
from conftest import CONTRACT_SCENARIOS, cli_json, run_cli

from planner import load_brief, plan, preset_names
from planner.core import core_design
from planner.cost import SPOT_DISCOUNT, SPOT_SHARE
from planner.errors import BriefError
from planner.failures import Scenario, hit_rate_floor
from planner.fmt import num

pytestmark = pytest.mark.unit

TOL = 0.02  # reference-figures.md: 2% unless stated
APPROX = 0.05  # figures the reference gives as "~"


@pytest.fixture(scope="module")
def capstone():
    return plan(load_brief("capstone"))


def _modes(design):
    return {m.scenario.value: m for m in design.failures}


def test_every_scenario_is_present_once(capstone):
    assert [m.scenario.value for m in capstone.failures] == list(CONTRACT_SCENARIOS)
    for m in capstone.failures:
        assert m.title and m.change and m.note


def test_capstone_failures_on_the_consistent_basis(capstone):
    modes = _modes(capstone)
    # reference-figures.md: with the decode batch following the load (Little's law), no-cache basis
    assert modes["one_node_lost"].utilization_no_prefix_cache == pytest.approx(0.56, rel=APPROX)
    assert modes["traffic_doubles"].utilization_no_prefix_cache == pytest.approx(0.90, rel=APPROX)
    # hit rate drops to 20%: ~45% at the configured basis (the seed's 78% does not follow from its arithmetic)
    assert modes["prefix_hit_rate_drops"].utilization == pytest.approx(0.45, rel=APPROX)
    # BF16 revert: decode 2x (prefill already at the BF16 peak in the capstone) gives 73%
    assert modes["revert_to_bf16"].utilization_no_prefix_cache == pytest.approx(0.73, rel=TOL)
    # losing nodes and doubling load raise utilization; the burst leaves the general pool alone
    assert modes["two_nodes_lost"].utilization > modes["one_node_lost"].utilization > capstone.capacity.utilization * 0.99
    assert modes["long_context_burst"].utilization == pytest.approx(capstone.capacity.utilization, rel=1e-9)
    assert "long-context pool" in modes["long_context_burst"].note


def test_capstone_failures_on_the_seed_linear_basis(capstone):
    modes = _modes(capstone)
    # seed: 59% / 68% / 102.7% / 80.8%, scaling its 51.4% linearly (ours starts from 50.9%: 8.7 vs 9.0 ms step)
    assert modes["one_node_lost"].utilization_linear_no_prefix_cache == pytest.approx(0.59, rel=TOL)
    assert modes["two_nodes_lost"].utilization_linear_no_prefix_cache == pytest.approx(0.68, rel=TOL)
    assert modes["traffic_doubles"].utilization_linear_no_prefix_cache == pytest.approx(1.027, rel=TOL)
    assert modes["inputs_double"].utilization_linear_no_prefix_cache == pytest.approx(0.808, rel=TOL)
    # the consistent basis is below the linear one wherever the batch grows
    for name in ("one_node_lost", "two_nodes_lost", "traffic_doubles"):
        assert modes[name].utilization_no_prefix_cache < modes[name].utilization_linear_no_prefix_cache


def test_capstone_summary(capstone):
    s = capstone.failure_summary
    assert s.n_plus_one_ok
    assert s.binding_scenario.value in CONTRACT_SCENARIOS
    assert "planned again by the same function" in s.load_scaling and "capacity under the SLO" in s.load_scaling
    assert "8.76 h" in s.availability_note  # 0.1% of 8,760 h
    failing = [m for m in capstone.failures if not m.ok]
    if failing:
        assert s.binding_scenario in {m.scenario for m in failing}


def test_traffic_doubles_breaks_a_busy_long_context_pool_first(capstone):
    m = _modes(capstone)["traffic_doubles"]
    # the general pool keeps up (at the engine's pace 8 nodes' replicas run at about half their SLO capacity) ...
    assert m.ttft_ok and m.itl_ok and 0.4 < m.load_vs_capacity < 0.7
    # ... and the one long-context node, 39.9% busy with the prompts over 6,000 tokens, carries twice its share
    assert m.ok and capstone.architecture.pools[1].utilization == pytest.approx(0.399, abs=0.001)
    # with 14% long-context traffic that node is 92% busy at the brief's load and cannot carry twice its share
    busier = _modes(plan(capstone.brief.with_changes({"workload.long_context_share": 0.14})))["traffic_doubles"]
    assert busier.ttft_ok and busier.itl_ok and not busier.ok and "long-context pool" in busier.note


def _derives_fields(name: str) -> bool:
    """A preset whose plan derives brief fields (planner.mechanisms.resolve): the KV tiers' hit rate, image tokens."""
    brief = load_brief(name)
    return brief.kv_tiers.enabled or brief.multimodal.enabled


DERIVING_PRESETS = [name for name in preset_names() if _derives_fields(name)]


@pytest.mark.parametrize("preset", preset_names())
def test_every_row_is_the_verdict_plan_gives_with_its_overrides(preset):
    """failures[].overrides applied with --set to the brief as given give the row's verdict and utilization (one
    function, one answer), also where the plan derives fields: the KV tiers derive the changed brief's hit rate again,
    image tokens join the prompt once."""
    stated = load_brief(preset)
    design = plan(stated)
    for m in design.failures:
        if not m.runs:  # the changed brief cannot be computed: `plan --set` refuses it too (exit 2)
            if m.overrides:
                with pytest.raises(BriefError):
                    plan(stated.with_changes(m.overrides))
            continue
        replanned = plan(stated.with_changes(m.overrides))
        assert m.ok == (replanned.verdict.feasible and replanned.verdict.meets_slo), m.scenario
        assert m.utilization == pytest.approx(replanned.capacity.utilization, rel=1e-9), m.scenario
        assert m.ttft_p95_ms == pytest.approx(replanned.slo.ttft_p95_ms, rel=1e-9), m.scenario
        assert m.load_vs_capacity == pytest.approx(replanned.operating_point.load_vs_capacity, rel=1e-9), m.scenario


def test_the_presets_with_derived_fields_are_covered():
    assert {"agent-platform", "multimodal"} <= set(DERIVING_PRESETS)


def test_a_stated_hit_rate_the_kv_tiers_replace_is_reported_not_dropped():
    """With KV tiers the plan uses the derived hit rate; a stated one is named in the verdict's problems with the
    reason, and the design is the one the derived rate gives. The hit-rate scenario turns the tiers off to state its rate."""
    stated = load_brief("agent-platform")
    base, moved = plan(stated), plan(stated.with_changes({"workload.prefix_hit_rate": 0.2}))
    derived = base.kv_tiers.hit_rate
    assert moved.brief.workload.prefix_hit_rate == pytest.approx(derived)
    ignored = moved.ignored_fields
    assert len(ignored) == 1 and ignored[0].field == "workload.prefix_hit_rate"
    assert "not used" in ignored[0].problem and "20.0%" in ignored[0].problem
    assert f"{derived:.1%}" in ignored[0].problem and "kv_tiers.cpu_gb_per_node=0" in ignored[0].change
    assert moved.verdict == base.verdict  # it judges nothing
    assert plan(stated.with_changes({"workload.prefix_hit_rate": round(derived, 4)})).ignored_fields == ()
    out = cli_json("plan", "agent-platform", "--set", "workload.prefix_hit_rate=0.2")
    assert [f["field"] for f in out["ignored_fields"]] == ["workload.prefix_hit_rate"]
    text = run_cli("plan", "agent-platform", "--set", "workload.prefix_hit_rate=0.2", check=True).stdout
    assert "Not used" in text and "workload.prefix_hit_rate: not used" in text
    row = _modes(base)["prefix_hit_rate_drops"]
    assert row.overrides["kv_tiers.cpu_gb_per_node"] == 0 and row.overrides["workload.prefix_hit_rate"] == 0.2
    dropped = plan(stated.with_changes(row.overrides))
    assert dropped.brief.workload.prefix_hit_rate == 0.2
    assert dropped.ignored_fields == ()


@pytest.mark.parametrize("preset", ["qps10-tp4", "chat-speculative", "offline-batch"])
def test_users_and_a_duty_cycle_beside_a_request_rate_are_reported_not_dropped(preset):
    """A brief given as a request rate plans that rate: a duty cycle or users stated beside it change nothing, and the
    plan says so (JSON ignored_fields, the CLI's "Not used" line) instead of dropping them silently."""
    stated = load_brief(preset)
    assert stated.workload.request_rate is not None and plan(stated).ignored_fields == ()
    moved = plan(stated.with_changes({"workload.duty_cycle": 0.3, "workload.users": 100}))
    assert [f.field for f in moved.ignored_fields] == ["workload.users", "workload.duty_cycle"]
    assert all("not used: the request rate" in f.problem for f in moved.ignored_fields)
    assert moved.verdict == plan(stated).verdict and moved.demand == plan(stated).demand  # they judge nothing
    text = run_cli("plan", preset, "--set", "workload.duty_cycle=0.3", check=True).stdout
    assert "workload.duty_cycle: not used" in text


def test_failure_verdicts_follow_the_slo_targets(capstone):
    for m in capstone.failures:
        assert m.ttft_ok == (m.ttft_p95_ms <= 500)
        assert m.itl_ok == (m.itl_p95_ms <= 40)
        assert m.ok <= (m.ttft_ok and m.itl_ok)


def test_impossible_scenarios_are_verdicts_not_exceptions():
    qps10 = _modes(plan(load_brief("qps10-tp4")))
    assert not qps10["two_nodes_lost"].ok and math.isinf(qps10["two_nodes_lost"].utilization)
    f = _modes(plan(load_brief("variation-f")))
    assert not f["revert_to_bf16"].ok and "weights do not fit" in f["revert_to_bf16"].note


def test_more_nodes_never_raise_failure_utilization():
    base = load_brief("capstone")
    small, large = plan(base.with_changes({"hardware.nodes": 7})), plan(base.with_changes({"hardware.nodes": 10}))
    for a, b in zip(small.failures, large.failures, strict=True):
        assert b.utilization <= a.utilization + 1e-9, a.scenario


def test_hit_rate_floor_is_a_dependency(capstone):
    """The floor is found by re-planning at each hit rate and stated on the printed 0.1% grid: at the value it says
    meets, `plan --set` meets; at the value it says misses, it misses. On the capstone the general pool holds down to
    about 11% (the worked design: 20% still fits)."""
    floor = hit_rate_floor(core_design(capstone.brief))
    assert floor is not None and 0.05 < floor.meets_down_to < 0.2 and not floor.misses_already
    hit = next(d for d in capstone.config.dependencies if "hit rate" in d.what)
    assert f"meets its SLO at {floor.meets_down_to:.1%} and misses it at {floor.misses_at:.1%}" in hit.breaks_if
    no_cache = plan(capstone.brief.with_changes({"deployment.prefix_caching": False}))
    assert not any("hit rate" in d.what for d in no_cache.config.dependencies)


def _printed_bracket(breaks_if: str) -> tuple[str, str]:
    match = re.search(r"meets its SLO at ([0-9.]+)% and misses it at ([0-9.]+)%", breaks_if)
    assert match, breaks_if
    return f"{float(match[1]) / 100:.3f}", f"{float(match[2]) / 100:.3f}"


@pytest.mark.parametrize(
    ("preset", "sets"),
    [("capstone", ()), ("capstone", ("workload.prefix_hit_rate=0.7305",)), ("agent-platform", ())],
)
def test_the_hit_rate_dependency_is_true_at_its_printed_values(preset, sets):
    """Review s4 #7: at 73.05% the text said "misses already at 73.0%" while it met. The values the dependency prints
    are the ones `plan --set` is given (with KV tiers, with the tiers off as the text says)."""
    args = [arg for item in sets for arg in ("--set", item)]
    out = cli_json("plan", preset, *args)
    text = next(d["breaks_if"] for d in out["config"]["dependencies"] if "hit rate" in d["what"])
    meets, misses = _printed_bracket(text)
    tiers_off = ["--set", "kv_tiers.cpu_gb_per_node=0", "--set", "kv_tiers.nvme_gb_per_node=0"] if "KV tiers off" in text else []
    assert bool(tiers_off) == (preset == "agent-platform")

    def verdict(rate: str) -> bool:
        v = cli_json("plan", preset, *args, *tiers_off, "--set", f"workload.prefix_hit_rate={rate}")["verdict"]
        return bool(v["feasible"] and v["meets_slo"])

    assert verdict(meets) and not verdict(misses), text


# --- cost ---------------------------------------------------------------------------------------------


def test_capstone_cost(capstone):
    c = capstone.cost
    assert c.usd_per_hour == pytest.approx(160, rel=1e-9)  # 64 x $2.50
    assert c.usd_per_year == pytest.approx(1_401_600, rel=1e-9)  # x 8,760 h
    assert c.output_tokens_per_year == pytest.approx(3.12e11, rel=TOL)  # 19,444 x 0.51 x 3.15e7 s
    assert c.usd_per_million_output_tokens == pytest.approx(4.48, rel=TOL)
    assert c.usd_per_million_input_tokens == pytest.approx(1_401_600 / (c.input_tokens_per_year / 1e6), rel=1e-9)
    assert set(c.arithmetic) >= {"usd_per_hour", "usd_per_year", "output_tokens_per_year", "usd_per_million_output_tokens"}


def _cli_meets(preset: str, sets: list[str]) -> bool:
    run = subprocess.run([sys.executable, "-m", "planner", "plan", preset, *sets, "--json"], capture_output=True, text=True, check=True)
    verdict = json.loads(run.stdout)["verdict"]
    return bool(verdict["feasible"] and verdict["meets_slo"])


def test_capstone_cost_levers(capstone):
    c = capstone.cost
    levers = {lever.name.split(" ")[0]: lever for lever in c.levers}
    # filling the trough runs the fleet at peak all day: $/M x the average duty
    assert levers["fill"].usd_per_million_output_tokens == pytest.approx(4.48 * 0.51, rel=TOL)
    spot = levers["spot"]
    assert "2 of 8" in spot.name
    assert spot.usd_per_million_output_tokens == pytest.approx(c.usd_per_million_output_tokens * (1 - SPOT_SHARE * SPOT_DISCOUNT), rel=1e-9)
    smaller = levers["smaller"]
    assert smaller.usd_per_million_output_tokens < c.usd_per_million_output_tokens
    nodes = int(smaller.change.split(" -> ")[1].split(" ")[0])
    assert smaller.overrides["hardware.nodes"] == nodes
    # the claim, checked the way a reader checks it: the printed overrides under `plan --set` meet the SLO ...
    printed = re.search(r"\(re-planned: plan (--set [^)]*) meets it\)", smaller.arithmetic)
    assert printed is not None, smaller.arithmetic
    sets = printed.group(1).split()
    printed_overrides = {path: float(value) for path, value in (a.split("=") for a in sets[1::2])}
    assert printed_overrides == {path: float(value) for path, value in smaller.overrides.items()}
    assert _cli_meets("capstone", sets)
    # ... and one node fewer does not: the fewest
    fewer = plan(load_brief("capstone").with_changes({**smaller.overrides, "hardware.nodes": nodes - 1})).verdict
    assert not (fewer.feasible and fewer.meets_slo)
    for lever in c.levers:
        assert "$" in lever.arithmetic and lever.change


def test_cost_follows_price_and_duty():
    base = load_brief("capstone")
    cheap = plan(base.with_changes({"cost.usd_per_gpu_hour": 1.25})).cost
    assert cheap.usd_per_million_output_tokens == pytest.approx(4.48 / 2, rel=TOL)
    busy = plan(base.with_changes({"cost.average_duty": 1.0})).cost
    assert busy.usd_per_million_output_tokens == pytest.approx(4.48 * 0.51, rel=TOL)


def test_the_smaller_fleet_lever_says_none_when_the_fleet_is_already_the_fewest():
    """variation-a's 4 nodes are the fewest that meet its SLO (re-planned): the lever says so instead of
    '4 -> 4 nodes; 0.0%'; the capstone's fleet has a smaller one (8 -> 4, leaning on the prefix cache)."""
    levers = {lever.name: lever for lever in plan(load_brief("variation-a")).cost.levers}
    same = levers["smaller fleet with a degradation ladder"]
    assert same.change.startswith("none: 4 nodes are already the fewest") and "->" not in same.change
    capstone = {lever.name: lever for lever in plan(load_brief("capstone")).cost.levers}
    assert capstone["smaller fleet with a degradation ladder"].change.startswith("8 -> 4 nodes")


@pytest.mark.parametrize("preset", ["qps200-chat", "moe-deepseek", "chat-disaggregated", "multimodal", "agent-platform"])
def test_a_scenario_that_changes_nothing_is_not_applicable_and_not_counted(preset):
    """Review s4 #10: "Prefix hit rate drops to 20% | 0.0% -> 0.0%" and a long-context burst with no long-context
    request were counted as passing. A scenario whose overrides leave the brief as it is (or whose change has no
    effect: no prefix cache) is marked not applicable with the reason, applies no override, is neither counted in
    "Scenarios within the SLO" nor chosen as binding."""
    design = plan(load_brief(preset))
    modes, summary = _modes(design), design.failure_summary
    burst = modes["long_context_burst"]
    assert not burst.applicable and burst.overrides == {} and "not applicable: no request is long-context" in burst.note
    hit = modes["prefix_hit_rate_drops"]
    assert hit.applicable == (preset == "agent-platform")
    if not hit.applicable:
        assert hit.overrides == {} and hit.note.startswith("not applicable: ")
    applicable = [m for m in design.failures if m.applicable]
    assert summary.scenarios_applicable == len(applicable) < len(design.failures)
    assert summary.scenarios_within_slo == sum(m.ok for m in applicable)
    assert modes[summary.binding_scenario.value].applicable
    for m in design.failures:
        assert "spare (0)" not in m.change and "0.0% -> 0.0%" not in m.change
    if preset == "qps200-chat":  # no spare node
        assert modes["one_node_lost"].change.endswith("; no spare to step in")


def test_every_scenario_applies_to_the_capstone(capstone):
    assert all(m.applicable for m in capstone.failures) and capstone.failure_summary.scenarios_applicable == 7


def test_failure_rows_of_a_tpot_brief_show_the_judged_figure():
    """Review s4 #3: agent-platform judges TPOT against its 60 ms target; a row's note names TPOT and shows its value,
    and the row carries the TPOT `plan --set` with its overrides gives."""
    stated = load_brief("agent-platform")
    design = plan(stated)
    for m in design.failures:
        assert "p95 ITL" not in m.note
        if m.runs and m.applicable:
            assert m.tpot_p95_ms == pytest.approx(plan(stated.with_changes(m.overrides)).slo.tpot_p95_ms, rel=1e-9)
    one = _modes(design)["one_node_lost"]
    assert one.ok and f"p95 TPOT {num(one.tpot_p95_ms, 'ms')}" in one.note
    assert "p95 ITL" in _modes(plan(load_brief("capstone")))["one_node_lost"].note  # an ITL brief names ITL


@pytest.mark.parametrize(
    ("preset", "changes", "spot"), [("capstone", {}, 2), ("moe-deepseek", {}, 1), ("multimodal", {"hardware.nodes": 3}, 0)]
)
def test_spot_nodes_stay_within_what_the_failure_table_absorbs(preset, changes, spot):
    """Review s6 finding 6: a reclaimed spot node is a lost node, so the lever puts at most as many nodes on spot as the
    failure table's rows show the design losing while its SLO holds (capstone: two lost fit, 2 of 8; moe-deepseek:
    two lost fail, 1 of 12 instead of 3; multimodal on 3 nodes: one lost fails, none)."""
    design = plan(load_brief(preset).with_changes(changes))
    rows = {m.scenario: m for m in design.failures}
    absorbed = 0 if not rows[Scenario.one_node_lost].ok else (2 if rows[Scenario.two_nodes_lost].ok else 1)
    lever = next(lv for lv in design.cost.levers if lv.name.startswith("spot nodes"))
    assert absorbed == spot and lever.name.startswith(f"spot nodes for {spot} of")
    assert (lever.change.startswith("none: losing one node already breaks the SLO")) == (spot == 0)


def test_the_availability_note_counts_the_spares_the_fleet_runs():
    """Review s6: a one-node qps10-tp4 cannot hold its stated spare beside a general pool, so it runs none; the note said
    'with 1 spare node(s)' and 'leaves unbounded busy'. It now counts the spares that run and says no fleet is left."""
    d = plan(load_brief("qps10-tp4").with_changes({"hardware.nodes": 1}))
    assert d.brief.deployment.spare_nodes == 1 and d.pools.spare_nodes == 0
    note = d.failure_summary.availability_note
    assert "with no spare node" in note and "no fleet that can serve" in note and "unbounded busy" not in note
    assert "with 1 spare node(s), losing one node leaves 30.1% busy" in plan(load_brief("capstone")).failure_summary.availability_note


DEADLINE_PRESETS = ("offline-batch", "rl-rollout")


@pytest.mark.parametrize("preset", DEADLINE_PRESETS)
def test_a_deadline_rows_time_is_the_replans_time_to_finish(preset):
    """Issue 16 item 3: a deadline design's failure row carries the re-planned design's time to finish against the
    deadline, the figure its `ok` judges: `plan` with the row's overrides gives the same time; a row that cannot run
    never finishes."""
    stated = load_brief(preset)
    design = plan(stated)
    assert design.objective is not None
    deadline_s = design.objective.deadline_s
    for m in design.failures:
        assert m.objective_time_s is not None and m.objective_share is not None, m.scenario
        if not m.runs:
            assert math.isinf(m.objective_time_s) and math.isinf(m.objective_share) and not m.ok
            continue
        again = plan(stated.with_changes(m.overrides)).objective
        assert again is not None
        assert m.objective_time_s == pytest.approx(again.time_s, rel=1e-9), m.scenario
        assert m.objective_share == pytest.approx(again.time_s / deadline_s, rel=1e-9), m.scenario
        if m.applicable:
            assert m.ok == (m.objective_share <= 1), m.scenario
    lost = _modes(design)["one_node_lost"]
    assert not lost.runs or lost.objective_time_s == pytest.approx(design.objective.time_one_node_lost_s, rel=1e-6)


def test_the_one_node_lost_rows_time_is_plan_set_with_its_overrides():
    """The rollout's one-node-lost row against `plan --set` with the row's overrides, as a separate process."""
    row = next(f for f in cli_json("plan", "rl-rollout")["failures"] if f["scenario"] == "one_node_lost")
    sets = [arg for path, value in row["overrides"].items() for arg in ("--set", f"{path}={value}")]
    replanned = cli_json("plan", "rl-rollout", *sets)["objective"]
    assert row["overrides"] == {"hardware.nodes": 1, "deployment.spare_nodes": 0}
    assert row["objective_time_s"] == pytest.approx(replanned["time_s"], rel=1e-9)
    assert row["objective_share"] == pytest.approx(replanned["time_s"] / replanned["deadline_s"], rel=1e-9)


def test_a_latency_design_has_no_deadline_figures(capstone):
    """No deadline judges a latency design: its rows' deadline figures are absent (null in the JSON), not zero."""
    assert all(m.objective_time_s is None and m.objective_share is None for m in capstone.failures)
    rows = cli_json("plan", "qps10-tp4")["failures"]
    assert all(r["objective_time_s"] is None and r["objective_share"] is None for r in rows)


@pytest.mark.parametrize(("preset", "unit"), [("offline-batch", "h"), ("rl-rollout", "s")])
def test_a_rows_time_reads_in_the_deadlines_unit_with_its_share(preset, unit):
    from planner.figures import label, show
    from planner.fmt import pct

    design = plan(load_brief(preset))
    i = next(i for i, m in enumerate(design.failures) if m.scenario is Scenario.traffic_doubles)
    m = design.failures[i]
    scale = 3600 if unit == "h" else 1
    deadline = num(design.objective.deadline_s / scale, unit)
    expected = f"{num(m.objective_time_s / scale, unit)} ({pct(m.objective_share)} of {deadline})"
    assert show(design, f"failures.{i}.objective_time_s") == expected
    assert label(f"failures.{i}.objective_time_s") == "Time to finish" and label(f"failures.{i}.objective_share") == "Share of the deadline"
    assert deadline == ("24 h" if unit == "h" else "600 s")


def test_a_deadline_designs_binding_scenario_is_the_one_nearest_its_deadline():
    """Every scenario fits: the binding one is the one whose time takes the largest share of the deadline, said so."""
    from planner.fmt import pct

    design = plan(load_brief("rl-rollout").with_changes({"hardware.nodes": 3}))
    applicable = [m for m in design.failures if m.applicable]
    assert all(m.ok for m in applicable)
    nearest = max(applicable, key=lambda m: m.objective_share or 0.0)
    assert design.failure_summary.binding_scenario is nearest.scenario
    assert f"taking {pct(nearest.objective_share or 0.0)} of the deadline" in design.failure_summary.binding_reason
    assert "against the deadline" in design.failure_summary.load_scaling
    lost = _modes(design)["one_node_lost"]
    assert (
        f"losing one node leaves the work taking {num(lost.objective_time_s or 0.0, 's')} ({pct(lost.objective_share or 0.0)} of the deadline)"
        in (design.failure_summary.availability_note)
    )


def test_an_offline_jobs_longer_inputs_grow_its_job_not_shrink_it():
    """Input lengths double for an offline job of fixed documents: the job's tokens grow with them (1B -> 1.83B at
    1,500 in / 300 out), so its time grows (12.4 h); it read 6.77 h, faster than the baseline's 8.28 h, the same 1B
    tokens of longer documents."""
    design = plan(load_brief("offline-batch"))
    w, o = design.brief.workload, design.brief.objective
    row = next(f for f in design.failures if f.scenario == "inputs_double")
    grown = o.job_tokens * (2 * w.input_tokens_mean + w.output_tokens_mean) / (w.input_tokens_mean + w.output_tokens_mean)
    assert row.overrides["objective.job_tokens"] == pytest.approx(grown)
    assert design.objective is not None and row.objective_time_s is not None
    assert row.objective_time_s > design.objective.time_s


def test_a_stated_long_context_share_the_lengths_contradict_is_a_verdict_problem():
    """The router sends every prompt over the threshold to the long-context pool: prompts of mean 5,000 and p95 20,000
    tokens put 26.7% over 6,000, so a brief that still states 5% sized both pools for traffic the router does not send
    (the plan read 5% while the simulator, drawing the lengths, clipped 21% of the general pool's requests). The
    problem names the lengths' share, and the brief with that share has no such problem."""
    from planner.lengths import share_above

    changes = {"workload.input_tokens_mean": 5000, "workload.input_tokens_p95": 20000, "workload.kv_context_tokens": 12000}
    design = plan(load_brief("capstone").with_changes(changes))
    problem = next(p for p in design.verdict.problems if p.field == "workload.long_context_share")
    tail = share_above(5000, 20000, 6000)
    assert tail == pytest.approx(0.267, abs=0.001) and not design.verdict.feasible
    assert problem.overrides == {"workload.long_context_share": round(tail, 4)} and "26.7%" in problem.problem
    corrected = plan(load_brief("capstone").with_changes({**changes, **problem.overrides}))
    assert not any(p.field == "workload.long_context_share" for p in corrected.verdict.problems)
    assert plan(load_brief("capstone")).verdict.feasible  # the presets state the share their lengths give


def test_inputs_double_routes_the_longer_prompts_to_the_long_context_pool():
    """Doubled prompts cross the long-context threshold more often: capstone's row sends 12.2% there (the doubled
    lengths' tail over 6,000 tokens), not the brief's 5%, and its overrides re-plan to the row."""
    design = plan(load_brief("capstone"))
    row = next(r for r in design.failures if r.scenario is Scenario.inputs_double)
    assert row.overrides["workload.long_context_share"] == pytest.approx(0.1224, abs=1e-4)
    replanned = plan(load_brief("capstone").with_changes(row.overrides))
    assert replanned.long_context_utilization == pytest.approx(row.long_context_utilization, rel=1e-9)
    assert replanned.long_context_utilization > design.long_context_utilization * 2


def test_input_lengths_double_doubles_a_multimodal_prompt_images_and_all():
    """A multimodal prompt is its text and its images' tokens (300 + 2 x 1,024 = 2,348): "Input lengths double" doubles
    the whole of it, mean and p95, and says so. It doubled the text alone (300 -> 600 tokens, +13%), which left the row
    at 68.6% of SLO capacity while the doubled prompt misses the ITL target."""
    stated = load_brief("multimodal")
    design = plan(stated)
    row = next(f for f in design.failures if f.scenario == "inputs_double")
    replanned = plan(stated.with_changes(row.overrides))
    before, after = design.brief.workload, replanned.brief.workload  # the prompts as planned, image tokens added
    assert before.input_tokens_mean == pytest.approx(2348)
    assert after.input_tokens_mean == pytest.approx(2 * before.input_tokens_mean)
    assert after.input_tokens_p95 == pytest.approx(2 * before.input_tokens_p95)
    assert replanned.multimodal is not None and design.multimodal is not None
    assert replanned.multimodal.encoder_ms_per_image == pytest.approx(2 * design.multimodal.encoder_ms_per_image)  # twice the pixels
    assert row.change.startswith(f"mean prompt {num(2348)} -> {num(4696)} tokens (p95 {num(2 * before.input_tokens_p95)})")
    assert "each image 1,024 -> 2,048 tokens" in row.change
    assert not row.ok and row.load_vs_capacity > 1


def test_the_spot_share_in_words_is_the_nodes_it_puts_on_spot():
    """Review s10 fix B, finding 4: capstone on 7 nodes read 'spot nodes for 2 of 7 ... 25.0% of the fleet would be 2'
    (2 of 7 is 28.6%). The share is at most a quarter of the fleet, rounded down, and the words state that same count."""
    design = plan(load_brief("capstone").with_changes({"hardware.nodes": 7}))
    lever = next(lv for lv in design.cost.levers if lv.name.startswith("spot nodes"))
    assert lever.name == "spot nodes for 1 of 7"
    assert lever.arithmetic.startswith("1 nodes x 8 GPUs") and "at most 25.0% of the fleet: 1 of 7 nodes)" in lever.arithmetic
