"""What an NBCC entry's simulated run did, read from its events, for its translation to Hudi's Spark writers
(:mod:`engines.hudi_spark.nbcc_plans`): each node's operations in the order they began, and where each of
the entry's crashes and time-triggered pauses fell among them (:func:`fault_points`).

An operation (:class:`SimAttempt`) is a writer's deltacommit attempt, or on the compaction service's node
one execution of a compaction plan (the first when it was planned, a later one when the service resumed the
plan, ``pending``) or a clustering it planned (which Hudi 1.2.0 never executes on an NBCC table, NBC1-NBC5).
An operation ends with its ``ok`` or ``fail`` record, or is cut by its node's crash (reason ``crash``); the
files it wrote (a deltacommit's logs, a compaction's base files) are those the store created before it ended.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from model.nbcc.sim_plan import TablePlan
from model.nbcc.sim_table import HEARTBEAT_REFUSED
from model.runtime.history import Event

CRASH = "crash"  # the reason of an operation its node's crash cut


@dataclass(frozen=True)
class SimAttempt:
    """One operation of the simulated run: a deltacommit attempt, a compaction plan's execution or a
    clustering plan (``op``: ``upsert``, ``compact`` or ``cluster``)."""

    writer: str
    batch: int
    attempt: int
    instant: str
    invoked_ms: int
    ok_ms: int | None  # when it completed (None: failed)
    logs_written: int  # files it wrote before failing (a compaction's: base files)
    op: str = "upsert"
    pending: bool = False  # a compaction plan's execution after an earlier one failed (the plan pending)
    reason: str | None = None  # why it failed (the model's history reason; ``crash``: its node's crash)
    inflight_ms: int | None = None  # when its .inflight file was created (None: never)
    ended_ms: int | None = None  # when it ended: its ok or fail record, or its node's crash
    files_ms: tuple[int, ...] = ()  # when each file it wrote was created

    @property
    def compaction(self) -> bool:
        """Whether it is the compaction service's (a compaction or a clustering)."""
        return self.op != "upsert"


@dataclass(frozen=True)
class Outline:
    """The simulated run's operations in invoke order; how many compaction plans no execution completed
    (and none failed part-way: not run on Hudi); when the last deltacommit ended; each node's table lock
    holds (from the store's acquiring write to its releasing one, its crash or its failed release; one never
    released lasts to the run's end)."""

    attempts: tuple[SimAttempt, ...]
    unfinished: int
    last_ms: int
    locks: dict[str, tuple[tuple[int, float], ...]]
    requested: dict[str, tuple[int, ...]]  # when the store created each requested instant a node drew


def outline(plan: TablePlan, events: Sequence[Event]) -> Outline:
    """The :class:`Outline` of ``plan``'s simulated run (its ``events``)."""
    r = _Reader(plan)
    for e in events:
        r.read(e)
    locks = {n: tuple((int(a), b) for a, b in hs) for n, hs in r.held.items() if n in r.nodes}
    unfinished = sum(1 for inst in r.planned if inst not in r.completed
                     and not any(a.instant == inst and a.reason is not None and a.logs_written >= 0
                                 and a.reason in TRANSLATED_FAILURES for a in r.out))
    requested = {n: tuple(sorted(t for i in instants for a in ("deltacommit", "compaction", "clustering")
                                 if (t := r.created.get(f"{r.prefix}.hoodie/timeline/{i}.{a}.requested"))
                                 is not None))
                 for n, instants in r.drawn.items()}
    return Outline(tuple(sorted(r.out, key=lambda a: (a.invoked_ms, a.instant))), unfinished, r.last, locks,
                   requested)


TRANSLATED_FAILURES = ("injected", CRASH)  # a compaction failing so is its compactor killed on Hudi


def left_to_the_proxy(a: SimAttempt) -> bool:
    """Whether ``a`` is a compaction the model failed for a storage fault, which is not translated (the
    proxy's to fail; it runs again when resumed): one failed part-way is its compactor killed on Hudi, and
    one a live heartbeat refused (NB34) is a ``run_compaction`` Hudi refuses too."""
    return (a.op == "compact" and a.ok_ms is None
            and a.reason not in (*TRANSLATED_FAILURES, HEARTBEAT_REFUSED))


