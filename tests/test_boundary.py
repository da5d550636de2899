"""hcc boundary: bisection, evidence and its shrink, the RFC-91 pause boundary against the hand derivation."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from analyses.boundary import Probe, Prober, bisect, evidence, parse_range, pause_derivation, shrink
from cli.main import main
from engines.local import LocalEngine
from model.config import ConfigError

PAUSE = "faults.pauses[0].duration_ms"
# A fast RFC-91 scenario: a 10 s lease renewed every second, a pause before a write after 5 s.
FAST = ["lock.validity_secs=10", "lock.renew_interval_secs=1", "duration_ms=40000",
        "faults.pauses[0].at_ms=5000"]
V, R, A, P, LATENCY_HI = 10_000, 1_000, 500, 1_000, 40


@pytest.mark.parametrize("text", ["5", "a:b", "10:5", "3:3", "1:2:3"])
def test_bad_ranges_name_the_option(text: str) -> None:
    with pytest.raises(ConfigError) as err:
        parse_range(text)
    assert err.value.field == "--range"


def test_ranges_are_ints_unless_a_bound_has_a_fraction() -> None:
    assert parse_range("0:600_000") == (0, 600_000)
    assert parse_range("0.5:2") == (0.5, 2.0)


def _threshold(at: float):  # a probe that violates from ``at`` upwards
    return lambda _i, v: Probe(v, (1,), (1,) if v >= at else ())


def test_bisection_brackets_a_threshold() -> None:
    s = bisect("x", 0, 10_000, 1, _threshold(1234))
    assert (s.outcome, s.safe, s.unsafe) == ("found", 1233, 1234)
    assert len(s.probes) <= 2 + 14
    s = bisect("x", 0.0, 1.0, 0.01, _threshold(0.3))
    assert s.outcome == "found" and 0.29 <= s.safe < 0.3 <= s.unsafe <= 0.31
    assert bisect("x", 0, 100, 1, _threshold(500)).outcome == "none-in-range"
    assert bisect("x", 10, 100, 1, _threshold(0)).outcome == "violates-at-lo"


def test_pause_boundary_matches_the_hand_derivation() -> None:
    seeds = [1, 2, 3]
    prober = Prober("rfc91-long-pause", FAST, PAUSE, seeds, LocalEngine(quiet=True))
    tolerance = 50
    s = bisect(PAUSE, 0, 30_000, tolerance, prober)
    assert s.outcome == "found" and s.safe is not None and s.unsafe is not None
    assert s.unsafe - s.safe <= tolerance
    # Between the worst case (pause just before a renewal) and the best case, plus a poll and a round trip.
    assert V - R + A - tolerance <= s.unsafe <= V + A + P + 2 * LATENCY_HI + tolerance
    # The search's claims hold when rerun: the boundary value violates, the largest safe value does not.
    at_safe = prober(0, s.safe)
    at_unsafe = prober(0, s.unsafe)
    assert not at_safe.violates and at_unsafe.violates
    ev = evidence(prober, s.unsafe, min(at_unsafe.violating))
    lines = pause_derivation(PAUSE, s.unsafe, s.unsafe - s.safe, ev)
    assert lines is not None and "Consistent." in " ".join(lines), "\n".join(lines)
    # For the evidence seed, the boundary is the lease left at the pause + A, plus at most a poll and latency.
    text = "\n".join(lines)
    predicted = int(text.split("V + A - t - s = ")[1].split(" ms")[0])
    assert 0 <= s.unsafe - predicted <= P + 2 * LATENCY_HI + tolerance


def test_shrink_drops_faults_the_violation_does_not_need(tmp_path: Path) -> None:
    path = tmp_path / "two-pauses.toml"
    path.write_text("""
name = "two-pauses"
duration_ms = 40_000
[lock]
validity_secs = 10
renew_interval_secs = 1
[[faults.pauses]]
node = "w1"
trigger = "write"
at_ms = 5_000
duration_ms = 14_000
[[faults.pauses]]
node = "w3"
at_ms = 1_000
duration_ms = 200
[[faults.errors]]
node = "w2"
key = "register"
status = "503"
prob = 0.0
""")
    prober = Prober(str(path), [], PAUSE, [1], LocalEngine(quiet=True))
    scenario = prober.build(14_000)
    shrunk, dropped = shrink(scenario, 1, PAUSE)
    assert [p.node for p in shrunk.faults.pauses] == ["w1"] and shrunk.faults.errors == ()
    assert len(dropped) == 2 and any("pause w3" in d for d in dropped)
    assert prober(0, 14_000).violates


def test_cli_boundary_json_and_text(capsys: pytest.CaptureFixture[str]) -> None:
    args = ["boundary", "rfc91-long-pause", "--param", PAUSE, "--range", "0:30000", "--seeds", "2",
            "--tolerance", "200", "--engine", "local", "--quiet", *(x for kv in FAST for x in ("--set", kv))]
    assert main([*args, "--json"]) == 0
    captured = capsys.readouterr()
    result = json.loads(captured.out)
    assert result["outcome"] == "found" and V - R + A - 200 <= result["boundary"] <= V + A + P + 280
    assert result["evidence"]["schedule"][0].startswith("pause w1 at its first write after 5000 ms for ")
    assert any("V - R + A - s = 9500 ms" in line for line in result["evidence"]["hand_derivation"])
    assert "probe  1" in captured.err
    assert main(args) == 0
    assert "boundary: faults.pauses[0].duration_ms = " in capsys.readouterr().out


def test_cli_boundary_bad_input(capsys: pytest.CaptureFixture[str]) -> None:
    base = ["boundary", "rfc91-long-pause", "--engine", "local", "--range", "0:10"]
    assert main([*base, "--param", "lock.nosuch"]) == 2
    assert "lock.nosuch" in capsys.readouterr().err
    assert main([*base, "--param", PAUSE, "--tolerance", "-1"]) == 2
    assert main([*base, "--param", PAUSE, "--seeds", "0"]) == 2


def test_cli_boundary_says_when_the_range_holds_no_boundary(capsys: pytest.CaptureFixture[str]) -> None:
    args = ["boundary", "rfc91-long-pause", "--param", PAUSE, "--range", "0:3000", "--seeds", "1",
            "--engine", "local", "--quiet", *(x for kv in FAST for x in ("--set", kv))]
    assert main(args) == 1
    assert "does not bracket a boundary" in capsys.readouterr().out
