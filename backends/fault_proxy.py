"""A fault-injecting HTTP/1.1 proxy between the storage clients and a storage server.

One proxy serves every node of a run; **each node gets its own listening port**
on 127.0.0.1 (``proxy.url(node)``), which is how the proxy knows whose request
it is.  Requests are parsed (request line, headers, a body by Content-Length or
chunked), the object key is read from the URL (S3 path style, Azure
``/account/container/key``, GCS JSON API incl. the ``name`` of a multipart
upload), and the run's fault plan decides what happens, through the simulated network's own
:class:`model.faults.FaultMatcher` (node, key class ``lock`` / ``register`` /
``any`` or a key prefix, method ``read`` / ``write``, window in ms since the
run started, ``prob`` from a seeded RNG, ``count``):

- ``409`` / ``429`` / ``503``: answered by the proxy, not forwarded (not applied);
- ``timeout``: not forwarded; the proxy holds the connection until the client
  gives up (or ``hold_s``) and closes it: the client sees a timeout;
- ``lost-reply``: forwarded and applied by the server, the reply is read and
  dropped, the connection closed (after ``lost_reply_hold_s``): the client sees
  a broken connection or a timeout, an SDK retry then sees 412;
- a :class:`model.config.Cutoff` of the node: like ``timeout`` during its window;
- latency: a fixed or drawn (:class:`model.config.Dist`, seeded) delay before
  forwarding and again before replying.

``Expect: 100-continue`` is answered by the proxy itself (the body is read
before any decision).  Every request is logged as one line to ``log_path``.
"""

from __future__ import annotations

import contextlib
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

from backends.launchers.process import HOST
from model.config import Cutoff, Dist, ErrorRule
from model.faults import FaultMatcher
from model.workload import draw

ERROR_REASONS = {409: "Conflict", 412: "Precondition Failed", 429: "Too Many Requests",
                 503: "Service Unavailable"}


class ProxyError(ValueError):
    """A bad proxy setting (names the field and the value)."""


@dataclass
class Request:
    """One parsed HTTP request (``raw`` is what goes upstream)."""

    method: str
    target: str
    headers: dict[str, str]
    body: bytes
    raw: bytes


@dataclass
class ProxyStats:
    """What the proxy did, by action (``forward``, ``error-503``, ``timeout``, ``lost-reply``, ...)."""

    actions: dict[str, int] = field(default_factory=dict)

    def add(self, action: str) -> None:
        self.actions[action] = self.actions.get(action, 0) + 1


def _read_until(sock: socket.socket, buf: bytearray, marker: bytes) -> int:
    """Read into ``buf`` until ``marker`` appears; return its end offset; -1 on EOF."""
    while True:
        i = buf.find(marker)
        if i >= 0:
            return i + len(marker)
        data = sock.recv(65536)
        if not data:
            return -1
        buf += data


def _read_exact(sock: socket.socket, buf: bytearray, n: int) -> bool:
    while len(buf) < n:
        data = sock.recv(65536)
        if not data:
            return False
        buf += data
    return True


def _parse_headers(head: bytes) -> tuple[str, dict[str, str]]:
    lines = head.decode("latin-1").split("\r\n")
    headers: dict[str, str] = {}
    for line in lines[1:]:
        if ":" in line:
            k, v = line.split(":", 1)
            headers[k.strip().lower()] = v.strip()
    return lines[0], headers


def _read_body(sock: socket.socket, buf: bytearray, start: int, headers: dict[str, str],
               until_close: bool) -> int | None:
    """Make ``buf`` hold a whole message whose body starts at ``start``; return its end (None: EOF)."""
    if headers.get("transfer-encoding", "").lower() == "chunked":
        pos = start
        while True:
            end = _read_until_from(sock, buf, b"\r\n", pos)
            if end < 0:
                return None
            size = int(bytes(buf[pos:end - 2]).split(b";")[0], 16)
            pos = end
            if size == 0:
                end = _read_until_from(sock, buf, b"\r\n", pos)  # no trailers expected
                return None if end < 0 else end
            if not _read_exact(sock, buf, pos + size + 2):
                return None
            pos += size + 2
    if "content-length" in headers:
        n = int(headers["content-length"])
        return start + n if _read_exact(sock, buf, start + n) else None
    if until_close:
        while data := sock.recv(65536):
            buf += data
        return len(buf)
    return start


