"""Interview practice: the method's steps as questions, derived from the design, graded with the arithmetic.

Each step of the method (clarify, demand, memory, capacity, utilization, operating point, architecture, SLO
budget, failures, cost, critical dependency, what to measure, the brief's own variation, the follow-ups) asks
questions built from the design of the brief being practised, never from fixed text. A number is graded against
the plan's figure (its JSON path in `figure`, with the overrides the follow-ups plan it under) within a tolerance
that fits the step, on every basis the worked designs use: the capstone's 51.4% utilization without prefix caching
counts as right, and so does the 27.7% with it; the grade says which basis the answer matched. A choice carries a
reason in each option; a pick-several question scores the options that matter against the distractors picked.
After an answer the step shows the planner's answer, its arithmetic, the usual mistake and why the step matters.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping
from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict

from planner.brief import Brief
from planner.cost import Lever
from planner.design import Design, plan
from planner.errors import BriefError
from planner.failures import TITLES as SCENARIO_TITLES
from planner.failures import FailureMode, Scenario, pressure
from planner.figures import Format, arithmetic, format_unit, format_value, resolve, spec
from planner.fmt import num, pct, usd
from planner.variations import VariationAnalysis

__all__ = [
    "Attempt",
    "Grade",
    "Kind",
    "Option",
    "Question",
    "Step",
    "answer_value",
    "grade",
    "grade_question",
    "practice_steps",
    "public_steps",
    "summary_markdown",
]


class Kind(StrEnum):
    number = "number"
    choice = "choice"  # pick one
    several = "several"  # pick every option that matters


class _Model(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class Option(_Model):
    """One option of a choice: its key (what an answer names) and its text (the choice with its reason)."""

    key: str
    text: str


class Basis(_Model):
    """One accepted answer of a number question: what it is called, its value (in the question's unit) and the plan's
    JSON path it is read from (under the question's overrides), so every accepted value is a figure the plan shows."""

    name: str
    value: float
    figure: str
    arithmetic: str = ""


class Question(_Model):
    """One question of a step.

    id: what an answers file names; unit: what a number is entered in ("%" for a share); figure: the plan's JSON path
    a number is graded against (under `overrides` for a follow-up); tolerance: the relative error that passes;
    bases: every accepted value, the plan's first, each with its own plan path; unchanged: for a question about a
    change (a follow-up), the design's figures before the change on the same paths: an answer nearer one of them than
    to the basis it falls near is the unchanged figure and does not pass; correct: the option keys that are right (a
    choice: any one of them; pick-several: the ones that matter); answer/arithmetic: the planner's answer in words and
    its working; mistake: the usual mistake at this step; why: why the step matters.
    """

    id: str
    step: str
    prompt: str
    kind: Kind
    unit: str = ""
    options: tuple[Option, ...] = ()
    figure: str | None = None
    overrides: dict[str, Any] = {}
    tolerance: float = 0.0
    bases: tuple[Basis, ...] = ()
    unchanged: tuple[float, ...] = ()
    correct: tuple[str, ...] = ()
    answer: str
    arithmetic: str = ""
    mistake: str = ""
    why: str = ""

    def public(self) -> dict[str, Any]:
        """The question without its answer (the CLI's `steps[].questions[]`, a form's fields)."""
        data: dict[str, Any] = {"id": self.id, "prompt": self.prompt, "kind": self.kind.value, "unit": self.unit}
        if self.options:
            data["options"] = [o.model_dump() for o in self.options]
        if self.figure is not None:
            data["figure"] = self.figure
            data["tolerance"] = self.tolerance
            data["bases"] = [{"name": b.name, "figure": b.figure} for b in self.bases]  # what else passes, by plan path
            if self.overrides:
                data["overrides"] = dict(self.overrides)
        return data


class Step(_Model):
    key: str
    title: str
    method: str  # what the step of the method asks the candidate to do
    questions: tuple[Question, ...]


class Grade(_Model):
    """One graded answer: `points` 0-1 (a pick-several question earns part), `basis` the basis it matched;
    `answer` is the planner's answer, `beside` the words that set the answer beside it ("the planner's 12.8 req/s"),
    empty where the note states what the answer was held against (a pass on another basis than the plan's figure,
    which then is not shown as the answer)."""

    id: str
    step: str
    prompt: str
    given: str
    correct: bool
    points: float
    basis: str
    note: str
    answer: str
    beside: str
    arithmetic: str
    mistake: str
    why: str


class Attempt(_Model):
    grades: tuple[Grade, ...]
    score: float  # points earned
    answered: int
    total: int  # questions in the practice

    def by_step(self, steps: tuple[Step, ...]) -> list[tuple[Step, list[Grade]]]:
        return [(s, [g for g in self.grades if g.step == s.key]) for s in steps]


# --- tolerances by step: how exact a hand estimate can be ---------------------------------------------------

EXACT = 0.05  # pure arithmetic on the brief: weights, cost per hour
DEMAND = 0.10  # users x duty, rates
SIZING = 0.15  # capacity from stated efficiencies
MODEL = 0.25  # a step time or an operating point: depends on the efficiency factors a candidate assumes
BUDGET = 0.30  # a latency budget: queueing and interference are estimates


def _number(
    qid: str,
    step: str,
    prompt: str,
    design: Design,
    figure: str,
    tolerance: float,
    mistake: str,
    why: str,
    *,
    more: tuple[Basis, ...] = (),
    overrides: Mapping[str, Any] | None = None,
    source: Design | None = None,
) -> Question | None:
    """A number question on a registered figure; None when the figure has no finite value (nothing to estimate).

    With `source` (the design re-planned under `overrides`) the question is about a change: `design`'s own figures on
    the same bases are the unchanged answers, which never pass."""
    where = source or design
    value = float(resolve(where, figure))
    if not math.isfinite(value):
        return None
    entry = spec(figure)
    unit = "%" if entry.format is Format.percent else ("$" if entry.format is Format.money else entry.unit)
    scale = 100.0 if unit == "%" else 1.0
    work = arithmetic(where, figure)
    bases = (
        Basis(name="the plan", value=value * scale, figure=figure, arithmetic=work),
        *(b for b in more if math.isfinite(b.value)),
    )
    unchanged = _unchanged(design, bases, scale) if source is not None else ()
    return Question(
        id=qid,
        step=step,
        prompt=prompt,
        kind=Kind.number,
        unit=unit,
        figure=figure,
        overrides=dict(overrides or {}),
        tolerance=tolerance,
        bases=bases,
        unchanged=unchanged,
        answer=format_value(entry, value),
        arithmetic=work,
        mistake=mistake,
        why=why,
    )


def _unchanged(design: Design, bases: tuple[Basis, ...], scale: float) -> tuple[float, ...]:
    """The design's figures before a change, on each basis's plan path (in the question's unit)."""
    values = []
    for basis in bases:
        try:
            before = float(resolve(design, basis.figure)) * scale
        except (AttributeError, KeyError, IndexError, TypeError):  # a basis the design before the change does not give
            continue
        if math.isfinite(before):
            values.append(before)
    return tuple(values)


def _choice(
    qid: str,
    step: str,
    prompt: str,
    options: list[Option],
    correct: list[str],
    answer: str,
    arithmetic_text: str,
    mistake: str,
    why: str,
    *,
    several: bool = False,
) -> Question:
    return Question(
        id=qid,
        step=step,
        prompt=prompt,
        kind=Kind.several if several else Kind.choice,
        options=tuple(options),
        correct=tuple(correct),
        answer=answer,
        arithmetic=arithmetic_text,
        mistake=mistake,
        why=why,
    )


def _present(*questions: Question | None) -> tuple[Question, ...]:
    return tuple(q for q in questions if q is not None)


# --- the steps ----------------------------------------------------------------------------------------------


def _clarify(design: Design) -> Step:
    w = design.brief.workload
    users = w.users is not None
    matter = [
        Option(key="duty_cycle", text="What 'concurrent' means: how much of the time a user is actually generating (the duty cycle)"),
        Option(key="lengths", text="The input and output length distributions: means and p95s, history included"),
        Option(key="prefix_sharing", text="How much of each prompt repeats (history, system prompt): the prefix hit rate"),
        Option(key="slo_scope", text="Which percentile the latency targets are, and for which prompt sizes"),
        Option(key="peak_vs_average", text="How the peak compares with the daily average (the trough)"),
        Option(key="quantization", text="Whether quantized weights (FP8/INT8) are acceptable for quality"),
    ]
    if not users:  # a brief given as a rate has no users to ask about
        matter = matter[1:]
    distractors = [
        Option(key="client_language", text="Which programming language the client apps are written in"),
        Option(key="rack_vendor", text="Which vendor built the racks"),
        Option(key="orchestrator", text="Whether the team prefers Kubernetes or Nomad"),
        Option(key="ui_theme", text="The chat window's colour scheme"),
    ]
    options = sorted([*matter, *distractors], key=lambda o: o.text)
    if w.users is not None:
        traffic = f"{num(w.users)} users at a {pct(w.duty_cycle)} duty cycle"
    else:
        traffic = f"{num(w.request_rate or 0.0, 'req/s')} given"
    answer = "; ".join(o.text for o in matter)
    return Step(
        key="clarify",
        title="Clarify the workload",
        method="Ask before sizing: which facts would change the design?",
        questions=(
            _choice(
                "clarify.questions",
                "clarify",
                "Which questions do you ask before any arithmetic? Pick every one that changes the design.",
                options,
                [o.key for o in matter],
                answer,
                f"This brief's answers: {traffic}; inputs {num(w.input_tokens_mean)} mean / {num(w.input_tokens_p95)} p95, outputs"
                f" {num(w.output_tokens_mean)} / {num(w.output_tokens_p95)}; prefix hit rate {pct(w.prefix_hit_rate)};"
                f" average {pct(design.brief.cost.average_duty)} of peak.",
                "Taking 'concurrent users' as simultaneous generations: every later figure comes out an order of magnitude too big.",
                "The duty cycle, the lengths and the prefix sharing set every figure after them; the rest is decoration.",
                several=True,
            ),
        ),
    )


def _demand(design: Design) -> Step:
    users = design.brief.workload.users is not None
    why = "Demand is the numerator of every utilization: an error here carries, unchanged, into the fleet size and the cost."
    mistake = (
        "Taking every user as generating at once (10,000 simultaneous generations) instead of users x duty cycle."
        if users
        else "Multiplying the rate by the p95 lengths instead of the means: the p95 sizes the engine limits, the mean the load."
    )
    questions = _present(
        _number("demand.request_rate", "demand", "Request rate at peak", design, "demand.request_rate_per_s", DEMAND, mistake, why)
        if users
        else None,
        _number(
            "demand.generating",
            "demand",
            "Sequences generating at once",
            design,
            "demand.generating_sequences",
            DEMAND,
            mistake,
            why,
        )
        if users
        else None,
        _number(
            "demand.input_tokens", "demand", "Input tokens per second at peak", design, "demand.input_tokens_per_s", DEMAND, mistake, why
        ),
        _number(
            "demand.output_tokens", "demand", "Output tokens per second at peak", design, "demand.output_tokens_per_s", DEMAND, mistake, why
        ),
    )
    return Step(key="demand", title="Demand", method="Turn the traffic into token rates.", questions=questions)


def _memory(design: Design) -> Step:
    mistake = "Counting 2 bytes a parameter for 8-bit weights, or forgetting to divide the KV per token by TP."
    why = "It says whether memory binds: when the KV holds many times the sequences in flight, the design turns to bandwidth and compute."
    return Step(
        key="memory",
        title="Memory and KV capacity",
        method="Weights per GPU, what is left for KV, how many sequences fit.",
        questions=_present(
            _number("memory.weights", "memory", "Weights per GPU", design, "memory.weights_gb_per_gpu", EXACT, mistake, why),
            _number("memory.kv", "memory", "KV cache per GPU", design, "memory.kv_gb_per_gpu", DEMAND, mistake, why),
            _number(
                "memory.sequences",
                "memory",
                "Sequences one replica holds",
                design,
                "memory.max_sequences_per_replica",
                SIZING,
                mistake,
                why,
            ),
        ),
    )


def _capacity(design: Design) -> Step:
    c = design.capacity
    mistake = "Reading only the weights each decode step and forgetting the whole batch's KV, or leaving out the efficiency factors."
    why = (
        "The decode step is the floor of the ITL and sets decode capacity; prefill capacity sets how many prompts a second the fleet takes."
    )
    ideal = Basis(
        name="the ideal step (bytes / bandwidth)",
        value=c.decode_step_ideal_ms,
        figure="capacity.decode_step_ideal_ms",
        arithmetic=c.arithmetic.get("decode_step_ideal_ms", ""),
    )
    return Step(
        key="capacity",
        title="Decode and prefill capacity",
        method="Bytes per decode step over bandwidth; FLOPs per prompt token over compute.",
        questions=_present(
            _number(
                "capacity.decode_step",
                "capacity",
                "Decode step at the peak batch",
                design,
                "capacity.decode_step_ms",
                MODEL,
                mistake,
                why,
                more=(ideal,),
            ),
            _number(
                "capacity.decode_tokens",
                "capacity",
                "Decode capacity, whole fleet",
                design,
                "capacity.decode_tokens_per_s",
                SIZING,
                mistake,
                why,
            ),
            _number(
                "capacity.prefill_tokens",
                "capacity",
                "Prefill capacity, whole fleet",
                design,
                "capacity.prefill_tokens_per_s",
                SIZING,
                mistake,
                why,
            ),
        ),
    )


_BINDING_OPTIONS = [
    Option(key="memory", text="Memory: the KV of the sequences in flight fills the GPUs"),
    Option(key="bandwidth", text="Bandwidth: each decode step reads the weights and the batch's KV from HBM"),
    Option(key="compute", text="Compute: the prompts' prefill FLOPs take the most GPU time"),
]


def _utilization(design: Design) -> Step:
    c = design.capacity
    no_cache = Basis(
        name="without prefix caching",
        value=c.utilization_no_prefix_cache * 100,
        figure="capacity.utilization_no_prefix_cache",
        arithmetic=c.arithmetic.get("utilization_no_prefix_cache", ""),
    )
    mistake = "Checking prefill and decode capacity separately: they share the same GPUs, so their time shares add."
    why = "Utilization is the verdict on the budget: well under 100% leaves room for failures and growth; over it, something must change."
    binding = c.binding_constraint.value
    binding_nc = c.binding_constraint_no_prefix_cache.value
    return Step(
        key="utilization",
        title="Utilization and the binding resource",
        method="Add the prefill and decode time shares; name the resource that runs out first.",
        questions=_present(
            _number(
                "utilization.peak",
                "utilization",
                "Utilization at peak",
                design,
                "capacity.utilization",
                SIZING,
                mistake,
                why,
                more=(no_cache,),
            ),
            _choice(
                "utilization.binding",
                "utilization",
                "Which resource binds?",
                _BINDING_OPTIONS,
                list(dict.fromkeys([binding, binding_nc])),
                f"{binding} (with prefix caching); {binding_nc} without it",
                c.binding_reason,
                "Assuming memory binds because 70B is large: check the KV in use against the KV capacity first.",
                "The binding resource decides the lever: more HBM bandwidth, more FLOPs, or more memory.",
            ),
        ),
    )


def _seed_basis(step: str, value: float, field: str, work: str) -> Basis:
    """The worked designs' hand relation (operating_point.seed_relation) with the real or the ideal decode step."""
    return Basis(name=f"the hand relation, {step} step", value=value, figure=f"operating_point.seed_relation.{field}", arithmetic=work)


def _operating_point(design: Design) -> Step | None:
    op = design.operating_point
    seed = op.seed_relation
    more_in: tuple[Basis, ...] = ()
    more_tpot: tuple[Basis, ...] = ()
    if seed is not None:
        more_in = (
            _seed_basis("real", seed.in_flight, "in_flight", seed.arithmetic.get("in_flight", "")),
            _seed_basis("ideal", seed.in_flight_ideal, "in_flight_ideal", seed.arithmetic.get("in_flight", "")),
        )
        more_tpot = (
            _seed_basis("real", seed.tpot_ms, "tpot_ms", seed.arithmetic.get("tpot_ms", "")),
            _seed_basis("ideal", seed.tpot_ideal_ms, "tpot_ideal_ms", seed.arithmetic.get("tpot_ms", "")),
        )
    mistake = (
        "Using the TPOT target as the step time in Little's law: the real step is several times shorter, so in flight comes out too high."
    )
    why = "The operating point is what the engine really runs: it sets max-num-seqs, the KV in use and the headroom to the SLO."
    questions = _present(
        _number(
            "operating_point.in_flight",
            "operating_point",
            "Sequences in flight per replica",
            design,
            "operating_point.in_flight",
            MODEL,
            mistake,
            why,
            more=more_in,
        ),
        _number(
            "operating_point.tpot",
            "operating_point",
            "TPOT at the operating point",
            design,
            "operating_point.tpot_ms",
            MODEL,
            mistake,
            why,
            more=more_tpot,
        ),
    )
    if not questions:
        return None
    return Step(
        key="operating_point",
        title="The operating point",
        method="Little's law with the real step time: in flight = rate x time in the system.",
        questions=questions,
    )


def _tp_options(design: Design) -> list[Option]:
    """TP degrees to choose from, each with its consequence in words (no figure another step asks for)."""
    gpn, gpu_gb = design.brief.hardware.gpus_per_node, design.shape.gpu.memory_gb
    degrees = sorted({d for d in range(1, gpn + 1) if gpn % d == 0} | {2 * gpn, design.brief.deployment.tp})
    if design.shape.attention_groups > 1:  # EP with DP attention: TP splits the replica's GPUs into attention groups
        return [_attention_group_option(design, tp) for tp in degrees]
    weights_gb = design.memory.weights_gb_per_gpu * design.brief.deployment.tp
    options = []
    for tp in degrees:
        if weights_gb / tp >= gpu_gb:
            consequence = "the weights do not fit on the GPUs"
        elif tp > gpn:
            consequence = "spans nodes: every layer's all-reduce crosses the network"
        elif tp == gpn:
            consequence = f"fills one node ({design.shape.gpu.scale_up_domain}): the shortest step without leaving it"
        else:
            consequence = f"{gpn // tp} replicas per node: more replicas, each with a longer step and less room for KV"
        options.append(Option(key=f"tp{tp}", text=f"TP={tp}: {consequence}"))
    return options


def _attention_group_option(design: Design, tp: int) -> Option:
    """A TP degree in an EP replica with DP attention: the replica's GPUs stay (the experts spread over them), TP sets
    how many attention groups they form."""
    gpus, gpn = design.shape.gpus, design.brief.hardware.gpus_per_node
    if tp > gpn:
        consequence = "spans nodes: every layer's all-reduce crosses the network"
    elif gpus % tp:
        consequence = f"does not divide the {gpus} GPUs of the EP replica"
    elif tp == gpus:
        consequence = "one attention group: no DP attention, every GPU reads every sequence's KV heads in lockstep"
    else:
        consequence = (
            f"{gpus // tp} attention groups of {tp} GPU(s) in the {gpus}-GPU EP replica: each group holds its own sequences' KV"
            " and a copy of the attention weights"
        )
    return Option(key=f"tp{tp}", text=f"TP={tp}: {consequence}")


def _tp_answer(design: Design) -> str:
    why = next((f.why for f in design.config.flags if f.flag == "--tensor-parallel-size"), "")
    return f"TP={design.brief.deployment.tp}" + (f": {why}" if why else "")


def _unchunked_gap_words(design: Design) -> str:
    """The token gap an unchunked p95 prompt makes: its prefill and the decode step it rides in, against the ITL target
    (the prefill alone may sit under the target while the gap it makes does not)."""
    prefill_ms, step_ms = design.capacity.unchunked_prefill_p95_ms, design.operating_point.decode_step_ms
    gap_ms, target_ms = prefill_ms + step_ms, design.slo.itl_target_ms
    verdict = (
        "over it: every sequence decoding on that replica waits that long for its next token"
        if gap_ms > target_ms
        else "within it, so chunking here guards the longer prompts (up to max-model-len) and the p95 ITL's margin"
    )
    return (
        f"An unchunked p95 prompt's prefill takes {num(prefill_ms, 'ms')} of a replica; with the decode step it rides in"
        f" ({num(step_ms, 'ms')}) that token gap is {num(gap_ms, 'ms')} against the {num(target_ms, 'ms')} ITL target: {verdict}."
    )


def _architecture(design: Design) -> Step:
    dep, c = design.brief.deployment, design.capacity
    tp = dep.tp
    chunk_on = Option(
        key="on",
        text=f"On: an unchunked p95 prompt holds a replica {num(c.unchunked_prefill_p95_ms, 'ms')} and stalls every decode step behind it",
    )
    chunk_off = Option(key="off", text="Off: whole prompts prefill faster, and decode steps can wait for them")
    hit = design.brief.workload.prefix_hit_rate
    cache_on = Option(key="on", text=f"On: {pct(hit)} of prompt tokens repeat (history, system prompt), so prefill shrinks by that much")
    cache_off = Option(key="off", text="Off: prompts rarely share a prefix, so the cache only costs memory")
    return Step(
        key="architecture",
        title="Architecture and engine flags",
        method="Justify each choice from a constraint.",
        questions=(
            _choice(
                "architecture.tp",
                "architecture",
                f"Which tensor-parallel degree for each replica ({design.brief.hardware.gpus_per_node} GPUs a node)?",
                _tp_options(design),
                [f"tp{tp}"],
                _tp_answer(design),
                design.memory.arithmetic.get("weights_gb_per_gpu", ""),
                "Going past one node with TP (TP=16 or 64): the all-reduce then crosses the network every layer.",
                "TP sets the step time and the replicas: larger TP inside a node shortens the step, across nodes it stalls it.",
            ),
            _choice(
                "architecture.chunked_prefill",
                "architecture",
                "Chunked prefill: on or off?",
                [chunk_on, chunk_off],
                ["on" if dep.chunked_prefill else "off"],
                "on" if dep.chunked_prefill else "off",
                _unchunked_gap_words(design),
                "Leaving a long prompt's prefill in one step: every sequence decoding on that replica waits for it.",
                "The ITL target is about the worst gap between tokens, and one long prefill is that gap.",
            ),
            _choice(
                "architecture.prefix_caching",
                "architecture",
                "Prefix caching (with prefix-aware routing): on or off?",
                [cache_on, cache_off],
                ["on" if dep.prefix_caching else "off"],
                "on" if dep.prefix_caching else "off",
                c.arithmetic.get("prefill_fraction", ""),
                "Turning the cache on but routing at random: a conversation then hits its cached prefix on 1 replica in N.",
                "In chat the history is re-sent every turn: the cache is often the largest single win on prefill.",
            ),
        ),
    )


def _slo(design: Design) -> Step:
    judged = "slo.itl_p95_ms" if design.slo.itl_metric.value == "itl" else "slo.tpot_p95_ms"
    mistake = "Counting only the prefill in the TTFT: network, gateway, tokenization and the queue wait come first."
    why = "The budget shows which part of the latency is irreducible and which a design change can buy back."
    return Step(
        key="slo",
        title="TTFT and ITL budgets",
        method="Add the latency components; compare the p95s with the targets.",
        questions=_present(
            _number("slo.ttft_p95", "slo", "p95 TTFT", design, "slo.ttft_p95_ms", BUDGET, mistake, why),
            _number("slo.itl_p95", "slo", spec(judged).label, design, judged, BUDGET, mistake, why),
        ),
    )


def _failures(design: Design) -> Step:
    modes = design.failures
    options = [Option(key=m.scenario.value, text=f"{m.title}: {m.change}") for m in modes]
    binding = design.failure_summary.binding_scenario.value
    return Step(
        key="failures",
        title="The failure that binds",
        method="Stress the design: which failure hurts most?",
        questions=(
            _choice(
                "failures.binding",
                "failures",
                "Which failure mode binds first?",
                options,
                [binding],
                SCENARIO_TITLES[design.failure_summary.binding_scenario],
                design.failure_summary.binding_reason,
                "Putting both replicas, or the spare, on one node and calling it redundant; or sizing for the average day.",
                "The binding failure is the one to plan capacity and alerts for.",
            ),
        ),
    )


def _cost(design: Design) -> Step:
    mistake = "Dividing by peak tokens all day: the fleet is sized for the peak, but the day averages a fraction of it."
    why = "Cost per million tokens is what the business compares; its lever is usually the trough, not the GPU price."
    return Step(
        key="cost",
        title="Cost",
        method="GPUs x price; divide by the tokens served over the average day.",
        questions=_present(
            _number("cost.per_hour", "cost", "Cost per hour", design, "cost.usd_per_hour", EXACT, mistake, why),
            _number(
                "cost.per_million",
                "cost",
                "Cost per million output tokens",
                design,
                "cost.usd_per_million_output_tokens",
                SIZING,
                mistake,
                why,
            ),
        ),
    )


# Each failure scenario that tests an assumption of the design, and that assumption in words.
_DEPENDENCIES = {
    Scenario.revert_to_bf16: ("weights_quality", "The quantized weights' quality holds (no revert to BF16)"),
    Scenario.prefix_hit_rate_drops: ("prefix_hit_rate", "The prefix cache hit rate holds (prompts stay cache-friendly)"),
    Scenario.inputs_double: ("input_lengths", "Input lengths stay as briefed (no retrieval doubling them)"),
    Scenario.long_context_burst: ("long_context_share", "Long-context traffic stays a small share"),
}


def _assumption(design: Design, scenario: Scenario) -> str:
    """A tested assumption in words; the quantization's names the parts that run quantized (weights, KV cache or both)."""
    if scenario is not Scenario.revert_to_bf16:
        return _DEPENDENCIES[scenario][1]
    dep = design.brief.deployment
    parts = [name for name, p in (("weights", dep.weights.value), ("KV cache", dep.kv_cache.value)) if p != "bf16"]
    return f"Quality holds with the {' and '.join(parts)} quantized (no revert to BF16)" if parts else _DEPENDENCIES[scenario][1]


def _nearness(mode: FailureMode) -> str:
    """A failure row on the binding failure's yardstick (planner.failures.pressure), named."""
    share, of = (
        (mode.objective_share, "of the deadline")
        if mode.objective_share is not None
        else (mode.load_vs_capacity, "of a replica's SLO capacity")
    )
    return f"{format_unit(share, 'fraction')} {of}" if math.isfinite(share) else f"no steady state (past 100% {of})"


def _busiest(mode: FailureMode) -> float:
    return mode.utilization if math.isfinite(mode.utilization) else math.inf


def _dependency(design: Design) -> Step | None:
    """The assumption whose failure comes nearest the SLO (or the deadline), on the yardstick the binding failure is
    picked by (the binding failure itself when it tests an assumption); the one whose failure costs the most GPU time (the worked capstone's FP8) counts too, and the arithmetic
    gives both figures for every assumption, named, so the two answers can be compared with the Failures step's."""
    tested = [m for m in design.failures if m.scenario in _DEPENDENCIES and m.applicable]
    if not tested:
        return None
    binding = [m for m in tested if m.scenario is design.failure_summary.binding_scenario]
    nearest, busiest = (binding or [max(tested, key=pressure)])[0], max(tested, key=_busiest)
    right = list(dict.fromkeys(_DEPENDENCIES[m.scenario][0] for m in (nearest, busiest)))
    options = [Option(key=_DEPENDENCIES[m.scenario][0], text=_assumption(design, m.scenario)) for m in tested]
    options.append(Option(key="gateway_language", text="The gateway is written in a fast language"))
    target = "the deadline" if nearest.objective_share is not None else "the SLO"
    rows = "; ".join(f"{m.title}: {_nearness(m)}, {format_unit(m.utilization, 'fraction')} busy" for m in tested)
    if nearest is busiest:
        verdict = f"{nearest.title} comes nearest {target} and costs the most GPU time."
    else:
        verdict = (
            f"{nearest.title} comes nearest {target}, the yardstick the binding failure is picked by; {busiest.title} costs"
            " the most GPU time (utilization) yet leaves more room to the target: both answers count."
        )
    work = f"If each assumption fails, a general-pool replica's load against {target} and the fleet's utilization: {rows}. {verdict}"
    return Step(
        key="dependency",
        title="The critical dependency",
        method="Name the assumption the design stands on, and what breaks if it fails.",
        questions=(
            _choice(
                "dependency.critical",
                "dependency",
                "Which assumption is the design's critical dependency?",
                options,
                right,
                f"{_assumption(design, nearest.scenario)}: if it fails, {_nearness(nearest)}",
                work,
                "Leaving the dependency unstated: the design then fails by surprise when it breaks.",
                "Stating it tells the team what to validate before committing and what to alert on after.",
            ),
        ),
    )


def _measure(design: Design, critical: tuple[str, ...]) -> Step:
    matter = [
        Option(key="prefix_hit_rate", text="Prefix cache hit rate"),
        Option(key="running_batch", text="Average running batch per replica"),
        Option(key="itl_p95", text="p95 ITL"),
        Option(key="queue_wait_p95", text="p95 queue wait"),
        Option(key="cost_per_million", text="Cost per million tokens"),
    ]
    if "weights_quality" in critical:
        matter.append(Option(key="quality_evals", text="Quality evals of the quantized model against BF16"))
    distractors = [
        Option(key="nvidia_smi", text="GPU utilization as nvidia-smi reports it"),
        Option(key="http_200s", text="Count of HTTP 200 responses"),
        Option(key="disk_usage", text="Disk usage on the nodes"),
    ]
    options = sorted([*matter, *distractors], key=lambda o: o.text)
    return Step(
        key="measure",
        title="What to measure first",
        method="A design without a validation plan is a guess.",
        questions=(
            _choice(
                "measure.first",
                "measure",
                "What do you measure first in production? Pick every one that tests the design's assumptions.",
                options,
                [o.key for o in matter],
                "; ".join(o.text for o in matter),
                f"The plan assumes {pct(design.brief.workload.prefix_hit_rate)} prefix hits and {_running_batch_words(design)};"
                " the SLO is judged at p95.",
                "Watching nvidia-smi utilization: it reads near 100% whenever a kernel runs, whatever the batch.",
                "Each measurement checks one assumption the sizing used; the first to drift says which figure to redo.",
                several=True,
            ),
        ),
    )


def _running_batch_words(design: Design) -> str:
    """The running batch the answer's "average running batch per replica" is checked against: the operating point's
    (Little's law at the engine's pace), a disaggregated design's decode replica's."""
    dis = design.disaggregation
    if dis is not None:
        return f"a decode replica running {num(dis.decode_batch)} sequences at the peak (operating point)"
    return f"{num(design.operating_point.in_flight)} sequences running a replica at the peak (operating point)"


def _baseline_utilization(analysis: VariationAnalysis, label: str) -> tuple[float, ...]:
    """A variation's utilization is a question about a change: the baseline's utilization, with and without prefix
    caching (in %), are its unchanged answers."""
    if "utilization" not in label:
        return ()
    paths = ("capacity.utilization", "capacity.utilization_no_prefix_cache")
    return tuple(d.baseline * 100 for d in analysis.diff if d.figure in paths and math.isfinite(d.baseline))


def _what_it_changes(change: str) -> str:
    """An option's change without what it gives ('change nothing: the peak takes 44.4% of the fleet ...' -> 'change
    nothing'): the step asks for those figures, so its choices must not show them."""
    return change.split(": ", 1)[0]


def _variation(design: Design) -> Step | None:
    analysis = design.variation
    if analysis is None:
        return None
    questions: list[Question] = []
    asked = [(i, f) for i, f in enumerate(analysis.findings) if math.isfinite(f.value) and not f.arithmetic.startswith("assumed")]
    shares = [(i, f) for i, f in asked if f.unit == "fraction"]
    if len(shares) > 1:  # one figure on several bases (at the hit rate, without the cache, the seed's linear): one question
        first_index, first = shares[0]
        questions.append(
            Question(
                id=f"variation.finding{first_index}",
                step="variation",
                prompt="Utilization at peak" if "utilization" in first.label else first.label[:1].upper() + first.label[1:],
                kind=Kind.number,
                unit="%",
                figure=f"variation.findings.{first_index}.value",
                tolerance=MODEL,
                bases=tuple(
                    Basis(name=f.label, value=f.value * 100, figure=f"variation.findings.{i}.value", arithmetic=f.arithmetic)
                    for i, f in shares
                ),
                unchanged=_baseline_utilization(analysis, first.label),
                answer=format_unit(first.value, first.unit),
                arithmetic=first.arithmetic,
                mistake="Answering from the capstone's figures: work this brief's own numbers.",
                why=analysis.conclusion,
            )
        )
        asked = [(i, f) for i, f in asked if f.unit != "fraction"]
    for i, finding in asked:
        share = finding.unit == "fraction"
        questions.append(
            Question(
                id=f"variation.finding{i}",
                step="variation",
                prompt=finding.label[:1].upper() + finding.label[1:],
                kind=Kind.number,
                unit="%" if share else finding.unit,
                figure=f"variation.findings.{i}.value",
                tolerance=MODEL,
                bases=(
                    Basis(
                        name="the plan",
                        value=finding.value * (100 if share else 1),
                        figure=f"variation.findings.{i}.value",
                        arithmetic=finding.arithmetic,
                    ),
                ),
                unchanged=_baseline_utilization(analysis, finding.label) if share else (),
                answer=format_unit(finding.value, finding.unit),
                arithmetic=finding.arithmetic,
                mistake="Answering from the capstone's figures: work this brief's own numbers.",
                why=analysis.conclusion,
            )
        )
    if analysis.options:
        fits = [f"option{i}" for i, o in enumerate(analysis.options) if o.ok]
        questions.append(
            _choice(
                "variation.options",
                "variation",
                "Which options meet the SLO on their own? Pick every one (none, if none does).",
                [Option(key=f"option{i}", text=f"{o.name}: {_what_it_changes(o.change)}") for i, o in enumerate(analysis.options)],
                fits,
                ", ".join(o.name for o in analysis.options if o.ok) or "none on its own",
                " | ".join(f"{o.name}: {o.arithmetic}" for o in analysis.options),
                "Naming options without their arithmetic: each one's utilization and p95s decide it.",
                analysis.conclusion,
                several=True,
            )
        )
    return Step(key="variation", title=analysis.title, method=analysis.question, questions=tuple(questions))


# --- the follow-ups the worked designs list, derived from this brief -------------------------------------------


def _replanned(brief: Brief, changes: dict[str, Any]) -> Design | None:
    try:
        return plan(brief.with_changes(changes))
    except BriefError:  # InfeasibleDesign included: the follow-up has no figure to grade
        return None


def _follow_number(
    qid: str, prompt: str, design: Design, changes: dict[str, Any], figure: str, tolerance: float, mistake: str, why: str
) -> Question | None:
    other = _replanned(design.brief, changes)
    if other is None:
        return None
    more: tuple[Basis, ...] = ()
    seed = other.operating_point.seed_relation
    if figure == "operating_point.capacity_rate_per_s" and seed is not None:
        # The worked designs answer this follow-up with their hand relation at the real step (the 10-QPS seed's "TP=2:
        # real capacity falls to about 5.8 QPS"); its ideal step is a bound no replica runs at, not an answer.
        more = (_seed_basis("real", seed.capacity_rate_per_s, "capacity_rate_per_s", seed.arithmetic.get("capacity_rate_per_s", "")),)
    return _number(qid, "followups", prompt, design, figure, tolerance, mistake, why, more=more, overrides=changes, source=other)


def _half_budget(design: Design) -> Question | None:
    nodes = design.brief.hardware.nodes
    if nodes < 2:
        return None
    half = nodes // 2
    other = _replanned(design.brief, {"hardware.nodes": half})
    if other is None:
        return None
    gpus = half * design.brief.hardware.gpus_per_node
    linear = Basis(
        name="without prefix caching",
        value=other.capacity.utilization_no_prefix_cache * 100,
        figure="capacity.utilization_no_prefix_cache",
        arithmetic=other.capacity.arithmetic.get("utilization_no_prefix_cache", ""),
    )
    return _number(
        "followups.half_budget",
        "followups",
        f"The budget is halved to {gpus} GPUs ({half} node{'' if half == 1 else 's'}): utilization at peak?",
        design,
        "capacity.utilization",
        SIZING,
        "Halving the nodes and doubling the utilization exactly: the batch per node doubles, so the weights are read once for more tokens.",
        "Half the budget shows whether the design has slack or needs a lever: INT4, shorter context, a tiered SLO.",
        more=(linear,),
        overrides={"hardware.nodes": half},
        source=other,
    )


def _half_tp(design: Design) -> Question | None:
    tp = design.brief.deployment.tp
    if tp < 2:
        return None
    return _follow_number(
        "followups.half_tp",
        f"Could TP={tp // 2} work? One replica's capacity under the SLO",
        design,
        {"deployment.tp": tp // 2},
        "operating_point.capacity_rate_per_s",
        MODEL,
        "Checking only that the weights fit: half the GPUs also halve the prefill FLOPs, and prefill may bind.",
        "Smaller TP gives more replicas from the same GPUs, but each one is slower and may no longer meet the SLO.",
    )


def _longer_outputs(design: Design) -> Question | None:
    w = design.brief.workload
    mean = w.output_tokens_mean
    longer = 1000.0 if mean < 1000 else 2 * mean
    changes: dict[str, Any] = {"workload.output_tokens_mean": longer}
    if w.output_tokens_p95 < longer:  # the p95 cannot sit under the mean: it grows with it
        changes["workload.output_tokens_p95"] = longer * w.output_tokens_p95 / mean
    return _follow_number(
        "followups.longer_outputs",
        f"Outputs grow to {num(longer)} tokens: one replica's capacity under the SLO",
        design,
        changes,
        "operating_point.capacity_rate_per_s",
        MODEL,
        "Adding replicas before recomputing: decode work and time in the system grow with the output, and so does the KV in use.",
        "Longer outputs move the load from prefill to decode: the binding resource can change.",
    )


def _levers_ranked(design: Design) -> list[Lever]:
    """The Cost page's levers, the largest first: the lowest $ per M output tokens (a lever without a figure last)."""
    levers = design.cost.levers
    return sorted(
        levers, key=lambda lever: lever.usd_per_million_output_tokens if math.isfinite(lever.usd_per_million_output_tokens) else math.inf
    )


_LEVER_WORTH = 0.10  # a lever that lowers $ per M output tokens by at least this share is one the answer names


def _lever_saving(design: Design, name: str) -> float:
    """The share of $ per M output tokens the Cost page's lever whose name starts with `name` saves (0: none)."""
    now = design.cost.usd_per_million_output_tokens
    lever = next((lever for lever in design.cost.levers if lever.name.startswith(name)), None)
    if lever is None or not (math.isfinite(lever.usd_per_million_output_tokens) and now > 0):
        return 0.0
    return max(1 - lever.usd_per_million_output_tokens / now, 0.0)


def _levers_words(ranked: list[Lever]) -> str:
    """Why the answer ranks as it does: the levers with the Cost page's figures, the largest first."""
    shown = "; ".join(f"{lever.name} {usd(lever.usd_per_million_output_tokens)} per M ({lever.change})" for lever in ranked)
    return f"Once the peak design is fixed, the cost levers, largest first (the Cost page's figures): {shown}."


def _followups(design: Design) -> Step:
    cost = design.cost
    job = design.objective is not None  # judged on its deadline: the idle time is after the work, not a daily trough
    why_cost = [
        Option(
            key="sized_for_peak",
            text="The fleet finishes before its deadline and idles the rest: fill that time with more jobs"
            if job
            else "The fleet is sized for the peak and the day averages a fraction of it: fill the trough with batch work",
        ),
        Option(key="headroom", text="The fleet holds more nodes than the SLO needs at the peak: fewer or busier replicas"),
        Option(key="gpu_price", text="The fleet is busy all day: the price per GPU-hour is the lever left"),
        Option(key="model_too_big", text="The model is too big for chat"),
    ]
    ranked = _levers_ranked(design)
    lever_of = {"sized_for_peak": "fill the trough", "headroom": "smaller fleet"}  # each option's lever on the Cost page
    saving = {key: _lever_saving(design, name) for key, name in lever_of.items()}
    holding = [key for key in lever_of if saving[key] >= _LEVER_WORTH]
    cost_right = sorted(holding, key=lambda key: -saving[key]) or ["gpu_price"]  # the larger lever first, as the Cost page has it
    questions = _present(
        _half_budget(design),
        _half_tp(design),
        _longer_outputs(design),
        _choice(
            "followups.why_chunked",
            "followups",
            "Why chunked prefill?",
            [
                Option(key="protect_itl", text="A long prompt's prefill otherwise fills a whole step and stalls everyone's decode"),
                Option(key="save_memory", text="It halves the KV cache's memory"),
                Option(key="faster_prefill", text="It makes prefill itself faster"),
            ],
            ["protect_itl"],
            "It keeps a long prompt from stalling everyone's decode steps",
            _unchunked_gap_words(design),
            "Thinking chunking speeds prefill up: it spreads the same work over steps.",
            "The ITL is judged on the worst gaps, and an unchunked prefill is one.",
        ),
        _choice(
            "followups.why_cost",
            "followups",
            "What drives the cost per million output tokens of this fleet, and what lowers it?",
            why_cost,
            cost_right,
            next(o.text for o in why_cost if o.key == cost_right[0]),
            f"{cost.arithmetic.get('usd_per_million_output_tokens', '')}; the day averages {pct(design.brief.cost.average_duty)} of the peak;"
            f" a general-pool replica runs at {pct(design.operating_point.load_vs_capacity)} of its SLO capacity at the peak.",
            "Blaming the hardware price: the tokens per year are counted at the average duty, not the peak.",
            _levers_words(ranked),
        ),
    )
    return Step(
        key="followups", title="Follow-up questions", method="The interviewer's follow-ups, worked on this brief.", questions=questions
    )


def practice_steps(design: Design) -> tuple[Step, ...]:
    """Every step of the method for this design, in order; a step with nothing to ask (no variation) is left out."""
    dependency = _dependency(design)
    critical = dependency.questions[0].correct if dependency is not None else ()
    steps = (
        _clarify(design),
        _demand(design),
        _memory(design),
        _capacity(design),
        _utilization(design),
        _operating_point(design),
        _architecture(design),
        _slo(design),
        _failures(design),
        _cost(design),
        dependency,
        _measure(design, critical),
        _variation(design),
        _followups(design),
    )
    return tuple(s for s in steps if s is not None and s.questions)


def public_steps(steps: tuple[Step, ...]) -> list[dict[str, Any]]:
    return [{"key": s.key, "title": s.title, "method": s.method, "questions": [q.public() for q in s.questions]} for s in steps]


def _questions(steps: tuple[Step, ...]) -> Iterator[Question]:
    for s in steps:
        yield from s.questions


# --- grading --------------------------------------------------------------------------------------------------


def answer_value(question: Question, raw: Any) -> float | str | tuple[str, ...]:
    """An answer as the question takes it; BriefError naming the question when it cannot be read."""
    if question.kind is Kind.number:
        if isinstance(raw, bool):
            raise BriefError(question.id, f"expected a number in {question.unit or 'its unit'}, got {raw!r}")
        try:
            value = float(str(raw).replace(",", "").replace("$", "").removesuffix("%").strip())
        except ValueError:
            raise BriefError(question.id, f"expected a number in {question.unit or 'its unit'}, got {str(raw)[:40]!r}") from None
        if not math.isfinite(value):
            raise BriefError(question.id, "expected a finite number")
        return value
    keys = {o.key for o in question.options}
    picked = tuple(raw) if isinstance(raw, (list, tuple)) else (str(raw),)
    if question.kind is Kind.choice and len(picked) != 1:
        raise BriefError(question.id, "a choice takes one option key")
    unknown = [str(p) for p in picked if str(p) not in keys]
    if unknown:
        raise BriefError(question.id, f"unknown option {unknown[0][:40]!r}; options: {', '.join(sorted(keys))}")
    return picked[0] if question.kind is Kind.choice else tuple(str(p) for p in picked)


def _written(question: Question, value: float) -> str:
    if question.unit == "%":
        return f"{num(value)}%"
    if question.unit == "$":
        return f"${num(value)}"
    return num(value, question.unit)


def _relative_error(value: float, basis: Basis) -> float:
    return (value - basis.value) / abs(basis.value) if basis.value else (0.0 if value == 0 else math.inf)


def _grade_number(question: Question, value: float) -> tuple[bool, float, Basis | None, str]:
    """Right when within the tolerance of a basis and nearer it than to every unchanged figure (a question about a
    change); the note names the basis the answer was held against, and the plan's own figure beside another basis."""
    ranked = sorted(question.bases, key=lambda b: abs(_relative_error(value, b)))
    within = f"within {question.tolerance:.0%}"
    plan_basis = question.bases[0]
    for basis in ranked:
        if abs(_relative_error(value, basis)) > question.tolerance:
            break
        stale = [u for u in question.unchanged if abs(value - u) <= abs(value - basis.value)]
        if stale:
            return (
                False,
                0.0,
                None,
                f"that is the design's figure before the change ({_written(question, stale[0])}): the change moves"
                f" {plan_basis.name} to {_written(question, plan_basis.value)}",
            )
        if basis is plan_basis:
            return True, 1.0, basis, f"{within} of {_written(question, basis.value)}, {basis.name}"
        return (
            True,
            1.0,
            basis,
            f"{within} of {_written(question, basis.value)}, {basis.name} (a basis the worked designs use);"
            f" {plan_basis.name} gives {_written(question, plan_basis.value)} on the planner's own model",
        )
    error = _relative_error(value, plan_basis)  # a miss is held against the figure the question declares
    direction = "high" if error > 0 else "low"
    note = f"{error:+.0%} {direction} against {_written(question, plan_basis.value)}, {plan_basis.name}; {within} passes"
    before = min(question.unchanged, key=lambda u: abs(value - u), default=None)
    if before is not None and abs(value - before) <= question.tolerance * abs(before):
        note += f"; that is about the design's figure before the change, {_written(question, before)}"
    return False, 0.0, None, note


def _grade_choice(question: Question, picked: str) -> tuple[bool, float, str, str]:
    ok = picked in question.correct
    texts = {o.key: o.text for o in question.options}
    if ok:
        if picked == question.correct[0]:
            return True, 1.0, "the plan", "right"
        return True, 1.0, "another basis the worked designs use", f"right too; the planner puts first: {texts[question.correct[0]]}"
    return False, 0.0, "", f"the planner's answer: {texts.get(question.correct[0], question.answer)}"


def _grade_several(question: Question, picked: tuple[str, ...]) -> tuple[bool, float, str, str]:
    matter = set(question.correct)
    chosen = set(picked)
    hits, wrong = chosen & matter, chosen - matter
    if not matter:
        ok = not chosen
        return ok, 1.0 if ok else 0.0, "the plan" if ok else "", "right: none does" if ok else "none of them does on its own"
    points = max(0.0, (len(hits) - len(wrong)) / len(matter))
    missed = [o.text for o in question.options if o.key in matter - chosen]
    extra = [o.text for o in question.options if o.key in wrong]
    ok = points >= 0.5 and not wrong
    parts = [f"{len(hits)} of {len(matter)} that matter"]
    if extra:
        parts.append(f"distractors picked: {'; '.join(extra)}")
    if missed:
        parts.append(f"missed: {'; '.join(missed)}")
    return ok, points, "the plan" if ok else "", ", ".join(parts)


def grade_question(question: Question, raw: Any) -> Grade:
    """Grade one answer (raises BriefError when the answer cannot be read for this question)."""
    value = answer_value(question, raw)
    work = question.arithmetic
    beside = f"the planner's {question.answer}"
    if question.kind is Kind.number:
        assert isinstance(value, float)
        ok, points, matched, note = _grade_number(question, value)
        basis = matched.name if matched is not None else ""
        if matched is not None and matched is not question.bases[0]:
            beside = ""  # the note holds the answer against its basis and names the plan's figure as the plan's
            if matched.arithmetic and matched.arithmetic != work:
                work = f"{work}; {matched.name}: {matched.arithmetic}" if work else matched.arithmetic
        given = _written(question, value)
    elif question.kind is Kind.choice:
        assert isinstance(value, str)
        ok, points, basis, note = _grade_choice(question, value)
        given = next(o.text for o in question.options if o.key == value)
        beside = ""  # its note names the planner's answer
    else:
        assert isinstance(value, tuple)
        ok, points, basis, note = _grade_several(question, value)
        given = "; ".join(o.text for o in question.options if o.key in value) or "(none)"
        beside = ""  # its note lists what was missed
    return Grade(
        id=question.id,
        step=question.step,
        prompt=question.prompt,
        given=given,
        correct=ok,
        points=points,
        basis=basis,
        note=note,
        answer=question.answer,
        beside=beside,
        arithmetic=work,
        mistake=question.mistake,
        why=question.why,
    )


def grade(steps: tuple[Step, ...], answers: Mapping[str, Any]) -> Attempt:
    """Grade every answered question; an id that names no question is a BriefError (a typo must not pass silently)."""
    questions = {q.id: q for q in _questions(steps)}
    unknown = [key for key in answers if key not in questions]
    if unknown:
        raise BriefError(unknown[0][:60], "no such question in this practice (python -m planner practice BRIEF --json lists them)")
    grades = tuple(grade_question(q, answers[q.id]) for q in questions.values() if q.id in answers and answers[q.id] not in (None, ""))
    return Attempt(grades=grades, score=sum(g.points for g in grades), answered=len(grades), total=len(questions))


def summary_markdown(title: str, steps: tuple[Step, ...], attempt: Attempt) -> str:
    """The attempt scored by step, with each answer, the planner's, the arithmetic and the note, as Markdown."""
    lines = [f"# Interview practice: {title}", "", f"Score: {num(attempt.score)} of {attempt.total} ({attempt.answered} answered)", ""]
    lines += ["| step | answered | right | points |", "|---|---|---|---|"]
    for step, grades in attempt.by_step(steps):
        lines.append(
            f"| {step.title} | {len(grades)} of {len(step.questions)} | {sum(g.correct for g in grades)} | {num(sum(g.points for g in grades))} |"
        )
    for step, grades in attempt.by_step(steps):
        if not grades:
            continue
        lines += ["", f"## {step.title}", ""]
        for g in grades:
            mark = "right" if g.correct else "not yet"
            beside = f"; {g.beside}" if g.beside else ""
            lines.append(f"- **{g.prompt}**: {mark}. Yours: {g.given}{beside} ({g.note}).")
            if g.arithmetic:
                lines.append(f"  - Arithmetic: {g.arithmetic}")
            lines += [f"  - Usual mistake: {g.mistake}", f"  - Why it matters: {g.why}"]
    return "\n".join(lines) + "\n"
