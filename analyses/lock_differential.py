"""Differential testing of the lock model against Hudi's own provider, on generated schedules.

As Amazon's ShardStore checks its executable model against its implementation: Hypothesis draws a
:class:`Schedule` (2-3 nodes; a sequence of provider calls, each node's ``tryLock(wait)``, ``unlock()``
and ``close()``, with gaps in between during which a holder's heartbeat renews; storage faults from the
fault space of the bug search, each an error rule of the fault proxy on a node, the lock file or any key,
reads or writes, a status or a lost reply or a timeout, for its first one or two hits; a clock offset
per node within RFC-91's 500 ms), and the same schedule runs twice against the same launched server,
under fresh prefixes: once in the thread world with the model's provider
(:class:`model.lock.provider.StorageLockProvider`) and once in the hudi world with Hudi's
(:class:`backends.hudi.world.HudiLockProvider`, a JVM per node, kept across schedules). Both run the
same script writer (:func:`script_writer`), so the steps start in the same order.

What each side did is an :class:`Observation`; :func:`compare` finds the differences:

- ``outcome``: each call's outcome (acquired, reentrant, refused: tryLock's wait ran out, an exception
  and its kind as LockManager tells them apart, released, failed);
- ``requests``: the requests each node's call sent, in order, as the proxy saw them (method, the key
  relative to the table, the precondition with versions numbered in order of appearance, the proxy's
  action or the server's status);
- ``background``: the requests a node sent outside its calls (the heartbeat's renewals and their audit
  records), counted by kind;
- ``lock-file`` and ``audit``: the lock file left (its owner, whether expired) and each audit file's
  owner and record states.

Declared divergences (:data:`DECLARED`): what real time cannot pin, with the reason. Everything else
is a divergence; the search shrinks the first one it finds to a minimal schedule.
"""

from __future__ import annotations

import concurrent.futures
import dataclasses
import json
import re
import threading
import time
from collections import Counter
from collections.abc import Callable, Generator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import seed as hypothesis_seed
from hypothesis import strategies as st
from hypothesis.errors import Flaky

from backends.endpoint import Endpoint
from backends.fault_proxy import Exchange
from backends.hudi.world import HudiNode, run_hudi_world
from backends.realworld import (
    RealWorld,
    clear_prefix,
    map_scenario_keys,
    node_backends,
    read_prefix,
    seed_lock_table,
)
from model.config import ClockSpec, ErrorRule, FaultPlan, LockConfig, Scenario, StorageConfig, WorkloadConfig
from model.lock.provider import StorageLockProvider
from model.runtime.effects import Effect, Now, Record, Sleep
from model.runtime.history import Event
from model.runtime.kernel import WriterContext
from model.workloads.lock import LockWorkload

NODES = ("w1", "w2", "w3")
OPS = ("acquire", "release", "close")
# tryLock's wait: one pass (then its 1 s poll sleep), or two passes 1 s apart (Hudi polls every second);
# a wait of 0 makes no pass at all (the loop's deadline has passed), in Hudi and in the model
WAITS_MS = (1, 1_500)
GAPS_MS = (0, 300, 1_500)  # before the next step: none, inside a renew interval, across one renewal
# The fault space of the bug search (analyses/bug_search.py), with 412 (which the proxy answers too)
STATUSES = ("503", "412", "429", "409", "timeout", "lost-reply")
KEYS = ("lock", "any")
METHODS = ("write", "read", "any")
VALIDITY_SECS, RENEW_SECS = 10, 1  # the smallest lease Hudi accepts

DECLARED = {
    "background": "the heartbeat renews at a fixed rate on its own timer (Java's scheduleAtFixedRate, the "
                  "model's timer task): how many renewals fall between two steps depends on real time, so "
                  "background requests are compared by kind, their counts within one per gap",
    "audit-renew": "each renewal writes an audit RENEW record: the records follow the renewals (above), so "
                   "an audit file's states are compared without them",
    "ranged-read": "the model's Azure backend reads a blob with a ranged GET, answered 206, where Hudi's "
                   "Azure client reads it whole, answered 200: a read's 206 is compared as 200",
    "audit-enable-head": "Hudi's S3 client reads the audit enable file with readObject(path, "
                         "checkExistsFirst = true): a HEAD, then a GET (AuditServiceFactory#isAuditEnabled); "
                         "the model sends the GET alone. The HEAD is left out of the comparison; a fault "
                         "that hits it still shows, as a different audit trail",
}
_DECLARED_REQUESTS = re.compile(r"^HEAD \.hoodie/\.locks/audit_enabled\.json -> 200$")


