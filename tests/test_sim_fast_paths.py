"""The simulator's fast paths give exactly what the plain definitions give (issue 13, item 5).

Each fast path is compared with the straightforward code it replaced, on inputs that reach
every branch: the history line of an event, the lock file and audit bytes, the network's
latency draws, the fault plan's rule matching, the environment that lets a request's start
and a scripted timer name their priority (SimPy's events are queued as SimPy queues them), a
request started without an event of its own.  And a simulated run is the same history,
byte for byte, when run twice from one seed.
"""

from __future__ import annotations

import inspect
import json
import random
import uuid
from collections.abc import Callable, Generator
from dataclasses import MISSING, FrozenInstanceError, asdict, dataclass, fields, replace
from typing import Any

import pytest
import simpy
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from lockstrategies import fast_scenario, safe_plans

from model.config import (
    ClockSpec,
    Cutoff,
    Dist,
    ErrorRule,
    FaultPlan,
    Pause,
    Scenario,
    Schedule,
    StorageConfig,
    WorkloadConfig,
)
from model.lock import lockfile
from model.lock.audit import is_enabled, record_line
from model.lock.lockfile import LockData, LockFile
from model.lock.register_writer import register_body, register_value
from model.protocols import PROTOCOLS
from model.runtime import history, sim
from model.runtime.client import Call, RetryPolicy
from model.runtime.effects import (
    BARE,
    Cancel,
    CheckInterrupt,
    CreateIfAbsent,
    Delete,
    Effect,
    FencedPut,
    Interrupt,
    IsAlive,
    ListPrefix,
    Now,
    Outcome,
    Put,
    Read,
    Record,
    ReplaceIfMatch,
    ShutdownHook,
    Sleep,
    Spawn,
    StorageEffect,
    StoreResult,
)
from model.runtime.faults import KEY_CLASSES, FaultMatcher
from model.runtime.frozen import fills_dict
from model.runtime.history import Event
from model.runtime.kernel import WriterContext
from model.runtime.objectstore import ObjectStore, StoredObject
from model.runtime.sampling import draw
from model.runtime.sim import (
    ScriptedTimes,
    SimEnvironment,
    SimNetwork,
    SimWorld,
    _Start,
    run_scenario,
    sampler,
    uuid4_string,
)
from scenarios import catalogue


@dataclass(frozen=True)
class _OldEvent:
    """Event as it was: a frozen dataclass of the same fields."""

    index: int
    time: int
    node: str
    process: str
    type: str
    f: str
    value: Any = None
    clock: int | None = None


def _old_line(event: Event) -> str:
    """Event.to_json as it was: asdict (dataclasses in values become dicts), then json.dumps."""
    return json.dumps(asdict(_OldEvent(*event)), sort_keys=True, separators=(",", ":"))


@dataclass(frozen=True)
class _Inner:
    b: int
    a: tuple[int, ...]


VALUES = [None, 3, "x", {"z": 1, "a": [1, 2, {"k": "é"}]}, {"t": (1, 2)}, {"d": _Inner(2, (3,))},
          [_Inner(1, ())], {"f": 1.5, "n": None, "b": True}]


@pytest.mark.parametrize("value", VALUES)
def test_event_lines_are_the_bytes_asdict_and_dumps_gave(value: object) -> None:
    made = Event.make(7, 120, "w1", "w1/heartbeat", "info", "renew", value, 1_767_225_600_120)
    plain = Event(7, 120, "w1", "w1/heartbeat", "info", "renew", value, 1_767_225_600_120)
    assert made == plain and repr(made) == repr(plain)
    assert made.to_json() == plain.to_json() == _old_line(plain)
    assert history.loads(history.dumps([made])) == history.loads(_old_line(plain) + "\n")


def test_a_made_event_is_still_frozen() -> None:
    made = Event.make(0, 0, "-", "nemesis", "info", "run-start", None, None)
    assert hash(made) == hash(Event(0, 0, "-", "nemesis", "info", "run-start"))
    with pytest.raises(AttributeError):
        made.time = 5  # type: ignore[misc]