class _Reader:
    """Reads the events in order (:func:`outline`)."""

    def __init__(self, plan: TablePlan) -> None:
        self.plan = plan
        self.writers = {f"w{i}" for i in range(1, len(plan.writers) + 1)}
        self.nodes = self.writers | {plan.compactor_node}
        self.prefix = f"{plan.base}/"
        self.created: dict[str, int] = {}  # store key -> when the store first created it
        self.owners: dict[str, str] = {}  # lock owner -> node (from its try-lock ok)
        self.held: dict[str, list[list[float]]] = {}  # node (or owner until known) -> [acquired, released]
        self.began: dict[str, dict[str, Any]] = {}  # node -> its operation under way
        self.out: list[SimAttempt] = []
        self.planned: list[str] = []  # compaction plans, in order
        self.completed: set[str] = set()
        self.drawn: dict[str, list[str]] = {}  # node -> the instant times it drew
        self.ops = 0  # the compaction service's operations so far
        self.last = 0

    def read(self, e: Event) -> None:
        v = e.value if isinstance(e.value, dict) else {}
        if e.process == "store" and e.f == "object":
            self.created.setdefault(str(v["key"]), e.time)
        elif e.process == "store" and e.f == "lock-file":
            self._lock_file(e.time, str(v["owner"]), bool(v.get("expired")))
        elif e.f == "try-lock" and e.type == "ok":
            self.owners[str(v["owner"])] = e.process
            self.held.setdefault(e.process, []).extend(self.held.pop(str(v["owner"]), []))
        elif e.f == "time" and e.type == "ok" and v.get("kind") == "instant":
            self.drawn.setdefault(e.process, []).append(str(v["instant"]))
        elif e.process == "nemesis" and e.f == "crash":
            self._end(str(v["node"]), e.time, False, CRASH)
            self._let_go(str(v["node"]), e.time)
        elif e.f == "release-failed":  # the writer goes on without it (the lock file stays until it expires)
            self._let_go(e.process, e.time)
        elif e.f == "deltacommit" and e.process in self.writers:
            if e.type == "invoke":
                self._begin(e, "upsert", int(v["batch"]), int(v["attempt"]), "deltacommit")
            elif self.began.get(e.process, {}).get("instant") == v.get("instant"):
                self.last = max(self.last, e.time)
                self._end(e.process, e.time, e.type == "ok", str(v.get("reason")), v.get("logs_written"))
        elif e.f in ("write-log", "write-base") and e.process in self.began:
            self.began[e.process]["files"].append(f"{self.prefix}p0/{v['file']}")
        elif e.process == self.plan.compactor_node:
            self._compactor(e, v)

    def _lock_file(self, t: int, owner: str, expired: bool) -> None:
        if not expired:  # acquired (whose is known at its try-lock ok): one holder at a time in the store
            for node in list(self.held):
                self._let_go(node, t)
            self.held.setdefault(self.owners.get(owner, owner), []).append([t, float("inf")])
            return
        holds = self.held.get(self.owners.get(owner, owner)) or []
        if holds and holds[-1][1] == float("inf"):
            holds[-1][1] = t

    def _let_go(self, node: str, t: int) -> None:
        """``node`` no longer holds the lock it held (crashed, or gave up a release that failed)."""
        holds = self.held.get(node) or []
        if holds and holds[-1][1] == float("inf"):
            holds[-1][1] = t

    def _compactor(self, e: Event, v: dict[str, Any]) -> None:
        if e.f == "compaction-plan" and e.type == "ok":
            self.planned.append(str(v["instant"]))
            self._begin(e, "compact", self.ops, 0, "compaction")
        elif e.f == "compaction-resume" and e.type == "info":
            self._begin(e, "compact", self.ops, 1, "compaction", pending=True)
        elif e.f == "compaction" and e.type in ("ok", "fail") and e.process in self.began:
            if e.type == "ok":
                self.completed.add(str(v["instant"]))
            self._end(e.process, e.time, e.type == "ok", str(v.get("reason")), v.get("bases_written"))
        elif e.f == "clustering-plan" and e.type == "ok":  # its execution refused at once (NBC2)
            self._begin(e, "cluster", self.ops, 0, "")
            self._end(e.process, e.time, False, "unsupported-layout")

    def _begin(self, e: Event, op: str, batch: int, attempt: int, action: str, pending: bool = False) -> None:
        instant = str(e.value["instant"])
        self.began[e.process] = {"batch": batch, "attempt": attempt, "instant": instant, "time": e.time,
                                 "op": op, "pending": pending, "files": [],
                                 "inflight": f"{self.prefix}.hoodie/timeline/{instant}.{action}.inflight"}
        if op != "upsert":
            self.ops += 1

    def _end(self, node: str, t: int, ok: bool, reason: str, written: object = None) -> None:
        b = self.began.pop(node, None)
        if b is None:
            return
        files = tuple(sorted(self.created[k] for k in b["files"] if self.created.get(k, t + 1) <= t))
        inflight = self.created.get(b["inflight"])
        self.out.append(SimAttempt(
            node, b["batch"], b["attempt"], b["instant"], b["time"], t if ok else None,
            len(files) if written is None else int(str(written)), b["op"], b["pending"],
            None if ok else reason, inflight if inflight is not None and inflight <= t else None, t, files))
