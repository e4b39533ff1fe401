"""Calibrating from the user's own runs (issue 12 item 5): `calibrate` writes a profile, a brief names it, the app
takes it as an upload. The result files are written to the tools' documented formats (tests/data/)."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import pytest

from planner import load_brief
from planner.brief import Efficiency
from planner.cli import main
from planner.errors import BriefError
from planner.loader import brief_from_text
from planner.profile import efficiency_from_profile_text
from ui.brief_files import read_profile

DATA = Path(__file__).parent / "data"


@pytest.fixture(scope="module")
def profile(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, object]]:
    out = tmp_path_factory.mktemp("profile") / "h100.toml"
    report = tmp_path_factory.mktemp("report") / "out.json"
    import contextlib
    import io

    buffer = io.StringIO()
    with contextlib.redirect_stdout(buffer):
        code = main(["calibrate", str(DATA / "vllm_bench_serve_result.json"), "--gpu", "h100-sxm", "--out", str(out), "--json"])
    assert code == 0
    report.write_text(buffer.getvalue())
    return out, json.loads(buffer.getvalue())


def test_calibrate_fits_the_runs_better_than_the_defaults(profile):
    out, result = profile
    assert result["measurements"] >= 10 and result["out"] == str(out)
    assert result["median_abs_error_fitted"] < result["median_abs_error_at_defaults"]
    written = tomllib.loads(out.read_text())["efficiency"]
    assert {k: written[k] for k in result["constants"]} == result["constants"]
    Efficiency.model_validate(written)  # a profile is a valid efficiency table
    assert out.read_text().startswith("# Efficiency profile")


def test_a_brief_names_the_profile_and_its_own_values_win(profile, tmp_path):
    out, result = profile
    capstone = (Path(__file__).parent.parent / "presets" / "capstone.toml").read_text()
    brief_file = tmp_path / "mine.toml"
    brief_file.write_text(f'efficiency_profile = "{out}"\n' + capstone)
    brief, stated = load_brief(str(brief_file)).efficiency, tomllib.loads(capstone)["efficiency"]
    for key in Efficiency.model_fields:  # the capstone's own values win; the profile gives the rest
        expected = stated[key] if key in stated else result["constants"].get(key, getattr(Efficiency(), key))
        assert str(getattr(brief, key)) == str(expected) or getattr(brief, key) == expected, key
    bare = tmp_path / "bare.toml"
    bare.write_text(f'efficiency_profile = "{out.name}"\n')
    (tmp_path / out.name).write_text(out.read_text())
    from_profile = load_brief(str(bare))
    for key, value in result["constants"].items():
        assert getattr(from_profile.efficiency, key) == value


def test_a_profile_path_is_refused_outside_a_brief_file():
    with pytest.raises(BriefError, match=r"efficiency_profile.*upload the profile"):
        brief_from_text('efficiency_profile = "/etc/passwd"\n', "toml", source="upload")


def test_missing_facts_and_bad_profiles_are_one_line_errors(capsys):
    assert main(["calibrate", str(DATA / "vllm_bench_serve_no_metadata.json")]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "--tp" in err
    with pytest.raises(BriefError, match=r"efficiency\.compute_fraction"):
        efficiency_from_profile_text("[efficiency]\ncompute_fraction = 7\n", "p.toml")
    with pytest.raises(BriefError, match=r"no \[efficiency\] table"):
        read_profile("p.toml", b"[other]\nx = 1\n")
    with pytest.raises(BriefError, match="not UTF-8"):
        read_profile("p.toml", b"\xff\xfe")
