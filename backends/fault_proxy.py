"""A fault-injecting HTTP/1.1 proxy between the storage clients and a storage server.

One proxy serves every node of a run; **each node gets its own listening port**
on 127.0.0.1 (``proxy.url(node)``), which is how the proxy knows whose request
it is.  The HTTP/1.1 framing on both sides is h11's (a maintained sans-I/O
HTTP/1.1 implementation), not the proxy's own: request line, headers, bodies by
Content-Length or chunked, ``Expect: 100-continue``, pipelined requests and
keep-alive on the client side; the same for the replies read from the server.
A framing bug would look like a storage fault the server never produced.

Each request is read whole before anything is decided; the object key is read
from the URL (S3 path style, Azure ``/account/container/key``, GCS JSON API incl.
the ``name`` of a multipart upload), and the run's fault plan decides what
happens, through the simulated network's own :class:`model.runtime.faults.FaultMatcher`
(node, key class ``lock`` / ``register`` / ``any`` or a key prefix, method
``read`` / ``write``, window in ms since the run started, ``prob`` from a seeded
RNG, ``count``):

- ``409`` / ``429`` / ``503``: answered by the proxy, not forwarded (not applied);
- ``timeout``: not forwarded; the proxy holds the connection until the client
  gives up (or ``hold_s``) and closes it: the client sees a timeout;
- ``lost-reply``: forwarded and applied by the server, the reply is read and
  dropped, the connection closed (after ``lost_reply_hold_s``): the client sees
  a broken connection or a timeout, an SDK retry then sees 412;
- a :class:`model.config.Cutoff` of the node: like ``timeout`` during its window;
- S3's 409 window (``conflict_window_ms``, ``conflict_prob``: the scenario's ``storage.conflict_*``, as
  :class:`model.runtime.sim.SimNetwork` applies them; the S3 dialect only): a write of a key that a write
  succeeded on within the window is answered ``409`` with that probability (``conflict``), not forwarded;
- latency: a fixed or drawn (:class:`model.config.Dist`, seeded) delay before
  forwarding and again before replying.

``Expect: 100-continue`` is answered by the proxy itself (the body is read
before any decision; the request goes upstream without the header).  A request
that is not valid HTTP/1.1 (a bad request line or header, a bad chunk, a bad
Content-Length) is answered ``400`` by the proxy, logged as ``bad-request``, and
the connection closed: nothing of it is forwarded.  A kept-alive connection to
the server that the server closed meanwhile is opened again once for the
request; a fresh connection that fails is the server's failure
(``upstream-failed``: the client's connection is closed, as a dead server's).
Every request is logged as one line to ``log_path``:
``<ms> <node> <method> <key> <action> <status>``.
"""

from __future__ import annotations

import contextlib
import gzip
import json
import random
import re
import socket
import threading
import time
import urllib.parse
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from backends.launchers.process import HOST
from model.config import Cutoff, Dist, ErrorRule
from model.runtime.faults import FaultMatcher
from model.runtime.sampling import draw

if TYPE_CHECKING:  # h11 is imported where it is used: the command line loads this module without it
    import h11

ERROR_REASONS = {409: "Conflict", 412: "Precondition Failed", 429: "Too Many Requests",
                 503: "Service Unavailable"}
RECV = 65536
Headers = list[tuple[bytes, bytes]]


class ProxyError(ValueError):
    """A bad proxy setting (names the field and the value)."""


@dataclass
class Request:
    """One whole HTTP request as the client sent it (headers as sent, body de-chunked)."""

    method: str
    target: str
    headers: Headers
    body: bytes


@dataclass
class Reply:
    """One whole reply of the server (headers as sent, body de-chunked)."""

    status: int
    reason: bytes
    headers: Headers
    body: bytes


@dataclass(frozen=True)
class Exchange:
    """One request the proxy handled, as ``on_exchange`` gets it: whose, what, and what came of it.

    ``action`` as in the log (``forward``, ``error-503``, ``timeout``, ``lost-reply``, ...), ``status`` the
    server's (or the proxy's) status, None when no reply came; ``version`` the reply's ETag; ``body`` the
    request's body (writes)."""

    at_ms: int
    node: str
    method: str
    key: str
    if_match: str | None
    if_none_match: str | None
    action: str
    status: int | None
    version: str | None
    body: bytes
    query: str = ""  # the request target's query (GCS carries its preconditions there)
    reply: bytes = b""  # the reply's body (GCS carries an upload's new generation there)


class BadRequest(Exception):
    """The client's bytes are not a valid HTTP/1.1 request (h11's reason)."""


