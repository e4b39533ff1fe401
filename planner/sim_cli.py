"""`simulate` and `max-rate` on the command line (see ../shared/spec/contract.md)."""

from __future__ import annotations

import argparse
import json
import math
from collections.abc import Callable
from typing import Any, TypeVar

from pydantic import ValidationError

from planner.brief import Brief
from planner.cli import brief_from_args, jsonable, register, say
from planner.errors import BriefError
from planner.fmt import num, pct
from planner.loader import parse_override
from planner.mechanisms import resolve
from planner.objective import duration_text
from planner.simulator import (
    PLAN_CHECK_REQUESTS,
    RATE_TOLERANCE,
    SLOT_FILLS,
    START_PROBE_REQUESTS,
    MaxRateResult,
    SimObjective,
    SimResult,
    SimSettings,
    SimSlo,
    benchmark_brief,
    max_rate,
    simulate,
)

_R = TypeVar("_R", SimResult, MaxRateResult)

__all__ = ["add_commands"]


def _rate(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{text}' is not a rate: give req/s or inf") from None
    if math.isnan(value) or value <= 0:
        raise argparse.ArgumentTypeError(f"'{text}' is not a rate: it must be above 0 (or inf)")
    return value


def _brief(args: argparse.Namespace) -> Brief:
    if args.brief is not None:
        return brief_from_args(args)
    return benchmark_brief(dict(parse_override(s) for s in args.set or ()))


def _settings(args: argparse.Namespace) -> SimSettings:
    if args.rate is not None and args.concurrency is not None:
        raise BriefError("--concurrency", "give either --rate (open-loop arrivals) or --concurrency (closed-loop clients), not both")
    try:
        given = {"requests": args.requests} if args.requests is not None else {}  # unset: the run's own default
        return SimSettings(
            **given,
            rate_per_s=args.rate,
            concurrency=args.concurrency,
            input_tokens=args.input,
            output_tokens=args.output,
            seed=args.seed,
        )
    except ValidationError as exc:
        first = exc.errors()[0]
        flag = {"rate_per_s": "rate", "input_tokens": "input", "output_tokens": "output"}.get(str(first["loc"][0]), str(first["loc"][0]))
        raise BriefError(f"--{flag}", str(first["msg"])) from None


def _emit(payload: dict[str, Any]) -> None:
    print(json.dumps(jsonable(payload), indent=2, allow_nan=False))


def _infeasible(args: argparse.Namespace, exc: BriefError) -> None:
    """--json still prints a verdict when the brief parsed but no replica can be simulated (not for a bad flag)."""
    if args.json and not exc.field.startswith("--"):
        problem = {"field": exc.field, "problem": exc.reason, "change": "see the problem"}
        problems = [p.model_dump() for p in getattr(exc, "problems", ())] or [problem]
        _emit({"verdict": {"feasible": False, "meets_slo": False, "problems": problems}})


def _sim_text(r: SimResult) -> str:
    return "\n".join(
        [
            f"simulated {r.requests} requests ({r.arithmetic['load']}) in {num(r.wall_ms, 'ms')}",
            f"  duration          {num(r.duration_s, 's')}; {num(r.requests_per_s, 'req/s')}, {num(r.output_tokens_per_s, 'output tok/s')}",
            f"  TTFT              p50 {num(r.ttft_ms.p50, 'ms')}, p95 {num(r.ttft_ms.p95, 'ms')}, p99 {num(r.ttft_ms.p99, 'ms')}",
            f"  TPOT              p50 {num(r.tpot_ms.p50, 'ms')}, p95 {num(r.tpot_ms.p95, 'ms')}, p99 {num(r.tpot_ms.p99, 'ms')}",
            f"  SLO attainment    {pct(r.slo_attainment)} (TTFT <= {num(r.ttft_target_ms, 'ms')} and TPOT <= {num(r.itl_target_ms, 'ms')})",
            f"  steps             {r.arithmetic['steps']}",
            *([f"  clipped           {r.arithmetic['clipped_requests']}"] if r.clipped_requests else []),
            *(_plan_check_lines(r.slo) if r.slo is not None and r.objective is None else []),
            *(_objective_lines(r.objective, r.slo) if r.objective is not None and r.slo is not None else []),
        ]
    )


def _objective_lines(check: SimObjective, latency: SimSlo) -> list[str]:
    """A design judged on its deadline: the latency run for reference, the objective's pace planned against simulated,
    and the time it gives against the deadline."""
    return [
        f"  latency           p95 TTFT {num(latency.ttft_p95_ms, 'ms')}, p95 TPOT {num(latency.tpot_p95_ms, 'ms')} at {latency.scope}"
        " (no latency target judges this design: its deadline does)",
        f"  objective check   {num(check.output_tokens_per_s, 'output tok/s')} a replica simulated against the plan's"
        f" {num(check.plan_output_tokens_per_s, 'output tok/s')} ({check.plan_output_tokens_per_s / check.output_tokens_per_s - 1:+.1%});"
        f" it checks {check.scope}",
        f"  the objective     {duration_text(check.time_s, check.kind)} at the simulated pace ({duration_text(check.plan_time_s, check.kind)}"
        f" planned) of {duration_text(check.deadline_s, check.kind)}: {'met' if check.meets else 'missed'};"
        f" the plan {'meets' if latency.plan_meets_slo else 'misses'} its deadline",
    ]


def _plan_check_lines(check: SimSlo) -> list[str]:
    """The plan check's verdict, what it covers, and what the plan judges that the run does not."""
    verdict = "meets" if check.meets_slo else "misses"
    return [
        f"  plan check        p95 TTFT {num(check.ttft_p95_ms, 'ms')}, p95 ITL {num(check.itl_p95_ms, 'ms')}, p95 TPOT"
        f" {num(check.tpot_p95_ms, 'ms')}: the run {verdict} the SLO; it checks {check.scope}",
        f"  the design        the plan {'meets' if check.plan_meets_slo else 'misses'} the SLO"
        + (f"; {check.not_simulated}" if check.not_simulated else ""),
    ]


def _run_and_print(args: argparse.Namespace, compute: Callable[[], _R], text: Callable[[_R], str]) -> int:
    """Run a simulation command; an infeasible brief still prints its verdict under --json before exit 2."""
    try:
        result = compute()
    except BriefError as exc:
        _infeasible(args, exc)
        raise
    if args.json:
        _emit(result.model_dump(mode="python"))
    else:
        say(text(result))
    return 0


def cmd_simulate(args: argparse.Namespace) -> int:
    brief = _brief(args)
    settings = _settings(args)
    return _run_and_print(args, lambda: simulate(resolve(brief), settings), _sim_text)  # the brief the plan analyses


def _max_rate_text(r: MaxRateResult) -> str:
    lines = [f"max rate          {r.arithmetic['max_rate_per_s']}"]
    if r.judged_by_deadline:
        lines.append(f"  {'for reference':<16} {r.arithmetic['judged_by']}")
    lines += [
        f"  {key:<16} {r.arithmetic[key]}"
        for key in ("replicas_needed", "replicas_with_headroom", "gpus", "usd_per_hour", "usd_per_million_output_tokens")
        if key in r.arithmetic
    ]
    lines.append(f"  probe length     {r.confidence.statement}")
    lines.append(f"  searched in {num(r.wall_ms, 'ms')}")
    return "\n".join(lines)


def cmd_max_rate(args: argparse.Namespace) -> int:
    brief = brief_from_args(args)
    if args.requests is not None and args.requests < 10:
        raise BriefError("--requests", "must be at least 10 for a max-rate search")
    return _run_and_print(args, lambda: max_rate(resolve(brief), requests=args.requests, seed=args.seed), _max_rate_text)


def _common(p: argparse.ArgumentParser, brief_optional: bool) -> None:
    p.add_argument("brief", nargs="?" if brief_optional else None, metavar="BRIEF", help="preset name or brief file (TOML/JSON)")
    p.add_argument("--set", action="append", metavar="PATH=VALUE", help="override one field, e.g. deployment.tp=4")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.add_argument("--seed", type=int, default=0, help="seed of the request generator (default 0)")


def add_commands(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "simulate",
        help="step-level simulation of one replica",
        description="Without BRIEF: the calibrated efficiency defaults on a stock engine (256 sequences, 8,192 tokens a step,"
        " 90% of GPU memory); --set model.name=... --set hardware.gpu=... --set deployment.tp=... describe a benchmark.",
    )
    _common(p, brief_optional=True)
    p.add_argument("--rate", type=_rate, metavar="R|inf", help="Poisson arrivals per second, or inf for all at t = 0")
    p.add_argument("--concurrency", type=int, metavar="N", help="N closed-loop clients instead of a rate")
    p.add_argument(
        "--requests",
        type=int,
        metavar="N",
        help=f"requests to simulate (default 1,000; the plan check, BRIEF without --rate or --concurrency, {PLAN_CHECK_REQUESTS:,}"
        " or as many as the work limit allows)",
    )
    p.add_argument("--input", type=int, metavar="N", help="fixed prompt length (tokens)")
    p.add_argument("--output", type=int, metavar="N", help="fixed reply length (tokens)")
    p.set_defaults(func=cmd_simulate)
    p = sub.add_parser("max-rate", help="highest rate one replica sustains under the SLO, and the fleet it implies")
    _common(p, brief_optional=False)
    p.add_argument(
        "--requests",
        type=int,
        metavar="N",
        help=f"requests per simulated run, as given (converged is not checked); default: doubled from max({START_PROBE_REQUESTS:,},"
        f" {SLOT_FILLS} x the replica's slots) until two lengths need the same replicas and their rates differ by at most"
        f" {RATE_TOLERANCE * 100:g}%%",
    )
    p.set_defaults(func=cmd_max_rate)


register(add_commands)
