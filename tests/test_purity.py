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


# What `python -m planner plan` must not load (issue 17): the simulator and numba (its kernel, ~0.3 s of
# start-up), SciPy (~0.15-0.19 s for scipy.special alone; planner.numerics has its own incomplete gamma, and only
# the calibration's fit uses scipy.optimize), Streamlit (the app), the export layer (report/) and the calibration
# data (planner.calibration).
HEAVY = ("planner.simulator", "numba", "scipy", "streamlit", "report", "planner.calibration")


def _loaded_heavy(code: str) -> list[str]:
    """Run `code` in a fresh interpreter and list which HEAVY modules it left in sys.modules."""
    check = f"{code}\nimport sys\nprint(sorted(set(sys.modules) & {set(HEAVY)!r}), file=sys.stderr)"
    proc = subprocess.run([sys.executable, "-c", check], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    return proc.stderr.strip().splitlines()[-1:]


def test_import_planner_loads_no_simulator_kernel_app_or_export_layer():
    assert _loaded_heavy("import planner, planner.cli") == ["[]"]


def test_plan_command_loads_no_simulator_kernel_app_or_export_layer():
    code = "import contextlib, io\nfrom planner.cli import main\nwith contextlib.redirect_stdout(io.StringIO()):\n    assert main(['plan', 'capstone', '--json']) == 0"
    assert _loaded_heavy(code) == ["[]"]


def test_python_m_planner_plan_imports_no_scipy_numba_streamlit_or_report():
    """The command as a user runs it, a preset that walks the whole latency model (TTFT quantiles, prompt lengths)."""
    code = "import runpy, sys\nsys.argv = ['planner', 'plan', 'agent-platform', '--json']\ntry:\n    runpy.run_module('planner', run_name='__main__')\nexcept SystemExit as end:\n    assert not end.code, end.code"
    assert _loaded_heavy(code) == ["[]"]


@pytest.mark.parametrize(("command", "loaded"), [("simulate", ["planner.simulator"]), ("export", ["report"])])
def test_commands_load_what_they_need(command: str, loaded: list[str]):
    """The lazily registered commands load their own layer, and only theirs."""
    code = f"from planner.cli import _load_plugins\n_load_plugins({command!r})"
    assert _loaded_heavy(code) == [repr(loaded)]
