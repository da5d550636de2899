"""``hcc check-history``: verdicts and exit codes, the counterexample, the HTML timeline, bad input."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cli.main import main


def _write(path: Path, events: list[dict[str, object]]) -> Path:
    path.write_text("".join(json.dumps(e) + "\n" for e in events))
    return path


def _ev(p: object, typ: str, f: str, value: object = None, time: float | None = None) -> dict[str, object]:
    e: dict[str, object] = {"process": p, "type": typ, "f": f, "value": value}
    if time is not None:
        e["time"] = time
    return e


GOOD = [_ev(3, "invoke", "write", 2, 0), _ev(3, "ok", "write", 2, 1),
        _ev(1, "invoke", "cas", [2, 5], 2), _ev(4, "invoke", "read", None, 2.5),
        _ev(1, "ok", "cas", [2, 5], 3), _ev(4, "ok", "read", 2, 3.5),
        _ev(2, "invoke", "cas", [2, 7], 4), _ev(2, "fail", "cas", [2, 7], 5),      # 412: it holds 5
        _ev(5, "invoke", "write", 9, 6), _ev(5, "info", "write", 9, 7),            # unknown outcome
        _ev(6, "invoke", "read", None, 8), _ev(6, "fail", "read", ":timed-out", 9),  # timed-out read
        _ev(7, "invoke", "read", None, 10), _ev(7, "ok", "read", 5, 11)]            # 9 never landed

BAD = [_ev(3, "invoke", "write", 2, 0), _ev(3, "ok", "write", 2, 1),
       _ev(1, "invoke", "cas", [2, 5], 2), _ev(1, "ok", "cas", [2, 5], 3),
       _ev(4, "invoke", "read", None, 4), _ev(4, "ok", "read", 1, 5)]


def test_linearizable_history_exits_0(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check-history", str(_write(tmp_path / "h.jsonl", GOOD))]) == 0
    assert "linearizable (7 operations)" in capsys.readouterr().out


def test_non_linearizable_history_exits_1_with_the_counterexample(tmp_path: Path,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check-history", str(_write(tmp_path / "h.jsonl", BAD))]) == 1
    out = capsys.readouterr().out
    assert ("after write(2) by p3 and cas(2->5) by p1, read()=1 by p4 cannot be placed: the register holds 5"
            in out)
    # the operations are located in the file
    assert "read()=1 by p4 [4, 5] (lines 5-6)" in out and "cas(2->5) by p1 [2, 3] (lines 3-4)" in out


def test_json_output(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check-history", "--json", str(_write(tmp_path / "h.jsonl", BAD))]) == 1
    data = json.loads(capsys.readouterr().out)
    assert data["result"] == "illegal" and data["linearizable"] is False
    part = data["partitions"][0]
    assert [op["at"] for op in part["prefix"]] == ["lines 1-2", "lines 3-4"]
    assert part["blocked"][0]["description"] == "read()=1 by p4"
    assert part["blocked"][0]["reason"] == "the register holds 5"
    assert main(["check-history", "--json", str(_write(tmp_path / "g.jsonl", GOOD))]) == 0
    assert json.loads(capsys.readouterr().out)["result"] == "ok"


def test_line_order_is_the_time_when_time_is_absent(tmp_path: Path) -> None:
    events = [{k: v for k, v in e.items() if k != "time"} for e in BAD]
    assert main(["check-history", str(_write(tmp_path / "h.jsonl", events))]) == 1
    # reads overlapping the cas may see the old value
    ok = [_ev(1, "invoke", "write", 2), _ev(4, "invoke", "read"), _ev(1, "ok", "write"),
          _ev(4, "ok", "read", None)]
    assert main(["check-history", str(_write(tmp_path / "o.jsonl", ok))]) == 0


def test_initial_value(tmp_path: Path) -> None:
    events = [_ev(1, "invoke", "cas", ["base", "x"], 0), _ev(1, "ok", "cas", None, 1)]
    path = _write(tmp_path / "h.jsonl", events)
    assert main(["check-history", str(path)]) == 1
    assert main(["check-history", "--initial", '"base"', str(path)]) == 0


def test_html_timeline(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "t" / "timeline.html"
    assert main(["check-history", "--html", str(out), str(_write(tmp_path / "h.jsonl", BAD))]) == 1
    assert f"timeline: {out}" in capsys.readouterr().out
    html = out.read_text()
    assert html.startswith("<!DOCTYPE html>") and "<svg" in html and "http" not in html.replace(
        'xmlns="http://www.w3.org/2000/svg"', "")
    # one row per process, the blocked read highlighted with its reason on hover, the prefix numbered
    for proc in ("p1", "p3", "p4"):
        assert f">{proc}</text>" in html
    assert 'class="op blocked"><title>read()=1 by p4' in html
    assert "cannot be placed after the prefix: the register holds 5" in html
    assert 'class="op setter"><title>cas(2-&gt;5) by p1' in html
    assert "#1: write(2) by p3" in html and "lines 5-6" in html


def test_kv_model(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    def kv(p: int, typ: str, f: str, key: str, value: str | None, t: float) -> dict[str, object]:
        return _ev(p, typ, f, {"key": key, "value": value}, t)

    good = [kv(0, "invoke", "put", "x", "a", 0), kv(0, "ok", "put", "x", "a", 1),
            kv(1, "invoke", "append", "x", "b", 2), kv(2, "invoke", "get", "y", None, 2),
            kv(1, "ok", "append", "x", "b", 3), kv(2, "ok", "get", "y", "", 3),
            kv(2, "invoke", "get", "x", None, 4), kv(2, "ok", "get", "x", "ab", 5)]
    assert main(["check-history", "--model", "kv", str(_write(tmp_path / "g.jsonl", good))]) == 0
    assert "linearizable (4 operations)" in capsys.readouterr().out
    bad = good[:-1] + [kv(2, "ok", "get", "x", "ba", 5)]
    assert main(["check-history", "--model", "kv", str(_write(tmp_path / "b.jsonl", bad))]) == 1
    out = capsys.readouterr().out
    assert "key 'x': longest linearizable prefix 2 of 3" in out
    assert "get('x')='ba' by p2 cannot be placed: key 'x' holds 'ab'" in out


def test_time_limit_exits_3(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # 22 concurrent writes, then a read of a value none wrote: more than 2^22 configurations to refute
    events = [_ev(p, "invoke", "write", p, 0) for p in range(22)]
    events += [_ev(p, "ok", "write", p, 10) for p in range(22)]
    events += [_ev("r", "invoke", "read", None, 20), _ev("r", "ok", "read", "never", 21)]
    path = _write(tmp_path / "h.jsonl", events)
    assert main(["check-history", "--timeout", "0.2", str(path)]) == 3
    assert "UNKNOWN: time limit of 0.2 s reached" in capsys.readouterr().out
    assert main(["check-history", "--timeout", "0.2", "--json", str(path)]) == 3
    assert json.loads(capsys.readouterr().out)["result"] == "unknown"


BAD_LINES = [
    ('{"process": 1, "type": "invoke", "f": "read"}\nnot json\n', 2, None, "not a JSON object"),
    ('[1, 2]\n', 1, None, "is not a JSON object"),
    ("[" * 100_000 + "\n", 1, None, "not a JSON object: RecursionError"),
    ('{"type": "invoke", "f": "read"}\n', 1, "process", "missing"),
    ('{"process": [1], "type": "invoke", "f": "read"}\n', 1, "process", "not an integer or a string"),
    ('{"process": 1, "type": "start", "f": "read"}\n', 1, "type",
     "'start' is not one of invoke, ok, fail, info"),
    ('{"process": 1, "type": "invoke", "f": "delete"}\n', 1, "f",
     "not an operation of the cas-register model"),
    ('{"process": 1, "type": "invoke", "f": "cas", "value": [1]}\n', 1, "value", "is not [expected, new]"),
    ('{"process": 1, "type": "invoke", "f": "cas", "value": [1, {"a": 2}]}\n', 1, "value",
     "not a register value"),
    ('{"process": 1, "type": "invoke", "f": "write"}\n', 1, "value", "missing"),
    ('{"process": 1, "type": "invoke", "f": "write", "value": NaN}\n', 1, None, "NaN is not a JSON number"),
    ('{"process": 1, "type": "ok", "f": "read", "value": 1}\n', 1, "type", "which has no pending invoke"),
    ('{"process": 1, "type": "invoke", "f": "read"}\n{"process": 1, "type": "invoke", "f": "read"}\n', 2,
     "type", "invoked at line 1"),
    ('{"process": 1, "type": "invoke", "f": "read"}\n{"process": 1, "type": "ok", "f": "write"}\n', 2, "f",
     "completes a 'read' invoked at line 1"),
    ('{"process": 1, "type": "invoke", "f": "read"}\n{"process": 1, "type": "ok", "f": "read"}\n', 2, "value",
     "an ok read needs the value read"),
    ('{"process": 1, "type": "invoke", "f": "read", "time": 1}\n{"process": 1, "type": "ok", "f": "read", '
     '"value": 1}\n', 2, "time", "missing while earlier lines have it"),
    ('{"process": 1, "type": "invoke", "f": "read", "time": 5}\n{"process": 1, "type": "ok", "f": "read", '
     '"value": 1, "time": 4}\n', 2, "time", "4 is earlier than the previous event"),
    ('{"process": 1, "type": "invoke", "f": "read", "time": "soon"}\n', 1, "time", "not a finite number"),
    ('{"process": 1, "type": "invoke", "f": "read", "time": 1e400}\n', 1, "time", "Infinity is not a finite"),
    ('{"process": 1, "type": "invoke", "f": "read", "time": 1' + "0" * 400 + '}\n', 1, "time",
     "is too large"),
]


@pytest.mark.parametrize(("text", "line", "field", "message"), BAD_LINES)
def test_bad_input_exits_2_naming_file_line_and_field(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                       text: str, line: int, field: str | None,
                                                       message: str) -> None:
    path = tmp_path / "h.jsonl"
    path.write_text(text)
    html = tmp_path / "t.html"
    assert main(["check-history", "--html", str(html), str(path)]) == 2
    out, err = capsys.readouterr()
    assert out == "" and not html.exists()
    assert err.startswith(f"hcc check-history: {path}: line {line}")
    if field is not None:
        assert f"field {field!r}" in err
    assert message in err and "Traceback" not in err


def test_bad_kv_values(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "h.jsonl"
    path.write_text('{"process": 1, "type": "invoke", "f": "put", "value": "x"}\n')
    assert main(["check-history", "--model", "kv", str(path)]) == 2
    assert "line 1, field 'value'" in capsys.readouterr().err
    path.write_text('{"process": 1, "type": "invoke", "f": "get", "value": {"key": "k"}}\n'
                    '{"process": 1, "type": "ok", "f": "get", "value": {"key": "j", "value": "v"}}\n')
    assert main(["check-history", "--model", "kv", str(path)]) == 2
    assert "line 2, field 'value': key 'j' differs from the invoke's key 'k'" in capsys.readouterr().err


def test_non_utf8_and_missing_file_and_bad_options(tmp_path: Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "h.jsonl"
    path.write_bytes(b'{"process": 1, "type": "invoke", "f": "read"}\n\xff\xfe\n')
    assert main(["check-history", str(path)]) == 2
    assert "line 2: not UTF-8" in capsys.readouterr().err
    assert main(["check-history", str(tmp_path / "absent.jsonl")]) == 2
    assert "cannot read" in capsys.readouterr().err
    good = _write(tmp_path / "g.jsonl", GOOD)
    assert main(["check-history", "--timeout", "0", str(good)]) == 2
    assert "--timeout" in capsys.readouterr().err
    assert main(["check-history", "--initial", "[1", str(good)]) == 2
    assert "--initial" in capsys.readouterr().err


def test_empty_history_is_bad_input_unless_allowed(tmp_path: Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "h.jsonl"
    path.write_text("\n  \n")
    assert main(["check-history", str(path)]) == 2
    assert "no operations" in capsys.readouterr().err
    assert main(["check-history", "--allow-empty", str(path)]) == 0
    assert "linearizable (0 operations)" in capsys.readouterr().out


def test_an_edn_history_needs_a_transactional_model(tmp_path: Path,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "history.edn"
    path.write_text('{:process 0, :type :invoke, :f :txn, :value [[:append :x 1]]}\n')
    assert main(["check-history", str(path)]) == 2
    err = capsys.readouterr().err
    assert "EDN" in err and "--model list-append or rw-register" in err and "JSON" not in err