def test_an_unserialisable_value_still_fails() -> None:
    with pytest.raises(TypeError, match="not JSON serialisable"):
        Event(0, 0, "-", "p", "info", "f", {"x": object()}).to_json()


@pytest.mark.parametrize("expired", [False, True])
@pytest.mark.parametrize("owner", ["0b8f6e2c-1f3a-4d8e-9a63-0c7e0b5b8f11", "é\"\\\n", ""])
@pytest.mark.parametrize("valid_until", [0, 1_767_225_900_000, -5])
def test_the_lock_file_is_the_bytes_json_dumps_gave(expired: bool, owner: str, valid_until: int) -> None:
    data = LockData(expired, valid_until, owner)
    old = json.dumps({"expired": expired, "validUntil": valid_until, "owner": owner}, separators=(",", ":"))
    assert data.encode() == old.encode()
    assert LockData.decode(data.encode()) is data  # a body this process encoded: its data, unparsed
    assert lockfile._parse(old.encode()) == data  # a body from elsewhere: parsed to the same data
    assert lockfile._parse(old.encode()) == data  # the cached parse is the same data
    assert LockFile.read(data.encode(), '"v"') == LockFile(data, '"v"') == LockFile.read(data.encode(), '"v"')


def test_a_bad_lock_file_still_names_its_field_every_time() -> None:
    for _ in range(2):  # a failed parse is not cached
        with pytest.raises(ValueError, match="field validUntil"):
            LockData.decode(b'{"expired":false,"validUntil":"soon","owner":"a"}')


@pytest.mark.parametrize("held", [False, True])
@pytest.mark.parametrize("state", ["START", "RENEW", "END"])
def test_audit_records_are_the_bytes_json_dumps_gave(held: bool, state: str) -> None:
    owner = "0b8f6e2c-1f3a-4d8e-9a63-0c7e0b5b8f11"
    old = json.dumps({"ownerId": owner, "transactionStartTime": 10, "timestamp": 20, "state": state,
                      "lockExpiration": 300_020, "lockHeld": held}, separators=(",", ":"))
    assert record_line(owner, 10, 20, state, 300_020, held) == old


def test_the_cached_enable_check_reads_each_body() -> None:
    assert is_enabled(b'{"STORAGE_LOCK_AUDIT_SERVICE_ENABLED":true}')
    assert not is_enabled(b'{"STORAGE_LOCK_AUDIT_SERVICE_ENABLED":false}')
    assert not is_enabled(b"not json") and not is_enabled(None)


@pytest.mark.parametrize("dist", [Dist("uniform", 5, 40), Dist("uniform", 7, 7), Dist("uniform", 0, 2**40),
                                  Dist("fixed", 12, 12), Dist("exp", 20, 200), Dist("exp", 20, 0)])
def test_the_latency_sampler_draws_what_draw_draws(dist: Dist) -> None:
    for seed in range(50):
        ours, plain = random.Random(seed), random.Random(seed)
        sample = sampler(ours, dist)
        assert [sample() for _ in range(40)] == [draw(plain, dist) for _ in range(40)]
        assert ours.random() == plain.random()  # the streams are left in the same state


def _plain_match(errors: list[ErrorRule], hits: dict[int, int], rng: random.Random, key_class: object,
                 node: str, write: bool, key: str, now: int) -> ErrorRule | None:
    """FaultMatcher.match before its per-request-kind cache."""
    method = "write" if write else "read"
    for i, rule in enumerate(errors):
        if rule.key == "any":
            key_ok = True
        elif rule.key in KEY_CLASSES:
            key_ok = rule.key == key_class(key)  # type: ignore[operator]
        else:
            key_ok = key.startswith(rule.key)
        if rule.node not in ("any", node) or not key_ok:
            continue
        if rule.method not in ("any", method) or not rule.start_ms <= now < rule.end_ms:
            continue
        if rule.count and hits.get(i, 0) >= rule.count:
            continue
        if rule.prob < 1.0 and rng.random() >= rule.prob:
            continue
        hits[i] = hits.get(i, 0) + 1
        return rule
    return None


