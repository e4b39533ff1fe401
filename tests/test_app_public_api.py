"""The app uses Streamlit's public API only (issue 16): no private module anywhere in the project, and the pages in
Streamlit's documented multipage layout (app.py first, the others in pages/) with its own page list hidden.

Private means any module under `streamlit.` that is not documented API (`streamlit.runtime.*`, `streamlit.web.*`,
`streamlit.elements.*`, ...), any `_`-prefixed name taken from Streamlit, and a private module reached by name
(`importlib.import_module("streamlit.runtime...")`) or as an attribute (`st.runtime.scriptrunner`).
"""

from __future__ import annotations

import ast
import subprocess
import tomllib
from pathlib import Path

import pytest

from tests.conftest import ROOT
from ui.pages import PAGE_ICONS, PAGES

pytestmark = pytest.mark.unit

# Streamlit's documented modules: the API itself, the app testing API, the components API.
PUBLIC_MODULES = frozenset({"streamlit", "streamlit.testing.v1", "streamlit.components.v1"})
# The one exception, by file: benchmarks/live.py speaks Streamlit's websocket protocol as a browser tab does, which
# needs the message classes (streamlit.proto); it reads no state and changes nothing of Streamlit's.
WIRE_FORMAT = {"benchmarks/live.py": "streamlit.proto."}
_PRIVATE_ATTRIBUTES = ("runtime", "web", "elements", "commands", "proto")


def _project_python_files() -> list[Path]:
    listed = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard", "*.py"], cwd=ROOT, capture_output=True, text=True
    )
    assert listed.returncode == 0, listed.stderr
    return [ROOT / name for name in listed.stdout.split() if (ROOT / name).is_file()]


def _streamlit_name(dotted: str) -> bool:
    return dotted == "streamlit" or dotted.startswith("streamlit.")


def _imported_modules(node: ast.AST) -> list[str]:
    """Modules a node imports: `import x`, `from x import y`, `importlib.import_module("x")`, `__import__("x")`."""
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
        return [node.module]
    if isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str):
        return [node.args[0].value] if ast.unparse(node.func) in ("importlib.import_module", "import_module", "__import__") else []
    return []


def _private_names(node: ast.AST) -> list[str]:
    """`from streamlit import _x`, and `st._x` or `st.runtime` (a private module reached as an attribute)."""
    if isinstance(node, ast.ImportFrom) and node.module and _streamlit_name(node.module):
        return [f"from {node.module} import {a.name}" for a in node.names if a.name.startswith("_")]
    is_st_attribute = isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in ("st", "streamlit")
    if is_st_attribute and (node.attr.startswith("_") or node.attr in _PRIVATE_ATTRIBUTES):  # type: ignore[attr-defined]
        return [ast.unparse(node)]
    return []


def private_streamlit_uses(path: Path) -> list[str]:
    """Every use of a private Streamlit module or name in a file, as 'line: what'."""
    relative = path.relative_to(ROOT).as_posix() if path.is_relative_to(ROOT) else ""
    allowed_prefix = WIRE_FORMAT.get(relative)
    found: list[str] = []
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        line = getattr(node, "lineno", 0)
        found += [f"{line}: {name}" for name in _private_names(node)]
        for module in _imported_modules(node):
            public = module in PUBLIC_MODULES or (allowed_prefix is not None and module.startswith(allowed_prefix))
            if _streamlit_name(module) and not public:
                found.append(f"{line}: {module}")
    return found


def test_no_project_file_uses_a_private_streamlit_module() -> None:
    files = _project_python_files()
    assert ROOT / "app.py" in files and ROOT / "ui" / "sidebar.py" in files and ROOT / "tests" / "apphelp.py" in files
    uses = {str(path.relative_to(ROOT)): found for path in files if (found := private_streamlit_uses(path))}
    assert uses == {}, f"private Streamlit code used (public API only, see this test's docstring): {uses}"


@pytest.mark.parametrize(
    "source",
    [
        "from streamlit.runtime.pages_manager import PagesManager\n",
        "import streamlit.runtime.scriptrunner\n",
        "import streamlit.web.server as server\n",
        "from streamlit import _main\n",
        "import streamlit as st\nst.runtime.get_instance()\n",
        "import streamlit as st\nst._config.set_option('x', 1)\n",
        "import importlib\nimportlib.import_module('streamlit.runtime.pages_manager')\n",
        "from streamlit.proto.BackMsg_pb2 import BackMsg\n",  # allowed only in benchmarks/live.py
    ],
)
def test_the_check_sees_each_kind_of_private_use(tmp_path: Path, source: str) -> None:
    sample = tmp_path / "sample.py"
    sample.write_text(source)
    assert private_streamlit_uses(sample), source


def test_the_check_lets_the_public_api_through(tmp_path: Path) -> None:
    sample = tmp_path / "sample.py"
    sample.write_text(
        "import streamlit as st\nfrom streamlit.testing.v1 import AppTest\nimport streamlit.components.v1 as components\n"
        "st.page_link('app.py', label='Brief')\nst.session_state['x'] = 1\n"
    )
    assert private_streamlit_uses(sample) == []


def test_the_pages_are_streamlits_multipage_layout_with_its_page_list_hidden() -> None:
    assert PAGES[0] == ("app.py", "Brief", ""), "app.py is the first page, at the root URL"
    for path, title, url_path in PAGES[1:]:
        assert path == f"pages/{url_path}.py", "a page's URL path is its file's stem"
        assert (ROOT / path).is_file(), path
        assert PAGE_ICONS[title].startswith(":material/"), "icons from Streamlit's bundled font: no emoji to render as boxes"
    assert sorted(p.name for p in (ROOT / "pages").glob("*.py")) == sorted(Path(p).name for p, _, _ in PAGES[1:]), "every file is a page"
    client = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text())["client"]
    assert client["showSidebarNavigation"] is False, "the sidebar draws the page links (ui.sidebar)"
    assert client["toolbarMode"] == "minimal", "no Deploy button"
    app_code = [ROOT / "app.py", *(ROOT / "pages").glob("*.py"), *(ROOT / "ui").glob("*.py")]
    navigation = [str(p.relative_to(ROOT)) for p in app_code if "st.navigation(" in p.read_text()]
    assert navigation == [], "st.navigation would take the whole server process out of the pages/ layout"
