"""`python -m planner export BRIEF [--set ...] --format md|html|pdf --out FILE`: the one-page design document.

The renderers live in the top-level `report` package (an export layer: Graphviz for the diagram,
Chromium for the PDF), not in the pure planner. The command imports `report` inside its function on
purpose: the CLI is the IO edge, so `import planner` stays free of the export layer and of any browser.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from planner.cli import brief_from_args, register, say
from planner.design import plan
from planner.errors import BriefError
from planner.guard import checked

__all__ = ["FORMATS", "cmd_export"]

FORMATS = ("md", "html", "pdf")


def cmd_export(args: argparse.Namespace) -> int:
    out = Path(args.out)
    if not out.parent.is_dir():
        raise BriefError("--out", f"directory {str(out.parent)!r} does not exist")
    design = checked(plan, brief_from_args(args))  # bad briefs and uncomputable designs raise BriefError: exit 2

    import report  # the export layer, loaded only when a document is asked for (see the module docstring)

    try:  # a missing Graphviz or Chromium: one line naming the tool, as for bad input
        if args.format == "md":
            payload = report.render_markdown(design).encode("utf-8")
        elif args.format == "html":
            payload = report.render_html(design).encode("utf-8")
        else:
            payload = report.render_pdf(design)
    except report.ExportError as exc:
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
