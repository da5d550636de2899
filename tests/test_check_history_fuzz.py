"""Fuzzing the ``hcc check-history`` reader: whatever the file holds, the command ends with a verdict
(exit 0, 1 or 3, output on stdout only) or exit 2 with one message naming an existing line (or the
file) and nothing on stdout; never a traceback, never a partial output."""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import re
import tempfile
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cli.check_history import run

FUZZ = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _run(data: bytes, model: str) -> tuple[int, str, str]:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "h.jsonl"
        path.write_bytes(data)
        html = Path(tmp) / "t.html"
        args = argparse.Namespace(file=str(path), model=model, initial="null", json=False, timeout=2.0,
                                  html=html, allow_empty=True)  # the parser is fuzzed, not the policy
        out_buf, err_buf = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out_buf), contextlib.redirect_stderr(err_buf):
            code = run(args)
        out, err = out_buf.getvalue(), err_buf.getvalue()
        assert code in (0, 1, 2, 3), code
        if code == 2:
            assert out == "" and not html.exists(), "partial output on bad input"
            assert err.startswith(f"hcc check-history: {path}: line "), err
            lines = data.split(b"\n")
            line = int(re.match(r".*?: line (\d+)", err).group(1))  # type: ignore[union-attr]
            assert 1 <= line <= len(lines), (line, len(lines))
            assert err.count("\n") == 1
        else:
            assert err == "" and out.startswith(f"{path}: ") and html.exists()
        return code, out, err


@FUZZ
@given(st.binary(max_size=400))
def test_arbitrary_bytes(data: bytes) -> None:
    _run(data, "cas-register")


@FUZZ
@given(st.lists(st.text(max_size=80), max_size=8))
def test_arbitrary_lines(lines: list[str]) -> None:
    _run("\n".join(lines).encode("utf-8", "surrogatepass"), "kv")


SCALAR = st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=5)
JSON = SCALAR | st.lists(SCALAR, max_size=3) | st.dictionaries(st.text(max_size=5), SCALAR, max_size=3)
# representative wrong values, drawn as often as arbitrary JSON
ODD = st.sampled_from([None, True, 0, -1, 1.5, 10**400, "", "x", [], [1], [1, 2, 3], [[1], 2], {},
                       {"key": "x"}, {"key": 1, "value": "a"}, {"a": [1]}, float("nan"), float("inf")])
VALID = {
    "process": st.integers(-2, 3) | st.sampled_from(["a", "b"]),
    "type": st.sampled_from(["invoke", "ok", "fail", "info"]),
    "f": st.sampled_from(["read", "write", "cas", "get", "put", "append"]),
    "value": st.integers(0, 3) | st.lists(st.integers(0, 3) | st.none(), max_size=3)
    | st.fixed_dictionaries({"key": st.sampled_from(["x", "y"])},
                            optional={"value": st.sampled_from(["a", "b", None])}),
    "time": st.integers(0, 20),
}


@st.composite
def field_value(draw: Any, key: str) -> Any:
    """A value for ``key``: well-typed, a representative wrong one, or any JSON, a third each."""
    return draw((VALID[key], ODD, JSON)[draw(st.integers(0, 2))])


@st.composite
def events(draw: Any) -> dict[str, Any]:
    """Each field present nine times in ten."""
    return {k: draw(field_value(k)) for k in sorted(VALID) if draw(st.integers(0, 9))}


@settings(FUZZ, max_examples=200)
@given(st.lists(events(), max_size=12), st.sampled_from(["cas-register", "kv"]))
def test_arbitrary_objects(objs: list[dict[str, Any]], model: str) -> None:
    text = "\n".join(json.dumps(o, allow_nan=True) for o in objs)
    _run(text.encode(), model)


@st.composite
def well_formed(draw: Any) -> list[dict[str, Any]]:
    """Histories that follow the format (processes alternate invoke/completion), random outcomes."""
    out: list[dict[str, Any]] = []
    pending: dict[int, dict[str, Any]] = {}
    for _ in range(draw(st.integers(0, 14))):
        p = draw(st.integers(0, 3))
        if p in pending:
            inv = pending.pop(p)
            typ = draw(st.sampled_from(["ok", "ok", "fail", "info"]))
            value = draw(st.sampled_from([None, 1, 2, 3])) if inv["f"] == "read" else inv.get("value")
            out.append({"process": p, "type": typ, "f": inv["f"], "value": value})
        else:
            f = draw(st.sampled_from(["read", "write", "cas"]))
            value = {"read": None, "write": draw(st.integers(1, 3)),
                     "cas": [draw(st.sampled_from([None, 1, 2])), draw(st.integers(1, 3))]}[f]
            inv = {"process": p, "type": "invoke", "f": f, "value": value}
            pending[p] = inv
            out.append(inv)
    return out


@FUZZ
@given(well_formed())
def test_well_formed_histories_get_a_verdict(history: list[dict[str, Any]]) -> None:
    code, out, _ = _run("".join(json.dumps(e) + "\n" for e in history).encode(), "cas-register")
    assert code in (0, 1), out
    assert ("NOT linearizable" in out) == (code == 1)


@settings(FUZZ, max_examples=250)
@given(well_formed().filter(bool), st.data())
def test_well_formed_histories_with_one_field_corrupted(history: list[dict[str, Any]], data: Any) -> None:
    i = data.draw(st.integers(0, len(history) - 1))
    key = data.draw(st.sampled_from(sorted(VALID)))
    event = dict(history[i])
    if data.draw(st.integers(0, 3)) == 0:
        event.pop(key, None)
    else:
        event[key] = data.draw(field_value(key))
    corrupted = history[:i] + [event] + history[i + 1:]
    _run("".join(json.dumps(e) + "\n" for e in corrupted).encode(), "cas-register")
