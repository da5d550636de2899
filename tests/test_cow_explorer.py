"""The v5 copy-on-write explorer against the TLC results of issue 3.

Every row of the issue's table (Jack Vanlightly's TLA+ spec ``hudi/v5_spec/basic_cow``
under TLC, 2 writers, 2 keys, 2 values) is a test: the verdict must match, and
a violation's shortest counterexample must have the same number of states.
"Holds" rows run with symmetry reduction (sound: the same verdict, depth and
shortest counterexample as the full search, which the small-configuration
tests below check); their depth must equal TLC's.  Without symmetry the
encoding is a bijection of the specification's variables, so the distinct-state
counts equal TLC's; one row checks that exactly.

Hypothesis drives random walks through the same transition function for
3 writers and 3 file groups, too large to enumerate.
"""

from __future__ import annotations

import argparse
import json
import random

import pytest
from hypothesis import HealthCheck, Phase, find, given, settings
from hypothesis import strategies as st

from model.cow import CC, CowConfig, CowSpec, WalkResult, consistent_read, explore, random_walk
from model.cow.invariants import check_consistent_read
from model.cow.spec import COMPLETED, DELETE, INFLIGHT, INSERT, REQUESTED, UPDATE
from model.cow.symmetry import Canonicalizer

T, F = True, False

# M, CC, PIA, PK, salt, FG, Op, verdict, TLC distinct states (holds) / shortest counterexample, TLC depth
TABLE = [
    pytest.param(T, 1, F, T, F, 1, 4, "holds", 1_486_597, 33, id="M-OCC-PK", marks=pytest.mark.slow),
    pytest.param(T, 2, F, T, F, 1, 4, "holds", 691_973, 29, id="M-PCC-PK"),
    pytest.param(T, 1, F, F, F, 2, 4, "violated", 17, None, id="M-OCC-noPK-2FG-duplicate-key"),
    pytest.param(T, 2, F, F, F, 2, 4, "violated", 15, None, id="M-PCC-noPK-2FG"),
    pytest.param(T, 0, F, T, F, 1, 4, "violated", 15, None, id="M-noCC-lost-update"),
    pytest.param(F, 0, F, T, F, 1, 4, "violated", 13, None, id="noM-noCC-slice-overwritten"),
    pytest.param(F, 0, T, T, F, 1, 4, "violated", 15, None, id="noM-noCC-PIA"),
    pytest.param(F, 0, F, T, T, 1, 4, "violated", 15, None, id="noM-noCC-salt"),
    pytest.param(F, 1, F, T, F, 1, 4, "violated", 14, None, id="noM-OCC-overwritten-before-validation"),
    pytest.param(F, 1, T, T, F, 1, 4, "holds", 2_002_127, 33, id="noM-OCC-PIA", marks=pytest.mark.slow),
    pytest.param(F, 1, F, T, T, 1, 4, "holds", 8_797_996, 33, id="noM-OCC-salt", marks=pytest.mark.slow),
    pytest.param(F, 2, F, T, F, 1, 4, "holds", 1_751_251, 29, id="noM-PCC", marks=pytest.mark.slow),
    pytest.param(F, 2, F, T, F, 2, 4, "violated", 15, None, id="noM-PCC-2FG-completed-overwritten"),
    pytest.param(F, 2, T, T, F, 1, 4, "holds", 979_803, 29, id="noM-PCC-PIA"),
    pytest.param(F, 2, F, T, T, 1, 4, "holds", 4_020_888, 29, id="noM-PCC-salt", marks=pytest.mark.slow),
]


def _cfg(m: bool, cc: int, pia: bool, pk: bool, salt: bool, fg: int, op: int, **kw: int) -> CowConfig:
    return CowConfig(monotonic_ts=m, cc=CC(cc), put_if_absent=pia, pk_check=pk, salt=salt, file_groups=fg,
                     ops=op, **kw)