def test_fault_rules_match_as_without_the_cache() -> None:
    errors = [ErrorRule(node="w1", key="lock", method="write", status="503", prob=0.5),
              ErrorRule(node="any", key="register", status="timeout", prob=0.3, count=4),
              ErrorRule(node="w2", key="table/.hoodie/", method="read", status="429", start_ms=100,
                        end_ms=900),
              ErrorRule(node="any", key="any", status="lost-reply", prob=0.1)]

    def key_class(key: str) -> str:
        return {"table/lock.json": "lock", "reg": "register"}.get(key, "other")

    matcher = FaultMatcher(errors, (), random.Random(3), key_class)
    hits: dict[int, int] = {}
    rng = random.Random(3)
    pick = random.Random(9)
    for now in range(0, 2000, 2):
        node, write = pick.choice(["w1", "w2", "w3"]), pick.random() < 0.5
        key = pick.choice(["table/lock.json", "reg", "table/.hoodie/x.commit", "other/file"])
        assert matcher.match(node, write, key, now) == _plain_match(errors, hits, rng, key_class, node, write,
                                                                   key, now)
    assert matcher.hits == hits and hits  # rules did hit


def test_bare_answers_are_the_plain_answers() -> None:
    assert all(BARE[o] == StoreResult(o) for o in Outcome)


def test_one_seed_gives_the_same_history_bytes_twice() -> None:
    scenario = replace(Scenario(), duration_ms=120_000, workload=WorkloadConfig(writers=3))
    runs = [history.dumps(run_scenario(scenario, 4)) for _ in range(2)]
    assert runs[0] == runs[1] and runs[0].count("\n") > 100


def _firing_order(base: type[simpy.Environment]) -> tuple[list[tuple[int, str]], list[tuple[int, int, str]]]:
    """Timeouts, events and processes of one instant and later, in an environment of class ``base``: the
    order they fire in, and what each call of ``Environment.schedule`` queued (time, priority, event kind)."""
    queued: list[tuple[int, int, str]] = []

    class Recording(base):  # type: ignore[valid-type, misc]
        def schedule(self, event: simpy.Event, priority: simpy.events.EventPriority = simpy.events.NORMAL,
                     delay: float = 0) -> None:
            super().schedule(event, priority, delay)
            queued.append((int(self.now + delay), int(priority), type(event).__name__))

    env = Recording()
    fired: list[tuple[int, str]] = []

    def proc(name: str, delays: list[int]) -> simpy.events.ProcessGenerator:
        for ms in delays:
            yield env.timeout(ms)
            fired.append((int(env.now), name))
        signal = env.event()
        signal.callbacks.append(lambda _, name=name: fired.append((int(env.now), f"{name} signalled")))
        signal.succeed()

    for i, delays in enumerate([[0, 5, 5], [5, 0, 0], [3, 2, 0], [10]]):
        env.process(proc(f"p{i}", delays))
    made = [env.timeout(ms) for ms in (5, 0, 7)]
    for n, t in enumerate(made):
        t.callbacks.append(lambda _, n=n: fired.append((int(env.now), f"t{n}")))
    env.run()
    return fired, queued


def test_the_sim_environment_queues_simpys_events_as_simpy_does() -> None:
    assert _firing_order(SimEnvironment) == _firing_order(simpy.Environment)


def test_a_start_is_urgent_and_scripted_timers_run_last_by_rank() -> None:
    env = SimEnvironment()
    fired: list[tuple[int, str]] = []

    def note(name: str) -> Callable[[Any], None]:
        return lambda _: fired.append((int(env.now), name))

    script = ScriptedTimes(env, Schedule(ranks=(1, 0)))
    made = [("rank 1", script.timeout(5)), ("rank 0", script.timeout(5)), ("plain", script.timeout(5)),
            ("normal", env.event()), ("start", _Start(env))]
    for name, event in made:
        event.callbacks.append(note(name))
        if not event.triggered:
            event.succeed()
    env.run()
    assert fired == [(0, "start"), (0, "normal"), (5, "plain"), (5, "rank 0"), (5, "rank 1")]
    with pytest.raises(ValueError, match="Negative delay -1"):
        script.timeout(-1)


