"""`python -m planner practice BRIEF [--set ...] [--answers FILE] [--json] [--markdown FILE]`: the interview practice,
scriptable (see ../shared/spec/contract.md).

Without --answers it lists the steps and their questions, no answers. With --answers (a TOML or JSON map from
question id to answer: a number, an option key, or a list of option keys for a pick-several question) each answered
question adds `correct`, the planner's answer, the arithmetic and the notes, plus the score. An answers file that
cannot be read, names no question or gives an answer of the wrong kind exits 2 with one line.
"""

from __future__ import annotations

import argparse
import json
import tomllib
from pathlib import Path
from typing import Any

from planner.cli import jsonable, name_from_args, register, say
from planner.design import plan
from planner.errors import BriefError
from planner.guard import checked
from planner.practice import Attempt, Step, grade, practice_steps, public_steps, summary_markdown
from planner.textfile import read_text_file
from planner.verdict import InfeasibleDesign

__all__ = ["load_answers"]

MAX_ANSWERS_BYTES = 256 * 1024


def load_answers(path: Path) -> dict[str, Any]:
    """A TOML or JSON map from question id to answer (TOML's dotted ids read as nested tables and are flattened)."""
    text = read_text_file(path, MAX_ANSWERS_BYTES, "an answers file (TOML or JSON)")
    shown = str(path)[:120]
    try:
        data = json.loads(text) if path.suffix.lower() == ".json" else tomllib.loads(text)
    except (json.JSONDecodeError, tomllib.TOMLDecodeError) as exc:
        raise BriefError(shown, f"not valid {'JSON' if path.suffix.lower() == '.json' else 'TOML'}: {exc}") from None
    if not isinstance(data, dict):
        raise BriefError(shown, "an answers file is a map from question id to answer")
    return _flatten(data)


def _flatten(data: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    flat: dict[str, Any] = {}
    for key, value in data.items():
        path = f"{prefix}{key}"
        if isinstance(value, dict):
            flat.update(_flatten(value, f"{path}."))
        else:
            flat[path] = value
    return flat


def _graded_steps(steps: tuple[Step, ...], attempt: Attempt) -> list[dict[str, Any]]:
    by_id = {g.id: g for g in attempt.grades}
    listed = public_steps(steps)
    for step in listed:
        for question in step["questions"]:
            g = by_id.get(question["id"])
            if g is not None:
                question |= {
                    "given": g.given,
                    "correct": g.correct,
                    "points": g.points,
                    "basis": g.basis,
                    "answer": g.answer,
                    "arithmetic": g.arithmetic,
                    "note": g.note,
                    "mistake": g.mistake,
                    "why": g.why,
                }
    return listed


def _text(title: str, steps: tuple[Step, ...], attempt: Attempt | None) -> str:
    lines = [f"Interview practice: {title}"]
    by_id = {g.id: g for g in attempt.grades} if attempt is not None else {}
    for step in steps:
        lines += ["", f"{step.title}: {step.method}"]
        for q in step.questions:
            unit = f" [{q.unit}]" if q.unit else ""
            lines.append(f"  {q.id}: {q.prompt}{unit}")
            for o in q.options:
                lines.append(f"      {o.key}: {o.text}")
            g = by_id.get(q.id)
            if g is not None:
                beside = f"; {g.beside}" if g.beside else ""
                lines.append(f"    -> {'right' if g.correct else 'not yet'}: yours {g.given}{beside} ({g.note})")
                if g.arithmetic:
                    lines.append(f"       arithmetic: {g.arithmetic}")
                lines.append(f"       usual mistake: {g.mistake}")
    if attempt is not None:
        lines += ["", f"Score: {attempt.score:.1f} of {attempt.total} ({attempt.answered} answered)"]
    return "\n".join(lines)


def cmd_practice(args: argparse.Namespace) -> int:
    brief, name = name_from_args(args)
    answers = load_answers(Path(args.answers)) if args.answers else None
    try:
        design = checked(plan, brief)
    except InfeasibleDesign as exc:
        if args.json:
            print(json.dumps({"verdict": jsonable(exc.verdict.model_dump(mode="json"))}, indent=2))
        raise
    steps = practice_steps(design)
    attempt = grade(steps, answers) if answers is not None else None
    if args.markdown:
        if attempt is None:
            raise BriefError("--markdown", "needs --answers: the summary scores an attempt")
        Path(args.markdown).write_text(summary_markdown(name.title, steps, attempt), encoding="utf-8")
    if args.json:
        payload: dict[str, Any] = {"title": name.title}
        if attempt is None:
            payload["steps"] = public_steps(steps)
        else:
            payload["steps"] = _graded_steps(steps, attempt)
            payload["score"] = {"points": attempt.score, "answered": attempt.answered, "questions": attempt.total}
        print(json.dumps(jsonable(payload), indent=2, allow_nan=False))
    else:
        say(_text(name.title, steps, attempt))
    return 0


def add_commands(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("practice", help="interview practice: the method's questions for a brief, graded with --answers")
    p.add_argument("brief", metavar="BRIEF", help="preset name or brief file (TOML/JSON)")
    p.add_argument("--set", action="append", metavar="PATH=VALUE", help="override one field, e.g. workload.duty_cycle=0.16")
    p.add_argument("--answers", metavar="FILE", help="TOML/JSON map from question id to answer")
    p.add_argument("--markdown", metavar="FILE", help="write the scored summary as Markdown (with --answers)")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(func=cmd_practice)


register(add_commands)
