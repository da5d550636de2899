"""hcc check-audit: Hudi's storage-lock audit files as a lock history, checked for overlapping owners."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from backends.hudi_audit import AuditFormatError, audit_events, check_audit, parse_audit_text, read_local
from cli.main import main
from model.history import loads

AUDIT = ".hoodie/.locks/audit"


def rec(owner: str, ts: int, state: str, exp: int, held: bool = True, txn: int | None = None) -> str:
    return json.dumps({"ownerId": owner, "transactionStartTime": txn if txn is not None else ts,
                       "timestamp": ts, "state": state, "lockExpiration": exp, "lockHeld": held})


def table(tmp_path: Path, files: dict[str, list[str]]) -> Path:
    folder = tmp_path / "t" / AUDIT
    folder.mkdir(parents=True)
    for name, lines in files.items():
        (folder / name).write_text("\n".join(lines) + "\n")
    return tmp_path / "t"


A, B = "0f6d2e1c-aaaa-4bbb-8ccc-000000000001", "7a1b9c3d-aaaa-4bbb-8ccc-000000000002"


def clean(tmp_path: Path) -> Path:
    """Two owners taking turns: A [1000, 40000), B [41000, 50000)."""
    return table(tmp_path, {
        f"1000_{A}.jsonl": [rec(A, 1000, "START", 61000), rec(A, 31000, "RENEW", 91000, txn=1000),
                            rec(A, 40000, "END", 91000, held=False, txn=1000)],
        f"41000_{B}.jsonl": [rec(B, 41000, "START", 101000), rec(B, 50000, "END", 101000, False, 41000)],
    })


def overlapping(tmp_path: Path) -> Path:
    """B starts at 35000 while A holds until 40000."""
    return table(tmp_path, {
        f"1000_{A}.jsonl": [rec(A, 1000, "START", 61000), rec(A, 40000, "END", 61000, False, 1000)],
        f"35000_{B}.jsonl": [rec(B, 35000, "START", 95000), rec(B, 50000, "END", 95000, False, 35000)],
    })


def test_clean_folder_has_no_violation(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = clean(tmp_path)
    records = read_local(path)
    assert len(records) == 5 and check_audit(records).verdict == "ok"
    assert main(["check-audit", str(path)]) == 0
    assert "verdict ok" in capsys.readouterr().out


def test_two_owners_holding_at_once_are_caught(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = overlapping(tmp_path)
    verdict = check_audit(read_local(path))
    assert [v.kind for v in verdict.violations] == ["overlap"]
    v = verdict.violations[0]
    assert set(v.details["owners"]) == {A, B} and v.details["overlap_ms"] == 5000
    assert main(["check-audit", str(path / AUDIT), "--json"]) == 1  # the audit folder itself works too
    out = json.loads(capsys.readouterr().out)
    assert out["verdict"] == "violation" and out["owners"] == sorted([A, B]) and out["transactions"] == 2


def test_a_transaction_without_end_holds_until_its_lease_expires(tmp_path: Path) -> None:
    # A's writer died: no END; its lease ran until 61000; B started at 50000
    path = table(tmp_path, {f"1000_{A}.jsonl": [rec(A, 1000, "START", 61000)],
                            f"50000_{B}.jsonl": [rec(B, 50000, "START", 110000),
                                                 rec(B, 52000, "END", 110000, False, 50000)]})
    verdict = check_audit(read_local(path))
    assert [v.details["overlap_ms"] for v in verdict.violations] == [2000]
    # ... and B starting after A's lease expired is fine
    other = table(tmp_path / "x", {f"1000_{A}.jsonl": [rec(A, 1000, "START", 61000)],
                                   f"62000_{B}.jsonl": [rec(B, 62000, "START", 120000)]})
    assert check_audit(read_local(other)).verdict == "ok"


def test_a_renewal_that_lost_the_lock_ends_the_hold(tmp_path: Path) -> None:
    path = table(tmp_path, {
        f"1000_{A}.jsonl": [rec(A, 1000, "START", 61000), rec(A, 30000, "RENEW", 61000, held=False, txn=1000),
                            rec(A, 45000, "END", 61000, False, 1000)],
        f"35000_{B}.jsonl": [rec(B, 35000, "START", 95000)]})
    assert check_audit(read_local(path)).verdict == "ok"


@pytest.mark.parametrize("b_start,b_end,overlap", [(5000, 7000, 2000), (10000, 12000, None)])
def test_one_object_per_file_form(tmp_path: Path, b_start: int, b_end: int, overlap: int | None) -> None:
    folder = tmp_path / AUDIT
    folder.mkdir(parents=True)
    for ts, owner, state in [(1000, A, "START"), (4000, A, "RENEW"), (9000, A, "END"),
                             (b_start, B, "START"), (b_end, B, "END"), (20000, A, "START"),
                             (21000, A, "END")]:
        body = {"ownerId": owner, "timestamp": ts, "state": state, "lockExpiration": ts + 60000,
                "lockHeld": state != "END"}
        (folder / f"{ts}-{owner[:8]}-{state.lower()}.json").write_text(json.dumps(body, indent=2))
    records = read_local(tmp_path)
    assert len(records) == 7 and all(r.transaction is None for r in records)
    # an owner's START..END files form one transaction: A holds [1000, 9000) and [20000, 21000)
    holds = [(e.node, e.time) for e in audit_events(records) if e.f in ("acquire", "release")]
    assert holds.count((A, 0)) == 1 and (A, 8000) in holds and (A, 19000) in holds and (A, 20000) in holds
    verdict = check_audit(records)
    assert [v.details["overlap_ms"] for v in verdict.violations] == ([overlap] if overlap else [])


def test_bad_records_name_the_file_line_and_field(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(AuditFormatError, match=r"x.jsonl:2: field state = 'HELD'"):
        parse_audit_text(rec(A, 1, "START", 2) + "\n" + rec(A, 2, "HELD", 3) + "\n", "x.jsonl")
    with pytest.raises(AuditFormatError, match="field timestamp = '12'"):
        parse_audit_text('{"ownerId":"a","timestamp":"12","state":"START"}', "y.json")
    bad = '{"ownerId": "a", "timestamp": 1, "state": "START", "lockHeld": 1}'
    path = table(tmp_path, {"1_a.jsonl": [bad]})
    assert main(["check-audit", str(path)]) == 2
    assert "1_a.jsonl:1: field lockHeld = 1" in capsys.readouterr().err
    (tmp_path / "empty").mkdir()
    assert main(["check-audit", str(tmp_path / "empty")]) == 2
    assert "no audit files" in capsys.readouterr().err
    assert main(["check-audit", str(tmp_path / "missing")]) == 2


def test_history_is_written_and_rereadable(tmp_path: Path) -> None:
    path = overlapping(tmp_path)
    out = tmp_path / "h.jsonl"
    assert main(["check-audit", str(path), "--history", str(out)]) == 1
    events = loads(out.read_text())
    assert [(e.node, e.f, e.time) for e in events if e.f in ("acquire", "release")] == [
        (A, "acquire", 0), (B, "acquire", 34000), (A, "release", 39000), (B, "release", 49000)]
    assert events[1].clock == 35000  # the writer's own clock reading


def test_a_url_needs_the_table(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check-audit", "gs+http://127.0.0.1:1/bucket"]) == 2
    assert "--table" in capsys.readouterr().err
