"""The export layer: the one-page design document rendered from a planner Design.

Not part of `planner/` (which stays pure): the HTML calls Graphviz and the PDF drives Chromium, each bounded
by a timeout and failing with one ToolError line (report.tools).
The app's download buttons and `python -m planner export` both call these, so they give the same file.
"""

from report.document import Document, build_document
from report.errors import ExportError
from report.html import render_html
from report.markdown import render_markdown
from report.pdf import PdfError, PdfPrinter, PrintedPdf, pdf_page_count, render_pdf, shared_printer
from report.tools import ToolError

__all__ = [
    "Document",
    "ExportError",
    "PdfError",
    "PdfPrinter",
    "PrintedPdf",
    "ToolError",
    "build_document",
    "pdf_page_count",
    "render_html",
    "render_markdown",
    "render_pdf",
    "shared_printer",
]
