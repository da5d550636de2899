"""Reads HTTP/1.1 responses off a socket with code of its own (not h11), for the fault proxy's tests."""

from __future__ import annotations

from typing import BinaryIO


def read_response(f: BinaryIO, head: bool = False) -> tuple[int, dict[str, str], bytes]:
    """One response from a buffered reader: status, lower-cased headers, body (Content-Length or chunked;
    none for a reply to HEAD)."""
    line = f.readline()
    if not line:
        raise EOFError("connection closed")
    status = int(line.split()[1])
    headers: dict[str, str] = {}
    while (h := f.readline()) not in (b"\r\n", b""):
        k, v = h.decode("latin-1").split(":", 1)
        headers[k.strip().lower()] = v.strip()
    if 100 <= status < 200 or head:
        return status, headers, b""
    if headers.get("transfer-encoding", "").lower() == "chunked":
        body = b""
        while size := int(f.readline().split(b";")[0], 16):
            body += f.read(size)
            f.readline()
        f.readline()
        return status, headers, body
    return status, headers, f.read(int(headers.get("content-length", "0")))