@dataclass
class ProxyStats:
    """What the proxy did, by action (``forward``, ``error-503``, ``timeout``, ``lost-reply``, ...)."""

    actions: dict[str, int] = field(default_factory=dict)

    def add(self, action: str) -> None:
        self.actions[action] = self.actions.get(action, 0) + 1


def _header(headers: Headers, name: bytes) -> bytes | None:
    for k, v in headers:
        if k.lower() == name:
            return v
    return None


def read_request(sock: socket.socket, conn: h11.Connection) -> Request | None:
    """The next whole request on ``conn`` (None: the client closed, between requests or in one).

    ``Expect: 100-continue`` is answered here (the body is read before any decision).  Raises
    :class:`BadRequest` for bytes that are not HTTP/1.1, OSError when the socket fails.
    """
    import h11

    head: h11.Request | None = None
    body = bytearray()
    eof = False
    while True:
        try:
            event = conn.next_event()
        except h11.RemoteProtocolError as e:
            if eof:  # the bytes stopped mid-request (a client that gave up): nothing to answer
                return None
            raise BadRequest(str(e)) from None
        if event is h11.NEED_DATA:
            if conn.they_are_waiting_for_100_continue:
                sock.sendall(conn.send(h11.InformationalResponse(status_code=100, headers=[])) or b"")
            data = sock.recv(RECV)
            eof = not data
            conn.receive_data(data)
        elif isinstance(event, h11.Request):
            head = event
        elif isinstance(event, h11.Data):
            body += event.data
        elif isinstance(event, h11.EndOfMessage):
            assert head is not None
            return Request(head.method.decode("ascii"), head.target.decode("latin-1"),
                           list(head.headers.raw_items()), bytes(body))
        elif isinstance(event, h11.ConnectionClosed):
            return None


def send_reply(sock: socket.socket, conn: h11.Connection, status: int, reason: bytes, headers: Headers,
               body: bytes) -> None:
    """Send one whole reply on the client's connection (h11 frames it for the request it answers)."""
    import h11

    if (_header(headers, b"content-length") is None and _header(headers, b"transfer-encoding") is None
            and status >= 200 and status not in (204, 304)):
        headers = [*headers, (b"Content-Length", str(len(body)).encode())]  # a reply read until close
    out = conn.send(h11.Response(status_code=status, reason=reason, headers=headers)) or b""
    if body:
        out += conn.send(h11.Data(data=body)) or b""
    out += conn.send(h11.EndOfMessage()) or b""
    sock.sendall(out)


class _Upstream:
    """One connection to the server with its h11 client state."""

    def __init__(self, address: tuple[str, int], timeout: float) -> None:
        import h11

        self.sock = socket.create_connection(address, timeout=timeout)
        self.conn = h11.Connection(our_role=h11.CLIENT)

    def exchange(self, req: Request, host: bytes) -> Reply:
        """Send ``req`` (without ``Expect``) and read the whole reply; OSError or h11's errors if it fails."""
        import h11

        headers = [(k, v) for k, v in req.headers if k.lower() != b"expect"]
        if _header(headers, b"host") is None:  # an HTTP/1.0 client may omit it; HTTP/1.1 needs it
            headers.insert(0, (b"Host", host))
        out = self.conn.send(h11.Request(method=req.method, target=req.target, headers=headers)) or b""
        if req.body:
            out += self.conn.send(h11.Data(data=req.body)) or b""
        out += self.conn.send(h11.EndOfMessage()) or b""
        self.sock.sendall(out)
        head: h11.Response | None = None
        body = bytearray()
        while True:
            event = self.conn.next_event()
            if event is h11.NEED_DATA:
                self.conn.receive_data(self.sock.recv(RECV))
            elif isinstance(event, h11.Response):
                head = event
            elif isinstance(event, h11.Data):
                body += event.data
            elif isinstance(event, h11.EndOfMessage):
                assert head is not None
                headers = list(head.headers.raw_items())
                return Reply(head.status_code, bytes(head.reason), headers, bytes(body))
            elif isinstance(event, h11.ConnectionClosed):
                raise ConnectionResetError("the server closed the connection before its reply")
            # an InformationalResponse (100 Continue) is not the reply: read on

    def reusable(self) -> bool:
        """True when both sides finished the exchange and the server keeps the connection alive."""
        import h11

        if self.conn.our_state is h11.DONE and self.conn.their_state is h11.DONE:
            self.conn.start_next_cycle()
            return True
        return False

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self.sock.close()


