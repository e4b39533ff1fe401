"""Practice mode (AppTest): every page hides the planner's answer figures until their step is answered, and shows
the grade, the arithmetic, the usual mistake and why the step matters once it is."""

from __future__ import annotations

import json
from typing import Any

import pytest
from streamlit.testing.v1 import AppTest

from planner import load_brief, plan
from planner.practice import Kind, practice_steps
from tests.apphelp import new_app, shown, visit
from ui.pages import PAGES

pytestmark = pytest.mark.app


def _rendered(at: AppTest) -> str:
    """Every element's protobuf text, main area and sidebar: whatever a reader could see, charts' specs included."""
    texts: list[str] = []

    def walk(node: Any) -> None:
        proto = getattr(node, "proto", None)
        if proto is not None:
            texts.append(str(proto))
        for child in getattr(node, "children", {}).values():
            walk(child)

    walk(at._tree)
    return "\n".join(texts)


def _answer_values(preset: str) -> dict[str, str]:
    """Each number question's formatted planner answer (the string the pages print), by question id."""
    steps = practice_steps(plan(load_brief(preset)))
    return {q.id: q.answer for s in steps for q in s.questions if q.kind is Kind.number}


def _leaks(text: str, answers: dict[str, str]) -> dict[str, str]:
    return {qid: value for qid, value in answers.items() if value in text}


@pytest.mark.parametrize("page", [path for path, _, _ in PAGES])
@pytest.mark.parametrize("preset", ["capstone", "qps10-tp4", "variation-g"])
def test_practice_mode_hides_every_answer_figure_on_every_page(preset: str, page: str) -> None:
    at = new_app({"practice": "on", "preset": preset})
    if page != "app.py":
        at = visit(at, page)
    text = _rendered(at)
    answers = _answer_values(preset)
    assert not _leaks(text, answers), _leaks(text, answers)
    assert not at.metric, "the verdict bar's figures give the answers away"
    off = new_app({"preset": preset})
    off = off if page == "app.py" else visit(off, page)  # the same page out of practice mode shows them
    assert _leaks(_rendered(off), answers) or page in ("pages/compare.py", "pages/search.py")


def test_answering_a_step_reveals_its_grade_arithmetic_and_mistake() -> None:
    at = visit(new_app({"practice": "on"}), "pages/capacity.py")
    form = "practice.q."
    utilization = next(n for n in at.number_input if n.key.endswith("utilization.peak"))
    assert utilization.key.startswith(form)
    utilization.set_value(51.4)  # the worked design's no-prefix-cache figure counts as right
    at.button(key="practice.submit.utilization").click().run()
    at.button(key="practice.skip.utilization").click().run()  # the binding question left blank on purpose
    assert not at.exception
    text = shown(" ".join(m.value for m in at.markdown))
    assert "right" in text and "without prefix caching" in text
    assert any("prefill 6.5% + decode 21.2% = 27.7%" in shown(c.value) for c in at.caption)
    assert "share the same GPUs" in text  # the usual mistake
    # the page's other steps are still unanswered: its figures stay hidden
    assert "8.71 ms" not in _rendered(at)


def test_practice_mode_survives_a_page_switch_and_lives_in_the_url() -> None:
    at = new_app()
    at.toggle(key="practice.toggle").set_value(True).run()
    assert at.query_params.get("practice") in ("on", ["on"])
    at = visit(at, "pages/cost.py")
    assert at.toggle(key="practice.toggle").value
    assert "$4.48" not in _rendered(at)


def test_every_step_answered_brings_the_pages_back() -> None:
    at = new_app({"practice": "on"})
    steps = practice_steps(plan(load_brief("capstone")))
    store = {
        step.key: {
            q.id: (q.correct[0] if q.kind is Kind.choice else list(q.correct) if q.kind is Kind.several else 1.0) for q in step.questions
        }
        for step in steps
    }
    at.session_state["practice.answers"] = {json.dumps(["capstone", {}], sort_keys=True): store}
    at = visit(at, "pages/capacity.py")
    assert at.metric  # the verdict bar is back
    assert "8.71 ms" in _rendered(at)
    at = visit(at, "pages/variations.py")
    assert any("Your practice, by step" in h.value for h in at.header)


def test_answers_are_kept_per_brief() -> None:
    at = visit(new_app({"practice": "on"}), "pages/capacity.py")
    next(n for n in at.number_input if n.key.endswith("utilization.peak")).set_value(27.7)
    at.button(key="practice.submit.utilization").click().run()
    at.button(key="practice.skip.utilization").click().run()
    assert not at.exception and not any(b.key == "practice.submit.utilization" for b in at.button)  # graded
    at.slider(key="sb.workload.duty_cycle").set_value(0.16).run()  # another brief: its own, empty, answers
    assert any(b.key == "practice.submit.utilization" for b in at.button)
    at.slider(key="sb.workload.duty_cycle").set_value(0.08).run()  # back: the capstone's answers come back
    assert not any(b.key == "practice.submit.utilization" for b in at.button)
    assert any(b.key == "practice.retry.utilization" for b in at.button)
    at.button(key="practice.retry.utilization").click().run()  # try the step again: its questions, no answers
    assert any(b.key == "practice.submit.utilization" for b in at.button)
    assert "27.7%" not in _rendered(at)


def test_a_submit_with_blank_answers_keeps_them_and_asks_before_counting_any_as_skipped() -> None:
    """The reviewer's finding: Enter in the first number field submits a Streamlit form, and every other question of the
    step was graded 'skipped'. A submit with blanks now grades nothing, keeps the entries and says what is missing;
    the blanks count as skipped only when the candidate presses 'Skip the blanks'."""
    at = visit(new_app({"practice": "on"}), "pages/capacity.py")
    field = next(n for n in at.number_input if n.key.endswith("demand.request_rate"))
    field.set_value(55.6)
    at.button(key="practice.submit.demand").click().run()  # what Enter in the first field does
    assert not at.exception
    assert any(b.key == "practice.submit.demand" for b in at.button), "the step is still asked, not graded"
    assert not any(b.key == "practice.retry.demand" for b in at.button)
    assert any("3 questions are still blank" in w.value for w in at.warning)
    assert next(n for n in at.number_input if n.key.endswith("demand.request_rate")).value == 55.6  # the answer is kept
    for qid, value in (("demand.generating", 800), ("demand.input_tokens", 66_700), ("demand.output_tokens", 19_400)):
        next(n for n in at.number_input if n.key.endswith(qid)).set_value(value)
    at.button(key="practice.submit.demand").click().run()
    text = shown(" ".join(m.value for m in at.markdown))
    assert any(b.key == "practice.retry.demand" for b in at.button) and "skipped" not in text
    assert text.count("right") >= 4 and not at.warning
