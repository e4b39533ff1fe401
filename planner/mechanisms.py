"""The serving mechanisms a brief turns on beyond the base method: KV tiers, multimodal inputs, multi-LoRA.

Each is off by default. `resolve` applies what a mechanism changes in the brief itself before the method runs
(the image tokens in the prompt, the hit rate the KV tiers give); `ttft_extra_s` is what they add to every
request's path before its first token; `mechanism_flags` the engine options they need.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple

from planner.brief import Brief
from planner.catalog import gpu_spec
from planner.fmt import PCT_STEP, num, pct
from planner.kv_tiers import P95_TAIL, kv_tier_analysis
from planner.lora import lora_check
from planner.lora_serving import LoraServing, adapter_loads
from planner.multimodal import MultimodalAnalysis, multimodal_analysis, with_image_tokens
from planner.quantization import prefill_peak, weight_scheme
from planner.replica import ReplicaShape, shape_of
from planner.trusted import trusted
from planner.verdict import Problem, Verdict

if TYPE_CHECKING:
    from planner.core import CoreDesign
    from planner.objective import ObjectiveAnalysis

__all__ = [
    "PLAN_PERCENTILE",
    "SHOWN_HIT_RATE",
    "TtftTerm",
    "engine_problems",
    "ignored_fields",
    "mechanism_verdict",
    "resolve",
    "ttft_extra_ms",
    "ttft_extra_s",
    "ttft_terms",
    "ttft_terms_s",
]

SHOWN_HIT_RATE = PCT_STEP / 2  # a stated hit rate closer than this to the derived one prints the same


def resolve(brief: Brief) -> Brief:
    """The brief the method plans: image tokens added to the prompt lengths, and the prefix hit rate derived from the
    KV tiers when the brief sets one (said in the design's kv_tiers arithmetic). Idempotent: resolving twice changes nothing.

    With the KV tiers on, the derived hit rate replaces workload.prefix_hit_rate: the tiers' capacity against the live
    sessions decides what hits, so a stated rate is not used, and the plan says so (ignored_fields). To plan at a
    stated hit rate, turn the tiers off (kv_tiers.cpu_gb_per_node and kv_tiers.nvme_gb_per_node at 0)."""
    brief = with_image_tokens(brief)
    if brief.kv_tiers.enabled:
        tiers = kv_tier_analysis(brief, shape_of(brief))
        if tiers is not None and abs(tiers.hit_rate - brief.workload.prefix_hit_rate) > 1e-12:
            brief = brief.with_changes({"workload.prefix_hit_rate": tiers.hit_rate})
    return brief


def ignored_fields(stated: Brief, resolved: Brief) -> tuple[Problem, ...]:
    """Fields of the stated brief the design does not use, each with the reason and what to change to use one: users
    and a duty cycle beside a request rate (the rate replaces users x duty cycle), a workload.prefix_hit_rate the KV
    tiers replace, an efficiency.compute_peak above the peak the weights compute at, and an SLO percentile other than
    the p95 the plan's latency model reads (Design.ignored_fields: reported, never dropped silently; not a verdict
    problem, since it judges nothing)."""
    return (
        _replaced_by_rate(stated)
        + _replaced_by_tiers(stated, resolved)
        + _peak_above_weights(stated)
        + _read_by_the_simulated_search(stated)
    )


def _peak_above_weights(stated: Brief) -> tuple[Problem, ...]:
    """efficiency.compute_peak above what the weights compute at on the GPU (INT8 math with FP8 weights dequantized to
    BF16 on an A100): the capacity is sized at the weights' peak instead (planner.quantization.prefill_peak)."""
    dep, gpu = stated.deployment, gpu_spec(stated.hardware.gpu)
    peak = prefill_peak(dep.weights, stated.efficiency.compute_peak, gpu)
    if not peak.unused:
        return ()
    runs = weight_scheme(dep.weights, gpu).compute_precision
    return (
        Problem(
            field="efficiency.compute_peak",
            problem=peak.unused_why,
            change=(
                f"to size prefill at the {peak.stated.value.upper()} peak, set deployment.weights={peak.stated.value};"
                f" to say what the plan uses, set efficiency.compute_peak to auto (here {runs})"
                if gpu.runs_natively(peak.stated.value)
                else f"set efficiency.compute_peak to auto (here {runs}), a peak the {gpu.name} has"
            ),
        ),
    )


