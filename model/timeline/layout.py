"""How a Hudi table lays itself out: instant times, instants, instant file names, data file names.

One module for the simulation's writers, the real-table reader and the checkers.

Instant times
-------------
Hudi names an instant with its time as ``yyyyMMddHHmmssSSS`` (``HoodieInstantTimeGenerator``,
``MILLIS_INSTANT_TIMESTAMP_FORMAT``; 14-digit second-granularity times are older tables).  The
model has two integer forms and one codec between them:

* **epoch milliseconds** (``ms``): what clocks and time generators give; arithmetic is in ms;
* **instant numbers** (``instant``): the 17-digit string read as an integer.  Equal-length digit
  strings compare as the integers they spell, so instant numbers order exactly as Hudi orders
  instant strings, and they also hold the non-dates Hudi writes (metadata-table bootstrap
  instants ``00000000000000000``, ``00000000000000001``, ...).  Files, slicing and the reader use
  instant numbers.

Time zone: the simulation formats and parses instants in **UTC** and its tables say so
(``hoodie.table.timeline.timezone=UTC``).  Hudi's default for that property is ``LOCAL``: in
apache/hudi, ``hudi-common/src/main/java/org/apache/hudi/common/table/HoodieTableConfig.java``
declares ``TIMELINE_TIMEZONE`` with ``defaultValue(HoodieTimelineTimeZone.LOCAL)``, and
``.../common/table/timeline/HoodieInstantTimeGenerator.java`` starts ``commitTimeZone`` as
``HoodieTimelineTimeZone.LOCAL``, formatting with ``ZoneId.systemDefault()`` unless it is ``UTC``
(``formatDateWitTimeZone``).  So a real writer names instants in its JVM's zone unless the table
says ``UTC``; readers compare the strings, so a zone only matters when times are converted.

Instant files (``<base>/.hoodie/`` in layout 1, table version 6; ``<base>/.hoodie/timeline/`` in
layout 2, table versions 8 and 9):

* pending: ``<t>.<action>.requested`` and ``<t>.<action>.inflight`` (layout 1 also has the COW
  ``<t>.inflight``);
* completed: ``<t>.<action>`` (layout 1) or ``<t>_<completion>.<action>`` (layout 2).

A compaction is requested as ``compaction`` and completes as ``commit``.  With a salt (the TLA+
specification's unique suffix, not a Hudi feature) the id in a name is ``<t>-<salt>``: such names
are the specification's, and Hudi does not read them.

Data files
----------
* base file: ``{fileId}_{writeToken}_{instant}.{parquet|hfile|lance}``
* log file:  ``.{fileId}_{instant}.log.{version}_{writeToken}`` (optionally ``.cdc`` suffixed);
  from table version 8 the log's instant is the deltacommit that wrote it, in version 6 it is the
  base instant of the file slice the log extends.
"""

from __future__ import annotations

import datetime as dt
import enum
import re
from dataclasses import dataclass

INSTANT_DIGITS = 17
TIMEZONE = "UTC"
LAYOUTS = ("v6", "v8")  # timeline layout 1 (table version 6) and layout 2 (table versions 8, 9)
ACTIONS = (
    "commit",
    "deltacommit",
    "replacecommit",
    "compaction",
    "logcompaction",
    "clustering",
    "rollback",
    "restore",
    "clean",
    "savepoint",
    "indexing",
    "schemacommit",
)
BASE_EXTENSIONS = ("parquet", "hfile", "lance")
PARTITION_METADATA = ".hoodie_partition_metadata"

_DIGITS17 = re.compile(r"\d{17}")


# ---- the instant-time codec -----------------------------------------------------------------


def format_instant(instant: int) -> str:
    """An instant number as Hudi's zero-padded 17-digit string."""
    if not 0 <= instant < 10**INSTANT_DIGITS:
        raise ValueError(f"instant out of the 17-digit range: {instant!r}")
    return f"{instant:0{INSTANT_DIGITS}d}"


def parse_instant(text: str) -> int:
    """A 17-digit Hudi instant string as its instant number; ValueError names the bad text."""
    if not _DIGITS17.fullmatch(text):
        raise ValueError(f"not a 17-digit Hudi instant time: {text!r}")
    return int(text)


