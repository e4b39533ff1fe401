"""The planner layer is pure: importing it pulls in no Streamlit (style.md)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.conftest import ROOT

pytestmark = pytest.mark.unit


def test_importing_planner_does_not_import_streamlit():
    code = "import sys, planner, planner.cli; assert 'streamlit' not in sys.modules, 'streamlit imported'; print('ok')"
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "ok"


def test_public_api_is_pinned():
    import planner

    assert {"Brief", "Design", "plan", "load_brief", "apply_overrides", "BriefError", "InfeasibleDesign"} <= set(planner.__all__)
    for name in planner.__all__:
        assert hasattr(planner, name), name
