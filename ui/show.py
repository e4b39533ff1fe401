"""Small rendering helpers the pages share: figures with their arithmetic, verdicts, problems.

Nothing here computes a number: values and arithmetic come from the Design. Text from the design or the
brief goes through `md()` (Markdown escaped; no HTML is ever allowed), so a title cannot inject markup.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from planner import Design, Problem
from planner.disagg import decode_batch_words
from planner.failures import needs_n_plus_one
from planner.figures import arithmetic, field_label, of_target, show, spec
from planner.fmt import num, pct
from planner.plaintext import defang_urls

__all__ = [
    "ARITHMETIC_KEY_PREFIX",
    "Fig",
    "arithmetic_expander",
    "chart",
    "fig",
    "figure_row",
    "md",
    "show_problems",
    "table",
    "text_table",
    "verdict_banner",
]

_PER_ROW = 4
ARITHMETIC_KEY_PREFIX = "arith."
# No Plotly mode bar: a chart whose figure changes is drawn anew (Streamlit's element id hashes the figure), mode bar
# included, on every control change; without it a chart draws about 8 ms sooner in headless Chromium here
# (benchmarks/browser_speed.py). Hover, drag to zoom and double-click to reset stay.
_CHART_CONFIG = {"displayModeBar": False}
_MD_SPECIAL = re.compile(r"([\\`*_{}\[\]()<>#+\-.!|~$:])")


def md(text: str) -> str:
    """Text shown as written: Markdown (and the $ that Streamlit reads as LaTeX) escaped, control characters
    removed, and URLs broken invisibly, so the browser's autolinking makes no link of them (escaping alone
    does not stop `https://...` or `www....` becoming a live link)."""
    return _MD_SPECIAL.sub(r"\\\1", defang_urls(text))


@dataclass(frozen=True)
class Fig:
    """One figure on a page: its label, its formatted value, and the arithmetic that produced it."""

    label: str
    value: str
    arithmetic: str = ""
    help: str | None = None
    note: str | None = None  # one line under the value (why a figure is unbounded)
    text: bool = False  # words, not a number: drawn at body size so that it wraps (a metric tile cuts it off)


def fig(design: Design, path: str, *, help: str | None = None, note: str | None = None) -> Fig:
    """The figure at a plan path as the registry names and writes it (planner.figures), with its arithmetic.

    A metric tile shows 'unbounded' for a figure without a steady state, its cause in a line under it."""
    entry = spec(path)
    value = show(design, path, short=True)
    full = show(design, path)
    cause = full.removeprefix(f"{value}: ") if full.startswith(f"{value}: ") else None
    share = of_target(design, path)  # a job's or a rollout's time: its share of the deadline under it
    return Fig(entry.label, value, arithmetic(design, path), help or entry.help or None, cause or note or share or None)


def figure_row(figs: Sequence[Fig], *, arithmetic_title: str = "Show the arithmetic") -> None:
    """Metrics in balanced rows of at most four, then one expander listing each figure's arithmetic."""
    rows = -(-len(figs) // _PER_ROW)
    per_row = -(-len(figs) // rows)
    for start in range(0, len(figs), per_row):
        chunk = figs[start : start + per_row]
        for column, fig in zip(st.columns(per_row), chunk, strict=False):
            with column:
                if fig.text:
                    st.markdown(f"{md(fig.label)}  \n**{md(fig.value)}**", help=fig.help)
                else:
                    st.metric(fig.label, fig.value, fig.note, help=fig.help, delta_color="off", delta_arrow="off")
    arithmetic_expander(((f.label, f.arithmetic) for f in figs if f.arithmetic), title=arithmetic_title)


def arithmetic_expander(pairs: Iterable[tuple[str, str]], *, title: str = "Show the arithmetic") -> None:
    """The arithmetic behind figures, drawn only while its expander is open (opening it reruns the page).

    A closed expander's Markdown still costs the browser its rendering on every control change (about 6 ms each
    here), and the pages carry up to five of them. The key follows the figures, so an open one stays open."""
    pairs = list(pairs)
    if not pairs:
        return
    key = ARITHMETIC_KEY_PREFIX + title + "|" + "|".join(label for label, _ in pairs)
    section = st.expander(title, key=key, on_change="rerun")
    if section.open:
        with section:
            st.markdown("\n".join(f"- **{md(label)}**: {md(text)}" for label, text in pairs))


def chart(figure: go.Figure, key: str) -> None:
    """A Plotly chart across its column, without the mode bar."""
    st.plotly_chart(figure, key=key, config=_CHART_CONFIG)


def arithmetic_of(section: Mapping[str, str], *keys: str) -> str:
    return "; ".join(section[k] for k in keys if k in section)


def show_problems(problems: Sequence[Problem]) -> None:
    for p in problems:
        st.markdown(f"- **{md(field_label(p.field))}**: {md(p.problem)}. **Change:** {md(p.change)}")


def binding_line(design: Design) -> str:
    """What binds the design, in a sentence: the sizing arithmetic's resource; for a disaggregated design the pool that
    misses first as traffic grows, with the aggregated sizing arithmetic named as such (the Capacity page's)."""
    dis, c = design.disaggregation, design.capacity
    if dis is None:
        return c.binding_reason
    target = {"prefill": "the p95 TTFT target", "decode": "its token-gap target"}.get(dis.binding_pool)
    first = f"the {dis.binding_pool} pool misses {target} first as traffic grows; " if target else ""
    return (
        f"{first}the prefill pool is {pct(dis.prefill_busy)} busy on {dis.prefill_replicas} replicas and a decode replica runs"
        f" {decode_batch_words(dis, design.brief.deployment.max_num_seqs)} at {num(dis.decode_step_ms, 'ms')} a step."
        f" The aggregated sizing arithmetic (every node running prompts and replies together: the Capacity page) binds on"
        f" {c.binding_constraint.value} at {pct(c.utilization)}"
    )


def verdict_banner(design: Design) -> None:
    """The verdict bar's answer in a sentence: green only where the bar is (the SLO met with the N+1 the availability
    asks for and any stated headroom kept), amber where the SLO is met without them."""
    v = design.verdict
    judged = "the SLO" if design.objective is None else "its deadline"  # an offline job or a rollout: no latency target
    short = [
        words
        for ok, words in (
            (v.availability_ok, "one node lost misses it (no N+1)"),
            (v.headroom_ok, "the pools keep less than the stated headroom above the peak"),
        )
        if not ok
    ]
    if v.feasible and v.meets_slo and short:
        st.warning(f"Feasible and meets {judged} at the peak, but {' and '.join(short)}.")
    elif v.feasible and v.meets_slo:
        with_n_plus_one = design.objective is None and needs_n_plus_one(design.brief)  # only where the availability asks for it
        st.success(f"Feasible and meets {judged}{' with N+1' if with_n_plus_one else ''}.")
    elif v.feasible:
        st.warning(f"Feasible, but {judged} is not met.")
    else:
        st.error("Not feasible as briefed.")
    if v.problems:
        show_problems(v.problems)


def table(rows: Sequence[Mapping[str, object]]) -> None:
    """Rows of planner text and figures as a static table (the rows are few; nothing to sort or scroll).

    Not st.dataframe: its grid updates its cells a fifth of a second after a run whose rows changed, which held every
    control change on the Architecture and Cost pages ~200 ms past the run's end (benchmarks/browser_speed.py)."""
    if rows:
        st.table(pd.DataFrame(list(rows)), hide_index=True)


def text_table(rows: Sequence[Mapping[str, object]]) -> None:
    """Rows with long text (reasons, notes) as a static table whose cells wrap."""
    if rows:
        frame = pd.DataFrame(list(rows))
        st.table(frame.set_index(frame.columns[0]))
