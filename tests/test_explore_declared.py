"""The explorer's state key is declared, not inferred (issue 24, item 2).

- Renaming every local variable of the provider, the kernel and the register writer (and moving
  every line of those files) changes no verdict, state count, depth or counterexample of the
  catalogue's explorer rows: the key reads no local by its name and no bytecode offset.
- A time is recognised by its type (the explored world's clocks) or its owner's declaration,
  a class without a declaration is refused by name, and so is a suspension point whose state the
  frame's locals do not hold.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Generator, Hashable
from pathlib import Path
from typing import Any

import pytest
from rename_locals import rename_locals

from model.explore.statekey import Keyer, UndeclaredState, check_suspension
from model.explore.values import InstantMs, WallMs, body_of

ROOT = Path(__file__).resolve().parent.parent
RENAMED = ("model/lock/provider.py", "model/runtime/kernel.py", "model/lock/register_writer.py")
# the catalogue's explorer rows of the lock (README table's bounds)
ROWS = [
    {"variant": "hudi", "writers": 3, "faults": 0, "holds": 1, "steps_per_hold": 1},
    {"variant": "hudi", "writers": 2, "faults": 1, "holds": 1, "steps_per_hold": 1},
    {"variant": "fenced", "writers": 2, "faults": 1, "holds": 1, "steps_per_hold": 1},
]
SCRIPT = """
import json, sys
from model.explore import config_from_dict, explore
import model.lock.provider
out = []
for row in json.loads(sys.argv[1]):
    res = explore(config_from_dict(row))
    out.append({"verdict": res.verdict, "states": res.states, "depth": res.depth,
                "counterexample_length": res.counterexample_length,
                "steps": [r["step"] for r in res.counterexample], "findings": sorted(res.findings),
                "replays_exactly": res.replays_exactly})
