"""Engines: where runs execute.  ``local`` (this process) and ``spark`` run sweep tasks;
``contention`` and ``contention_commits`` run Spark tasks as writers against a launched server;
``rundir`` writes run directories.

``scenarios.grid`` loads grid files, ``cells`` expands them into (cell, seed) tasks and runs
one task into one row, and ``analyses.sweep_summary`` writes the rows (Parquet) and a per-cell
summary (CSV, JSON).
"""

from __future__ import annotations

from typing import Any, Protocol

from engines.cells import Task

ENGINES = ("spark", "local")


class Engine(Protocol):
    name: str

    def run(self, tasks: list[Task], label: str = "sweep") -> list[dict[str, Any]]: ...

    def close(self) -> None: ...

    def describe(self) -> str: ...


def open_engine(name: str, master: str | None = None, quiet: bool = False) -> Engine:
    """The engine called ``name`` (``spark`` or ``local``); Spark starts its session here."""
    from model.config import ConfigError

    if name == "local":
        if master:
            raise ConfigError("--master", master, "only applies to --engine spark")
        from engines.local import LocalEngine

        return LocalEngine(quiet=quiet)
    if name == "spark":
        from engines.spark import DEFAULT_MASTER, SparkEngine, SparkUnavailable

        try:
            return SparkEngine(master or DEFAULT_MASTER, quiet=quiet)
        except SparkUnavailable as e:
            raise ConfigError("--engine", name, f"{e} (or run with --engine local)") from e
    raise ConfigError("--engine", name, f"must be one of {', '.join(ENGINES)}")
