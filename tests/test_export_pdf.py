"""The one-page PDF (issues 6 and 16): exactly one A4 page for every preset, with type a reader can read.

One browser prints every preset (PdfPrinter), so the module stays well under a minute. The page is read back
with poppler (Debian package poppler-utils, installed by ./run test as root), a reader independent of the
renderer: `pdfinfo` counts the pages, `pdftotext -bbox` gives every word's box. A word's box is as tall as its
font's ascent plus descent, a fixed multiple of the font size; the multiple is measured here on a calibration
page printed by the same browser in the document's fonts (regular, bold, monospace), so a box height reads as
a size in points. The body type must be at least 8 pt; only the footnote may be smaller (7 pt).
"""

from __future__ import annotations

import re
import shutil
import statistics
import subprocess
from dataclasses import dataclass
from html import unescape
from pathlib import Path

import pytest

from planner import load_brief, plan, preset_names
from report import PdfPrinter, PrintedPdf, build_document, render_html
from report.html import MIN_BODY_PT, MIN_FOOTNOTE_PT
from report.pdf import READABLE_SCALE
from tests.conftest import run_cli

pytestmark = [pytest.mark.slow, pytest.mark.e2e]

PRESETS = preset_names()
SIZE_TOLERANCE_PT = 0.05  # box heights are written to a millionth of a point; the fonts' ratios differ by less
_CALIBRATION_PT = 10.0
_CALIBRATION_HTML = f"""<!DOCTYPE html><html><head><meta charset="utf-8"><style>@page {{ size: A4; margin: 10mm; }}
p {{ margin: 0 0 4pt; font-size: {_CALIBRATION_PT}pt; }}</style></head><body>
<p style="font-family: 'DejaVu Sans'">Regular Calibration</p>
<p style="font-family: 'DejaVu Sans'; font-weight: bold">Bold Calibration</p>
<p style="font-family: 'DejaVu Sans Mono'">Monospace Calibration</p>
<p style="font-family: 'Liberation Sans'">Fallback Calibration</p></body></html>"""


@dataclass(frozen=True)
class Word:
    text: str
    height_pt: float


def _poppler(tool: str) -> str:
    path = shutil.which(tool)
    if path is None:
        pytest.fail(f"{tool} not found: install the Debian package poppler-utils (./run test does as root)")
    return path


def _pdfinfo(pdf: Path) -> dict[str, str]:
    out = subprocess.run([_poppler("pdfinfo"), str(pdf)], capture_output=True, text=True, check=True, timeout=60).stdout
    return {k.strip(): v.strip() for k, _, v in (line.partition(":") for line in out.splitlines())}


def _pdftext(pdf: Path) -> str:
    return subprocess.run([_poppler("pdftotext"), str(pdf), "-"], capture_output=True, text=True, check=True, timeout=60).stdout


def words(pdf: Path) -> list[Word]:
    """Every word on the page with its box's height (poppler's pdftotext -bbox)."""
    out = subprocess.run([_poppler("pdftotext"), "-bbox", str(pdf), "-"], capture_output=True, text=True, check=True, timeout=60).stdout
    boxes = re.findall(r'<word xMin="[\d.]+" yMin="([\d.]+)" xMax="[\d.]+" yMax="([\d.]+)">([^<]*)</word>', out)
    return [Word(text=unescape(text), height_pt=float(y1) - float(y0)) for y0, y1, text in boxes]


@pytest.fixture(scope="module")
def printer():
    with PdfPrinter() as shared:
        yield shared


@pytest.fixture(scope="module")
def box_per_pt(printer, tmp_path_factory) -> float:
    """A word box's height per point of font size, the largest over the document's fonts: dividing by it never
    reads a word larger than it is."""
    path = tmp_path_factory.mktemp("calibration") / "calibration.pdf"
    path.write_bytes(printer.print_document(_CALIBRATION_HTML).pdf)
    ratios = [w.height_pt / _CALIBRATION_PT for w in words(path)]
    assert len(ratios) == 8 and max(ratios) - min(ratios) < 0.1, ratios  # one ratio, near enough, for every font
    return max(ratios)


@pytest.fixture(scope="module")
def printed(printer, tmp_path_factory) -> dict[str, tuple[Path, PrintedPdf]]:
    """Every preset printed by one browser: name -> (pdf file, the print)."""
    folder = tmp_path_factory.mktemp("pdf")
    files = {}
    for name in PRESETS:
        printed = printer.print_document(render_html(plan(load_brief(name))))
        path = folder / f"{name}.pdf"
        path.write_bytes(printed.pdf)
        files[name] = (path, printed)
    return files


def _footnote_words() -> set[str]:
    html = render_html(plan(load_brief("capstone")))
    footer = re.search(r"<footer>(.*?)</footer>", html, flags=re.S)
    assert footer
    return set(unescape(footer.group(1)).split())


