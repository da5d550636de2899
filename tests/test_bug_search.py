"""The targeted bug search (analyses/bug_search.py): each class found from the generic space, shrunk,
replayable; a safe variant gives no find; the class predicates tell the classes apart."""

from __future__ import annotations

from dataclasses import replace
from functools import cache
from pathlib import Path

import pytest

from analyses import bug_search as bs
from cli.main import main
from model.checkers.lock_run import check_lock_history
from model.config import ErrorRule, FaultPlan, Pause
from model.runtime.sim import run_scenario
from scenarios import loader

SEARCH_SEED = 0


@cache
def found(target: str) -> bs.SearchResult:
    """One search per class for the whole module (a search takes about a second)."""
    return bs.search(target, SEARCH_SEED)


def only_fault(result: bs.SearchResult) -> Pause | ErrorRule:
    assert result.scenario is not None, result.describe()
    faults = (*result.scenario.faults.pauses, *result.scenario.faults.errors)
    assert len(faults) == 1, result.describe()
    assert not result.scenario.clocks, result.describe()  # skew was not needed: shrunk away
    return faults[0]


def test_the_long_pause_is_found_and_shrunk_to_one_pause_past_the_lease() -> None:
    r = found("long-pause")
    pause = only_fault(r)
    assert isinstance(pause, Pause), r.describe()
    # A pause shorter than validity - renew interval is survived (test_lock_properties' safe property).
    assert pause.duration_ms > bs.VALIDITY_MS - bs.RENEW_MS, r.describe()
    assert r.evidence is not None and r.evidence.kind in bs.SAFETY, r.describe()


@pytest.mark.parametrize(("target", "statuses"), [("throttled-renewal", {"429"}),
                                                  ("failed-renewal", {"503", "timeout"})])
def test_failing_renewals_are_found_and_shrunk_to_one_rule_on_lock_writes(target: str,
                                                                          statuses: set[str]) -> None:
    r = found(target)
    rule = only_fault(r)
    assert isinstance(rule, ErrorRule), r.describe()
    assert rule.status in statuses and rule.key == "lock" and rule.method == "write", r.describe()
    assert rule.prob == 1.0 and rule.count == 0, r.describe()
    # Renewals must fail for about a validity for a contender to take the lock (validity - renew + the
    # drift allowance, less how long before the window the last renewal landed).
    assert rule.end_ms - rule.start_ms > bs.VALIDITY_MS - 2 * bs.RENEW_MS, r.describe()
    assert r.evidence is not None and r.evidence.kind in bs.SAFETY, r.describe()


def test_the_lost_reply_is_found_as_a_dangling_lock_after_a_failed_acquisition() -> None:
    r = found("lost-reply")
    rule = only_fault(r)
    assert isinstance(rule, ErrorRule) and rule.status == "lost-reply", r.describe()
    assert r.evidence is not None and r.evidence.kind == "dangling-lock", r.describe()
    assert r.evidence.details["cause"] == "acquire", r.describe()
    # With Hudi 1.2.0 a lost reply is a liveness finding, not a safety violation.
    assert r.scenario is not None and r.scenario.expect == "ok", r.describe()


@pytest.mark.parametrize("target", bs.TARGETS)
def test_a_find_written_as_a_scenario_file_replays_the_same_evidence(target: str, tmp_path: Path) -> None:
    r = found(target)
    path = tmp_path / f"{target}.toml"
    path.write_text(bs.scenario_toml(r))
    scenario = loader.load(str(path))
    assert r.evidence is not None and r.evidence.kind in bs.replay_kinds(scenario), r.describe()
    assert scenario == r.scenario, r.describe()


def test_the_fenced_variant_gives_no_find_within_the_budget() -> None:
    """Fencing refuses the paused holder's stale write: the search must be able to come back empty."""
    r = bs.search("long-pause", SEARCH_SEED, variant="fenced", max_examples=60)
    assert not r.found, r.describe()
    assert r.runs > 30, r.describe()  # it did search: most drawn cases were in the class and were run
    control = bs.search("long-pause", SEARCH_SEED, variant="hudi", max_examples=60)
    assert control.found, control.describe()  # the same budget without fencing finds the pause


def test_the_classes_tell_renewal_failures_apart() -> None:
    """The failed-renewal find is no throttled-renewal (no 429 in the plan, no THROTTLED renewal), and the
    long pause's plan is in no error class: each predicate rejects the others' cases."""
    failed, pause = found("failed-renewal"), found("long-pause")
    assert failed.scenario is not None and pause.scenario is not None
    throttled = bs.CLASSES["throttled-renewal"]
    assert not bs.in_class(throttled, failed.scenario.faults)
    events = run_scenario(failed.scenario, failed.scenario.seed)
    verdict = check_lock_history(events, failed.scenario.checkers)
    assert verdict.violations  # the run is unsafe, yet not of the throttled class:
    assert bs.evidence(throttled, events, verdict) is None
    # the same window with 429 instead of 503 is a throttled-renewal case
    as_429 = replace(failed.scenario.faults, errors=tuple(replace(e, status="429")
                                                          for e in failed.scenario.faults.errors))
    assert bs.in_class(throttled, as_429)
    for name in ("throttled-renewal", "failed-renewal", "lost-reply"):
        assert not bs.in_class(bs.CLASSES[name], pause.scenario.faults)
    mixed = FaultPlan(pauses=pause.scenario.faults.pauses, errors=failed.scenario.faults.errors)
    assert not any(bs.in_class(c, mixed) for c in bs.CLASSES.values())


def test_lease_overrun_is_past_the_allowance_on_a_find_and_negative_without_faults() -> None:
    r = found("long-pause")
    assert r.scenario is not None
    unsafe = run_scenario(r.scenario, r.scenario.seed)
    assert bs.lease_overrun(unsafe) > 500  # the contender's drift allowance, at least
    assert bs.lease_overrun(run_scenario(bs.base_scenario(), r.scenario.seed)) < 0


def test_the_same_search_seed_gives_the_same_find() -> None:
    again = bs.search("lost-reply", SEARCH_SEED)
    assert again.scenario == found("lost-reply").scenario, again.describe()


def test_an_unknown_target_is_refused_by_name() -> None:
    with pytest.raises(ValueError, match="target = 'long-paws'"):
        bs.search("long-paws", 0)
    with pytest.raises(ValueError, match="variant = 'hudi-9'"):
        bs.search("long-pause", 0, variant="hudi-9")
    with pytest.raises(ValueError, match="nothing found"):
        bs.scenario_toml(bs.SearchResult("long-pause", 0, None, None, 0, 0, 0.0))


def test_hcc_search_writes_a_find_that_hcc_run_replays(tmp_path: Path,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "found.toml"
    assert main(["search", "lost-reply", "--seed", str(SEARCH_SEED), "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "dangling-lock" in printed and f"hcc run {out}" in printed
    assert main(["run", str(out), "--out", str(tmp_path / "run")]) == 0  # the verdict it expects


def test_hcc_search_refuses_bad_input_by_name(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "found.toml"
    assert main(["search", "long-pause", "--max-examples", "0", "--out", str(out)]) == 2
    assert "--max-examples = 0" in capsys.readouterr().err
    assert main(["search", "long-pause", "--out", str(tmp_path / "missing" / "x.toml")]) == 2
    assert "--out" in capsys.readouterr().err
    assert not out.exists()