@dataclass(frozen=True)
class Step:
    """One provider call of a node (``acquire``: tryLock(wait_ms)), then ``gap_ms`` before the next step.

    A node's first call, and its first after a ``close``, builds a new provider (a new owner id)."""

    node: str
    op: str
    wait_ms: int = 0
    gap_ms: int = 0


@dataclass(frozen=True)
class Fault:
    """An error rule of the fault proxy: the first ``count`` requests of ``node`` that match."""

    node: str
    key: str
    method: str
    status: str
    count: int = 1


@dataclass(frozen=True)
class Schedule:
    """A generated schedule: the steps in the order they start, the faults, each node's clock offset."""

    nodes: tuple[str, ...]
    steps: tuple[Step, ...]
    faults: tuple[Fault, ...] = ()
    offsets_ms: tuple[int, ...] = ()

    def scenario(self, flavor: str = "s3") -> Scenario:
        """The lock scenario both worlds run it in: Hudi's smallest lease, its audit trail on, the lock
        client of ``flavor`` (the server's kind: ``s3`` or ``azure``)."""
        run_ms = sum(s.gap_ms + s.wait_ms for s in self.steps) + 15_000 * len(self.steps) + 10_000
        return Scenario(
            name="differential", duration_ms=run_ms, expect="ok",
            lock=LockConfig(validity_secs=VALIDITY_SECS, renew_interval_secs=RENEW_SECS,
                            client_num_retries=0, wait_time_ms=0),
            storage=StorageConfig(flavor=flavor),
            workload=WorkloadConfig(writers=len(self.nodes)),
            clocks={n: ClockSpec(offset_ms=o)
                    for n, o in zip(self.nodes, self.offsets_ms, strict=False) if o},
            faults=FaultPlan(errors=tuple(ErrorRule(node=f.node, key=f.key, method=f.method, status=f.status,
                                                    count=f.count) for f in self.faults)))

    def to_json(self) -> str:
        """The schedule as JSON (``hcc differential lock --replay FILE`` reads it back)."""
        return json.dumps(dataclasses.asdict(self), indent=1)

    @classmethod
    def from_json(cls, text: str) -> Schedule:
        """Read back :meth:`to_json`'s text; ValueError naming the field that is wrong."""
        data = json.loads(text)
        try:
            return cls(tuple(data["nodes"]), tuple(Step(**s) for s in data["steps"]),
                       tuple(Fault(**f) for f in data.get("faults", ())), tuple(data.get("offsets_ms", ())))
        except (KeyError, TypeError) as e:
            raise ValueError(f"not a differential schedule: {e}") from None

    def lines(self) -> list[str]:
        """The schedule, one line per step and fault."""
        out = [f"nodes {', '.join(self.nodes)}"
               + (f"; clock offsets {dict(zip(self.nodes, self.offsets_ms, strict=False))} ms"
                  if any(self.offsets_ms) else "")]
        out += [f"fault: {f.node} {f.method} {f.key} -> {f.status} (first {f.count})" for f in self.faults]
        out += [f"{i:>3} {s.node} {s.op}{f'({s.wait_ms} ms)' if s.op == 'acquire' else ''}"
                f"{f', then {s.gap_ms} ms' if s.gap_ms else ''}" for i, s in enumerate(self.steps)]
        return out


@st.composite
def schedules(draw: st.DrawFn, max_steps: int = 8) -> Schedule:
    """Schedules of 2-3 nodes and up to ``max_steps`` calls; every node closes its provider at the end."""
    n = draw(st.integers(2, 3))
    nodes = NODES[:n]
    body = draw(st.lists(st.builds(Step, st.sampled_from(nodes), st.sampled_from(OPS),
                                   st.sampled_from(WAITS_MS), st.sampled_from(GAPS_MS)),
                         min_size=1, max_size=max_steps))
    faults = [f if f.status != "412" else dataclasses.replace(f, method="write")  # only a write gets 412
              for f in draw(st.lists(st.builds(Fault, st.sampled_from(nodes), st.sampled_from(KEYS),
                                               st.sampled_from(METHODS), st.sampled_from(STATUSES),
                                               st.integers(1, 2)), max_size=2))]
    offsets = draw(st.lists(st.sampled_from((0, 0, 200, -200, 450)), min_size=n, max_size=n))
    return Schedule(nodes, (*body, *(Step(node, "close") for node in nodes)), tuple(faults), tuple(offsets))


