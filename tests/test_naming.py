"""A design's name follows the design as edited (issue 16): one function, planner.naming.design_name, names it
for the pages, the documents and the file names."""

from __future__ import annotations

import pytest

from planner import load_brief, preset_names
from planner.naming import design_name, facts_title, file_stem

pytestmark = pytest.mark.unit


@pytest.mark.parametrize("preset", preset_names())
def test_an_unedited_brief_keeps_its_own_words(preset: str) -> None:
    brief = load_brief(preset)
    for source in (None, brief, brief.model_copy()):
        name = design_name(brief, source)
        assert (name.title, name.description, name.edited) == (brief.title, brief.description, False)


def test_an_edit_to_the_facts_names_the_design_from_them() -> None:
    source = load_brief("capstone")
    name = design_name(source.with_changes({"hardware.nodes": 6}), source)
    assert name.edited
    assert name.title == "Llama-3-70B for 10,000 users on 6 x 8 NVIDIA H100 SXM 80GB"
    assert name.description == "Edited from the brief it started from: nodes 8 → 6."
    assert name.file_stem == "llama-3-70b-for-10-000-users-on-6-x-8-nvidia-h100-sxm-80gb"
    assert "64" not in name.title + name.description + name.file_stem


def test_an_edit_to_the_words_only_keeps_them() -> None:
    source = load_brief("capstone")
    name = design_name(source.with_changes({"title": "Ours", "description": "Our fleet"}), source)
    assert (name.title, name.description, name.edited) == ("Ours", "Our fleet", False)


def test_words_the_editor_rewrote_are_kept_with_the_facts_edit() -> None:
    source = load_brief("capstone")
    name = design_name(source.with_changes({"hardware.nodes": 6, "title": "Six nodes"}), source)
    assert (name.title, name.edited) == ("Six nodes", True)
    assert name.description.startswith("Edited from the brief it started from: nodes 8 → 6")


def test_many_changes_are_counted_not_listed() -> None:
    source = load_brief("capstone")
    changes = {
        "hardware.nodes": 6,
        "workload.duty_cycle": 0.1,
        "workload.prefix_hit_rate": 0.5,
        "deployment.kv_cache": "bf16",
        "deployment.weights": "bf16",
        "deployment.prefix_caching": False,
    }
    name = design_name(source.with_changes(changes), source)
    assert name.description.endswith("; and 2 more.")
    assert "kv cache fp8 → bf16" in name.description and "prefix caching on → off" in name.description


def test_a_rate_brief_and_a_custom_model_are_named_from_their_facts() -> None:
    rate = load_brief("qps10-tp4").with_changes({"workload.request_rate": 12.5})
    assert facts_title(rate) == "Llama-3-70B for 12.5 req/s on 2 x 4 NVIDIA H100 SXM 80GB"
    custom = load_brief("capstone").with_changes(
        {
            "model.name": "custom",
            "model.display_name": "Mine",
            "model.custom": {"layers": 32, "hidden_size": 4096, "attention_heads": 32, "kv_heads": 8, "head_dim": 128, "params": 8e9},
        }
    )
    assert facts_title(custom).startswith("Mine for 10,000 users on 8 x 8 ")


def test_file_stems_are_safe() -> None:
    assert file_stem("Capstone: Llama-3-70B for 10,000 chat users on 64 H100") == "capstone-llama-3-70b-for-10-000-chat-users-on-64-h100"
    assert file_stem("../../etc/passwd") == "etc-passwd"
    assert file_stem("***") == "design"
    assert len(file_stem("x" * 500)) == 60
