"""The register linearizability checker (model/checkers/linearizable.py) on hand-made histories."""

from __future__ import annotations

from model.checkers.linearizable import Event, check


def _race(winners: set[int], n: int = 32, initial_expected: object = None) -> list[Event]:
    events = [Event(p, "invoke", "cas", (initial_expected, f"v{p}"), p * 0.01) for p in range(n)]
    events += [Event(p, "ok" if p in winners else "fail", "cas", None, 10 + p * 0.01) for p in range(n)]
    return events


def test_two_winners_of_one_create_race_are_rejected() -> None:
    verdict = check(_race({3, 7}))
    assert not verdict.valid
    # the smallest proof is the two successful creates
    assert {(op.process, op.status) for op in verdict.counterexample} == {(3, "ok"), (7, "ok")}
    assert "NOT linearizable" in verdict.explain()


def test_one_winner_is_accepted() -> None:
    assert check(_race({5})).valid


def test_no_winner_with_definite_failures_is_rejected() -> None:
    # every create answered 412 although the object never existed
    assert not check(_race(set())).valid


def test_unknown_outcome_may_be_the_winner() -> None:
    events = [Event(1, "invoke", "cas", (None, "x"), 0), Event(1, "info", "cas", None, 5),
              Event(2, "invoke", "cas", (None, "y"), 1), Event(2, "fail", "cas", None, 6),
              Event("r", "invoke", "read", None, 7), Event("r", "ok", "read", "x", 8)]
    assert check(events).valid


def test_412_before_the_winner_started_is_rejected() -> None:
    events = [Event(1, "invoke", "cas", (None, "x"), 0), Event(1, "fail", "cas", None, 1),
              Event(2, "invoke", "cas", (None, "y"), 2), Event(2, "ok", "cas", None, 3)]
    assert not check(events).valid


def test_replace_race_two_winners_rejected_and_final_read_checked() -> None:
    assert not check(_race({1, 2}, initial_expected="base"), initial="base").valid
    ok = _race({4}, initial_expected="base") + [Event("r", "invoke", "read", None, 20),
                                                Event("r", "ok", "read", "v4", 21)]
    assert check(ok, initial="base").valid
    wrong = ok[:-1] + [Event("r", "ok", "read", "v5", 21)]
    assert not check(wrong, initial="base").valid


def test_real_time_order_is_respected() -> None:
    # write x completes, then a later read still sees the initial value: stale read
    events = [Event(1, "invoke", "write", "x", 0), Event(1, "ok", "write", None, 1),
              Event(2, "invoke", "read", None, 2), Event(2, "ok", "read", None, 3)]
    assert not check(events).valid