@pytest.mark.parametrize("name", PRESETS)
def test_pdf_is_one_a4_page(printed, name):
    path, _ = printed[name]
    info = _pdfinfo(path)
    assert info["Pages"] == "1"
    assert info["Page size"].startswith("594.96 x 841.92") and "(A4)" in info["Page size"]  # portrait


@pytest.mark.parametrize("name", PRESETS)
def test_pdf_body_type_is_at_least_8_pt(printed, box_per_pt, name):
    """Measured from the PDF: every word is at least 8 pt, but the footnote's, which are at least 7 pt; and the
    page was not shrunk below its readable scale to fit."""
    path, print_ = printed[name]
    assert print_.scale >= READABLE_SCALE
    sizes = [(w.text, w.height_pt / box_per_pt) for w in words(path)]
    assert len(sizes) > 300, "the page should carry the design"
    footnote = _footnote_words()
    small = [(text, round(size, 2)) for text, size in sizes if size < MIN_BODY_PT - SIZE_TOLERANCE_PT]
    body = [(text, size) for text, size in small if text not in footnote]
    assert not body, f"body words under {MIN_BODY_PT} pt: {body[:10]}"
    assert min(size for _, size in sizes) >= MIN_FOOTNOTE_PT - SIZE_TOLERANCE_PT
    assert statistics.median(size for _, size in sizes) >= MIN_BODY_PT - SIZE_TOLERANCE_PT


@pytest.mark.parametrize("name", PRESETS)
def test_pdf_carries_the_page_not_the_appendix(printed, name):
    """The PDF is text, not a picture: the title, the headline figures and every page section are on it; the
    appendix's arithmetic is not (the HTML and Markdown carry it)."""
    path, _ = printed[name]
    text = " ".join(_pdftext(path).split())
    design = plan(load_brief(name))
    doc = build_document(design)
    shown = {f.path: f.text for f in doc.figures}
    assert doc.title in text
    for key in ("capacity.utilization", "demand.request_rate_per_s", "slo.ttft_p95_ms", "cost.usd_per_million_output_tokens"):
        assert shown[key] in text, key
    for section in doc.sections:
        assert section.title in text, section.title
    for section in doc.appendix:
        assert section.title not in text, section.title
    for label in ("router", "API gateway", *(f"{p.name} pool" for p in design.architecture.pools)):  # the diagram is text too
        assert label in text


@pytest.mark.parametrize("name", PRESETS)
def test_pdf_carries_the_p95_ranges_unless_the_page_is_full(printed, name):
    """Issue 12 on the printed page: under the SLO table, where the real engine's p95s fall, in the app's legend
    (planner.uncertainty), at the body type the size test measures; on a page too full for it (it is the first part
    to leave the print) the appendix's waterfalls still draw it."""
    from report.document import DROP_RANGES, Lines

    path, print_ = printed[name]
    text = " ".join(_pdftext(path).split())
    design = plan(load_brief(name))
    slo = next(s for s in build_document(design).sections if s.key == "slo")
    ranges = [b for b in slo.blocks if isinstance(b, Lines) and b.drop == DROP_RANGES]
    assert len(ranges) == 1  # every preset has a bounded p95 to range
    ((label, line),) = ranges[0].items
    assert label == design.uncertainty.legend and " to " in line
    if DROP_RANGES in print_.dropped:
        assert label not in text
    else:
        assert f"{label}: {line}" in text
    if name in ("capstone", "qps200-chat", "rag"):  # roomy pages keep it
        assert DROP_RANGES not in print_.dropped


def test_cli_pdf(tmp_path: Path):
    out = tmp_path / "capstone.pdf"
    proc = run_cli("export", "capstone", "--set", "hardware.nodes=6", "--format", "pdf", "--out", str(out))
    assert proc.returncode == 0, proc.stderr
    assert out.read_bytes().startswith(b"%PDF")
    info = _pdfinfo(out)
    assert info["Pages"] == "1"
    assert info["Title"] == "Llama-3-70B for 10,000 users on 6 x 8 NVIDIA H100 SXM 80GB"  # the title follows the edit
    assert "64 H100" not in _pdftext(out)


def test_html_loads_nothing_in_a_browser():
    """Opened in Chromium, the HTML requests nothing: it is complete without a network."""
    from playwright.sync_api import sync_playwright

    from report.pdf import chromium_path

    requests: list[str] = []
    doc = build_document(plan(load_brief("capstone")))
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium_path(), args=["--no-sandbox"])
        page = browser.new_page()
        page.on("request", lambda r: requests.append(r.url))
        page.set_content(render_html(plan(load_brief("capstone"))), wait_until="load")
        assert page.locator("section").count() == len(doc.all_sections)
        browser.close()
    assert requests == []
