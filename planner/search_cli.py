"""`search` on the command line (see ../shared/spec/contract.md): the cheapest design meeting the SLO, and the frontier.

    python -m planner search BRIEF [--set ...] [--space FILE] [--workers N] [--ray [ADDRESS]] [--seed S] --json

A progress bar goes to stderr when it is a terminal; stdout carries only the result (one JSON object with --json).
"""

from __future__ import annotations

import argparse
import json
import sys
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

from planner.cli import brief_from_args, jsonable, register, say
from planner.errors import BriefError
from planner.fmt import num, pct
from planner.search import DEFAULT_SIM_REQUESTS, PoolRunner, SearchResult, SerialRunner, default_workers, search, set_args
from planner.search_space import default_space, load_space

__all__ = ["add_commands"]

_BAR_WIDTH = 30


class _Bar:
    """A one-line progress bar redrawn in place on a terminal's stderr; silent when stderr is not a terminal."""

    def __init__(self) -> None:
        self.live = sys.stderr.isatty()
        self.drawn = False

    def __call__(self, fraction: float, text: str) -> None:
        if not self.live:
            return
        filled = round(_BAR_WIDTH * min(max(fraction, 0.0), 1.0))
        sys.stderr.write(f"\r[{'#' * filled}{'.' * (_BAR_WIDTH - filled)}] {fraction:4.0%} {text[:70]:<70}")
        sys.stderr.flush()
        self.drawn = True

    def close(self) -> None:
        if self.drawn:
            sys.stderr.write("\n")
            sys.stderr.flush()


def _positive(flag: str, value: int | None, least: int = 1) -> None:
    if value is not None and value < least:
        raise BriefError(flag, f"must be at least {least}, got {value}")


def _runner(args: argparse.Namespace) -> AbstractContextManager[Any]:
    if args.ray is not None:
        from planner.search_ray import RayRunner  # ray only when asked for

        return RayRunner(address=args.ray or None, workers=args.workers)
    workers = args.workers or default_workers()
    return SerialRunner() if workers == 1 else PoolRunner(workers)


def _text(r: SearchResult) -> str:
    lines = [
        f"searched {r.evaluated:,} candidates in {num(r.wall_s, 's')} on {r.workers} worker(s) ({r.backend}): {r.accepted:,} meet the SLO with N+1",
        *[f"  rejected {count:>7,}  {reason}" for reason, count in r.rejected.items()],
        *([r.judged] if r.judged else []),
    ]
    if r.best is None:
        lines.append(f"best: none. {r.why_no_best}")
    else:
        b = r.best
        sim = b.simulated
        lines += [
            f"best: {b.label}",
            f"  ${num(b.usd_per_million_output_tokens)} per M output tokens, ${b.usd_per_hour:,.0f}/hour, {b.gpus} GPUs,"
            f" p95 TTFT {num(b.ttft_p95_ms, 'ms')}, p95 ITL {num(b.itl_p95_ms, 'ms')}, utilization {pct(b.utilization)}",
            f"  simulated: p95 TTFT {num(sim.ttft_p95_ms, 'ms')}, p95 ITL {num(sim.itl_p95_ms, 'ms')}, SLO {'met' if sim.meets_slo else 'missed'}"
            if sim is not None
            else f"  {b.simulation_note}",
            "  reproduce: plan BRIEF " + " ".join(f"--set {a}" for a in set_args(b.overrides)),
        ]
        if r.stated_headroom is not None and b.kept_multiple is not None:  # the best keeps it: a candidate must
            lines.insert(
                -1,
                f"  headroom: the pools reach their SLO capacity at {num(b.kept_multiple)}x the peak with every node up (keeps the"
                f" {pct(r.stated_headroom)} stated); the first limit, N+1 included, at {num(b.headroom_multiple)}x",
            )
    lines.append(f"frontier ({len(r.frontier)} point(s); $/M output tokens, p95 TTFT, p95 ITL, simulated p95 TTFT / ITL):")
    for p in r.frontier:
        sim_text = f"{num(p.simulated.ttft_p95_ms, 'ms')} / {num(p.simulated.itl_p95_ms, 'ms')}" if p.simulated else "-"
        lines.append(
            f"  ${num(p.usd_per_million_output_tokens):>8}  {num(p.ttft_p95_ms, 'ms'):>9}  {num(p.itl_p95_ms, 'ms'):>8}"
            f"  {'meets' if p.meets_slo else 'misses'}  sim {sim_text}  {p.label}"
        )
    if r.knobs:
        lines.append("knobs (each turned alone around the best: how much it moves the cheapest cost):")
        lines += [
            f"  {k.axis:<24} {pct(k.spread):>7}  "
            + ", ".join(f"{v}: {'none' if c is None else '$' + num(c)}" for v, c in k.cheapest_usd_per_million.items())
            for k in r.knobs
        ]
    return "\n".join(lines)


def cmd_search(args: argparse.Namespace) -> int:
    _positive("--workers", args.workers)
    _positive("--requests", args.requests, least=10)
    _positive("--seed", args.seed, least=0)
    brief = brief_from_args(args)
    space = load_space(Path(args.space), brief) if args.space else default_space(brief)
    bar = _Bar()
    try:
        with _runner(args) as runner:
            result = search(brief, space, runner, seed=args.seed, requests=args.requests, progress=bar)
    finally:
        bar.close()
    if args.json:
        print(json.dumps(jsonable(result.model_dump(mode="json")), indent=2, allow_nan=False))
    else:
        say(_text(result))
    return 0


def add_commands(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "search",
        help="the cheapest design that meets the SLO with N+1, and the cost/latency frontier",
        description="Searches GPU, TP, weight and KV precision, max-num-seqs, max-num-batched-tokens and nodes around"
        " the brief; --space FILE (TOML: an axis per line, e.g. tp = [4, 8], nodes = {min = 4, max = 24},"
        " [usd_per_gpu_hour] h200 = 3.2) narrows or widens each axis.",
    )
    p.add_argument("brief", metavar="BRIEF", help="preset name or brief file (TOML/JSON)")
    p.add_argument("--set", action="append", metavar="PATH=VALUE", help="override one field of the brief before the search")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.add_argument("--space", metavar="FILE", help="space file (TOML) replacing the default values of the axes it names")
    p.add_argument("--workers", type=int, metavar="N", help="worker processes (default: every core); with --ray, CPUs of a local cluster")
    p.add_argument("--ray", nargs="?", const="", metavar="ADDRESS", help="run on a Ray cluster: ADDRESS, or a local one when none is given")
    p.add_argument("--seed", type=int, default=0, help="seed of the simulated checks (default 0)")
    p.add_argument(
        "--requests",
        type=int,
        default=DEFAULT_SIM_REQUESTS,
        metavar="N",
        help=f"requests per simulated check (default {DEFAULT_SIM_REQUESTS})",
    )
    p.set_defaults(func=cmd_search)


register(add_commands)
