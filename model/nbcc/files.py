"""Hudi instant times and data file names, as plain frozen values.

Instant representation
----------------------
An instant time is an ``int`` everywhere in ``model.nbcc``.  Hudi writes instants as 17-digit
strings ``yyyyMMddHHmmssSSS`` (metadata-table bootstrap instants are ``00000000000000000``,
``00000000000000001``, ...).  Equal-length digit strings compare exactly as the integers they
spell, so :func:`parse_instant` maps a 17-digit string to its integer and :func:`format_instant`
maps back with zero padding.  A simulator may use small integers (``10``, ``20``, ...) directly;
they format as ``00000000000000010`` etc.  Strings of any other length are rejected, because
Hudi compares instants of different lengths as strings, which integers cannot mimic.

File names
----------
* base file: ``{fileId}_{writeToken}_{instant}.{parquet|hfile|lance}``
* log file:  ``.{fileId}_{instant}.log.{version}_{writeToken}`` (optionally ``.cdc`` suffixed)

In table version 8+ the log's instant is the deltacommit that wrote it; in version 6 it is the
base instant of the file slice that the log extends.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

INSTANT_DIGITS = 17
BASE_EXTENSIONS = ("parquet", "hfile", "lance")

_INSTANT_RE = re.compile(r"\d{17}")
_WRITE_TOKEN = r"\d+-\d+-\d+"
_BASE_RE = re.compile(
    rf"(?P<file_id>[^/]+?)_(?P<token>{_WRITE_TOKEN})_(?P<instant>\d+)\.(?P<ext>parquet|hfile|lance)"
)
_LOG_RE = re.compile(
    rf"\.(?P<file_id>[^/]+)_(?P<instant>\d+)\.log\.(?P<version>\d+)_(?P<token>{_WRITE_TOKEN})"
    r"(?P<suffix>\.cdc)?"
)


def parse_instant(text: str) -> int:
    """Parse a 17-digit Hudi instant string into its integer; ValueError names the bad text."""
    if not _INSTANT_RE.fullmatch(text):
        raise ValueError(f"not a 17-digit Hudi instant time: {text!r}")
    return int(text)


def format_instant(instant: int) -> str:
    """Format an integer instant as Hudi's zero-padded 17-digit string."""
    if instant < 0 or instant >= 10**INSTANT_DIGITS:
        raise ValueError(f"instant out of the 17-digit range: {instant!r}")
    return f"{instant:0{INSTANT_DIGITS}d}"


@dataclass(frozen=True, order=True)
class BaseFile:
    """A base (columnar) file: the start of a file slice."""

    file_id: str
    write_token: str
    instant: int
    ext: str = "parquet"

    @property
    def name(self) -> str:
        """The file name as Hudi writes it."""
        return f"{self.file_id}_{self.write_token}_{format_instant(self.instant)}.{self.ext}"


@dataclass(frozen=True)
class LogFile:
    """A log file; ``instant`` is the deltacommit (v8+) or base instant (v6) in its name."""

    file_id: str
    instant: int
    version: int
    write_token: str
    suffix: str = ""

    @property
    def name(self) -> str:
        """The file name as Hudi writes it."""
        return (
            f".{self.file_id}_{format_instant(self.instant)}.log.{self.version}_{self.write_token}"
            f"{self.suffix}"
        )

    @property
    def sort_key(self) -> tuple[int, int, str, str]:
        """Hudi's LogFileComparator order: instant, then version, then write token (as text)."""
        return (self.instant, self.version, self.write_token, self.suffix)


def parse_base_file_name(name: str) -> BaseFile:
    """Parse ``{fileId}_{writeToken}_{instant}.{ext}``; ValueError names the bad name."""
    m = _BASE_RE.fullmatch(name)
    if m is None:
        raise ValueError(
            f"not a Hudi base file name ({{fileId}}_{{writeToken}}_{{instant}}."
            f"{{{'|'.join(BASE_EXTENSIONS)}}}): {name!r}"
        )
    try:
        instant = parse_instant(m["instant"])
    except ValueError as exc:
        raise ValueError(f"bad instant in base file name {name!r}: {exc}") from None
    return BaseFile(m["file_id"], m["token"], instant, m["ext"])


def parse_log_file_name(name: str) -> LogFile:
    """Parse ``.{fileId}_{instant}.log.{version}_{writeToken}``; ValueError names the bad name."""
    m = _LOG_RE.fullmatch(name)
    if m is None:
        raise ValueError(
            f"not a Hudi log file name (.{{fileId}}_{{instant}}.log.{{version}}_{{writeToken}}): {name!r}"
        )
    try:
        instant = parse_instant(m["instant"])
    except ValueError as exc:
        raise ValueError(f"bad instant in log file name {name!r}: {exc}") from None
    return LogFile(m["file_id"], instant, int(m["version"]), m["token"], m["suffix"] or "")


def is_base_file_name(name: str) -> bool:
    """True when ``name`` parses as a base file name."""
    return _BASE_RE.fullmatch(name) is not None


def is_log_file_name(name: str) -> bool:
    """True when ``name`` parses as a log file name."""
    return _LOG_RE.fullmatch(name) is not None
