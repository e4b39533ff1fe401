"""Cross-check: the analytic SLO figures of every preset against the step-level simulator's.

    .venv/bin/python scripts/crosscheck.py     # writes docs/crosscheck.md

Both sides describe the same replica at the same load, so the comparison is like for like:
- a decode step reads each sequence's own context on both sides (the brief's kv_context_tokens, a sizing
  assumption, is set aside);
- the simulator runs one general-pool replica at the plan's rate per replica (Poisson, the brief's length
  distributions, 20,000 requests, seed 0);
- the prefix cache as the headline assumes it (slo.queue_basis): on the cold_cache basis the other
  requests' prompts all miss and only the measured prompts (those near the TTFT cap) hit at the brief's
  rate; on the hit_rate basis every prompt hits at the brief's rate;
- the analytic latency model (planner.slo.latency_point) is evaluated at the running batch Little's law
  gives at the engine's pace, which is what the simulator runs. For briefs stated as users x duty cycle
  the plan holds each reply for the users' streaming time (generation_s_per_turn), a larger batch than
  the engine's pace, so the plan's ITL is higher; the second table shows the plan's own figures;
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
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from planner import load_brief, plan, preset_names  # noqa: E402
from planner.brief import Brief, QueueBasis  # noqa: E402
from planner.operating_point import effective_hit_rate  # noqa: E402
from planner.sim_engine import run_engine  # noqa: E402
from planner.sim_workload import cached_tokens  # noqa: E402
from planner.simulator import (  # noqa: E402
    SimSettings,
    _per_request_ms,
    _requests,
    step_costs,
)
from planner.slo import latency_point  # noqa: E402

REPORT = ROOT / "docs" / "crosscheck.md"
REQUESTS = 20_000
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


def _at_engine_pace(brief: Brief) -> Brief:
    """The same load stated as a request rate, so Little's law runs at the engine's pace, as the simulator does."""
    if brief.workload.request_rate is not None:
        return brief
    return brief.with_changes({"workload.request_rate": plan(brief).demand.request_rate_per_s, "workload.users": None})


def _cached_tokens(brief: Brief, prompts: npt.NDArray[np.int64], measured: npt.NDArray[np.bool_]) -> npt.NDArray[np.int64]:
    """Prefix-cached prompt tokens per request on the brief's queue basis (cold: only the measured prompts hit)."""
    hits = measured if brief.slo.queue_basis is QueueBasis.cold_cache else np.ones_like(measured)
    return np.where(hits, cached_tokens(prompts, effective_hit_rate(brief)), 0)


def compare(name: str) -> dict[str, Any]:
    """One preset's analytic and simulated TTFT and ITL (ms), p50 and p95, on the headline's queue basis."""
    brief = load_brief(name)
    design = plan(brief)
    slo = design.slo
    rate = slo.point.rate_per_replica_per_s
    engine = _engine_brief(brief)
    shape = plan(engine).shape
    point = latency_point(engine, shape, rate, plan(_at_engine_pace(engine)).operating_point.in_flight)
    costs = step_costs(engine, shape)
    max_len = min(engine.deployment.max_model_len, costs.kv_capacity_tokens)
    reqs = _requests(engine, SimSettings(requests=REQUESTS, seed=0), rate, max_len)
    cap_prompt = min(float(brief.slo.ttft_input_cap_tokens), brief.workload.input_tokens_p95)
    near = (reqs.prompt_tokens >= 0.8 * cap_prompt) & (reqs.prompt_tokens <= 1.2 * cap_prompt)
    reqs = replace(reqs, cached_tokens=_cached_tokens(brief, reqs.prompt_tokens, near))
    out = run_engine(reqs.arrival_s, reqs.prompt_tokens, reqs.output_tokens, reqs.cached_tokens, 0, costs)
    ttft, tpot, _ = _per_request_ms(out, reqs)
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
        "queue_basis": brief.slo.queue_basis.value if effective_hit_rate(brief) > 0 else "no hits",
        "analytic_batch": point.running_batch,
        "simulated_batch": float(np.sum(out.itl_bin_count) / max(out.steps, 1)),
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
        "| preset | load stated as | queue basis | rate per replica | batch analytic / simulated | TTFT p50 (ms) | TTFT p95 (ms) | ITL p50 (ms) | ITL p95 (ms) |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        a, s = r["analytic"], r["simulated"]
        lines.append(
            f"| {r['preset']} | {r['basis']} | {r['queue_basis']} | {r['rate']:.2f} req/s | {r['analytic_batch']:.1f} / {r['simulated_batch']:.1f}"
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

- **The prefill slot's service (planner/slo.py).** A step in the simulator costs max(compute of its
  tokens, bytes it reads) + fixed time. The analytic model first added a whole decode step to every
  prompt's compute, and took the prompt lengths' gamma distribution unclipped; with the capstone's
  prompt spread (p95/mean = 5, CV² 4.5) the third moment of the unclipped tail made the wait's p95
  run 45-95% above the waits the simulator measures (arrival to first admission) on the capstone's
  cold-cache load. The service is now the same max as the simulator's step, over prompts clipped at
  max-model-len (the simulator clips them too; longer ones belong to the long-context pool): on that
  load at 4-12 req/s per replica the analytic wait is within 10% of the measured one on the mean and
  within 6% on the p95.
- **The headline basis.** The worked design budgets the queue as if the other requests' prompts missed
  the cache (its 51% utilization), and caches only the measured prompt. The simulator runs exactly that
  here (cold_cache rows): the capstone's TTFT p95 agrees within the tolerance below. At the same load
  the worked design's own mean (~194 ms) has a ~90 ms queue "from queueing theory"; the simulator
  measures about half of that, so our mean (~145 ms) is 25% under the seed's while the p95 is within 10%.
- **The earlier fix: decode does not hold prompts back.** Treating decode as a higher-priority class
  (a two-class priority M/G/1) counted the decode's memory time twice: at `qps200-chat`'s 12.5 req/s per
  replica it put the TTFT p50 at 6.8 s where the simulator measures 66 ms. Prompts queue FCFS for the
  prefill slot.
- **Same prompts on both sides.** The simulator draws lengths from the gamma distribution the analytic
  model assumes (mean and p95 of the brief).
- **Overloaded presets agree that they are.** variation-a (32 GPUs: after the spare and the long-context
  node, two general-pool nodes carry 95% of the traffic) and variation-f (405B) are overloaded on the
  analytic side (no fixed point) and in the simulator (the queue grows through the run).
- **variation-g's TTFT p50 is conservative.** On the cold-cache load the A100's prefill slot is 61%
  busy; the two-moment gamma fit of the wait puts its median above the simulator's, while the p95 agrees.
- **The ITL interference** is the time prompts' steps take beyond the decode steps they stand in for
  (a mixed step also emits the batch's tokens), not the whole prefill compute share: with the latter the
  analytic ITL ran 17-44% above the simulator's on the cold-cache loads; now within 10%.
- **Pace.** For briefs stated as users x duty cycle, the plan holds each reply's batch slot for the users'
  streaming time (14.4 s in the capstone), the worked designs' basis, which is 4-5x the engine-pace batch
  here; the plan's ITL is therefore higher than both columns above (second table). That is the brief's
  stated assumption, not a modelling error.
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
