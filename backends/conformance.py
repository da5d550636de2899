"""Conformance suite: grade a storage backend's conditional writes before trusting results on it.

Properties (each passes or fails, with a counterexample when it fails):

- ``create-existing``: create-if-absent on an existing key is refused and the
  object is unchanged (protocol outcome PRECONDITION_FAILED).
- ``replace-stale``: replace-if-match with a stale tag is refused (412).
- ``replace-missing``: replace-if-match on a missing key is refused and creates nothing.
- ``create-race``: N clients (32) race create-if-absent on a fresh key, R rounds
  (50): exactly one winner per round, checked by the linearizability checker
  (:mod:`model.checkers.linearizable`) over the recorded history, not by counting;
  a non-linearizable round keeps its verdict (counterexample, and the timeline
  ``hcc conformance`` draws from it).
- ``replace-race``: N clients race replace-if-match from the same tag: likewise.
- ``lost-reply-retry[CLIENT]``: a conditional write whose reply is lost (the
  server applied it) and that the harness's client policy retries once
  (``model/runtime/client.py``) sees 412, flagged ``ambiguous`` with 2 attempts; the
  object holds our body.

Separately from failures, every *deviation* from the documented behaviour of
AWS S3, GCS or Azure Blob (by the backend's dialect) is reported: a different
status code, a refused but valid precondition, a 5xx where a 412 was due.

Every property is timed, and the requests that waited out the client timeout
(``timeout_s``, 10 s by default) are counted per property: a slow suite says
where its time went (in the JSON, ``seconds`` and ``timeouts`` per property;
in the table, a note per property that had any).  ``log`` gets a line as each
property starts and ends; ``rounds_done(property, done, rounds)`` is called
after each round of a race (a progress bar).
"""

from __future__ import annotations

import contextlib
import functools
import json
import tempfile
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from backends.base import Backend, StorageError
from backends.client import call
from backends.endpoint import Endpoint
from backends.fault_proxy import FaultProxy, fault_proxy
from model.checkers import linearizable as lin
from model.config import ErrorRule
from model.runtime.client import RetryPolicy
from model.runtime.effects import (
    CreateIfAbsent,
    ListPrefix,
    Outcome,
    Read,
    ReplaceIfMatch,
    StorageEffect,
    StoreResult,
)

# documented status of each refused conditional write, by dialect
DOCUMENTED: dict[str, dict[str, tuple[int, str]]] = {
    "s3": {
        "create-existing": (412, "AWS S3 PutObject If-None-Match: * on an existing key: "
                                 "412 PreconditionFailed"),
        "replace-stale": (412, "AWS S3 PutObject If-Match with another ETag: 412 PreconditionFailed"),
        "replace-missing": (404, "AWS S3 PutObject If-Match with no current object: 404 NoSuchKey"),
    },
    "gcs": {
        "create-existing": (412, "GCS upload ifGenerationMatch=0 on a live object: 412 conditionNotMet"),
        "replace-stale": (412, "GCS upload ifGenerationMatch=<old generation>: 412 conditionNotMet"),
        "replace-missing": (412, "GCS upload ifGenerationMatch=<n> with no live object: 412 conditionNotMet"),
    },
    "azure": {
        "create-existing": (409, "Azure Put Blob If-None-Match: * on an existing blob: "
                                 "409 BlobAlreadyExists"),
        "replace-stale": (412, "Azure Put Blob If-Match with another ETag: 412 ConditionNotMet"),
        "replace-missing": (412, "Azure Put Blob If-Match with no blob (HTTP/1.1 semantics): 412"),
    },
}

DEFAULT_CLIENTS = 32
DEFAULT_ROUNDS = 50
LIN_TIMEOUT_S = 60.0  # per round; a race of 32 clients is decided in milliseconds
WAITED_OUT = 0.9  # a request with no answer after this share of the client timeout waited it out


