"""The real app, live: a `streamlit run` server on 127.0.0.1 and a client that speaks its websocket protocol.

For the benchmarks and tests that need the server itself rather than AppTest: the load benchmark (many
sessions at once), the browser benchmark, the upload-limit test. The client does what a browser tab does
on the wire and nothing more: it opens /_stcore/stream, asks for a page (with a query string), and after
each run sends the widget value a user changed; it reads the server's messages until the run finishes.

Reading the server's messages uses Streamlit's protobuf classes (`streamlit.proto`): the wire format, not
the app's code, and never imported by the app.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
START_TIMEOUT_S = 60
CHROMIUM = Path("/usr/bin/chromium")  # Debian's chromium, driven by Playwright (no browser downloads here)
CHROMIUM_FLAGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
_PAGE_SIZE = os.sysconf("SC_PAGE_SIZE")
_CLOCK_TICKS = os.sysconf("SC_CLK_TCK")

__all__ = [
    "LiveSession",
    "RunResult",
    "Server",
    "Widget",
    "cpu_seconds",
    "exit_on_sigterm",
    "free_port",
    "open_session",
    "rss_mb",
    "run",
    "serve",
]


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def rss_mb(pid: int) -> float:
    """Resident memory of a process, in MB (from /proc)."""
    pages = int(Path(f"/proc/{pid}/statm").read_text().split()[1])
    return pages * _PAGE_SIZE / 1e6


def cpu_seconds(pid: int) -> float:
    """User plus system CPU time a process has used, in seconds (from /proc; all its threads)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / _CLOCK_TICKS  # utime and stime, fields 14 and 15 of stat


@dataclass(frozen=True)
class Server:
    """A running `streamlit run`: its base URL and process id."""

    url: str
    pid: int

    @property
    def port(self) -> int:
        return int(self.url.rsplit(":", 1)[1])


def _wait_healthy(url: str, proc: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"streamlit exited with {proc.returncode} before serving")
        try:
            with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as response:
                if response.read().strip() == b"ok":
                    return
        except OSError:
            time.sleep(0.3)
    raise RuntimeError(f"streamlit did not answer on {url} within {START_TIMEOUT_S} s")


def copy_streamlit_config(folder: Path) -> None:
    """Give an app in `folder` the repository's .streamlit/config.toml: a baseline app then runs with the same
    server and runner settings as this one."""
    (folder / ".streamlit").mkdir(exist_ok=True)
    shutil.copy(ROOT / ".streamlit" / "config.toml", folder / ".streamlit" / "config.toml")


def exit_on_sigterm() -> None:
    """Turn SIGTERM (what `timeout` and CI send) into SystemExit, so `serve` blocks still stop their servers."""

    def _exit(signum: int, frame: object) -> None:
        raise SystemExit(128 + signum)

    signal.signal(signal.SIGTERM, _exit)


