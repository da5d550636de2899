"""Hudi's storage-lock audit files, read from a table and validated as Hudi's ``locks audit validate`` does.

With the table's ``.hoodie/.locks/audit_enabled.json`` set, every lock provider's
``StorageLockProviderAuditService`` (apache/hudi 54cb1a57) writes one JSON Lines
file per provider, ``.hoodie/.locks/audit/<transactionStartTime>_<ownerId>.jsonl``,
rewritten with every record (``START`` after an acquisition, ``RENEW`` after a
renewal, ``END`` after a successful expire write; fields ``ownerId``,
``transactionStartTime``, ``timestamp`` by the writer's clock, ``state``,
``lockExpiration``, ``lockHeld``).  One file may hold several START..END cycles
of one owner.  An earlier form, one JSON object per file
(``<timestamp>-<owner8>-<state>.json``), is read too.

The validation is Hudi's (``LockAuditingCommand#validateAuditLocks``, hudi-cli,
apache/hudi 6228876c): each file is one window, from its first ``START``
(``transactionStartTime`` when there is none) to its last ``END``, or, without
an ``END``, to the ``lockExpiration`` of its last record (``parseAuditFile``,
``TransactionWindow#getEffectiveEndTime``).  Windows are sorted by start; a
window that starts before an earlier window's end overlaps it, an error; a
file without ``END`` is a warning (``validateTransactionWindows``).  In the
one-object form an owner's START..END files form one window.  Unlike Hudi,
which logs and skips a line it cannot parse, a bad line here is an error that
names the file, the line and the field.  **Timestamps are each writer's own
clock**: an overlap shorter than the writers' clock skew may be an artefact of
skew.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from backends.base import Backend
from model.runtime.effects import ListPrefix, Read
from model.runtime.history import Event

AUDIT_DIR = ".hoodie/.locks/audit"
STATES = ("START", "RENEW", "END")
_LINES = re.compile(r"\r\n|\r|\n")  # Java's BufferedReader#readLine


class AuditFormatError(ValueError):
    """Input that is not a Hudi lock audit trail; names the file, the line and the field."""


@dataclass(frozen=True)
class AuditRecord:
    """One audit record."""

    owner: str
    timestamp: int
    state: str
    lock_expiration: int | None
    lock_held: bool | None
    transaction_start: int | None  # None in the one-object-per-file form
    file: str
    line: int

    @property
    def source(self) -> str:
        return f"{self.file}:{self.line}"


def _integer(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _record(raw: object, file_name: str, line: int) -> AuditRecord:
    where = f"{file_name}:{line}"
    if not isinstance(raw, dict):
        raise AuditFormatError(f"{where}: not a JSON object: {raw!r:.80}")
    owner, ts, state = raw.get("ownerId"), raw.get("timestamp"), raw.get("state")
    if not isinstance(owner, str) or not owner:
        raise AuditFormatError(f"{where}: field ownerId = {owner!r:.80} is not a non-empty string")
    if not _integer(ts):
        raise AuditFormatError(f"{where}: field timestamp = {ts!r:.80} is not an integer (epoch ms)")
    if state not in STATES:
        raise AuditFormatError(f"{where}: field state = {state!r:.80} is not one of {', '.join(STATES)}")
    exp, held, txn = raw.get("lockExpiration"), raw.get("lockHeld"), raw.get("transactionStartTime")
    if exp is not None and not _integer(exp):
        raise AuditFormatError(f"{where}: field lockExpiration = {exp!r:.80} is not an integer (epoch ms)")
    if held is not None and not isinstance(held, bool):
        raise AuditFormatError(f"{where}: field lockHeld = {held!r:.80} is not a boolean")
    if txn is not None and not _integer(txn):
        raise AuditFormatError(f"{where}: field transactionStartTime = {txn!r:.80} is not an integer")
    assert isinstance(ts, int)
    return AuditRecord(owner, ts, str(state), exp if isinstance(exp, int) else None,
                       held if isinstance(held, bool) else None, txn if isinstance(txn, int) else None,
                       file_name, line)


def _json(text: str) -> object:
    return json.loads(text, parse_constant=lambda c: c)  # NaN / Infinity stay strings: rejected as fields


def parse_audit_text(text: str, file_name: str) -> list[AuditRecord]:
    """Records of one audit file (JSON Lines, or one JSON object); AuditFormatError names file and line."""
    out: list[AuditRecord] = []
    for n, line in enumerate(_LINES.split(text), start=1):
        if not line.strip():
            continue
        try:
            raw = _json(line)
        except ValueError:
            if not out:
                try:  # one pretty-printed object per file
                    return [_record(_json(text), file_name, 1)]
                except ValueError:
                    pass
            raise AuditFormatError(f"{file_name}:{n}: not JSON: {line[:80]!r}") from None
        except RecursionError:
            raise AuditFormatError(f"{file_name}:{n}: JSON nested too deeply") from None
        out.append(_record(raw, file_name, n))
    return out


def _decode(data: bytes, file_name: str) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        line = data[: e.start].count(b"\n") + 1
        raise AuditFormatError(f"{file_name}:{line}: not UTF-8 text") from None


LOCKS_FOLDER_FILES = ("audit_enabled.json", "table_lock.json")  # beside audit/ in .hoodie/.locks


def _is_audit_file(name: str) -> bool:
    return name.endswith((".jsonl", ".json")) and name not in LOCKS_FOLDER_FILES


def audit_folder(path: Path) -> Path:
    """The audit folder of a table base path, of its ``.hoodie/.locks`` folder, or ``path`` itself."""
    if (path / AUDIT_DIR).is_dir():
        return path / AUDIT_DIR
    if (path / "audit").is_dir():
        return path / "audit"
    if path.is_dir():
        return path
    raise AuditFormatError(f"PATH {str(path)!r}: not a folder "
                           f"(expected a table base path, its .hoodie/.locks or its {AUDIT_DIR})")


def read_local(path: Path) -> list[AuditRecord]:
    """Every record under a local table base path, ``.hoodie/.locks`` folder or audit folder."""
    folder = audit_folder(path)
    try:
        files = sorted(p for p in folder.iterdir() if p.is_file() and _is_audit_file(p.name))
    except OSError as e:
        raise AuditFormatError(f"PATH {str(folder)!r}: cannot be listed ({e.strerror})") from None
    if not files:
        raise AuditFormatError(f"PATH {str(folder)!r}: no audit files (*.jsonl or *.json)")
    records: list[AuditRecord] = []
    for f in files:
        try:
            data = f.read_bytes()
        except OSError as e:
            raise AuditFormatError(f"{f.name}: cannot be read ({e.strerror})") from None
        records += parse_audit_text(_decode(data, f.name), f.name)
    return records


def read_backend(backend: Backend, base: str) -> list[AuditRecord]:
    """Every record under ``<base>/.hoodie/.locks/audit/`` in a bucket (``base`` lies under the prefix)."""
    folder = base.rstrip("/") + "/" + AUDIT_DIR + "/"
    listed = backend.perform(ListPrefix(folder))
    if not listed.ok:
        raise AuditFormatError(f"listing {folder!r} answered {listed.outcome.name}")
    listing = (listed.body or b"").decode().split("\n")
    keys = [k for k in listing if k and _is_audit_file(k.rsplit("/", 1)[-1])]
    if not keys:
        raise AuditFormatError(f"{folder!r}: no audit files (*.jsonl or *.json)")
    out: list[AuditRecord] = []
    for key in sorted(keys):
        got = backend.perform(Read(key))
        if not got.ok or got.body is None:
            raise AuditFormatError(f"reading {key!r} answered {got.outcome.name}")
        name = key.rsplit("/", 1)[-1]
        out += parse_audit_text(_decode(got.body, name), name)
    return out


# ---- Hudi's validator ----------------------------------------------------------------


@dataclass(frozen=True)
class Window:
    """One transaction window as ``LockAuditingCommand#parseAuditFile`` builds it."""

    name: str  # the file (or, in the one-object form, the owner's cycle)
    owner: str
    start: int  # first START timestamp (transactionStartTime when there is none)
    release: int | None  # last END timestamp
    expiration: int | None  # the last record's lockExpiration
    records: tuple[AuditRecord, ...]

    @property
    def end(self) -> int:
        """``TransactionWindow#getEffectiveEndTime``: last END, else last lockExpiration, else start."""
        if self.release is not None:
            return self.release
        return self.expiration if self.expiration is not None else self.start

    @property
    def cycles(self) -> int:
        return sum(1 for r in self.records if r.state == "START")


