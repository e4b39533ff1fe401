"""Malformed input to the brief loader and the CLI: every case exits 2 with one line naming the field or file.

The cases are generated from the Brief schema itself (every leaf field x every kind of bad value x
every way a value reaches the planner: a TOML file, a JSON file, a --set override), plus file-level
junk (broken TOML/JSON, binary, 10 MB, unknown presets) and hypothesis-generated text and bytes.
Most run in-process through `planner.cli.main` for speed; a sample runs through a real subprocess.
"""

from __future__ import annotations

import contextlib
import copy
import io
import json
import math
import os
import re
import types
import typing
from collections.abc import Iterator
from enum import Enum
from pathlib import Path
from typing import Any

import pytest
import tomli_w
from annotated_types import Ge, Gt, Le, Lt
from casecount import count
from conftest import run_cli
from crafted import DEEP, DEEP_OBJECT, HF_CONFIGS
from hypothesis import given
from hypothesis import strategies as st
from pydantic import BaseModel

from planner import Brief, BriefError, load_brief
from planner.cli import main
from planner.loader import MAX_BRIEF_BYTES, brief_from_text

pytestmark = pytest.mark.unit


# --- the schema's leaves ------------------------------------------------------------------------


def _leaf_type(annotation: Any) -> Any:
    """int | None -> int; a nested model stays a model."""
    if isinstance(annotation, types.UnionType) or typing.get_origin(annotation) is typing.Union:
        args = [a for a in typing.get_args(annotation) if a is not type(None)]
        return args[0] if len(args) == 1 else annotation
    return annotation


def _leaves(model: type[BaseModel], prefix: str = "") -> Iterator[tuple[str, Any, list[Any]]]:
    """(dotted path, type, constraints) of every scalar field, walking into nested sections."""
    for name, info in model.model_fields.items():
        kind = _leaf_type(info.annotation)
        path = f"{prefix}{name}"
        if isinstance(kind, type) and issubclass(kind, BaseModel):
            yield from _leaves(kind, f"{path}.")
        else:
            yield path, kind, list(info.metadata)


def _bounds(metadata: list[Any]) -> tuple[float | None, float | None]:
    low = next((float(m.ge if isinstance(m, Ge) else m.gt) for m in metadata if isinstance(m, Ge | Gt)), None)
    high = next((float(m.le if isinstance(m, Le) else m.lt) for m in metadata if isinstance(m, Le | Lt)), None)
    return low, high


def _bad_values(kind: Any, metadata: list[Any]) -> list[tuple[str, Any]]:
    """(label, value) pairs that the field must refuse."""
    structural: list[tuple[str, Any]] = [("list", [1, 2]), ("table", {"x": 1}), ("bool", True)]
    if kind in (int, float):
        low, high = _bounds(metadata)
        assert low is not None and high is not None, "every numeric brief field has a range"
        return [
            ("nan", math.nan),
            ("inf", math.inf),
            ("-inf", -math.inf),
            ("negative", -1 if low >= 0 else low - 1),
            ("below-range", low - 1e-3 if low > 0 else -1e-9),
            ("absurd", high * 1e6 + 7),
            ("text", "lots"),
            *structural,
        ]
    if isinstance(kind, type) and issubclass(kind, Enum):
        return [("unknown-choice", "fp4-ish"), ("number", 3), *structural]
    if kind is str:
        longest = next((m.max_length for m in metadata if hasattr(m, "max_length") and m.max_length), 10_000)
        return [("too-long", "x" * (longest + 1)), ("number", 3), *structural]
    if kind is bool:
        return [("text", "maybe"), ("number", 7), ("list", [1])]
    return structural  # tuples of text (assumptions)


def _set(data: dict[str, Any], path: str, value: Any) -> dict[str, Any]:
    """A deep copy of the brief data with one dotted path set (sections created as needed)."""
    out = copy.deepcopy(data)
    node = out
    *parents, leaf = path.split(".")
    for part in parents:
        if not isinstance(node.get(part), dict):
            node[part] = {}
        node = node[part]
    node[leaf] = value
    return out