@contextmanager
def serve(
    script: Path, *, cwd: Path = ROOT, env: Mapping[str, str] | None = None, log: Path | None = None, options: tuple[str, ...] = ()
) -> Iterator[Server]:
    """`streamlit run script` on 127.0.0.1 and a free port, with the repository's .streamlit/config.toml when cwd is
    the repository; stopped by its process id when the block ends."""
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    command = [
        sys.executable, "-m", "streamlit", "run", str(script),
        "--server.headless", "true", "--server.address", "127.0.0.1", "--server.port", str(port),
        "--browser.gatherUsageStats", "false", "--server.fileWatcherType", "none", *options,
    ]  # fmt: skip
    out = log.open("wb") if log else subprocess.DEVNULL
    proc = subprocess.Popen(
        command, cwd=cwd, env={**os.environ, **(env or {})}, stdout=out, stderr=subprocess.STDOUT, start_new_session=True
    )
    try:
        _wait_healthy(url, proc)
        yield Server(url=url, pid=proc.pid)
    finally:
        os.kill(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait(timeout=15)
        if log:
            out.close()  # type: ignore[union-attr]


# --- the websocket client ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Widget:
    """A widget the last run drew: its id on the wire and its kind (the Element field: slider, number_input, ...)."""

    id: str
    kind: str
    label: str


@dataclass
class RunResult:
    """One run of the page as the client saw it."""

    seconds: float
    status: str  # FINISHED_SUCCESSFULLY, ...
    widgets: dict[str, Widget] = field(default_factory=dict)  # by label
    exceptions: list[str] = field(default_factory=list)
    texts: list[str] = field(default_factory=list)  # markdown, headings, metric values, alerts


def _element_text(element: Any, kind: str) -> str | None:
    if kind in ("markdown", "heading", "alert"):
        return str(getattr(element, kind).body)
    if kind == "metric":
        return f"{element.metric.label}: {element.metric.body}"
    return None


class LiveSession:
    """One browser tab's session, over the websocket: open() it, then rerun() with a changed widget value."""

    def __init__(self, server: Server, page: str = "", query_string: str = "") -> None:
        self._server = server
        self._page = page
        self._query_string = query_string
        self._ws: Any = None
        self._page_hash = ""
        self.session_id = ""

    async def open(self) -> RunResult:
        import websockets

        ws_url = self._server.url.replace("http://", "ws://") + "/_stcore/stream"
        self._ws = await websockets.connect(ws_url, subprotocols=["streamlit"], max_size=None)  # type: ignore[list-item]
        return await self.rerun({})

    async def close(self) -> None:
        if self._ws is not None:
            await self._ws.close()

    async def rerun(self, values: Mapping[Widget, float | int | str]) -> RunResult:
        """Send the page's rerun with these widget values changed (as a browser does after an input) and wait
        for the run to finish."""
        from streamlit.proto.BackMsg_pb2 import BackMsg

        msg = BackMsg()
        state = msg.rerun_script
        state.query_string = self._query_string
        state.page_script_hash = self._page_hash
        state.page_name = "" if self._page_hash else self._page
        for widget, value in values.items():
            proto = state.widget_states.widgets.add()
            proto.id = widget.id
            if isinstance(value, str):
                proto.string_value = value
            elif widget.kind == "slider":
                proto.double_array_value.data.append(float(value))  # a slider sends its value(s) as an array
            elif isinstance(value, int):
                proto.int_value = value
            else:
                proto.double_value = value
        start = time.perf_counter()
        await self._ws.send(msg.SerializeToString())
        return await self._read_run(start)

    async def _read_run(self, start: float) -> RunResult:
        from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

        result = RunResult(seconds=0.0, status="")
        while True:
            msg = ForwardMsg()
            msg.ParseFromString(await self._ws.recv())
            kind = msg.WhichOneof("type")
            if kind == "new_session":
                self.session_id = msg.new_session.initialize.session_id
            elif kind == "navigation":  # st.navigation resolved the page: later reruns name it by its hash
                self._page_hash = msg.navigation.page_script_hash
            elif kind == "page_info_changed":
                self._query_string = msg.page_info_changed.query_string
            elif kind == "delta" and msg.delta.WhichOneof("type") == "new_element":
                self._read_element(msg.delta.new_element, result)
            elif kind == "script_finished":
                status = ForwardMsg.ScriptFinishedStatus.Name(msg.script_finished)
                if status == "FINISHED_EARLY_FOR_RERUN":  # the app called st.rerun(): the run goes on
                    continue
                result.seconds = time.perf_counter() - start
                result.status = status
                return result

    @staticmethod
    def _read_element(element: Any, result: RunResult) -> None:
        kind = element.WhichOneof("type")
        if kind is None:
            return
        inner = getattr(element, kind)
        if kind == "exception":
            result.exceptions.append(f"{inner.type}: {inner.message}")
        elif hasattr(inner, "id") and hasattr(inner, "label") and inner.id:
            result.widgets[inner.label] = Widget(id=inner.id, kind=kind, label=inner.label)
        text = _element_text(element, kind)
        if text is not None:
            result.texts.append(text)


async def open_session(server: Server, page: str = "", query_string: str = "") -> tuple[LiveSession, RunResult]:
    """A new session on the page, after its first run."""
    session = LiveSession(server, page, query_string)
    return session, await session.open()


def run(coroutine: Any) -> Any:
    """asyncio.run for callers outside an event loop."""
    return asyncio.run(coroutine)