def _every_event(m: pytest.MonkeyPatch) -> None:
    """Each request starts through an event of its own (as before the shortcut of ``SimNetwork._runs_next``;
    every hop and reply has one)."""
    m.setattr(SimNetwork, "_runs_next", lambda self: False)


def _history_and_steps(scenario: Scenario, seed: int, monkeypatch: pytest.MonkeyPatch,
                       every_event: bool) -> tuple[str, int]:
    """A run's history bytes and its SimPy steps (``every_event``: see :func:`_every_event`)."""
    with monkeypatch.context() as m:
        if every_event:
            _every_event(m)
        steps = [0]
        step = simpy.Environment.step

        def counting(env: simpy.Environment) -> None:
            steps[0] += 1
            step(env)

        m.setattr(simpy.Environment, "step", counting)
        return history.dumps(run_scenario(scenario, seed)), steps[0]


def _lockstep(latency: Dist) -> Scenario:
    """Writers in lockstep (every time a multiple of 10 ms with a fixed latency): many requests, replies
    and wake-ups due at one instant, with errors, 409s and a pause."""
    rules = (ErrorRule(status="503", prob=0.1),
             ErrorRule(key="lock", method="write", status="timeout", prob=0.05))
    lockstep = WorkloadConfig(writers=3, start_ms=Dist("fixed", 0), think_ms=Dist("uniform", 0, 2),
                              work_ms=Dist("fixed", 100))
    return replace(Scenario(), duration_ms=300_000, workload=lockstep,
                   storage=StorageConfig(latency_ms=latency, conflict_prob=0.3, conflict_window_ms=60),
                   faults=FaultPlan(errors=rules, pauses=(Pause("w1", at_ms=20_000, duration_ms=3_000),)))


@pytest.mark.parametrize("latency", [Dist("fixed", 0), Dist("fixed", 10), Dist("uniform", 0, 3)])
def test_requests_without_their_own_events_keep_every_history_byte(
        latency: Dist, monkeypatch: pytest.MonkeyPatch) -> None:
    scenario = _lockstep(latency)
    for seed in (1, 2):
        fast, fast_steps = _history_and_steps(scenario, seed, monkeypatch, every_event=False)
        plain, plain_steps = _history_and_steps(scenario, seed, monkeypatch, every_event=True)
        assert fast == plain, f"seed {seed}: the history changed"
        assert fast_steps < plain_steps * 0.9 and fast.count("try-lock") > 20  # the shortcut was taken


class _AnyEvent:
    """``model.runtime.sim._SOLE_WAITER`` in a mistaken shortcut: every event counts as awaited by one
    task."""

    def __contains__(self, kind: object) -> bool:
        return True


def test_the_byte_comparison_catches_a_request_started_at_once_too_eagerly(
        monkeypatch: pytest.MonkeyPatch) -> None:
    # two tasks woken by one event (see _TwoWaiters): a request started at once (whoever else waits for the
    # event that woke its task, whatever is queued at the instant) reaches the store before the other task's
    # equally long sleep ends
    scenario = Scenario(duration_ms=5_000, storage=StorageConfig(latency_ms=Dist("fixed", 10)),
                        workload=WorkloadConfig(writers=1))

    def history_bytes(every_event: bool, eager: bool = False) -> str:
        with monkeypatch.context() as m:
            if every_event:
                _every_event(m)
            if eager:
                m.setattr(sim, "_SOLE_WAITER", _AnyEvent())
                m.setattr(SimNetwork, "_runs_next", lambda self: True)
            return history.dumps(SimWorld(scenario, workload=_TwoWaiters()).run())

    plain = history_bytes(every_event=True)
    assert history_bytes(every_event=False) == plain
    assert history_bytes(every_event=False, eager=True) != plain


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(plan=safe_plans(), latency=st.sampled_from([Dist("fixed", 0), Dist("fixed", 10), Dist("uniform", 0, 3),
                                                    Dist("uniform", 5, 60)]),
       lost=st.sampled_from([0.0, 0.1]), cut=st.integers(0, 3_000))