@dataclass
class PropertyResult:
    """One graded property; a race that is not linearizable keeps the round's ``verdict``, and
    ``timeline`` is where its HTML timeline was written (by the command line)."""

    name: str
    passed: bool
    detail: str
    seconds: float = 0.0
    verdict: lin.LinVerdict | None = None
    timeline: str | None = None
    timeouts: int = 0  # requests that waited out the client timeout
    timeout_seconds: float = 0.0  # the time they waited

    def to_json(self) -> dict[str, Any]:
        """``name``, ``passed``, ``detail``, ``seconds``, ``timeouts`` (requests that waited out the client
        timeout) and ``timeout_seconds``; a non-linearizable race adds ``counterexample``, ``timeline``."""
        out: dict[str, Any] = {"name": self.name, "passed": self.passed, "detail": self.detail,
                               "seconds": round(self.seconds, 3), "timeouts": self.timeouts,
                               "timeout_seconds": round(float(self.timeout_seconds), 3)}
        if self.verdict is not None:
            out["counterexample"] = self.verdict.to_json()
        if self.timeline is not None:
            out["timeline"] = self.timeline
        return out


@dataclass
class Deviation:
    """A difference from the documented behaviour that is not (by itself) a failure."""

    property: str
    detail: str

    def to_json(self) -> dict[str, str]:
        """``property``, ``detail``."""
        return {"property": self.property, "detail": self.detail}


@dataclass
class Report:
    """The suite's result for one backend."""

    backend: str
    endpoint: str
    dialect: str
    properties: list[PropertyResult] = field(default_factory=list)
    deviations: list[Deviation] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    run_id: str = ""
    timeout_s: float = 0.0  # the clients' timeout

    @property
    def passed(self) -> bool:
        """True when every property passed (deviations do not count)."""
        return all(p.passed for p in self.properties)

    def property(self, name: str) -> PropertyResult:
        """The result of property ``name``."""
        for p in self.properties:
            if p.name == name:
                return p
        raise KeyError(name)

    def to_json(self) -> dict[str, Any]:
        """One object: ``backend``, ``properties`` (name/passed/detail), ``deviations``, ..."""
        return {
            "backend": self.backend,
            "endpoint": self.endpoint,
            "dialect": self.dialect,
            "passed": self.passed,
            "properties": [p.to_json() for p in self.properties],
            "deviations": [d.to_json() for d in self.deviations],
            "notes": list(self.notes),
            "timeout_s": self.timeout_s,
            "seconds": round(sum(p.seconds for p in self.properties), 3),
        }

    def slow_notes(self) -> list[str]:
        """One line per property whose requests waited out the client timeout: where the time went."""
        return [f"{p.name}: {_waits(p, self.timeout_s)}" for p in self.properties if p.timeouts]

    def dumps(self) -> str:
        """The JSON form as text."""
        return json.dumps(self.to_json(), indent=2)

    def table(self) -> str:
        """A plain-text table: one row per property, then the deviations."""
        width = max([len(p.name) for p in self.properties] + [8])
        lines = [f"backend {self.backend} ({self.dialect}: {self.endpoint})",
                 f"  {'property':<{width}}  result  detail"]
        for p in self.properties:
            mark = "pass" if p.passed else "FAIL"
            lines.append(f"  {p.name:<{width}}  {mark:<6}  {p.detail}")
            if p.timeline:
                lines.append(f"  {'':<{width}}          timeline: {p.timeline}")
        if self.deviations:
            lines.append("  deviations from documented behaviour:")
            lines += [f"    - {d.property}: {d.detail}" for d in self.deviations]
        else:
            lines.append("  deviations from documented behaviour: none")
        lines += [f"  note: {n}" for n in self.notes + self.slow_notes()]
        verdict = "PASS" if self.passed else "FAIL"
        failed = sum(not p.passed for p in self.properties)
        lines.append(f"  => {verdict} ({len(self.properties) - failed} passed, {failed} failed, "
                     f"{len(self.deviations)} deviations)")
        return "\n".join(lines)


def _waits(p: PropertyResult, timeout_s: float) -> str:
    many = "request" if p.timeouts == 1 else "requests"
    return (f"{p.timeouts} {many} waited out the {timeout_s:g} s client timeout "
            f"({p.timeout_seconds:.1f} s of its {p.seconds:.1f} s)")


def _raw(backend: Backend) -> str:
    answers = backend.last_answers()
    if not answers:
        return "no answer"
    return ", ".join(f"{a.status if a.status is not None else 'no reply'} {a.code}".strip() for a in answers)