@pytest.mark.parametrize("m,cc,pia,pk,salt,fg,op,verdict,number,depth", TABLE)
def test_issue_table_row(m: bool, cc: int, pia: bool, pk: bool, salt: bool, fg: int, op: int, verdict: str,
                         number: int, depth: int | None) -> None:
    cfg = _cfg(m, cc, pia, pk, salt, fg, op)
    res = explore(cfg, symmetry=True)
    assert res.verdict == verdict
    if verdict == "violated":
        assert res.counterexample_length == number
        assert res.depth == number
        # the unreduced search agrees on the shortest counterexample
        full = explore(cfg)
        assert full.verdict == "violated" and full.counterexample_length == number
    else:
        assert res.complete and res.violation is None
        assert res.depth == depth
        # symmetry keeps one state per orbit: at most 8 (2! writers x 2! keys x 2! values) per class
        assert number / 8 <= res.states < number


@pytest.mark.slow
def test_distinct_states_equal_tlc_without_symmetry() -> None:
    # M=T CC=2 PIA=F PK=T: TLC reports 691,973 distinct states, depth 29.
    res = explore(_cfg(T, 2, F, T, F, 1, 4))
    assert (res.verdict, res.states, res.depth) == ("holds", 691_973, 29)


def test_distinct_states_small_configuration_exact_vs_fingerprint() -> None:
    cfg = _cfg(F, 1, F, T, T, 1, 2)
    a, b = explore(cfg), explore(cfg, exact=True)
    assert (a.verdict, a.states, a.depth, a.generated) == (b.verdict, b.states, b.depth, b.generated)


SMALL = [
    _cfg(m, cc, pia, pk, salt, fg, op)
    for (m, cc, pia, pk, salt, fg, op) in [
        (T, 1, F, T, F, 1, 3), (T, 2, F, T, F, 1, 3), (F, 1, T, T, F, 1, 3), (F, 0, F, T, T, 1, 3),
        (T, 1, F, F, F, 2, 3), (F, 2, F, T, F, 2, 3), (T, 0, F, T, F, 1, 3), (F, 1, F, T, F, 1, 3),
    ]
] + [CowConfig(writers=3, ops=2, cc=CC.PESSIMISTIC), CowConfig(writers=2, keys=3, values=1, ops=3)]


@pytest.mark.parametrize("cfg", SMALL, ids=[c.row() for c in SMALL])
def test_symmetry_preserves_verdict_depth_and_counterexample_length(cfg: CowConfig) -> None:
    full, reduced = explore(cfg), explore(cfg, symmetry=True)
    assert full.verdict == reduced.verdict
    assert full.depth == reduced.depth
    assert full.counterexample_length == reduced.counterexample_length
    assert reduced.states <= full.states


def test_canonical_form_is_constant_on_orbits() -> None:
    cfg = CowConfig(writers=2, keys=2, values=2, file_groups=2, ops=3, cc=CC.PESSIMISTIC, pk_check=False)
    spec = CowSpec(cfg)
    canon = Canonicalizer(cfg.keys, cfg.values).canonical
    rng = random.Random(7)
    for _ in range(300):
        s = spec.initial()
        for _ in range(rng.randrange(1, 20)):
            succ = spec.successors(s)
            if not succ:
                break
            s = succ[rng.randrange(len(succ))][2]
        # swapping the two writers (and lock owners) must not change the canonical form
        swap = (0, 2, 1)
        t = ((s[0][1], s[0][0]), swap[s[1]], tuple(swap[x] for x in s[2]), *s[3:])
        assert canon(s) == canon(t)  # type: ignore[arg-type]
        assert canon(canon(s)) == canon(s)


def test_counterexample_is_a_real_behaviour() -> None:
    cfg = _cfg(T, 0, F, T, F, 1, 4)
    res = explore(cfg, symmetry=True)
    assert res.violation is not None
    assert res.trace[0].action == "Init"
    assert len(res.trace) == res.counterexample_length == 15
    assert "lost" in res.violation.kind or "wrong value" in res.violation.kind
    # every step is a transition of the specification; only the last state violates
    spec = CowSpec(cfg)
    assert res.trace[0].raw == spec.initial()
    for prev, step in zip(res.trace, res.trace[1:], strict=False):
        assert any(t == step.raw and a_ in range(9) and w + 1 == step.writer
                   for a_, w, t in spec.successors(prev.raw)), step
        assert (consistent_read(step.raw) is None) == (step is not res.trace[-1])


