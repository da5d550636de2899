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

Hudi's own Spark writers (``engines/hudi_spark/run.py``) leave a run directory of a second kind,
:data:`HUDI_WRITERS` (:func:`files_of` with ``kind``), through the same writer and loader:
``verdict.json`` is :class:`WritersVerdict` (Hudi's outcome as ``engines/hudi_spark/check.py`` judges it,
the jars' checksums), ``metrics.json`` :class:`WritersMetrics` (wall time, JVMs, the proxy's actions),
``history.jsonl`` one :class:`WriterEvent` per line (appended by the writer processes themselves),
``timeline.json`` the instants Hudi left (:class:`TimelineInstant`), ``fsview.json`` each release's file
slices, ``isolation-records.jsonl`` the records view of its commits Elle checked (one :class:`TxnLine` per
line), and ``scenario.toml``, ``table/``; beside them the files of the run's own processes
(:data:`WRITERS_PER_PROCESS`: each writer process's ``plan-<process>.json``, a :class:`SparkWriterPlan`,
and its ``writer-<process>.log``) and the fault proxy's ``proxy.log`` (text, one line a request; the proxy
writes it as it goes, ``RunWriter.log_path`` gives it the path); after the run (:data:`AFTER_RUN`,
``RunWriter.after_run``) ``reads.json`` (:class:`ReadsFile`: Hudi's Spark reader's time-travel and
incremental reads of the finished table, ``engines/hudi_spark/reads.py``) with that process's ``reads.log``,
and ``differential.json``
(:class:`WritersDifferential`: the model's judgement, ``hcc differential writers``).  Its own types, not
:class:`VerdictFile` with extra fields: its history is several processes' appends, with no event index for
a violation to cite, and its verdict is Hudi's behaviour judged, not a model run's verdict against a seed
and an expectation; folding it into ``VerdictFile`` would leave every field of one kind optional in the
other and need a second reading of the folders written before.

The declarations are TypedDicts (``typing_extensions``': pydantic reads them on Python 3.11) and
dataclasses.  :func:`check` validates a parsed file against one through ``model/typed.py`` (pydantic;
:class:`FormatError` names the field and says what is wrong) and :func:`json_schema` is pydantic's JSON
Schema of them, published as ``docs/run-directory.schema.json`` (``python3 -m model.run_format`` prints
it; a test keeps the published file equal to it).  A TypedDict is closed (a field it does not declare is
an error) unless listed in :data:`OPEN`; optional fields are ``NotRequired``.
"""

from __future__ import annotations

import json
import re
import typing
from collections.abc import Mapping
from dataclasses import dataclass
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
TIMELINE = "timeline.json"  # a hudi-writers run: the instants of .hoodie/timeline
FSVIEW = "fsview.json"  # a hudi-writers run: the file slices of Hudi's releases' readers
# added to a finished hudi-writers run (RunWriter.after_run): Hudi's Spark reader's time-travel and
# incremental reads, that reading process's log, and the model's judgement (hcc differential writers)
READS = "reads.json"
READS_LOG = "reads.log"
DIFFERENTIAL = "differential.json"
# a hudi-writers run's files written by others than the harness as the run goes: the fault proxy's log (one
# text line a request: ``ms node method 'key' action status``, backends/fault_proxy.py), and each writer
# process's plan (read by that process) and log (its stdout and stderr), named after the process
PROXY_LOG = "proxy.log"
PLAN = "plan-{writer}.json"
WRITER_LOG = "writer-{writer}.log"
# a transactions view's history as ``hcc check-history`` reads it, in either kind of run directory
# (reports/isolation.py, hudi_spark/txns.py): one TxnLine a line
ISOLATION_VIEW = "isolation-{view}.jsonl"
ISOLATION_RECORDS = ISOLATION_VIEW.format(view="records")

# the kinds of run directory: the harness's worlds', and Hudi's own Spark writers' (engines/hudi_spark/run.py)
HARNESS = "harness"
HUDI_WRITERS = "hudi-writers"
KINDS = (HARNESS, HUDI_WRITERS)


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


# ---- Hudi's own Spark writers' run directory (kind HUDI_WRITERS) --------------------------------------


class WriterEvent(TypedDict):
    """One line of a hudi-writers run's ``history.jsonl``, appended by a writer process
    (``engines/hudi_spark/writer.py``: ``start``, ``ready``, each write's and the final read's ``invoke``
    and ``ok`` or ``fail``) or by the fault injector (``engines/hudi_spark/launch.py``: ``info``, the
    fault in ``f``).  ``time``: epoch seconds.  Open: the writer processes may record more."""

    process: str
    type: Literal["start", "ready", "invoke", "ok", "fail", "info"]
    time: float
    f: NotRequired[str]  # write, read; an info line's fault (pause, resume, kill, spared)
    value: NotRequired[Any]  # a write's batch, the read's rows, a fault's request
    pid: NotRequired[int]  # start
    jvm_start_s: NotRequired[float]  # ready
    elapsed_s: NotRequired[float]  # a write's ok or fail
    # a write's ok: requested_completed; a fail: the completed instant carrying its marks, or null
    instant: NotRequired[str | None]
    result: NotRequired[str]  # an ok clustering or compaction Hudi planned nothing for
    error: NotRequired[dict[str, Any]]  # fail: Hudi's exception (class, message, root_class, ...)
    ended: NotRequired[str]  # a kill or spared line of a ``then`` fault


class PlanRow(TypedDict):
    """A row a writer's batch writes (or, in a delete, the key and partition it deletes)."""

    key: str
    partition: str
    value: int


class WriterBatch(TypedDict):
    """One batch of a writer's plan, one Hudi commit (``engines/hudi_spark/writer.py``: ``load_plan`` and
    ``main``): its operation, rows, what it waits for first, a clustering's partition, whether a compaction
    executes the pending plans, and the model's account of it (``engines/hudi_spark/nbcc_plans.py``; the
    writer does not read it)."""

    op: Literal["upsert", "insert", "delete", "insert_overwrite", "delete_partition", "cluster", "compact"]
    rows: NotRequired[list[PlanRow]]  # none (or empty) for a cluster or compact batch
    after_commits: NotRequired[int]  # wait for this many completed commits
    after_instants: NotRequired[dict[str, int]]  # "<action>.<state>" -> instants in that state or later
    after_info: NotRequired[dict[str, str]]  # wait for the history's info line with these fields
    partition: NotRequired[str]  # cluster
    pending: NotRequired[bool]  # compact: execute the pending plans instead of scheduling one
    model: NotRequired[dict[str, Any]]


class SparkWriterPlan(TypedDict):
    """``plan-<writer>.json`` of a hudi-writers run: what one writer process runs (``python -m
    engines.hudi_spark.writer PLAN``, which reads these fields): its name, the table and the proxy's endpoint
    it writes through, the classpath, the history it appends to, Hudi's options, its batches; a writer
    restarted after a kill starts at ``first_batch``."""

    writer: str
    base_path: str  # s3a://bucket/<prefix>/table
    table: str
    endpoint: str
    classpath: list[str]
    history: str
    batches: list[WriterBatch]
    access_key: NotRequired[str]
    secret_key: NotRequired[str]
    region: NotRequired[str]
    protocol: NotRequired[Literal["occ", "nbcc"]]  # runs before the field: occ
    options: NotRequired[dict[str, str]]  # Hudi's write options over the protocol's
    hadoop: NotRequired[dict[str, str]]  # s3a / Hadoop settings
    read_at_end: NotRequired[bool]
    read_metadata_table: NotRequired[bool]  # the final read lists through the metadata table
    first_batch: NotRequired[int]
    buckets: NotRequired[int]  # nbcc: the simple bucket index's buckets (4 when absent)
    driver_memory: NotRequired[str]
    s3a_attempts: NotRequired[int]


class TxnLine(TypedDict):
    """One line of ``isolation-records.jsonl``: a transaction's invoke or completion
    (``model.checkers.txn_from_runs.RunView.jsonl``) with its micro-operations ``[f, key, value]`` (``r``:
    a read, its value None in an invoke; ``w``: a write; a value is a write's number, a tombstone
    ``del:<n>``, or None)."""

    process: str
    type: Literal["invoke", "ok", "fail", "info"]
    value: list[tuple[Literal["r", "w"], str, int | str | None]]
    time: float


class TimelineInstant(TypedDict):
    """One file of ``.hoodie/timeline`` (``timeline.json``: ``engines/hudi_spark/run.timeline_of``)."""

    requested: str
    completed: str  # "" unless completed
    state: Literal["requested", "inflight", "completed"]
    file: str
    action: str


# "class" and "not" are Python keywords: these are declared in TypedDict's functional form
WriterFailure = TypedDict("WriterFailure", {"process": str, "batch": int, "class": str,
                                            "root_class": str | None})
WriterFailure.__doc__ = "A write Hudi failed: its writer, batch, exception class and the chain's root class."
WriterConflict = TypedDict("WriterConflict", {"process": str, "batch": int, "class": str, "message": str})
WriterConflict.__doc__ = "A write Hudi aborted with HoodieWriteConflictException (its message cut at 300)."


class WritersFinding(TypedDict):
    """An anomaly (fails the run) or a note of ``engines/hudi_spark/check.py``: ``kind`` and the facts of
    that kind (key, partition, value, instant, ...).  Open: each kind has its own facts."""

    kind: str


WritersIsolation = TypedDict("WritersIsolation", {
    "view": str, "valid": bool | str, "about": NotRequired[str], "anomalies": NotRequired[list[str]],
    "not": NotRequired[list[str]],  # the consistency models the anomalies rule out
    "transactions": NotRequired[int], "notes": NotRequired[list[str]], "error": NotRequired[str]})
WritersIsolation.__doc__ = ("Elle's check of the run's commits (``engines/hudi_spark/txns.isolation``); "
                            "``error`` (and ``valid`` ``unknown``) when the table could not be read.")


class WritersVerdict(TypedDict):
    """``verdict.json`` of a hudi-writers run: what ran (world ``hudi``, the release and its jars' sha256,
    the protocol, table type, workload, backend) and Hudi's outcome (``engines/hudi_spark/check.check_run``:
    ``valid`` when no anomaly)."""

    world: Literal["hudi"]
    protocol: ProtocolName
    workload: NotRequired[str]  # runs before the field: none
    version: str
    real: str  # "Hudi <version> (real)"
    table_type: Literal["COPY_ON_WRITE", "MERGE_ON_READ"]
    backend: str
    jars: dict[str, str]  # coordinate -> sha256
    lock_client: str
    valid: bool
    commits: int
    aborted: int
    replacecommits: NotRequired[int]
    rejected: NotRequired[list[WriterFailure]]
    conflicts: list[WriterConflict]
    failures: list[WriterFailure]
    anomalies: list[WritersFinding]
    notes: list[WritersFinding]
    # the final snapshot read's rows: key, partition, value, commit time, file name (None: no read)
    final_read: list[tuple[str, str, int, str, str]] | None
    file_slices: NotRequired[dict[str, dict[str, Any]]]  # per release: per partition read and hidden
    isolation: NotRequired[WritersIsolation]


class WritersMetrics(TypedDict):
    """``metrics.json`` of a hudi-writers run: seconds, each writer process's exit code (None: killed at
    the timeout) and peak memory (MB), each JVM's start, the commits' times, the proxy's actions."""

    wall_s: float
    exit_codes: dict[str, int | None]
    peak_rss_mb: dict[str, int]
    jvm_start_s: dict[str, float]
    commit_s_mean: float | None
    commit_s_median: float | None
    commit_s_max: float | None
    proxy_actions: NotRequired[dict[str, int]]  # runs before the field: none


@dataclass(frozen=True)
class ReadPoint:
    """One read of a finished table (``engines/hudi_spark/reads.py``): ``as_of`` (``at``) or ``incremental``
    (``(start, end]``), each time a 17-digit completion time; ``instant`` is the completed instant (request
    time) the point is taken at."""

    id: str
    kind: Literal["as_of", "incremental"]
    instant: str
    at: str | None = None
    start: str | None = None
    end: str | None = None


# "class" is a Python keyword: declared in TypedDict's functional form
JavaError = TypedDict("JavaError", {
    "class": str, "message": str, "root_class": NotRequired[str], "root_message": NotRequired[str],
    "chain": NotRequired[str],  # the classes from the outermost to the root, " <- " between them
    "root_stack": NotRequired[list[str]]})  # the root cause's first frames
JavaError.__doc__ = ("Hudi's exception behind a Py4J error (``engines.hudi_spark.writer.java_error``): the "
                     "outermost class and message, and the root cause's when the JVM's exception was "
                     "reached.")


class ReadAnswer(TypedDict):
    """Hudi's answer at a read point: its rows ``[key, partition, value, _hoodie_commit_time]``, sorted, or
    its refusal."""

    rows: NotRequired[list[tuple[str, str, int, str]]]
    error: NotRequired[JavaError]


class ReadsFile(TypedDict):
    """``reads.json``: Hudi's Spark reader on the finished table at each read point, in one Spark session
    after the writers ended (``engines/hudi_spark/reads.py``), listing as the run's final read did
    (``metadata_table``); the answers by point id; the session's seconds."""

    points: list[ReadPoint]
    answers: dict[str, ReadAnswer]
    metadata_table: bool
    seconds: float


class JudgedAttempt(TypedDict):
    """A write attempt as the model judged it (``differential.json``); open: an OCC attempt says Hudi's and
    the model's outcome and conflicts (``analyses.writers_differential.Attempt``), an NBCC deltacommit its
    outcome (``analyses/nbcc_writers_differential.py``)."""

    process: str
    batch: int


class WritersDifference(TypedDict):
    """A difference between Hudi's run and the model: its ``kind`` and the fidelity row it contradicts;
    open: each kind has its own facts (the attempt, the rows only one side read, the read point, ...)."""

    kind: str
    fidelity: str


class ReadComparison(TypedDict):
    """One read point compared: Hudi's row count (or its exception's class), the model's, hudi-rs's."""

    point: str
    kind: Literal["as_of", "incremental"]
    outcome: Literal["agree", "declared", "differs"]
    hudi: int | str | None
    model: int
    hudi_rs: NotRequired[int | str]  # hudi-rs's row count or error (not installed: none)
    hudi_rs_agrees: NotRequired[bool]


class DeclaredRead(TypedDict):
    """A read point where Hudi's reader and the model's differ by a declared behaviour, and which."""

    point: str
    why: str


class WritersDifferential(TypedDict):
    """``differential.json``: the model's judgement of a hudi-writers run (``hcc differential writers``,
    ``analyses/nbcc_writers_differential.judge_run``): each attempt, the differences (each naming the
    fidelity row it contradicts) and notes, the final rows by Hudi's reader, the model's and hudi-rs, and
    the time-travel and incremental reads of ``reads.json`` compared.  The fields judgements made before
    them lack (2026-11-28/29: hudi-rs, the notes, the reads) are optional."""

    agree: bool
    attempts: list[JudgedAttempt]
    differences: list[WritersDifference]
    hudi_rows: list[list[Any]] | None  # None: no writer read after the last write ended
    model_rows: list[list[Any]]
    notes: NotRequired[list[str]]
    hudi_rs: NotRequired[str]  # what hudi-rs read (or why not)
    hudi_rs_rows: NotRequired[list[list[Any]] | None]
    hudi_rs_reads_as: NotRequired[str]  # nbcc: hudi-rs's rows are the model's under this release's rule
    hidden: NotRequired[dict[str, list[str]]]  # nbcc: the file groups each release's reader hides
    reads: NotRequired[list[ReadComparison]]
    read_differences: NotRequired[list[WritersDifference]]
    read_declared: NotRequired[list[DeclaredRead]]
    read_notes: NotRequired[list[str]]
    reads_seconds: NotRequired[float | None]


# what a hudi-writers run directory holds beside scenario.toml, history.jsonl and table/; reads.json and
# differential.json are added after the run (WRITERS_AFTER_RUN)
WRITERS_FILES: Mapping[str, Any] = {VERDICT: WritersVerdict, METRICS: WritersMetrics,
                                    TIMELINE: list[TimelineInstant], FSVIEW: dict[str, dict[str, Any]],
                                    READS: ReadsFile, DIFFERENTIAL: WritersDifferential}
# the files a finished run directory may be given after its run (RunWriter.after_run), by kind
AFTER_RUN: Mapping[str, frozenset[str]] = {HARNESS: frozenset(),
                                           HUDI_WRITERS: frozenset({READS, READS_LOG, DIFFERENTIAL})}
# a hudi-writers run's JSON-lines files written whole, each line's type (history.jsonl: appended by the
# writer processes, WriterEvent)
WRITERS_LINES: Mapping[str, Any] = {ISOLATION_RECORDS: TxnLine}
# its files one per writer process, by name pattern: a JSON file's type, or None for a text file
WRITERS_PER_PROCESS: Mapping[str, Any] = {PLAN: SparkWriterPlan, WRITER_LOG: None}
# its text files (logs), beside the writer processes' own
WRITERS_TEXT = frozenset({PROXY_LOG, READS_LOG})
_PROCESS = re.compile(r"[A-Za-z0-9_.-]+")  # a writer process's name (w1, w1-2 for its restart)


def process_file(pattern: str, process: str) -> str:
    """The name of writer process ``process``'s file of ``pattern`` (:data:`WRITERS_PER_PROCESS`:
    ``plan-<process>.json``, ``writer-<process>.log``); ValueError naming a process name that is not one."""
    if pattern not in WRITERS_PER_PROCESS:
        raise ValueError(f"pattern={pattern!r}: one of {', '.join(WRITERS_PER_PROCESS)}")
    if not _PROCESS.fullmatch(process) or process.strip(".") == "":
        raise ValueError(f"writer={process!r}: a writer process's name is letters, digits, '_', '.' and '-'")
    return pattern.format(writer=process)


def _named_regex(pattern: str, field: str, name: re.Pattern[str]) -> str:
    """A regex of the file names ``pattern`` makes: ``field`` (``{writer}``, ``{view}``) replaced by a
    ``name`` (a group)."""
    head, _, tail = pattern.partition(field)
    return f"{re.escape(head)}({name.pattern}){re.escape(tail)}"


_VIEW = re.compile(r"[a-z0-9-]+")  # a transactions view's name (records, file-groups)
_VIEW_FILE = re.compile(f"^{_named_regex(ISOLATION_VIEW, '{view}', _VIEW)}$")


def isolation_view_file(view: str) -> str:
    """The file holding transactions view ``view``'s history (``isolation-<view>.jsonl``)."""
    if not _VIEW.fullmatch(view):
        raise ValueError(f"view = {view!r}: a view's name is lower-case letters, digits and '-'")
    return ISOLATION_VIEW.format(view=view)


def line_type(kind: str, name: str) -> Any | None:
    """The type of each line of ``name``, a JSON-lines file written whole into a run directory of ``kind``
    (a transactions view's history: :class:`TxnLine`, in either kind); None when ``name`` is not one."""
    if _VIEW_FILE.match(name):
        return TxnLine
    return WRITERS_LINES.get(name) if kind == HUDI_WRITERS else None


def _process_regex(pattern: str) -> str:
    return f"^{_named_regex(pattern, '{writer}', _PROCESS)}$"


def per_process(name: str) -> tuple[str, str] | None:
    """The pattern of :data:`WRITERS_PER_PROCESS` and the writer process a file name is of, None when it is
    no writer process's file."""
    for pattern in WRITERS_PER_PROCESS:
        m = re.match(_process_regex(pattern), name)
        if m and m[1].strip("."):
            return pattern, m[1]
    return None


def writers_json_type(name: str) -> Any | None:
    """The declared type of a hudi-writers run's JSON file ``name`` (:data:`WRITERS_FILES`, a writer's
    plan), None when it is not one."""
    if name in WRITERS_FILES:
        return WRITERS_FILES[name]
    of = per_process(name)
    return None if of is None else WRITERS_PER_PROCESS[of[0]]


# TypedDicts that allow undeclared fields
OPEN: frozenset[type] = frozenset(map(typed.open_fields, (ExploreFile, OracleFile, IsolationFile,
                                                          WriterEvent, WritersFinding, JudgedAttempt,
                                                          WritersDifference)))


def files_of(protocol: str, kind: str = HARNESS) -> dict[str, Any]:
    """Every JSON file a run directory of ``protocol`` (and ``kind``, :data:`KINDS`) may hold, with its
    declared type."""
    if kind == HUDI_WRITERS:
        return dict(WRITERS_FILES)
    if kind != HARNESS:
        raise ValueError(f"kind={kind!r}: one of {', '.join(KINDS)}")
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
    content (``history.jsonl``: the list of its lines).  One of two kinds (:data:`KINDS`): the harness's,
    whose ``metrics.json`` and protocol files depend on ``verdict.json``'s ``protocol`` (``if``/``then``),
    or Hudi's own Spark writers' (:data:`WRITERS_FILES`); each file's schema is pydantic's."""
    declared: dict[str, Any] = {VERDICT: VerdictFile, HISTORY: EventLine, "header": HistoryHeader}
    declared |= {f"value {process} {f}": tp for (process, f), tp in EVENT_VALUES.items()}
    declared |= {f"{name} {f}": tp for name in NAMES for f, tp in files_of(name).items() if f != VERDICT}
    declared |= {f"{HUDI_WRITERS} {f}": tp for f, tp in WRITERS_FILES.items()}
    declared[f"{HUDI_WRITERS} {HISTORY}"] = WriterEvent
    declared |= {f"{HUDI_WRITERS} {f}": tp for f, tp in WRITERS_LINES.items()}
    declared |= {f"{HUDI_WRITERS} {f}": tp for f, tp in WRITERS_PER_PROCESS.items() if tp is not None}
    schemas, defs = typed.json_schema(declared)
    by_protocol = [{
        "if": {"properties": {VERDICT: {"properties": {"protocol": {"const": name}}}}},
        "then": {"properties": {f: schemas[f"{name} {f}"] for f in files_of(name) if f != VERDICT},
                 "required": sorted([METRICS, *PROTOCOLS[name].files]
                                    + ([HISTORY] if PROTOCOLS[name].history else []))},
    } for name in NAMES]
    harness = {"title": HARNESS, "description": "a run of the harness's worlds (engines/rundir.py)",
               "properties": {VERDICT: schemas[VERDICT],
                              HISTORY: {"type": "array", "items": schemas[HISTORY]}},
               "patternProperties": {_VIEW_FILE.pattern: {
                   "type": "array", "items": schemas[f"{HUDI_WRITERS} {ISOLATION_RECORDS}"]}},
               "required": [SCENARIO], "allOf": by_protocol}
    writers = {"title": HUDI_WRITERS,
               "description": "a run of Hudi's own Spark writers (engines/hudi_spark/run.py)",
               "properties": {**{f: schemas[f"{HUDI_WRITERS} {f}"] for f in WRITERS_FILES},
                              **{f: {"type": "array", "items": schemas[f"{HUDI_WRITERS} {f}"]}
                                 for f in (HISTORY, *WRITERS_LINES)},
                              READS_LOG: {"type": "string", "description": "the reads' Spark process's log"},
                              PROXY_LOG: {"type": "string",
                                          "description": "the fault proxy's log, one line a request: ms node "
                                                         "method 'key' action status"}},
               "patternProperties": {
                   _process_regex(PLAN): schemas[f"{HUDI_WRITERS} {PLAN}"],
                   _process_regex(WRITER_LOG): {"type": "string",
                                                "description": "a writer process's stdout and stderr"}},
               # scenario.toml: none in runs before 2026-11-29 03:15 (adcf61a)
               "required": sorted([METRICS, HISTORY, TIMELINE])}
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "hcc run directory",
        "description": "A run directory of hudi-cc-harness read as one JSON object: each file's name -> "
                       "its parsed content (a .jsonl file: the list of its lines; scenario.toml and the "
                       "logs: their text). Generated from model/run_format.py (python3 -m model.run_format).",
        "type": "object",
        "properties": {SCENARIO: {"type": "string", "description": "the resolved scenario, TOML"}},
        "required": [VERDICT],
        "oneOf": [harness, writers],
        "$defs": dict(sorted(defs.items())),
    }


def schema_text() -> str:
    """The published schema's text (``docs/run-directory.schema.json``)."""
    return json.dumps(json_schema(), indent=2, sort_keys=True) + "\n"


if __name__ == "__main__":
    print(schema_text(), end="")
