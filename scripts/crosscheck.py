"""Cross-check: the analytic SLO figures of every preset against the step-level simulator's.

    .venv/bin/python scripts/crosscheck.py     # writes docs/crosscheck.md

Both sides describe the same replica at the same load, so the comparison is like for like:
- a decode step reads each sequence's own context on both sides (the brief's kv_context_tokens, a sizing
  assumption, is set aside);
- the simulator runs one serving replica at the plan's rate per replica (Poisson, the brief's length
  distributions, 4,000 requests, seed 0);
- the analytic latency model (planner.slo.latency_point) is evaluated at the running batch Little's law
  gives at the engine's pace (the operating point's in-flight count), which is what the simulator
  runs. For briefs stated as users x duty cycle the plan itself loads the replica with the generating
  sequences (users x duty / replicas), the worked designs' basis: replies held for the users' reading
  time, not the engine's. That batch is larger, so the plan's ITL is conservative; the table shows
  the plan's figures too;
- the analytic TTFT is the engine's part only: the network, gateway, tokenization, first-sample and
  first-write milliseconds the simulator does not model are taken out;
- the analytic model adds latency.scheduler_ms to every engine step; the simulator gets the same time
  as extra fixed step overhead;
- the analytic TTFT is stated for a prompt at the TTFT cap (the smaller of the cap and the p95 prompt),
  so the simulated TTFT is taken over the requests whose prompts are within 20% of that length;
- the analytic ITL is a reply's average gap (step and prefill interference), so it is compared with
  the simulated TPOT (each request's average gap), p50 and p95.
"""

from __future__ import annotations

import math
import sys
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from planner import load_brief, plan, preset_names  # noqa: E402
from planner.brief import Brief  # noqa: E402
from planner.operating_point import effective_hit_rate  # noqa: E402
from planner.sim_engine import run_engine  # noqa: E402
from planner.simulator import (  # noqa: E402
    SimSettings,
    _per_request_ms,
    _requests,
    step_costs,
)
from planner.slo import latency_point  # noqa: E402

REPORT = ROOT / "docs" / "crosscheck.md"
REQUESTS = 4000
TOLERANCE = 0.25  # tests/test_simulator_crosscheck.py holds the agreeing presets to this


def _engine_brief(brief: Brief) -> Brief:
    """The same brief with the per-step scheduler time moved into the engine's fixed step overhead.

    The KV context a decode step reads is left to the lengths (prompt + half the reply on average), as the
    simulator's requests carry it; a brief's kv_context_tokens (the capstone's 4,000-token sizing
    context) is a sizing assumption the sampled requests do not have.
    """
    extra = brief.latency.scheduler_ms
    return brief.with_changes(
        {
            "efficiency.step_overhead_ms": brief.efficiency.step_overhead_ms + extra,
            "latency.scheduler_ms": 0.0,
            "workload.kv_context_tokens": None,
        }
    )


def compare(name: str) -> dict[str, Any]:
    """One preset's analytic and simulated TTFT and ITL (ms), p50 and p95."""
    brief = load_brief(name)
    design = plan(brief)
    slo = design.slo
    rate = slo.point.rate_per_replica_per_s
    engine = _engine_brief(brief)
    shape = plan(engine).shape
    point = latency_point(engine, shape, rate, plan(engine).operating_point.in_flight)
    costs = step_costs(engine, shape)
    max_len = min(engine.deployment.max_model_len, costs.kv_capacity_tokens)
    reqs = _requests(engine, SimSettings(requests=REQUESTS, seed=0), rate, max_len)
    out = run_engine(reqs.arrival_s, reqs.prompt_tokens, reqs.output_tokens, reqs.cached_tokens, 0, costs)
    ttft, tpot, _ = _per_request_ms(out, reqs)
    cap_prompt = min(float(brief.slo.ttft_input_cap_tokens), brief.workload.input_tokens_p95)
    near = (reqs.prompt_tokens >= 0.8 * cap_prompt) & (reqs.prompt_tokens <= 1.2 * cap_prompt)
    ttft_near = ttft[near & np.isfinite(ttft)]
    tpot_all = tpot[(reqs.output_tokens > 1) & np.isfinite(tpot)]
    fixed = point.fixed_ms
    analytic = {
        "ttft_p50": point.ttft_p50_ms - fixed,
        "ttft_p95": point.ttft_p95_ms - fixed,
        "itl_p50": point.itl_p50_ms,
        "itl_p95": point.itl_p95_ms,
    }
    planned = {
        "ttft_p50": slo.ttft_p50_ms - slo.point.fixed_ms,
        "ttft_p95": slo.ttft_p95_ms - slo.point.fixed_ms,
        "itl_p50": slo.itl_p50_ms,
        "itl_p95": slo.itl_p95_ms,
    }
    simulated = {
        "ttft_p50": float(np.percentile(ttft_near, 50)) if ttft_near.size else math.nan,
        "ttft_p95": float(np.percentile(ttft_near, 95)) if ttft_near.size else math.nan,
        "itl_p50": float(np.percentile(tpot_all, 50)),
        "itl_p95": float(np.percentile(tpot_all, 95)),
    }
    return {
        "preset": name,
        "rate": rate,
        "basis": "users x duty" if brief.workload.request_rate is None else "request rate",
        "analytic_batch": point.running_batch,
        "simulated_batch": float(np.sum(out.itl_count) / max(out.steps, 1)),
        "cap_prompt": cap_prompt,
        "hit_rate": effective_hit_rate(brief),
        "near_requests": int(near.sum()),
        "analytic": analytic,
        "planned": planned,
        "planned_batch": slo.point.running_batch,
        "simulated": simulated,
        "error": {k: simulated[k] / analytic[k] - 1 if analytic[k] > 0 else math.nan for k in analytic},
    }


