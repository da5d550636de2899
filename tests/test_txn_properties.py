"""Properties of the transactional checker (Hypothesis): serial histories never show an anomaly;
histories of a simulated store with a known isolation level (model/checkers/txn_sim.py) show
only anomalies that level allows; and the weaker levels do show theirs."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from txn_helpers import from_events

from model.checkers.txn_anomalies import prohibited_anomalies
from model.checkers.txn_check import check_txns
from model.checkers.txn_history import LIST_APPEND as LA
from model.checkers.txn_history import RW_REGISTER as RR
from model.checkers.txn_sim import simulate

CLAIM = {"serializable": "strict-serializable", "snapshot-isolation": "snapshot-isolation",
         "read-committed": "read-committed", "read-uncommitted": "read-uncommitted"}
EVERY_MODEL = ["strict-serializable", "strong-session-serializable", "strong-snapshot-isolation",
               "serializable", "snapshot-isolation", "repeatable-read", "read-committed", "read-uncommitted"]


@st.composite
def serial_histories(draw: Any, kind: str) -> list[dict[str, Any]]:
    """Transactions run one at a time against a correct store, each invoked after the previous
    completed; some fail (no effect) or end unknown (the effect applied or not)."""
    keys = draw(st.integers(1, 4))
    n = draw(st.integers(1, 25))
    state: dict[int, Any] = {}
    counter = 0
    evs: list[dict[str, Any]] = []
    for _ in range(n):
        p = draw(st.integers(0, 3))
        outcome = draw(st.sampled_from(["ok", "ok", "ok", "ok", "fail", "info"]))
        applied = outcome == "ok" or (outcome == "info" and draw(st.booleans()))
        local = dict(state)
        done, inv = [], []
        for _ in range(draw(st.integers(1, 5))):
            k = draw(st.integers(0, keys - 1))
            if draw(st.booleans()):
                counter += 1
                f = "append" if kind == LA else "w"
                local[k] = (*local.get(k, ()), counter) if kind == LA else counter
                done.append([f, k, counter])
                inv.append([f, k, counter])
            else:
                v = local.get(k, () if kind == LA else None)
                done.append(["r", k, list(v) if kind == LA else v])
                inv.append(["r", k, None])
        if applied:
            state = local
        evs.append({"process": p, "type": "invoke", "value": inv})
        evs.append({"process": p, "type": outcome, "value": done if outcome == "ok" else inv})
    return evs


@settings(max_examples=60, deadline=None)
@given(serial_histories(LA))
def test_serial_list_append_histories_have_no_anomaly(evs: list[dict[str, Any]]) -> None:
    v = check_txns(from_events(LA, evs), EVERY_MODEL)
    assert set(v.anomaly_types) <= {"empty-transaction-graph"}, v.text()
    assert v.valid is not False


@settings(max_examples=60, deadline=None)
@given(serial_histories(RR))
def test_serial_rw_register_histories_have_no_anomaly(evs: list[dict[str, Any]]) -> None:
    h = from_events(RR, evs)
    for opts in ({}, {"wfr_keys": True, "sequential_keys": True, "linearizable_keys": True}):
        v = check_txns(h, EVERY_MODEL, **opts)
        assert set(v.anomaly_types) <= {"empty-transaction-graph"}, v.text()


@settings(max_examples=40, deadline=None)
@given(kind=st.sampled_from([LA, RR]), level=st.sampled_from(sorted(CLAIM)), seed=st.integers(0, 10**6),
       n=st.integers(5, 80), keys=st.integers(1, 6), processes=st.integers(1, 6),
       abort=st.sampled_from([0.0, 0.1]), lost_reply=st.sampled_from([0.0, 0.1]))
def test_simulated_store_shows_only_what_its_level_allows(kind: str, level: str, seed: int, n: int,
                                                          keys: int, processes: int, abort: float,
                                                          lost_reply: float) -> None:
    evs = simulate(n, kind=kind, level=level, keys=keys, processes=processes, seed=seed, abort=abort,
                   lost_reply=lost_reply)
    v = check_txns(from_events(kind, evs), [CLAIM[level]], wfr_keys=True)
    assert v.valid is not False, v.text()
    assert not set(v.anomaly_types) & prohibited_anomalies([CLAIM[level]])


def _found(kind: str, level: str, seeds: range, model: str = "strict-serializable") -> set[str]:
    seen: set[str] = set()
    for seed in seeds:
        evs = simulate(60, kind=kind, level=level, keys=3, processes=4, seed=seed, abort=0.1, lost_reply=0.05)
        seen |= set(check_txns(from_events(kind, evs), [model], wfr_keys=True).anomaly_types)
    return seen


def test_weaker_stores_show_their_anomalies() -> None:
    # the detectors fire on the stores that allow their anomaly (and, above, never on a serial history)
    assert _found(LA, "serializable", range(20)) == set()
    assert {"G2-item"} <= _found(LA, "snapshot-isolation", range(20))
    assert {"G-single-item", "G2-item", "lost-update"} <= _found(LA, "read-committed", range(20))
    assert {"G1a", "G1b", "G1c", "dirty-update"} <= _found(LA, "read-uncommitted", range(20))
    assert {"G-single-item", "lost-update", "internal"} <= _found(RR, "read-committed", range(20))
    assert {"G1a", "G1b"} <= _found(RR, "read-uncommitted", range(20))


def test_same_history_same_output() -> None:
    evs = simulate(300, kind=LA, level="read-committed", keys=5, processes=6, seed=7, abort=0.05)
    lines = [json.dumps(e) for e in evs]
    outs = set()
    for _ in range(2):
        h = from_events(LA, [json.loads(line) for line in lines])
        v = check_txns(h)
        outs.add(json.dumps(v.to_json(h.locate), default=str) + v.text(h.locate))
    assert len(outs) == 1
