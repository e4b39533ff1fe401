"""Command line: python -m planner <command> [BRIEF] [options]  (see ../shared/spec/contract.md).

Exit 0 for a computed design (its verdict says whether it works), 2 for input the planner cannot
accept (one line on stderr naming the field or file), 1 only for a bug.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, NoReturn

from planner.brief import Brief, ItlMetric
from planner.catalog import GPUS, MODELS
from planner.design import Design, plan
from planner.errors import BriefError
from planner.figures import arithmetic, label, show, spec
from planner.guard import checked
from planner.loader import apply_overrides, load_brief, parse_override, preset_names
from planner.mechanism_view import mechanism_lines
from planner.naming import DesignName, design_name
from planner.plaintext import terminal_text
from planner.verdict import InfeasibleDesign

__all__ = ["brief_from_args", "main", "name_from_args", "say"]

DEBUG_ENV = "PLANNER_DEBUG"  # set it to see the traceback of a bug instead of one line


def say(text: str, *, err: bool = False) -> None:
    """Print text meant for a terminal: user text in it (titles, names, paths) cannot send escape sequences."""
    print(terminal_text(text), file=sys.stderr if err else sys.stdout)


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        say(f"error: {self.prog}: {_one_line(message)}", err=True)
        raise SystemExit(2)


def jsonable(value: Any) -> Any:
    """JSON-safe copy: infinities and NaN become null (the verdict says why)."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
    return value


# the field a part worked out on first read follows (else: architecture); of two after the same field, the one
# Design declares first comes first (variation, then scale_out)
_COMPUTED_AFTER = {
    "load_batch_basis": "slo",
    "mechanism_conclusion": "speculative",
    "variation": "headroom",
    "scale_out": "headroom",
    "conclusion": "lora_serving",
}


def design_json(design: Design) -> dict[str, Any]:
    dumped = design.model_dump(mode="json", exclude={"shape"})
    order = list(Design.model_fields)
    for name in reversed(Design.model_computed_fields):  # the parts worked out on first read, where the JSON always put them
        after = order.index(_COMPUTED_AFTER.get(name, "architecture")) + 1
        order.insert(after, name)
    data = {key: dumped[key] for key in order if key in dumped}
    if data.get("disaggregation") is not None:
        data["disaggregation"] = _splits_after_comparison(data["disaggregation"])
    data["model"] = {"key": design.shape.model.key, "name": design.model_name}
    data["gpu"] = {"key": design.shape.gpu.key, "name": design.gpu_name}
    return jsonable(data)  # type: ignore[no-any-return]


def _splits_after_comparison(dis: dict[str, Any]) -> dict[str, Any]:
    """A disaggregated design's section with its other splits (worked out on first read: dumped last) where the JSON
    always put them, after the comparison with chunked prefill."""
    order = [key for key in dis if key != "splits"]
    order.insert(order.index("comparison") + 1, "splits")
    return {key: dis[key] for key in order}


def _emit(payload: dict[str, Any]) -> None:
    print(json.dumps(payload, indent=2, allow_nan=False))


def briefs_from_args(args: argparse.Namespace) -> tuple[Brief, Brief]:
    """The brief BRIEF names, and the brief with the --set changes applied (the same brief without any)."""
    brief = load_brief(args.brief)
    changes = dict(parse_override(s) for s in args.set or ())
    return brief, apply_overrides(brief, changes, base_dir=Path.cwd()) if changes else brief  # a --set path is the user's own


def brief_from_args(args: argparse.Namespace) -> Brief:
    return briefs_from_args(args)[1]


def name_from_args(args: argparse.Namespace) -> tuple[Brief, DesignName]:
    """The brief with the --set changes applied, and the design's name (its facts when a change makes the title stale)."""
    source, brief = briefs_from_args(args)
    return brief, design_name(brief, source)


# The figures the text output lists, each as the figure registry names and writes it (planner.figures).
_TEXT_FIGURES = (
    "demand.request_rate_per_s",
    "demand.generating_sequences",
    "memory.weights_gb_per_gpu",
    "memory.kv_gb_per_gpu",
    "memory.kv_bytes_per_token_per_gpu",
    "memory.max_sequences_per_replica",
    "capacity.decode_step_ideal_ms",
    "capacity.decode_step_ms",
    "capacity.utilization",
    "capacity.utilization_no_prefix_cache",
    "capacity.binding_constraint",
    "operating_point.in_flight",
    "operating_point.tpot_ms",
    "operating_point.capacity_rate_per_s",
    "slo.ttft_p95_ms",
    "slo.itl_p95_ms",
    "headroom.multiple",
    "cost.usd_per_hour",
    "cost.usd_per_million_output_tokens",
)


