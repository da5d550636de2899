"""One report per protocol: the OCC lost-update run names the lost update and its instants, the NBCC
instant-time run names the mis-sliced file group, the explorer report has the counterexample step table;
every run directory names its protocol (and world) in verdict.json, and another name is refused; a folder
of mixed runs is reported run by run."""

from __future__ import annotations

import contextlib
import io
import json
import re
import shutil
from pathlib import Path

import pytest

pytest.importorskip("pandas")
pytest.importorskip("matplotlib")

from cli.main import main  # noqa: E402
from engines.rundir import execute  # noqa: E402
from reports.instants import InstantSpan, rel_ms  # noqa: E402
from reports.interactive import Item, timeline_html  # noqa: E402
from reports.load import RunDirError, load_run  # noqa: E402
from reports.occ import lost_updates  # noqa: E402
from scenarios import loader  # noqa: E402

REPORT_FILES = ("report.html", "report.md", "report.json")


def _quiet(argv: list[str]) -> tuple[int, str]:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = main(argv)
    return code, out.getvalue()


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """One run directory of each protocol, each reported by ``hcc report``."""
    root = tmp_path_factory.mktemp("protocols")
    names = ("occ", "occ-safe", "occ-skew", "nbcc", "nbcc-safe", "explore", "lock")
    out = {name: root / name for name in names}
    assert _quiet(["timeline", "run", "tl-cc-none-lost-update", "--out", str(out["occ"])])[0] == 0
    assert _quiet(["timeline", "run", "tl-occ-put-if-absent", "--out", str(out["occ-safe"])])[0] == 0
    assert _quiet(["timeline", "run", "tl-local-clock-skew", "--out", str(out["occ-skew"])])[0] == 0
    assert _quiet(["nbcc", "run", "--rule", "instant", "--out", str(out["nbcc"])])[0] == 0
    assert _quiet(["nbcc", "run", "--rule", "completion", "--out", str(out["nbcc-safe"])])[0] == 0
    # an explorer run: explore.json is what hcc explore --json prints
    entry = root / "explore-cc-none.toml"
    entry.write_text('protocol = "explore"\nname = "explore-cc-none"\nexpect = "violation"\n\n'
                     '[explore]\nmodel = "cow"\ncc = "none"\nops = 2\n')
    assert _quiet(["run", str(entry), "--out", str(out["explore"])])[0] == 0
    code, printed = _quiet(["explore", "--cc", "none", "--ops", "2", "--json"])
    assert code == 1  # violated
    kept = json.loads((out["explore"] / "explore.json").read_text())
    assert {k: v for k, v in kept.items() if k != "seconds"} == {
        k: v for k, v in json.loads(printed).items() if k != "seconds"}
    execute(loader.load("rfc91-safe", ["duration_ms=60000"]), None, out["lock"], report=False)
    for name, d in out.items():
        assert _quiet(["report", str(d)])[0] == 0, name
        assert all((d / f).is_file() for f in REPORT_FILES), name
    return out


def test_every_run_directory_names_its_protocol_and_another_is_refused(runs: dict[str, Path],
                                                                        tmp_path: Path) -> None:
    assert {k: load_run(d).protocol for k, d in runs.items()} == {
        "occ": "occ", "occ-safe": "occ", "occ-skew": "occ", "nbcc": "nbcc", "nbcc-safe": "nbcc",
        "explore": "explore", "lock": "lock"}
    assert {k: load_run(d).verdict["world"] for k, d in runs.items()} == {
        k: "search" if k == "explore" else "sim" for k in runs}
    d = tmp_path / "labelled"
    shutil.copytree(runs["lock"], d)
    verdict = json.loads((d / "verdict.json").read_text())
    (d / "verdict.json").write_text(json.dumps({**verdict, "protocol": "paxos"}))
    with pytest.raises(RunDirError, match="verdict.json: field protocol = 'paxos' is not one of lock, occ"):
        load_run(d)
    (d / "verdict.json").write_text(json.dumps({k: v for k, v in verdict.items() if k != "protocol"}))
    with pytest.raises(RunDirError, match="verdict.json: field protocol is missing"):
        load_run(d)