def _window(name: str, recs: Sequence[AuditRecord]) -> Window:
    first = recs[0]
    start = next((r.timestamp for r in recs if r.state == "START"),
                 first.transaction_start if first.transaction_start is not None else first.timestamp)
    release = next((r.timestamp for r in reversed(recs) if r.state == "END"), None)
    return Window(name, first.owner, start, release, recs[-1].lock_expiration, tuple(recs))


def transaction_windows(records: Iterable[AuditRecord]) -> list[Window]:
    """One window per JSONL file (records in file order); the one-object form grouped START..END per owner."""
    by_file: dict[str, list[AuditRecord]] = {}
    single: list[AuditRecord] = []
    for r in records:
        one_object = r.transaction_start is None and r.file.endswith(".json")
        (single if one_object else by_file.setdefault(r.file, [])).append(r)
    windows = [_window(name, sorted(recs, key=lambda r: r.line)) for name, recs in by_file.items()]
    cycles: dict[str, list[AuditRecord]] = {}
    serial: dict[str, int] = {}
    for r in sorted(single, key=lambda r: (r.timestamp, r.file)):
        key = f"{r.owner}#{serial.get(r.owner, 0)}"
        cycles.setdefault(key, []).append(r)
        if r.state == "END":
            serial[r.owner] = serial.get(r.owner, 0) + 1
    windows += [_window(f"{recs[0].file} (+{len(recs) - 1} files)" if len(recs) > 1 else recs[0].file, recs)
                for recs in cycles.values()]
    return sorted(windows, key=lambda w: (w.start, w.name))