def _replaced_by_rate(stated: Brief) -> tuple[Problem, ...]:
    """workload.users and a duty cycle other than its default, when a request rate is given: the rate is the peak."""
    w = stated.workload
    if w.request_rate is None:
        return ()
    default_duty = type(w).model_fields["duty_cycle"].default
    unused = [("workload.users", num(w.users, "users"))] if w.users is not None else []
    unused += [("workload.duty_cycle", f"a duty cycle of {num(w.duty_cycle)}")] if w.duty_cycle != default_duty else []
    return tuple(
        Problem(
            field=path,
            problem=f"not used: the request rate ({num(w.request_rate, 'req/s')}) is the peak, replacing users x duty cycle ({what} stated)",
            change="to plan from users and a duty cycle, clear workload.request_rate; to change the load, change the rate",
        )
        for path, what in unused
    )


PLAN_PERCENTILE = 0.95  # the plan reads the TTFT and ITL targets at p95: its figures, SLO capacity and headroom are p95s


def _read_by_the_simulated_search(stated: Brief) -> tuple[Problem, ...]:
    """slo.attainment_target other than p95: the plan's closed forms judge the targets at p95 by design (the slo.*_p95_ms
    figures, the SLO capacity and the headroom are all p95s), so the stated percentile is read by the simulated
    max-rate search alone (planner.simulator), which sizes its fleet at it."""
    q = stated.slo.attainment_target
    if q == PLAN_PERCENTILE:
        return ()
    percentile = f"p{num(q * 100)}"
    return (
        Problem(
            field="slo.attainment_target",
            problem=f"not used by the plan: it judges the targets at p95 (its figures, SLO capacity and headroom); max-rate reads them at {percentile}",
            change=f"for a fleet sized at {percentile}, run max-rate",
        ),
    )


def _replaced_by_tiers(stated: Brief, resolved: Brief) -> tuple[Problem, ...]:
    if not stated.kv_tiers.enabled or not stated.deployment.prefix_caching:
        return ()
    given, derived = stated.workload.prefix_hit_rate, resolved.workload.prefix_hit_rate
    if abs(given - derived) <= SHOWN_HIT_RATE:
        return ()
    return (
        Problem(
            field="workload.prefix_hit_rate",
            problem=(f"not used: the KV tiers derive the hit rate from their capacity ({pct(derived)}), replacing the stated {pct(given)}"),
            change=(
                "to plan at a stated hit rate, turn the tiers off (kv_tiers.cpu_gb_per_node=0 and kv_tiers.nvme_gb_per_node=0);"
                " to move the derived one, change the tiers' sizes, kv_tiers.think_time_s or kv_tiers.turns_per_session"
            ),
        ),
    )


class TtftTerm(NamedTuple):
    """One mechanism's part of TTFT: as the p95 request meets it, and as a mean request does."""

    p95_name: str
    p95_ms: float
    mean_name: str
    mean_ms: float  # each reload, encoder pass or adapter load times the share of requests that meet it


def ttft_terms(brief: Brief, shape: ReplicaShape) -> tuple[TtftTerm, ...]:
    """The TTFT terms of the mechanisms a brief turns on beyond the base method: a KV reload, the vision encoder, an
    adapter load."""
    if not _any_on(brief):
        return ()
    terms: list[TtftTerm] = []
    tiers = kv_tier_analysis(brief, shape)
    if tiers is not None and tiers.ttft_reload_ms > 0:
        tier = "NVMe" if tiers.share_from_nvme > P95_TAIL else "CPU"
        share = pct(tiers.share_from_cpu + tiers.share_from_nvme)
        terms.append(
            TtftTerm(
                f"KV reload from the {tier} tier ({share} of requests)",
                tiers.ttft_reload_ms,
                f"KV reload from the tiers (mean: {share} of requests reload)",
                tiers.share_from_cpu * tiers.cpu_reload_ms + tiers.share_from_nvme * tiers.nvme_reload_ms,
            )
        )
    mm = multimodal_analysis(brief, shape, 0.0)
    if mm is not None and mm.ttft_encoder_ms > 0:
        terms.append(
            TtftTerm(
                f"vision encoder ({num(mm.ttft_encoder_ms / mm.encoder_ms_per_image)} uncached images)",
                mm.ttft_encoder_ms,
                f"vision encoder (mean: {num(mm.encoder_ms_per_request / mm.encoder_ms_per_image)} uncached images a request)",
                mm.encoder_ms_per_request,
            )
        )
    loads = adapter_loads(brief, shape)  # lora_serving's figures, without its words
    if loads is not None and loads.ttft_s > 0:
        from_cpu, from_storage = loads.cpu_hit_rate - loads.gpu_hit_rate, 1 - loads.cpu_hit_rate
        terms.append(
            TtftTerm(
                f"LoRA adapter load on a miss ({pct(1 - loads.gpu_hit_rate)} of requests)",
                loads.ttft_s * 1e3,
                f"LoRA adapter load (mean: {pct(1 - loads.gpu_hit_rate)} of requests miss the GPU)",
                from_cpu * (loads.load_from_cpu_s * 1e3) + from_storage * (loads.load_from_storage_s * 1e3),
            )
        )
    return tuple(terms)