_REFERENCE_ONLY = ("operating_point.capacity_rate_per_s", "slo.ttft_p95_ms", "slo.itl_p95_ms", "slo.tpot_p95_ms")


def _reference_words(d: Design, path: str) -> str:
    """Why a latency figure of an offline job or a rollout is printed: for reference, its deadline judges it."""
    if path != "operating_point.capacity_rate_per_s":
        return "for reference: the deadline judges this design"
    slo = d.slo
    return (
        f"at the brief's p95 TTFT {show(d, 'slo.ttft_target_ms')} and p95 {slo.itl_metric.value.upper()}"
        f" {show(d, 'slo.itl_target_ms')}, for reference: the deadline judges this design"
    )


def _plan_text(d: Design, name: DesignName) -> str:
    width = max(len(label(path)) for path in _TEXT_FIGURES) + 2
    binding = next(m for m in d.failures if m.scenario == d.failure_summary.binding_scenario)
    units = f"PP={d.shape.pp}, {d.capacity.replicas} micro-batch streams" if d.shape.pp > 1 else f"{d.capacity.replicas} replicas"
    lines = [
        name.title,
        f"  {d.model_name} on {d.brief.hardware.nodes} x {d.brief.hardware.gpus_per_node} {d.gpu_name}, TP={d.shape.tp}, {units}",
    ]
    for listed in _TEXT_FIGURES:
        path = "slo.tpot_p95_ms" if listed == "slo.itl_p95_ms" and d.slo.itl_metric is ItlMetric.tpot else listed  # what the target judges
        entry = spec(path)
        line = f"  {entry.label:<{width}}{show(d, path)}"
        if entry.target is not None and d.objective is None:  # an offline job or a rollout has no latency target
            line += f" (target {show(d, entry.target)})"
        if d.objective is not None and path in _REFERENCE_ONLY:  # figures of latency targets that judge nothing here
            line += f"   ({_reference_words(d, path)})"
        if path == "demand.request_rate_per_s":
            line += f"   ({arithmetic(d, path)})"
        if path == "headroom.multiple":  # below x1 the peak is already past the limit: no headroom, and which limit
            line += f"   ({d.headroom.binding} first)" if d.headroom.multiple >= 1 else f"   (none: {d.headroom.binding} below the peak)"
        if path == "cost.usd_per_million_output_tokens" and not d.cost.carries_peak:
            at_fix = f"; {show(d, 'cost.usd_per_million_output_tokens_at_fix')} on {d.fix.fleet}" if d.fix else ""
            line += f"   (not the cost of serving: this fleet cannot carry the peak{at_fix})"
        lines.append(line)
    lines += [
        f"  {'Binding scenario':<{width}}{binding.title}; N+1 {show(d, 'failure_summary.n_plus_one_ok')}",
        *([f"  {'Variation':<{width}}{d.variation.key.value.upper()}: {d.variation.conclusion}"] if d.variation is not None else []),
        *mechanism_lines(d, width),
        f"  {'Verdict':<{width}}{'feasible' if d.verdict.feasible else 'NOT feasible'}, {'meets' if d.verdict.meets_slo else 'misses'}"
        f" {'the SLO' if d.objective is None else 'its deadline'}{'' if d.verdict.headroom_ok else ', short of its stated headroom'}",
    ]
    lines += [f"    - {p.line()}" for p in d.verdict.problems]
    lines += [f"  {'Not used':<{width}}{p.line()}" for p in d.ignored_fields]
    if d.fix is not None:
        lines.append(f"  {'The change that fixes it':<{width}}{d.fix.text}")
    return "\n".join(lines)


def cmd_plan(args: argparse.Namespace) -> int:
    brief, name = name_from_args(args)
    try:
        design = checked(plan, brief)
    except InfeasibleDesign as exc:
        if args.json:
            _emit({"verdict": jsonable(exc.verdict.model_dump(mode="json"))})
        raise
    if args.json:
        _emit(design_json(design))
    else:
        say(_plan_text(design, name))
    return 0


