"""model/typed.py: the one converter of plain data (scenarios, explorer bounds, run-directory files).

Strict as JSON is, closed unless declared open, and a refusal names the field's path, its value and what
the declaration wants; pydantic stays unimported until something is converted (``hcc --help``)."""

from __future__ import annotations

import datetime
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any, NotRequired

import pytest
from typing_extensions import TypedDict

from model import typed
from model.config import ConfigError, Scenario
from model.typed import MISSING, Invalid, convert, describe
from scenarios.loader import build

ROOT = Path(__file__).resolve().parent.parent


@dataclass(frozen=True)
class Inner:
    count: int = 1
    share: float = 0.5
    names: tuple[str, ...] = ()


@dataclass(frozen=True)
class Outer:
    inner: Inner = field(default_factory=Inner)
    pair: tuple[int, int] = (0, 0)
    limit: int | None = None
    by_node: dict[str, Inner] = field(default_factory=dict)


class Closed(TypedDict):
    a: int
    b: int
    c: NotRequired[str]


class Open(TypedDict):
    a: int


typed.open_fields(Open)


def _problem(value: Any, tp: Any) -> typed.Problem:
    with pytest.raises(Invalid) as err:
        convert(value, tp)
    return err.value.problem


def test_plain_data_becomes_the_declared_values() -> None:
    got = convert({"inner": {"count": 2, "share": 1, "names": ["x"]}, "pair": [1, 2],
                   "by_node": {"w1": {}}}, Outer)
    assert got == Outer(Inner(2, 1.0, ("x",)), (1, 2), None, {"w1": Inner()})
    assert type(got.inner.share) is float and type(got.pair) is tuple  # an integer is a number


@pytest.mark.parametrize(("value", "path", "found", "wants"), [
    ({"inner": {"count": True}}, ("inner", "count"), True, "an integer"),  # a boolean is not an integer
    ({"inner": {"count": 1.0}}, ("inner", "count"), 1.0, "an integer"),
    ({"inner": {"count": "1"}}, ("inner", "count"), "1", "an integer"),
    ({"inner": {"names": ["a", 3]}}, ("inner", "names", 1), 3, "a string"),
    ({"inner": 5}, ("inner",), 5, "an object"),
    ({"pair": [1]}, ("pair",), [1], "a list of 2"),
    ({"pair": [1, 2, 3]}, ("pair",), [1, 2, 3], "a list of 2"),
    ({"limit": "x"}, ("limit",), "x", "an integer or null"),
    ({"by_node": {"w1": {"share": "half"}}}, ("by_node", "w1", "share"), "half", "a number"),
    ({"inner": {"share": float("nan")}}, ("inner", "share"), None, "a number"),  # TOML's nan: no data
    ({"inner": {"names": [datetime.date(2026, 1, 1)]}}, ("inner", "names", 0), None, "a string"),
])
def test_a_wrong_value_is_named_by_its_path_and_what_it_must_be(value: Any, path: tuple[Any, ...],
                                                               found: Any, wants: str) -> None:
    p = _problem(value, Outer)
    assert (p.kind, p.path, p.wants) == ("type", path, wants)
    assert found is None or p.value == found


def test_an_undeclared_field_is_refused_at_any_depth_naming_the_known_ones() -> None:
    p = _problem({"inner": {"cuont": 2}}, Outer)
    assert (p.kind, p.path, p.value, p.owner, p.known) == ("unknown", ("inner", "cuont"), 2, "Inner",
                                                           ("count", "names", "share"))
    assert _problem({"a": 1, "b": 2, "d": 3}, Closed).path == ("d",)
    assert convert({"a": 1, "d": 3}, Open) == {"a": 1, "d": 3}  # open: kept


def test_a_missing_field_is_named_before_a_wrong_one_the_first_by_name() -> None:
    p = _problem({"a": "x"}, Closed)
    assert (p.kind, p.path, p.value) == ("missing", ("b",), MISSING)
    assert _problem({"c": 1}, Closed).path == ("a",)


def test_the_words_for_a_type() -> None:
    assert describe(tuple[int, ...]) == "a list of integers"
    assert describe(dict[str, int] | None, table="a table") == "a table or null"
    assert describe(Annotated[str, typed.OneOf(["x", "y"])]) == "one of x, y"


def test_a_scenario_error_names_the_dotted_toml_key_the_value_and_the_rule() -> None:
    with pytest.raises(ConfigError) as err:
        build(Scenario, {"workload": {"node_start_ms": {"a b": 1.5}}})
    assert str(err.value) == 'workload.node_start_ms."a b" = 1.5: must be an integer'
    with pytest.raises(ConfigError) as err:
        build(Scenario, {"lock": {"validty_secs": 3}})
    assert err.value.field == "lock.validty_secs" and err.value.value == 3
    assert err.value.reason.startswith("unknown field (known: audit, base_path, ")
    assert build(Scenario, {"storage": {"conflict_prob": 1}}).storage.conflict_prob == 1.0


def test_pydantic_is_not_imported_until_something_is_converted() -> None:
    code = ("import sys, cli.main, model.run_format, scenarios.loader, model.explore.bounds; "
            "cli.main.build_parser(); print('pydantic' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT)
    assert out.stdout.strip() == "False"
