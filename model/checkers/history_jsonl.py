"""Reader of a history a user brings: JSON lines, one event per line (format: docs/check-history.md).

Each non-blank line is an object with ``process`` (integer or string), ``type`` (``invoke``,
``ok``, ``fail``, ``info``), ``f`` (``read``/``write``/``cas`` for the register; ``get``/``put``/
``append`` for kv), ``value`` and optionally ``time`` (a number; when absent, the line number is
the time).  Other fields are ignored.  Every defect is a :class:`HistoryError` naming the line,
the field and the value; nothing is returned for a history with a defect.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from model.checkers.lin_models import FAIL, INFO, INVOKE, OK, Operation

FUNCTIONS = {"cas-register": ("read", "write", "cas"), "kv": ("get", "put", "append")}
_TYPES = (INVOKE, OK, FAIL, INFO)
_KV_FORM = '{"key": ..., "value": ...}'


class HistoryError(ValueError):
    """A defect of the history at ``line`` (1-based), in ``field`` (or ``None`` for the whole line)."""

    def __init__(self, line: int, field: str | None, message: str) -> None:
        self.line = line
        self.field = field
        self.message = message
        where = f"line {line}" + (f", field {field!r}" if field else "")
        super().__init__(f"{where}: {message}")


@dataclass
class History:
    """Operations paired from the file, with the lines of each operation's invoke and completion."""

    ops: list[Operation]
    lines: dict[int, tuple[int, int | None]] = field(default_factory=dict)

    def locate(self, op: Operation) -> str:
        """``line 3`` or ``lines 3-7`` (the invoke and the completion)."""
        inv, done = self.lines.get(op.index, (0, None))
        return f"line {inv}" if done is None else f"lines {inv}-{done}"


def _short(v: Any) -> str:
    try:
        text = json.dumps(v) if not isinstance(v, str) else repr(v)
    except (ValueError, RecursionError):
        text = f"a {type(v).__name__} nested too deep to show"
    return text if len(text) <= 60 else text[:57] + "..."


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


def json_objects(lines: Iterable[bytes | str]) -> Iterator[tuple[int, dict[str, Any]]]:
    """(line number, object) of each non-blank line of a JSON-lines history; HistoryError naming the line
    for text that is not UTF-8, not JSON or not an object."""
    for no, raw in enumerate(lines, 1):
        if isinstance(raw, bytes):
            try:
                text = raw.decode("utf-8")
            except UnicodeDecodeError as e:
                raise HistoryError(no, None, f"not UTF-8 text (byte {e.start})") from None
        else:
            text = raw
        if not text.strip():
            continue
        try:
            obj = json.loads(text, parse_constant=_reject_constant)
        except (ValueError, RecursionError) as e:
            raise HistoryError(no, None, f"not a JSON object: {type(e).__name__}: {str(e)[:80]}") from None
        if not isinstance(obj, dict):
            raise HistoryError(no, None, f"{_short(obj)} is not a JSON object")
        yield no, obj


def _scalar(no: int, name: str, v: Any) -> Any:
    """A register value: a JSON string, finite number or null (``true`` would equal ``1`` here)."""
    if v is None or isinstance(v, str) or (isinstance(v, int) and not isinstance(v, bool)):
        return v
    if isinstance(v, float) and math.isfinite(v):
        return v
    raise HistoryError(no, name, f"{_short(v)} is not a register value (a string, a finite number or null)")


def _invoke_value(no: int, model: str, f: str, obj: dict[str, Any]) -> Any:
    v = obj.get("value")
    if model == "cas-register":
        if f == "read":
            if v is not None:
                raise HistoryError(no, "value", f"{_short(v)}: a read's invoke has no value (null or absent)")
            return None
        if f == "write":
            if "value" not in obj:
                raise HistoryError(no, "value", "missing: a write's invoke needs the value written")
            return _scalar(no, "value", v)
        if not isinstance(v, list) or len(v) != 2:
            raise HistoryError(no, "value", f"{_short(v)} is not [expected, new] for a cas")
        return (_scalar(no, "value", v[0]), _scalar(no, "value", v[1]))
    if not isinstance(v, dict) or "key" not in v:
        raise HistoryError(no, "value", f"{_short(v)} is not {_KV_FORM} for a kv operation")
    key, val = v["key"], v.get("value")
    if not isinstance(key, str):
        raise HistoryError(no, "value", f"key {_short(key)} is not a string")
    if f == "get":
        if val is not None:
            raise HistoryError(no, "value", f"value {_short(val)}: a get's invoke has none (null or absent)")
        return (key, None)
    if not isinstance(val, str):
        raise HistoryError(no, "value", f"value {_short(val)} is not a string (a {f} needs one)")
    return (key, val)


