"""Run reports: a known violation shows its overlapping interval and both owners; bad run directories
give a clear error and no partial report."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

pytest.importorskip("pandas")
pytest.importorskip("matplotlib")

from cli.main import main  # noqa: E402
from engines.rundir import execute  # noqa: E402
from model.runtime.history import Event  # noqa: E402
from reports.load import RunDirError, find_runs, load_run  # noqa: E402
from reports.lock_holders import fault_windows, group_violations, store_leases  # noqa: E402
from scenarios import loader  # noqa: E402

REPORT_FILES = ("report.html", "report.md", "report.json")


@pytest.fixture(scope="module")
def long_pause(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("runs") / "rfc91-long-pause"
    result = execute(loader.load("rfc91-long-pause"), None, out)
    assert result.verdict.verdict == "violation"
    return out


def test_report_shows_the_overlapping_interval_and_both_owners(long_pause: Path) -> None:
    verdict = json.loads((long_pause / "verdict.json").read_text())
    violations = verdict["violations"]
    overlaps = [v for v in violations if v["kind"] == "overlap"]
    assert len(overlaps) > 10  # one per later owner during the pause
    html = (long_pause / "report.html").read_text()
    md = (long_pause / "report.md").read_text()
    summary = json.loads((long_pause / "report.json").read_text())
    first = overlaps[0]["details"]
    a, b = first["owners"]
    # The paused holder (w1) is in every overlap, each with a later owner.
    assert all(a in v["details"]["owners"] for v in overlaps)
    assert len({o for v in overlaps for o in v["details"]["owners"]}) == len(overlaps) + 1
    # The report shows each overlap's interval with both its owners (the Markdown the first rows of the
    # table, the HTML all of them).
    for v in overlaps:
        d = v["details"]
        (o1, o2), n2, start, end = d["owners"], d["nodes"][1], d["start"], d["end"]
        shown = f"(owner {o1[:8]}) and {n2} (owner {o2[:8]}) both held the lock during [{start}, {end}) ms"
        assert shown in v["message"] and v["message"] in html, v["message"]
    assert overlaps[0]["message"] in md
    for text in (html, md):
        assert f"[{first['start']}, {first['end']})" in text and a[:8] in text and b[:8] in text
    # One group holds every violation: the overlaps share w1's owner, and w1's stale write put the
    # register back, so the updates written during the pause were lost (lost-update pairs of a pause-time
    # owner and a later owner that wrote the same value), which connects every owner.
    groups = summary["violation_groups"]
    assert len(groups) == 1
    group = groups[0]
    assert group["count"] == len(violations)
    assert group["kinds"]["overlap"] == len(overlaps)
    assert {a, b} <= set(group["owners"]) and group["owner_nodes"][a] == "w1"
    assert group["start_ms"] == first["start"]
    assert group["common_owner"] in (None, a)  # if the report names one, it is the paused holder's
    stale = [v for v in violations if v["kind"] == "stale-write"]
    assert [v["details"]["writer"] for v in stale] == [a]
    assert summary["verdict"] == "violation" and summary["matches_expectation"] is True
    checkers = {c["checker"]: c["result"] for c in summary["checkers"]}
    assert checkers["overlap"] == "violation" and checkers["stale-write"] == "violation"
    assert {f["fault"] for f in summary["fault_windows"]} == {"pause"}


def test_html_is_self_contained(long_pause: Path) -> None:
    html = (long_pause / "report.html").read_text()
    assert html.count('src="data:image/png;base64,') >= 6
    # no external resource: scripts inline, nothing fetched (the SVG namespace is a name, not a fetch)
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", html)
    assert "url(http" not in html and "<link" not in html and "@import" not in html
    assert html.count("<script>") == html.count("<script") >= 2  # the timeline code, and its one call
    assert 'id="lock-holders"' in html  # the interactive lock-holder timeline


def test_report_command_rewrites_only_requested_formats(long_pause: Path, tmp_path: Path) -> None:
    copy = tmp_path / "run"
    copy.mkdir()
    for name in ("history.jsonl", "verdict.json", "metrics.json", "scenario.toml"):
        (copy / name).write_bytes((long_pause / name).read_bytes())
    assert main(["report", str(copy), "--format", "md,json"]) == 0
    assert (copy / "report.md").exists() and (copy / "report.json").exists()
    assert not (copy / "report.html").exists()
    assert main(["report", str(copy), "--format", "pdf"]) == 2


def _corrupt_copies(src: Path, root: Path) -> dict[str, tuple[Path, str]]:
    cases: dict[str, tuple[Path, str]] = {}

    def copy(name: str) -> Path:
        d = root / name
        d.mkdir()
        for f in ("history.jsonl", "verdict.json", "metrics.json", "scenario.toml"):
            (d / f).write_bytes((src / f).read_bytes())
        return d

    d = copy("truncated-verdict")
    (d / "verdict.json").write_text((src / "verdict.json").read_text()[:200])
    cases["truncated-verdict"] = (d, "verdict.json is not valid JSON")
    d = copy("no-metrics")
    (d / "metrics.json").unlink()
    cases["no-metrics"] = (d, "missing metrics.json")
    d = copy("garbled-history")
    lines = (src / "history.jsonl").read_text().splitlines(keepends=True)
    (d / "history.jsonl").write_text("".join(lines[:50]) + "{garbage\n" + "".join(lines[50:]))
    cases["garbled-history"] = (d, "history.jsonl: history line 51: not JSON")
    d = copy("missing-events")
    (d / "history.jsonl").write_text("".join(lines[:50] + lines[60:]))
    cases["missing-events"] = (d, "history.jsonl: event 50 has index 60")
    d = copy("bad-toml")
    (d / "scenario.toml").write_text("name = [unclosed\n")
    cases["bad-toml"] = (d, "scenario.toml is not valid TOML")
    cases["absent"] = (root / "no-such-run", "does not exist")
    return cases


def test_missing_or_corrupted_run_dir_gives_a_clear_error_and_no_report(
        long_pause: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    for name, (path, reason) in _corrupt_copies(long_pause, tmp_path).items():
        with pytest.raises(RunDirError, match=reason.replace("[", r"\[")):
            load_run(path)
        assert main(["report", str(path)]) == 2, name
        err = capsys.readouterr().err
        assert str(path) in err and reason in err, (name, err)
        if path.exists():
            assert not any((path / f).exists() for f in REPORT_FILES), name
            assert not [p for p in path.iterdir() if p.name.startswith(".report")], name


def test_a_metric_too_large_for_the_report_gives_a_clear_error_and_no_report(
        long_pause: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # found by test_run_directories (Hypothesis): pandas raised OverflowError, which escaped the report
    run = tmp_path / "huge"
    shutil.copytree(long_pause, run, ignore=shutil.ignore_patterns(*REPORT_FILES))
    metrics = json.loads((run / "metrics.json").read_text())
    metrics["acquisitions_per_writer"] = {"w1": 4.467338841289836e185}  # not a count: the format says so
    (run / "metrics.json").write_text(json.dumps(metrics))
    assert main(["report", str(run)]) == 2
    err = capsys.readouterr().err
    assert str(run) in err and "metrics.json: field acquisitions_per_writer.w1 = 4.4" in err, err
    assert "is not an integer" in err
    assert not any((run / f).exists() for f in REPORT_FILES)
    metrics["acquisitions_per_writer"] = {"w1": 10 ** 200}  # a count, too large for the report's table
    (run / "metrics.json").write_text(json.dumps(metrics))
    assert main(["report", str(run)]) == 2
    err = capsys.readouterr().err
    assert str(run) in err and "holds a value the report cannot use (OverflowError" in err, err
    assert not any((run / f).exists() for f in REPORT_FILES)


def test_find_runs_takes_a_folder_of_runs(long_pause: Path, tmp_path: Path) -> None:
    assert find_runs(long_pause) == [long_pause]
    assert find_runs(long_pause.parent) == [long_pause]
    with pytest.raises(RunDirError, match="holds no run directory"):
        find_runs(tmp_path)


def _ev(i: int, t: int, node: str, process: str, f: str, value: object = None, type_: str = "info",
        clock: int | None = None) -> Event:
    return Event(i, t, node, process, type_, f, value, clock)


def test_fault_windows_pair_nemesis_events_and_open_ones_run_to_the_end() -> None:
    events = [
        _ev(0, 0, "-", "nemesis", "run-start"),
        _ev(1, 10, "w1", "nemesis", "pause-start", {"node": "w1"}),
        _ev(2, 20, "w2", "nemesis", "crash", {"node": "w2"}),
        _ev(3, 30, "w1", "nemesis", "pause-end", {"node": "w1"}),
        _ev(4, 40, "w3", "nemesis", "cutoff-start", {"node": "w3"}),
        _ev(5, 45, "w3", "nemesis", "cutoff-end", {"node": "w3"}),
        _ev(6, 50, "w1", "nemesis", "writer-death", {"node": "w1"}),
        _ev(7, 100, "-", "nemesis", "run-end", {}),
    ]
    got = {(f.node, f.kind, f.start, f.end) for f in fault_windows(events)}
    assert got == {("w1", "pause", 10, 30), ("w2", "crash", 20, 100), ("w3", "cutoff", 40, 45),
                   ("w1", "writer-death", 50, 50)}


def test_store_leases_end_at_overwrite_or_at_expiry_and_renewals_extend() -> None:
    lf = "lock-file"
    events = [
        _ev(0, 0, "w1", "w1", "acquire", {"owner": "A"}, "ok"),
        _ev(1, 0, "w1", "store", lf, {"owner": "A", "expired": False, "valid_until": 1100}, clock=1000),
        _ev(2, 50, "w1", "store", lf, {"owner": "A", "expired": False, "valid_until": 1200}, clock=1050),
        _ev(3, 300, "w2", "store", lf, {"owner": "B", "expired": False, "valid_until": 1400}, clock=1300),
        _ev(4, 350, "w2", "store", lf, {"owner": "B", "expired": True, "valid_until": 1400}, clock=1350),
        _ev(5, 500, "-", "nemesis", "run-end", {}),
    ]
    leases = [(x.owner, x.start, x.end, x.lapsed) for x in store_leases(events)]
    # A: renewed at 50 to expire at 200 (clock 1200), lapses before B overwrites at 300.
    assert leases == [("A", 0, 200, True), ("B", 300, 350, False)]


def test_violations_sharing_an_owner_form_one_group_others_stay_apart() -> None:
    def overlap(a: str, b: str, s: int, e: int) -> dict[str, object]:
        return {"kind": "overlap", "message": "", "events": [],
                "details": {"owners": [a, b], "start": s, "end": e, "overlap_ms": e - s}}

    vs = [overlap("P", "x1", 10, 20), overlap("Q", "y1", 15, 16), overlap("P", "x2", 30, 40),
          {"kind": "stale-write", "message": "", "events": [], "details": {"writer": "P", "holder": "x2",
                                                                            "time": 41}}]
    groups = group_violations(vs)
    assert [sorted(g.owners) for g in groups] == [["P", "x1", "x2"], ["Q", "y1"]]
    assert groups[0].common_owner == "P" and groups[0].span == (10, 41) and groups[0].overlap_ms == 20
    assert groups[1].common_owner in ("Q", "y1")


def test_a_safe_run_reports_ok_with_no_violation_group(tmp_path: Path) -> None:
    out = tmp_path / "safe"
    execute(loader.load("rfc91-safe", ["duration_ms=60000"]), None, out)
    summary = json.loads((out / "report.json").read_text())
    assert summary["verdict"] == "ok" and summary["violation_groups"] == []
    assert summary["metrics"]["acquisitions"] > 0
    assert "Violation group" not in (out / "report.html").read_text()
