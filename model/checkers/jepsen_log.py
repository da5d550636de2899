"""Readers of two Jepsen history formats, for checking public histories (e.g. Porcupine's test data).

- ``etcd``: ``jepsen.util`` log lines of a compare-and-set register test, e.g.
  ``INFO  jepsen.util - 3\t:invoke\t:cas\t[3 0]``; values ``nil``, integers, ``[from to]``.
  ``:fail :read :timed-out`` and every ``:info`` completion are unknown outcomes; an invoke
  never completed is one too.
- ``kv``: one EDN map per line, e.g.
  ``{:process 9, :type :invoke, :f :append, :key "0", :value "x 9 0 y"}``.

OpEvent times are line numbers: these logs record only the order of events.  Lines of any
other shape are ignored (Jepsen logs interleave other messages).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from model.checkers.lin_models import FAIL, INFO, INVOKE, OK
from model.checkers.linearizable import OpEvent

_ETCD = re.compile(r"^INFO\s+jepsen\.util\s+-\s+(\d+)\s+:(invoke|ok|fail|info)\s+:(read|write|cas)"
                   r"\s+(.*?)\s*$")
_KV = re.compile(r'^\{:process (\d+), :type :(invoke|ok|fail|info), :f :(get|put|append), '
                 r':key "((?:[^"\\]|\\.)*)", :value (nil|"((?:[^"\\]|\\.)*)")\}\s*$')
_CAS = re.compile(r"^\[(-?\d+)\s+(-?\d+)\]$")


def _etcd_value(f: str, text: str) -> object:
    if text == "nil" or text.startswith(":"):
        return None
    if f == "cas":
        m = _CAS.match(text)
        if m is None:
            raise ValueError(f"cas value {text!r} is not [from to]")
        return (int(m.group(1)), int(m.group(2)))
    return int(text)


def parse_etcd_log(lines: Iterable[str]) -> list[OpEvent]:
    """Events of a Jepsen etcd register log (see the module docstring)."""
    events: list[OpEvent] = []
    for no, line in enumerate(lines, 1):
        m = _ETCD.match(line)
        if m is None:
            continue
        proc, typ, f, text = int(m.group(1)), m.group(2), m.group(3), m.group(4)
        if typ == FAIL and f == "read":
            typ = INFO  # :timed-out: nothing is known about what it read
        # an invoke carries the argument, an ok read the value read; other completions nothing
        keep = (typ == INVOKE and f != "read") or (typ == OK and f == "read")
        events.append(OpEvent(proc, typ, f, _etcd_value(f, text) if keep else None, float(no)))
    return events


def _unescape(s: str) -> str:
    return re.sub(r"\\(.)", r"\1", s)


def parse_kv_log(lines: Iterable[str]) -> list[OpEvent]:
    """Events of a Jepsen-style kv log (get/put/append of strings by key)."""
    events: list[OpEvent] = []
    for no, line in enumerate(lines, 1):
        m = _KV.match(line)
        if m is None:
            continue
        proc, typ, f = int(m.group(1)), m.group(2), m.group(3)
        key = _unescape(m.group(4))
        value = None if m.group(5) == "nil" else _unescape(m.group(6))
        if typ == INVOKE:
            events.append(OpEvent(proc, typ, f, (key, None if f == "get" else value), float(no)))
        else:
            events.append(OpEvent(proc, typ, f, value if f == "get" and typ == OK else None, float(no)))
    return events