# ---- running a schedule --------------------------------------------------------------------------


class Sequencer:
    """The steps' order across a run's nodes: step i starts once step i - 1 ended and its gap passed."""

    def __init__(self, total: int) -> None:
        self.total = total
        self.next = 0
        self.not_before = 0
        self.lock = threading.Lock()

    def done(self) -> bool:
        return self.next >= self.total


def script_writer(seq: Sequencer, steps: Sequence[Step]) -> Callable[[WriterContext, Callable[[], Any]], Any]:
    """The writer of every node in both worlds: its steps in their turn, each call's outcome recorded."""

    def writer(ctx: WriterContext, new_provider: Callable[[], Any]) -> Generator[Effect, Any, None]:
        provider: Any = None
        for i, step in enumerate(steps):
            if step.node != ctx.node:
                continue
            while True:
                now: int = yield Now(monotonic=True)
                if seq.next == i and now >= seq.not_before:
                    break
                yield Sleep(5)
            yield Record("step", "invoke", {"step": i, "op": step.op})
            outcome = "no-provider"
            if step.op == "acquire":
                if provider is None:
                    provider = new_provider()
                    yield from provider.open()
                if (yield from provider.try_lock(step.wait_ms)):
                    outcome = "reentrant" if provider.reentrant else "acquired"
                else:
                    kind = provider.error_kind
                    outcome = "refused" if kind == "timeout" else f"threw:{kind}"
            elif step.op == "release" and provider is not None:
                outcome = "released" if (yield from provider.unlock()) else "failed"
            elif step.op == "close" and provider is not None:
                yield from provider.close()
                provider, outcome = None, "closed"
            owner = provider.owner if provider is not None else None
            yield Record("step", "ok", {"step": i, "op": step.op, "outcome": outcome, "owner": owner})
            now = yield Now(monotonic=True)
            seq.not_before = now + step.gap_ms
            seq.next = i + 1

    return writer


@dataclass
class Observation:
    """What one side did with a schedule (see the module doc), normalised to compare."""

    side: str
    outcomes: list[tuple[int, str, str, str]] = field(default_factory=list)  # step, node, op, outcome
    requests: dict[int, list[str]] = field(default_factory=dict)  # step -> the node's requests in it
    background: dict[str, Counter[str]] = field(default_factory=dict)  # node -> requests outside its steps
    lock_file: str = "none"
    audit: list[str] = field(default_factory=list)
    seconds: float = 0.0
    error: str | None = None


def run_side(side: str, schedule: Schedule, ep: Endpoint, prefix: str, *, version: str = "",
             nodes: dict[str, HudiNode] | None = None, log_dir: Path | None = None) -> Observation:
    """Run ``schedule`` in the thread world with the model (``side`` "model") or in the hudi world with
    Hudi's provider ("hudi", ``nodes`` the JVMs kept across schedules) under ``prefix``; observe it."""
    scenario = schedule.scenario(ep.kind)
    seq = Sequencer(len(schedule.steps))
    writer = script_writer(seq, schedule.steps)
    exchanges: list[Exchange] = []
    started = time.monotonic()
    if side == "hudi":
        result = run_hudi_world(scenario, ep, version=version, prefix=prefix, log_dir=log_dir, nodes=nodes,
                                writer_for=writer, done=seq.done)
        events = result.result.events
        exchanges = result.exchanges
    else:
        events = _run_model(scenario, ep, prefix, writer, seq, exchanges, log_dir)
    objects = read_prefix(ep, prefix)
    obs = observe(side, map_scenario_keys(scenario, prefix), events, exchanges, objects)
    obs.seconds = time.monotonic() - started
    if not seq.done():
        obs.error = f"the script stopped at step {seq.next} of {seq.total}"
    return obs


