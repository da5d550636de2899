"""Grid files: a base scenario and the settings to vary, as dotted keys of the Scenario.

A grid file (TOML)::

    name = "smoke"                      # optional; the file's stem otherwise
    description = "..."
    scenario = "rfc91-long-pause"       # catalogue name, or a path (relative to the grid file)
    seeds = 3                           # seeds per cell (``--seeds`` overrides)
    first_seed = 1

    [base]                              # fixed overrides applied to every cell
    duration_ms = 120_000
    "lock.validity_secs" = 10

    [vary]                              # one list of values per setting; cells are the product
    "faults.pauses[0].duration_ms" = [5_000, 20_000]
    "lock.variant" = ["hudi", "fenced"]

Keys may be quoted dotted keys or nested tables (``[vary.lock] variant = [...]``);
both name the same setting.  Overrides go through :func:`scenarios.loader.apply_override`
and every cell is built and validated when the grid is loaded, so a bad key or a
bad value fails before anything runs, with the loader's error naming the field.
"""

from __future__ import annotations

import itertools
import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from model.config import ConfigError, Scenario
from scenarios import loader

GRIDS = Path(__file__).resolve().parent / "grids"
FIELDS = ("name", "description", "scenario", "seeds", "first_seed", "base", "vary")
MAX_CELLS = 100_000


def grid_names() -> list[str]:
    """Names of the grids shipped in ``scenarios/grids``."""
    return loader.catalogue_names(GRIDS)


def resolve(name_or_path: str) -> Path:
    """A grid name (from ``scenarios/grids``) or a path to a grid file."""
    return loader.resolve(name_or_path, GRIDS, what="grid")


def toml_literal(value: Any) -> str:
    """``value`` as a TOML literal (inline tables for dicts), for ``loader.apply_override``."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ConfigError("value", value, "must be a finite number")
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, list | tuple):
        return "[" + ", ".join(toml_literal(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{json.dumps(str(k))} = {toml_literal(v)}" for k, v in value.items()) + "}"
    raise ConfigError("value", value, f"unsupported value type {type(value).__name__}")


def _flatten(table: dict[str, Any], prefix: str = "") -> list[tuple[str, Any]]:
    """Nested TOML tables -> (dotted key, value) pairs, in file order (a table is a path, never a value)."""
    out: list[tuple[str, Any]] = []
    for key, value in table.items():
        dotted = f"{prefix}.{key}" if prefix else key
        if isinstance(value, dict):
            out.extend(_flatten(value, dotted))
        else:
            out.append((dotted, value))
    return out


def column_kind(key: str, values: tuple[Any, ...]) -> str:
    """The Parquet type of a settings column: int, float, bool, or str (dicts are stored as JSON text)."""
    if all(isinstance(v, bool) for v in values):
        return "bool"
    if all(isinstance(v, int) and not isinstance(v, bool) for v in values):
        return "int"
    if all(isinstance(v, int | float) and not isinstance(v, bool) for v in values):
        return "float"
    if all(isinstance(v, str) for v in values):
        return "str"
    if all(isinstance(v, dict) for v in values):
        return "json"
    raise ConfigError(f"vary.{key}", list(values), "mixes value types (use one of numbers, strings, "
                      "booleans or inline tables)")


def column_value(kind: str, value: Any) -> Any:
    """A setting's value as stored in a row."""
    if kind == "json":
        return json.dumps(value, sort_keys=True)
    if kind == "float":
        return float(value)
    return value


