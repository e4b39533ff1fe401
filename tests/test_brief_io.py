"""Briefs: save and load in the presets' format, custom models by numbers or by a local config.json."""

from __future__ import annotations

import json
import pickle

import pytest
from pydantic import BaseModel

from planner import GPUS, MODELS, Brief, BriefError, apply_overrides, brief_to_json, brief_to_toml, load_brief, plan, preset_names
from planner.loader import brief_from_text

pytestmark = pytest.mark.unit


@pytest.mark.parametrize("name", preset_names())
def test_every_preset_round_trips_through_toml_and_json(name, tmp_path):
    brief = load_brief(name)
    assert brief.title and brief.description and brief.assumptions, "a preset states a title, a description and assumptions"
    for suffix, text in (("toml", brief_to_toml(brief)), ("json", brief_to_json(brief))):
        path = tmp_path / f"saved.{suffix}"
        path.write_text(text)
        assert load_brief(str(path)) == brief


def test_a_brief_is_frozen():
    brief = load_brief("capstone")
    with pytest.raises(Exception, match="frozen"):
        brief.hardware.nodes = 3  # type: ignore[misc]


def test_what_a_brief_works_out_once_follows_each_change():
    """A brief's hash and running context are worked out once: a changed copy works out its own (a copy that carried
    them would find the old brief's engines and capacities in every cache keyed on it)."""
    base = load_brief("capstone")
    before = (hash(base), base.running_context_tokens)
    longer = base.with_changes({"workload.output_tokens_mean": 500})
    fresh = Brief.model_validate(longer.model_dump(mode="json"))
    assert (hash(longer), longer.running_context_tokens) == (hash(fresh), fresh.running_context_tokens)
    assert longer.running_context_tokens != before[1] and hash(longer) != before[0]
    assert base == Brief.model_validate(base.model_dump(mode="json"))  # the kept hash is no field: equality ignores it


def test_a_pickled_brief_leaves_its_kept_hashes_behind():
    """The design search sends briefs to spawned workers, whose strings hash with another seed: a section's kept hash
    (of this process's string hashes) must not travel with it, or equal briefs there would hash apart."""
    base = load_brief("chat-disaggregated")
    hash(base)
    sent = pickle.loads(pickle.dumps(base))
    sections = [value for value in vars(sent).values() if isinstance(value, BaseModel)]
    kept = [name for section in sections for name in vars(section) if name.startswith("_")]
    assert len(sections) > 5
    assert kept == [] and sent == base and hash(sent) == hash(base)


def test_a_section_hashed_once_still_reads_as_its_fields_and_a_copy_hashes_anew():
    """A section's hash is kept with it (a changed brief hashes only the sections it changes), out of sight of what
    iterates it (`dict(section)`: the load-free question keys) and dropped by a copy that changes a field."""
    base = load_brief("capstone")
    workload = base.workload
    hash(base)
    assert dict(workload) == {name: getattr(workload, name) for name in type(workload).model_fields}
    doubled = workload.model_copy(update={"duty_cycle": workload.duty_cycle / 2})
    fresh = type(workload).model_validate(doubled.model_dump(mode="json"))
    assert hash(doubled) == hash(fresh) != hash(workload) and doubled == fresh != workload


def test_every_field_has_a_description_with_a_unit_or_range():
    for section in ("hardware", "deployment", "workload", "slo", "efficiency", "latency", "cost"):
        model = type(getattr(Brief(), section))
        for name, field in model.model_fields.items():
            assert field.description and len(field.description) > 10, f"{section}.{name}"


def test_catalogs_cite_a_source_and_know_moe():
    assert {"h100-sxm", "h200", "a100-80gb", "b200", "mi300x"} <= set(GPUS)
    assert {"llama-3-70b", "llama-3.1-70b", "llama-3.3-70b", "llama-2-70b", "llama-3.1-8b", "llama-3.1-405b"} <= set(MODELS)
    for entry in [*GPUS.values(), *MODELS.values()]:
        assert len(entry.source) > 20
    moe = [m for m in MODELS.values() if m.is_moe]
    assert moe and all(m.active_params < m.params for m in moe)


def test_moe_decode_reads_only_the_experts_it_hits():
    mixtral = MODELS["mixtral-8x7b"]
    assert mixtral.params_read_per_step(1) == pytest.approx(mixtral.active_params)
    assert mixtral.params_read_per_step(1000) == pytest.approx(mixtral.params, rel=1e-3)
    brief = apply_overrides(load_brief("capstone"), {"model.name": "mixtral-8x7b"})
    design = plan(brief)
    assert design.memory.weights_gb_per_gpu == pytest.approx(46.7 / 8, rel=1e-3)
    assert design.capacity.prefill_tokens_per_s_per_replica == pytest.approx(3.96e15 / (2 * 12.9e9), rel=0.01)


def test_custom_model_by_numbers_matches_the_catalog_entry():
    custom = {
        "name": "custom",
        "display_name": "my 70B",
        "custom": {"layers": 80, "hidden_size": 8192, "attention_heads": 64, "kv_heads": 8, "head_dim": 128, "params": 70.6e9},
    }
    base = load_brief("capstone")
    data = base.model_dump(mode="json")
    data["model"] = custom
    mine = plan(brief_from_text(json.dumps(data), "json"))
    ref = plan(base)
    assert mine.memory.kv_bytes_per_token_per_gpu == ref.memory.kv_bytes_per_token_per_gpu
    assert mine.capacity.utilization == pytest.approx(ref.capacity.utilization)
    assert mine.model_name == "my 70B"


def test_custom_model_from_a_local_hf_config(tmp_path):
    config = {
        "num_hidden_layers": 32,
        "hidden_size": 4096,
        "num_attention_heads": 32,
        "num_key_value_heads": 8,
        "intermediate_size": 14336,
        "vocab_size": 128256,
        "max_position_embeddings": 131072,
        "tie_word_embeddings": False,
    }
    folder = tmp_path / "Llama-3.1-8B"
    folder.mkdir()
    (folder / "config.json").write_text(json.dumps(config))
    brief_path = tmp_path / "brief.toml"
    text = brief_to_toml(load_brief("capstone")).replace(
        'name = "llama-3-70b"', 'name = "llama-3-70b"\nhf_config = "Llama-3.1-8B/config.json"'
    )
    brief_path.write_text(text)
    brief = load_brief(str(brief_path))
    assert brief.model.name == "custom" and brief.model.custom is not None
    assert brief.model.custom.params == pytest.approx(8.03e9, rel=0.01)  # the published 8.03e9
    assert brief.model.custom.kv_heads == 8


def test_missing_hf_config_names_the_file(tmp_path):
    with pytest.raises(BriefError, match=r"config\.json"):
        apply_overrides(load_brief("capstone"), {"model.hf_config": str(tmp_path / "nope" / "config.json")}, base_dir=tmp_path)