def _run_model(scenario: Scenario, ep: Endpoint, prefix: str, writer: Any, seq: Sequencer,
               exchanges: list[Exchange], log_dir: Path | None) -> list[Event]:
    mapped = map_scenario_keys(scenario, prefix)
    clear_prefix(ep, prefix)
    seed_lock_table(ep, prefix, mapped)
    holder: list[RealWorld] = []
    names = mapped.workload.nodes()

    def factory(ctx: WriterContext) -> Any:
        def new_provider() -> StorageLockProvider:
            return StorageLockProvider(mapped.lock, ctx.new_id, mapped.storage.flavor)

        return writer(ctx, new_provider)

    with node_backends(mapped, ep, names, prefix=prefix, log_dir=log_dir or Path("."), seed=mapped.seed,
                       clock_ms=lambda: holder[0].now_ms() if holder else 0, use_proxy=True,
                       on_exchange=exchanges.append) as (backends, _proxy):
        world = RealWorld(mapped, backends, workload=LockWorkload(mapped, factory=factory), done=seq.done)
        holder.append(world)
        return world.run()


_AUDIT = re.compile(r"audit/(\d+)_(.+)\.jsonl$")


def observe(side: str, scenario: Scenario, events: Sequence[Event], exchanges: Sequence[Exchange],
            objects: Mapping[str, bytes]) -> Observation:
    """Normalise one side's run: owner ids numbered in order of appearance, versions relative to the lock
    file's writes, keys relative to the table, each request put in the step of its node that was
    running, or in the background."""
    obs = Observation(side)
    owners: dict[str, str] = {}
    base = scenario.lock.base_path + "/"

    def owner(o: str | None) -> str:
        if o is None:
            return "-"
        return owners.setdefault(o, f"p{len(owners) + 1}")

    written: list[str] = []  # the versions of the lock file each successful write left, in order

    def version(v: str | None) -> str:
        """An If-Match relative to the lock file's writes: ``current`` (the last one), ``stale-N`` (N
        writes back), ``unknown``: absolute versions differ between runs, where renewals are counted."""
        v = (v or "").strip('"')
        if v in written:
            back = len(written) - 1 - written[::-1].index(v)
            return "current" if back == len(written) - 1 else f"stale-{len(written) - 1 - back}"
        return "unknown"

    windows: dict[str, list[tuple[int, int, int]]] = {}  # node -> (step, start, end)
    starts: dict[int, int] = {}
    for e in events:
        if e.f != "step" or not isinstance(e.value, dict):
            continue
        if e.type == "invoke":
            starts[e.value["step"]] = e.time
        elif e.type == "ok":
            i = e.value["step"]
            obs.outcomes.append((i, e.node, e.value["op"], e.value["outcome"]))
            owner(e.value.get("owner"))
            windows.setdefault(e.node, []).append((i, starts.get(i, e.time), e.time))

    def key(k: str) -> str:
        k = k[len(base):] if k.startswith(base) else k
        m = _AUDIT.search(k)
        return f"audit/{owner(m.group(2))}" if m else k

    holders: dict[str, tuple[str, bool]] = {}  # a lock file version -> (its owner, expired)
    for ex in sorted(exchanges, key=lambda x: x.at_ms):
        pre = (f"if-match {version(ex.if_match)}" if ex.if_match is not None
               else "if-none-match *" if ex.if_none_match == "*" else "")
        answer = ("200" if ex.status == 206 else str(ex.status)) if ex.action == "forward" else ex.action
        text = " ".join(x for x in (ex.method, key(ex.key), pre, "->", answer) if x)
        heartbeat = _heartbeat_write(ex, scenario.lock.lock_key, holders)
        if ex.status is not None and 200 <= ex.status < 300 and ex.method == "PUT" \
                and ex.key == scenario.lock.lock_key and ex.version:
            written.append(ex.version.strip('"'))
            data = _json(ex.body)
            holders[ex.version.strip('"')] = (str(data.get("owner")), bool(data.get("expired")))
        if _DECLARED_REQUESTS.match(text):
            continue
        step = next((i for i, start, end in windows.get(ex.node, ()) if start <= ex.at_ms <= end), None)
        if step is None or heartbeat:
            obs.background.setdefault(ex.node, Counter())[text] += 1
        else:
            obs.requests.setdefault(step, []).append(text)
    for k in sorted(objects):
        rel = key(k)
        if rel.endswith("table_lock.json"):
            data = json.loads(objects[k])
            obs.lock_file = f"owner {owner(data.get('owner'))}, expired {data.get('expired')}"
        elif rel.startswith("audit/"):
            states = [_json(line.encode()).get("state", "?") for line in objects[k].decode().splitlines()
                      if line.strip()]
            obs.audit.append(f"{rel}: {' '.join(_squeeze(states))}")
    return obs