print(json.dumps({"module": model.lock.provider.__file__, "rows": out}))
"""


def _explore_rows(root: Path) -> dict[str, Any]:
    env = {**os.environ, "PYTHONPATH": str(root)}
    done = subprocess.run([sys.executable, "-c", SCRIPT, json.dumps(ROWS)], cwd=root, env=env,
                          capture_output=True, text=True, timeout=900, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    result: dict[str, Any] = json.loads(done.stdout)
    return result


def test_renaming_every_local_and_moving_every_line_changes_nothing(tmp_path: Path) -> None:
    copy = tmp_path / "renamed"
    shutil.copytree(ROOT / "model", copy / "model", ignore=shutil.ignore_patterns("__pycache__"))
    renamed: dict[str, int] = {}
    for rel in RENAMED:
        text, counts = rename_locals((ROOT / rel).read_text(encoding="utf-8"), shift=7)
        (copy / rel).write_text(text, encoding="utf-8")
        renamed.update(counts)
    # the names the inferred key once read (times by name, the kernel's task body, a process's owner)
    assert {"now", "start", "until", "gen", "task", "node", "runs", "owner"} <= set(renamed)
    original, mine = _explore_rows(ROOT), _explore_rows(copy)
    assert mine["module"] == str(copy / "model" / "lock" / "provider.py")  # the renamed code ran
    assert mine["rows"] == original["rows"]
    # the catalogue's baselines (the fault budget's reductions; 150, 752, 1,156 without them, 158, 994, 1,751
    # with every two steps of a node dependent as well, 335, 2,156, 3,678 with every root as well)
    assert [r["states"] for r in original["rows"]] == [150, 710, 1110]
    assert all(r["replays_exactly"] in (None, True) for r in original["rows"])


# ---- times, names, declarations ----------------------------------------------------------------------


def _keyer(now: int = 10_000, invented: frozenset[str] = frozenset()) -> Keyer:
    def body(key: str, raw: bytes | None, k: Keyer) -> Hashable:
        return ("body", key, raw)

    def event(k: Keyer, ev: Any) -> Hashable:
        raise AssertionError("no events here")

    return Keyer(constants={}, nodes={"w1": "w2", "w2": "w1"}, invented=invented, now=now,
                 epoch_now=1_767_225_600_000 + now, body=body, event=event)


def test_times_are_known_by_their_type_and_kept_by_arithmetic() -> None:
    now = InstantMs(10_000)
    assert type(now + 500) is InstantMs and type(500 + now) is InstantMs and type(now - 500) is InstantMs
    assert type(now - InstantMs(9_000)) is int  # a duration
    wall = WallMs(1_767_225_610_000)
    assert type(wall + 2_000) is WallMs
    k = _keyer()
    assert k.value(InstantMs(10_500)) == ("t", 500) and k.value(wall + 2_000) == ("w", 2_000)
    assert k.value(10_500) == 10_500  # a plain int is not a time, whatever its size or its name
    later = _keyer(now=70_000)
    assert later.value(InstantMs(70_500)) == k.value(InstantMs(10_500))  # the same state, a minute on


def test_names_are_the_runs_own_and_nodes_the_scenarios() -> None:
    k = _keyer(invented=frozenset({"uuid-b", "uuid-a"}))
    assert k.value(("uuid-b", "uuid-a", "uuid-b", "not-a-name")) == ("t", "#0", "#1", "#0", "not-a-name")
    assert k.value("w1/heartbeat") == "w2/heartbeat" and k.value("w1") == "w2"
    assert k.value(body_of(b"{}", "some/key")) == ("body", "some/key", b"{}")


class _Undeclared:
    pass


def test_a_class_without_a_declaration_is_refused_by_name() -> None:
    with pytest.raises(UndeclaredState, match=r"test_explore_declared\._Undeclared .* declares none"):
        _keyer().value([1, _Undeclared()])


# ---- suspension points: what the frame's locals hold, or a refusal naming the line ---------------------


class _Holder:
    n = 1


def _fine(h: _Holder) -> Generator[Any, Any, Any]:
    for _i in range(3):
        with contextlib.suppress(KeyError):
            got = yield "a"
            yield from _sub(got)
    items = [1, 2]
    for _j, _x in enumerate(items):
        value = (yield "b") + h.n  # h.n is read after the suspension ...
        yield value
    x = yield "c"
    yield h.n + x  # ... or after it


def _sub(got: Any) -> Generator[Any, Any, Any]:
    yield got


def _two_on_a_line() -> Generator[Any, Any, Any]:
    a, b = (yield 1), (yield 2)
    yield a + b


def _loop_over_a_call() -> Generator[Any, Any, Any]:
    total = 0
    for x in sorted([2, 1]):
        total += yield x


def _kept_on_the_stack(h: _Holder) -> Generator[Any, Any, Any]:
    total = h.n + (yield 1)
    yield total


def _in_a_finally() -> Generator[Any, Any, Any]:
    try:
        yield 1
    finally:
        yield 2


def _in_a_with(lock: Any) -> Generator[Any, Any, Any]:
    with lock:
        yield 1


def _suspend_all(gen: Generator[Any, Any, Any]) -> None:
    """Step ``gen`` to its end, checking every suspension point it stops at."""
    try:
        value = next(gen)
        while True:
            frame = gen.gi_frame
            assert frame is not None
            check_suspension(gen.gi_code, frame.f_lineno)
            value = gen.send(value if isinstance(value, int) else 1)
    except StopIteration:
        pass


def test_suspensions_whose_state_is_in_the_locals_pass() -> None:
    _suspend_all(_fine(_Holder()))


@pytest.mark.parametrize("make, message", [
    (lambda: _two_on_a_line(), "2 suspension points span this line"),
    (lambda: _loop_over_a_call(), r"for` loop over `sorted\(\[2, 1\]\)"),
    (lambda: _kept_on_the_stack(_Holder()), r"`h.n` is computed before the suspension"),
    (lambda: _in_a_finally(), "in a `finally` block"),
    (lambda: _in_a_with(contextlib.nullcontext()), r"`with lock` keeps a context manager"),
])
def test_suspensions_whose_state_no_local_holds_are_refused(make: Any, message: str) -> None:
    with pytest.raises(UndeclaredState, match=message) as info:
        _suspend_all(make())
    assert "test_explore_declared.py:" in str(info.value)  # it names the file and the line
