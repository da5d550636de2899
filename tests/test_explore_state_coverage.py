"""An explored state cannot silently shrink (issue 35, item 1).

- Every attribute of an explored object is read by its class's ``__explore_state__`` or named in its
  ``__explore_excluded__`` with a reason; otherwise the search stops with an error naming the class and
  the attribute (``model/explore/coverage.py``), checked on every object of every state the key encodes.
- A suspension the explorer's stack model cannot read is refused, naming the function, file:line and
  the form (``model/explore/statekey.py``, ``check_suspension``).
- A mutation: one field dropped from a declaration of a known-violating configuration is named by the
  check; excluded instead (the only way past the check), the violation becomes unreachable and the
  search says ``holds``, which is what the check is there to prevent.
"""

from __future__ import annotations

import ast
import dataclasses
import importlib
import inspect
import pkgutil
import textwrap
from collections.abc import Generator, Hashable, Iterator
from typing import Any

import pytest

import model
from model.explore import coverage, explore
from model.explore.coverage import UncoveredAttribute, check_covered
from model.explore.nbcc import NbccBounds
from model.explore.occ import OccBounds
from model.explore.protocols import config_from_dict
from model.explore.statekey import Keyer, UndeclaredState, check_suspension


@pytest.fixture(autouse=True)
def _fresh_coverage() -> Iterator[None]:
    """What a class covers is computed once per process: a test that patches declarations starts and ends
    with none computed."""
    coverage.forget()
    yield
    coverage.forget()


def _keyer() -> Keyer:
    def body(key: str, raw: bytes | None, k: Keyer) -> Hashable:
        return ("body", key, raw)

    def event(k: Keyer, ev: Any) -> Hashable:
        raise AssertionError("no events here")

    return Keyer(constants={}, nodes={}, invented=frozenset(), now=0, epoch_now=0, body=body, event=event)


# ---- every attribute is in the state or excluded with a reason ------------------------------------------


class _Counter:
    __explore_excluded__ = {"cache": "a cache of total's digits, made from total"}

    def __init__(self) -> None:
        self.total = 0
        self.cache = ""

    def __explore_state__(self, k: Any) -> Hashable:
        return (self.total, self._twice())

    def _twice(self) -> int:  # a helper the declaration calls: what it reads is read too
        return 2 * self.step if hasattr(self, "step") else 0


class _Slotted:
    __slots__ = ("a", "b")

    def __explore_state__(self, k: Any) -> Hashable:
        return (self.a,)


def test_an_attribute_neither_read_nor_excluded_stops_the_key_naming_class_and_attribute() -> None:
    c = _Counter()
    _keyer().value(c)  # total read, cache excluded
    c.step = 3  # read by the helper the declaration calls
    _keyer().value(c)
    c.late = 1  # an attribute set late in the object's life: caught at the first state that holds it
    named = r"test_explore_state_coverage\._Counter\.late is an attribute"
    with pytest.raises(UncoveredAttribute, match=named):
        _keyer().value([c])


