"""The app uses Streamlit's public API only (issue 16): no private module, and no folder that switches navigation mode.

A folder named `pages/` next to app.py puts Streamlit in its older folder navigation until st.navigation first
runs (a page file run alone, an automatic page list); the app's pages live in app_pages/ instead, so app.py's
st.navigation is the only navigation and no private flag has to be reset.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from tests.conftest import ROOT
from ui.pages import PAGES

pytestmark = pytest.mark.unit

APP_CODE = [
    ROOT / "app.py",
    *sorted((ROOT / "app_pages").glob("*.py")),
    *sorted((ROOT / "ui").glob("*.py")),
    *sorted((ROOT / "report").glob("*.py")),
]


def _streamlit_imports(path: Path) -> list[str]:
    """Every module under `streamlit` that a file imports (`import streamlit.x`, `from streamlit.x import y`)."""
    names: list[str] = []
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            names += [alias.name for alias in node.names if alias.name.split(".")[0] == "streamlit"]
        elif isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == "streamlit":
            names.append(node.module)
    return names


@pytest.mark.parametrize("path", APP_CODE, ids=lambda p: str(p.relative_to(ROOT)))
def test_app_code_imports_only_the_public_streamlit_module(path: Path) -> None:
    assert set(_streamlit_imports(path)) <= {"streamlit"}


def test_the_check_sees_a_private_import(tmp_path: Path) -> None:
    sample = tmp_path / "sample.py"
    sample.write_text("import streamlit as st\nfrom streamlit.runtime.pages_manager import PagesManager\n")
    assert _streamlit_imports(sample) == ["streamlit", "streamlit.runtime.pages_manager"]


def test_no_pages_folder_beside_the_entry_point() -> None:
    assert not (ROOT / "pages").exists(), "a pages/ folder switches Streamlit to its folder navigation"
    assert [path for path, _, _ in PAGES] == [f"app_pages/{url}.py" for _, _, url in PAGES]
    for path, _, _ in PAGES:
        assert (ROOT / path).is_file(), path