def test_no_shortcut_changes_a_history_byte(plan: tuple[int, dict[str, ClockSpec], FaultPlan], latency: Dist,
                                            lost: float, cut: int, monkeypatch: pytest.MonkeyPatch) -> None:
    # the safe plans of the lock properties, with lost replies and a cut-off added (their timeouts ride on
    # the network's timers too)
    seed, clocks, faults = plan
    faults = replace(faults, errors=(*faults.errors, ErrorRule(status="lost-reply", prob=lost)),
                     cutoffs=(Cutoff("w2", 30_000, 30_000 + cut),))
    scenario = fast_scenario(clocks=clocks, faults=faults,
                             storage=StorageConfig(latency_ms=latency, timeout_ms=500, retry_backoff_ms=50))
    fast, _ = _history_and_steps(scenario, seed, monkeypatch, every_event=False)
    plain, _ = _history_and_steps(scenario, seed, monkeypatch, every_event=True)
    assert fast == plain, f"seed {seed}: the history changed"


@pytest.mark.parametrize("name", ["nbcc-storage-faults", "tl-skew-beyond-setting", "tl-cc-none-lost-update"])
def test_no_shortcut_changes_a_timeline_history(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    entry = catalogue.load(name)

    def history_bytes(every_event: bool) -> bytes:
        lines: list[str] = []
        with monkeypatch.context() as m:
            if every_event:
                _every_event(m)
            PROTOCOLS[entry.protocol].run(entry.config, 2, lambda e: lines.append(e.to_json()))
        return "\n".join(lines).encode()

    fast = history_bytes(every_event=False)
    assert fast == history_bytes(every_event=True) and fast.count(b"\n") > 200


class _TwoWaiters:
    """Two tasks wait for one event (both cancel a third task); when it fires, the first sends a write
    and the second sleeps as long as a hop takes.  SimPy runs the second's wake-up before the write
    reaches the store: the write's start waits in the queue while the event's other callback runs."""

    def writer(self, ctx: WriterContext) -> Generator[Effect, Any, Any]:
        for name, body in (("sleeper", self._sleeper()), ("a", self._a()), ("b", self._b())):
            yield Spawn(name, body)

    @staticmethod
    def _sleeper() -> Generator[Effect, Any, Any]:
        yield Sleep(1_000)

    @staticmethod
    def _a() -> Generator[Effect, Any, Any]:
        yield Cancel("sleeper")
        yield Put("k", b"a")

    @staticmethod
    def _b() -> Generator[Effect, Any, Any]:
        yield Cancel("sleeper")
        yield Sleep(10)
        yield Record("b-woke", "info")

    pause_triggers: dict[tuple[str, str], str] = {}  # no triggered pause

    def key_class(self, key: str) -> str:
        return "other"

    def observe(self, key: str, body: bytes, version: str | None) -> tuple[str, dict[str, Any]]:
        return "stored", {"body": body.decode()}


def test_a_request_woken_with_another_task_starts_in_its_own_event() -> None:
    scenario = Scenario(duration_ms=5_000, storage=StorageConfig(latency_ms=Dist("fixed", 10)),
                        workload=WorkloadConfig(writers=1))
    order = [e.f for e in SimWorld(scenario, workload=_TwoWaiters()).run() if e.f in ("b-woke", "stored")]
    assert order == ["b-woke", "stored"]


def test_a_read_answers_the_object_as_it_is_now() -> None:
    store, plain = ObjectStore(), ObjectStore()

    def both(effect: StorageEffect) -> StoreResult:
        answer = store.apply(effect)
        plain._reads.clear()  # a store that never reuses a read's answer
        assert answer == plain.apply(effect), effect
        return answer

    both(Read("k"))
    both(Put("k", b"1"))
    both(Read("k"))
    version = both(Read("k")).version  # read twice: the second answer is the first one again
    assert version is not None and not both(CreateIfAbsent("k", b"2")).ok
    assert both(ReplaceIfMatch("k", b"3", version)).ok and both(Read("k")).body == b"3"
    both(Delete("k"))
    assert both(Read("k")).outcome is Outcome.NOT_FOUND
    both(Put("k", b"4"))
    assert both(Read("k")).body == b"4"


def test_a_first_answer_is_final_exactly_when_a_call_makes_it_the_result() -> None:
    for outcome in Outcome:
        for retries in (0, 2):
            policy = RetryPolicy(retries, 5)
            for answer in (StoreResult(outcome), StoreResult(outcome, attempts=2),
                           StoreResult(outcome, ambiguous=True)):
                call = Call(policy, Put("k", b""))
                backoff = call.after(answer)
                assert Call.first_is_final(policy, answer) == (backoff is None and call.result is answer)


def test_owner_ids_are_the_uuid_modules_strings() -> None:
    rng = random.Random(3)
    for bits in [0, 2**128 - 1, *(rng.getrandbits(128) for _ in range(2_000))]:
        assert uuid4_string(bits) == str(uuid.UUID(int=bits, version=4))


@pytest.mark.parametrize("value", [0, 1, -3, 10**12])
@pytest.mark.parametrize("owner", ["0b8f6e2c-1f3a-4d8e-9a63-0c7e0b5b8f11", "é\"\\\n", ""])
def test_the_register_body_is_the_bytes_json_dumps_gave(value: int, owner: str) -> None:
    assert register_body(value, owner) == json.dumps({"value": value, "by": owner}).encode()
    assert register_value(StoreResult(Outcome.OK, register_body(value, owner))) == value


@dataclass(frozen=True)
class _Plain:
    name: str
    body: bytes = b""
    count: int | None = None


@fills_dict
@dataclass(frozen=True)
class _Filled:
    name: str
    body: bytes = b""
    count: int | None = None


@pytest.mark.parametrize("args, kwargs", [(("a",), {}), (("a", b"x", 3), {}),
                                          ((), {"name": "a", "count": 0}), (("a",), {"body": b"y"})])
def test_fills_dict_makes_what_the_frozen_dataclass_makes(args: tuple[Any, ...],
                                                         kwargs: dict[str, Any]) -> None:
    plain, filled = _Plain(*args, **kwargs), _Filled(*args, **kwargs)
    assert asdict(plain) == asdict(filled) and repr(plain) == repr(filled).replace("_Filled", "_Plain")
    assert hash(filled) == hash(_Filled(*args, **kwargs)) and filled == _Filled(*args, **kwargs)
    assert inspect.signature(_Filled) == inspect.signature(_Plain)
    with pytest.raises(FrozenInstanceError):
        filled.name = "b"  # type: ignore[misc]
    with pytest.raises(TypeError):
        _Filled()  # type: ignore[call-arg]


@pytest.mark.parametrize("cls", [Read, CreateIfAbsent, ReplaceIfMatch, Put, FencedPut, ListPrefix, Delete,
                                 Now, Sleep, Record, Spawn, Cancel, Interrupt, IsAlive, CheckInterrupt,
                                 ShutdownHook, StoreResult, StoredObject, LockData, LockFile])
def test_the_fast_made_classes_keep_their_dataclass_signature(cls: type) -> None:
    params = list(inspect.signature(cls).parameters.values())
    assert [(p.name, p.default) for p in params] == [
        (f.name, inspect.Parameter.empty if f.default is MISSING else f.default) for f in fields(cls)]


def test_a_record_is_still_a_frozen_dataclass() -> None:
    made = Record("try-lock", "fail", {"reason": "held"})
    assert made == Record(f="try-lock", type="fail", value={"reason": "held"}) != Record("try-lock", "ok")
    assert Record("a", "info").value is None and hash(Record("a", "info")) == hash(Record("a", "info", None))
    assert repr(made) == "Record(f='try-lock', type='fail', value={'reason': 'held'})"
    assert [f.name for f in fields(Record)] == ["f", "type", "value"]
    with pytest.raises(FrozenInstanceError):
        made.f = "x"  # type: ignore[misc]
