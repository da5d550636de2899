"""What every protocol gives the harness: the :class:`Plugin` contract and the records it deals in.

A protocol (``lock``, ``occ``, ``nbcc``, ``explore``) is one object implementing :class:`Plugin`,
registered by name in :data:`model.protocols.PROTOCOLS`.  Every world and layer asks it for what it
needs: the run-directory writer (``engines/rundir.py``) for its configuration's head, its run, checks,
metrics and extra files; the Spark and real-world tasks for its writers (:meth:`Plugin.workload`);
the gate for its metric table; the second oracle for the read points of its Hudi table.  The layers
above ``model/`` keep their own parts in tables keyed by the same names (the catalogue's loaders,
the reports' builders, the Spark worlds); ``tests/test_protocols.py`` checks they all name the same
protocols.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, NamedTuple, Protocol, TypeVar

from model.checkers.txn_from_runs import RunView
from model.checkers.verdict import Verdict
from model.config import Scenario
from model.oracle.points import ReadPoint
from model.runtime.history import Event
from model.runtime.kernel import Workload

Sink = Callable[[Event], None]

C = TypeVar("C")  # a protocol's configuration: the scenario object of its catalogue entries
C_in = TypeVar("C_in", contravariant=True)  # the same, where it is only taken
W_in = TypeVar("W_in", contravariant=True)  # what its writers are built from in a real world (a Spark task
#                                             ships it)


# Where a run ran: the simulated world, an exhaustive search, real threads against a real server, a
# simulated run replayed against a real server, Spark tasks as writers against a launched server.
World = Literal["sim", "search", "real", "replay", "spark", "hudi"]


@dataclass(frozen=True)
class EntryHead:
    """What every catalogue entry has, whatever its protocol."""

    name: str
    seed: int
    expect: str
    description: str
    world: World = "sim"  # "sim", "search" (explore), or "spark": Spark tasks are the writers


@dataclass(frozen=True)
class ModelRun:
    """A finished run of a protocol's model: its history, the final store (key -> body) with the table
    under ``table_prefix``, and the JSON files the protocol adds to the run directory (name -> content).

    An exhaustive search has no history and no store (``table_prefix`` None: no table), only its files
    (``explore.json``)."""

    events: list[Event]
    objects: Mapping[str, bytes] = field(default_factory=dict, hash=False)
    table_prefix: str | None = None
    files: Mapping[str, Any] = field(default_factory=dict, hash=False)

    @property
    def base(self) -> str:
        """The store key of the table's root folder (the prefix without its ``/``)."""
        if self.table_prefix is None:
            raise ValueError("this run left no table")
        return self.table_prefix.rstrip("/")


@dataclass(frozen=True)
class Transactions:
    """A protocol whose operations are transactions (Elle's check of its runs, ``reports/isolation.py``):
    the views its history maps to, and one paragraph on what they can and cannot show."""

    views: Callable[[list[Event]], list[RunView]]
    sees: str


class GateMetric(NamedTuple):
    """How the gate compares one metric with the baseline (the defaults ``hcc gate --update`` writes)."""

    worse: str  # "higher", "lower", or "either" for a count that must not move
    rel: float  # tolerance relative to the baseline
    abs: float  # absolute tolerance


class HudiTable(Protocol[C_in]):
    """A protocol whose run leaves a Hudi table: the points where the second oracle reads it back
    (``engines/oracle.py``) and how a row hudi-rs returns becomes a value."""

    def points(self, config: C_in, run: ModelRun) -> list[ReadPoint]:
        """Every read point of the run (snapshot, time travel, incremental)."""
        ...

    def reading(self, rows: Iterable[Mapping[str, Any]]) -> dict[str, str]:
        """Key -> value of the rows hudi-rs read at one point."""
        ...


class Plugin(Protocol[C, W_in]):
    """One protocol, as every layer of the harness sees it.

    ``C`` is the configuration of its catalogue entries, ``W_in`` what its writers are built from in a
    real world (the Spark contention tasks ship it)."""

    @property
    def name(self) -> str:
        """The protocol's name in the catalogue (``protocol = ...``) and in ``verdict.json``."""
        ...

    @property
    def config_type(self) -> type[C]:
        """The type of its entries' configuration."""
        ...

    @property
    def history(self) -> bool:
        """Whether a run records a history (an exhaustive search does not)."""
        ...

    @property
    def files(self) -> Mapping[str, type]:
        """The extra JSON files its run directory holds (``ModelRun.files``), each with its declared type
        (``model/run_format.py`` validates them)."""
        ...

    @property
    def metrics_type(self) -> type:
        """The declared type of its ``metrics.json`` (a TypedDict)."""
        ...

    @property
    def gate_metrics(self) -> Mapping[str, GateMetric]:
        """The metrics the gate compares (flattened names, as in ``metrics.json``)."""
        ...

    @property
    def hudi_table(self) -> HudiTable[C] | None:
        """Where the run's table is a Hudi table: its read points for the second oracle."""
        ...

    @property
    def transactions(self) -> Transactions | None:
        """Where its operations are transactions: the views Elle's checker reads of a run."""
        ...

    @property
    def audit_trail(self) -> bool:
        """Whether the run's table holds Hudi's lock audit trail (``hcc check-audit`` reads it)."""
        ...

    def head(self, config: C) -> EntryHead:
        """Name, seed, expected verdict, description and world of an entry."""
        ...

    def models(self, config: C) -> str:
        """One line: whose behaviour a run of ``config`` is (``hcc list``, reports, ``verdict.json``)."""
        ...

    def run(self, config: C, seed: int, sink: Sink | None) -> ModelRun:
        """Run ``config`` in the model (the simulated world, or the exhaustive search)."""
        ...

    def check(self, config: C, run: ModelRun) -> Verdict:
        """The verdict of a run."""
        ...

    def metrics(self, config: C, run: ModelRun) -> Mapping[str, Any]:
        """The run's metrics (``metrics.json``; typed per protocol in ``model/run_format.py``)."""
        ...

    def workload(self, run_config: W_in, scenario: Scenario) -> Workload:
        """The writers of ``run_config`` on the nodes of ``scenario``, for any world's kernel."""
        ...


def objects_of(store: Any) -> dict[str, bytes]:
    """Key -> body of every object of a simulated world's store."""
    return {k: o.body for k, o in store.objects.items()}