def _read_result(no: int, model: str, inv_arg: Any, obj: dict[str, Any]) -> Any:
    """The value an ok read/get returned."""
    if "value" not in obj:
        raise HistoryError(no, "value", "missing: an ok read needs the value read (null for absent)")
    v = obj["value"]
    if model == "cas-register":
        return _scalar(no, "value", v)
    if not isinstance(v, dict) or not isinstance(v.get("value"), str):
        raise HistoryError(no, "value", f"{_short(v)} is not {_KV_FORM} with a string value for an ok get")
    if "key" in v and v["key"] != inv_arg[0]:
        raise HistoryError(no, "value", f"key {_short(v['key'])} differs from the invoke's key "
                                        f"{_short(inv_arg[0])}")
    return v["value"]


def read_history(lines: Iterable[bytes | str], model: str = "cas-register") -> History:
    """Parse a JSON-lines history for ``model`` (``cas-register`` or ``kv``); raise HistoryError."""
    if model not in FUNCTIONS:
        raise ValueError(f"unknown model {model!r} (known: {', '.join(FUNCTIONS)})")
    fs = FUNCTIONS[model]
    pending: dict[Any, tuple[int, int, str, Any, float]] = {}  # process -> (index, line, f, arg, time)
    last_time: dict[Any, float] = {}
    ops: list[Operation] = []
    where: dict[int, tuple[int, int | None]] = {}
    timed: bool | None = None
    count = 0
    for no, obj in json_objects(lines):
        for name in ("process", "type", "f"):
            if name not in obj:
                raise HistoryError(no, name, "missing")
        proc = obj["process"]
        if isinstance(proc, bool) or not isinstance(proc, int | str):
            raise HistoryError(no, "process", f"{_short(proc)} is not an integer or a string")
        typ = obj["type"]
        if typ not in _TYPES:
            raise HistoryError(no, "type", f"{_short(typ)} is not one of {', '.join(_TYPES)}")
        f = obj["f"]
        if not isinstance(f, str) or f not in fs:
            raise HistoryError(no, "f", f"{_short(f)} is not an operation of the {model} model "
                                        f"({', '.join(fs)})")
        has_time = "time" in obj
        if timed is None:
            timed = has_time
        elif has_time != timed:
            raise HistoryError(no, "time", "missing while earlier lines have it" if timed else
                               "present while earlier lines have none (give it on every line or on none)")
        if has_time:
            raw_t = obj["time"]
            if isinstance(raw_t, bool) or not isinstance(raw_t, int | float):
                raise HistoryError(no, "time", f"{_short(raw_t)} is not a finite number")
            try:
                t = float(raw_t)
            except OverflowError:
                raise HistoryError(no, "time", f"{_short(raw_t)} is too large") from None
            if not math.isfinite(t):
                raise HistoryError(no, "time", f"{_short(raw_t)} is not a finite number")
            if t < last_time.get(proc, -math.inf):
                raise HistoryError(no, "time", f"{t:g} is earlier than the previous event of process "
                                               f"{_short(proc)} ({last_time[proc]:g})")
        else:
            t = float(no)
        last_time[proc] = t
        if typ == INVOKE:
            if proc in pending:
                raise HistoryError(no, "type", f"invoke while process {_short(proc)} has an operation "
                                               f"pending (invoked at line {pending[proc][1]})")
            pending[proc] = (count, no, f, _invoke_value(no, model, f, obj), t)
            count += 1
            continue
        if proc not in pending:
            raise HistoryError(no, "type", f"{typ} for process {_short(proc)}, which has no pending invoke")
        idx, inv_no, inv_f, arg, call = pending[proc]
        if f != inv_f:
            raise HistoryError(no, "f", f"{_short(f)} completes a {inv_f!r} invoked at line {inv_no}")
        result = _read_result(no, model, arg, obj) if typ == OK and f in ("read", "get") else None
        del pending[proc]
        ops.append(Operation(idx, proc, f, arg, typ, result, call, math.inf if typ == INFO else t))
        where[idx] = (inv_no, no)
    for proc, (idx, inv_no, f, arg, call) in pending.items():
        ops.append(Operation(idx, proc, f, arg, INFO, None, call, math.inf))
        where[idx] = (inv_no, None)
    ops.sort(key=lambda o: o.index)
    return History(ops, where)