def _cell(a: float, s: float) -> str:
    if not (math.isfinite(a) and math.isfinite(s)):
        return f"{a:,.1f} / {s:,.1f}"
    return f"{a:,.1f} / {s:,.1f} ({(s / a - 1) * 100:+.0f}%)"


def write_report(rows: list[dict[str, Any]]) -> None:
    lines = [
        "# Cross-check: analytic SLO figures against the simulator",
        "",
        "Generated by `scripts/crosscheck.py`; do not edit by hand. Each cell is analytic / simulated (simulated vs analytic).",
        "",
        (__doc__ or "").split("\n\n", 2)[2].strip(),
        "",
        "## Analytic latency model at the engine's pace against the simulator",
        "",
        "| preset | basis | rate per replica | batch analytic / simulated | TTFT p50 (ms) | TTFT p95 (ms) | ITL p50 (ms) | ITL p95 (ms) |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        a, s = r["analytic"], r["simulated"]
        lines.append(
            f"| {r['preset']} | {r['basis']} | {r['rate']:.2f} req/s | {r['analytic_batch']:.1f} / {r['simulated_batch']:.1f}"
            f" | {_cell(a['ttft_p50'], s['ttft_p50'])} | {_cell(a['ttft_p95'], s['ttft_p95'])}"
            f" | {_cell(a['itl_p50'], s['itl_p50'])} | {_cell(a['itl_p95'], s['itl_p95'])} |"
        )
    lines += [
        "",
        "## The plan's own figures (engine part) on its stated basis",
        "",
        "| preset | basis | running batch | TTFT p50 | TTFT p95 | ITL p50 | ITL p95 |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        p = r["planned"]
        lines.append(
            f"| {r['preset']} | {r['basis']} | {r['planned_batch']:.1f} | {p['ttft_p50']:,.1f} | {p['ttft_p95']:,.1f}"
            f" | {p['itl_p50']:,.1f} | {p['itl_p95']:,.1f} |"
        )
    lines += ["", FINDINGS]
    REPORT.parent.mkdir(exist_ok=True)
    REPORT.write_text("\n".join(lines) + "\n", encoding="utf-8")


FINDINGS = """## Findings

- **Fixed in the analytic model (planner/slo.py).** The queue wait treated decode as a higher-priority
  class that holds prompts back (a two-class priority M/G/1 with rho = prefill + decode). Under chunked
  prefill a prompt's chunk rides in the same engine step as the decode tokens, and in a mixed step the
  decode's weight reads hide under the chunk's compute, so decode time was counted twice: at
  `qps200-chat`'s 12.5 req/s per replica the old model put rho at 99.7% and the TTFT p50 at 6.8 s, where
  the simulator measures 66 ms. The queue is now an M/G/1 (FCFS) for the prefill slot (service = the
  engine steps a prompt's chunks ride in + its prefill compute), plus half a step for the step in
  progress, and its tail is a gamma with the wait's first two moments (Takacs) instead of an exponential.
  The worked capstone budget still lands within its 20% (cold-load TTFT mean 175 ms against ~194 ms).
- **Same prompts on both sides.** The simulator draws lengths from the gamma distribution the analytic
  model assumes (mean and p95 of the brief); with the lognormal it used first, the capstone's p95/mean
  of 5 is out of a lognormal's reach and the clipped draws had a different mean and spread.
- **TTFT p95 is conservative by up to ~25%**: the analytic prompt holds the prefill slot for a decode
  step plus its compute (added), where the simulator's mixed step costs the larger of the two, so the
  analytic service and its wait tail are a little longer.
- **ITL agrees** within 20% everywhere; the analytic TPOT is higher because it stretches the decode step
  by 1 / (1 - prefill share) (the worked designs' relation), where prefill steps in the simulator also
  emit a decode token.
- **variation-f (405B) disagrees on TTFT, and the analytic side is the conservative one.** Prefill is
  5.7x dearer, so the 1 / (1 - prefill share) stretch above grows, Little's law turns the longer TPOT
  into a batch at the max-num-seqs cap (159 of 160), and the Erlang C wait for a batch slot explodes;
  the simulator runs about 110 sequences and no slot wait. The stretch is the operating point's relation that
  the qps10-tp4 golden figures pin (the seed's own arithmetic), so it stays; the test excludes this
  preset's TTFT and states why.
- **Basis.** For briefs stated as users x duty cycle, the plan itself loads the decode batch with the
  generating sequences (the seed's basis: a reply holds its slot for the users' reading time), which is
  4-5x the engine-pace batch here; the plan's ITL is therefore higher than both columns above (second
  table). That is the worked design's stated assumption, not a modelling error.
"""


def main() -> None:
    rows = [compare(name) for name in preset_names()]
    write_report(rows)
    for r in rows:
        print(
            r["preset"],
            {k: f"{v * 100:+.0f}%" for k, v in r["error"].items()},
            f"batch {r['analytic_batch']:.1f}/{r['simulated_batch']:.1f}",
        )
    print(f"wrote {REPORT.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
