"""Reading a small text file the user names (a brief, a config.json, a profile, a space file, a benchmark result).

One rule for all of them: a regular file (a device, a FIFO or a folder is refused before it is opened), at most a
stated size (read bounded, so a file that grows while it is read cannot exceed it), UTF-8; anything else is one
BriefError naming the file and the reason.
"""

from __future__ import annotations

from pathlib import Path

from planner.errors import BriefError

__all__ = ["read_text_file"]

_SHOWN_PATH_CHARS = 120  # a path in a message: long enough to recognise, never a wall of text


def read_text_file(path: Path, max_bytes: int, what: str) -> str:
    """The text of `path`, `what` naming the kind of file in messages (e.g. "a config.json")."""
    shown = str(path)[:_SHOWN_PATH_CHARS]
    try:
        if not path.is_file():
            raise BriefError(shown, f"no such file (or not a regular file): {what} expected")
        size = path.stat().st_size
        if size > max_bytes:
            raise BriefError(shown, f"{size:,} bytes; {what} is at most {max_bytes:,}")
        with path.open("rb") as f:
            raw = f.read(max_bytes + 1)
    except OSError as exc:  # a name too long, a permission, a vanished file
        raise BriefError(shown, f"cannot read {what}: {exc.strerror or type(exc).__name__}") from None
    if len(raw) > max_bytes:
        raise BriefError(shown, f"larger than {max_bytes:,} bytes; {what} is at most that")
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        raise BriefError(shown, f"{what} is not UTF-8 text (binary?)") from None
