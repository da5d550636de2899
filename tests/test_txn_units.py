"""Pieces of the transactional checker: the EDN reader, the history readers' errors, Tarjan's
components without recursion, cycle classification, and Elle's anomaly/model relations."""

from __future__ import annotations

import json

import pytest
from txn_helpers import history

from model.checkers.edn import EDNError, Keyword, loads, read_items
from model.checkers.history_jsonl import HistoryError
from model.checkers.txn_anomalies import (
    boundary,
    impossible_models,
    prohibited_anomalies,
)
from model.checkers.txn_graph import PROCESS, REALTIME, RW, WR, WW, DepGraph, classify, sccs, tarjan
from model.checkers.txn_history import LIST_APPEND as LA
from model.checkers.txn_history import RW_REGISTER as RR
from model.checkers.txn_history import read_txn_edn, read_txn_jsonl

# ------------------------------------------------------------------ EDN


def test_edn_forms() -> None:
    v = loads('{:a [1 -2 3N 1.5M 2/4 "s\\n\\"q\\"" \\a \\newline nil true false sym] :b #{1 2} '
              ':c (1 #_ 2 3) :d #inst "2020" ; comment\n :e {[1 2] ::kw}}')
    assert v == {"a": [1, -2, 3, 1.5, 0.5, 's\n"q"', "a", "\n", None, True, False, "sym"],
                 "b": frozenset({1, 2}), "c": [1, 3], "d": "2020", "e": {(1, 2): "kw"}}
    assert isinstance(next(iter(v)), Keyword) and repr(Keyword("x")) == ":x"


def test_edn_items_and_lines() -> None:
    assert [(line, v["i"]) for line, v in read_items("{:i 1}\n\n{:i 2}\n")] == [(1, 1), (3, 2)]
    assert [(line, v["i"]) for line, v in read_items("[{:i 1}\n {:i 2}]")] == [(1, 1), (2, 2)]


@pytest.mark.parametrize(("text", "where"), [("{:a 1", (1, 6)), ("[1 2\n ]]", (2, 3)), ('"abc', (1, 1)),
                                             ("{:a}", (1, 1)), ("\n  #?(:clj 1)", (2, 3))])
def test_edn_errors_name_line_and_column(text: str, where: tuple[int, int]) -> None:
    with pytest.raises(EDNError) as e:
        list(read_items(text))
    assert (e.value.line, e.value.column) == where


# ------------------------------------------------------------------ history readers


def _jsonl(*objs: object) -> list[str]:
    return [json.dumps(o) for o in objs]


INV = {"process": 0, "type": "invoke", "value": [["append", "x", 1], ["r", "x", None]]}


@pytest.mark.parametrize(("lines", "line", "field", "words"), [
    (_jsonl({"process": 0, "type": "invoke", "value": [["w", "x", 1]]}), 1, "value",
     "not a micro-op of list-append"),
    (_jsonl({"process": 0, "type": "invoke", "value": "x"}), 1, "value", "not a list of micro-operations"),
    (_jsonl({"process": 0, "type": "invoke", "value": [["append", [1], 1]]}), 1, "value", "key [1]"),
    (_jsonl(INV, {"process": 0, "type": "ok", "value": [["append", "x", 1], ["r", "x", 5]]}), 2, "value",
     "not a list of values"),
    (_jsonl(INV, {"process": 0, "type": "ok", "value": [["append", "x", 2], ["r", "x", [2]]]}), 2, "value",
     "differs from the invoke's append \"x\" 1 (line 1)"),
    (_jsonl(INV, {"process": 0, "type": "ok", "value": [["append", "x", 1]]}), 2, "value", "1 micro-ops"),
    (_jsonl(INV, {"process": 0, "type": "ok", "value": [["append", "x", 1], ["r", "x", [1]]]}, INV), 3,
     "value", "appended to key \"x\" again (first at line 1)"),
    (_jsonl({"process": 0, "type": "ok", "value": []}), 1, "type", "no pending invoke"),
    (_jsonl({"process": 0, "type": "invoke", "f": "read", "value": []}), 1, "f", "txn"),
    (_jsonl(INV, {"process": 0, "type": "ok"}), 2, "value", "missing"),
])
def test_jsonl_errors_name_line_and_field(lines: list[str], line: int, field: str, words: str) -> None:
    with pytest.raises(HistoryError) as e:
        read_txn_jsonl(lines, LA)
    assert (e.value.line, e.value.field) == (line, field) and words in e.value.message, e.value.message


