"""The engine a sweep or a boundary search runs its tasks on: ``local`` (worker processes of this
machine, :mod:`engines.local`) or ``spark`` (:mod:`engines.spark`)."""

from __future__ import annotations

from typing import Any, Protocol

from engines.cells import SweepRun
from engines.local import LocalEngine, default_jobs
from model.config import ConfigError

ENGINES = ("spark", "local")


class Engine(Protocol):
    name: str

    def run(self, tasks: list[SweepRun], label: str = "sweep") -> list[dict[str, Any]]: ...

    def close(self) -> None: ...

    def describe(self) -> str: ...


def open_engine(name: str, master: str | None = None, quiet: bool = False, jobs: int | None = None) -> Engine:
    """The engine called ``name`` (``spark`` or ``local``; Spark starts its session here), with ``jobs``
    worker processes for ``local`` (``--jobs``; default: every core).

    A bad name, ``--master`` with ``local``, or ``jobs`` with another engine or below 1 is a ConfigError
    naming the option.
    """
    if jobs is not None and jobs < 1:
        raise ConfigError("--jobs", jobs, "must be >= 1")
    if jobs is not None and name != "local":
        raise ConfigError("--jobs", jobs, "only applies to --engine local (Spark uses its master's cores)")
    if name == "local":
        if master:
            raise ConfigError("--master", master, "only applies to --engine spark")
        return LocalEngine(quiet=quiet, jobs=default_jobs() if jobs is None else jobs)
    if name == "spark":
        from engines.spark import DEFAULT_MASTER, SparkEngine, SparkUnavailable  # pyspark when it starts

        try:
            return SparkEngine(master or DEFAULT_MASTER, quiet=quiet)
        except SparkUnavailable as e:
            raise ConfigError("--engine", name, f"{e} (or run with --engine local)") from e
    raise ConfigError("--engine", name, f"must be one of {', '.join(ENGINES)}")