def object_key(method: str, target: str, body: bytes, dialect: str) -> str:
    """The object key (or listed prefix) a storage request addresses; '' when none (bucket calls)."""
    u = urllib.parse.urlsplit(target)
    query = urllib.parse.parse_qs(u.query)
    path = urllib.parse.unquote(u.path)
    if dialect == "gcs":
        m = re.match(r"^(?:/download|/upload)?/storage/v1/b/[^/]+/o(?:/(.+))?$", path)
        if m is None:
            return ""
        if m.group(1):
            return m.group(1)
        if "name" in query:
            return query["name"][0]
        if "prefix" in query:
            return query["prefix"][0]
        # multipart upload: the first part is the JSON metadata with the object's name (gzipped by
        # google-http-client, which Hudi's GCS client uses)
        found = re.search(rb'"name"\s*:\s*"((?:[^"\\]|\\.)*)"', ungzip(body)[:4096])
        return json.loads(b'"' + found.group(1) + b'"') if found else ""
    parts = path.lstrip("/").split("/", 2 if dialect == "azure" else 1)
    need = 3 if dialect == "azure" else 2
    if len(parts) < need or not parts[-1]:
        prefix = query.get("prefix", [""])[0]
        return prefix
    return parts[-1]


def ungzip(body: bytes) -> bytes:
    """``body`` decompressed when it is gzip (a client's ``Content-Encoding: gzip`` upload), else as it is."""
    if body[:2] != b"\x1f\x8b":
        return body
    try:
        return gzip.decompress(body)
    except (OSError, EOFError):
        return body


def multipart_media(body: bytes) -> bytes:
    """The media (last) part of a GCS multipart upload's body (gzip or not); the body itself when it is
    not multipart."""
    raw = ungzip(body)
    first = raw.split(b"\r\n", 1)[0]
    if not first.startswith(b"--"):
        return raw
    parts = [p for p in raw.split(first) if p.strip() not in (b"", b"--")]
    if not parts:
        return raw
    media = parts[-1].split(b"\r\n\r\n", 1)
    return media[1].removesuffix(b"\r\n") if len(media) == 2 else raw


def is_write_method(method: str) -> bool:
    """PUT, POST, DELETE and PATCH change the store; GET and HEAD do not."""
    return method.upper() in ("PUT", "POST", "DELETE", "PATCH")


