"""An NBCC entry's crashes and time-triggered pauses as faults of Hudi's writer processes
(:class:`~engines.hudi_spark.launch.WriterFault`), for :mod:`engines.hudi_spark.nbcc_plans`.

Simulated time and the JVMs' time differ, so a fault is not placed at a time: it is placed at a request the
model's node and Hudi's process share, the fault proxy's exchange after which the process is in the same
place of its plan as the model's node was at the fault's time (:func:`engines.hudi_spark.nbcc_sim.outline`
says where that was):

- **Inside an operation, after its files began.** A deltacommit attempt (or a compaction's execution) under
  way at the fault's time, its ``.inflight`` written: the process is stopped or killed after its PUT of its
  first file of that batch (a log; a compaction's base file) when the model's had written one or more by then,
  else after its ``.inflight`` PUT (the batch's first match: :attr:`WriterFault.batch`). A crash there is the
  attempt cut part-way, as a failed attempt is (:mod:`engines.hudi_spark.nbcc_plans`).
- **Between two operations** (or before the first): at the process's first request after the history shows
  its previous batch ended (its ok or fail line, or a kill during it; ``method = "ANY"``): a read of the
  timeline while it waits for its next batch, so nothing is half-written. A batch that waits for nothing on
  storage (``after_commits`` 0, or only ``after_info``, read from the local history) makes its first request
  after its ``invoke`` line: the write's first read of the table, before it draws its instant (seen on
  nbcc-storage-faults: w2's pause on its GET of ``.hoodie``).
- A crashed node the model restarts (``restart_after_ms >= 0``) is a new process from its next batch (at
  once: the new JVM's start is the delay); one it never restarts is not started again. A pause lasts the
  entry's ``duration_ms`` (the JVM stopped, its heartbeat and lock renewal too); the lock's validity is then
  the model's (:mod:`engines.hudi_spark.nbcc_plans`), so a pause outlasting it does on Hudi what it does in
  the model.

Refused by field (ConfigError), as no request marks the same point on both sides: a fault while the model's
node holds the table lock (drawing an instant time and writing its requested instant, or committing), one
between an attempt's requested and ``.inflight`` instants, a pause triggered other than by time, and a fault
of a node that is neither a writer nor the compaction service. A fault after a node's last translated
operation (``--max-ops``) is not injected and is listed as untranslated.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from engines.hudi_spark.launch import ANY, WriterFault
from engines.hudi_spark.nbcc import PARTITION
from engines.hudi_spark.nbcc_sim import CRASH, Outline, SimAttempt, left_to_the_proxy
from model.config import ConfigError, FaultPlan

# a file of the data table (not a marker or the metadata table's, both under .hoodie/): a log, a base file
LOG_PUT = rf"^(?!.*/\.hoodie/).*/{PARTITION}/\.[^/]*\.log\."
BASE_PUT = rf"^(?!.*/\.hoodie/).*/{PARTITION}/[^./][^/]*\.parquet$"
INFLIGHT_PUT = r"table/\.hoodie/timeline/\d{17}\.deltacommit\.inflight$"
COMPACTION_INFLIGHT_PUT = r"table/\.hoodie/timeline/\d{17}\.compaction\.inflight$"


@dataclass(frozen=True)
class Mapped:
    """The entry's crashes and pauses on Hudi: the faults injected between operations and the pauses inside
    one; the crash-cut operations (node, instant) whose node the model never restarts; what is not
    injected (``--max-ops``)."""

    faults: tuple[WriterFault, ...]
    not_restarted: frozenset[tuple[str, str]]
    untranslated: tuple[str, ...]


def inside_point(a: SimAttempt, at_ms: int) -> tuple[str, int]:
    """The request inside operation ``a`` after which its process is where the model's node was at ``at_ms``
    (``a`` under way, its ``.inflight`` written): the key pattern of its first file when it had written one
    by then, else of its ``.inflight``; and how many files the model's had written."""
    written = sum(1 for t in a.files_ms if t <= at_ms)
    if a.op == "upsert":
        return (LOG_PUT if written else INFLIGHT_PUT), written
    return (BASE_PUT if written else COMPACTION_INFLIGHT_PUT), written


