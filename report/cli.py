"""`python -m planner export BRIEF [--set ...] --format md|html|pdf --out FILE`: the one-page design document.

The command's glue lives in the export layer, not in the pure planner: `planner.cli` imports this module
only when the command line names `export`, so `import planner` and every other command stay free of the
renderers (Graphviz for the diagram, Chromium for the PDF).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from planner.cli import name_from_args, register, say
from planner.design import plan
from planner.errors import BriefError
from planner.guard import checked
from report.errors import ExportError
from report.html import render_html
from report.markdown import render_markdown
from report.pdf import render_pdf

__all__ = ["FORMATS", "cmd_export"]

FORMATS = ("md", "html", "pdf")


def cmd_export(args: argparse.Namespace) -> int:
    out = Path(args.out)
    if not out.parent.is_dir():
        raise BriefError("--out", f"directory {str(out.parent)!r} does not exist")
    brief, name = name_from_args(args)  # the title follows --set: 6 nodes are not called "64 H100"
    design = checked(plan, brief)  # bad briefs and uncomputable designs raise BriefError: exit 2
    try:  # a missing Graphviz or Chromium: one line naming the tool, as for bad input
        if args.format == "md":
            payload = render_markdown(design, name).encode("utf-8")
        elif args.format == "html":
            payload = render_html(design, name).encode("utf-8")
        else:
            payload = render_pdf(design, name)
    except ExportError as exc:
        raise BriefError("--format", f"{args.format}: {exc}") from None
    try:  # a directory, a read-only place or a full disk is bad input, not a bug
        out.write_bytes(payload)
    except OSError as exc:
        raise BriefError("--out", f"cannot write {str(out)!r}: {exc.strerror or exc}") from None
    say(f"wrote {out} ({args.format})")
    return 0


def _add_export(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("export", help="the one-page design document (Markdown, HTML or PDF)")
    p.add_argument("brief", metavar="BRIEF", help="preset name or brief file (TOML/JSON)")
    p.add_argument("--set", action="append", metavar="PATH=VALUE", help="override one field, e.g. workload.duty_cycle=0.16")
    p.add_argument("--format", required=True, choices=FORMATS, help="md, html or pdf")
    p.add_argument("--out", required=True, metavar="FILE", help="file to write")
    p.set_defaults(func=cmd_export)


register(_add_export)