def ttft_terms_s(terms: tuple[TtftTerm, ...]) -> tuple[float, float]:
    """What the mechanisms' TTFT `terms` add beyond the base method, in seconds: (the p95 request's, a mean request's)."""
    return sum(t.p95_ms for t in terms) / 1e3, sum(t.mean_ms for t in terms) / 1e3


def ttft_extra_s(brief: Brief, shape: ReplicaShape) -> tuple[float, float]:
    """The mechanisms' TTFT beyond the base method, in seconds: (the p95 request's, a mean request's)."""
    return ttft_terms_s(ttft_terms(brief, shape))


def _any_on(brief: Brief) -> bool:
    return brief.kv_tiers.enabled or brief.multimodal.enabled or brief.lora.adapters > 0


def ttft_extra_ms(brief: Brief) -> float:
    """ttft_extra_s of the brief's own replica, in ms (the simulator adds it to its fixed path as the plan does)."""
    return ttft_extra_s(brief, shape_of(brief))[0] * 1e3 if _any_on(brief) else 0.0


def mechanism_verdict(
    verdict: Verdict, core: CoreDesign, images: MultimodalAnalysis | None, lora: LoraServing | None, goal: ObjectiveAnalysis | None
) -> Verdict:
    """The verdict with what the mechanisms judge: the encoder's share of the GPUs, and an objective other than latency
    (an offline job or a rollout batch has no TTFT or ITL target: it meets its objective when it finishes in time)."""
    problems = list(verdict.problems)
    feasible = verdict.feasible
    if images is not None and images.utilization_with_encoder > 1:
        feasible = False
        problems.append(
            Problem(
                field="multimodal.encoder_cache_hit_rate",
                problem=(
                    f"the vision encoder takes {pct(images.encoder_busy_share)} of the GPUs' time on top of {pct(core.capacity.utilization)}"
                    " for prefill and decode: over 100% at the peak"
                ),
                change="add nodes, cache repeated images, cap the images per request or their resolution (fewer patches)",
            )
        )
    if core.brief.kv_tiers.enabled and not core.brief.deployment.prefix_caching:
        problems.append(
            Problem(
                field="deployment.prefix_caching",
                problem="the brief sets KV tiers but turns prefix caching off: no prompt reuses the KV the tiers keep",
                change="turn deployment.prefix_caching on, or leave the kv_tiers section out",
            )
        )
    if lora is not None and lora.problems:
        feasible = False
        problems += lora.problems
    if goal is None:
        if images is None and lora is None and len(problems) == len(verdict.problems):
            return verdict
        return verdict.model_copy(update={"feasible": feasible, "meets_slo": verdict.meets_slo and feasible, "problems": tuple(problems)})
    brief, shape = core.brief, core.shape
    adapters_fit, lora_problems = lora_check(brief, shape.model, shape.tp, shape.pp, shape.kv_gb_per_gpu)
    kept = [*lora_problems, *engine_problems(brief), *goal.problems]
    fits = adapters_fit and not engine_problems(brief)
    return trusted(Verdict, feasible=fits, meets_slo=fits and goal.meets, availability_ok=True, problems=tuple(kept))


def engine_problems(brief: Brief) -> list[Problem]:
    """Engine limits the engine itself refuses: without chunked prefill every prompt must fit one step's token budget
    (vLLM will not start with max-num-batched-tokens below max-model-len then); one --kv-transfer-config a command."""
    dep = brief.deployment
    problems = []
    if brief.disaggregation.enabled and brief.kv_tiers.nvme_gb_per_node > 0:
        problems.append(
            Problem(
                field="kv_tiers.nvme_gb_per_node",
                problem=(
                    "the NVMe tier's LMCache connector and disaggregation's NIXL connector both need --kv-transfer-config,"
                    " and the engine takes one"
                ),
                change="set kv_tiers.nvme_gb_per_node to 0 (the CPU tier offloads natively), or turn disaggregation off",
            )
        )
    if dep.chunked_prefill or dep.max_num_batched_tokens >= dep.max_model_len:
        return problems
    return [
        *problems,
        Problem(
            field="deployment.max_num_batched_tokens",
            problem=(
                f"without chunked prefill a prompt must fit one step, but max-num-batched-tokens ({dep.max_num_batched_tokens})"
                f" is below max-model-len ({dep.max_model_len}): the engine refuses this configuration"
            ),
            change=f"raise deployment.max_num_batched_tokens to at least {dep.max_model_len}, or turn deployment.chunked_prefill on",
            overrides={"deployment.max_num_batched_tokens": dep.max_model_len},
        ),
    ]