def test_slots_and_bad_declarations_are_refused_by_name(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(UncoveredAttribute, match=r"_Slotted\.b is an attribute"):
        check_covered(_Slotted())
    monkeypatch.setattr(_Counter, "__explore_excluded__", {"cache": " "})
    coverage.forget()
    with pytest.raises(UncoveredAttribute, match=r"_Counter\.__explore_excluded__\['cache'\]: give the"):
        check_covered(_Counter())
    monkeypatch.setattr(_Counter, "__explore_excluded__", {"cache": "why", "total": "why"})
    coverage.forget()
    with pytest.raises(UncoveredAttribute, match=r"_Counter\.total is read by its state declaration and"):
        check_covered(_Counter())

    def whole(self: Any, k: Any) -> Hashable:
        return k.value(vars(self))

    monkeypatch.setattr(_Counter, "__explore_state__", whole)
    coverage.forget()
    with pytest.raises(UncoveredAttribute, match=r"`vars\(self\)` uses `self` whole"):
        check_covered(_Counter())


def _model_classes() -> list[type]:
    """Every class of ``model`` whose objects can be part of an explored state: those with a declaration and
    the frozen dataclasses (their fields are their state)."""
    out = []
    for info in pkgutil.walk_packages(model.__path__, "model."):
        module = importlib.import_module(info.name)
        for _, kind in inspect.getmembers(module, inspect.isclass):
            if kind.__module__ != info.name:
                continue
            frozen = dataclasses.is_dataclass(kind) and kind.__dataclass_params__.frozen  # type: ignore[attr-defined]
            if "__explore_state__" in vars(kind) or frozen or "__explore_excluded__" in vars(kind):
                out.append(kind)
    return out


def test_every_declaration_of_the_model_is_readable_and_its_exclusions_have_reasons() -> None:
    kinds = _model_classes()
    declared = [k for k in kinds if "__explore_state__" in vars(k)]
    assert len(declared) >= 25  # the lock provider, the kernel, the store, the OCC and NBCC writers, ...
    excluded = 0
    for kind in kinds:
        if "__explore_state__" not in vars(kind) and not dataclasses.is_dataclass(kind):
            continue  # a mixin's exclusions: read through the classes that inherit them
        cov = coverage.coverage(kind)  # raises on an unreadable declaration, an empty reason, a name in both
        excluded += len(cov.excluded)
    assert excluded >= 30


@pytest.mark.parametrize("bounds", [
    config_from_dict({"model": "lock", "variant": "hudi", "writers": 2, "faults": 1, "fault_kinds": ["pause"],
                      "holds": 1, "steps_per_hold": 1, "max_states": 200}),
    config_from_dict({"model": "lock", "variant": "fenced", "writers": 2, "skew_ms": 250, "holds": 1,
                      "steps_per_hold": 1, "max_states": 200}),
    OccBounds(variant="hudi", phases=False, checkers=("duplicate-key",), max_states=100),
    OccBounds(variant="vanlightly-v5", cc="pessimistic", phases=False, max_states=100),
    NbccBounds(variant="hudi-1.2.0", writers=1, batches=2, buckets=2, failed_attempts=1,
               metadata_table=False),
], ids=["lock-hudi-pause", "lock-fenced-skew", "occ-hudi", "occ-v5-pessimistic", "nbcc-anchor"])
def test_the_explorers_objects_are_covered_in_every_state(bounds: Any,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    import model.explore.run as run
    import model.explore.statekey as statekey

    checked: set[str] = set()

    def spy(obj: Any) -> None:
        checked.add(type(obj).__qualname__)
        check_covered(obj)

    monkeypatch.setattr(statekey, "check_covered", spy)
    monkeypatch.setattr(run, "check_covered", spy)
    res = explore(bounds)
    assert res.states > 0
    # the run's own objects were checked: the store, nodes, tasks and the protocol's
    assert {"ObjectStore", "Node", "Task"} <= checked
    assert checked & {"StorageLockProvider", "HudiWriter", "CowWriter", "NbccWriter"}


# ---- suspensions the stack model cannot read are refused by name ----------------------------------------


class _Toy:
    def __init__(self) -> None:
        self.i = 1


def _sliced(self: _Toy, a: list[int]) -> Generator[Any, Any, Any]:
    got = a[self.i:(yield 1)]
    yield got


def _stored_before(x: dict[Any, int]) -> Generator[Any, Any, Any]:
    x[(yield 1)] = len(x)  # the value is computed before the target's index
    yield 2


def _unpacked_before(kw: dict[str, int]) -> Generator[Any, Any, Any]:
    got = dict(**kw, x=(yield 1))
    yield got


def _in_a_match(v: int) -> Generator[Any, Any, Any]:
    match v:
        case 1:
            yield 1


def _fine(self: _Toy, a: list[int]) -> Generator[Any, Any, Any]:
    got = a[0:(yield 1)]  # constants and locals only
    n = yield got
    yield a[self.i:n]


def _suspend_all(gen: Generator[Any, Any, Any]) -> None:
    """Step ``gen`` to its end, checking every suspension point it stops at."""
    try:
        next(gen)
        while True:
            assert gen.gi_frame is not None
            check_suspension(gen.gi_code, gen.gi_frame.f_lineno)
            gen.send(1)
    except StopIteration:
        pass


def _line_of(fn: Any, text: str) -> int:
    lines, first = inspect.getsourcelines(fn)
    return first + next(i for i, line in enumerate(lines) if text in line)


@pytest.mark.parametrize(("make", "fn", "text", "message"), [
    (lambda: _sliced(_Toy(), [1, 2, 3]), _sliced, "a[self.i:",
     r"`self.i` is computed before the suspension and kept on the interpreter's stack \(Slice: "),
    (lambda: _stored_before({}), _stored_before, "x[(yield",
     r"`len\(x\)` is computed before the suspension .* \(Assign: "),
    (lambda: _unpacked_before({"a": 1}), _unpacked_before, "dict(**kw",
     r"`\*\*kw` is computed before the suspension .* \(Call: "),
    (lambda: _in_a_match(1), _in_a_match, "yield 1",
     r"the suspension sits in a form the explorer's stack model cannot read \(match_case: "),
])
def test_a_suspension_the_stack_model_cannot_read_is_refused_naming_function_line_and_form(
        make: Any, fn: Any, text: str, message: str) -> None:
    with pytest.raises(UndeclaredState, match=message) as info:
        _suspend_all(make())
    where = f"{__file__}:{_line_of(fn, text)} ({fn.__qualname__})"
    assert str(info.value).startswith(where)


def test_suspensions_with_their_state_in_locals_pass() -> None:
    _suspend_all(_fine(_Toy(), [1, 2, 3]))


# ---- a mutation: one field dropped from a declaration ---------------------------------------------------

# Hudi 1.2.0's lock, two writers, one pause of 5 s: the holder pauses after acquiring, a contender takes
# the lock at its expiry and both hold it (README lock table; tests/test_explore_lock.py)
PAUSED = {"model": "lock", "variant": "hudi", "writers": 2, "faults": 1, "fault_kinds": ["pause"], "holds": 1,
          "steps_per_hold": 1, "phases": False, "pause_ms": [5000]}


def test_a_field_dropped_from_a_declaration_is_named_and_without_the_check_goes_unseen(
        monkeypatch: pytest.MonkeyPatch) -> None:
    import model.explore.run as run
    import model.explore.statekey as statekey
    from model.lock.lockfile import LockData

    bounds = config_from_dict(PAUSED)
    full = explore(bounds)
    assert full.verdict == "violated" and full.complete and full.found is not None
    assert full.found.violation.kind == "overlap"

    def without_valid_until(self: LockData, k: Any) -> Hashable:  # validUntil dropped
        return (self.expired, k.name(self.owner))

    monkeypatch.setattr(LockData, "__explore_state__", without_valid_until)
    coverage.forget()
    with pytest.raises(UncoveredAttribute,
                       match=r"model\.lock\.lockfile\.LockData\.valid_until is an attribute"):
        explore(bounds)
    # with the check off nothing says so: the search runs to its end on a key that merges states the full
    # key keeps apart (in these bounds the lock file's validUntil is also in the store's bodies, so the
    # violation is still found; a field held nowhere else would lose it)
    monkeypatch.setattr(statekey, "check_covered", lambda obj: None)
    monkeypatch.setattr(run, "check_covered", lambda obj: None)
    blind = explore(bounds)
    assert blind.complete and blind.states < full.states


def test_every_suspension_of_the_skew_adjusting_generator_is_readable() -> None:
    # its interrupted sleep once released the lock from inside the ``except`` handler, a form the stack model
    # refuses (the handler keeps the exception on the interpreter's stack); it releases after the handler now
    from model.timeline.timegen import TimeGenerator

    code = TimeGenerator._raw.__code__
    tree = ast.parse(textwrap.dedent(inspect.getsource(TimeGenerator._raw)))
    lines = sorted({node.lineno + code.co_firstlineno - 1 for node in ast.walk(tree)
                    if isinstance(node, ast.Yield | ast.YieldFrom)})
    assert len(lines) >= 5
    for line in lines:
        check_suspension(code, line)
