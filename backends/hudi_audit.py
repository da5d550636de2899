"""Hudi's storage-lock audit files, read from a table and turned into a lock history.

With ``StorageBasedLockProvider``'s audit enabled, Hudi's
``StorageLockProviderAuditService`` writes under ``<base>/.hoodie/.locks/audit/``:

- newer releases: one JSON Lines file per transaction,
  ``<transactionStartTime>_<ownerId>.jsonl``, rewritten with every record;
- an earlier form: one JSON object per file, ``<timestamp>-<owner8>-<state>.json``.

Each record has ``ownerId``, ``timestamp`` (the writer's clock, epoch ms),
``state`` (``START`` after the lock was acquired, ``RENEW`` at each heartbeat,
``END`` at release), ``lockExpiration`` (epoch ms) and ``lockHeld``, and in
the JSONL form ``transactionStartTime``.  Both forms are read.

Conversion to :class:`model.history.Event` (one transaction = one hold; in the
one-object form, an owner's transaction runs from a START to its next END):
``START`` is an ``acquire ok`` of the owner, ``END`` a ``release invoke``; a
``RENEW`` with ``lockHeld: false`` closes the hold (``interrupted``); a
transaction with no ``END`` is held until its last ``lockExpiration`` (the
lease ran out), closed there by a ``check fail``.  True time is ms since the
earliest record.  **Timestamps are each writer's own clock**: an overlap
shorter than the writers' clock skew may be an artefact of skew, so the
overlap's length is in the message.  The mutual-exclusion checker
(``overlap`` of :func:`model.checkers.lock_run.check_lock_history`) decides.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from backends.base import Backend
from model.checkers.lock_run import check_lock_history
from model.checkers.verdict import Verdict
from model.effects import ListPrefix, Read
from model.history import Event

AUDIT_DIR = ".hoodie/.locks/audit"
STATES = ("START", "RENEW", "END")


class AuditFormatError(ValueError):
    """A record that is not a Hudi lock audit record; names the file, the line and the field."""


@dataclass(frozen=True)
class AuditRecord:
    """One audit record."""

    owner: str
    timestamp: int
    state: str
    lock_expiration: int | None
    lock_held: bool | None
    transaction: str | None  # owner@transactionStartTime; None in the one-object-per-file form
    source: str  # file:line


def _record(raw: object, where: str, file_name: str) -> AuditRecord:
    if not isinstance(raw, dict):
        raise AuditFormatError(f"{where}: not a JSON object: {raw!r:.80}")
    owner, ts, state = raw.get("ownerId"), raw.get("timestamp"), raw.get("state")
    if not isinstance(owner, str) or not owner:
        raise AuditFormatError(f"{where}: field ownerId = {owner!r} is not a non-empty string")
    if not isinstance(ts, int) or isinstance(ts, bool):
        raise AuditFormatError(f"{where}: field timestamp = {ts!r} is not an integer (epoch ms)")
    if state not in STATES:
        raise AuditFormatError(f"{where}: field state = {state!r} is not one of {', '.join(STATES)}")
    exp, held, txn = raw.get("lockExpiration"), raw.get("lockHeld"), raw.get("transactionStartTime")
    if exp is not None and (not isinstance(exp, int) or isinstance(exp, bool)):
        raise AuditFormatError(f"{where}: field lockExpiration = {exp!r} is not an integer (epoch ms)")
    if held is not None and not isinstance(held, bool):
        raise AuditFormatError(f"{where}: field lockHeld = {held!r} is not a boolean")
    if txn is not None and (not isinstance(txn, int) or isinstance(txn, bool)):
        raise AuditFormatError(f"{where}: field transactionStartTime = {txn!r} is not an integer")
    transaction = f"{owner}@{txn}" if txn is not None else None
    return AuditRecord(owner, ts, state, exp, held, transaction, where)


def parse_audit_text(text: str, file_name: str) -> list[AuditRecord]:
    """Records of one audit file (JSON Lines, or one JSON object)."""
    out: list[AuditRecord] = []
    for n, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            raw = json.loads(line)
        except ValueError:
            try:  # one pretty-printed object per file
                raw = json.loads(text)
            except ValueError as e:
                raise AuditFormatError(f"{file_name}:{n}: not JSON: {line[:80]!r}") from e
            return [_record(raw, f"{file_name}:1", file_name)]
        out.append(_record(raw, f"{file_name}:{n}", file_name))
    return out


def _is_audit_file(name: str) -> bool:
    return name.endswith((".jsonl", ".json"))


def audit_folder(path: Path) -> Path:
    """The audit folder of a table base path, or ``path`` itself when it holds the audit files."""
    if (path / AUDIT_DIR).is_dir():
        return path / AUDIT_DIR
    if path.is_dir():
        return path
    raise AuditFormatError(f"PATH {str(path)!r}: not a folder "
                           f"(expected a table base path or its {AUDIT_DIR})")


def read_local(path: Path) -> list[AuditRecord]:
    """Every record under a local table base path (or audit folder)."""
    folder = audit_folder(path)
    files = sorted(p for p in folder.iterdir() if p.is_file() and _is_audit_file(p.name))
    if not files:
        raise AuditFormatError(f"PATH {str(folder)!r}: no audit files (*.jsonl or *.json)")
    return [r for f in files for r in parse_audit_text(f.read_text(), f.name)]


def read_backend(backend: Backend, base: str) -> list[AuditRecord]:
    """Every record under ``<base>/.hoodie/.locks/audit/`` in a bucket (``base`` lies under the prefix)."""
    folder = base.rstrip("/") + "/" + AUDIT_DIR + "/"
    listed = backend.perform(ListPrefix(folder))
    if not listed.ok:
        raise AuditFormatError(f"listing {folder!r} answered {listed.outcome.name}")
    keys = [k for k in (listed.body or b"").decode().split("\n") if k and _is_audit_file(k)]
    if not keys:
        raise AuditFormatError(f"{folder!r}: no audit files (*.jsonl or *.json)")
    out: list[AuditRecord] = []
    for key in sorted(keys):
        got = backend.perform(Read(key))
        if not got.ok or got.body is None:
            raise AuditFormatError(f"reading {key!r} answered {got.outcome.name}")
        out += parse_audit_text(got.body.decode(), key.rsplit("/", 1)[-1])
    return out


def audit_events(records: Iterable[AuditRecord]) -> list[Event]:
    """The lock history the records describe (see the module doc)."""
    recs = sorted(records, key=lambda r: (r.timestamp, r.source))
    if not recs:
        return []
    t0 = recs[0].timestamp
    raw: list[tuple[int, int, str, str, str, dict[str, object], int | None]] = []
    by_txn: dict[str, list[AuditRecord]] = {}
    serial: dict[str, int] = {}  # one-object files: an owner's transaction runs from a START to its END
    for r in recs:
        key = r.transaction
        if key is None:
            key = f"{r.owner}#{serial.get(r.owner, 0)}"
            if r.state == "END":
                serial[r.owner] = serial.get(r.owner, 0) + 1
        by_txn.setdefault(key, []).append(r)
    for txn in by_txn.values():
        started = False
        closed = False
        for r in txn:
            value: dict[str, object] = {"owner": r.owner, "source": r.source, "state": r.state,
                                        "lock_expiration": r.lock_expiration}
            if r.state == "START" and not started:
                started = True
                raw.append((r.timestamp, 0, r.owner, "acquire", "ok", value, r.timestamp))
            elif r.state == "RENEW" and started and r.lock_held is False and not closed:
                closed = True
                raw.append((r.timestamp, 1, r.owner, "interrupted", "info", value, r.timestamp))
            elif r.state == "RENEW":
                raw.append((r.timestamp, 1, r.owner, "renew", "ok", value, r.timestamp))
            elif r.state == "END" and not closed:
                closed = True
                raw.append((r.timestamp, 1, r.owner, "release", "invoke", value, r.timestamp))
        if started and not closed:
            last = txn[-1]
            end = last.lock_expiration if last.lock_expiration is not None else last.timestamp
            raw.append((max(end, last.timestamp), 1, last.owner, "check", "fail",
                        {"owner": last.owner, "reason": "lease-expired", "source": last.source}, None))
    raw.sort(key=lambda x: (x[0], x[1]))
    return [Event(i, t - t0, owner, owner, typ, f, value, clock)
            for i, (t, _, owner, f, typ, value, clock) in enumerate(raw)]


def check_audit(records: Sequence[AuditRecord]) -> Verdict:
    """Mutual exclusion over the audit records: two owners holding the lock at once is a violation."""
    return check_lock_history(audit_events(records), ("overlap",))
