"""The run directory's format, declared once: every file a run directory holds and the type of its content.

A run of any world (simulated, explored, real threads, replay, Spark contention) leaves one directory,
written by ``engines/rundir.py`` and read by ``reports/load.py``:

=================  =========================================================================================
``verdict.json``   :class:`VerdictFile`: the run's head (scenario, protocol, world, seed, expect), verdict,
                   violations and findings, and what each world adds (audit, oracle, backend, replay, ...)
``metrics.json``   the protocol's metrics (``Plugin.metrics_type``: ``LockMetrics``, ``OccMetrics``, ...)
``history.jsonl``  one :class:`EventLine` per line (``model/runtime/history.py``); the first is
                   ``run-start``, its value the :class:`HistoryHeader`; none for an exhaustive search
``scenario.toml``  the resolved scenario (the protocol's loader reads it back)
protocol files     ``Plugin.files``: ``plan.json`` (NBCC's ``TablePlan``), ``explore.json``
                   (``ExploreFile``)
``oracle.json``    :class:`OracleFile`: the second oracle's reading of a Hudi table (OCC, NBCC)
``isolation.json`` :class:`IsolationFile`: Elle's check of the run's transactions (OCC, NBCC), beside the
                   views' histories ``isolation-VIEW.jsonl`` (``hcc check-history`` reads them)
``table/``         the store the run left; ``report.*`` its report; ``steps.jsonl`` a replay's steps
=================  =========================================================================================

The declarations are TypedDicts (``typing_extensions``': pydantic reads them on Python 3.11) and
dataclasses.  :func:`check` validates a parsed file against one through ``model/typed.py`` (pydantic;
:class:`FormatError` names the field and says what is wrong) and :func:`json_schema` is pydantic's JSON
Schema of them, published as ``docs/run-directory.schema.json`` (``python3 -m model.run_format`` prints
it; a test keeps the published file equal to it).  A TypedDict is closed (a field it does not declare is
an error) unless listed in :data:`OPEN`; optional fields are ``NotRequired``.
"""

from __future__ import annotations

import json
import typing
from collections.abc import Mapping
from typing import Annotated, Any, Literal, NotRequired

from typing_extensions import TypedDict

from model import typed
from model.protocols import NAMES, PROTOCOLS
from model.protocols.base import World
from model.protocols.explore import ExploreFile
from model.runtime.history import EVENT_TYPES
from model.typed import MISSING, OneOf

HISTORY = "history.jsonl"
VERDICT = "verdict.json"
METRICS = "metrics.json"
SCENARIO = "scenario.toml"
ORACLE = "oracle.json"
ISOLATION = "isolation.json"
STEPS = "steps.jsonl"
TABLE = "table"


ProtocolName = Annotated[str, OneOf(NAMES)]
Outcome = Literal["ok", "violation", "interrupted", "not-started"]


class ViolationEntry(TypedDict):
    """A violation or a finding: the events (history indices) that prove it."""

    kind: str
    message: str
    events: list[int]
    details: dict[str, Any]
    audit_visible: NotRequired[bool]  # lock: would Hudi's audit validator have seen it?


class AuditSummary(TypedDict):
    """Hudi's audit validator (``hcc check-audit``) on the run's own lock audit trail."""

    validator: str
    windows: int
    overlaps: int
    without_end: int
    violations_visible: int
    violations_invisible: int
    overlaps_without_violation: int


class TableEncoding(TypedDict):
    """What ``table/`` is encoded in: ``hudi`` (Parquet, Hudi log files, real write stats) or ``model``."""

    encoding: Literal["hudi", "model"]
    note: NotRequired[str]
    encoded: NotRequired[dict[str, int]]


class OracleSummary(TypedDict):
    """What ``verdict.json`` keeps of the second oracle (``oracle.json`` has it all)."""

    status: Literal["done", "error", "skipped"]
    reason: NotRequired[str]
    hudi_rs_error: NotRequired[str | None]
    points: NotRequired[int]
    points_agreeing: NotRequired[int]
    points_differing: NotRequired[int]
    outcomes: NotRequired[dict[str, int]]
    files_read: NotRequired[int]
    files_refused: NotRequired[dict[str, str]]
    files_refused_by_model: NotRequired[dict[str, str]]
    files_skipped_silently_by_hudi_rs: NotRequired[list[str]]
    errors: NotRequired[int]


class HudiInfo(TypedDict):
    """A run of the ``hudi`` world: the Hudi release whose jars ran, their pinned sha256, the time scale,
    and each node's JVMs (how many it started, the peak resident memory seen)."""

    version: str
    jars: dict[str, str]
    time_scale: int
    jvms: dict[str, dict[str, float]]


