"""The one error type of the Hudi file codecs, and a bounds-checked big-endian reader.

Every decoding failure (bad magic, a length that runs past its block or the file, an unknown block
type or header key, a truncated Avro record, a Parquet file pyarrow refuses) raises
:class:`HudiFileError`, which names the file and the byte offset where the problem was found, never
a bare ``struct.error`` or ``IndexError``.
"""

from __future__ import annotations

import struct


class HudiFileError(ValueError):
    """A Hudi data file (log or base file) that cannot be decoded.

    ``path`` names the file (whatever the caller passed, ``<bytes>`` by default); ``offset`` is the
    byte offset in the file where the problem was found, or None when the library that read the
    file (pyarrow) does not say.
    """

    def __init__(self, path: str, offset: int | None, reason: str) -> None:
        self.path = path
        self.offset = offset
        self.reason = reason
        where = f"byte {offset}" if offset is not None else "unknown offset"
        super().__init__(f"{path}: {where}: {reason}")


class Cursor:
    """Reads big-endian integers and byte strings from ``data[pos:end]`` (Java's
    ``DataInputStream``), raising :class:`HudiFileError` with the absolute offset when a read
    would pass ``end``."""

    def __init__(self, data: bytes, path: str, pos: int = 0, end: int | None = None) -> None:
        self.data = data
        self.path = path
        self.pos = pos
        self.end = len(data) if end is None else end

    def fail(self, reason: str, offset: int | None = None) -> HudiFileError:
        """The error to raise for ``reason`` at ``offset`` (the current position by default)."""
        return HudiFileError(self.path, self.pos if offset is None else offset, reason)

    def take(self, n: int, what: str) -> bytes:
        """The next ``n`` bytes (``what`` names them in the error)."""
        if n < 0:
            raise self.fail(f"negative length {n} of {what}")
        if self.pos + n > self.end:
            raise self.fail(f"{what} needs {n} bytes but only {self.end - self.pos} remain")
        out = self.data[self.pos : self.pos + n]
        self.pos += n
        return out

    def int32(self, what: str) -> int:
        """A signed 4-byte big-endian integer (Java ``readInt``)."""
        value: int = struct.unpack(">i", self.take(4, what))[0]
        return value

    def int64(self, what: str) -> int:
        """A signed 8-byte big-endian integer (Java ``readLong``)."""
        value: int = struct.unpack(">q", self.take(8, what))[0]
        return value
