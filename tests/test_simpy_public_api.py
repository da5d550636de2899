"""The worlds use SimPy through its public API only (issue 24, items 1 and 2).

Two checks, each shown to fail on a reintroduced ``env._now``:

- a source scan: no module under ``model/``, ``backends/`` or ``engines/`` names a private
  attribute of SimPy's environment, events or processes (``x._now``, ``getattr(x, "_queue")``),
  except through ``self`` in a class of its own that does not derive from SimPy's;
- a guard at run time: SimPy's ``Environment`` and ``Event`` (so every event and process) report
  any read, write or deletion of an underscore attribute, or of ``__dict__``, made by code outside
  SimPy's package, while every simulated catalogue entry runs and while the lock explorer searches
  and replays a counterexample in the simulated world (a scripted schedule).  It also sees what the
  scan cannot: a subclass's ``self._queue``, ``operator.attrgetter("_now")``, a walk of ``vars()``.
"""

from __future__ import annotations

import ast
import contextlib
import dataclasses
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import simpy
import simpy.core
import simpy.events

from model.explore import Bounds, explore
from model.protocols import PROTOCOLS
from model.runtime.sim import SimPyWorld, SimWorld
from scenarios import catalogue

ROOT = Path(__file__).resolve().parent.parent
SCANNED = ("model", "backends", "engines")
SIMPY_DIR = os.path.dirname(simpy.__file__) + os.sep


def _private_names() -> frozenset[str]:
    """The underscore attributes of SimPy's environment, events and processes (class and instance ones).

    Conditions (``AnyOf``) are left to the run-time guard: their ``_events`` is also a method name of the
    explorer's state encoder.
    """
    env = simpy.Environment()

    def proc() -> simpy.events.ProcessGenerator:
        yield env.timeout(1)

    made: list[Any] = [env, env.process(proc()), env.timeout(2), env.event().succeed()]
    env.run()
    names: set[str] = set()
    for cls in (simpy.core.Environment, simpy.events.Event, simpy.events.Timeout, simpy.events.Initialize,
                simpy.events.Interruption, simpy.events.Process):
        names |= set(vars(cls)) | set(vars(cls).get("__annotations__", {}))
    for obj in made:
        names |= set(vars(obj))
    return frozenset(n for n in names if n.startswith("_") and not n.startswith("__"))


PRIVATE = _private_names()
_BY_NAME = ("getattr", "setattr", "hasattr", "delattr", "attrgetter")


def _simpy_bases(trees: dict[str, ast.Module]) -> set[str]:
    """Names of the classes (SimPy's, and the scanned modules' own) that derive from a SimPy class."""
    derived = {name for name in dir(simpy) if isinstance(getattr(simpy, name), type)}
    derived |= {name for name in dir(simpy.events) if isinstance(getattr(simpy.events, name), type)}
    changed = True
    while changed:
        changed = False
        for tree in trees.values():
            for node in ast.walk(tree):
                if isinstance(node, ast.ClassDef) and node.name not in derived and any(
                        _last_name(b) in derived for b in node.bases):
                    derived.add(node.name)
                    changed = True
    return derived


def _last_name(expr: ast.expr) -> str:
    if isinstance(expr, ast.Name):
        return expr.id
    if isinstance(expr, ast.Attribute):
        return expr.attr
    return ""


def private_uses(tree: ast.Module, derived: set[str]) -> list[tuple[int, str]]:
    """Where ``tree`` names a private SimPy attribute: (line, what)."""
    found: list[tuple[int, str]] = []

    def visit(node: ast.AST, simpy_class: bool) -> None:
        if isinstance(node, ast.ClassDef):
            simpy_class = any(_last_name(b) in derived for b in node.bases)
        elif isinstance(node, ast.Attribute) and node.attr in PRIVATE:
            own = isinstance(node.value, ast.Name) and node.value.id in ("self", "cls") and not simpy_class
            if not own:
                found.append((node.lineno, ast.unparse(node)))
        elif isinstance(node, ast.Call) and _last_name(node.func) in _BY_NAME:
            for arg in node.args:
                if isinstance(arg, ast.Constant) and arg.value in PRIVATE:
                    found.append((node.lineno, ast.unparse(node)))
        for child in ast.iter_child_nodes(node):
            visit(child, simpy_class)

    visit(tree, False)
    return found


def _scan(sources: dict[str, str]) -> list[str]:
    trees = {name: ast.parse(text, name) for name, text in sources.items()}
    derived = _simpy_bases(trees)
    return [f"{name}:{line}: {what}" for name, tree in sorted(trees.items())
            for line, what in private_uses(tree, derived)]


def test_the_private_names_are_simpys() -> None:
    assert {"_now", "_queue", "_eid", "_active_proc", "_ok", "_value", "_delay", "_generator",
            "_target"} <= PRIVATE


def test_no_module_names_a_private_simpy_attribute() -> None:
    sources = {str(p.relative_to(ROOT)): p.read_text(encoding="utf-8")
               for folder in SCANNED for p in sorted((ROOT / folder).rglob("*.py"))}
    assert len(sources) > 50
    assert _scan(sources) == []