def _json(body: bytes) -> dict[str, Any]:
    try:
        data = json.loads(body)
    except ValueError:
        return {}
    return data if isinstance(data, dict) else {}


def _heartbeat_write(ex: Exchange, lock_key: str, holders: Mapping[str, tuple[str, bool]]) -> bool:
    """True for a write the heartbeat makes, wherever it falls: a renewal (the lock file, If-Match a
    version its own owner wrote unexpired, the new body unexpired and the same owner) or the RENEW record
    of the audit trail. A renewal that falls due while the node's own call runs is the heartbeat's all
    the same (real time decides where it falls; declared as ``background``)."""
    if ex.method != "PUT":
        return False
    if ex.key == lock_key and ex.if_match is not None:
        data = _json(ex.body)
        before = holders.get(ex.if_match.strip('"'))
        return (before is not None and not before[1] and not data.get("expired")
                and before[0] == data.get("owner"))
    if _AUDIT.search(ex.key):
        lines = [line for line in ex.body.decode(errors="replace").splitlines() if line.strip()]
        return bool(lines) and _json(lines[-1].encode()).get("state") == "RENEW"
    return False


def _squeeze(states: Sequence[str]) -> list[str]:
    """Audit states without the RENEW records: whether and how often a holder renewed is real time
    (:data:`DECLARED`; the renewals are compared, by count, as the heartbeat's writes)."""
    return [s for s in states if s != "RENEW"]


@dataclass(frozen=True)
class Divergence:
    """One difference between the sides: what, where, and each side's value."""

    what: str
    where: str
    model: str
    hudi: str

    def line(self) -> str:
        return f"{self.what} {self.where}: model {self.model!r}, Hudi {self.hudi!r}"


def compare(schedule: Schedule, model: Observation, hudi: Observation) -> list[Divergence]:
    """The divergences between the two sides (the declared ones left out, :data:`DECLARED`)."""
    found: list[Divergence] = []
    if model.error or hudi.error:
        found.append(Divergence("run", "-", model.error or "", hudi.error or ""))
    for m, h in zip(model.outcomes, hudi.outcomes, strict=False):
        if m != h:
            found.append(Divergence("outcome", f"step {m[0]} ({m[1]} {m[2]})", m[3], h[3]))
    if len(model.outcomes) != len(hudi.outcomes):
        found.append(Divergence("outcome", "steps", str(len(model.outcomes)), str(len(hudi.outcomes))))
    for i in sorted(set(model.requests) | set(hudi.requests)):
        a, b = model.requests.get(i, []), hudi.requests.get(i, [])
        if a != b:
            found.append(Divergence("requests", f"step {i}", "; ".join(a), "; ".join(b)))
    gaps = 1 + sum(1 for s in schedule.steps if s.gap_ms)
    for node in sorted(set(model.background) | set(hudi.background)):
        ma, hb = model.background.get(node, Counter()), hudi.background.get(node, Counter())
        for kind in sorted(set(ma) | set(hb)):
            if abs(ma[kind] - hb[kind]) > gaps:  # a hold just under a renew interval renews on one side only
                found.append(Divergence("background", f"{node} {kind}", str(ma[kind]), str(hb[kind])))
    if model.lock_file != hudi.lock_file:
        found.append(Divergence("lock-file", "-", model.lock_file, hudi.lock_file))
    if model.audit != hudi.audit:
        found.append(Divergence("audit", "-", "; ".join(model.audit), "; ".join(hudi.audit)))
    return found


def step_table(schedule: Schedule, obs: Observation) -> list[str]:
    """One side's run as a table: each step's outcome and the requests it sent."""
    lines = [f"{obs.side}: {obs.seconds:.1f} s"]
    outcomes = {i: out for i, _n, _op, out in obs.outcomes}
    for i, s in enumerate(schedule.steps):
        lines.append(f"  {i:>3} {s.node} {s.op:<8} {outcomes.get(i, '(not run)'):<16} "
                     f"{'; '.join(obs.requests.get(i, []))}")
    for node, counts in sorted(obs.background.items()):
        lines.append(f"      {node} background: " + "; ".join(f"{k} x{v}" for k, v in sorted(counts.items())))
    lines.append(f"      lock file: {obs.lock_file}")
    lines += [f"      audit {a}" for a in obs.audit]
    return lines