def test_occ_report_names_the_lost_update_and_its_instants(runs: dict[str, Path]) -> None:
    summary = json.loads((runs["occ"] / "report.json").read_text())
    md = (runs["occ"] / "report.md").read_text()
    html = (runs["occ"] / "report.html").read_text()
    assert summary["protocol"] == "occ" and summary["verdict"] == "violation"
    # one checker violation per lost update: a read at the overwriting instant misses the lost operation
    matched = []
    for violation in summary["violations"]:
        m = re.match(r"read of (k\d+) at (\d{17}) should return", violation["message"])
        assert m, violation["message"]
        key, at = m.groups()
        lost = [
            u for u in summary["lost_updates"] if u["overwritten_by"] == at and u["operation"]["key"] == key
        ]
        assert len(lost) == 1, (violation["message"], summary["lost_updates"])
        matched.append(lost[0]["lost"])
    assert sorted(matched) == sorted(u["lost"] for u in summary["lost_updates"]) and len(matched) > 1
    # the first one, in detail: a delete whose key the overwriter brought back from an older slice
    first = re.match(r"read of (k\d+) at (\d{17}) should return nothing", summary["violations"][0]["message"])
    assert first, summary["violations"][0]["message"]
    key, at = first.groups()
    (u,) = [u for u in summary["lost_updates"] if u["overwritten_by"] == at]
    assert u["operation"]["key"] == key and u["operation"]["kind"] == "delete"
    assert u["merge_base"] < u["lost"] < u["overwritten_by"]  # the overwriter merged a slice older than it
    # the report shows an instant as ms since the run's start (t<ms>); report.json keeps Hudi's ids
    lost_t, by_t = rel_ms(int(u["lost"])), rel_ms(int(u["overwritten_by"]))
    for text in (md, html):
        assert f"instant {lost_t}" in text and f"commit {by_t}" in text
        assert "is lost" in text
    # the instant timeline marks both, with their details for the tooltip
    assert re.search(rf'<g class="ev lost" id="occ-i{u["lost"]}"[^>]*data-tip="instant: {lost_t}', html)
    assert f'class="ev violated" id="occ-i{at}"' in html
    # the Markdown links the static image of the interactive timeline, a PNG file beside it (no data: URI,
    # no "hover" in its alt text: that is the HTML page's)
    (figure,) = re.findall(r"!\[([^\]]*)\]\((report-figure-\d+\.png)\)", md)
    assert "data:" not in md and "hover" not in figure[0]
    assert (runs["occ"] / figure[1]).read_bytes().startswith(b"\x89PNG")


def test_occ_report_of_a_safe_run_has_no_lost_update(runs: dict[str, Path]) -> None:
    summary = json.loads((runs["occ-safe"] / "report.json").read_text())
    assert summary["verdict"] == "ok" and summary["lost_updates"] == []
    writers = {r["writer"]: r for r in summary["per_writer"]}
    assert sum(r["conflicts"] for r in writers.values()) > 0  # OCC aborted conflicting commits instead
    assert sum(r["committed"] for r in writers.values()) == summary["metrics"]["ops"]["committed"]


def test_occ_report_highlights_the_time_order_violations(runs: dict[str, Path]) -> None:
    summary = json.loads((runs["occ-skew"] / "report.json").read_text())
    html = (runs["occ-skew"] / "report.html").read_text()
    backward = [v for v in summary["violations"] if v["kind"] == "time-not-increasing"]
    assert backward and summary["time_order_violations"] == len(backward)
    for v in backward:  # the generation that returned the backward time is red, with the message on hover
        ok = v["events"][-1]
        g = re.search(rf'<g class="ev ([a-z-]+)" id="occ-g{ok}"[^>]*data-tip="([^"]*)"', html)
        assert g and g.group(1) == "generation-violated", v
        assert "violation: time-not-increasing: " in g.group(2)
        # and so is the instant it named (as its instant or its completion time)
        time = re.search(r"generated (\d{17}) after", v["message"])
        assert time
        named = re.search(rf'<g class="ev ([a-z-]+)" id="occ-i\d+"[^>]*data-tip="[^"]*'
                          rf'(instant|completion time): {rel_ms(int(time.group(1)))}', html)
        assert named and named.group(1) == "violated", v
    assert html.count('class="ev generation-violated"') >= len(backward)