@dataclass(frozen=True)
class Grid:
    """A loaded, validated grid: base scenario, fixed overrides, varied settings, seeds."""

    name: str
    description: str
    scenario: str
    base: tuple[tuple[str, Any], ...]
    vary: tuple[tuple[str, tuple[Any, ...]], ...]
    seeds: int
    first_seed: int
    source: str = ""

    @property
    def keys(self) -> list[str]:
        """The varied settings (dotted keys), in file order: one column each in the rows."""
        return [k for k, _ in self.vary]

    def kinds(self) -> dict[str, str]:
        """Column kind of each varied setting."""
        return {k: column_kind(k, values) for k, values in self.vary}

    def cells(self) -> list[dict[str, Any]]:
        """Every combination of the varied values (the first key varies slowest)."""
        combos = itertools.product(*(values for _, values in self.vary))
        return [dict(zip(self.keys, combo, strict=True)) for combo in combos]

    def overrides(self, cell: dict[str, Any]) -> list[str]:
        """The ``dotted.key=value`` overrides that turn the base scenario into ``cell``."""
        return [f"{k}={toml_literal(v)}" for k, v in [*self.base, *cell.items()]]

    def seed_list(self, seeds: int | None = None, first_seed: int | None = None) -> list[int]:
        """The seeds each cell runs with."""
        n = self.seeds if seeds is None else seeds
        first = self.first_seed if first_seed is None else first_seed
        if n < 1:
            raise ConfigError("seeds", n, "must be >= 1")
        if first < 0:
            raise ConfigError("first_seed", first, "must be >= 0")
        return list(range(first, first + n))

    def build(self, cell: dict[str, Any]) -> Scenario:
        """The validated scenario of one cell; a bad cell raises ConfigError naming the field and the cell."""
        try:
            return loader.load(self.scenario, self.overrides(cell))
        except ConfigError as e:
            where = ", ".join(f"{k}={v!r}" for k, v in cell.items())
            raise ConfigError(e.field, e.value, f"{e.reason} (grid {self.name}, cell {where})") from e


def _require(cond: bool, field: str, value: Any, reason: str) -> None:
    if not cond:
        raise ConfigError(field, value, reason)


def _scenario_ref(ref: str, grid_path: Path | None) -> str:
    """A scenario path relative to the grid file, else the reference as written (catalogue name or path)."""
    if grid_path is not None and ref.endswith(".toml"):
        beside = grid_path.parent / ref
        if beside.exists():
            return str(beside)
    return ref


def parse(raw: dict[str, Any], default_name: str = "grid", path: Path | None = None) -> Grid:
    """Validate a parsed grid file; every cell's scenario is built once so bad cells fail here."""
    for key, value in raw.items():
        _require(key in FIELDS, key, value, f"unknown field (known: {', '.join(FIELDS)})")
    name = raw.get("name", default_name)
    _require(isinstance(name, str) and bool(name), "name", name, "must be a non-empty string")
    description = raw.get("description", "")
    _require(isinstance(description, str), "description", description, "must be a string")
    scenario = raw.get("scenario")
    _require(isinstance(scenario, str) and bool(scenario), "scenario", scenario,
             "must name a base scenario (catalogue name or path)")
    seeds = raw.get("seeds", 3)
    _require(isinstance(seeds, int) and not isinstance(seeds, bool) and seeds >= 1, "seeds", seeds,
             "must be an integer >= 1")
    first_seed = raw.get("first_seed", 1)
    _require(isinstance(first_seed, int) and not isinstance(first_seed, bool) and first_seed >= 0,
             "first_seed", first_seed, "must be an integer >= 0")
    base_raw = raw.get("base", {})
    _require(isinstance(base_raw, dict), "base", base_raw, "must be a table of dotted keys")
    vary_raw = raw.get("vary")
    _require(isinstance(vary_raw, dict) and bool(vary_raw), "vary", vary_raw,
             "must be a non-empty table: dotted key = [values]")
    assert isinstance(base_raw, dict) and isinstance(vary_raw, dict)  # _require raised otherwise
    base = tuple(_flatten(base_raw))
    vary_pairs = _flatten(vary_raw)
    vary: list[tuple[str, tuple[Any, ...]]] = []
    for key, values in vary_pairs:
        _require(key != "seed", f"vary.{key}", values, "seeds are set by the sweep: use seeds / first_seed")
        _require(isinstance(values, list), f"vary.{key}", values, "must be a list of values")
        _require(len(values) >= 1, f"vary.{key}", values, "must list at least one value")
        _require(len({json.dumps(v, sort_keys=True) for v in values}) == len(values), f"vary.{key}", values,
                 "lists a value twice")
        column_kind(key, tuple(values))
        vary.append((key, tuple(values)))
    n_cells = math.prod(len(v) for _, v in vary)
    _require(n_cells <= MAX_CELLS, "vary", n_cells, f"has more than {MAX_CELLS} cells")
    assert isinstance(scenario, str)
    grid = Grid(name, description, _scenario_ref(scenario, path), base, tuple(vary), seeds, first_seed,
                str(path) if path else "")
    for cell in grid.cells():
        grid.build(cell)
    return grid


def load(name_or_path: str) -> Grid:
    """Load a grid by name (``scenarios/grids/NAME.toml``) or path, and validate every cell."""
    path = resolve(name_or_path)
    return parse(loader.read_toml(path, "grid"), path.stem, path)

