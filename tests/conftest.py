from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent


def run_cli(*args: str, check: bool = False) -> subprocess.CompletedProcess[str]:
    """Run `python -m planner ...` as a user would, from the repository root."""
    proc = subprocess.run([sys.executable, "-m", "planner", *args], cwd=ROOT, capture_output=True, text=True, timeout=120)
    if check and proc.returncode != 0:
        raise AssertionError(f"exit {proc.returncode}: {proc.stderr}")
    return proc


def cli_json(*args: str) -> dict[str, Any]:
    proc = run_cli(*args, "--json", check=True)
    return json.loads(proc.stdout)  # type: ignore[no-any-return]


@pytest.fixture(scope="session")
def root() -> Path:
    return ROOT