def ms_to_instant(ms: int) -> int:
    """Epoch milliseconds as the instant number of ``yyyyMMddHHmmssSSS`` (UTC)."""
    if ms < 0:
        raise ValueError(f"instant time before the epoch: {ms}")
    secs, milli = divmod(ms, 1000)
    stamp = dt.datetime.fromtimestamp(secs, dt.UTC)
    return int(stamp.strftime("%Y%m%d%H%M%S")) * 1000 + milli


def instant_to_ms(instant: int) -> int:
    """An instant number back to epoch milliseconds (UTC); ValueError when it is not a date."""
    text = format_instant(instant)
    try:
        stamp = dt.datetime.strptime(text[:14], "%Y%m%d%H%M%S").replace(tzinfo=dt.UTC)
    except ValueError:
        raise ValueError(f"instant {text} is not a yyyyMMddHHmmssSSS time") from None
    return int(stamp.timestamp()) * 1000 + int(text[14:])


def format_time(ms: int) -> str:
    """Epoch milliseconds as Hudi's instant string ``yyyyMMddHHmmssSSS`` (UTC)."""
    return format_instant(ms_to_instant(ms))


def parse_time(text: str) -> int:
    """Hudi's ``yyyyMMddHHmmssSSS`` (UTC) back to epoch milliseconds; ValueError names the text."""
    return instant_to_ms(parse_instant(text))


# ---- instants -------------------------------------------------------------------------------


class State(enum.StrEnum):
    """Lifecycle state of an instant."""

    REQUESTED = "requested"
    INFLIGHT = "inflight"
    COMPLETED = "completed"


@dataclass(frozen=True, order=True)
class Instant:
    """One instant of a timeline.

    ``requested`` and ``completed`` are instant numbers; ``completed`` is None unless the state is
    COMPLETED, and also for a completed layout-1 instant (its name carries no completion time).
    ``action`` is the current action (``commit`` for a completed compaction), ``requested_action``
    the action it was requested as (``compaction``, ``clustering``, ...).  ``salt`` is the
    specification's suffix (empty for Hudi).
    """

    requested: int
    action: str
    state: State = State.COMPLETED
    completed: int | None = None
    requested_action: str = ""
    salt: str = ""

    def __post_init__(self) -> None:
        if self.action not in ACTIONS:
            raise ValueError(f"instant action {self.action!r} is not one of {', '.join(ACTIONS)}")
        object.__setattr__(self, "state", State(self.state))
        if self.completed is not None and self.state is not State.COMPLETED:
            raise ValueError(f"instant {self.requested}: completion time given for state {self.state}")
        if not self.requested_action:
            object.__setattr__(self, "requested_action", self.action)

    @property
    def is_completed(self) -> bool:
        """True for a completed instant."""
        return self.state is State.COMPLETED

    @property
    def id(self) -> str:
        """The id in file names: the instant time, with ``-salt`` when salted."""
        ts = format_instant(self.requested)
        return f"{ts}-{self.salt}" if self.salt else ts

    @property
    def key(self) -> tuple[int, str]:
        """Identity of the action across its states."""
        return (self.requested, self.salt)

    def file_name(self, layout: str) -> str:
        """The file name of this instant in ``layout``."""
        if self.state is not State.COMPLETED:
            return f"{self.id}.{self.action}.{self.state}"
        if layout == "v6":
            return f"{self.id}.{self.action}"
        if self.completed is None:
            raise ValueError(f"a completed v8 instant needs a completion time: {self.id}.{self.action}")
        return f"{self.id}_{format_instant(self.completed)}.{self.action}"


def check_layout(layout: str) -> None:
    """ValueError unless ``layout`` is one of :data:`LAYOUTS`."""
    if layout not in LAYOUTS:
        raise ValueError(f"timeline layout {layout!r} is not one of {', '.join(LAYOUTS)}")


def layout_of(table_version: int) -> str:
    """The timeline layout of a table version."""
    return "v8" if table_version >= 8 else "v6"


