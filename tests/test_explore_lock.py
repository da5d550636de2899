"""The lock explorer: known-unsafe configurations are caught at their shortest, known-safe ones hold,
reductions change no verdict, and a counterexample replays exactly in the simulated world."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from model.checkers.lock_run import check_lock_history
from model.checkers.mutex import find_dangling_locks
from model.explore import WHOLE_GRAPH, Bounds, Reductions, explore
from model.explore import search as search_module
from model.explore.counterexample import Replayed, replay, replays_exactly, scenario_of
from model.explore.run import Run
from model.explore.search import ExploreResult, judge
from model.lock.audit import enable_key
from model.runtime.history import Event
from model.runtime.sim import SimWorld

# Small bounds: two writers, one hold of one read-modify-write each, both starting at 0 (the CI budget);
# the benchmark's table adds start phases, skew, more writers and faults.
SMALL = Bounds(writers=2, holds=1, steps_per_hold=1, work_ms=1000, phases=False)


def small(**kw: object) -> Bounds:
    return dataclasses.replace(SMALL, **kw)  # type: ignore[arg-type]


def faults_used(res: ExploreResult) -> list[str]:
    """The faults the shortest counterexample injects, by kind."""
    assert res.found is not None
    run = replay(res.bounds.plan(), res.found.path, res.reductions).run
    return [what for what, _spec in run.injected]


def test_the_long_pause_is_one_pause() -> None:
    res = explore(small(variant="hudi", faults=1, fault_kinds=("pause",)))
    assert res.verdict == "violated" and res.found is not None
    assert res.found.violation.kind == "overlap"
    assert faults_used(res) == ["pause"]
    # judged on the register alone (what a fencing token protects), the same pause writes stale data
    data = explore(small(variant="hudi", faults=1, fault_kinds=("pause",), pause_ms=(5_000,),
                         checkers=("stale-write", "lost-update")))
    assert data.verdict == "violated" and data.found is not None
    assert data.found.violation.kind == "stale-write"
    assert faults_used(data) == ["pause"]


def test_fencing_keeps_the_register_safe_through_the_same_pause() -> None:
    res = explore(small(variant="fenced", faults=1, fault_kinds=("pause",)))
    assert res.verdict == "holds", res.found
    assert "overlap" in res.findings  # the paused holder still believes it holds: fencing is not a lease


def test_the_throttled_renewal_is_one_window_of_503() -> None:
    # the holder writes 3 s after its read; its renewals get 503 (Hudi 1.2.0: UNKNOWN_ERROR, renewLock
    # returns true, nobody is told) from 1 s to 2.5 s, the lease runs out and a contender takes over
    res = explore(small(variant="hudi", work_ms=3_000, faults=1, fault_kinds=("throttle-503",),
                        pause_ms=(1_500,)))
    assert res.verdict == "violated" and res.found is not None
    assert faults_used(res) == ["window"]
    assert res.found.violation.kind in ("overlap", "stale-write")


Histories = list[list[Event]]


def _explore_watching(bounds: Bounds, monkeypatch: pytest.MonkeyPatch) -> tuple[ExploreResult, Histories]:
    """Explore ``bounds`` and keep every history the search judged (at each decision point and run end)."""
    histories: Histories = []

    def watching(plan: Any, events: list[Event], *args: Any, **kw: Any) -> Any:
        histories.append(list(events))
        return judge(plan, events, *args, **kw)

    with monkeypatch.context() as m:
        m.setattr(search_module, "judge", watching)
        res = explore(bounds)
    assert histories
    return res, histories


def _after_the_release_waited_for_the_heartbeat(events: list[Event]) -> list[Event]:
    """The events after the writer, releasing, began to wait for the provider's monitor held by its heartbeat
    (a renewal in flight); none if it never did."""
    wait = next((e.index for e in events if e.f == "monitor-wait" and e.value["task"] == "writer"
                 and e.value["holder"] == "heartbeat"), None)
    return [] if wait is None else [e for e in events if e.index > wait]


def _released_after_a_renewal_adopted_its_lost_reply(events: list[Event]) -> bool:
    """The renewal the release waited for re-read the lock file and adopted its own version (412-recovery),
    and the release succeeded."""
    after = _after_the_release_waited_for_the_heartbeat(events)
    return (any(e.f == "recover-412" and e.type == "ok" and e.process.endswith("/heartbeat") for e in after)
            and any(e.f == "release" and e.type == "ok" for e in after))


def _dangles_after_a_lost_renewal_reply(events: list[Event]) -> bool:
    """The renewal the release waited for lost its reply (UNKNOWN_ERROR), the expire, naming the version
    before the renewal, got 412, and the lock file names the writer: a dangling lock of the release."""
    after = _after_the_release_waited_for_the_heartbeat(events)
    return (any(e.f == "renew" and e.value.get("status") == "UNKNOWN_ERROR" for e in after)
            and any(e.f == "release-acquired-by-others" for e in after)
            and any(v.details["cause"] == "release" for v in find_dangling_locks(events)))


def test_a_lost_acquire_reply_dangles_and_412_recovery_adopts_it(monkeypatch: pytest.MonkeyPatch) -> None:
    lost = small(faults=1, fault_kinds=("lost-reply",))
    hudi, hudi_runs = _explore_watching(dataclasses.replace(lost, variant="hudi"), monkeypatch)
    assert hudi.verdict == "holds" and "dangling-lock" in hudi.findings
    assert hudi.findings["dangling-lock"].violation.details["cause"] == "acquire"
    # hudi also dangles a lock when a renewal's reply is lost while its writer unlocks: the release waits for
    # the provider's monitor until renewLock returns, and its expire names the version before the renewal
    assert any(_dangles_after_a_lost_renewal_reply(h) for h in hudi_runs)
    assert not any(_released_after_a_renewal_adopted_its_lost_reply(h) for h in hudi_runs)

    rec_bounds = dataclasses.replace(lost, variant="412-recovery")  # hudi with adopt_own_lock, nothing else
    # the schedule and the lost create reply of hudi's dangling lock: 412-recovery re-reads, finds its own
    # owner id in the lock file and acquires, so nothing dangles
    path = hudi.findings["dangling-lock"].path
    same = replay(rec_bounds.plan(), path, hudi.reductions)
    assert not any(f.kind == "dangling-lock" for f in same.findings)
    lost_create = next(e for e in replay(hudi.bounds.plan(), path, hudi.reductions).events
                       if e.f == "try-lock" and e.type == "fail" and e.value.get("phase") == "create")
    assert any(e.f == "recover-412" and e.type == "ok" and e.node == lost_create.node for e in same.events)
    assert any(e.f == "acquire" and e.type == "ok" and e.node == lost_create.node for e in same.events)

    # over every run: no dangling lock at all.  The lost renewal reply during the unlock no longer dangles
    # one either (it did before the provider's monitor was modelled, when the release cancelled the
    # heartbeat right after the renewal's request): the release waits for renewLock, whose recovery adopts
    # the version it wrote, and the expire names that version
    rec, rec_runs = _explore_watching(rec_bounds, monkeypatch)
    assert rec.verdict == "holds" and "dangling-lock" not in rec.findings, rec.findings
    assert any(_released_after_a_renewal_adopted_its_lost_reply(h) for h in rec_runs)
    assert not any(_dangles_after_a_lost_renewal_reply(h) for h in rec_runs)


def test_the_dangling_lock_breaks_a_tight_liveness_bound() -> None:
    # the others wait for the lease to run out (validity + drift allowance); with a bound below
    # that, hudi's lost acquire reply is a liveness violation: Hudi 1.2.0 makes one attempt (SDK
    # retries off, PR #17869), so the create's lost reply is an SdkClientException out of tryLock...
    tight = {"faults": 1, "fault_kinds": ("lost-reply",), "liveness_ms": 2_000}
    hudi = explore(small(variant="hudi", **tight))
    assert hudi.verdict == "violated" and hudi.found is not None and hudi.found.violation.kind == "liveness"
    events = replay(hudi.bounds.plan(), hudi.found.path).events
    assert any(e.f == "try-lock" and e.value.get("phase") == "create" and e.value.get("reason") == "exception"
               for e in events)
    # ...and 412-recovery (hudi but for adopting a lock file that names its own owner id) meets the same
    # bound in every run: it adopts the lock of a lost create reply and, the release waiting for the
    # provider's monitor, the version of a renewal whose reply was lost, so no lock dangles and the lock
    # changes hands in time.  Without the adoption it is hudi, which breaks the bound (above)
    rec = explore(small(variant="412-recovery", **tight))
    assert rec.verdict == "holds" and rec.complete and rec.found is None
    assert "dangling-lock" not in rec.findings


def test_no_fault_no_violation_and_a_deadlock_would_be_one() -> None:
    assert explore(small(variant="hudi")).verdict == "holds"
    violation, _ = judge(small(checkers=("overlap",)).plan(), [], {}, 0, stuck=("w1",))
    assert violation is not None and violation.kind == "liveness" and "w1" in violation.message


# ---- reductions ---------------------------------------------------------------------------------------

GRID = [
    small(variant="hudi", faults=0, phases=True),
    small(variant="hudi", faults=1, fault_kinds=("pause",), pause_ms=(5_000,)),
    small(variant="412-recovery", faults=1, fault_kinds=("lost-reply",)),
]


def _outcome(res: ExploreResult) -> tuple[object, ...]:
    found = res.found
    return (res.verdict, found.violation.kind if found else None, len(faults_used(res)) if found else None,
            sorted(res.findings))


@pytest.mark.slow
@pytest.mark.parametrize("bounds", GRID, ids=lambda b: f"{b.variant}-{b.faults}-{','.join(b.fault_kinds)}")
def test_each_reduction_keeps_the_verdict_and_the_shortest_counterexample(bounds: Bounds) -> None:
    # against state hashing alone (the full graph of states: its shortest path is the shortest)
    hashing_only = explore(bounds, Reductions(hashing=True, symmetry=False, por=False, dominance=False))
    for red in (Reductions(), WHOLE_GRAPH, Reductions(por=False), Reductions(symmetry=False)):
        res = explore(bounds, red)
        # the same verdict, violation kind, number of faults and findings, in no more states
        assert _outcome(res) == _outcome(hashing_only), red
        assert res.states <= hashing_only.states, red
        if res.found is not None and hashing_only.found is not None:
            shortest = len(hashing_only.found.path)
            # sleep and ample sets, and dominance, keep a violation reachable, not every shortest path to it
            if red.por or red.dominance:
                assert len(res.found.path) >= shortest, red
            else:  # symmetry merges states, it keeps the graph's distances
                assert len(res.found.path) == shortest, red


def test_state_hashing_keeps_the_verdict_against_the_plain_tree() -> None:
    # the tree of runs with no state hashing (sleep sets only, or it is out of reach even here)
    bounds = small(variant="hudi", faults=0)
    tree = explore(bounds, Reductions(hashing=False, symmetry=False, por=True))
    hashed = explore(bounds, Reductions(hashing=True, symmetry=False, por=True))
    assert tree.verdict == hashed.verdict == "holds" and tree.complete and hashed.complete
    assert tree.runs > 10 * hashed.runs


def test_symmetry_merges_mirrored_start_phases() -> None:
    bounds = small(variant="hudi", faults=0, phases=True)
    with_sym = explore(bounds, Reductions(por=False))
    without = explore(bounds, Reductions(por=False, symmetry=False))
    assert with_sym.verdict == without.verdict == "holds" and with_sym.states < without.states


def test_symmetry_merges_mirrored_clock_offsets() -> None:
    # the clock is part of a node's signature (it orders writers with different clocks instead of
    # trying both orders); w1 at +250 ms with w2 at 0 is still the mirror of w1 at 0 with w2 at +250 ms
    bounds = small(variant="hudi", faults=0, skew_ms=250)
    with_sym = explore(bounds)
    without = explore(bounds, Reductions(symmetry=False))
    assert with_sym.verdict == without.verdict == "holds"
    assert with_sym.states < without.states


# ---- counterexamples replay ---------------------------------------------------------------------------


def test_a_counterexample_replays_exactly_in_simulation() -> None:
    bounds = small(variant="hudi", faults=1, fault_kinds=("pause",), pause_ms=(5_000,),
                   checkers=("stale-write", "lost-update"))
    res = explore(bounds)
    assert res.found is not None
    replayed = replay(bounds.plan(), res.found.path)
    assert replayed.violation is not None and replayed.violation.kind == res.found.violation.kind
    scenario = scenario_of(replayed, bounds.decisive_checkers())
    assert scenario.expect == "violation" and scenario.faults.pauses and scenario.schedule.ranks
    assert replays_exactly(scenario, replayed) == (True, None)
    verdict = check_lock_history(SimWorld(scenario).run(), scenario.checkers)
    assert [v.kind for v in verdict.violations][:1] == ["stale-write"]


def test_the_schedule_is_what_makes_the_replay_exact() -> None:
    # the same faults without the scripted order of same-instant steps: the simulated world's own
    # order is not the explored one, so the histories part
    bounds = small(variant="hudi", work_ms=3_000, faults=1, fault_kinds=("throttle-503",), pause_ms=(1_500,))
    res = explore(bounds)
    assert res.found is not None
    replayed = replay(bounds.plan(), res.found.path)
    scenario = scenario_of(replayed, bounds.decisive_checkers())
    assert replays_exactly(scenario, replayed)[0]
    unscripted = dataclasses.replace(scenario, schedule=dataclasses.replace(scenario.schedule, ranks=()))
    assert not replays_exactly(unscripted, replayed)[0]


class _FirstOption:
    """A driver that takes the first option at every decision past the path (no more faults)."""

    def decide(self, run: Run, kind: str, options: int, steps: list[object]) -> int:
        return 0


def test_a_fault_on_another_object_replays_exactly() -> None:
    # a timeout on w1's read of the audit enable file (class "other"): the fault plan names that key,
    # since the simulated world matches only lock and register as classes and other rule keys as prefixes
    bounds = small(variant="hudi", faults=1, fault_kinds=("timeout",))
    run = Run(bounds.plan(), [0] * 7 + [1], _FirstOption())  # the 8th decision: that read's fault
    end = run.go()
    assert end is not None
    [(what, spec)] = run.injected
    assert what == "error" and spec[1] == "other"
    replayed = Replayed(run, list(run.events), None, [], True)
    scenario = scenario_of(replayed, bounds.decisive_checkers())
    assert replays_exactly(scenario, replayed) == (True, None)
    assert [r.key for r in scenario.faults.errors] == [enable_key(bounds.scenario().lock.base_path)]
