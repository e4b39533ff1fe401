"""The simulator at the edges of its input (issue 17): no read past an array, no silent clipping, no
run so large it never ends."""

from __future__ import annotations

import json

import numpy as np
import pytest

from planner import BriefError, load_brief, preset_names
from planner.replica import shape_of
from planner.sim_engine import engine_loop, run_engine
from planner.sim_workload import make_requests
from planner.simulator import (
    MAX_RUN_TOKENS,
    MAX_SEARCH_TOKENS,
    SimSettings,
    _check_work,
    _probe_lengths,
    _start_requests,
    _tokens_per_request,
    benchmark_brief,
    max_rate,
    simulate,
    step_costs,
)
from tests.conftest import run_cli

pytestmark = pytest.mark.unit


@pytest.fixture(scope="module")
def qps200():
    return load_brief("qps200-chat")


def _closed_loop(qps200, clients: int, count: int, loop=None):  # type: ignore[no-untyped-def]
    costs = step_costs(qps200, shape_of(qps200))
    reqs = make_requests(
        count=count,
        rate_per_s=1.0,
        clients=clients,
        prompt_mean=300,
        prompt_p95=300,
        output_mean=20,
        output_p95=20,
        max_model_len=8192,
        prefix_hit_rate=0.0,
        seed=0,
    )
    if loop is None:
        return run_engine(reqs.arrival_s, reqs.prompt_tokens, reqs.output_tokens, reqs.cached_tokens, clients, costs).finish_s
    c = costs
    limits = (c.max_num_batched_tokens, c.max_num_seqs, c.kv_capacity_tokens, c.chunked_prefill, c.encoder_s, c.reserve_whole_request)
    return loop(reqs.arrival_s, reqs.prompt_tokens, reqs.output_tokens, reqs.cached_tokens, clients, c.step.values(), *limits)[3]


# --- more clients than requests ---------------------------------------------------------------------


def test_more_clients_than_requests_stays_inside_the_arrays(qps200):
    """The plain-Python loop (what numba compiles) raises IndexError on any read past an array: 6 clients
    for 5 requests ran past `arrival` before the clients were clamped to the requests."""
    finish = _closed_loop(qps200, clients=6, count=5, loop=engine_loop)
    assert np.isfinite(finish).all()
    np.testing.assert_array_equal(finish, _closed_loop(qps200, clients=5, count=5, loop=engine_loop))


def test_more_clients_than_requests_compiled_is_deterministic(qps200):
    """Compiled, the same run twice gives the same times, the same as one client a request."""
    runs = [_closed_loop(qps200, clients=clients, count=5) for clients in (6, 6, 2000, 5)]
    for finish in runs[1:]:
        np.testing.assert_array_equal(finish, runs[0])


def test_simulate_says_when_clients_outnumber_requests():
    r = simulate(benchmark_brief(), SimSettings(concurrency=2000, requests=100, input_tokens=100, output_tokens=10))
    assert r.completed == 100
    assert "only 100 send" in r.arithmetic["load"]


# --- lengths the replica cannot take ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("flags", "named"),
    [
        (["--input", "1000000"], "--input"),
        (["--output", "40000"], "--output"),
        (["--input", "30000", "--output", "5000"], "--output"),
        (["--set", "deployment.max_model_len=4096", "--input", "4000", "--output", "200"], "--output"),
    ],
)
def test_fixed_lengths_longer_than_the_replica_exit_2(flags: list[str], named: str):
    proc = run_cli("simulate", *flags, "--json")
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"error: {named}:") and "tokens a request" in lines[0]
    assert proc.stdout == ""  # a bad flag, not an infeasible design: no verdict


def test_lengths_that_just_fit_run():
    r = simulate(benchmark_brief({"deployment.max_model_len": 4096}), SimSettings(requests=20, input_tokens=4000, output_tokens=96))
    assert r.completed == 20 and r.clipped_requests == 0


def test_clipped_samples_are_counted():
    """Sampled lengths are still cut to max-model-len, and the result says how many were."""
    brief = benchmark_brief({"deployment.max_model_len": 2048})
    r = simulate(brief, SimSettings(requests=2000, rate_per_s=5.0))
    drawn = make_requests(
        count=2000,
        rate_per_s=5.0,
        clients=0,
        prompt_mean=brief.workload.input_tokens_mean,
        prompt_p95=brief.workload.input_tokens_p95,
        output_mean=brief.workload.output_tokens_mean,
        output_p95=brief.workload.output_tokens_p95,
        max_model_len=10**9,
        prefix_hit_rate=0.0,
        seed=0,
    )
    too_long = int(np.count_nonzero(drawn.prompt_tokens + drawn.output_tokens > 2048))
    assert r.clipped_requests == too_long > 0
    assert f"{too_long:,} of 2,000 requests" in r.arithmetic["clipped_requests"]
    assert "clipped_requests" in json.loads(run_cli("simulate", "--requests", "50", "--json", check=True).stdout)


