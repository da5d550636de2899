"""hcc check-audit: Hudi's lock audit files, validated by the rule of hudi-cli's ``locks audit validate``.

Folders are built in Hudi's exact format (StorageLockProviderAuditService, apache/hudi 54cb1a57):
``<table>/.hoodie/.locks/audit/<transactionStartTime>_<ownerId>.jsonl`` beside ``audit_enabled.json``
and ``table_lock.json``.  Every folder is checked from the table root, ``.hoodie/.locks`` and ``audit/``.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from backends.hudi_audit import AuditFormatError, parse_audit_text, read_local, validate, window_events
from cli.main import main
from engines.rundir import execute
from model.lock.audit import AuditTrail, enable_body, is_enabled
from model.runtime.history import loads
from scenarios import loader

LOCKS = ".hoodie/.locks"
AUDIT = f"{LOCKS}/audit"
V = 300_000
A, B = "0f6d2e1c-aaaa-4bbb-8ccc-000000000001", "7a1b9c3d-aaaa-4bbb-8ccc-000000000002"


def rec(owner: str, txn: int, ts: int, state: str, held: bool = True) -> str:
    """One record as Hudi writes it (lockExpiration = timestamp + validity)."""
    return json.dumps({"ownerId": owner, "transactionStartTime": txn, "timestamp": ts, "state": state,
                       "lockExpiration": ts + V, "lockHeld": held}, separators=(",", ":"))


def table(root: Path, files: dict[str, list[str]]) -> Path:
    """A table folder with the lock folder's own files and the audit files."""
    folder = root / "t" / AUDIT
    folder.mkdir(parents=True)
    (root / "t" / LOCKS / "audit_enabled.json").write_bytes(enable_body())
    (root / "t" / LOCKS / "table_lock.json").write_text('{"expired":true,"validUntil":1,"owner":"x"}')
    for name, lines in files.items():
        (folder / name).write_text("".join(line + "\n" for line in lines))
    return root / "t"


def paths(t: Path) -> list[Path]:
    return [t, t / LOCKS, t / AUDIT]


def cycle(owner: str, start: int, end: int | None, renews: tuple[int, ...] = ()) -> list[str]:
    lines = [rec(owner, start, start, "START"), *(rec(owner, start, r, "RENEW") for r in renews)]
    return lines + ([rec(owner, start, end, "END")] if end is not None else [])


def verdict_of(path: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, dict[str, object]]:
    code = main(["check-audit", str(path), "--json"])
    return code, json.loads(capsys.readouterr().out)


# ---- Hudi's verdicts on folders of each kind, from all three paths --------------------------------


def test_clean_folder_passes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    t = table(tmp_path, {f"1000_{A}.jsonl": cycle(A, 1000, 40_000, (31_000,)),
                         f"41000_{B}.jsonl": cycle(B, 41_000, 50_000)})
    for p in paths(t):
        code, out = verdict_of(p, capsys)
        assert (code, out["validator"], out["transactions"], out["records"]) == (0, "PASSED", 2, 5)