# ---- the search ------------------------------------------------------------------------------------


@dataclass
class DivergentSchedule:
    """The minimal divergent schedule the search kept, with both sides' observations."""

    schedule: Schedule
    model: Observation
    hudi: Observation
    divergences: list[Divergence]


@dataclass
class SearchResult:
    """What :func:`search` did."""

    examples: int = 0
    seconds: float = 0.0
    found: DivergentSchedule | None = None
    shrink_stopped: bool = False
    flaky: bool = False  # the divergence did not come back when its schedule ran again
    jvm_rss_mb: dict[str, float] = field(default_factory=dict)  # each node's JVM, resident memory at the end


class _Divergent(Exception):
    pass


def search(ep: Endpoint, *, version: str, examples: int, seed: int, log_dir: Path,
           shrink_seconds: float = 300.0, on_example: Callable[[int, Schedule, list[Divergence]], None]
           | None = None) -> SearchResult:
    """Run up to ``examples`` generated schedules on both sides (JVMs kept across them); shrink the
    first divergence (for at most ``shrink_seconds``) and return the smallest divergent schedule."""
    result = SearchResult()
    nodes = {n: HudiNode(n, version, log_dir) for n in NODES}
    started = time.monotonic()
    first_found: list[float] = []

    @settings(max_examples=examples, deadline=None, database=None, derandomize=False,
              phases=(Phase.generate, Phase.shrink), suppress_health_check=list(HealthCheck),
              print_blob=False)
    @hypothesis_seed(seed)
    @given(schedules())
    def one(schedule: Schedule) -> None:
        if first_found and time.monotonic() - first_found[0] > shrink_seconds:
            result.shrink_stopped = True
            return  # the shrink budget is spent: the smallest divergent schedule so far stands
        result.examples += 1
        model, hudi = run_both(schedule, ep, f"hcc-differential/{result.examples}/", version=version,
                               nodes=nodes, log_dir=log_dir)
        found = compare(schedule, model, hudi)
        if on_example is not None:
            on_example(result.examples, schedule, found)
        if found:
            if not first_found:
                first_found.append(time.monotonic())
            if result.found is None or _size(schedule) <= _size(result.found.schedule):
                result.found = DivergentSchedule(schedule, model, hudi, found)
            raise _Divergent(found[0].line())

    try:
        one()
    except _Divergent:
        pass
    except Flaky:  # the divergent schedule ran again without diverging: a timing window, reported as such
        result.flaky = True
    finally:
        for hn in nodes.values():
            hn.end("stop")
            if hn.jvms:
                result.jvm_rss_mb[hn.name] = round(hn.peak_rss_kb / 1024, 1)
        result.seconds = time.monotonic() - started
    return result


def _size(s: Schedule) -> tuple[int, int]:
    return (len(s.steps) + len(s.faults), sum(st.gap_ms + st.wait_ms for st in s.steps))


def run_both(schedule: Schedule, ep: Endpoint, prefix: str, *, version: str, nodes: dict[str, HudiNode],
             log_dir: Path) -> tuple[Observation, Observation]:
    """Both sides of one schedule at once, each under its own prefix and proxy (they share nothing but the
    server; a side's times are its own, so running them side by side halves the wall time)."""
    with concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="hcc-differential") as pool:
        hudi = pool.submit(run_side, "hudi", schedule, ep, prefix + "hudi/", version=version, nodes=nodes,
                           log_dir=log_dir)
        model = run_side("model", schedule, ep, prefix + "model/", log_dir=log_dir)
        return model, hudi.result()


def replay(schedule: Schedule, ep: Endpoint, *, version: str, log_dir: Path) -> DivergentSchedule:
    """Run one schedule on both sides (``--replay FILE``)."""
    nodes = {n: HudiNode(n, version, log_dir) for n in schedule.nodes}
    try:
        model, hudi = run_both(schedule, ep, "hcc-differential/replay/", version=version, nodes=nodes,
                               log_dir=log_dir)
    finally:
        for hn in nodes.values():
            hn.end("stop")
    return DivergentSchedule(schedule, model, hudi, compare(schedule, model, hudi))