class RunHead(TypedDict):
    """What a run directory says of its run before it has a verdict (a signal keeps just this)."""

    scenario: str
    protocol: ProtocolName
    world: World
    seed: int
    expect: str
    models: str  # whose behaviour the run is (Hudi release, specification), in one line
    backend: NotRequired[str]  # real storage: the server (its URL without user info)
    writers: NotRequired[int]  # Spark contention: tasks
    duration_ms: NotRequired[int]  # Spark contention: how long the writers ran
    workload: NotRequired[str]  # Spark contention: the protocol whose writers ran


class RunVerdict(TypedDict):
    """A run's verdict with the violations and findings that decide it."""

    verdict: Outcome
    violations: list[ViolationEntry]
    findings: list[ViolationEntry]
    # nbcc: violations found per kind, of which ``violations`` keeps the first few of each kind
    violation_counts: NotRequired[dict[str, int]]


class VerdictFile(RunHead):
    """``verdict.json``."""

    verdict: Outcome
    matches_expectation: bool
    violations: list[ViolationEntry]
    findings: list[ViolationEntry]
    violation_counts: NotRequired[dict[str, int]]  # nbcc: all found per kind (violations: examples)
    out: str
    # a run stopped by a signal (verdict interrupted), or whose storage never started (not-started)
    signal: NotRequired[str | None]
    events: NotRequired[int]  # events its history kept
    error: NotRequired[str | None]
    # lock: Hudi's audit validator on the run's table/ (None: the run left no audit trail)
    audit: NotRequired[AuditSummary | None]
    # occ, nbcc: table/ in Hudi's encoding, read back by hudi-rs
    table_encoding: NotRequired[TableEncoding]
    oracle: NotRequired[OracleSummary]
    # hcc realworld
    proxy: NotRequired[dict[str, int]]  # what the fault proxy did, by action
    hudi: NotRequired[HudiInfo]  # the hudi world: Hudi's own provider ran
    timings: NotRequired[dict[str, float]]  # seconds of each part of the command
    # hcc replay: the simulated run replayed step by step against a real backend
    run_dir: NotRequired[str]
    steps: NotRequired[int]
    agreed: NotRequired[int]
    first_disagreement: NotRequired[dict[str, Any] | None]
    original_verdict: NotRequired[str | None]
    same_verdict: NotRequired[bool]
    version_notes: NotRequired[int]
    schedule_divergence: NotRequired[int | None]


def verdict_file(head: RunHead, found: RunVerdict, *, matches: bool, out: str) -> VerdictFile:
    """``verdict.json`` of a run: its head, its verdict, whether that is the expected one, its folder; a
    world adds its own fields to the result."""
    verdict = typing.cast(VerdictFile, dict(head))  # a head is where every verdict.json starts
    verdict["verdict"] = found["verdict"]
    verdict["violations"] = found["violations"]
    verdict["findings"] = found["findings"]
    if "violation_counts" in found:
        verdict["violation_counts"] = found["violation_counts"]
    verdict["matches_expectation"] = matches
    verdict["out"] = out
    return verdict


class EventLine(TypedDict):
    """One line of ``history.jsonl`` (``model.runtime.history.Event``)."""

    index: int
    time: int  # true time, ms since the run started
    node: str
    process: str
    type: Annotated[str, OneOf(EVENT_TYPES)]
    f: str
    value: Any
    clock: int | None  # the node's own clock (None for the harness's events)


class HistoryHeader(TypedDict):
    """The value of a history's first event, ``run-start`` (the real world adds where it ran)."""

    scenario: str
    seed: int
    world: NotRequired[str]
    nodes: NotRequired[list[str]]
    backend: NotRequired[str]


class LockFileValue(TypedDict):
    """The value of a store ``lock-file`` event: the lock file as a write left it."""

    owner: str
    expired: bool
    valid_until: int
    version: NotRequired[str | None]
    # real storage (backends/realworld.py): recorded from the client's view of a successful write, with
    # the version it replaced (None for a create): the chain model/checkers/store_order.py orders by;
    # in the hudi world the JVM's writes are recorded by the fault proxy that forwarded them ("proxy")
    observed: NotRequired[Literal["client", "proxy"]]
    replaces: NotRequired[str | None]


# Event values the format declares, by (process, f): what the reports read of them.
EVENT_VALUES: Mapping[tuple[str, str], type] = {("store", "lock-file"): LockFileValue}