# --- the work a run may do ----------------------------------------------------------------------------


def test_the_limits_allow_the_presets_own_runs(qps200):
    """`simulate qps200-chat --requests 200000` and every preset's default max-rate search fit the limits."""
    max_len = qps200.deployment.max_model_len
    _check_work(200_000, _tokens_per_request(qps200, SimSettings(requests=200_000), max_len), 1, MAX_RUN_TOKENS)
    for name in preset_names():
        brief = load_brief(name)
        tokens = _tokens_per_request(brief, SimSettings(), brief.deployment.max_model_len)
        _check_work(1500, tokens, 9 * 13, MAX_SEARCH_TOKENS)
        costs = step_costs(brief, shape_of(brief))
        first = _start_requests(brief, costs, tokens, 9 * 13, MAX_SEARCH_TOKENS)
        lengths, _ = _probe_lengths(first, tokens, 9 * 13, MAX_SEARCH_TOKENS)
        assert len(lengths) >= 2, name  # a converged search compares two lengths at least
        assert sum(lengths) * tokens * 9 * 13 <= MAX_SEARCH_TOKENS


def test_an_absurd_run_is_refused_naming_requests_and_the_limit():
    """2M requests of the longest replies the replica takes: 6e10 tokens of work."""
    proc = run_cli("simulate", "--requests", "2000000", "--output", "30000")
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: --requests:") and f"{MAX_RUN_TOKENS:,}" in lines[0]


def test_the_limit_counts_sampled_lengths_as_the_replica_cuts_them():
    """A brief asking for 1M-token replies still costs at most max-model-len a request."""
    brief = benchmark_brief({"workload.output_tokens_mean": 1_000_000, "workload.output_tokens_p95": 1_000_000})
    with pytest.raises(BriefError) as exc:
        simulate(brief, SimSettings(requests=2_000_000))
    assert exc.value.field == "--requests" and "32,768 tokens" in exc.value.reason


def test_max_rate_requests_are_bounded(qps200):
    with pytest.raises(BriefError) as exc:
        max_rate(qps200, requests=100_000)
    assert exc.value.field == "--requests" and "117 runs" in exc.value.reason
    proc = run_cli("max-rate", "qps200-chat", "--requests", "1000000", "--json")
    assert proc.returncode == 2 and proc.stdout == "" and "--requests" in proc.stderr


# --- the compiled loop's cache -------------------------------------------------------------------------


def test_the_compiled_loop_is_cached_on_both_its_sources():
    """The loop's cache entry is stamped with sim_engine.py and step_model.py (the step function is compiled into it),
    and its key holds only the arguments' types: a new process loads it instead of compiling the loop again."""
    import hashlib

    import planner.sim_engine as engine
    from planner import step_model

    engine.warm_up()
    locator = engine._engine_cache_locator().from_function(engine.engine_loop, engine.__file__)
    stamp = locator.get_source_stamp()
    with open(step_model.__file__, "rb") as f:
        assert stamp[1] == hashlib.sha256(f.read()).hexdigest()
    (compiled,) = engine._compiled
    assert compiled._cache._impl.locator.__class__.__name__ == "EngineCacheLocator"
    assert all("Dispatcher" not in repr(signature) for signature in compiled.signatures)


def test_the_plan_check_says_which_prompts_the_router_sends_elsewhere():
    """Review s4 finding 2: the general pool's max-model-len (8,192) takes every prompt the router sends it (up to
    6,000 tokens), so the run's cut draws are prompts the long-context pool takes; the check says it keeps them on the
    plan's basis (the brief's whole length distribution), heavier than the general pool's own traffic."""
    run = simulate(load_brief("capstone"), SimSettings(requests=4000))
    assert "prompts up to 6,000 tokens" in run.arithmetic["routing"] and "whole length distribution" in run.arithmetic["routing"]
    assert 0 < run.clipped_requests < 0.05 * 4000  # at most the 5% of prompts over 6,000 and their long replies
    alone = simulate(
        load_brief("capstone").with_changes(
            {"deployment.long_context_nodes": 0, "model.name": "llama-3.1-70b", "deployment.max_model_len": 11_264}
        ),
        SimSettings(requests=400),
    )
    assert "routing" not in alone.arithmetic  # without a long-context pool the replica is sent every request