def test_an_overlap_with_end_fails(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    t = table(tmp_path, {f"1000_{A}.jsonl": cycle(A, 1000, 40_000),
                         f"35000_{B}.jsonl": cycle(B, 35_000, 50_000)})
    for p in paths(t):
        code, out = verdict_of(p, capsys)
        assert code == 1 and out["validator"] == "FAILED"
        assert out["overlaps"] == [{"earlier": f"1000_{A}.jsonl", "later": f"35000_{B}.jsonl",
                                    "owners": [A, B], "earlier_window": [1000, 40_000], "later_start": 35_000,
                                    "overlap_ms": 5_000}]


def test_an_overlap_without_end_runs_to_the_last_lock_expiration(tmp_path: Path,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    # A's writer died: no END; its window ends at its last record's lockExpiration (31000 + V)
    t = table(tmp_path, {f"1000_{A}.jsonl": cycle(A, 1000, None, (31_000,)),
                         f"300000_{B}.jsonl": cycle(B, 300_000, 310_000)})
    for p in paths(t):
        code, out = verdict_of(p, capsys)
        assert code == 1 and out["without_end"] == [f"1000_{A}.jsonl"]
        assert out["overlaps"][0]["earlier_window"] == [1000, 31_000 + V]  # type: ignore[index]
    later = table(tmp_path / "x", {f"1000_{A}.jsonl": cycle(A, 1000, None, (31_000,)),
                                   f"331001_{B}.jsonl": cycle(B, 331_001, 340_000)})
    code, out = verdict_of(later, capsys)
    assert (code, out["validator"]) == (0, "WARNING")  # only "did not end gracefully"


def test_two_cycles_in_one_file_are_one_window(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # one provider, two START..END cycles (a provider kept after a failed release); B's transaction lies
    # between them: Hudi's window is first START to last END, so it flags B.
    t = table(tmp_path, {f"1000_{A}.jsonl": cycle(A, 1000, 5_000)
                         + [rec(A, 1000, 20_000, "START"), rec(A, 1000, 25_000, "END")],
                         f"10000_{B}.jsonl": cycle(B, 10_000, 12_000)})
    for p in paths(t):
        code, out = verdict_of(p, capsys)
        assert code == 1 and out["several_cycles"] == [f"1000_{A}.jsonl"]
        assert out["overlaps"][0]["earlier_window"] == [1000, 25_000]  # type: ignore[index]


def test_a_throttled_overlap_the_audit_cannot_show(tmp_path: Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    # A acquired at 1000; its renewals were throttled (no RENEW), its expire met B's lock (412: no END).
    # A kept writing until 360000, but its window ends at its START's lockExpiration, 301000: B's START
    # at 301600 is after it.  Hudi's validator reports only the missing END.
    t = table(tmp_path, {f"1000_{A}.jsonl": cycle(A, 1000, None),
                         f"301600_{B}.jsonl": cycle(B, 301_600, 400_000)})
    for p in paths(t):
        code, out = verdict_of(p, capsys)
        assert (code, out["validator"], out["overlaps"]) == (0, "WARNING", [])


def test_the_text_report_names_the_files(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    t = table(tmp_path, {f"1000_{A}.jsonl": cycle(A, 1000, 40_000),
                         f"35000_{B}.jsonl": cycle(B, 35_000, None)})
    assert main(["check-audit", str(t)]) == 1
    out = capsys.readouterr().out
    assert "Hudi's validator says FAILED" in out
    assert f"[ERROR] 1000_{A}.jsonl => overlaps with 35000_{B}.jsonl" in out
    assert f"[WARNING] 35000_{B}.jsonl => transaction did not end gracefully" in out


def test_one_object_per_file_form(tmp_path: Path) -> None:
    folder = tmp_path / AUDIT
    folder.mkdir(parents=True)
    for ts, owner, state in [(1000, A, "START"), (4000, A, "RENEW"), (9000, A, "END"), (5000, B, "START"),
                             (7000, B, "END"), (20000, A, "START"), (21000, A, "END")]:
        body = {"ownerId": owner, "timestamp": ts, "state": state, "lockExpiration": ts + 60000,
                "lockHeld": state != "END"}
        (folder / f"{ts}-{owner[:8]}-{state.lower()}.json").write_text(json.dumps(body, indent=2))
    records = read_local(tmp_path)
    assert len(records) == 7 and all(r.transaction_start is None for r in records)
    result = validate(records)
    assert [(w.owner, w.start, w.end) for w in result.windows] == [(A, 1000, 9000), (B, 5000, 7000),
                                                                     (A, 20000, 21000)]
    assert [(o.earlier.owner, o.later.owner) for o in result.overlaps] == [(A, B)]


def test_the_history_of_windows_is_written_and_rereadable(tmp_path: Path) -> None:
    t = table(tmp_path, {f"1000_{A}.jsonl": cycle(A, 1000, 40_000),
                         f"35000_{B}.jsonl": cycle(B, 35_000, 50_000)})
    out = tmp_path / "h.jsonl"
    assert main(["check-audit", str(t), "--history", str(out)]) == 1
    events = loads(out.read_text())
    assert [(e.node, e.f, e.time) for e in events] == [
        (A, "acquire", 0), (B, "acquire", 34_000), (A, "release", 39_000), (B, "release", 49_000)]
    assert events[1].clock == 35_000  # the writer's own clock reading
    assert window_events([]) == []


# ---- bad input: the file, the line, the field; exit 2, nothing on stdout -------------------------------


def test_bad_records_name_the_file_line_and_field(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(AuditFormatError, match=r"x.jsonl:2: field state = 'HELD'"):
        parse_audit_text(rec(A, 1, 1, "START") + "\n" + rec(A, 1, 2, "HELD") + "\n", "x.jsonl")
    with pytest.raises(AuditFormatError, match="field timestamp = '12'"):
        parse_audit_text('{"ownerId":"a","timestamp":"12","state":"START"}', "y.json")
    with pytest.raises(AuditFormatError, match=r"z.jsonl:3: not JSON"):
        parse_audit_text(rec(A, 1, 1, "START") + "\n\n{oops\n", "z.jsonl")
    bad = '{"ownerId": "a", "timestamp": 1, "state": "START", "lockHeld": 1}'
    t = table(tmp_path, {"1_a.jsonl": [rec(A, 1, 1, "START"), bad]})
    assert main(["check-audit", str(t)]) == 2
    captured = capsys.readouterr()
    assert "1_a.jsonl:2: field lockHeld = 1" in captured.err and captured.out == ""
    (t / AUDIT / "2_b.jsonl").write_bytes(b'{"ownerId":"b"}\n\xff\xfe\n')
    (t / AUDIT / "1_a.jsonl").unlink()
    assert main(["check-audit", str(t)]) == 2
    assert "2_b.jsonl:2: not UTF-8" in capsys.readouterr().err
    (tmp_path / "empty").mkdir()
    assert main(["check-audit", str(tmp_path / "empty")]) == 2
    assert "no audit files" in capsys.readouterr().err
    assert main(["check-audit", str(tmp_path / "missing")]) == 2


def test_a_url_needs_the_table(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check-audit", "gs+http://127.0.0.1:1/bucket"]) == 2
    assert "--table" in capsys.readouterr().err


_field = st.one_of(st.none(), st.booleans(), st.integers(-2**70, 2**70), st.floats(allow_nan=True),
                   st.text(max_size=8), st.lists(st.integers(), max_size=2))
_record = st.fixed_dictionaries({}, optional={
    "ownerId": st.one_of(st.just(A), _field), "transactionStartTime": _field, "timestamp": _field,
    "state": st.one_of(st.sampled_from(("START", "RENEW", "END", "start")), _field),
    "lockExpiration": _field, "lockHeld": _field, "other": _field})
_line = st.one_of(_record.map(lambda r: json.dumps(r, allow_nan=True)), st.text(max_size=30),
                  st.sampled_from(["", "  ", "[]", "{", "null", "NaN", '{"a":' * 3000]))
_file = st.one_of(st.lists(_line, max_size=5).map(lambda ls: "\n".join(ls).encode()),
                  st.binary(max_size=40), st.text(max_size=40).map(str.encode))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(files=st.dictionaries(st.sampled_from(["1_a.jsonl", "2_b.jsonl", "3-c-start.json", "x.txt"]), _file,
                             min_size=1, max_size=3))
def test_fuzzed_audit_folders_never_traceback(tmp_path_factory: pytest.TempPathFactory,
                                              capsys: pytest.CaptureFixture[str],
                                              files: dict[str, bytes]) -> None:
    folder = tmp_path_factory.mktemp("fuzz")
    for name, data in files.items():
        (folder / name).write_bytes(data)
    code = main(["check-audit", str(folder), "--json"])
    captured = capsys.readouterr()
    assert code in (0, 1, 2)
    if code == 2:
        # bad input: one line on stderr naming the file (and line), nothing on stdout
        assert captured.out == "" and captured.err.startswith("hcc check-audit: ")
        assert any(name in captured.err for name in files) or "no audit files" in captured.err
    else:
        out = json.loads(captured.out)  # the whole report, never a partial one
        assert out["verdict"] == ("violation" if code == 1 else "ok") and captured.err == ""


# ---- the model writes what the reader reads; a run's own trail and the audit-visible column -----------


def test_the_models_audit_trail_is_read_back_as_written() -> None:
    trail = AuditTrail("table", A, 1000, V)
    trail.record("START", 1000, True)
    trail.record("RENEW", 31_000, True)
    put = trail.record("END", 40_000, True)
    assert put.key == f"table/.hoodie/.locks/audit/1000_{A}.jsonl"
    records = parse_audit_text(put.body.decode(), put.key.rsplit("/", 1)[1])
    assert [(r.state, r.timestamp, r.lock_expiration, r.transaction_start) for r in records] == [
        ("START", 1000, 1000 + V, 1000), ("RENEW", 31_000, 31_000 + V, 1000),
        ("END", 40_000, 40_000 + V, 1000)]


@pytest.mark.parametrize("name", ["rfc91-long-pause", "rfc91-renewals-fail"])
def test_a_simulated_runs_own_audit_trail_marks_its_violations_audit_invisible(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str) -> None:
    result = execute(loader.load(name), out=tmp_path / name)
    assert result.verdict.verdict == "violation"
    verdict = json.loads((tmp_path / name / "verdict.json").read_text())
    assert verdict["audit"]["validator"] == "WARNING" and verdict["audit"]["violations_visible"] == 0
    assert {v["audit_visible"] for v in verdict["violations"]} == {False}
    # the table's audit trail is Hudi's: check-audit reads it from the run directory, and agrees
    code, out = verdict_of(tmp_path / name / "table", capsys)
    assert (code, out["validator"]) == (0, "WARNING")
    report = (tmp_path / name / "report.md").read_text()
    assert "audit-visible" in report and "are audit-visible and" in report


def test_audit_visibility_is_the_validators_overlap_of_the_violations_owners(tmp_path: Path) -> None:
    """The column is Hudi's verdict on the trail, not a constant: an overlap it reports is visible."""
    from engines.rundir import audit_of_run
    from model.checkers.verdict import Verdict, Violation

    t = table(tmp_path, {f"1000_{A}.jsonl": cycle(A, 1000, 40_000),
                         f"35000_{B}.jsonl": cycle(B, 35_000, 50_000)})
    c = "c-owner"
    verdict = Verdict((Violation("overlap", "", (), {"owners": [A, B]}),
                       Violation("stale-write", "", (), {"writer": B, "holder": A}),
                       Violation("overlap", "", (), {"owners": [A, c]})), ())
    audit, seen = audit_of_run(t, verdict)
    assert seen == (True, True, False)
    assert audit is not None and (audit["violations_visible"], audit["violations_invisible"]) == (2, 1)
    assert audit["overlaps_without_violation"] == 0
    _, alone = audit_of_run(t, Verdict((), ()))  # the validator's overlap with no violation behind it
    assert audit_of_run(t, Verdict((), ()))[0]["overlaps_without_violation"] == 1  # type: ignore[index]
    assert alone == ()
    assert audit_of_run(tmp_path / "no-table", verdict) == (None, ())


# AuditServiceFactory#isAuditEnabled (72a93a0e): enabledNode != null && enabledNode.asBoolean(false), where
# readTree ignores what follows the first value and asBoolean is jackson-databind 2.x's per node class.
ENABLE_CASES = [
    (b'{"STORAGE_LOCK_AUDIT_SERVICE_ENABLED":true}', True),  # what `locks audit enable` writes
    (b'{"STORAGE_LOCK_AUDIT_SERVICE_ENABLED":false}', False),
    (b'{"STORAGE_LOCK_AUDIT_SERVICE_ENABLED":"true"}', True),  # TextNode: "true"
    (b'{"STORAGE_LOCK_AUDIT_SERVICE_ENABLED":" true\\n"}', True),  # ... after String#trim
    (b'{"STORAGE_LOCK_AUDIT_SERVICE_ENABLED":"TRUE"}', False),  # case matters
    (b'{"STORAGE_LOCK_AUDIT_SERVICE_ENABLED":"yes"}', False),
    (b'{"STORAGE_LOCK_AUDIT_SERVICE_ENABLED":1}', True),  # IntNode: _value != 0
    (b'{"STORAGE_LOCK_AUDIT_SERVICE_ENABLED":-7}', True),
    (b'{"STORAGE_LOCK_AUDIT_SERVICE_ENABLED":123456789012345678901234}', True),  # BigIntegerNode
    (b'{"STORAGE_LOCK_AUDIT_SERVICE_ENABLED":0}', False),
    (b'{"STORAGE_LOCK_AUDIT_SERVICE_ENABLED":1.0}', False),  # DoubleNode: the default
    (b'{"STORAGE_LOCK_AUDIT_SERVICE_ENABLED":null}', False),
    (b'{"STORAGE_LOCK_AUDIT_SERVICE_ENABLED":[true]}', False),
    (b'{"other":true}', False),
    (b'[{"STORAGE_LOCK_AUDIT_SERVICE_ENABLED":true}]', False),  # root not an object: get() is null
    (b' {"STORAGE_LOCK_AUDIT_SERVICE_ENABLED":true} trailing', True),  # readTree stops after one value
    (b'{"STORAGE_LOCK_AUDIT_SERVICE_ENABLED":true,"x":NaN}', False),  # not JSON for Jackson
    (b'{"STORAGE_LOCK_AUDIT_SERVICE_ENABLED":true,"x":"\xff"}', True),  # bad UTF-8 decodes to U+FFFD
    (b'{"STORAGE_LOCK_AUDIT_SERVICE_ENABLED":tru', False),
    (b"", False),
]


@pytest.mark.parametrize("body,enabled", ENABLE_CASES)
def test_the_enable_file_is_read_as_jacksons_as_boolean_reads_it(body: bytes, enabled: bool) -> None:
    assert is_enabled(body) is enabled