def test_duplicate_key_counterexample_names_two_file_groups() -> None:
    res = explore(_cfg(T, 1, F, F, F, 2, 4), symmetry=True)
    assert res.violation is not None
    assert {fg for fg, _ in res.violation.found} == {1, 2}
    assert res.violation.kind == "key visible in two file groups with different values"


# --- the invariant checker must be able to fail -----------------------------------------------------

def test_invariant_detects_hand_built_lost_update() -> None:
    # k1=A committed at ts 1 in slice 1; a writer at ts 2 merged an empty snapshot and wrote
    # slice 2 = {k2=B} (k1 lost), then committed: a read at ts 2 must still see k1=A.
    timeline = ((1, REQUESTED, 0, 0), (1, INFLIGHT, 0, 0), (1, COMPLETED, 0, 1),
                (2, REQUESTED, 0, 0), (2, INFLIGHT, 0, 0), (2, COMPLETED, 0, 1))
    files = (((1, 0, 1, 0), (2, 0, 0, 2)),)
    log = (((INSERT, 0, 1),), ((INSERT, 1, 2),))
    v = check_consistent_read(timeline, files, log)
    assert v is not None and (v.key, v.ts, v.expected, v.found) == (0, 2, 0, ())
    good_files = (((1, 0, 1, 0), (2, 0, 1, 2)),)
    assert check_consistent_read(timeline, good_files, log) is None


def test_invariant_detects_deleted_value_and_duplicates() -> None:
    timeline = ((1, COMPLETED, 0, 1), (2, COMPLETED, 0, 2), (3, COMPLETED, 0, 1))
    files = (((1, 0, 1), (3, 0, 1)), ((2, 0, 2),))
    # k1 inserted A in fg1 at 1, inserted B in fg2 at 2 (no PK check), then updated A at 3
    log = (((INSERT, 0, 1), (INSERT, 1, 2), (UPDATE, 0, 3)),)
    v = check_consistent_read(timeline, files, log)
    assert v is not None and v.ts == 2 and len(v.found) == 2
    deleted = (((INSERT, 0, 1), (DELETE, 1, 2), (DELETE, 0, 3)),)
    v2 = check_consistent_read(timeline, files, deleted)
    assert v2 is not None and v2.expected is None


def test_known_unsafe_configuration_is_caught_at_every_size() -> None:
    # No concurrency control with monotonic times loses updates; the explorer must say so.
    for ops in (3, 4):
        res = explore(_cfg(T, 0, F, T, F, 1, ops), symmetry=True)
        assert res.verdict == "violated"


# --- Hypothesis: random walks through larger configurations ----------------------------------------

BIG = dict(writers=3, file_groups=3, keys=2, values=2, ops=6)
WALK_SETTINGS = settings(max_examples=3000, deadline=None, database=None, derandomize=True,
                         phases=[Phase.generate, Phase.shrink],
                         suppress_health_check=list(HealthCheck))
CHOICES = st.lists(st.integers(0, 2**16), min_size=10, max_size=80)


def _walk(cfg: CowConfig, choices: list[int]) -> WalkResult:
    it = iter(choices)
    return random_walk(cfg, lambda n: next(it, 0) % n, max_steps=len(choices))


LOST = ("committed value lost", "wrong value read (lost update or overwritten file)")
DUPLICATE = ("key visible in two file groups with different values",)


def _violates(cfg: CowConfig, kinds: tuple[str, ...] | None = None) -> list[int]:
    def bad(choices: list[int]) -> bool:
        v = _walk(cfg, choices).violation
        return v is not None and (kinds is None or v.kind in kinds)

    return find(CHOICES, bad, settings=WALK_SETTINGS)


