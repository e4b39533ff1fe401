"""The Markdown design document carries the figures and their arithmetic."""

from __future__ import annotations

import pytest

from exports import render_markdown
from planner import load_brief, plan, preset_names

pytestmark = pytest.mark.unit


def test_capstone_document_shows_figures_with_arithmetic() -> None:
    design = plan(load_brief("capstone"))
    text = render_markdown(design)
    assert text.startswith(f"# {design.brief.title}\n")
    assert "55.6 req/s" in text and design.demand.arithmetic["request_rate_per_s"] in text
    assert design.capacity.arithmetic["utilization"] in text
    assert "## Assumptions" in text


@pytest.mark.parametrize("preset", preset_names())
def test_every_preset_renders(preset: str) -> None:
    assert render_markdown(plan(load_brief(preset))).count("## ") >= 4