def _span(instant: int, fg: int, merge: int | None, key: str, writer: str = "w1") -> InstantSpan:
    return InstantSpan(writer, instant, "commit", instant, instant + 5, instant + 5, fg, merge,
                       {"key": key, "kind": "upsert", "value": f"{writer}.{instant}"}, (instant,))


def test_lost_updates_catch_a_stale_merge_and_pass_a_chain() -> None:
    chain = [_span(10, 1, None, "k1"), _span(20, 1, 10, "k2"), _span(30, 1, 20, "k1")]
    assert lost_updates(chain) == []
    stale = [_span(10, 1, None, "k1"), _span(20, 1, 10, "k2"), _span(30, 1, 10, "k1", "w2")]
    (u,) = lost_updates(stale)
    assert (u.lost.instant, u.by.instant) == (20, 30)
    assert "w1's upsert of k2" in u.sentence() and "w2's commit 00000000000000030" in u.sentence()
    # the same key rewritten by a newer instant, or another file group: nothing lost
    assert lost_updates([_span(10, 1, None, "k1"), _span(20, 1, None, "k1")]) == []
    assert lost_updates([_span(10, 1, None, "k1"), _span(20, 2, None, "k2")]) == []


def test_nbcc_report_names_the_mis_sliced_file_group(runs: dict[str, Path]) -> None:
    summary = json.loads((runs["nbcc"] / "report.json").read_text())
    md = (runs["nbcc"] / "report.md").read_text()
    assert summary["protocol"] == "nbcc" and summary["rule"] == "instant-time"
    moved = summary["mis_sliced_file_groups"]
    coverage = [v for v in summary["violations"] if v["kind"] == "coverage"]
    assert coverage
    for v in coverage:  # each coverage violation is about a group the report names as mis-sliced
        group = v["message"].split(":")[0]
        assert group in moved, (group, moved)
        assert f"File group {group} is mis-sliced" in md
        late = summary["late_logs"][group]
        assert {m["log"] for m in moved[group]} <= set(late)
        assert all(m["slice_by_rule"] < m["slice_by_completion"] for m in moved[group])
    assert "## Compaction plans" in md and "## What each reader saw" in md
    # the readers that time travel with the instant-time rule read absent rows the checker names
    travel = [v for v in summary["violations"] if v["kind"] == "time-travel"]
    assert travel and all(f"as of {v['message'].split(':')[0].split()[-1]} |" in md for v in travel[:3])