CUSTOM_MODEL = {
    "name": "custom",
    "custom": {"layers": 32, "hidden_size": 4096, "attention_heads": 32, "kv_heads": 8, "head_dim": 128, "params": 8e9},
}


def _base(path: str) -> dict[str, Any]:
    """The capstone as data; with a custom model when the path is inside model.custom."""
    data: dict[str, Any] = load_brief("capstone").model_dump(mode="json")
    if path.startswith("model.custom"):
        data["model"] = copy.deepcopy(CUSTOM_MODEL)
    return data


CHANNELS = ("toml", "json", "set")


def _schema_cases() -> list[tuple[str, str, str, Any]]:
    """(channel, path, label, value): each field's bad values dealt round-robin over the three channels."""
    cases = [(path, label, value) for path, kind, meta in _leaves(Brief) for label, value in _bad_values(kind, meta)]
    return [(CHANNELS[i % len(CHANNELS)], path, label, value) for i, (path, label, value) in enumerate(cases)]


SCHEMA_CASES = _schema_cases()


def _drop_none(data: Any) -> Any:
    if isinstance(data, dict):
        return {k: _drop_none(v) for k, v in data.items() if v is not None}
    return data


def _toml_text(data: dict[str, Any]) -> str:
    return tomli_w.dumps(_drop_none(data))


def _json_text(data: dict[str, Any]) -> str:
    return json.dumps(data, allow_nan=True)  # NaN and Infinity on purpose


def _set_text(value: Any) -> str:
    """How a user would type the value after --set PATH=."""
    if isinstance(value, float) and not math.isfinite(value):
        return {math.inf: "inf", -math.inf: "-inf"}.get(value, "nan")
    return value if isinstance(value, str) else json.dumps(value)


# --- running the CLI in-process -----------------------------------------------------------------


