"""The server, not only the browser, refuses uploads over 1 MB (issue 17): `.streamlit/config.toml` sets
server.maxUploadSize = 1, and a real `streamlit run` answers 413 to a larger file posted straight to its
upload endpoint, the way a script would bypass the browser's own check.

How Streamlit 1.67 takes uploads (read in streamlit/web/server/starlette/starlette_routes.py): a file is a
multipart PUT to /_stcore/upload_file/<session id>/<file id>; the session must be connected (a websocket
session: benchmarks.live opens one), and with XSRF protection on (the default) the X-Xsrftoken header must
match the _streamlit_xsrf cookie, which any GET of /_stcore/health sets. The server rejects on the
Content-Length header first and, for a chunked body without one, while it streams. The control cases: the
same session and token take a small file (204), and a server started with a 2 MB limit takes the 1.5 MB
file, so the 413 comes from the repository's setting and from nothing else.
"""

from __future__ import annotations

import asyncio
import http.client
import http.cookies
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from benchmarks.live import LiveSession, Server, run, serve
from tests.conftest import ROOT

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

OVER_LIMIT = 1_500_000  # bytes: over the 1 MB (1,048,576 bytes) limit, under 2 MB
SMALL = 2_000


def _xsrf_cookie(server: Server) -> str:
    connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=30)
    try:
        connection.request("GET", "/_stcore/health")
        response = connection.getresponse()
        response.read()
        cookies = http.cookies.SimpleCookie(response.getheader("Set-Cookie") or "")
    finally:
        connection.close()
    return cookies["_streamlit_xsrf"].value


def _statuses(server: Server, uploads: list[tuple[int, bool]]) -> list[int]:
    """Each upload (size in bytes, chunked or not) PUT for a session that stays connected meanwhile; their statuses."""

    async def upload_while_connected() -> list[int]:
        session = LiveSession(server, "brief", "preset=capstone")
        await session.open()
        cookie = await asyncio.to_thread(_xsrf_cookie, server)
        try:
            return [await asyncio.to_thread(_put, server, session.session_id, cookie, size, chunked=chunked) for size, chunked in uploads]
        finally:
            await session.close()

    return list(run(upload_while_connected()))


def _multipart(size: int) -> tuple[bytes, str]:
    boundary = uuid.uuid4().hex
    head = f'--{boundary}\r\nContent-Disposition: form-data; name="file"; filename="brief.toml"\r\nContent-Type: application/toml\r\n\r\n'
    body = head.encode() + b"#" * size + f"\r\n--{boundary}--\r\n".encode()
    return body, f"multipart/form-data; boundary={boundary}"


def _put(server: Server, session_id: str, cookie: str, size: int, *, chunked: bool = False) -> int:
    """PUT one file of `size` bytes to the upload endpoint; the HTTP status."""
    body, content_type = _multipart(size)
    headers = {"Content-Type": content_type, "X-Xsrftoken": cookie, "Cookie": f"_streamlit_xsrf={cookie}"}
    connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=60)
    path = f"/_stcore/upload_file/{session_id}/{uuid.uuid4().hex}"
    try:
        if chunked:  # no Content-Length: the server must count while it reads
            pieces = (body[i : i + 65_536] for i in range(0, len(body), 65_536))
            connection.request("PUT", path, body=pieces, headers=headers, encode_chunked=True)
        else:
            connection.request("PUT", path, body=body, headers=headers)
        response = connection.getresponse()
        response.read()
        return response.status
    except (BrokenPipeError, ConnectionResetError):  # the server answered and closed before the body was sent
        response = connection.getresponse()
        return response.status
    finally:
        connection.close()


@pytest.fixture(scope="module")
def configured_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """The app as `./run app` starts it: from the repository root, so with its .streamlit/config.toml."""
    log = tmp_path_factory.mktemp("upload") / "server.log"
    with serve(ROOT / "app.py", cwd=ROOT, log=log) as server:
        yield server


def test_the_configured_server_refuses_an_upload_over_1_mb(configured_server: Server) -> None:
    # the small file first: the session and the token are right, so a refusal is about the size
    assert _statuses(configured_server, [(SMALL, False), (OVER_LIMIT, False)]) == [204, 413]


def test_the_limit_holds_without_a_content_length(configured_server: Server) -> None:
    assert _statuses(configured_server, [(SMALL, True), (OVER_LIMIT, True)]) == [204, 413]


def test_a_server_with_a_larger_limit_takes_the_same_file(tmp_path: Path) -> None:
    """Control: the refusal above is the repository's setting, not the route or the request."""
    with serve(ROOT / "app.py", cwd=ROOT, log=tmp_path / "server.log", options=("--server.maxUploadSize", "2")) as server:
        assert _statuses(server, [(OVER_LIMIT, False), (OVER_LIMIT, True)]) == [204, 204]