def map_faults(faults: FaultPlan, ol: Outline, kept: Mapping[str, Sequence[SimAttempt]]) -> Mapped:
    """The entry's crashes and time-triggered pauses (``faults``) on Hudi's processes, whose translated
    operations are ``kept`` (node -> its batches, in order); ConfigError naming the field of one that cannot
    be placed (see the module)."""
    out: list[WriterFault] = []
    not_restarted: set[tuple[str, str]] = set()
    untranslated: list[str] = []
    for i, c in enumerate(faults.crashes):
        field = f"faults.crashes[{i}]"
        if _beyond(c.node, c.at_ms, ol, kept):
            untranslated.append(f"{field} ({c.node} at {c.at_ms} ms): after its translated operations")
            continue
        ops = _ops(field, c.node, c.at_ms, ol, kept)
        cut = next((a for a in ops if a.reason == CRASH and a.ended_ms == c.at_ms), None)
        restart = c.restart_after_ms >= 0
        if cut is not None:  # the attempt it cut is a failed attempt: killed inside it (nbcc_plans)
            _check_inside(field, cut, c.at_ms)
            if not restart:
                not_restarted.add((c.node, cut.instant))
            continue
        fault = _between(field, c.node, c.at_ms, ol, ops, kept, "kill")
        nxt = 0 if fault.batch is None else fault.batch + 1
        out.append(WriterFault(**{**vars(fault), "restart_at": nxt if restart else None}))
    for i, p in enumerate(faults.pauses):
        field = f"faults.pauses[{i}]"
        if p.trigger != "time":
            raise ConfigError(f"{field}.trigger", p.trigger, "only a pause at a time is translated (a lock "
                              "acquisition or register write is not a request of Hudi's NBCC writers)")
        if _beyond(p.node, p.at_ms, ol, kept):
            untranslated.append(f"{field} ({p.node} at {p.at_ms} ms): after its translated operations")
            continue
        ops = _ops(field, p.node, p.at_ms, ol, kept)
        resume = p.duration_ms / 1000
        under_way = next((a for a in ops if a.invoked_ms <= p.at_ms < (a.ended_ms or 0)), None)
        if under_way is None:
            fault = _between(field, p.node, p.at_ms, ol, ops, kept, "pause")
            out.append(WriterFault(**{**vars(fault), "resume_after_s": resume}))
            continue
        _check_inside(field, under_way, p.at_ms)
        key, _ = inside_point(under_way, p.at_ms)
        out.append(WriterFault(p.node, "pause", key, "PUT", 1, resume,
                               batch=list(kept[p.node]).index(under_way)))
    return Mapped(tuple(out), frozenset(not_restarted), tuple(untranslated))


def _beyond(node: str, at_ms: int, ol: Outline, kept: Mapping[str, Sequence[SimAttempt]]) -> bool:
    """Whether ``node`` began an operation by ``at_ms`` that ``--max-ops`` left untranslated (a compaction
    left to the proxy is not translated either way: :func:`left_to_the_proxy`)."""
    return any(a.writer == node and a.invoked_ms <= at_ms and a not in kept.get(node, ())
               and not left_to_the_proxy(a)
               for a in ol.attempts)


def _ops(field: str, node: str, at_ms: int, ol: Outline, kept: Mapping[str, Sequence[SimAttempt]]
         ) -> list[SimAttempt]:
    """``node``'s operations of the simulated run; ConfigError when it is no writer or compaction service,
    or holds the table lock at ``at_ms``."""
    if node not in ol.locks and node not in kept:
        raise ConfigError(f"{field}.node", node, "not a writer or the compaction service of the entry")
    held = next(((a, b) for a, b in ol.locks.get(node, ()) if a <= at_ms <= b), None)
    if held is not None:
        until = "never released" if held[1] == float("inf") else f"to {int(held[1])} ms"
        raise ConfigError(f"{field}.at_ms", at_ms,
                          f"{node} holds the table lock then (from {held[0]} ms, {until}): no request of "
                          "Hudi's writer marks that point")
    return [a for a in ol.attempts if a.writer == node]


def _check_inside(field: str, a: SimAttempt, at_ms: int) -> None:
    if a.op != "cluster" and (a.inflight_ms is None or at_ms < a.inflight_ms):
        raise ConfigError(f"{field}.at_ms", at_ms,
                          f"{a.writer}'s {a.instant} is between its requested and .inflight instants then: "
                          "no request of Hudi's writer marks that point")


def _between(field: str, node: str, at_ms: int, ol: Outline, ops: Sequence[SimAttempt],
             kept: Mapping[str, Sequence[SimAttempt]], kind: str) -> WriterFault:
    """The fault at ``node``'s first request after its last operation that ended by ``at_ms`` (before its
    first: its first request); every operation it began by then is translated (:func:`_beyond`)."""
    mine = list(kept.get(node, ()))
    before = [a for a in ops if (a.ended_ms or 0) <= at_ms and a in mine]
    since = (before[-1].ended_ms or 0) if before else -1
    began = [a.invoked_ms for a in ops if since < a.invoked_ms <= at_ms]
    if any(since < t <= at_ms for t in ol.requested.get(node, ())) and not began:
        raise ConfigError(f"{field}.at_ms", at_ms, f"{node} has written its next requested instant and not "
                          "begun that attempt yet: no request of Hudi's writer marks that point")
    batch = mine.index(before[-1]) if before else None
    return WriterFault(node, kind, ".", ANY, 1, batch=batch, since="end")
