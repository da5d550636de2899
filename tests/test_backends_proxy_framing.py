"""The fault proxy's HTTP/1.1 framing (h11): chunked bodies, 100-continue, pipelining, malformed requests.

Against a small recording server (no storage server needed): it decodes what the proxy forwards with
its own code (http.server plus a chunk decoder here), so a framing bug of the proxy shows as a
difference between what the client sent and what the server got.  The client side is raw bytes on
a socket, read back with the reader below.
"""

from __future__ import annotations

import http.client
import http.server
import socket
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("h11")

from http_reader import read_response  # noqa: E402

from backends.fault_proxy import FaultProxy  # noqa: E402
from model.config import ErrorRule  # noqa: E402


class Recorder(http.server.BaseHTTPRequestHandler):
    """Records each request (method, path, lower-cased headers, body); answers 200 with a short body.

    Paths with ``chunked`` are answered with a chunked body; with ``close`` the connection is closed
    after the reply without saying so (a server's idle timeout).
    """

    protocol_version = "HTTP/1.1"
    seen: list[tuple[str, str, dict[str, str], bytes]]

    def _body(self) -> bytes:
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            out = b""
            while True:
                size = int(self.rfile.readline().split(b";")[0], 16)
                if size == 0:
                    while self.rfile.readline() not in (b"\r\n", b""):
                        pass  # trailers
                    return out
                out += self.rfile.read(size)
                self.rfile.readline()
        return self.rfile.read(int(self.headers.get("Content-Length", "0")))

    def _answer(self) -> None:
        body = self._body()
        self.seen.append((self.command, self.path, {k.lower(): v for k, v in self.headers.items()}, body))
        reply = f"{self.command} {self.path} {len(body)}".encode()
        self.send_response(200)
        if "chunked" in self.path:
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            if self.command != "HEAD":
                half = len(reply) // 2
                first, rest = reply[:half], reply[half:]
                self.wfile.write(b"%x\r\n%s\r\n%x\r\n%s\r\n0\r\n\r\n" % (len(first), first, len(rest), rest))
        else:
            self.send_header("Content-Length", str(len(reply)))
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(reply)
        if "close" in self.path:
            self.close_connection = True

    do_GET = do_PUT = do_POST = do_DELETE = do_HEAD = _answer

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the base class's name
        pass


@pytest.fixture
def upstream() -> Iterator[tuple[str, list[tuple[str, str, dict[str, str], bytes]]]]:
    seen: list[tuple[str, str, dict[str, str], bytes]] = []
    handler = type("Handler", (Recorder,), {"seen": seen})
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", seen
    finally:
        server.shutdown()
        server.server_close()


def _proxy(url: str, tmp_path: Path, **kw: Any) -> FaultProxy:
    return FaultProxy(url, ["w1"], dialect="s3", log_path=tmp_path / "proxy.log", **kw)


def _connect(p: FaultProxy) -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", p.ports["w1"]), timeout=10)
    return sock


def test_a_chunked_request_body_reaches_the_server_whole(upstream: Any, tmp_path: Path) -> None:
    url, seen = upstream
    with _proxy(url, tmp_path) as p, _connect(p) as sock:
        sock.sendall(b"PUT /bkt/t/k HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
                     b"5;name=value\r\nhello\r\n6\r\n world\r\n0\r\n\r\n")
        status, _, body = read_response(sock.makefile("rb"))
    assert status == 200 and body == b"PUT /bkt/t/k 11"
    assert [(m, path, b) for m, path, _, b in seen] == [("PUT", "/bkt/t/k", b"hello world")]
    assert "PUT 't/k' forward 200" in p.log_path.read_text()


def test_a_chunked_body_with_an_injected_error_is_not_forwarded_and_the_connection_goes_on(
        upstream: Any, tmp_path: Path) -> None:
    url, seen = upstream
    rule = ErrorRule(node="w1", key="t/k", method="write", status="503", count=1)
    with _proxy(url, tmp_path, errors=[rule]) as p, _connect(p) as sock:
        f = sock.makefile("rb")
        sock.sendall(b"PUT /bkt/t/k HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
                     b"3\r\nabc\r\n0\r\n\r\n")
        status, headers, body = read_response(f)
        assert status == 503 and b"<Code>ServiceUnavailable</Code>" in body
        assert seen == []
        sock.sendall(b"PUT /bkt/t/k HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n\r\nabc")  # count=1: passes
        assert read_response(f)[0] == 200
    assert [(m, b) for m, _, _, b in seen] == [("PUT", b"abc")]
    assert p.stats.actions == {"error-503": 1, "forward": 1}


@pytest.mark.parametrize("inject", [False, True])
def test_expect_100_continue_is_answered_by_the_proxy_before_the_body(upstream: Any, tmp_path: Path,
                                                                     inject: bool) -> None:
    url, seen = upstream
    rules = [ErrorRule(node="w1", key="t/k", method="write", status="412")] if inject else []
    with _proxy(url, tmp_path, errors=rules) as p, _connect(p) as sock:
        f = sock.makefile("rb")
        sock.sendall(b"PUT /bkt/t/k HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nExpect: 100-continue\r\n\r\n")
        assert read_response(f)[0] == 100  # before the body is sent: the client waits for it
        sock.sendall(b"hello")
        status, _, _ = read_response(f)
    if inject:
        assert status == 412 and seen == []  # decided on the whole request, nothing forwarded
    else:
        assert status == 200
        ((method, _, headers, body),) = seen
        assert method == "PUT" and body == b"hello" and "expect" not in headers  # answered here, not upstream