def _read_until_from(sock: socket.socket, buf: bytearray, marker: bytes, pos: int) -> int:
    while True:
        i = buf.find(marker, pos)
        if i >= 0:
            return i + len(marker)
        data = sock.recv(65536)
        if not data:
            return -1
        buf += data


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
        # multipart upload: the first part is the JSON metadata with the object's name
        found = re.search(rb'"name"\s*:\s*"((?:[^"\\]|\\.)*)"', body[:4096])
        return json.loads(b'"' + found.group(1) + b'"') if found else ""
    parts = path.lstrip("/").split("/", 2 if dialect == "azure" else 1)
    need = 3 if dialect == "azure" else 2
    if len(parts) < need or not parts[-1]:
        prefix = query.get("prefix", [""])[0]
        return prefix
    return parts[-1]


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
                 clock_ms: Callable[[], int] | None = None) -> None:
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
        self.lost_reply_hold_s = lost_reply_hold_s
        t0 = time.monotonic()
        self.clock_ms = clock_ms or (lambda: int((time.monotonic() - t0) * 1000))
        self.stats = ProxyStats()
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
        """The action for one request: ``forward``, ``cutoff``, or an ErrorRule status."""
        with self._lock:
            return self.matcher.decide(node, is_write_method(method), key, self.clock_ms()) or "forward"

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

    def _note(self, node: str, req: Request, key: str, action: str, status: int | str) -> None:
        self.stats.add(action)
        with contextlib.suppress(ValueError):
            self._log.write(f"{self.clock_ms()} {node} {req.method} {key!r} {action} {status}\n")

    def _read_request(self, client: socket.socket, buf: bytearray) -> Request | None:
        end = _read_until(client, buf, b"\r\n\r\n")
        if end < 0:
            return None
        line, headers = _parse_headers(bytes(buf[:end]))
        head = bytes(buf[:end])
        if headers.get("expect", "").lower() == "100-continue":
            client.sendall(b"HTTP/1.1 100 Continue\r\n\r\n")
            head = re.sub(rb"(?im)^expect:[^\r\n]*\r\n", b"", head)
        stop = _read_body(client, buf, end, headers, until_close=False)
        if stop is None:
            return None
        body = bytes(buf[end:stop])
        raw = head + body
        del buf[:stop]
        method, _, rest = line.partition(" ")
        return Request(method, rest.rpartition(" ")[0], headers, body, raw)

    def _exchange(self, up: socket.socket, req: Request) -> bytes | None:
        """Send one request upstream and read its whole reply (None: the server closed or failed)."""
        up.sendall(req.raw)
        buf = bytearray()
        while True:
            end = _read_until(up, buf, b"\r\n\r\n")
            if end < 0:
                return None
            line, headers = _parse_headers(bytes(buf[:end]))
            status = int(line.split(" ")[1])
            if 100 <= status < 200:
                del buf[:end]
                continue
            no_body = req.method == "HEAD" or status in (204, 304)
            if no_body:
                return bytes(buf[:end])
            until_close = "content-length" not in headers and "chunked" not in headers.get(
                "transfer-encoding", "")
            stop = _read_body(up, buf, end, headers, until_close=until_close)
            return None if stop is None else bytes(buf[:stop])

    def _error_reply(self, status: int) -> bytes:
        reason = ERROR_REASONS.get(status, "Error")
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
        extra = f"x-ms-error-code: {code}\r\n" if self.dialect == "azure" else ""
        return (f"HTTP/1.1 {status} {reason}\r\nContent-Type: {ctype}\r\nContent-Length: {len(body)}\r\n"
                f"{extra}\r\n").encode() + body

    def _hold(self, client: socket.socket, seconds: float) -> None:
        """Keep the connection open and silent until the client closes it or ``seconds`` pass."""
        client.settimeout(0.1)
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline and not self._closed.is_set():
            try:
                if not client.recv(65536):
                    return
            except TimeoutError:
                continue
            except OSError:
                return

    def _serve(self, client: socket.socket, node: str) -> None:
        up: socket.socket | None = None
        buf = bytearray()
        try:
            while not self._closed.is_set():
                req = self._read_request(client, buf)
                if req is None:
                    return
                key = object_key(req.method, req.target, req.body, self.dialect)
                action = self.decide(node, req.method, key)
                if action in ("409", "412", "429", "503"):
                    self._delay()
                    client.sendall(self._error_reply(int(action)))
                    self._note(node, req, key, f"error-{action}", action)
                    continue
                if action in ("timeout", "cutoff"):
                    self._note(node, req, key, action, "held")
                    self._hold(client, self.hold_s)
                    return
                self._delay()
                reply: bytes | None = None
                for _ in range(2):  # a kept-alive upstream connection may have been closed by the server
                    if up is None:
                        try:
                            up = socket.create_connection(self.upstream, timeout=self.hold_s)
                        except OSError:
                            break
                        with self._lock:
                            self._socks.append(up)
                    try:
                        reply = self._exchange(up, req)
                    except OSError:
                        reply = None
                    if reply is not None:
                        break
                    with contextlib.suppress(OSError):
                        up.close()
                    up = None
                if reply is None:
                    self._note(node, req, key, "upstream-failed", "closed")
                    return  # the client sees a broken connection, as with a dead server
                status = reply.split(b" ", 2)[1].decode()
                if action == "lost-reply":
                    self._note(node, req, key, "lost-reply", status)
                    if self.lost_reply_hold_s:
                        self._hold(client, self.lost_reply_hold_s)
                    return
                self._delay()
                client.sendall(reply)
                self._note(node, req, key, "forward", status)
                if reply.lower().find(b"\r\nconnection: close") >= 0:
                    return
        except (OSError, ValueError, IndexError):
            return
        finally:
            for s in (client, up):
                if s is not None:
                    with contextlib.suppress(OSError):
                        s.close()


@contextlib.contextmanager
def fault_proxy(upstream: str, nodes: Sequence[str], **kw: object) -> Iterator[FaultProxy]:
    """A :class:`FaultProxy` that is always closed afterwards (keywords as for the class)."""
    proxy = FaultProxy(upstream, nodes, **kw)  # type: ignore[arg-type]
    try:
        yield proxy
    finally:
        proxy.close()
