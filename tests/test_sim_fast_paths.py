"""The simulator's fast paths give exactly what the plain definitions give (issue 13, item 5).

Each fast path is compared with the straightforward code it replaced, on inputs that reach
every branch: the history line of an event, the lock file and audit bytes, the network's
latency draws, the fault plan's rule matching, the timeouts made without SimPy's
``Timeout.__init__``.  And a simulated run is the same history,
byte for byte, when run twice from one seed.
"""

from __future__ import annotations

import json
import random
from dataclasses import asdict, dataclass, replace

import pytest
import simpy

from model import history
from model.config import Dist, ErrorRule, Scenario, WorkloadConfig
from model.effects import BARE, Outcome, StoreResult
from model.faults import KEY_CLASSES, FaultMatcher
from model.history import Event
from model.lock_audit import is_enabled, record_line
from model.lockfile import LockData
from model.sim import run_scenario, sampler, timeouts
from model.workload import draw


def _old_line(event: Event) -> str:
    """Event.to_json as it was: asdict (dataclasses in values become dicts), then json.dumps."""
    return json.dumps(asdict(event), sort_keys=True, separators=(",", ":"))


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
    assert LockData.decode(data.encode()) == data
    assert LockData.decode(data.encode()) == data  # the cached parse is the same data


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


def _firing_order(make_timeout: str) -> tuple[list[tuple[int, str]], list[tuple[int, int, int]]]:
    """Timeouts and processes of one instant and later, made by ``env.timeout`` or ``sim.timeouts``:
    the order they fire in, and the queue entries (time, priority, id) the timeouts were given."""
    env = simpy.Environment()
    timeout = env.timeout if make_timeout == "simpy" else timeouts(env)
    fired: list[tuple[int, str]] = []

    def proc(name: str, delays: list[int]) -> simpy.events.ProcessGenerator:
        for ms in delays:
            yield timeout(ms)
            fired.append((int(env.now), name))

    for i, delays in enumerate([[0, 5, 5], [5, 0, 0], [3, 2, 0], [10]]):
        env.process(proc(f"p{i}", delays))
    made = [timeout(ms) for ms in (5, 0, 7)]
    for n, t in enumerate(made):
        t.callbacks.append(lambda _, n=n: fired.append((int(env.now), f"t{n}")))
    entries = [(at, prio, eid) for at, prio, eid, event in sorted(env._queue) if event in made]
    env.run()
    return fired, entries


def test_sim_timeouts_fire_in_simpys_order() -> None:
    assert _firing_order("sim") == _firing_order("simpy")
    with pytest.raises(ValueError, match="Negative delay -1"):
        timeouts(simpy.Environment())(-1)