def cmd_presets(args: argparse.Namespace) -> int:
    rows = []
    for name in preset_names():
        brief = load_brief(name)
        rows.append({"name": name, "title": brief.title, "description": brief.description})
    if args.json:
        _emit({"presets": rows})
    else:
        width = max(len(r["name"]) for r in rows)
        for r in rows:
            say(f"{r['name']:<{width}}  {r['description']}")
    return 0


def cmd_catalog(args: argparse.Namespace) -> int:
    if args.json:
        _emit({"gpus": [g.model_dump() for g in GPUS.values()], "models": [m.model_dump() for m in MODELS.values()]})
        return 0
    for g in GPUS.values():
        print(f"gpu   {g.key:<16} {g.memory_gb:>5.0f} GB  {g.hbm_tb_per_s:.2f} TB/s  {g.dense_tflops}")
    for m in MODELS.values():
        print(f"model {m.key:<16} {m.params / 1e9:>6.1f}B ({m.active_params / 1e9:.1f}B active)  {m.layers} layers, {m.kv_heads} KV heads")
    return 0


def _add_brief_args(p: argparse.ArgumentParser, optional: bool = False) -> None:
    p.add_argument("brief", nargs="?" if optional else None, metavar="BRIEF", help="preset name or brief file (TOML/JSON)")
    p.add_argument("--set", action="append", metavar="PATH=VALUE", help="override one field, e.g. workload.duty_cycle=0.16")
    p.add_argument("--json", action="store_true", help="print one JSON object")


Command = Callable[[argparse.Namespace], int]
_EXTRA_COMMANDS: list[Callable[[argparse._SubParsersAction[argparse.ArgumentParser]], None]] = []


def register(adder: Callable[[argparse._SubParsersAction[argparse.ArgumentParser]], None]) -> None:
    """Let other modules (simulator, export) add their subcommands."""
    _EXTRA_COMMANDS.append(adder)


def build_parser() -> argparse.ArgumentParser:
    parser: argparse.ArgumentParser = _Parser(prog="python -m planner", description="Inference serving design explorer: the planner.")
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("plan", help="the whole analytical design")
    _add_brief_args(p)
    p.set_defaults(func=cmd_plan)
    p = sub.add_parser("presets", help="list the presets")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_presets)
    p = sub.add_parser("catalog", help="list the GPUs and models")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_catalog)
    for adder in _EXTRA_COMMANDS:
        adder(sub)
    return parser


def _one_line(text: str) -> str:
    return " ".join(text.split())


def main(argv: Sequence[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    _load_plugins(_command(argv))
    args = build_parser().parse_args(argv)
    try:
        return int(args.func(args))
    except BriefError as exc:
        say(f"error: {_one_line(str(exc))}", err=True)
        return 2
    except BrokenPipeError:
        return 0
    except Exception as exc:  # a bug: one line (exit 1), the traceback only when asked for
        if os.environ.get(DEBUG_ENV):
            raise
        say(f"error: internal error ({type(exc).__name__}: {_one_line(str(exc))[:200]}); set {DEBUG_ENV}=1 for the traceback", err=True)
        return 1


# Subcommands defined elsewhere, imported only when the command line names them: the simulator's pull in
# numba, search's its worker pool (and ray with --ray), export's live in the rendering layer (report/), which the
# pure planner must not import otherwise.
_PLUGINS = {
    "simulate": "planner.sim_cli",
    "max-rate": "planner.sim_cli",
    "calibrate": "planner.calibrate_cli",
    "search": "planner.search_cli",
    "export": "report.cli",
    "practice": "planner.practice_cli",
}
_BUILT_IN = frozenset({"plan", "presets", "catalog"})


def _command(argv: Sequence[str]) -> str | None:
    """The subcommand's name: the first word that is not an option (the top-level parser takes only --help)."""
    return next((word for word in argv if not word.startswith("-")), None)


def _load_plugins(command: str | None = None) -> None:
    """Import the module that registers `command`; every such module for --help, no command or an unknown one."""
    import importlib

    if command in _BUILT_IN:
        return
    names = [_PLUGINS[command]] if command in _PLUGINS else list(dict.fromkeys(_PLUGINS.values()))
    for name in names:
        try:
            importlib.import_module(name)
        except ModuleNotFoundError as exc:  # a command whose module has not landed yet
            if exc.name != name:
                raise