def _status(backend: Backend) -> int | None:
    answers = backend.last_answers()
    return answers[-1].status if answers else None


class Suite:
    """Runs the properties against one backend (made by ``make_backend(prefix, **kw)``)."""

    def __init__(self, name: str, endpoint: Endpoint, *, rounds: int = DEFAULT_ROUNDS,
                 clients: int = DEFAULT_CLIENTS, timeout_s: float = 10.0, client: str | None = None,
                 log: Callable[[str], None] | None = None,
                 rounds_done: Callable[[str, int, int], None] | None = None) -> None:
        if rounds < 1 or clients < 2:
            raise ValueError(f"need rounds >= 1 and clients >= 2, got rounds={rounds} clients={clients}")
        self.name = name
        self.endpoint = endpoint
        self.rounds = rounds
        self.clients = clients
        self.timeout_s = timeout_s
        self.client = client
        self.log = log or (lambda _msg: None)
        self.rounds_done = rounds_done or (lambda _prop, _done, _rounds: None)
        self._waits_lock = threading.Lock()
        self._waits: list[float] = []  # this property's requests that waited out the timeout: their seconds
        self.run_id = uuid.uuid4().hex[:10]
        self.prefix = f"hcc-conformance/{self.run_id}/"
        self.report: Report | None = None

    def backend(self, **kw: Any) -> Backend:
        """A backend on the suite's prefix."""
        kw.setdefault("timeout_s", self.timeout_s)
        return self.endpoint.backend(self.prefix, client=kw.pop("client", self.client), **kw)

    def key(self, name: str) -> str:
        """A key under the suite's prefix."""
        return f"{self.prefix}{name}"

    # ---- running ---------------------------------------------------------------------

    def run(self, only: set[str] | None = None) -> Report:
        """Run every property (or those named in ``only``) and return the report.

        A missing bucket (or a service that does not answer at all) gives one
        failed ``preflight`` property instead of a page of identical failures.
        """
        with self.backend() as b:
            rep = Report(self.name, b.describe(), b.dialect, notes=list(self.endpoint.notes),
                         run_id=self.run_id, timeout_s=self.timeout_s)
            self.report = rep
            pre = b.perform(ListPrefix(self.prefix))
            if pre.outcome is Outcome.NOT_FOUND:
                rep.properties.append(PropertyResult(
                    "preflight", False, f"bucket/container {self.endpoint.bucket!r} not found ({_raw(b)}); "
                    "create it first (hcc conformance --create-bucket)"))
                return rep
            steps: list[tuple[str, Callable[[Backend], PropertyResult]]] = [
                ("create-existing", self.create_existing),
                ("replace-stale", self.replace_stale),
                ("replace-missing", self.replace_missing),
                ("create-race", self.create_race),
                ("replace-race", self.replace_race),
            ]
            for pname, fn in steps:
                if only is None or pname in only:
                    rep.properties.append(self._timed(pname, functools.partial(fn, b)))
        if only is None or any(n.startswith("lost-reply") for n in only):
            for client, kw in self._lost_reply_variants(rep.dialect):
                pname = f"lost-reply-retry[{client}]"
                rep.properties.append(self._timed(pname, functools.partial(self.lost_reply, kw)))
        return rep

    def perform(self, b: Backend, effect: StorageEffect) -> StoreResult:
        """``b.perform(effect)``, noting a request that waited out the client timeout (any thread)."""
        t0 = time.monotonic()
        res = b.perform(effect)
        self._note_wait(res, time.monotonic() - t0)
        return res

    def _note_wait(self, res: StoreResult, seconds: float) -> None:
        if res.outcome is Outcome.TIMEOUT and seconds >= WAITED_OUT * self.timeout_s:
            with self._waits_lock:
                self._waits.append(seconds)

    def _timed(self, name: str, fn: Callable[[], PropertyResult]) -> PropertyResult:
        self.log(f"{name} ...")
        with self._waits_lock:
            self._waits = []
        t0 = time.monotonic()
        try:
            res = fn()
        except StorageError as e:
            res = PropertyResult(name, False, f"refused a valid request: {e}")
            self._deviate(name, f"refused a valid request: {e}")
        except Exception as e:  # noqa: BLE001 - a crash of one property must not hide the others
            res = PropertyResult(name, False, f"error: {type(e).__name__}: {e}")
        res.seconds = time.monotonic() - t0
        with self._waits_lock:
            res.timeouts, res.timeout_seconds = len(self._waits), sum(self._waits)
        slow = f"; {_waits(res, self.timeout_s)}" if res.timeouts else ""
        self.log(f"{name} {'pass' if res.passed else 'FAIL'} in {res.seconds:.1f}s{slow}")
        return res

    def _deviate(self, prop: str, detail: str) -> None:
        assert self.report is not None
        self.report.deviations.append(Deviation(prop, detail))

    # ---- status codes ----------------------------------------------------------------

    def _grade_status(self, prop: str, backend: Backend, protocol_412: bool) -> None:
        status = _status(backend)
        want, doc = DOCUMENTED[backend.dialect][prop]
        if status != want:
            self._deviate(prop, f"answered {_raw(backend)}; documented: {doc}")
        elif protocol_412 and status != 412:
            self._deviate(prop, f"answered {_raw(backend)} where S3 and GCS answer 412 (documented for "
                          f"{backend.dialect}: {doc}); the backend maps it to PRECONDITION_FAILED")
        if status is not None and status >= 500:
            self._deviate(prop, f"5xx where a 412 was due: {_raw(backend)}")

    def create_existing(self, b: Backend) -> PropertyResult:
        """Create-if-absent on an existing key is refused and changes nothing."""
        k = self.key("create-existing")
        first = self.perform(b, CreateIfAbsent(k, b"first"))
        if not first.ok:
            return PropertyResult("create-existing", False, f"setup create answered {first.outcome.name} "
                                  f"({_raw(b)})")
        second = self.perform(b, CreateIfAbsent(k, b"second"))
        raw = _raw(b)
        self._grade_status("create-existing", b, protocol_412=True)
        now = self.perform(b, Read(k))
        if second.ok or now.body != b"first":
            return PropertyResult("create-existing", False,
                                  f"second create answered {second.outcome.name} ({raw}); object now "
                                  f"{now.body!r} (condition ignored)")
        if second.outcome is not Outcome.PRECONDITION_FAILED:
            return PropertyResult("create-existing", False, f"answered {second.outcome.name} ({raw}), "
                                  "expected PRECONDITION_FAILED")
        return PropertyResult("create-existing", True, f"PRECONDITION_FAILED ({raw})")

    def replace_stale(self, b: Backend) -> PropertyResult:
        """Replace-if-match with a stale tag is refused and changes nothing."""
        k = self.key("replace-stale")
        v1 = self.perform(b, CreateIfAbsent(k, b"v1"))
        if not v1.ok or not v1.version:
            return PropertyResult("replace-stale", False, f"setup create answered {v1.outcome.name} "
                                  f"({_raw(b)})")
        v2 = self.perform(b, ReplaceIfMatch(k, b"v2", v1.version))
        if not v2.ok:
            raw = _raw(b)
            why = f"replace with the current tag {v1.version} answered {v2.outcome.name} ({raw})"
            if v1.version.startswith('"') and v2.outcome is Outcome.PRECONDITION_FAILED:
                bare = self.perform(b, ReplaceIfMatch(k, b"v2", v1.version.strip('"')))
                if bare.ok:
                    why += "; the same tag without quotes is accepted (If-Match compared literally)"
            self._deviate("replace-stale", f"refused a valid precondition: {why}")
            return PropertyResult("replace-stale", False, f"refused a valid precondition: {why}")
        if v1.version == v2.version:
            return PropertyResult("replace-stale", False,
                                  f"version tag did not change on write ({v1.version})")
        stale = self.perform(b, ReplaceIfMatch(k, b"v3", v1.version or ""))
        raw = _raw(b)
        self._grade_status("replace-stale", b, protocol_412=True)
        now = self.perform(b, Read(k))
        if stale.ok or now.body != b"v2":
            return PropertyResult("replace-stale", False, f"stale replace answered {stale.outcome.name} "
                                  f"({raw}); object now {now.body!r} (condition ignored)")
        if stale.outcome is not Outcome.PRECONDITION_FAILED:
            return PropertyResult("replace-stale", False, f"answered {stale.outcome.name} ({raw}), expected "
                                  "PRECONDITION_FAILED")
        return PropertyResult("replace-stale", True, f"PRECONDITION_FAILED ({raw})")

    def replace_missing(self, b: Backend) -> PropertyResult:
        """Replace-if-match on a missing key is refused (404 or 412) and creates nothing."""
        k = self.key("replace-missing-src")
        src = self.perform(b, CreateIfAbsent(k, b"src"))
        if not src.ok:
            return PropertyResult("replace-missing", False, f"setup create answered {src.outcome.name} "
                                  f"({_raw(b)})")
        missing = self.key("replace-missing")
        res = self.perform(b, ReplaceIfMatch(missing, b"ghost", src.version or ""))
        raw = _raw(b)
        self._grade_status("replace-missing", b, protocol_412=False)
        now = self.perform(b, Read(missing))
        if res.ok or now.ok:
            return PropertyResult("replace-missing", False, f"replace on a missing key answered "
                                  f"{res.outcome.name} ({raw}); object now {now.body!r}")
        if res.outcome not in (Outcome.NOT_FOUND, Outcome.PRECONDITION_FAILED):
            return PropertyResult("replace-missing", False, f"answered {res.outcome.name} ({raw})")
        return PropertyResult("replace-missing", True, f"{res.outcome.name} ({raw})")

    # ---- races -----------------------------------------------------------------------

    def _race(self, b: Backend, prop: str, make: Callable[[int, int], tuple[StorageEffect, Any]],
              setup: Callable[[int], tuple[Any, str | None]]) -> PropertyResult:
        """Run ``rounds`` races of ``clients`` threads; check each round's history."""
        n = self.clients
        worst: str | None = None
        failing: lin.LinVerdict | None = None
        stats = {"ok": 0, "fail": 0, "info": 0}
        odd: dict[str, int] = {}
        for rnd in range(self.rounds):
            initial, key = setup(rnd)
            if key is None:
                return PropertyResult(prop, False, f"round {rnd}: setup failed: {initial}")
            events: list[lin.OpEvent] = []
            t_start = time.monotonic_ns()
            ev_lock = threading.Lock()
            barrier = threading.Barrier(n)
            winners: list[int] = []
            unknown_bodies: set[bytes] = set()

            def client(i: int, rnd: int = rnd, events: list[lin.OpEvent] = events, t_start: int = t_start,
                       ev_lock: threading.Lock = ev_lock, barrier: threading.Barrier = barrier,
                       winners: list[int] = winners, unknown_bodies: set[bytes] = unknown_bodies) -> None:
                effect, arg = make(rnd, i)
                barrier.wait(timeout=60)
                t0 = time.monotonic_ns()
                try:
                    res = self.perform(b, effect)
                    answers = b.last_answers()
                except StorageError as err:
                    res, answers = StoreResult(Outcome.UNAVAILABLE), []
                    label = f"refused: {err}"
                    with ev_lock:
                        odd[label] = odd.get(label, 0) + 1
                t1 = time.monotonic_ns()
                if res.ok:
                    typ = lin.OK
                elif res.outcome in (Outcome.PRECONDITION_FAILED, Outcome.NOT_FOUND):
                    typ = lin.FAIL
                else:
                    typ = lin.INFO
                with ev_lock:
                    events.append(lin.OpEvent(f"c{i}", lin.INVOKE, "cas", arg, (t0 - t_start) / 1e6))
                    events.append(lin.OpEvent(f"c{i}", typ, "cas", None, (t1 - t_start) / 1e6))
                    if res.ok:
                        winners.append(i)
                    elif typ == lin.INFO:
                        unknown_bodies.add(arg[1])
                    for a in answers:
                        if a.status not in (200, 412) and not (a.status == 409 and b.dialect == "azure"):
                            label = f"{a.status if a.status is not None else 'no reply'} {a.code}".strip()
                            odd[label] = odd.get(label, 0) + 1

            threads = [threading.Thread(target=client, args=(i,), daemon=True) for i in range(n)]
            for t in threads:
                t.start()
            for t in threads:
                t.join(timeout=self.timeout_s * 3 + 60)
            if any(t.is_alive() for t in threads):
                return PropertyResult(prop, False, f"round {rnd}: clients still running after the deadline")
            t_read = time.monotonic_ns()
            final = self.perform(b, Read(key))
            if final.outcome in (Outcome.OK, Outcome.NOT_FOUND):
                events.append(lin.OpEvent("final-read", lin.INVOKE, "read", None, (t_read - t_start) / 1e6))
                events.append(lin.OpEvent("final-read", lin.OK, "read", final.body if final.ok else None,
                                        (time.monotonic_ns() - t_start) / 1e6))
            for e in events:
                if e.type in stats:
                    stats[e.type] += 1
            verdict = lin.check(events, initial=initial, timeout=LIN_TIMEOUT_S)
            self.rounds_done(prop, rnd + 1, self.rounds)
            if verdict.result == lin.UNKNOWN:
                worst = f"round {rnd}: linearizability undecided: {verdict.explain()}"
                break
            if not verdict.valid:
                worst = (f"round {rnd}: {len(winners)} winners; {verdict.explain()}; final read "
                         f"{final.body!r}")
                failing = verdict
                break
            if final.outcome is not Outcome.OK:
                worst = (f"round {rnd}: final read answered {final.outcome.name} ({_raw(b)}); "
                         f"{len(winners)} winners, {len(unknown_bodies)} unknown outcomes")
                break
            if not (len(winners) == 1 or (not winners and final.body in unknown_bodies)):
                worst = (f"round {rnd}: {len(winners)} confirmed winners, {len(unknown_bodies)} unknown "
                         f"outcomes, final read {final.body!r}: no single winner")
                break
        if odd:
            listed = ", ".join(f"{k} x{v}" for k, v in sorted(odd.items()))
            five = {k: v for k, v in odd.items() if k[:1] == "5"}
            if five:
                self._deviate(prop, f"5xx where a 412 was due: {five}")
            self._deviate(prop, f"answers other than 200/412 during the race: {listed}")
        if worst is not None:
            return PropertyResult(prop, False, worst, verdict=failing)
        return PropertyResult(prop, True, f"{self.rounds} rounds x {n} clients: linearizable, one winner "
                              f"each (unknown outcomes: {stats['info']})")

    def create_race(self, b: Backend) -> PropertyResult:
        """N-way create-if-absent races: exactly one winner per round, linearizable."""
        def setup(rnd: int) -> tuple[Any, str | None]:
            return None, self.key(f"create-race/{rnd}")

        def make(rnd: int, i: int) -> tuple[StorageEffect, Any]:
            body = f"r{rnd}-c{i}".encode()
            return CreateIfAbsent(self.key(f"create-race/{rnd}"), body), (None, body)

        return self._race(b, "create-race", make, setup)

    def replace_race(self, b: Backend) -> PropertyResult:
        """N-way replace-if-match races from one tag: exactly one winner per round, linearizable."""
        tags: dict[int, str] = {}

        def setup(rnd: int) -> tuple[Any, str | None]:
            k = self.key(f"replace-race/{rnd}")
            base = f"base-{rnd}".encode()
            res = self.perform(b, CreateIfAbsent(k, base))
            if not res.ok or not res.version:
                return f"create answered {res.outcome.name} ({_raw(b)})", None
            tags[rnd] = res.version
            return base, k

        def make(rnd: int, i: int) -> tuple[StorageEffect, Any]:
            body = f"r{rnd}-c{i}".encode()
            base = f"base-{rnd}".encode()
            return ReplaceIfMatch(self.key(f"replace-race/{rnd}"), body, tags[rnd]), (base, body)

        return self._race(b, "replace-race", make, setup)

    # ---- lost reply ------------------------------------------------------------------

    def _lost_reply_variants(self, dialect: str) -> list[tuple[str, dict[str, Any]]]:
        if dialect != "s3":
            sdk = {"gcs": "google-cloud-storage", "azure": "azure-storage-blob"}.get(dialect, "sdk")
            return [(sdk, {})]
        return [
            ("boto3", {"client": "boto3"}),
            ("boto3-native-retries", {"client": "boto3", "native_retries": True}),
            ("minio", {"client": "minio"}),
            ("minio-native-retries", {"client": "minio", "native_retries": True}),
        ]

    @contextlib.contextmanager
    def _losing_reply(self, key: str) -> Iterator[tuple[FaultProxy, str]]:
        """The fault proxy in front of the endpoint, losing the reply to the first write of ``key`` (after the
        server applied it); yields the proxy and the URL a client must use."""
        url = self.endpoint.url
        if url is None or not url.startswith("http://"):
            raise _Skip(f"needs an http:// endpoint to put the fault proxy in front (endpoint {url!r})")
        rule = ErrorRule(node="client", key=key, method="write", status="lost-reply", count=1)
        with tempfile.TemporaryDirectory(prefix="hcc-lost-reply-") as tmp, \
                fault_proxy(url, ["client"], dialect=self.endpoint.kind, log_path=Path(tmp) / "proxy.log",
                            errors=[rule]) as proxy:
            yield proxy, proxy.url("client")

    def lost_reply(self, kw: dict[str, Any]) -> PropertyResult:
        """Create-if-absent whose reply is lost after the server applied it, then retried."""
        sdk = {"gcs": "google-cloud-storage", "azure": "azure-storage-blob"}.get(self.endpoint.kind, "boto3")
        client = kw.get("client") or sdk
        name = f"lost-reply-retry[{client}{'-native-retries' if kw.get('native_retries') else ''}]"
        native = bool(kw.get("native_retries"))
        try:
            k = self.key(f"lost-reply/{uuid.uuid4().hex[:8]}")
            with self._losing_reply(k) as (proxy, url), self.backend(url=url, **kw) as b:
                # the harness's client policy retries once (the SDK's own retries are off), or the SDK does
                t0 = time.monotonic()
                res = b.perform(CreateIfAbsent(k, b"mine")) if native else call(b, CreateIfAbsent(k, b"mine"),
                                                                                  RetryPolicy(1, 50))
                self._note_wait(res, time.monotonic() - t0)
                raw = _raw(b)
                now = self.perform(b, Read(k))
        except _Skip as s:
            return PropertyResult(name, True, f"skipped: {s}")
        lost = proxy.stats.actions.get("lost-reply", 0)
        if lost != 1:
            return PropertyResult(name, False, f"the proxy lost {lost} replies, expected 1 ({raw})")
        if now.body != b"mine":
            return PropertyResult(name, False, f"object holds {now.body!r} after the lost reply ({raw})")
        got = f"{res.outcome.name}, attempts={res.attempts}, ambiguous={res.ambiguous} ({raw})"
        if native:
            # the SDK's hidden retry: the retried write must be refused; the lost ambiguity is a finding
            if res.outcome is not Outcome.PRECONDITION_FAILED:
                return PropertyResult(name, False, f"expected the SDK's retry to see PRECONDITION_FAILED; "
                                      f"got {got}")
            if not res.ambiguous:
                self._deviate(name, "client SDK, not server: its own retry turned a lost reply into a "
                              f"plain 412 that the caller cannot tell from losing the race: {got}")
            return PropertyResult(name, True, f"SDK's own retry saw 412 (ambiguity hidden): {got}")
        if res.outcome is Outcome.PRECONDITION_FAILED and res.ambiguous and res.attempts == 2:
            return PropertyResult(name, True, f"retry saw 412, flagged ambiguous: {got}")
        return PropertyResult(name, False,
                              f"expected PRECONDITION_FAILED, attempts=2, ambiguous=True; got {got}")


class _Skip(Exception):
    pass


def run_suite(name: str, endpoint: Endpoint, *, rounds: int = DEFAULT_ROUNDS, clients: int = DEFAULT_CLIENTS,
              only: set[str] | None = None, client: str | None = None,
              log: Callable[[str], None] | None = None,
              rounds_done: Callable[[str, int, int], None] | None = None,
              timeout_s: float = 10.0) -> Report:
    """Run the conformance suite against ``endpoint`` and return its report (``log``, ``rounds_done``:
    progress as for :class:`Suite`; ``timeout_s``: the clients' timeout)."""
    return Suite(name, endpoint, rounds=rounds, clients=clients, client=client, log=log,
                 rounds_done=rounds_done, timeout_s=timeout_s).run(only)
