"""Renderers of a Design for people outside the app: the design document."""

from exports.markdown import render_markdown

__all__ = ["render_markdown"]
