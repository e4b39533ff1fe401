"""The design document as Markdown: every figure of the Design with the arithmetic behind it.

It renders a Design and computes nothing; the app's download button and any script can call it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from planner import Design
from planner.fmt import num, pct

__all__ = ["render_markdown"]


def _escape_cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _table(header: tuple[str, ...], rows: Iterable[tuple[str, ...]]) -> list[str]:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(_escape_cell(c) for c in row) + " |" for row in rows]
    return [*lines, ""]


def _figures(title: str, figures: Iterable[tuple[str, str, str]], arithmetic: Mapping[str, str]) -> list[str]:
    """A section table: figure, value, arithmetic (looked up by the figure's field name)."""
    rows = [(label, value, arithmetic.get(key, "")) for key, label, value in figures]
    return [f"## {title}", "", *_table(("figure", "value", "arithmetic"), rows)]


def render_markdown(design: Design) -> str:
    b, d, m, c, op, v = design.brief, design.demand, design.memory, design.capacity, design.operating_point, design.verdict
    lines = [f"# {b.title}", "", b.description, ""]
    lines += [
        f"{design.model_name} on {b.hardware.nodes} nodes x {b.hardware.gpus_per_node} {design.gpu_name},"
        f" TP={b.deployment.tp}, {b.deployment.weights.value} weights, {b.deployment.kv_cache.value} KV cache.",
        "",
    ]
    verdict = "feasible" if v.feasible else "not feasible"
    verdict += ", meets the SLO" if v.meets_slo else ", does not meet the SLO"
    lines += [f"**Verdict:** {verdict}. Binding resource: {c.binding_constraint.value} ({c.binding_reason}).", ""]
    for p in v.problems:
        lines.append(f"- `{p.field}`: {p.problem}; {p.change}")
    if v.problems:
        lines.append("")
    if b.assumptions:
        lines += ["## Assumptions", "", *[f"- {a}" for a in b.assumptions], ""]
    lines += _figures(
        "Demand",
        (
            ("request_rate_per_s", "request rate", num(d.request_rate_per_s, "req/s")),
            ("generating_sequences", "sequences generating at once", num(d.generating_sequences)),
            ("input_tokens_per_s", "input tokens", num(d.input_tokens_per_s, "tok/s")),
            ("output_tokens_per_s", "output tokens", num(d.output_tokens_per_s, "tok/s")),
            ("prefill_tokens_per_s_after_cache", "prefill after prefix hits", num(d.prefill_tokens_per_s_after_cache, "tok/s")),
        ),
        d.arithmetic,
    )
    lines += _figures(
        "Memory per GPU",
        (
            ("weights_gb_per_gpu", "weights", num(m.weights_gb_per_gpu, "GB")),
            ("kv_gb_per_gpu", "KV cache", num(m.kv_gb_per_gpu, "GB")),
            ("kv_bytes_per_token_per_gpu", "KV per token per GPU", num(m.kv_bytes_per_token_per_gpu, "B")),
            ("max_sequences_per_replica", "sequences that fit one replica", num(m.max_sequences_per_replica)),
        ),
        m.arithmetic,
    )
    lines += _figures(
        "Capacity",
        (
            ("decode_step_ms", "decode step at the running batch", num(c.decode_step_ms, "ms")),
            ("decode_tokens_per_s", "decode capacity (fleet)", num(c.decode_tokens_per_s, "tok/s")),
            ("prefill_tokens_per_s", "prefill capacity (fleet)", num(c.prefill_tokens_per_s, "tok/s")),
            ("utilization", "utilization", pct(c.utilization)),
            ("utilization_no_prefix_cache", "utilization without prefix caching", pct(c.utilization_no_prefix_cache)),
        ),
        c.arithmetic,
    )
    lines += _figures(
        "Operating point (one replica, Little's law)",
        (
            ("rate_per_replica_per_s", "rate per replica", num(op.rate_per_replica_per_s, "req/s")),
            ("in_flight", "in flight", num(op.in_flight)),
            ("tpot_ms", "TPOT", num(op.tpot_ms, "ms")),
            ("kv_in_use_gb", "KV in use", num(op.kv_in_use_gb, "GB")),
            ("capacity_rate_per_s", "capacity at the ITL target", num(op.capacity_rate_per_s, "req/s")),
        ),
        op.arithmetic,
    )
    return "\n".join(lines).rstrip() + "\n"