def test_edn_history_errors() -> None:
    with pytest.raises(HistoryError) as e:
        read_txn_edn("{:process 0, :type :invoke, :value [[:w :x 1]]}\n"
                     "{:process 0, :type :ok, :value [[:w :x 2]]}", RR)
    assert e.value.line == 2 and e.value.field == "value"
    with pytest.raises(HistoryError) as e:
        read_txn_edn("{:process 0, :type :invoke, :value [[:w :x 1]]}\n{:process 0 :type", RR)
    assert e.value.line == 2 and "not EDN" in e.value.message


def test_readers_agree_and_pending_invokes_are_info() -> None:
    h = read_txn_jsonl(_jsonl(INV), LA)
    assert [(t.type, t.mops) for t in h.txns] == [("info", (("append", "x", 1), ("r", "x", None)))]
    e = read_txn_edn("{:process 0, :type :invoke, :f :txn, :value [[:append :x 1] [:r :x nil]]}", LA)
    assert [(t.type, t.mops) for t in e.txns] == [(t.type, t.mops) for t in h.txns]
    assert h.locate(0) == "line 1"
    assert history(LA, ["ax1", "rx1"]).locate(1) == "lines 2-4"


# ------------------------------------------------------------------ graph


def test_tarjan_needs_no_recursion() -> None:
    n = 200_000
    succ = [[(i + 1) % n] for i in range(n)]
    assert [len(c) for c in tarjan(range(n), succ.__getitem__)] == [n]
    g = DepGraph(6)
    for a, b, r in ((0, 1, WW), (1, 0, RW), (2, 3, WR), (3, 4, WR), (4, 2, REALTIME), (5, 5, WW)):
        g.link(a, b, r)
    assert sccs(g, WW | WR | RW | REALTIME) == [[0, 1], [2, 3, 4]]
    assert sccs(g, WW | WR) == []


def test_classify() -> None:
    assert classify([(0, 1, WW), (1, 0, WW)]) == "G0"
    assert classify([(0, 1, WW), (1, 0, WR)]) == "G1c"
    assert classify([(0, 1, RW), (1, 0, WR)]) == "G-single-item"
    assert classify([(0, 1, RW), (1, 2, WR), (2, 3, RW), (3, 0, WW)]) == "G-nonadjacent-item"
    assert classify([(0, 1, RW), (1, 2, RW), (2, 0, WR)]) == "G2-item"
    assert classify([(0, 1, RW), (1, 2, WR), (2, 0, RW)]) == "G2-item"  # adjacent around the end
    assert classify([(0, 1, RW), (1, 0, PROCESS)]) == "G-single-item-process"
    assert classify([(0, 1, WR), (1, 2, PROCESS), (2, 0, REALTIME)]) == "G1c-realtime"


# ------------------------------------------------------------------ Elle's relations


def test_models_and_anomalies() -> None:
    si = prohibited_anomalies(["snapshot-isolation"])
    assert {"G0", "G1a", "G1b", "G1c", "G-single-item", "G-nonadjacent-item", "lost-update", "internal"} <= si
    assert "G2-item" not in si
    rc = prohibited_anomalies(["read-committed"])
    assert {"G1a", "G1b", "G1c", "G0", "incompatible-order", "dirty-update"} <= rc
    assert not {"G-single-item", "G2-item", "lost-update", "internal"} & rc
    assert "G2-item-realtime" in prohibited_anomalies(["strict-serializable"])
    assert "G2-item-realtime" not in prohibited_anomalies(["serializable"])
    assert boundary(["G2-item"]) == (["repeatable-read"],
                                     ["serializable", "strict-serializable", "strong-session-serializable"])
    assert boundary(["G-single-item"])[0] == ["consistent-view", "repeatable-read"]
    assert boundary(["internal"])[0] == ["read-atomic"]
    assert "PL-3" in impossible_models(["lost-update"]) and "PL-2" not in impossible_models(["lost-update"])
