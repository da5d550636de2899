"""Building small transactional histories for the tests, in the shorthand of Elle's own tests.

``ax1`` appends 1 to x; ``rx12`` reads x = [1, 2] (list-append); ``wx1`` writes 1 to x; ``rx1`` /
``rx_`` reads x = 1 / nil (rw-register); ``rx`` reads x empty (list-append) or nil.  Keys are one
letter, values one digit.  Histories go through the JSON-lines reader, as a user's file would.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

from model.checkers.txn_check import TxnVerdict, check_txns
from model.checkers.txn_history import LIST_APPEND, TxnHistory, read_txn_jsonl

_MOP = re.compile(r"([arw])([a-z])(\d+|_|)")


def mops(s: str, kind: str = LIST_APPEND) -> list[list[Any]]:
    """The micro-ops of a shorthand transaction."""
    out: list[list[Any]] = []
    pos = 0
    for m in _MOP.finditer(s):
        assert m.start() == pos, f"bad shorthand {s!r} at {pos}"
        pos = m.end()
        f, k, v = m.groups()
        if f == "a":
            out.append(["append", k, int(v)])
        elif f == "w":
            out.append(["w", k, int(v)])
        elif kind == LIST_APPEND:
            out.append(["r", k, [int(c) for c in v if c != "_"]])
        else:
            out.append(["r", k, None if v in ("", "_") else int(v)])
    assert pos == len(s), f"bad shorthand {s!r}"
    return out


def invoke_of(ms: list[list[Any]]) -> list[list[Any]]:
    """The invoke's micro-ops: reads have no value yet."""
    return [[f, k, None if f == "r" else v] for f, k, v in ms]


Spec = str | tuple[Any, str, str]  # "ax1" or (process, type, "ax1")


def _spec(i: int, s: Spec) -> tuple[Any, str, str]:
    return (i, "ok", s) if isinstance(s, str) else s


def events(kind: str, specs: Sequence[Spec], serial: bool = False) -> list[dict[str, Any]]:
    """JSON events: each transaction invoked and completed in turn (``serial``), or all invoked
    first and then all completed, in order (concurrent: no real-time order between them).  A
    plain string is an ok transaction by process ``i``."""
    evs: list[dict[str, Any]] = []
    done: list[dict[str, Any]] = []
    for i, s in enumerate(specs):
        p, typ, text = _spec(i, s)
        ms = mops(text, kind)
        inv = {"process": p, "type": "invoke", "value": invoke_of(ms)}
        end = {"process": p, "type": typ, "value": ms if typ == "ok" else invoke_of(ms)}
        if serial:
            evs += [inv, end]
        else:
            evs.append(inv)
            done.append(end)
    return evs + done


def history(kind: str, specs: Sequence[Spec], serial: bool = False) -> TxnHistory:
    """A history through the JSON-lines reader."""
    return from_events(kind, events(kind, specs, serial))


def from_events(kind: str, evs: Sequence[dict[str, Any]]) -> TxnHistory:
    """Events (dicts) through the JSON-lines reader."""
    return read_txn_jsonl([json.dumps(e) for e in evs], kind)


def check(kind: str, specs: Sequence[Spec], models: Sequence[str] = ("strict-serializable",),
          serial: bool = False, **opts: Any) -> TxnVerdict:
    """Check a shorthand history."""
    return check_txns(history(kind, specs, serial), models, **opts)


def steps(v: TxnVerdict, kind: str) -> list[tuple[int, int, str]]:
    """The steps of the cycle of class ``kind``: (from txn, to txn, relation)."""
    return [(s["from_id"], s["to_id"], s["type"]) for s in _steps(v, kind)]


def _steps(v: TxnVerdict, kind: str) -> list[dict[str, Any]]:
    case = v.cycles[kind]
    names = v.names(case)
    out = []
    for st in case.steps:
        d = v.explain_step(st, names)
        d["from_id"], d["to_id"] = st[0], st[1]
        out.append(d)
    return out


def cycle_txns(v: TxnVerdict, kind: str) -> list[int]:
    """The transactions of the cycle of class ``kind``, in cycle order."""
    return [a for a, _, _ in v.cycles[kind].steps]