_ID = r"(?P<ts>\d+)(?:-(?P<salt>[0-9a-z]+))?"
_ACTION = r"(?P<action>[a-z_]+)"
_PENDING_RE = re.compile(rf"{_ID}\.{_ACTION}\.(?P<state>requested|inflight)")
_COW_INFLIGHT_V6_RE = re.compile(rf"{_ID}\.inflight")
_DONE_V6_RE = re.compile(rf"{_ID}\.{_ACTION}")
_DONE_V8_RE = re.compile(rf"{_ID}_(?P<done>\d+)\.{_ACTION}")


def parse_instant_name(name: str, layout: str) -> Instant | None:
    """An instant from a file name of ``layout``; None for any other file (properties, folders, ...).

    A name shaped like an instant file of a known action but with a time that is not 17 digits
    raises ValueError naming the name.
    """

    def t(text: str) -> int:
        try:
            return parse_instant(text)
        except ValueError as exc:
            raise ValueError(f"{name}: {exc}") from None

    m = _PENDING_RE.fullmatch(name)
    if m and m["action"] in ACTIONS:
        return Instant(t(m["ts"]), m["action"], State(m["state"]), salt=m["salt"] or "")
    if layout == "v8":
        m = _DONE_V8_RE.fullmatch(name)
        if m and m["action"] in ACTIONS:
            return Instant(t(m["ts"]), m["action"], State.COMPLETED, t(m["done"]), salt=m["salt"] or "")
        return None
    if m := _COW_INFLIGHT_V6_RE.fullmatch(name):
        return Instant(t(m["ts"]), "commit", State.INFLIGHT, salt=m["salt"] or "")
    m = _DONE_V6_RE.fullmatch(name)
    if m and m["action"] in ACTIONS:
        return Instant(t(m["ts"]), m["action"], State.COMPLETED, salt=m["salt"] or "")
    return None


# ---- data files -----------------------------------------------------------------------------

_WRITE_TOKEN = r"\d+-\d+-\d+"
_BASE_RE = re.compile(
    rf"(?P<file_id>[^/]+?)_(?P<token>{_WRITE_TOKEN})_(?P<instant>\d+)\.(?P<ext>parquet|hfile|lance)"
)
_LOG_RE = re.compile(
    rf"\.(?P<file_id>[^/]+)_(?P<instant>\d+)\.log\.(?P<version>\d+)_(?P<token>{_WRITE_TOKEN})"
    r"(?P<suffix>\.cdc)?"
)


@dataclass(frozen=True, order=True, slots=True)
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


@dataclass(frozen=True, slots=True)
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


# ---- where things are -----------------------------------------------------------------------


def timeline_dir(base: str, layout: str) -> str:
    """The folder (with trailing slash) holding the instant files of ``layout``."""
    check_layout(layout)
    return f"{base}/.hoodie/" if layout == "v6" else f"{base}/.hoodie/timeline/"


def instant_path(base: str, layout: str, instant: Instant) -> str:
    """The store key of an instant file."""
    return timeline_dir(base, layout) + instant.file_name(layout)


def parse_instant_path(path: str, base: str, layout: str) -> Instant | None:
    """An instant from a store key directly inside the timeline folder of ``layout``, else None."""
    folder = timeline_dir(base, layout)
    if not path.startswith(folder) or "/" in path[len(folder) :]:
        return None
    return parse_instant_name(path[len(folder) :], layout)


def properties_key(base: str) -> str:
    """``<base>/.hoodie/hoodie.properties``."""
    return f"{base}/.hoodie/hoodie.properties"


def partition_metadata_key(base: str, partition: str) -> str:
    """A partition's ``.hoodie_partition_metadata`` (Hudi writes one per partition folder)."""
    return f"{base}/{partition}/{PARTITION_METADATA}" if partition else f"{base}/{PARTITION_METADATA}"


def data_key(base: str, partition: str, f: BaseFile | LogFile) -> str:
    """Where a base or log file of ``partition`` lives."""
    return f"{base}/{partition}/{f.name}" if partition else f"{base}/{f.name}"


def aux_key(base: str, name: str) -> str:
    """An object of the harness's own under ``.hoodie/.aux/`` (Hudi readers ignore that folder)."""
    return f"{base}/.hoodie/.aux/{name}"