@dataclass(frozen=True)
class Overlap:
    """``[ERROR] <earlier> => overlaps with <later>``: the later window starts before the earlier one ends."""

    earlier: Window
    later: Window

    @property
    def overlap_ms(self) -> int:
        return min(self.earlier.end, self.later.end) - self.later.start

    def message(self) -> str:
        a, b = self.earlier, self.later
        return (f"{a.name} => overlaps with {b.name}: owner {b.owner[:8]} started at {b.start} before owner "
                f"{a.owner[:8]}'s window [{a.start}, {a.end}) ended ({a.end - b.start} ms, writers' clocks)")


@dataclass(frozen=True)
class AuditValidation:
    """What Hudi's ``locks audit validate`` reports for these windows."""

    windows: tuple[Window, ...]
    overlaps: tuple[Overlap, ...]
    unfinished: tuple[Window, ...] = field(default=())  # windows without END: warnings

    @property
    def result(self) -> str:
        """PASSED, WARNING (only windows without END) or FAILED (an overlap)."""
        if self.overlaps:
            return "FAILED"
        return "WARNING" if self.unfinished else "PASSED"

    def overlapping_owner_pairs(self) -> set[frozenset[str]]:
        """The owner pairs the validator flags (a one-owner pair when one owner's windows overlap)."""
        return {frozenset((o.earlier.owner, o.later.owner)) for o in self.overlaps}


def validate(records: Iterable[AuditRecord]) -> AuditValidation:
    """``validateTransactionWindows``: every later window that starts before an earlier one's end."""
    windows = transaction_windows(records)
    overlaps = [Overlap(a, b) for i, a in enumerate(windows) for b in windows[i + 1:] if b.start < a.end]
    return AuditValidation(tuple(windows), tuple(overlaps), tuple(w for w in windows if w.release is None))


def violation_owners(details: dict[str, object]) -> frozenset[str]:
    """The owners a violation is about (overlap and lost-update: two; stale-write: writer and holder)."""
    owners = details.get("owners")
    if isinstance(owners, list):
        return frozenset(str(o) for o in owners)
    return frozenset(str(details[k]) for k in ("writer", "holder") if k in details)


def visible_to_audit(result: AuditValidation, details: dict[str, object]) -> bool:
    """Would Hudi's validator have flagged this violation: does it report an overlap of these two owners?"""
    owners = violation_owners(details)
    return len(owners) == 2 and owners in result.overlapping_owner_pairs()


def window_events(windows: Sequence[Window]) -> list[Event]:
    """The windows as a lock history (``acquire ok`` at the start, ``release invoke`` at the end), for
    ``--history``; true time is ms since the earliest start, ``clock`` the writers' own readings."""
    if not windows:
        return []
    t0 = min(w.start for w in windows)
    raw: list[tuple[int, int, str, str, str, dict[str, object]]] = []
    for w in windows:
        about: dict[str, object] = {"owner": w.owner, "file": w.name, "cycles": w.cycles}
        raw.append((w.start, 0, w.owner, "acquire", "ok", about))
        end_kind = "END" if w.release is not None else "lockExpiration"
        raw.append((max(w.end, w.start), 1, w.owner, "release", "invoke", {**about, "end": end_kind}))
    raw.sort(key=lambda x: (x[0], x[1], x[2]))
    return [Event(i, t - t0, owner, owner, typ, f, value, t)
            for i, (t, _, owner, f, typ, value) in enumerate(raw)]