@pytest.mark.parametrize("cfg,kinds", [
    (CowConfig(**BIG, cc=CC.NONE), LOST),  # lost update with monotonic times
    (CowConfig(**BIG, cc=CC.OPTIMISTIC, pk_check=False), DUPLICATE),  # duplicate key across file groups
    (CowConfig(**BIG, cc=CC.OPTIMISTIC, monotonic_ts=False), LOST),  # overwritten before OCC validates
    (CowConfig(**BIG, cc=CC.PESSIMISTIC, monotonic_ts=False), None),  # completed instant overwritten
], ids=["noCC-lost-update", "OCC-noPK-duplicate-key", "noM-OCC", "noM-PCC-3FG"])
def test_hypothesis_finds_violations_in_larger_configurations(cfg: CowConfig,
                                                              kinds: tuple[str, ...] | None) -> None:
    choices = _violates(cfg, kinds)
    r = _walk(cfg, choices)
    assert r.violation is not None
    assert kinds is None or r.violation.kind in kinds
    # shrunk to a short walk: no longer than the 3-writer random walks need (TLC-sized: < 40 states)
    assert r.length < 40


@settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.lists(st.integers(0, 2**16), min_size=10, max_size=120),
       st.sampled_from([dict(cc=CC.OPTIMISTIC), dict(cc=CC.PESSIMISTIC, file_groups=1),
                        dict(cc=CC.OPTIMISTIC, monotonic_ts=False, put_if_absent=True),
                        dict(cc=CC.OPTIMISTIC, monotonic_ts=False, salt=True)]))
def test_hypothesis_safe_configurations_hold_on_random_walks(choices: list[int],
                                                             opts: dict[str, object]) -> None:
    # (the first three also hold exhaustively for 3 writers, 3 file groups and 3 operations)
    cfg = CowConfig(**{**BIG, **opts})  # type: ignore[arg-type]
    r = _walk(cfg, choices)
    assert r.violation is None, r.steps


# --- the command line --------------------------------------------------------------------------------

def _run_cli(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    from cli import explore as cmd_explore

    p = argparse.ArgumentParser()
    cmd_explore.register(p.add_subparsers())
    a = p.parse_args(["explore", *argv])
    rc = a.func(a)
    out = capsys.readouterr()
    return rc, out.out, out.err


def test_cli_json_violation(capsys: pytest.CaptureFixture[str]) -> None:
    rc, out, _ = _run_cli(["--monotonic-ts", "no", "--cc", "none", "--json"], capsys)
    d = json.loads(out)
    assert rc == 1
    assert d["verdict"] == "violated" and d["counterexample_length"] == 13
    assert len(d["counterexample"]) == 13 and d["counterexample"][0]["action"] == "Init"
    assert {"states", "depth", "seconds"} <= d.keys()


def test_cli_json_holds(capsys: pytest.CaptureFixture[str]) -> None:
    rc, out, _ = _run_cli(["--ops", "2", "--cc", "pessimistic", "--symmetry", "--json"], capsys)
    d = json.loads(out)
    assert rc == 0 and d["verdict"] == "holds" and d["depth"] == 15 and d["states"] > 0


@pytest.mark.parametrize("argv,needle", [
    (["--writers", "two"], "--writers: 'two'"),
    (["--cc", "mvcc"], "--cc: 'mvcc'"),
    (["--put-if-absent", "maybe"], "--put-if-absent: 'maybe'"),
    (["--file-groups", "0"], "--file-groups: 0"),
    (["--max-states", "-1"], "--max-states: -1"),
])
def test_cli_bad_input(argv: list[str], needle: str, capsys: pytest.CaptureFixture[str]) -> None:
    rc, _, err = _run_cli(argv, capsys)
    assert rc == 2 and needle in err


def test_cli_max_states_is_not_a_proof(capsys: pytest.CaptureFixture[str]) -> None:
    rc, out, _ = _run_cli(["--max-states", "100", "--json"], capsys)
    assert rc == 3 and json.loads(out)["verdict"] == "unknown"