class FaultProxy:
    """The proxy: ``nodes`` each get a port; ``clock_ms()`` gives ms since the run started.

    ``lock_key`` / ``register_key`` are the real object keys of the ``lock`` and
    ``register`` key classes; ``key_prefix`` is put in front of a rule's key
    prefix (the table prefix under which the run's keys were mapped).
    """

    def __init__(self, upstream: str, nodes: Sequence[str], *, dialect: str, log_path: Path,
                 errors: Sequence[ErrorRule] = (), cutoffs: Sequence[Cutoff] = (),
                 latency: Dist | None = None, seed: int = 1, lock_key: str = "", register_key: str = "",
                 key_prefix: str = "", hold_s: float = 30.0, lost_reply_hold_s: float = 0.0,
                 clock_ms: Callable[[], int] | None = None,
                 on_exchange: Callable[[Exchange], None] | None = None,
                 conflict_window_ms: int = 0, conflict_prob: float = 0.0) -> None:
        u = urllib.parse.urlsplit(upstream)
        if u.scheme != "http" or not u.hostname or not u.port:
            raise ProxyError(f"upstream = {upstream!r}: the proxy needs an http://host:port URL")
        if dialect not in ("s3", "gcs", "azure"):
            raise ProxyError(f"dialect = {dialect!r}: must be s3, gcs or azure")
        if latency is not None:
            latency.validate("proxy.latency")
        for i, rule in enumerate(errors):
            if rule.node != "any" and rule.node not in nodes:
                raise ProxyError(f"errors[{i}].node = {rule.node!r}: not a node of the proxy "
                                 f"({', '.join(nodes)})")
        self.upstream = (u.hostname, u.port)
        self.upstream_path = u.path.rstrip("/")
        self.dialect = dialect
        self.latency = latency
        self.rng = random.Random(f"{seed}/proxy")
        self.lock_key, self.register_key = lock_key, register_key
        self.matcher = FaultMatcher(errors, cutoffs, self.rng, self._key_class, key_prefix)
        self.hold_s = hold_s
        # S3's 409 ConditionalRequestConflict only: Azure's and GCS's 409s mean other things
        self.conflict_window_ms = conflict_window_ms
        self.conflict_prob = conflict_prob if dialect == "s3" else 0.0
        self._last_write_ms: dict[str, int] = {}  # key -> when a write of it last succeeded (409 window)
        self.lost_reply_hold_s = lost_reply_hold_s
        t0 = time.monotonic()
        self.clock_ms = clock_ms or (lambda: int((time.monotonic() - t0) * 1000))
        self.stats = ProxyStats()
        self.on_exchange = on_exchange
        self._lock = threading.Lock()
        self._closed = threading.Event()
        self._socks: list[socket.socket] = []
        self.log_path = log_path
        log_path.parent.mkdir(parents=True, exist_ok=True)
        self._log = open(log_path, "a", buffering=1)  # noqa: SIM115 - closed in close()
        self.ports: dict[str, int] = {}
        self._servers: list[socket.socket] = []
        for node in nodes:
            srv = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            srv.bind((HOST, 0))
            srv.listen(128)
            self.ports[node] = int(srv.getsockname()[1])
            self._servers.append(srv)
            threading.Thread(target=self._accept, args=(srv, node), name=f"proxy-{node}", daemon=True).start()

    # ---- public ------------------------------------------------------------------

    def url(self, node: str) -> str:
        """The endpoint URL ``node``'s client must use (``http://127.0.0.1:<port><upstream path>``)."""
        if node not in self.ports:
            raise ProxyError(f"node = {node!r}: not a node of the proxy ({', '.join(self.ports)})")
        return f"http://{HOST}:{self.ports[node]}{self.upstream_path}"

    def close(self) -> None:
        """Stop listening and close every connection and the log."""
        self._closed.set()
        for s in self._servers:
            with contextlib.suppress(OSError):
                s.close()
        with self._lock:
            for s in self._socks:
                with contextlib.suppress(OSError):
                    s.close()
        with contextlib.suppress(ValueError):
            self._log.close()

    def __enter__(self) -> FaultProxy:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ---- fault decision -----------------------------------------------------------

    def _key_class(self, key: str) -> str:
        if key == self.lock_key:
            return "lock"
        return "register" if key == self.register_key else "other"

    def decide(self, node: str, method: str, key: str) -> str:
        """The action for one request: ``forward``, ``cutoff``, an ErrorRule status, or ``conflict``."""
        write, now = is_write_method(method), self.clock_ms()
        with self._lock:
            action = self.matcher.decide(node, write, key, now)
            if action is not None:
                return action
            last = self._last_write_ms.get(key) if write and self.conflict_prob > 0 else None
            close = last is not None and now - last <= self.conflict_window_ms
            if close and self.rng.random() < self.conflict_prob:
                return "conflict"
            return "forward"

    def _delay(self) -> None:
        if self.latency is not None:
            with self._lock:
                ms = draw(self.rng, self.latency)
            if ms:
                time.sleep(ms / 1000)

    # ---- connections ------------------------------------------------------------

    def _accept(self, srv: socket.socket, node: str) -> None:
        while not self._closed.is_set():
            try:
                client, _ = srv.accept()
            except OSError:
                return
            with self._lock:
                self._socks.append(client)
            threading.Thread(target=self._serve, args=(client, node), daemon=True).start()

    def _note(self, node: str, method: str, key: str, action: str, status: int | str) -> None:
        self.stats.add(action)
        with contextlib.suppress(ValueError):
            self._log.write(f"{self.clock_ms()} {node} {method} {key!r} {action} {status}\n")

    def _exchanged(self, node: str, req: Request, key: str, action: str, status: int | None,
                   reply: Reply | None) -> None:
        """Log one handled request, and hand it to ``on_exchange``."""
        no_reply = "closed" if action == "upstream-failed" else "held"
        self._note(node, req.method, key, action, no_reply if status is None else status)
        if self.on_exchange is not None:
            def text(raw: bytes | None) -> str | None:
                return raw.decode("latin-1") if raw is not None else None
            etag = _header(reply.headers, b"etag") if reply is not None else None
            self.on_exchange(Exchange(self.clock_ms(), node, req.method, key,
                                      text(_header(req.headers, b"if-match")),
                                      text(_header(req.headers, b"if-none-match")), action, status,
                                      text(etag), req.body, urllib.parse.urlsplit(req.target).query,
                                      reply.body if reply is not None else b""))

    def _error_reply(self, status: int) -> tuple[bytes, Headers, bytes]:
        """The reason, headers and body of an injected error, in the dialect's own shape."""
        reason = ERROR_REASONS.get(status, "Error").encode()
        if self.dialect == "gcs":
            body = json.dumps({"error": {"code": status, "message": f"injected {status}",
                                         "errors": [{"reason": "injected", "message": "injected"}]}}).encode()
            ctype = "application/json"
        else:
            code = {409: "ConditionalRequestConflict", 412: "PreconditionFailed", 429: "SlowDown",
                    503: "ServiceUnavailable"}[status]
            if self.dialect == "azure":
                code = {409: "Conflict", 412: "ConditionNotMet", 429: "ServerBusy", 503: "ServerBusy"}[status]
            body = (f'<?xml version="1.0" encoding="UTF-8"?><Error><Code>{code}</Code>'
                    f"<Message>injected {status}</Message></Error>").encode()
            ctype = "application/xml"
        headers: Headers = [(b"Content-Type", ctype.encode()), (b"Content-Length", str(len(body)).encode())]
        if self.dialect == "azure":
            headers.append((b"x-ms-error-code", code.encode()))
        return reason, headers, body

    def _hold(self, client: socket.socket, seconds: float) -> None:
        """Keep the connection open and silent until the client closes it or ``seconds`` pass."""
        client.settimeout(0.1)
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline and not self._closed.is_set():
            try:
                if not client.recv(RECV):
                    return
            except TimeoutError:
                continue
            except OSError:
                return

    def _forward(self, up: _Upstream | None, req: Request) -> tuple[_Upstream | None, Reply | None]:
        """Send ``req`` to the server and read its reply: (the connection to keep, the reply or None).

        A kept-alive connection that the server closed meanwhile is opened again once; a fresh one
        that fails is the server's failure.
        """
        import h11

        host = f"{self.upstream[0]}:{self.upstream[1]}".encode()
        for _ in range(2):
            fresh = up is None
            if up is None:
                try:
                    up = _Upstream(self.upstream, self.hold_s)
                except OSError:
                    return None, None
                with self._lock:
                    self._socks.append(up.sock)
            try:
                reply = up.exchange(req, host)
            except (OSError, h11.ProtocolError) as e:
                up.close()
                up = None
                if fresh or isinstance(e, TimeoutError):  # a slow server may have applied it: never twice
                    return None, None
                continue
            if not up.reusable():
                up.close()
                up = None
            return up, reply
        return None, None

    def _serve(self, client: socket.socket, node: str) -> None:
        import h11

        conn = h11.Connection(our_role=h11.SERVER)
        up: _Upstream | None = None
        try:
            while not self._closed.is_set():
                try:
                    req = read_request(client, conn)
                except BadRequest as e:
                    self._note(node, "-", "", "bad-request", f"400 {str(e)!r}")
                    body = f"bad request: {e}\n".encode()
                    headers = [(b"Content-Type", b"text/plain"), (b"Connection", b"close")]
                    send_reply(client, conn, 400, b"Bad Request", headers, body)
                    return
                if req is None:
                    return
                key = object_key(req.method, req.target, req.body, self.dialect)
                action = self.decide(node, req.method, key)
                if action in ("409", "412", "429", "503", "conflict"):
                    status = 409 if action == "conflict" else int(action)
                    self._delay()
                    self._exchanged(node, req, key, action if action == "conflict" else f"error-{action}",
                                    status, None)
                    send_reply(client, conn, status, *self._error_reply(status))
                elif action in ("timeout", "cutoff"):
                    self._exchanged(node, req, key, action, None, None)
                    self._hold(client, self.hold_s)
                    return
                else:
                    self._delay()
                    up, reply = self._forward(up, req)
                    if reply is None:
                        self._exchanged(node, req, key, "upstream-failed", None, None)
                        return  # the client sees a broken connection, as with a dead server
                    if is_write_method(req.method) and 200 <= reply.status < 300:  # applied (409 window)
                        with self._lock:
                            self._last_write_ms[key] = self.clock_ms()
                    if action == "lost-reply":
                        self._exchanged(node, req, key, "lost-reply", reply.status, reply)
                        if self.lost_reply_hold_s:
                            self._hold(client, self.lost_reply_hold_s)
                        return
                    self._delay()
                    self._exchanged(node, req, key, "forward", reply.status, reply)
                    send_reply(client, conn, reply.status, reply.reason, reply.headers, reply.body)
                if conn.our_state is not h11.DONE or conn.their_state is not h11.DONE:
                    return  # either side asked to close (Connection: close, HTTP/1.0)
                conn.start_next_cycle()  # a pipelined request may already be buffered
        except (OSError, h11.ProtocolError):
            return
        finally:
            with contextlib.suppress(OSError):
                client.close()
            if up is not None:
                up.close()


@contextlib.contextmanager
def fault_proxy(upstream: str, nodes: Sequence[str], **kw: object) -> Iterator[FaultProxy]:
    """A :class:`FaultProxy` that is always closed afterwards (keywords as for the class)."""
    proxy = FaultProxy(upstream, nodes, **kw)  # type: ignore[arg-type]
    try:
        yield proxy
    finally:
        proxy.close()
