"""A minimal TCP relay that can lose one reply after the server has applied the request.

Used by the conformance suite's lost-reply property until the fault-injecting
proxy exists (the proxy will replace it: a backend only needs another endpoint
URL).  ``arm()`` makes the relay swallow the reply to the next write request
(PUT or POST) and close that connection, so the client sees a broken
connection (an unknown outcome) although the server applied the write.
"""

from __future__ import annotations

import contextlib
import socket
import threading
from collections.abc import Iterator

from backends.launchers.process import HOST


class LostReplyRelay:
    """Relay 127.0.0.1:<port> to ``upstream`` (host, port)."""

    def __init__(self, upstream_host: str, upstream_port: int) -> None:
        self.upstream = (upstream_host, upstream_port)
        self._armed = threading.Event()
        self.dropped = 0
        self._lock = threading.Lock()
        self._srv = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._srv.bind((HOST, 0))
        self._srv.listen(64)
        self.port = int(self._srv.getsockname()[1])
        self._closed = False
        self._conns: list[socket.socket] = []
        threading.Thread(target=self._accept, name="lost-reply-accept", daemon=True).start()

    @property
    def url(self) -> str:
        """``http://127.0.0.1:<port>``."""
        return f"http://{HOST}:{self.port}"

    def arm(self) -> None:
        """Lose the next reply."""
        self._armed.set()

    def _accept(self) -> None:
        while not self._closed:
            try:
                client, _ = self._srv.accept()
            except OSError:
                return
            try:
                up = socket.create_connection(self.upstream, timeout=10)
                up.settimeout(None)
            except OSError:
                client.close()
                continue
            with self._lock:
                self._conns += [client, up]
            doomed = threading.Event()
            threading.Thread(target=self._pump, args=(client, up, doomed, False), daemon=True).start()
            threading.Thread(target=self._pump, args=(up, client, doomed, True), daemon=True).start()

    def _pump(self, src: socket.socket, dst: socket.socket, doomed: threading.Event, replies: bool) -> None:
        try:
            while True:
                data = src.recv(65536)
                if not data:
                    break
                if not replies and self._armed.is_set() and data.startswith((b"PUT ", b"POST ")):
                    with self._lock:
                        if self._armed.is_set():
                            self._armed.clear()
                            doomed.set()
                if replies and doomed.is_set():
                    # pass interim "100 Continue" answers on, so the client sends its body
                    while data.startswith(b"HTTP/1.1 100") and b"\r\n\r\n" in data:
                        head, _, data = data.partition(b"\r\n\r\n")
                        dst.sendall(head + b"\r\n\r\n")
                    if data.startswith(b"HTTP/1.1 100"):
                        dst.sendall(data)
                        continue
                    if not data:
                        continue
                    with self._lock:
                        self.dropped += 1
                    break
                dst.sendall(data)
        except OSError:
            pass
        finally:
            for s in (src, dst):
                with contextlib.suppress(OSError):
                    s.shutdown(socket.SHUT_RDWR)
                s.close()

    def close(self) -> None:
        """Stop accepting and close every relayed connection."""
        self._closed = True
        with contextlib.suppress(OSError):
            self._srv.close()
        with self._lock:
            for s in self._conns:
                with contextlib.suppress(OSError):
                    s.close()


@contextlib.contextmanager
def lost_reply_relay(url: str) -> Iterator[LostReplyRelay]:
    """A relay in front of ``url`` (``http://host:port[/path]``); yields it, closes it afterwards."""
    import urllib.parse

    u = urllib.parse.urlsplit(url)
    if u.scheme != "http" or not u.hostname or not u.port:
        raise ValueError(f"lost-reply relay needs an http://host:port URL, got {url!r}")
    relay = LostReplyRelay(u.hostname, u.port)
    try:
        yield relay
    finally:
        relay.close()
