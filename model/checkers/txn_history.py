"""Transactional histories for the Elle-style checker: operations, and readers of JSON lines and EDN.

A history is a sequence of events, each an invoke or a completion (``ok``, ``fail``, ``info``) of
one transaction by one process.  A transaction's value is a list of micro-operations:

- **list-append**: ``["append", k, v]`` appends ``v`` to the list at key ``k``; ``["r", k, l]``
  reads it (``l`` a list, ``null`` in the invoke; ``null`` in an ``ok`` read means empty);
- **rw-register**: ``["w", k, v]`` sets register ``k`` to ``v``; ``["r", k, v]`` reads it
  (``null``: the initial, never-written state).

Values appended (or written) to one key are unique across the history.  An invoke never
completed is ``info`` (it may have happened or not); a ``fail`` did not happen; the reads of
``fail`` and ``info`` transactions are unknown (their micro-operations are taken from the
invoke).  JSON lines: ``{"process": 0, "type": "invoke", "value": [["append", "x", 1]], "time":
3}`` (docs/check-history.md); Jepsen EDN: ``{:type :invoke, :f :txn, :value [[:append :x 1]],
:process 0, :time 3, :index 4}`` per line, or one vector of such maps.  Every defect is a
:class:`~model.checkers.history_jsonl.HistoryError` naming the line and the field.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from model.checkers.edn import EDNError, Keyword, Symbol, read_items
from model.checkers.history_jsonl import HistoryError, json_objects

APPEND, READ, WRITE = "append", "r", "w"
LIST_APPEND, RW_REGISTER = "list-append", "rw-register"
KINDS = (LIST_APPEND, RW_REGISTER)
OK, FAIL, INFO, INVOKE = "ok", "fail", "info", "invoke"
_WRITE_F = {LIST_APPEND: APPEND, RW_REGISTER: WRITE}

Mop = tuple[str, Any, Any]  # (f, key, value)


@dataclass(frozen=True, slots=True)
class Txn:
    """One transaction: its invoke paired with its completion.

    ``id`` is the order of the invoke in the history (0-based); ``type`` is ``ok``, ``fail`` or
    ``info`` (an invoke never completed is ``info``); ``mops`` are the completion's micro-ops for
    ``ok`` and the invoke's for the others (their reads are unknown: value ``None``).  ``invoke``
    and ``complete`` are the event positions (the ``time`` when given, else the event order;
    ``complete`` is ``inf`` when there is no completion)."""

    id: int
    process: Any
    type: str
    mops: tuple[Mop, ...]
    invoke: float
    complete: float

    @property
    def ok(self) -> bool:
        """True when the transaction committed."""
        return self.type == OK


@dataclass
class TxnHistory:
    """The transactions of a history of one ``kind`` (``list-append`` or ``rw-register``), by id."""

    kind: str
    txns: list[Txn]
    lines: dict[int, tuple[int, int | None]] = field(default_factory=dict)
    timed: bool = False  # invoke/complete are the events' times; else their positions in the history

    def locate(self, txn_id: int) -> str:
        """``line 3`` or ``lines 3-7`` (the invoke and the completion)."""
        inv, done = self.lines.get(txn_id, (0, None))
        return f"line {inv}" if done is None else f"lines {inv}-{done}"


ANONYMOUS = -1  # the process of an EDN history whose operations name none (Elle pairs them in order)


def process_name(process: Any) -> str:
    """A process as the explanations name it: Jepsen's integer processes as ``p0``, a named one (``w1``) as
    it is."""
    if process == ANONYMOUS and isinstance(process, int):
        return "the unnamed process"
    return f"p{process}" if isinstance(process, int) and not isinstance(process, bool) else str(process)


def show(v: Any) -> str:
    """A key or value as the user wrote it: ``:x`` for an EDN keyword, JSON otherwise."""
    if isinstance(v, Keyword | Symbol):
        return repr(v)
    if isinstance(v, tuple | list):
        return "[" + ", ".join(show(x) for x in v) + "]"
    try:
        return json.dumps(v)
    except (TypeError, ValueError):
        return repr(v)


def show_mop(m: Mop) -> str:
    """``append x 1``, ``r x [1, 2]``, ``w x 3``."""
    f, k, v = m
    return f"{f} {show(k)} {show(v)}"


def show_txn(t: Txn) -> str:
    """``[append x 1, r y [2]]``."""
    return "[" + ", ".join(show_mop(m) for m in t.mops) + "]"


def _short(v: Any) -> str:
    text = show(v)
    return text if len(text) <= 60 else text[:57] + "..."


def _is_scalar(v: Any) -> bool:
    return (isinstance(v, str) or (isinstance(v, int) and not isinstance(v, bool))
            or (isinstance(v, float) and math.isfinite(v)))


class _Builder:
    """Pairs events into transactions and validates them (shared by the JSON and EDN readers)."""

    def __init__(self, kind: str) -> None:
        if kind not in KINDS:
            raise ValueError(f"unknown history kind {kind!r} (known: {', '.join(KINDS)})")
        self.kind = kind
        self.write_f = _WRITE_F[kind]
        self.pending: dict[Any, tuple[int, int, tuple[Mop, ...], float]] = {}
        self.last_time: dict[Any, float] = {}
        self.txns: list[Txn] = []
        self.lines: dict[int, tuple[int, int | None]] = {}
        self.written: dict[tuple[Any, Any], int] = {}  # (key, value) -> line of the invoke
        self.count = 0
        self.timed = False

    def mops(self, no: int, raw: Any, invoke: bool) -> tuple[Mop, ...]:
        if not isinstance(raw, list | tuple):
            raise HistoryError(no, "value", f"{_short(raw)} is not a list of micro-operations")
        out: list[Mop] = []
        for i, m in enumerate(raw):
            where = f"micro-op {i + 1}"
            if not isinstance(m, list | tuple) or len(m) not in (2, 3):
                raise HistoryError(no, "value", f"{where}: {_short(m)} is not [f, key, value]")
            f, k = m[0], m[1]
            v = m[2] if len(m) == 3 else None
            f = str(f) if isinstance(f, str) else f
            if f not in (READ, self.write_f):
                raise HistoryError(no, "value", f"{where}: {_short(f)} is not a micro-op of {self.kind} "
                                                f"({READ!r}, {self.write_f!r})")
            if not _is_scalar(k):
                raise HistoryError(no, "value", f"{where}: key {_short(k)} is not a string or a number")
            if f == self.write_f:
                if len(m) != 3 or not _is_scalar(v):
                    raise HistoryError(no, "value", f"{where}: {f} {_short(k)} needs a string or number "
                                                    f"value, not {_short(v)}")
            elif invoke:
                v = None  # an invoke's read has no value yet (Jepsen leaves nil)
            elif self.kind == LIST_APPEND:
                if v is None:
                    v = ()
                elif isinstance(v, list | tuple) and all(_is_scalar(x) for x in v):
                    v = tuple(v)
                else:
                    raise HistoryError(no, "value", f"{where}: read of {_short(k)} returned {_short(v)}, "
                                                    "not a list of values (or null)")
            elif v is not None and not _is_scalar(v):
                raise HistoryError(no, "value", f"{where}: read of {_short(k)} returned {_short(v)}, "
                                                "not a string, a number or null")
            out.append((f, k, v))
        return tuple(out)

    def event(self, no: int, proc: Any, typ: str, value: Any, has_value: bool, t: float | None) -> None:
        if t is None:
            t = float(no)
        elif t < self.last_time.get(proc, -math.inf):
            raise HistoryError(no, "time", f"{t:g} is earlier than the previous event of process "
                                           f"{_short(proc)} ({self.last_time[proc]:g})")
        else:
            self.timed = True
        self.last_time[proc] = t
        if typ == INVOKE:
            if proc in self.pending:
                raise HistoryError(no, "type", f"invoke while process {_short(proc)} has a transaction "
                                               f"pending (invoked at line {self.pending[proc][1]})")
            if not has_value:
                raise HistoryError(no, "value", "missing: an invoke needs its micro-operations")
            mops = self.mops(no, value, True)
            for f, k, v in mops:
                if f == self.write_f:
                    if (k, v) in self.written:
                        verb = "appended to" if f == APPEND else "written to"
                        raise HistoryError(no, "value", f"value {_short(v)} {verb} key {_short(k)} again "
                                                        f"(first at line {self.written[(k, v)]}): values "
                                                        "must be unique per key")
                    self.written[(k, v)] = no
            self.pending[proc] = (self.count, no, mops, t)
            self.count += 1
            return
        if proc not in self.pending:
            raise HistoryError(no, "type", f"{typ} for process {_short(proc)}, which has no pending invoke")
        idx, inv_no, inv_mops, call = self.pending.pop(proc)
        mops = inv_mops
        if typ == OK:
            if not has_value:
                raise HistoryError(no, "value", "missing: an ok completion needs the micro-operations "
                                                "with the values read")
            mops = self.mops(no, value, False)
            if len(mops) != len(inv_mops):
                raise HistoryError(no, "value", f"{len(mops)} micro-ops, but the invoke at line {inv_no} "
                                                f"has {len(inv_mops)}")
            for i, (a, b) in enumerate(zip(inv_mops, mops, strict=True)):
                if a[0] != b[0] or a[1] != b[1] or (a[0] == self.write_f and a[2] != b[2]):
                    raise HistoryError(no, "value", f"micro-op {i + 1}: {show_mop(b)} differs from the "
                                                    f"invoke's {show_mop(a)} (line {inv_no})")
        self.txns.append(Txn(idx, proc, typ, mops, call, t))
        self.lines[idx] = (inv_no, no)

    def done(self) -> TxnHistory:
        for proc, (idx, inv_no, mops, call) in self.pending.items():
            self.txns.append(Txn(idx, proc, INFO, mops, call, math.inf))
            self.lines[idx] = (inv_no, None)
        self.txns.sort(key=lambda t: t.id)
        return TxnHistory(self.kind, self.txns, self.lines, self.timed)


def _time(no: int, raw: Any) -> float:
    if isinstance(raw, bool) or not isinstance(raw, int | float):
        raise HistoryError(no, "time", f"{_short(raw)} is not a finite number")
    try:
        t = float(raw)
    except OverflowError:
        raise HistoryError(no, "time", f"{_short(raw)} is too large") from None
    if not math.isfinite(t):
        raise HistoryError(no, "time", f"{_short(raw)} is not a finite number")
    return t


def read_txn_jsonl(lines: Iterable[bytes | str], kind: str) -> TxnHistory:
    """Parse a JSON-lines transactional history of ``kind``; raise HistoryError naming the line."""
    b = _Builder(kind)
    timed: bool | None = None
    for no, obj in json_objects(lines):
        for name in ("process", "type"):
            if name not in obj:
                raise HistoryError(no, name, "missing")
        proc = obj["process"]
        if isinstance(proc, bool) or not isinstance(proc, int | str):
            raise HistoryError(no, "process", f"{_short(proc)} is not an integer or a string")
        typ = obj["type"]
        if typ not in (INVOKE, OK, FAIL, INFO):
            raise HistoryError(no, "type", f"{_short(typ)} is not one of invoke, ok, fail, info")
        if "f" in obj and obj["f"] != "txn":
            raise HistoryError(no, "f", f"{_short(obj['f'])}: a transaction's f is \"txn\" (or absent)")
        has_time = "time" in obj
        if timed is None:
            timed = has_time
        elif has_time != timed:
            raise HistoryError(no, "time", "missing while earlier lines have it" if timed else
                               "present while earlier lines have none (give it on every line or on none)")
        b.event(no, proc, typ, obj.get("value"), "value" in obj, _time(no, obj["time"]) if has_time else None)
    return b.done()


def _kw(v: Any) -> Any:
    return str(v) if isinstance(v, Keyword | Symbol) else v


def read_txn_edn(text: str, kind: str) -> TxnHistory:
    """Parse a Jepsen EDN history (one op map per line, or one vector of maps) of ``kind``.

    Operations of processes that are not integers (the nemesis) are skipped, as Elle does; operations that
    name no process are one process's (paired invoke, completion, in order: Elle's paper example); the
    event order is the time (Jepsen's ``:index`` order); micro-op names are keywords (``:append``,
    ``:r``, ``:w``); keys keep their EDN form (``:x`` stays a keyword)."""
    b = _Builder(kind)
    order = 0
    try:
        for no, form in read_items(text):
            if not isinstance(form, dict):
                raise HistoryError(no, None, f"{_short(form)} is not an EDN map (an operation)")
            ops = {_kw(k): v for k, v in form.items()}
            if "type" not in ops:
                raise HistoryError(no, "type", "missing")
            if "process" not in ops:  # as Elle: one anonymous process (paper-example.edn), paired in order
                ops["process"] = ANONYMOUS
            proc = ops["process"]
            if isinstance(proc, bool) or not isinstance(proc, int):
                continue  # the nemesis and other non-client processes
            typ = _kw(ops["type"])
            if typ not in (INVOKE, OK, FAIL, INFO):
                raise HistoryError(no, "type",
                                   f"{_short(ops['type'])} is not one of :invoke, :ok, :fail, :info")
            value = ops.get("value")
            if isinstance(value, list):
                value = [[_kw(m[0]), *m[1:]] if isinstance(m, list) and m else m for m in value]
            order += 1
            b.event(no, proc, typ, value, "value" in ops, float(order))
    except EDNError as e:
        raise HistoryError(e.line, None, f"not EDN: column {e.column}: {e.message}") from None
    return b.done()