def test_nbcc_report_takes_the_rule_from_the_scenarios_variant(
        runs: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # the readers' rule is the variant's, in scenario.toml's [nbcc] table; another variant is refused
    d = tmp_path / "entry"
    shutil.copytree(runs["nbcc"], d, ignore=shutil.ignore_patterns("report.*"))
    assert main(["report", str(d)]) == 0
    summary = json.loads((d / "report.json").read_text())
    assert summary["rule"] == "instant-time" and summary["variant"] == "v6-instant-time"
    assert summary["mis_sliced_file_groups"] == json.loads(
        (runs["nbcc"] / "report.json").read_text())["mis_sliced_file_groups"]
    text = (d / "scenario.toml").read_text()
    (d / "scenario.toml").write_text(text.replace('variant = "v6-instant-time"', 'variant = "sideways"'))
    for f in REPORT_FILES:
        (d / f).unlink()
    assert main(["report", str(d)]) == 2
    err = capsys.readouterr().err
    assert "scenario.toml: field nbcc.variant = 'sideways' is not one of hudi, " in err, err
    assert not any((d / f).exists() for f in REPORT_FILES)


def test_nbcc_report_with_completion_time_slicing_names_no_group(runs: dict[str, Path]) -> None:
    summary = json.loads((runs["nbcc-safe"] / "report.json").read_text())
    assert summary["verdict"] == "ok" and summary["mis_sliced_file_groups"] == {}
    assert "is mis-sliced" not in (runs["nbcc-safe"] / "report.md").read_text()


def test_explore_report_has_the_counterexample_step_table(runs: dict[str, Path]) -> None:
    explored = json.loads((runs["explore"] / "explore.json").read_text())
    summary = json.loads((runs["explore"] / "report.json").read_text())
    html = (runs["explore"] / "report.html").read_text()
    n = explored["counterexample_length"]
    assert summary["steps"] == n == len(explored["counterexample"])
    assert summary["states"] == explored["states"] and summary["depth"] == explored["depth"]
    table = html.split('<div class="caption">Steps</div>', 1)[1].split("</table>", 1)[0]
    assert table.split("<tbody>", 1)[1].count("<tr>") == n  # one row per state
    for step in explored["counterexample"]:
        assert f"<td>{step['action']}</td>" in table
    assert explored["violation"]["text"] in html


def test_report_of_a_folder_of_mixed_runs_reports_each(runs: dict[str, Path], tmp_path: Path) -> None:
    folder = tmp_path / "mixed"
    folder.mkdir()
    for name in ("occ", "nbcc", "explore", "lock"):
        shutil.copytree(runs[name], folder / name, ignore=shutil.ignore_patterns("report.*"))
    code, printed = _quiet(["report", str(folder)])
    assert code == 0
    for name in ("occ", "nbcc", "explore", "lock"):
        assert re.search(rf"{re.escape(str(folder / name))}: report\.html, report\.md, "
                         r"(report-figure-\d+\.png, )*report\.json", printed)
        assert json.loads((folder / name / "report.json").read_text()).get("protocol", "lock") == name


def test_incomplete_runs_name_the_missing_file_and_write_nothing(
        runs: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cases = {}
    d = tmp_path / "nbcc-no-plan"
    shutil.copytree(runs["nbcc"], d, ignore=shutil.ignore_patterns("report.*", "plan.json"))
    verdict = json.loads((d / "verdict.json").read_text())
    (d / "verdict.json").write_text(json.dumps({**verdict, "protocol": "nbcc"}))
    cases[d] = "missing plan.json (not a complete run directory of a nbcc run)"
    d = tmp_path / "explore-no-states"
    shutil.copytree(runs["explore"], d, ignore=shutil.ignore_patterns("report.*"))
    explored = json.loads((d / "explore.json").read_text())
    del explored["states"]
    (d / "explore.json").write_text(json.dumps(explored))
    cases[d] = "explore.json: field states is missing"
    d = tmp_path / "occ-no-ops"
    shutil.copytree(runs["occ"], d, ignore=shutil.ignore_patterns("report.*"))
    (d / "metrics.json").write_text("{}")
    cases[d] = "metrics.json: field abort_reasons is missing"
    d = tmp_path / "explore-bad-steps"
    shutil.copytree(runs["explore"], d, ignore=shutil.ignore_patterns("report.*"))
    (d / "explore.json").write_text(json.dumps({**json.loads((d / "explore.json").read_text()),
                                                "counterexample": "none"}))
    cases[d] = "explore.json: field counterexample = 'none' is not a list or null"
    for path, reason in cases.items():
        assert main(["report", str(path)]) == 2, path
        err = capsys.readouterr().err
        assert str(path) in err and reason in err and "Traceback" not in err, err
        assert not any((path / f).exists() for f in REPORT_FILES), path


def test_interactive_timeline_escapes_details_and_skips_unknown_lanes() -> None:
    items = [Item("w1", 0, 10, "a", "x<y", (("value", "<script>"),), ident="e1"),
             Item("w9", 0, 10, "a", "", (("lane", "unknown"),)),
             Item("w2", 5, 5, "b", "", (("point", 1),))]
    html = timeline_html("t1", ["w1", "w2"], items, {"a": "#111", "b": "#222"}, (0, 20))
    assert html.count('<g class="ev') == 2 and "unknown" not in html
    assert 'data-tip="value: &lt;script&gt;"' in html and "<script>hccTimeline('t1');</script>" in html
    assert 'id="t1-e2"' in html and 'id="e1"' in html  # made-up ids are the item's place, given ones kept
    assert all(f'id="t1-{b}"' in html for b in ("in", "out", "reset"))
    # a point (start == end) is still drawn 3 px wide
    assert re.search(r'id="t1-e2" data-s="5" data-e="5"[^>]*><rect x="[\d.]+" y="[\d.]+" width="3.0"', html)