class OracleFile(TypedDict):
    """``oracle.json``: the second oracle's comparison (``engines/oracle.py``); open: more may follow."""

    status: Literal["done", "error", "skipped"]
    reason: NotRequired[str]
    hudi_rs_error: NotRequired[str | None]
    outcomes: NotRequired[dict[str, int]]
    comparisons: NotRequired[list[dict[str, Any]]]
    errors: NotRequired[list[dict[str, Any]]]
    files_refused: NotRequired[dict[str, str]]
    files_refused_by_model: NotRequired[dict[str, str]]
    files_skipped_silently_by_hudi_rs: NotRequired[list[str]]
    export: NotRequired[dict[str, Any]]


class IsolationFile(TypedDict):
    """``isolation.json``: Elle's check of the run's transactions (``reports/isolation.py``); open."""

    protocol: str
    recorded: bool
    claimed: list[str]
    sees: str
    views: list[dict[str, Any]]


# TypedDicts that allow undeclared fields
OPEN: frozenset[type] = frozenset(map(typed.open_fields, (ExploreFile, OracleFile, IsolationFile)))


def files_of(protocol: str) -> dict[str, Any]:
    """Every JSON file a run directory of ``protocol`` may hold, with its declared type."""
    plugin = PROTOCOLS[protocol]
    out: dict[str, Any] = {VERDICT: VerdictFile, METRICS: plugin.metrics_type, **plugin.files}
    if plugin.hudi_table is not None:
        out[ORACLE] = OracleFile
    if plugin.transactions is not None:
        out[ISOLATION] = IsolationFile
    return out


# ---- validation (model/typed.py: pydantic) -------------------------------------------------------


class FormatError(ValueError):
    """A value that does not match its declaration: ``field`` is its dotted path ("" for the whole)."""

    def __init__(self, field: str, value: Any, reason: str) -> None:
        shown = "" if value is MISSING else f" = {_short(value)}"
        where = f"field {field}{shown} " if field else ""
        super().__init__(f"{where}{reason}")
        self.field = field
        self.value = value
        self.reason = reason


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def check(value: Any, tp: Any, field: str = "") -> None:
    """Raise :class:`FormatError` naming the first field of ``value`` (parsed JSON) that does not match
    ``tp``."""
    try:
        typed.convert(value, tp)
    except typed.Invalid as e:
        p = e.problem
        where = p.dotted(prefix=field)
        if p.kind == "missing":
            raise FormatError(where, MISSING, "is missing") from None
        if p.kind == "unknown":
            known = ", ".join(p.known)
            raise FormatError(where, p.value, f"is not a field of {p.owner} (known: {known})") from None
        raise FormatError(where, p.value, f"is not {p.wants}") from None


# ---- JSON Schema ---------------------------------------------------------------------------------


def json_schema() -> dict[str, Any]:
    """The JSON Schema of a run directory, read as one JSON object: file name -> the file's parsed
    content (``history.jsonl``: the list of its lines).  ``metrics.json`` and the protocol's own files
    depend on ``verdict.json``'s ``protocol`` (``if``/``then``); each file's schema is pydantic's."""
    declared: dict[str, Any] = {VERDICT: VerdictFile, HISTORY: EventLine, "header": HistoryHeader}
    declared |= {f"value {process} {f}": tp for (process, f), tp in EVENT_VALUES.items()}
    declared |= {f"{name} {f}": tp for name in NAMES for f, tp in files_of(name).items() if f != VERDICT}
    schemas, defs = typed.json_schema(declared)
    by_protocol = [{
        "if": {"properties": {VERDICT: {"properties": {"protocol": {"const": name}}}}},
        "then": {"properties": {f: schemas[f"{name} {f}"] for f in files_of(name) if f != VERDICT},
                 "required": sorted([METRICS, *PROTOCOLS[name].files]
                                    + ([HISTORY] if PROTOCOLS[name].history else []))},
    } for name in NAMES]
    properties = {VERDICT: schemas[VERDICT], HISTORY: {"type": "array", "items": schemas[HISTORY]},
                  SCENARIO: {"type": "string", "description": "the resolved scenario, TOML"}}
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "hcc run directory",
        "description": "A run directory of hudi-cc-harness read as one JSON object: each file's name -> "
                       "its parsed content (history.jsonl: the list of its lines; scenario.toml: its "
                       "text). Generated from model/run_format.py (python3 -m model.run_format).",
        "type": "object",
        "properties": properties,
        "required": [VERDICT, SCENARIO],
        "allOf": by_protocol,
        "$defs": dict(sorted(defs.items())),
    }


def schema_text() -> str:
    """The published schema's text (``docs/run-directory.schema.json``)."""
    return json.dumps(json_schema(), indent=2, sort_keys=True) + "\n"


if __name__ == "__main__":
    print(schema_text(), end="")
