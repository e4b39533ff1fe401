"""User text made safe to show: no terminal control sequences, no URL a renderer would turn into a link.

A brief's title, description, assumptions and names are anyone's text (a shared link, an uploaded file).
The terminal must not run their escape sequences, and a Markdown renderer with autolinks (GitHub's, the
browser's) must not make a live link of a URL in them.
"""

from __future__ import annotations

import re

__all__ = ["WORD_JOINER", "defang_urls", "terminal_text"]

# C0 controls but tab and newline, DEL, C1 controls, and the Unicode bidi controls that reorder what a line shows
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069]")
WORD_JOINER = "\u2060"  # invisible and unbreakable: a URL with one inside its scheme or its @ is no autolink
_AUTOLINK = re.compile(r"(?i)(?<=[a-z])(?=:/)|(?<=www)(?=\.)|(?=@)")


def terminal_text(text: str) -> str:
    """Text for a terminal: control characters (escape sequences, carriage returns, bidi overrides) removed."""
    return _CONTROL.sub("", text)


def defang_urls(text: str) -> str:
    """Break what a Markdown autolinker would turn into a link (`https://...`, `www.x.y`, `a@b.c`, `mailto:`), invisibly.

    A word joiner goes between a scheme and its `:/`, between `www` and its dot, and before every `@` (e-mail,
    `mailto:` and `xmpp:` links need one): the text reads the same, but no renderer sees a URL or an address in it.
    """
    return _AUTOLINK.sub(WORD_JOINER, terminal_text(text))
