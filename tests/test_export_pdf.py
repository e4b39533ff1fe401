"""The one-page PDF (issue 6): exactly one page for every preset, printed by Debian's chromium.

One browser prints every preset (PdfPrinter), so the module stays well under a minute. Pages are
counted by poppler's `pdfinfo` (Debian package poppler-utils, installed by ./run test as root), a
reader independent of the renderer's own check; `pdftotext` confirms the figures are real text.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from planner import load_brief, plan, preset_names
from report import PdfPrinter, build_document, render_html
from report.pdf import MIN_SCALE
from tests.conftest import run_cli

pytestmark = [pytest.mark.slow, pytest.mark.e2e]

PRESETS = preset_names()
READABLE_SCALE = 0.55  # below this the 7 pt print type would be under 4 pt: not a readable page


def _poppler(tool: str) -> str:
    path = shutil.which(tool)
    if path is None:
        pytest.fail(f"{tool} not found: install the Debian package poppler-utils (./run test does as root)")
    return path


def _pdfinfo(pdf: Path) -> dict[str, str]:
    out = subprocess.run([_poppler("pdfinfo"), str(pdf)], capture_output=True, text=True, check=True, timeout=60).stdout
    return {k.strip(): v.strip() for k, _, v in (line.partition(":") for line in out.splitlines())}


def _pdftext(pdf: Path) -> str:
    return subprocess.run([_poppler("pdftotext"), "-layout", str(pdf), "-"], capture_output=True, text=True, check=True, timeout=60).stdout


@pytest.fixture(scope="module")
def printed(tmp_path_factory) -> dict[str, tuple[Path, float]]:
    """Every preset printed by one browser: name -> (pdf file, print scale used)."""
    folder = tmp_path_factory.mktemp("pdf")
    files = {}
    with PdfPrinter() as printer:
        for name in PRESETS:
            printed = printer.print_document(render_html(plan(load_brief(name))))
            path = folder / f"{name}.pdf"
            path.write_bytes(printed.pdf)
            files[name] = (path, printed.scale)
    return files


@pytest.mark.parametrize("name", PRESETS)
def test_pdf_is_one_readable_page(printed, name):
    path, scale = printed[name]
    info = _pdfinfo(path)
    assert info["Pages"] == "1"
    assert "(A4)" in info["Page size"] and info["Page size"].startswith("841.9")  # landscape: 297 mm wide
    assert MIN_SCALE <= READABLE_SCALE <= scale


@pytest.mark.parametrize("name", PRESETS)
def test_pdf_text_carries_the_figures(printed, name):
    """The PDF is text, not a picture: the title and the headline figures can be found in it."""
    path, _ = printed[name]
    text = " ".join(_pdftext(path).split())
    design = plan(load_brief(name))
    shown = {f.path: f.text for f in build_document(design).figures}
    for key in ("capacity.utilization", "demand.request_rate_per_s", "memory.weights_gb_per_gpu", "operating_point.tpot_ms"):
        assert shown[key] in text, key
    for section in build_document(design).sections:  # every section is on the one page
        assert section.title in text, section.title


def test_cli_pdf(tmp_path: Path):
    out = tmp_path / "capstone.pdf"
    proc = run_cli("export", "capstone", "--format", "pdf", "--out", str(out))
    assert proc.returncode == 0, proc.stderr
    assert out.read_bytes().startswith(b"%PDF") and _pdfinfo(out)["Pages"] == "1"


def test_html_loads_nothing_in_a_browser():
    """Opened in Chromium, the HTML requests nothing: it is complete without a network."""
    from playwright.sync_api import sync_playwright

    from report.pdf import chromium_path

    requests: list[str] = []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium_path(), args=["--no-sandbox"])
        page = browser.new_page()
        page.on("request", lambda r: requests.append(r.url))
        page.set_content(render_html(plan(load_brief("capstone"))), wait_until="load")
        assert page.locator("section").count() == len(build_document(plan(load_brief("capstone"))).sections)
        browser.close()
    assert requests == []
