"""``hcc check-history --model list-append|rw-register``: exit codes, JSON, EDN, the HTML cycle
timelines, bad input, timeouts, determinism."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from txn_helpers import events

from cli.main import main
from model.checkers.txn_history import LIST_APPEND as LA
from model.checkers.txn_history import RW_REGISTER as RR
from model.checkers.txn_sim import simulate


def hcc(*args: str) -> int:
    """``hcc check-history ARGS``."""
    return main(["check-history", *args])


def _write(path: Path, evs: list[dict[str, object]]) -> Path:
    path.write_text("".join(json.dumps(e) + "\n" for e in evs))
    return path


SKEW = events(LA, ["rxay1", "ryax1"])  # G2-item: snapshot isolation allows it, serializable does not


def test_exit_codes_follow_the_claimed_model(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    f = _write(tmp_path / "h.jsonl", SKEW)
    assert hcc(str(f), "--model", "list-append", "--consistency-model", "snapshot-isolation") == 0
    out = capsys.readouterr().out
    assert "consistent with snapshot-isolation (list-append, 2 transactions)" in out
    assert "G2-item: a cycle" in out
    assert hcc(str(f), "--model", "list-append", "--consistency-model", "serializable") == 1
    out = capsys.readouterr().out
    assert "NOT serializable" in out and "anomalies: G2-item (forbidden)" in out
    assert "ruled out: repeatable-read" in out
    assert "T1 = txn 0 by p0 [r \"x\" [], append \"y\" 1] (lines 1-3)" in out
    assert "However, T2 < T1 (rw)" in out
    # the default claim is strict-serializable
    assert hcc(str(f), "--model", "list-append") == 1


def test_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    f = _write(tmp_path / "h.jsonl", events(LA, ["ax1ay1", "ax2ry", "rx12"]))
    assert main(["check-history", str(f), "--model", "list-append", "--json",
                 "--consistency-model", "snapshot-isolation"]) == 1
    data = json.loads(capsys.readouterr().out)
    assert data["result"] == "illegal" and data["valid"] is False
    assert data["forbidden"] == ["G-single-item"] and data["not"] == ["consistent-view", "repeatable-read"]
    cycle = data["anomalies"]["G-single-item"][0]
    assert [t["name"] for t in cycle["txns"]] == ["T1", "T2"]
    assert cycle["txns"][0]["at"].startswith("lines ")
    assert [(s["type"], s["key"]) for s in cycle["steps"]] == [("rw", "y"), ("ww", "x")]
    assert cycle["steps"][0]["value"] is None and cycle["steps"][0]["value'"] == 1


def test_edn_history(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    f = tmp_path / "history.edn"
    f.write_text("{:type :invoke, :f :txn, :value [[:w :x 1] [:r :y nil]], :process 0, :time 1, :index 0}\n"
                 "{:type :invoke, :f :txn, :value [[:w :y 1] [:r :x nil]], :process 1, :time 2, :index 1}\n"
                 "{:type :info, :f :kill, :value nil, :process :nemesis, :time 3, :index 2}\n"
                 "{:type :ok, :f :txn, :value [[:w :x 1] [:r :y 1]], :process 0, :time 4, :index 3}\n"
                 "{:type :ok, :f :txn, :value [[:w :y 1] [:r :x 1]], :process 1, :time 5, :index 4}\n")
    assert hcc(str(f), "--model", "rw-register", "--consistency-model", "read-committed") == 1
    out = capsys.readouterr().out
    assert "G1c: a cycle of 2 transactions" in out and "wrote :x = 1, which was read by" in out
    # the same as JSON lines with --format auto (content) and explicit --format
    g = tmp_path / "h.txt"
    g.write_text(f.read_text())
    assert hcc(str(g), "--model", "rw-register", "--consistency-model", "read-uncommitted") == 0
    assert hcc(str(g), "--model", "rw-register", "--format", "edn") == 1


def test_html_draws_each_cycle(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    f = _write(tmp_path / "h.jsonl", events(LA, ["ax1", "rx1ry", "ay1", "ry1rx", (4, "fail", "ax9"), "rx19"]))
    page = tmp_path / "out" / "cycles.html"
    assert main(["check-history", str(f), "--model", "list-append", "--html", str(page),
                 "--consistency-model", "serializable"]) == 1
    assert f"cycles: {page}" in capsys.readouterr().out
    html = page.read_text()
    assert html.startswith("<!DOCTYPE html>") and "<script src" not in html
    assert "G-nonadjacent-item (forbidden by the claimed model): a cycle of 4 transactions" in html
    section = html.split('<h2 class="forbidden">G-nonadjacent-item')[1].split("<h2")[0]
    assert len(re.findall(r'<g class="txn">', section)) == 4
    assert len(re.findall(r'<g class="step">', section)) == 4
    assert 'marker-end="url(#arrow-rw)"' in section and 'marker-end="url(#arrow-wr)"' in section
    assert "G1a (forbidden by the claimed model): 1 case" in html
    assert not list(page.parent.glob(".*.tmp"))


def test_bad_input_exits_2_naming_the_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    f = _write(tmp_path / "h.jsonl", [
        {"process": 0, "type": "invoke", "value": [["append", "x", 1]]},
        {"process": 0, "type": "ok", "value": [["append", "x", 1], ["r", "x", [1]]]}])
    assert hcc(str(f), "--model", "list-append") == 2
    err = capsys.readouterr().err
    assert f"{f}: line 2, field 'value': 2 micro-ops, but the invoke at line 1 has 1" in err
    g = _write(tmp_path / "g.jsonl", SKEW)
    assert hcc(str(g), "--model", "list-append", "--consistency-model", "serialisable") == 2
    assert "unknown --consistency-model 'serialisable'" in capsys.readouterr().err
    assert hcc(str(g), "--consistency-model", "serializable") == 2
    assert "--consistency-model is for --model list-append or rw-register" in capsys.readouterr().err
    assert hcc(str(g), "--model", "list-append", "--wfr-keys") == 2
    e = tmp_path / "bad.edn"
    e.write_text("{:type :invoke, :process 0, :value [[:append :x 1]]}\n{:type :ok, :process 0 :value [")
    assert hcc(str(e), "--model", "list-append") == 2
    assert "line 2" in capsys.readouterr().err
    assert hcc(str(tmp_path / "none.jsonl"), "--model", "list-append") == 2


def test_timeout_exits_3(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    evs = simulate(400, kind=LA, level="snapshot-isolation", keys=4, processes=6, seed=3)
    f = _write(tmp_path / "h.jsonl", evs)
    assert main(["check-history", str(f), "--model", "list-append", "--timeout", "1e-9",
                 "--consistency-model", "snapshot-isolation"]) == 3
    out = capsys.readouterr().out
    assert "unknown for snapshot-isolation" in out and "cycle-search-timeout" in out
    assert hcc(str(f), "--model", "list-append", "--consistency-model", "snapshot-isolation") == 0


def test_empty_graph_is_unknown(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    f = _write(tmp_path / "h.jsonl", events(RR, ["wx1"]))
    assert hcc(str(f), "--model", "rw-register") == 3
    assert "empty-transaction-graph" in capsys.readouterr().out


def test_an_empty_history_is_bad_input_unless_allowed(tmp_path: Path,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    f = _write(tmp_path / "h.jsonl", [])
    assert hcc(str(f), "--model", "list-append") == 2
    assert "no transactions" in capsys.readouterr().err
    assert hcc(str(f), "--model", "list-append", "--allow-empty") == 3  # Elle: empty-transaction-graph
    assert "empty-transaction-graph" in capsys.readouterr().out


def test_a_realtime_edge_names_event_positions_or_times(tmp_path: Path,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    # T1 completes before T2 is invoked; each reads what the other wrote as absent: a G-single-realtime
    # (strict serializability); without times the explanation says event positions, with them times
    evs = [{"process": 0, "type": "invoke", "value": [["append", "x", 1], ["r", "y", None]]},
           {"process": 0, "type": "ok", "value": [["append", "x", 1], ["r", "y", []]]},
           {"process": 1, "type": "invoke", "value": [["append", "y", 1], ["r", "x", None]]},
           {"process": 1, "type": "ok", "value": [["append", "y", 1], ["r", "x", []]]}]
    f = _write(tmp_path / "h.jsonl", evs)
    hcc(str(f), "--model", "list-append", "--json")
    untimed = capsys.readouterr().out
    timed_evs = [{**e, "time": 10 * (i + 1)} for i, e in enumerate(evs)]
    g = _write(tmp_path / "t.jsonl", timed_evs)
    hcc(str(g), "--model", "list-append", "--json")
    timed = capsys.readouterr().out
    assert re.search(r"completed \(at event \d+\) before T\d+ was invoked \(at event \d+\)", untimed)
    assert re.search(r"completed \(at time \d+\) before T\d+ was invoked \(at time \d+\)", timed)


def test_output_is_deterministic(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    evs = simulate(200, kind=RR, level="read-committed", keys=3, processes=5, seed=11, abort=0.1,
                   lost_reply=0.1)
    f = _write(tmp_path / "h.jsonl", evs)
    outs = []
    for i in range(2):
        page = tmp_path / f"p{i}.html"
        hcc(str(f), "--model", "rw-register", "--json", "--wfr-keys", "--html", str(page))
        outs.append((capsys.readouterr().out, page.read_text()))
    assert outs[0] == outs[1]


def test_docs_example(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # docs/check-history.md: the write-skew example and its output, as printed
    doc = (Path(__file__).parent.parent / "docs" / "check-history.md").read_text()
    section = doc.split("### Format")[1]
    lines = [line for line in section.split("```")[1].splitlines() if line.startswith("{")]
    f = tmp_path / "skew.jsonl"
    f.write_text("\n".join(lines) + "\n")
    command = "$ hcc check-history skew.jsonl --model list-append --consistency-model serializable\n"
    shown = doc.split(command)[1]
    shown = shown.split("$ echo $?")[0].replace("skew.jsonl", str(f))
    assert hcc(str(f), "--model", "list-append", "--consistency-model", "serializable") == 1
    assert capsys.readouterr().out == shown
    assert hcc(str(f), "--model", "list-append", "--consistency-model", "snapshot-isolation") == 0


PAPER_EXAMPLE = """\
{:index 0 :type :invoke  :value [[:append 253 1] [:append 253 3] [:append 253 4] [:append 255 2]
 [:append 255 3] [:append 255 4] [:append 255 5] [:append 256 1] [:append 256 2]]}
{:index 1 :type :ok      :value [[:append 253 1] [:append 253 3] [:append 253 4] [:append 255 2]
 [:append 255 3] [:append 255 4] [:append 255 5] [:append 256 1] [:append 256 2]]}
{:index 2 :type :invoke, :value [[:append 255 8] [:r 253 nil]]}
{:index 3 :type :ok,     :value [[:append 255 8] [:r 253 [1 3 4]]]}
{:index 4 :type :invoke, :value [[:append 256 4] [:r 255 nil] [:r 256 nil] [:r 253 nil]]}
{:index 5 :type :ok,     :value [[:append 256 4] [:r 255 [2 3 4 5 8]] [:r 256 [1 2 4]] [:r 253 [1 3 4]]]}
{:index 6 :type :invoke, :value [[:append 250 10] [:r 253 nil] [:r 255 nil] [:append 256 3]]}
{:index 7 :type :ok      :value [[:append 250 10] [:r 253 [1 3 4]] [:r 255 [2 3 4 5]] [:append 256 3]]}
"""


def test_elles_paper_example_without_processes_is_read(tmp_path: Path,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    # Elle's histories/paper-example.edn names no :process: one unnamed process, paired in order; its
    # G-single-item cycle (T1 rw T2 wr T3 ww T1) rules out serializability
    f = tmp_path / "paper-example.edn"
    f.write_text(PAPER_EXAMPLE)
    assert hcc(str(f), "--model", "list-append", "--consistency-model", "serializable") == 1
    out = capsys.readouterr().out
    assert "G-single-item" in out and "4 transactions" in out and "by the unnamed process" in out
    # operations without a process that overlap cannot be paired: bad input, naming the line
    g = tmp_path / "overlap.edn"
    g.write_text("{:type :invoke :value [[:r 1 nil]]}\n{:type :invoke :value [[:r 2 nil]]}\n")
    assert hcc(str(g), "--model", "list-append") == 2
    assert "line 2" in capsys.readouterr().err
