"""The calibrated defaults (scripts/calibrate.py, docs/calibration.md): the report and the code agree.

The fit itself takes minutes, so CI does not re-run it: it checks that Efficiency's defaults are the
fitted values the committed report lists, and that re-simulating a few rows at those defaults gives
the predictions the report shows.
"""

from __future__ import annotations

import json
import sys

import pytest

from planner.brief import Efficiency

pytestmark = pytest.mark.unit


@pytest.fixture(scope="module")
def report(root):
    return json.loads((root / "docs" / "calibration.json").read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def calibrate(root):
    sys.path.insert(0, str(root))
    from scripts import calibrate

    return calibrate


def test_defaults_are_the_fitted_values(report):
    eff = Efficiency()
    for key, value in report["fitted"].items():
        assert getattr(eff, key) == value, key
    for key, value in report["fixed"].items():
        assert str(getattr(eff, key)) == str(value) or getattr(eff, key) == value, key


def test_every_csv_row_is_in_the_report(report, calibrate):
    ids = {int(row["id"]) for row in calibrate.read_rows()}
    assert {r["id"] for r in report["rows"]} == ids


@pytest.mark.parametrize("row_id", [14, 32, 35])
def test_report_rows_reproduce(report, calibrate, row_id):
    row = next(r for r in calibrate.read_rows() if int(r["id"]) == row_id)
    reported = next(r for r in report["rows"] if r["id"] == row_id)
    assert calibrate.predict(row) == pytest.approx(reported["predicted"], rel=1e-6)
    assert reported["error"] == pytest.approx(reported["predicted"] / float(row["value"]) - 1, rel=1e-9)


def test_calibrated_decode_and_prefill_land_near_the_measurements(calibrate):
    """Two physical anchors, not fitted rows alone: batch-1 decode on A100 (row 14) and 8B ITL on H100 (row 35), within
    30% (the worst held-out group median). One step overhead for every engine family costs the 8B row: +25% at the
    fitted 2.6 ms, where TensorRT-LLM's C++ runtime spends far less (docs/calibration.md)."""
    rows = {int(r["id"]): r for r in calibrate.read_rows()}
    for row_id in (14, 35):
        assert calibrate.predict(rows[row_id]) == pytest.approx(float(rows[row_id]["value"]), rel=0.30)
