"""The one error the export layer raises: a document that cannot be produced on this machine."""

from __future__ import annotations

__all__ = ["ExportError"]


class ExportError(RuntimeError):
    """A tool the document needs is missing or failed (Graphviz for the diagram, Chromium for the PDF)."""