def test_pipelined_requests_are_answered_in_order_each_decided_alone(upstream: Any, tmp_path: Path) -> None:
    url, seen = upstream
    rule = ErrorRule(node="w1", key="t/b", method="write", status="503")
    with _proxy(url, tmp_path, errors=[rule]) as p, _connect(p) as sock:
        sock.sendall(b"GET /bkt/t/a HTTP/1.1\r\nHost: x\r\n\r\n"
                     b"PUT /bkt/t/b HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\n\r\nbody"
                     b"HEAD /bkt/t/chunked HTTP/1.1\r\nHost: x\r\n\r\n"
                     b"PUT /bkt/t/c HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
                     b"2\r\nhi\r\n0\r\n\r\n"
                     b"GET /bkt/t/d HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        f = sock.makefile("rb")
        got = [read_response(f)[0] for _ in range(2)]
        head_status, head_headers, head_body = read_response(f, head=True)  # headers, never a body
        got += [head_status] + [read_response(f)[0] for _ in range(2)]
        assert head_body == b"" and head_headers.get("transfer-encoding") == "chunked"
        assert f.read() == b""  # Connection: close was honoured after the last one
    assert got == [200, 503, 200, 200, 200]
    assert [(m, path, b) for m, path, _, b in seen] == [
        ("GET", "/bkt/t/a", b""), ("HEAD", "/bkt/t/chunked", b""), ("PUT", "/bkt/t/c", b"hi"),
        ("GET", "/bkt/t/d", b"")]


@pytest.mark.parametrize("raw", [
    b"NOT HTTP AT ALL\r\n\r\n",
    b"GET /bkt/t/k HTTP/1.1\r\nHost: x\r\nA header without a colon\r\n\r\n",
    b"PUT /bkt/t/k HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nhello\r\n0\r\n\r\n",
    b"PUT /bkt/t/k HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\nhello",
    b"PUT /bkt/t/k HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\nhello!",
    b"GET /bkt/t/k HTTP/1.1\r\n\r\n",  # HTTP/1.1 without Host
], ids=["request-line", "header", "chunk-size", "content-length", "two-lengths", "no-host"])
def test_a_malformed_request_is_answered_400_logged_and_never_forwarded(upstream: Any, tmp_path: Path,
                                                                       raw: bytes) -> None:
    url, seen = upstream
    with _proxy(url, tmp_path) as p, _connect(p) as sock:
        f = sock.makefile("rb")
        # a good request first, on the same connection: it is forwarded; the bad one after it is not
        sock.sendall(b"PUT /bkt/t/good HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\nok" + raw)
        assert read_response(f)[0] == 200
        status, headers, body = read_response(f)
        assert status == 400 and body.startswith(b"bad request: ") and headers["connection"] == "close"
        assert f.read() == b""  # and the connection is closed
    assert [path for _, path, _, _ in seen] == ["/bkt/t/good"]
    assert p.stats.actions == {"forward": 1, "bad-request": 1}
    assert " - '' bad-request 400 " in p.log_path.read_text()


def test_a_client_that_goes_away_mid_request_gets_no_400(upstream: Any, tmp_path: Path) -> None:
    url, seen = upstream
    with _proxy(url, tmp_path) as p:
        sock = _connect(p)
        sock.sendall(b"PUT /bkt/t/k HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\nhal")
        sock.shutdown(socket.SHUT_WR)
        assert sock.recv(100) == b""  # closed without an answer
        sock.close()
    assert seen == [] and "bad-request" not in p.stats.actions


def test_a_kept_alive_connection_the_server_closed_is_opened_again_once(upstream: Any,
                                                                       tmp_path: Path) -> None:
    url, seen = upstream
    with _proxy(url, tmp_path) as p, _connect(p) as sock:
        f = sock.makefile("rb")
        for i in range(3):  # the server closes its side after each reply, without saying so
            sock.sendall(b"PUT /bkt/t/close%d HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\n\r\nx" % i)
            status, _, body = read_response(f)
            assert status == 200 and body == b"PUT /bkt/t/close%d 1" % i
    assert [path for _, path, _, _ in seen] == ["/bkt/t/close0", "/bkt/t/close1", "/bkt/t/close2"]  # once


def test_a_chunked_reply_reaches_an_sdk_like_client(upstream: Any, tmp_path: Path) -> None:
    url, _ = upstream
    with _proxy(url, tmp_path) as p:
        conn = http.client.HTTPConnection("127.0.0.1", p.ports["w1"], timeout=10)
        for _ in range(2):  # keep-alive through the proxy
            conn.request("GET", "/bkt/t/chunked")
            resp = conn.getresponse()
            assert resp.status == 200 and resp.read() == b"GET /bkt/t/chunked 0"
        conn.close()


def test_a_dead_server_closes_the_client_connection(tmp_path: Path) -> None:
    free = socket.socket()
    free.bind(("127.0.0.1", 0))
    port = free.getsockname()[1]
    free.close()  # nothing listens there now
    with _proxy(f"http://127.0.0.1:{port}", tmp_path) as p, _connect(p) as sock:
        sock.sendall(b"GET /bkt/t/k HTTP/1.1\r\nHost: x\r\n\r\n")
        assert sock.recv(100) == b""
    assert p.stats.actions == {"upstream-failed": 1}
