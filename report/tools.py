"""The external programs the export layer runs: where each is, how long it may take, what its failure says.

Graphviz `dot` draws the diagram of the HTML (and so of the PDF); Chromium prints the PDF. Either may be
missing, broken or hung on a given machine, so every run of one is bounded by a timeout and every failure is
one `ToolError` line that names the program and the Debian package to install, e.g.
"chromium did not start (exit code 1): install Debian's chromium package (apt-get install chromium)".
The CLI prints that line (exit 2). The app shows it under its download buttons: every run of a tool records
how it ended (tool_failures()), and check_tools_in_background() runs each program's cheap version check (at
most once a minute, on a thread of its own) so a broken tool is named before anyone clicks.

Overrides, for operators and tests: `$DOT` and `$CHROMIUM` name the programs (else PATH; Chromium also
Debian's /usr/bin/chromium), `$EXPLORER_TOOL_TIMEOUT_S` bounds each run (default 20 s).
"""

from __future__ import annotations

import contextlib
import math
import os
import shutil
import signal
import subprocess
import threading
import time

from pydantic import BaseModel, ConfigDict, Field

from report.errors import ExportError

__all__ = [
    "CHROMIUM",
    "DEFAULT_TIMEOUT_S",
    "DOT",
    "TIMEOUT_ENV",
    "Tool",
    "ToolError",
    "check_tools_in_background",
    "executable",
    "note_outcome",
    "run_tool",
    "timeout_s",
    "tool_failures",
]

TIMEOUT_ENV = "EXPLORER_TOOL_TIMEOUT_S"
DEFAULT_TIMEOUT_S = 20.0  # a cold Chromium starts in about 1 s and dot draws in about 10 ms: 20 s is a hang
_STDERR_SHOWN_CHARS = 160  # of the tool's first error line, so the message stays one readable line
CHECK_INTERVAL_S = 60.0  # a tool's version check runs at most this often


class Tool(BaseModel):
    """An external program.

    Attributes:
        name: what the messages call it ("chromium", "Graphviz dot").
        command: its name on PATH.
        env: the environment variable that names its path instead.
        fallback_path: where Debian installs it, tried when PATH has no `command` (None: PATH only).
        package: the Debian package that provides it.
        check_args: arguments for a quick run that proves the program starts (its version).
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str = Field(description="What the messages call the program.")
    command: str = Field(description="The program's name on PATH.")
    env: str = Field(description="Environment variable naming the program's path instead.")
    fallback_path: str | None = Field(description="Where Debian installs the program, tried when PATH has none (None: PATH only).")
    package: str = Field(description="The Debian package that provides the program.")
    check_args: tuple[str, ...] = Field(description="Arguments for a quick run that proves the program starts (its version).")

    @property
    def install_hint(self) -> str:
        return f"install Debian's {self.package} package (apt-get install {self.package})"


DOT = Tool(name="Graphviz dot", command="dot", env="DOT", fallback_path=None, package="graphviz", check_args=("-V",))
CHROMIUM = Tool(
    name="chromium", command="chromium", env="CHROMIUM", fallback_path="/usr/bin/chromium", package="chromium", check_args=("--version",)
)


class ToolError(ExportError):
    """One line: the program, what went wrong, and what to install."""

    def __init__(self, tool: Tool, what: str) -> None:
        self.tool = tool
        self.what = " ".join(what.split())
        super().__init__(f"{tool.name} {self.what}: {tool.install_hint}")


def timeout_s() -> float:
    """Seconds any one run of a tool may take: $EXPLORER_TOOL_TIMEOUT_S when it is a positive number, else 20."""
    try:
        value = float(os.environ.get(TIMEOUT_ENV, DEFAULT_TIMEOUT_S))
    except ValueError:
        return DEFAULT_TIMEOUT_S
    return value if math.isfinite(value) and value > 0 else DEFAULT_TIMEOUT_S


def executable(tool: Tool) -> str:
    """The program's path ($<env>, else PATH, else Debian's path); ToolError when there is no such program."""
    path = os.environ.get(tool.env) or shutil.which(tool.command) or tool.fallback_path
    if path is None:
        raise ToolError(tool, f"not found on PATH (nor named by ${tool.env})")
    if not (os.path.isfile(path) and os.access(path, os.X_OK)):
        raise ToolError(tool, f"not found at {path}")
    return path


def _first_line(text: str) -> str:
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return lines[0][:_STDERR_SHOWN_CHARS] if lines else "no message"


def run_tool(tool: Tool, args: list[str], stdin_text: str, *, check: bool = False) -> str:
    """Run the program with `args`, `stdin_text` on its input; its output text. ToolError on a non-zero exit or
    when it takes longer than timeout_s(): then the program's whole process group is killed, so a wrapper
    script's children cannot keep the pipes open and the call returns on time. The outcome is recorded
    (`check`: this run is only a version check, see note_outcome)."""
    try:
        out = _run(tool, args, stdin_text)
    except ToolError as exc:
        note_outcome(tool, exc, check=check)
        raise
    note_outcome(tool, None, check=check)
    return out


def _run(tool: Tool, args: list[str], stdin_text: str) -> str:
    limit = timeout_s()
    try:
        proc = subprocess.Popen(
            [executable(tool), *args],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=True,  # its own process group, killed as one on a timeout
        )
    except OSError as exc:  # not an executable this machine can run
        raise ToolError(tool, f"could not be run ({exc.strerror or exc})") from None
    try:
        out, err = proc.communicate(stdin_text, timeout=limit)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):  # it ended at the last moment
            os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        raise ToolError(tool, f"did not finish within {limit:g} s") from None
    if proc.returncode != 0:
        raise ToolError(tool, f"failed (exit code {proc.returncode}: {_first_line(err)})")
    return out


# --- what the process knows about each tool ------------------------------------------------------------

_health_lock = threading.Lock()
_failures: dict[str, tuple[ToolError, bool]] = {}  # by tool name: the last failure, and whether a version check saw it
_checked_at: dict[str, float] = {}  # by tool name: when its last version check started (monotonic)


def note_outcome(tool: Tool, failure: ToolError | None, *, check: bool = False) -> None:
    """Record how a run of the tool ended (None: it worked). A version check that works clears only a failure
    that a check saw: a program can print its version and still fail at its real work."""
    with _health_lock:
        if failure is not None:
            _failures[tool.name] = (failure, check)
        elif not check or _failures.get(tool.name, (None, True))[1]:
            _failures.pop(tool.name, None)


def tool_failures() -> dict[str, ToolError]:
    """The tools whose last run in this process failed, by name, with that failure."""
    with _health_lock:
        return {name: failure for name, (failure, _) in _failures.items()}


def _check(tool: Tool) -> None:
    with contextlib.suppress(ToolError):  # recorded by run_tool
        run_tool(tool, list(tool.check_args), "", check=True)


def check_tools_in_background(*tools: Tool) -> None:
    """Start the version check of each tool not checked in the last CHECK_INTERVAL_S, each on a daemon thread;
    returns at once. The result shows in tool_failures() when the check ends (a hung tool: after the timeout)."""
    now = time.monotonic()
    with _health_lock:
        due = [t for t in tools if now - _checked_at.get(t.name, -CHECK_INTERVAL_S) >= CHECK_INTERVAL_S]
        for tool in due:
            _checked_at[tool.name] = now
    for tool in due:
        threading.Thread(target=_check, args=(tool,), name=f"check-{tool.command}", daemon=True).start()