@pytest.mark.parametrize("source", [
    "def now(env):\n    return env._now\n",
    "def now(world):\n    return world.env._now\n",
    "import heapq\ndef push(env, e):\n    heapq.heappush(env._queue, e)\n",
    "def trigger(event):\n    event._ok, event._value = True, None\n",
    "import operator\nclock = operator.attrgetter('_now')\n",
    "import simpy\nclass Env(simpy.Environment):\n    def when(self):\n        return self._now\n",
    "from simpy.events import Event\nclass A(Event):\n    pass\n"
    "class B(A):\n    def ok(self):\n        return self._ok\n",
])
def test_the_scan_finds_a_reintroduced_private_access(source: str) -> None:
    assert _scan({"model/example.py": source})


def test_the_scan_leaves_a_classs_own_underscore_attributes_alone() -> None:
    source = ("class Signal:\n    def __init__(self):\n        self._value = None\n"
              "    def poll(self):\n        return self._value\n")
    assert _scan({"backends/example.py": source}) == []


# ---- the guard at run time ----------------------------------------------------------------------------


def _private(name: str) -> bool:
    return name.startswith("_") and (not name.startswith("__") or name == "__dict__")


@contextlib.contextmanager
def guarded() -> Iterator[set[tuple[str, int, str, str]]]:
    """Record (file, line, class, attribute) of every private attribute of a SimPy environment, event or
    process that code outside SimPy reads, writes or deletes while the block runs."""
    touched: set[tuple[str, int, str, str]] = set()

    def note(obj: object, name: str) -> None:
        caller = sys._getframe(2)
        if not caller.f_code.co_filename.startswith(SIMPY_DIR):
            touched.add((caller.f_code.co_filename, caller.f_lineno, type(obj).__name__, name))

    def get(obj: object, name: str) -> Any:
        if _private(name):
            note(obj, name)
        return object.__getattribute__(obj, name)

    def set_(obj: object, name: str, value: Any) -> None:
        if _private(name):
            note(obj, name)
        object.__setattr__(obj, name, value)

    def delete(obj: object, name: str) -> None:
        if _private(name):
            note(obj, name)
        object.__delattr__(obj, name)

    classes = (simpy.core.Environment, simpy.events.Event)
    hooks = {"__getattribute__": get, "__setattr__": set_, "__delattr__": delete}
    assert not any(hook in vars(cls) for cls in classes for hook in hooks)
    try:
        for cls in classes:
            for hook, fn in hooks.items():
                setattr(cls, hook, fn)
        yield touched
    finally:
        for cls in classes:
            for hook in hooks:
                if hook in vars(cls):
                    delattr(cls, hook)


def _report(touched: set[tuple[str, int, str, str]]) -> list[str]:
    return sorted(f"{os.path.relpath(f, ROOT)}:{line}: {cls}.{name}" for f, line, cls, name in touched)


def _simulated(name: str) -> bool:
    entry = catalogue.load(name)
    return entry.protocol in ("lock", "occ", "nbcc") and entry.world == "sim"


SIMULATED = [name for name in catalogue.names() if _simulated(name)]


def test_the_guard_sees_simpy_only_through_itself() -> None:
    with guarded() as touched:
        env = simpy.Environment()
        env.process(_ticks(env))
        env.run(until=10)
    assert touched == set() and env.now == 10


def _ticks(env: simpy.Environment) -> simpy.events.ProcessGenerator:
    while True:
        yield env.timeout(1)


@pytest.mark.parametrize("name", SIMULATED)
def test_a_simulated_catalogue_entry_touches_no_private_simpy_state(name: str) -> None:
    entry = catalogue.load(name)
    with guarded() as touched:
        PROTOCOLS[entry.protocol].run(entry.config, entry.seed, None)
    assert _report(touched) == []


def test_the_lock_explorer_touches_no_private_simpy_state() -> None:
    entry = catalogue.load("explore-lock-hudi-three-writers")
    small = dataclasses.replace(Bounds(holds=1, steps_per_hold=1, work_ms=1_000), variant="hudi", writers=2,
                                faults=1, fault_kinds=("pause",))
    with guarded() as touched:
        holds = explore(entry.config.settings)
        # a violation: its counterexample is replayed in the simulated world with a scripted schedule
        violated = explore(small, first=True)
    assert _report(touched) == []
    # the guard changes nothing the search sees: the same search unguarded (the catalogue entry's own
    # result) has the same verdict and the same graph, state for state
    plain = explore(entry.config.settings)
    assert holds.verdict == plain.verdict == "holds" and holds.complete
    assert (holds.states, holds.points, holds.runs, holds.transitions, holds.depth) == \
        (plain.states, plain.points, plain.runs, plain.transitions, plain.depth)
    assert holds.states > 100 and sorted(holds.findings) == sorted(plain.findings)
    assert violated.verdict == "violated" and violated.replays_exactly
    assert violated.scenario is not None and violated.scenario.schedule.ranks


def test_the_guard_catches_a_reintroduced_env_now(monkeypatch: pytest.MonkeyPatch) -> None:
    def now(self: SimPyWorld) -> int:
        return int(self.env._now)  # what model/runtime/sim.py did before issue 24

    monkeypatch.setattr(SimPyWorld, "now", now)
    scenario = dataclasses.replace(catalogue.load("rfc91-safe").config, duration_ms=20_000)
    with guarded() as touched:
        SimWorld(scenario).run()
    assert any(name == "_now" and f.endswith("test_simpy_public_api.py") for f, _, _, name in touched)
