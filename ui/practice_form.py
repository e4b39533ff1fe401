"""Practice mode: every page asks its steps of the method before it shows the planner's answers.

A sidebar switch (kept in the URL as practice=on) turns it on. Each page asks the steps it teaches (PAGE_STEPS) as a
form; until the candidate has answered every step up to the last one the page's figures depend on, the page body,
the verdict bar and the design document stay hidden. An answered step shows each answer graded, the planner's answer,
the arithmetic, the usual mistake and why the step matters (planner.practice computes all of it).

Answers are kept per brief: changing the brief (a control, a preset) shows that brief's own answers, none for a new
one, and going back to a brief brings its answers back. The sidebar scores the attempt and exports it as Markdown.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

import streamlit as st

from planner import Design
from planner.practice import Attempt, Kind, Question, Step, grade, practice_steps, summary_markdown
from ui import state
from ui.pages import PAGE_ICONS, PAGES
from ui.show import md

__all__ = ["PAGE_STEPS", "all_answered", "practice_gate", "practice_score", "practice_summary", "practice_toggle", "revealed"]

# page title -> (the steps it asks, the last step its figures depend on; None: every step)
PAGE_STEPS: dict[str, tuple[tuple[str, ...], str | None]] = {
    "Brief": (("clarify",), "operating_point"),
    "Capacity": (("demand", "memory", "capacity", "utilization", "operating_point"), "operating_point"),
    "Architecture": (("architecture",), "architecture"),
    "SLO budget": (("slo",), "slo"),
    "Failure modes": (("failures", "dependency", "measure"), "measure"),
    "Cost": (("cost",), "cost"),
    "Variations": (("variation", "followups"), None),
    "Search": ((), None),
    "Compare": ((), None),
}
_ANSWERS_KEY = "practice.answers"  # {brief key: {step key: {question id: answer}}}
_ERROR_KEY = "practice.error"
_TOGGLE_KEY = "practice.toggle"


def _brief_key() -> str:
    return json.dumps([state.current_preset(), state.current_overrides()], sort_keys=True)


def _widget_prefix(step: str) -> str:
    """Form widgets' keys carry the brief, so a form for another brief never shows this one's entries."""
    digest = hashlib.sha1(_brief_key().encode()).hexdigest()[:8]
    return f"practice.q.{digest}.{step}."


def _answers() -> dict[str, dict[str, Any]]:
    store: dict[str, dict[str, dict[str, Any]]] = st.session_state.setdefault(_ANSWERS_KEY, {})
    return store.setdefault(_brief_key(), {})


def _answered(step: str) -> bool:
    return step in _answers()


def _steps(design: Design) -> tuple[Step, ...]:
    return practice_steps(design)


_ORDER = [step for asks, _ in PAGE_STEPS.values() for step in asks]  # the method's order, page by page


def _needed(steps: tuple[Step, ...], through: str | None) -> list[Step]:
    """The steps a page's figures depend on: every step up to `through` in the method's order (all for None); a step
    this design has nothing to ask for (no finite figure) is simply absent."""
    if through is None:
        return list(steps)
    last = _ORDER.index(through)
    return [s for s in steps if s.key in _ORDER and _ORDER.index(s.key) <= last]


def revealed(design: Design, title: str) -> bool:
    """Whether the page may show its figures: practice mode is off, or every step they depend on is answered."""
    if not state.practice_on():
        return True
    return all(_answered(s.key) for s in _needed(_steps(design), PAGE_STEPS.get(title, ((), None))[1]))


def all_answered(design: Design) -> bool:
    return not state.practice_on() or all(_answered(s.key) for s in _steps(design))


# --- the sidebar switch and score ---------------------------------------------------------------------------


def _on_toggle() -> None:
    state.set_practice(bool(st.session_state[_TOGGLE_KEY]))


def practice_toggle() -> None:
    """The practice switch (its state lives in ui.state, so a page switch or a link keeps it)."""
    st.session_state[_TOGGLE_KEY] = state.practice_on()
    st.toggle(
        "Practice mode",
        key=_TOGGLE_KEY,
        on_change=_on_toggle,
        help="Work each step of the method before the pages show the planner's answers; your answers are graded with the arithmetic.",
    )


def practice_score(design: Design) -> None:
    """While practice mode is on: the score so far and its Markdown export."""
    if not state.practice_on():
        return
    steps = _steps(design)
    attempt = _attempt(steps)
    st.caption(f"Practice score: {attempt.score:.1f} of {attempt.total} ({attempt.answered} answered). Answers are kept per brief.")
    st.download_button(
        "Practice summary (Markdown)",
        summary_markdown(state.current_name().title, steps, attempt),
        file_name=f"practice-{state.current_name().file_stem}.md",
        mime="text/markdown",
        key="practice.download",
    )


def _attempt(steps: tuple[Step, ...]) -> Attempt:
    flat = {qid: value for answers in _answers().values() for qid, value in answers.items()}
    known = {q.id for s in steps for q in s.questions}
    return grade(steps, {qid: value for qid, value in flat.items() if qid in known})


# --- a step's form ------------------------------------------------------------------------------------------


def _field(question: Question, prefix: str) -> None:
    key = f"{prefix}{question.id}"
    if question.kind is Kind.number:
        unit = f" ({question.unit})" if question.unit else ""
        st.number_input(f"{question.prompt}{unit}", value=None, key=key, placeholder="your answer", format="%g")
    elif question.kind is Kind.choice:
        texts = {o.key: o.text for o in question.options}
        st.radio(question.prompt, list(texts), index=None, key=key, format_func=lambda k: texts[k])
    else:
        st.markdown(f"**{md(question.prompt)}**")
        for option in question.options:
            st.checkbox(option.text, key=f"{key}.{option.key}")


def _read(question: Question, prefix: str) -> Any:
    key = f"{prefix}{question.id}"
    if question.kind is Kind.several:
        picked = [o.key for o in question.options if st.session_state.get(f"{key}.{o.key}")]
        return picked or None
    return st.session_state.get(key)


def _submit(step: Step, prefix: str, skip_blanks: bool = False) -> None:
    """Grade the step once every question has an answer; with blanks (an Enter pressed in the first field submits the
    form too) keep the entries and ask for the rest, unless the candidate chose to skip the blanks."""
    answers = {q.id: value for q in step.questions if (value := _read(q, prefix)) is not None}
    if not answers:
        st.session_state[_ERROR_KEY] = (step.key, "Answer at least one question of this step first.")
        return
    blanks = len(step.questions) - len(answers)
    if blanks and not skip_blanks:
        left = "1 question is" if blanks == 1 else f"{blanks} questions are"
        st.session_state[_ERROR_KEY] = (
            step.key,
            f"{left} still blank; your answers are kept. Answer the rest, or press 'Skip the blanks' to grade what you"
            " have (a blank counts as skipped).",
        )
        return
    st.session_state.pop(_ERROR_KEY, None)
    _answers()[step.key] = answers


def _retry(step: str) -> None:
    _answers().pop(step, None)


def _form(step: Step) -> None:
    prefix = _widget_prefix(step.key)
    with st.form(f"practice.form.{step.key}", border=True):
        st.subheader(md(step.title))
        st.caption(md(step.method))
        for question in step.questions:
            _field(question, prefix)
        error = st.session_state.get(_ERROR_KEY)
        message: str | None = error[1] if error is not None and error[0] == step.key else None
        st.form_submit_button("Check my answers", key=f"practice.submit.{step.key}", on_click=_submit, args=(step, prefix))
        if message is not None and len(step.questions) > 1:  # offered once the candidate is told answers are missing
            st.form_submit_button("Skip the blanks", key=f"practice.skip.{step.key}", on_click=_submit, args=(step, prefix, True))
    if message is not None:
        st.warning(message)


def _feedback(step: Step) -> None:
    answers = _answers()[step.key]
    with st.container(border=True, key=f"practice.feedback.{step.key}"):
        st.subheader(md(step.title))
        attempt = grade((step,), {qid: v for qid, v in answers.items() if any(q.id == qid for q in step.questions)})
        by_id = {g.id: g for g in attempt.grades}
        right = sum(g.correct for g in attempt.grades)
        st.caption(f"{right} of {len(step.questions)} right; {attempt.score:.1f} points.")
        for question in step.questions:
            g = by_id.get(question.id)
            prompt = f"**{md(question.prompt)}**" + ("" if question.prompt.endswith(("?", ".")) else ":")
            if g is None:
                st.markdown(f":grey[:material/remove: skipped] {prompt} The planner's answer: {md(question.answer)}.")
            else:
                mark = ":green[:material/check_circle: right]" if g.correct else ":red[:material/cancel: not yet]"  # Streamlit's icon font
                beside = f"; {md(g.beside)}" if g.beside else ""  # empty where the note says what the answer was held against
                st.markdown(f"{mark} {prompt} Yours: {md(g.given)}{beside}. {md(g.note[:1].upper() + g.note[1:])}.")
            work = g.arithmetic if g is not None else question.arithmetic
            if work:
                st.caption(md(f"Arithmetic: {work}"))
        st.markdown(f"**The usual mistake:** {md(step.questions[0].mistake)}")
        st.markdown(f"**Why it matters:** {md(step.questions[0].why)}")
        st.button("Try this step again", key=f"practice.retry.{step.key}", on_click=_retry, args=(step.key,))


def _page_of(step: str) -> tuple[str, str]:
    """(file, title) of the page that asks `step`."""
    for path, title, _ in PAGES:
        if step in PAGE_STEPS.get(title, ((), None))[0]:
            return path, title
    return PAGES[0][0], PAGES[0][1]


def practice_gate(design: Design, title: str) -> bool:
    """In practice mode, ask this page's steps (or show their grades); True when the page may show its figures."""
    if not state.practice_on():
        return True
    steps = _steps(design)
    asks, _ = PAGE_STEPS.get(title, ((), None))
    st.info(
        "Practice mode: answer each step before the planner's figures appear. The verdict bar and the design document"
        " come back once every step is answered; switch practice mode off in the sidebar to see everything."
    )
    if title == "Brief" and design.brief.description:
        st.markdown(f"**The question:** {md(design.brief.description)}")
    for step in steps:
        if step.key in asks:
            (_feedback if _answered(step.key) else _form)(step)
    if title == "Variations":
        practice_summary(design)
    missing = [s for s in _needed(steps, PAGE_STEPS.get(title, ((), None))[1]) if not _answered(s.key)]
    if not missing:
        return True
    elsewhere = [s for s in missing if s.key not in asks]
    if elsewhere:
        st.markdown("This page's figures also depend on steps asked on other pages:")
        params = state.to_query_params(state.current_preset(), state.current_overrides()) | state.practice_params()
        for s in elsewhere:
            path, page = _page_of(s.key)
            st.page_link(path, label=f"{s.title} (on {page})", icon=PAGE_ICONS[page], query_params=params)
    return False


def practice_summary(design: Design) -> None:
    """The attempt scored by step (the Variations page, after the last step)."""
    if not state.practice_on():
        return
    steps = _steps(design)
    attempt = _attempt(steps)
    st.header("Your practice, by step")
    rows = [
        {
            "step": s.title,
            "answered": f"{len(g)} of {len(s.questions)}",
            "right": str(sum(x.correct for x in g)),
            "points": f"{sum(x.points for x in g):.1f}",
        }
        for s, g in attempt.by_step(steps)
    ]
    st.table(rows)
    st.caption(f"Score: {attempt.score:.1f} of {attempt.total}. The sidebar's button exports it as Markdown.")