def run_main(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    try:
        code = main(argv)
    except SystemExit as exc:  # argparse's own errors
        code = int(exc.code or 0)
    out, err = capsys.readouterr()
    return code, out, err


def assert_rejected(code: int, err: str, names: str | tuple[str, ...]) -> None:
    """Exit 2, exactly one stderr line, which names the field or file; never a traceback."""
    lines = err.splitlines()
    assert code == 2, f"exit {code}, stderr: {err!r}"
    assert len(lines) == 1, f"expected one line on stderr, got {lines!r}"
    assert "Traceback" not in err
    assert lines[0].startswith("error: "), lines[0]
    wanted = (names,) if isinstance(names, str) else names
    assert any(n in lines[0] for n in wanted), f"{lines[0]!r} does not name any of {wanted}"


@pytest.mark.parametrize(("channel", "path", "label", "value"), SCHEMA_CASES, ids=[f"{c}:{p}={lab}" for c, p, lab, _ in SCHEMA_CASES])
def test_bad_field_value_is_exit_2_naming_the_field(
    channel: str, path: str, label: str, value: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    if channel == "set":
        argv = ["plan", "capstone", "--set", f"{path}={_set_text(value)}"]
        if path.startswith("model.custom"):
            brief = tmp_path / "custom.json"
            brief.write_text(_json_text(_base(path)))
            argv[1] = str(brief)
    else:
        data = _set(_base(path), path, value)
        brief = tmp_path / f"brief.{channel}"
        brief.write_text(_toml_text(data) if channel == "toml" else _json_text(data))
        argv = ["plan", str(brief)]
    code, out, err = run_main(argv, capsys)
    count("fuzz: bad field values (in-process CLI)")
    assert_rejected(code, err, path)
    assert out == ""


UNKNOWN_KEYS = [
    "bogus",
    "hardware.bogus",
    "model.bogus",
    "deployment.gpu",
    "workload.qps",
    "slo.ttft_p99_ms",
    "cost.usd",
    "latency.x",
    "efficiency.mfu",
]


@pytest.mark.parametrize("path", UNKNOWN_KEYS)
@pytest.mark.parametrize("channel", ["toml", "json", "set"])
def test_unknown_key_is_exit_2_naming_it(channel: str, path: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    if channel == "set":
        argv = ["plan", "capstone", "--set", f"{path}=1"]
    else:
        data = _set(_base(path), path, 1)
        brief = tmp_path / f"brief.{channel}"
        brief.write_text(_toml_text(data) if channel == "toml" else _json_text(data))
        argv = ["plan", str(brief)]
    code, _, err = run_main(argv, capsys)
    count("fuzz: unknown keys (in-process CLI)")
    assert_rejected(code, err, path)
    assert "unknown field" in err


CATALOG_KEYS = [("model.name", v) for v in ("gpt-5", "llama-3-70B", "llama 3 70b", "", "x" * 81, "../capstone")] + [
    ("hardware.gpu", v) for v in ("h100", "H100-SXM", "tpu-v5", "", "x" * 41, "h100-sxm x")
]


@pytest.mark.parametrize(("path", "key"), CATALOG_KEYS)
def test_unknown_catalog_key_is_exit_2(path: str, key: str, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run_main(["plan", "capstone", "--json", "--set", f"{path}={key}"], capsys)
    count("fuzz: unknown catalog keys (in-process CLI)")
    assert_rejected(code, err, path)
    assert out == ""


# --- file-level junk ----------------------------------------------------------------------------

CAPSTONE_TOML = (Path(__file__).resolve().parent.parent / "presets" / "capstone.toml").read_text()

FILE_CASES: dict[str, bytes] = {
    "empty.json": b"",
    "broken.toml": b"[model\nname = 'x'",
    "broken2.toml": b"[hardware]\nnodes = = 3",
    "broken3.toml": b"[hardware]\nnodes = 8\n[hardware]\nnodes = 9\n",
    "unterminated.toml": b'title = "no end',
    "truncated.toml": CAPSTONE_TOML.encode()[: len(CAPSTONE_TOML) // 2],
    "broken.json": b'{"hardware": {"nodes": 8}',
    "trailing-comma.json": b'{"hardware": {"nodes": 8,}}',
    "single-quotes.json": b"{'hardware': {'nodes': 8}}",
    "list.json": b"[1, 2, 3]",
    "string.json": b'"capstone"',
    "number.json": b"42",
    "null.json": b"null",
    "nan-top.json": b"NaN",
    "deep.json": b"[" * 200_000 + b"]" * 200_000,
    "deep.toml": b"a = " + b"[" * 200_000 + b"]" * 200_000,
    "binary.toml": bytes(range(256)) * 40,
    "binary.json": b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 10,
    "nul.toml": b'title = "a\x00b"\n',
    "utf16.toml": CAPSTONE_TOML.encode("utf-16"),
    "latin1.toml": 'title = "caf\xe9"\n'.encode("latin-1"),
    "huge.toml": b"# padding\n" * 1_000_001,
    "huge.json": b'{"title": "' + b"x" * 10_000_000 + b'"}',
    "just-over.toml": b"#" * (MAX_BRIEF_BYTES + 1),
    "toml-as-json.json": CAPSTONE_TOML.encode(),
    "json-as-toml.toml": json.dumps(load_brief("capstone").model_dump(mode="json")).encode(),
    "huge-int.json": b'{"hardware": {"nodes": ' + b"9" * 5000 + b"}}",
    "huge-float.toml": b"[workload]\nduty_cycle = 1e400\n",
    "neg-zero-nodes.toml": b"[hardware]\nnodes = -0\n",
    "date.toml": b"[hardware]\nnodes = 1979-05-27\n",
    "array-of-tables.toml": b"[[hardware]]\nnodes = 8\n",
}


@pytest.mark.parametrize("name", sorted(FILE_CASES))
def test_malformed_file_is_exit_2_naming_the_file_or_field(name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / name
    path.write_bytes(FILE_CASES[name])
    code, out, err = run_main(["plan", str(path), "--json"], capsys)
    count("fuzz: malformed files (in-process CLI)")
    assert_rejected(code, err, (str(path), "hardware", "workload", "title", "brief"))
    assert out == ""


BAD_REFS = [
    "nosuch",
    "CAPSTONE",
    "capstone ",
    "variation-z",
    "capstone;ls",
    "../capstone",
    "capstone.toml",
    "missing.json",
    "/",
    ".",
    "..",
    "~",
    "dir/",
]


@pytest.mark.parametrize("ref", BAD_REFS)
def test_unknown_preset_or_missing_file_is_exit_2(ref: str, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run_main(["plan", ref], capsys)
    count("fuzz: unknown presets and paths (in-process CLI)")
    assert_rejected(code, err, (ref.strip() or "BRIEF", "BRIEF"))
    assert out == ""


BAD_ARGV = [
    [],
    ["bogus"],
    ["plan"],
    ["plan", ""],
    ["plan", "capstone", "--bogus"],
    ["plan", "capstone", "--set"],
    ["plan", "capstone", "--set", "nope"],
    ["plan", "capstone", "--set", "=3"],
    ["plan", "capstone", "--set", "hardware=3"],
    ["plan", "capstone", "--set", "hardware.nodes.x=3"],
    ["plan", "capstone", "--set", "a.b.c=3"],
    ["plan", "capstone", "--set", "__class__=3"],
    ["plan", "capstone", "--set", "model.__dict__=3"],
    ["plan", "capstone", "--set", "workload.users=null"],
    ["plan", "capstone", "--set", "model.name=custom"],
    ["plan", "capstone", "--set", "model.custom.layers=3"],
    ["plan", "capstone", "--set", "workload.input_tokens_p95=10"],
    ["plan", "capstone", "--set", "hardware.nodes=1e400"],
    ["plan", "capstone", "--set", "hardware.nodes=0x10"],
    ["plan", "capstone", "--set", "hardware.nodes=8 9"],
    ["presets", "--bogus"],
    ["catalog", "extra"],
    ["simulate", "capstone", "--rate", "-1"],
    ["simulate", "capstone", "--rate", "nan"],
    ["simulate", "capstone", "--rate", "0"],
    ["simulate", "capstone", "--requests", "0"],
    ["simulate", "capstone", "--requests", "1e9"],
    ["simulate", "capstone", "--requests", "99999999999"],
    ["simulate", "capstone", "--concurrency", "-1"],
    ["simulate", "capstone", "--input", "0"],
    ["simulate", "capstone", "--seed", "-1"],
    ["simulate", "--set", "hardware.gpu=tpu-v5"],
    ["simulate", "nosuch"],
    ["max-rate", "nosuch"],
    ["max-rate", "capstone", "--set", "deployment.tp=16"],
    ["export", "capstone", "--format", "docx", "--out", "x.docx"],
    ["export", "capstone", "--format", "md"],
    ["export", "capstone", "--format", "md", "--out", "/nonexistent/dir/design.md"],
    ["export", "capstone", "--format", "md", "--out", "/"],
    ["export", "capstone", "--format", "md", "--out", "/proc/design.md"],
]


@pytest.mark.parametrize("argv", BAD_ARGV, ids=[" ".join(a) or "(none)" for a in BAD_ARGV])
def test_bad_command_line_is_exit_2_one_line(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run_main(argv, capsys)
    count("fuzz: bad command lines (in-process CLI)")
    assert_rejected(code, err, ("error: ",))
    assert out == ""


# --- hypothesis: arbitrary text and bytes --------------------------------------------------------


def _containers(children: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=12), children, max_size=4)


JSON_VALUES = st.recursive(st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20), _containers, max_leaves=12)
SECTIONS = st.sampled_from(["model", "hardware", "deployment", "workload", "slo", "efficiency", "latency", "cost"])


@given(text=st.text(max_size=400), fmt=st.sampled_from(["toml", "json"]))
def test_arbitrary_text_is_a_brief_or_a_brief_error(text: str, fmt: str) -> None:
    count("fuzz: arbitrary text (hypothesis, loader)")
    try:
        brief_from_text(text, fmt, "upload")
    except BriefError as exc:
        assert exc.field and exc.reason
        assert str(exc) == f"{exc.field}: {exc.reason}"


@given(section=SECTIONS, key=st.text(min_size=1, max_size=24), value=JSON_VALUES, fmt=st.sampled_from(["toml", "json"]))
def test_mutated_capstone_is_a_brief_or_a_brief_error(section: str, key: str, value: Any, fmt: str) -> None:
    """One key of the capstone replaced (or added) with an arbitrary JSON value: valid, or one BriefError."""
    count("fuzz: mutated capstone (hypothesis, loader)")
    data = load_brief("capstone").model_dump(mode="json")
    data[section] = {**data[section], key: value}
    try:
        text = _toml_text(data) if fmt == "toml" else _json_text(data)
    except (TypeError, ValueError):  # tomli_w cannot write null inside arrays or mixed tables: nothing to test
        return
    try:
        brief_from_text(text, fmt, "upload")
    except BriefError as exc:
        assert exc.field.split(".")[0] in (section, "upload"), str(exc)


@given(blob=st.binary(min_size=1, max_size=2000), suffix=st.sampled_from([".toml", ".json", ".txt"]))
def test_arbitrary_bytes_file_is_exit_0_or_2(blob: bytes, suffix: str, tmp_path_factory: pytest.TempPathFactory) -> None:
    count("fuzz: arbitrary bytes files (hypothesis, in-process CLI)")
    path = tmp_path_factory.mktemp("blob") / f"brief{suffix}"
    path.write_bytes(blob)
    err = io.StringIO()
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err):
        code = main(["plan", str(path)])
    if code != 0:
        assert code == 2
        assert len(err.getvalue().splitlines()) == 1


# --- a sample through a real subprocess ---------------------------------------------------------


def _subprocess_sample() -> list[tuple[str, list[str], str]]:
    plain = [c for c in SCHEMA_CASES if not c[1].startswith("model.custom")]
    picks = plain[:: max(1, len(plain) // 6)][:6]
    cases = [(f"--set {p}={lab}", ["plan", "capstone", "--json", "--set", f"{p}={_set_text(v)}"], p) for _, p, lab, v in picks]
    cases += [
        ("unknown preset", ["plan", "nosuch", "--json"], "nosuch"),
        ("unknown gpu", ["plan", "capstone", "--set", "hardware.gpu=tpu-v5"], "hardware.gpu"),
        ("argparse", ["plan", "capstone", "--bogus"], "unrecognized"),
    ]
    return cases


@pytest.mark.parametrize(("label", "argv", "names"), _subprocess_sample(), ids=[c[0] for c in _subprocess_sample()])
def test_subprocess_sample_exit_2_one_line(label: str, argv: list[str], names: str) -> None:
    proc = run_cli(*argv)
    count("fuzz: real subprocess CLI runs")
    assert_rejected(proc.returncode, proc.stderr, names)
    assert proc.stdout == ""


@pytest.mark.parametrize("name", ["binary.toml", "huge.json", "broken.json"])
def test_subprocess_sample_files(name: str, tmp_path: Path) -> None:
    path = tmp_path / name
    path.write_bytes(FILE_CASES[name])
    proc = run_cli("plan", str(path), "--json")
    count("fuzz: real subprocess CLI runs")
    assert_rejected(proc.returncode, proc.stderr, str(path))
    assert proc.stdout == ""


@pytest.mark.timeout(30)
@pytest.mark.parametrize("kind", ["fifo", "dev-null", "directory"])
def test_a_brief_that_is_not_a_regular_file_is_refused_without_reading(
    kind: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A FIFO would block forever and /dev/zero would never end: only regular files are read (bounded)."""
    if kind == "fifo":
        path = tmp_path / "brief.toml"
        os.mkfifo(path)
    else:
        path = Path("/dev/null") if kind == "dev-null" else tmp_path
    code, out, err = run_main(["plan", str(path)], capsys)
    count("fuzz: special files (in-process CLI)")
    assert_rejected(code, err, str(path))
    assert out == ""


# --- crafted input on the command line (issue 17): one line naming the field, never a traceback ---------

CRAFTED_SETS = [
    ("workload.duty_cycle", DEEP),
    ("title", DEEP),
    ("title", DEEP_OBJECT),
    ("model.custom", DEEP),
    ("efficiency.compute_fraction", "1e-200"),
    ("efficiency.compute_fraction", "5e-324"),
    ("efficiency.bandwidth_fraction", "1e-300"),
    ("efficiency.attention_bandwidth_fraction", "1e-300"),
    ("model.name", "gpt-5"),
    ("hardware.gpu", "tpu-v5"),
    ("title", "y" * 100_000),
    ("x" * 300, "1"),
    ("model.hf_config", "/" + "a" * 300),
    ("model.hf_config", "/etc/passwd"),
    ("model.hf_config", "/dev/zero"),
    ("lora.rank", "1025"),
]


@pytest.mark.parametrize(("path", "raw"), CRAFTED_SETS, ids=[f"{p[:30]}={r[:16]}" for p, r in CRAFTED_SETS])
def test_crafted_set_is_exit_2_naming_the_field(path: str, raw: str, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run_main(["plan", "capstone", "--set", f"{path}={raw}"], capsys)
    count("fuzz: crafted --set values (in-process CLI)")
    assert_rejected(code, err, path[:60])
    assert out == ""


@pytest.mark.parametrize("ref", ["x" * 300, "a/" * 200 + "brief.toml", "presets/" + "x" * 300 + ".toml", "\x1b[2J"])
def test_an_over_long_or_odd_brief_name_is_exit_2(ref: str, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run_main(["plan", ref], capsys)
    count("fuzz: unknown presets and paths (in-process CLI)")
    assert_rejected(code, err, ("BRIEF", ref[:40].replace("\x1b", "")))
    assert "\x1b" not in err and out == ""


def _brief_naming(tmp_path: Path, hf_config: str) -> Path:
    brief = tmp_path / "brief.toml"
    brief.write_text(CAPSTONE_TOML.replace("[model]\n", f"[model]\nhf_config = {json.dumps(hf_config)}\n", 1))
    return brief


@pytest.mark.parametrize("name", sorted(HF_CONFIGS))
def test_a_brief_file_reads_its_config_json_relative_to_itself(name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The CLI keeps paths (relative to the brief file); every bad config.json is one line naming its field."""
    (tmp_path / "model").mkdir()
    (tmp_path / "model" / "config.json").write_bytes(HF_CONFIGS[name])
    code, out, err = run_main(["plan", str(_brief_naming(tmp_path, "model/config.json")), "--json"], capsys)
    count("fuzz: config.json files (in-process CLI)")
    if name == "good":
        assert code == 0 and json.loads(out)["model"]["key"] == "custom"
    else:
        assert_rejected(code, err, "model.hf_config")
        assert out == ""


def test_a_brief_files_over_long_config_path_is_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run_main(["plan", str(_brief_naming(tmp_path, "a" * 300 + "/config.json"))], capsys)
    assert_rejected(code, err, "model.hf_config")


def test_text_output_strips_terminal_control_characters(capsys: pytest.CaptureFixture[str]) -> None:
    title = "\x1b]0;pwned\x07\x1b[31mred\x1b[0m\rover\u202eevil"
    code, out, err = run_main(["plan", "capstone", "--set", f"title={title}"], capsys)
    assert code == 0, err
    assert "red" in out and "over" in out
    assert not re.search("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]", out)
    code, _, err = run_main(["plan", "\x1b[2Jnosuch"], capsys)
    assert code == 2 and "\x1b" not in err


def test_an_arithmetic_failure_names_the_field(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """Past the brief's ranges, an overflow in the method is exit 2 naming the field whose value causes it."""
    from planner import cli

    real_plan = cli.plan

    def fragile(brief: Brief) -> Any:
        if brief.efficiency.compute_fraction < 0.01:
            raise OverflowError("math range error")
        return real_plan(brief)

    monkeypatch.setattr(cli, "plan", fragile)
    code, out, err = run_main(["plan", "capstone", "--set", "efficiency.compute_fraction=0.002"], capsys)
    assert_rejected(code, err, "efficiency.compute_fraction")
    assert out == ""


def test_a_bug_is_one_line_and_exit_1(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    from planner import cli

    def broken(brief: Brief) -> Any:
        raise KeyError("a bug")

    monkeypatch.setattr(cli, "plan", broken)
    monkeypatch.delenv(cli.DEBUG_ENV, raising=False)
    code, _, err = run_main(["plan", "capstone"], capsys)
    assert code == 1 and len(err.splitlines()) == 1 and "Traceback" not in err and "internal error" in err
