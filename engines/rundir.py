"""Run directories: the history (streamed as it happens), verdicts, metrics, the resolved scenario, the table.

:class:`RunWriter` is the one writer of a run directory, for every world: each file is checked against
``model/run_format.py`` before it is written (:class:`RunFileError` names the file, the field and the
value).  The history is appended and flushed line by line, so a run that crashes keeps
every event written so far; every other file is written atomically (a
temporary file, then a rename), so a reader never sees half of one.  A
simulated lock run also leaves its final store under ``table/`` (the lock file,
the register and Hudi's lock audit trail in ``table/.hoodie/.locks/audit/``),
and its verdict says, per violation, whether Hudi's audit validator
(``hcc check-audit`` on that trail) would have seen it.  A run stopped
by SIGINT or SIGTERM keeps its history and gets a ``verdict.json`` saying
``"verdict": "interrupted"`` and the signal (:meth:`RunWriter.marks_interrupted`).

Runs are never overwritten.  Without ``--out`` each run gets a folder of its own in the
store, ``out/runs/<name>/seed<N>-<UTC time>`` (:func:`new_run_dir`), and the links
``out/runs/<name>/latest`` and ``out/runs/latest`` point at the newest run
(:func:`link_latest`), as in Jepsen's store.  A used ``--out`` folder is refused unless
``--force`` (:func:`claim_out`).
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import re
import shutil
import tempfile
import threading
import time
import tomllib
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from backends.hudi_audit import AuditFormatError, read_local, validate, violation_owners, visible_to_audit
from backends.secrets import redact_url
from engines.lifecycle import STOP_SIGNALS, signal_name
from engines.oracle import write_run_table
from model.checkers.verdict import Verdict
from model.config import ConfigError, Scenario
from model.run_format import (
    AFTER_RUN,
    EVENT_VALUES,
    HARNESS,
    HISTORY,
    HUDI_WRITERS,
    METRICS,
    PLAN,
    PROXY_LOG,
    SCENARIO,
    TABLE,
    VERDICT,
    WRITER_LOG,
    AuditSummary,
    EventLine,
    FormatError,
    RunHead,
    RunVerdict,
    VerdictFile,
    ViolationEntry,
    check,
    files_of,
    line_type,
    per_process,
    process_file,
    verdict_file,
    writers_json_type,
)
from model.runtime.history import Event
from reports.isolation import anomaly_counts, write_isolation
from reports.load import RunDirError, history_line_error, load_finished, load_writers_history
from reports.report import write_report
from scenarios.catalogue import Entry

STORE = Path("out") / "runs"
SWEEPS = Path("out") / "sweeps"  # hcc sweep's store: out/sweeps/<grid>/<UTC time>
LATEST = "latest"
RUN_MARKERS = (HISTORY, VERDICT, "sweep.json")  # a folder holding one of these is a run (or sweep) directory


def _file_mode() -> int:
    """The mode ``open()`` gives a new file here (0o666 less the umask); mkstemp's own is 0o600."""
    umask = os.umask(0)
    os.umask(umask)
    return 0o666 & ~umask


def write_atomic(path: Path, text: str | bytes) -> None:
    """Write ``text`` (or bytes) to ``path`` through a temporary file in the same folder and a rename; the
    file gets the mode of any new file (readable by the team sharing the folder, as the umask allows)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        os.fchmod(fd, _file_mode())
        with os.fdopen(fd, "wb" if isinstance(text, bytes) else "w") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def write_json(path: Path, data: Any) -> None:
    """Atomically write pretty, key-sorted JSON."""
    write_atomic(path, json.dumps(data, indent=2, sort_keys=True) + "\n")


def write_table(out: Path, objects: Mapping[str, bytes], prefix: str = "") -> Path:
    """Write a run's final store (key -> body) under ``out/table``, keys relative to ``prefix``.

    Keys outside ``prefix`` are skipped; a key that would leave the folder raises ValueError.
    Returns the folder (the table's files as a reader such as hudi-rs or ``hcc check-audit`` sees them).
    """
    root = out / TABLE
    for key, body in sorted(objects.items()):
        if not key.startswith(prefix):
            continue
        rel = Path(key[len(prefix):].lstrip("/"))
        if rel.is_absolute() or ".." in rel.parts or not rel.parts:
            raise ValueError(f"store key {key!r} does not name a file under the table folder")
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(body)
    root.mkdir(parents=True, exist_ok=True)
    return root


@dataclass(frozen=True)
class RunResult:
    """A finished run of any catalogue entry: its verdict and metrics, and where its directory is."""

    entry: Entry
    seed: int
    out: Path
    verdict: Verdict
    metrics: dict[str, Any]
    # Hudi's audit validator on the run's own audit trail (None: the run left no audit files).
    audit: AuditSummary | None = None
    audit_visible: tuple[bool, ...] = ()  # per violation: would the audit validator have seen it?
    # occ and nbcc: the encoding of table/ and the second oracle's summary (engines/oracle.py)
    table: dict[str, Any] = dataclasses.field(default_factory=dict)

    @property
    def scenario(self) -> Any:
        """The entry's own scenario object (``Scenario`` for a lock run)."""
        return self.entry.config

    @property
    def matches_expectation(self) -> bool:
        return self.verdict.verdict == self.entry.expect

    def head(self) -> RunHead:
        """The run's head: the entry, its protocol and world, the seed, whose behaviour it is."""
        e = self.entry
        return {"scenario": e.name, "protocol": e.protocol, "world": e.world, "seed": self.seed,
                "expect": e.expect, "models": e.models}

    def verdict_file(self) -> VerdictFile:
        """``verdict.json`` (violations carry ``audit_visible`` when there is a trail)."""
        out = verdict_file(self.head(), with_audit(self.verdict, self.audit_visible),
                           matches=self.matches_expectation, out=str(self.out))
        if self.entry.plugin.audit_trail:
            out["audit"] = self.audit
        if "table_encoding" in self.table:
            out["table_encoding"] = self.table["table_encoding"]
            out["oracle"] = self.table["oracle"]
        return out

    def summary(self) -> dict[str, Any]:
        """The object ``hcc run --json`` prints: ``verdict.json`` and the metrics."""
        return {**self.verdict_file(), "metrics": self.metrics}


def with_audit(verdict: Verdict, visible: tuple[bool, ...] = ()) -> RunVerdict:
    """``verdict`` as ``verdict.json`` holds it; its violations carry ``audit_visible`` when ``visible``
    says, per violation, whether Hudi's audit validator would have seen it."""
    violations: list[ViolationEntry] = [
        {"kind": v.kind, "message": v.message, "events": list(v.events), "details": dict(v.details)}
        for v in verdict.violations]
    for v, seen in zip(violations, visible, strict=False):
        v["audit_visible"] = seen
    findings: list[ViolationEntry] = [
        {"kind": f.kind, "message": f.message, "events": list(f.events), "details": dict(f.details)}
        for f in verdict.findings]
    found: RunVerdict = {"verdict": "violation" if verdict.violations else "ok", "violations": violations,
                    "findings": findings}
    if verdict.counts:
        found["violation_counts"] = dict(verdict.counts)
    return found


def slug(text: str) -> str:
    """``text`` as one safe folder name (a backend URL too: user info dropped first)."""
    return re.sub(r"[^A-Za-z0-9._-]+", "_", redact_url(text)).strip("._") or "run"


def new_run_dir(name: str, seed: int | None = None, store: Path | None = None) -> Path:
    """A new folder ``<store>/<name>/seed<N>-<UTC time>`` (``-2``, ``-3``, ... when one exists already)."""
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    base = f"seed{seed}-{stamp}" if seed is not None else stamp
    return fresh_dir((store or STORE) / slug(name) / base)


def fresh_dir(path: Path) -> Path:
    """Create and return ``path``, or ``path-2``, ``path-3``, ... when it exists (no two runs share one)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    for n in range(1, 10_000):
        d = path if n == 1 else path.with_name(f"{path.name}-{n}")
        try:
            d.mkdir()
            return d
        except FileExistsError:
            continue
    raise RuntimeError(f"no free folder {path}-N")


def holds_runs(path: Path) -> bool:
    """True when ``path`` is a run directory, or a folder whose entries are all run directories."""
    if any((path / m).exists() for m in RUN_MARKERS):
        return True
    entries = [p for p in path.iterdir() if p.name != LATEST]
    return bool(entries) and all(p.is_dir() and any((p / m).exists() for m in RUN_MARKERS) for p in entries)


def claim_out(out: Path, force: bool = False) -> Path:
    """The ``--out`` folder of a run: new or empty; a used one is refused (ConfigError, exit 2).

    Nothing is created here: the run creates the folder when it writes its first file.

    With ``force`` a used folder is deleted first, but only when it holds runs (a run
    directory, or folders of them: ``hcc run --all --out DIR``), never another folder.
    """
    if out.exists() and not out.is_dir():
        raise ConfigError("--out", str(out), "is a file, not a folder")
    if out.is_dir() and any(out.iterdir()):
        if not force:
            raise ConfigError("--out", str(out), "exists and is not empty (an earlier run?); nothing "
                                                 "was written: choose a new folder, or pass --force to "
                                                 "replace it")
        if not holds_runs(out):
            raise ConfigError("--out", str(out), f"holds no run ({' or '.join(RUN_MARKERS)} missing here and "
                                                 "one level down); --force only replaces runs")
        shutil.rmtree(out)
    return out


def prepare_out(out: str | Path | None, *, force: bool = False, name: str, seed: int | None = None) -> Path:
    """``--out`` claimed (:func:`claim_out`), or a new folder in the store (:func:`new_run_dir`)."""
    return claim_out(Path(out), force) if out else new_run_dir(name, seed)


def _in_store(run_dir: Path) -> bool:
    return run_dir.resolve().parent.parent in (STORE.resolve(), SWEEPS.resolve())


def _symlink(link: Path, target: str) -> None:
    tmp = link.with_name(f".{link.name}.{os.getpid()}.{threading.get_ident()}.tmp")
    tmp.unlink(missing_ok=True)
    os.symlink(target, tmp)
    os.replace(tmp, link)  # atomic: a reader sees the old link or the new one


def link_latest(run_dir: Path) -> None:
    """Point ``<store>/<name>/latest`` and ``<store>/latest`` at ``run_dir`` (a run of a store only:
    ``out/runs`` or ``out/sweeps``)."""
    if not _in_store(run_dir):
        return
    _symlink(run_dir.parent / LATEST, run_dir.name)
    _symlink(run_dir.parent.parent / LATEST, f"{run_dir.parent.name}/{run_dir.name}")


def count_events(history: Path) -> int:
    """Complete lines of a history file (0 when it is missing)."""
    try:
        with open(history, "rb") as f:
            return sum(1 for line in f if line.endswith(b"\n"))
    except OSError:
        return 0


class RunFileError(ValueError):
    """A file a writer gave the run directory that breaks the declared format (``model/run_format.py``):
    nothing of it is written.  Names the directory, the file, the field and its value."""

    def __init__(self, out: Path, name: str, error: FormatError | str, where: str = "") -> None:
        at = f"{where}: " if where else ""
        super().__init__(f"run directory {out}: {name}: {at}{error} (not written: it breaks the run "
                         "directory's format, model/run_format.py)")
        self.file = name
        self.field = error.field if isinstance(error, FormatError) else ""
        self.value = error.value if isinstance(error, FormatError) else None


class RunWriter:
    """The one writer of a run directory, for every world (simulated, explored, real threads, replay,
    Spark, hudi): every file goes through it and is checked against its declaration in
    ``model/run_format.py`` before it is written (:class:`RunFileError` otherwise).

    ``history.jsonl`` is appended and flushed line by line as the run goes (:meth:`history`): a run that
    crashes keeps every event written so far, and its lines are read by ``reports/load.py``; each event
    is checked as it comes (the line an ``EventLine``, then as the loader checks each line it reads,
    :func:`reports.load.history_line_error`: its index the next one, the first a ``run-start`` with its
    header, a value the format declares as declared).  Every other file is written atomically (a
    temporary file, then a rename): ``verdict.json`` and ``metrics.json`` (:meth:`finish`), the
    protocol's JSON files, ``oracle.json`` and ``isolation.json`` as the format types them,
    ``scenario.toml`` as TOML, the store under ``table/`` (:meth:`table`) and the report.

    ``kind`` ``hudi-writers``: the run directory of Hudi's own Spark writers (``engines/hudi_spark/run.py``),
    whose files the format declares apart (``model.run_format.WRITERS_FILES``, ``line_type``,
    ``WRITERS_PER_PROCESS``): its processes append to the history themselves (:meth:`shared_history`), each
    writer process reads its plan (:meth:`writer_plan`), and they and the fault proxy write their own logs
    where :meth:`log_path` says.

    A finished run directory is given the files its format adds after the run (``model.run_format.AFTER_RUN``:
    a hudi-writers run's ``reads.json``, ``reads.log`` and ``differential.json``) by a writer opened on it
    with :meth:`after_run`, which writes those and nothing else."""

    def __init__(self, out: Path, protocol: str, kind: str = HARNESS) -> None:
        self.out = out
        self.protocol = protocol
        self.kind = kind
        self.declared = files_of(protocol, kind)  # JSON file -> its declared type
        self.only: frozenset[str] | None = None  # after_run: the only files it may write
        self._lines = 0  # history lines written
        self._shapes: set[tuple[Any, ...]] = set()  # event shapes already checked against EventLine
        self._lock = threading.Lock()  # a real world's threads share the history

    @classmethod
    def after_run(cls, out: Path | str) -> RunWriter:
        """A writer that adds to the finished run directory ``out`` the files its format adds after the run
        (``model.run_format.AFTER_RUN`` of its kind), each checked as every file is; any other file is
        refused (ValueError).  The folder is read first (:func:`reports.load.load_finished`: its kind and
        protocol, RunDirError when it is not a finished run directory)."""
        out = Path(out)
        kind, protocol = load_finished(out)
        writer = cls(out, protocol, kind)
        writer.only = AFTER_RUN[kind]
        return writer

    def _name(self, path: Path | str) -> str:
        """A file of this run directory by its name in it (``path`` relative to the folder, or in it); a
        writer opened :meth:`after_run` names only the files added after the run."""
        name = self._named(path)
        if self.only is not None and name not in self.only:
            allowed = ", ".join(sorted(self.only)) or "none"
            raise ValueError(f"{name}: the finished run directory {self.out} ({self.kind}) is given only the "
                             f"files added after its run ({allowed})")
        return name

    def _named(self, path: Path | str) -> str:
        p = Path(path)
        if p.is_absolute() or (self.out.parts and p.parts[:len(self.out.parts)] == self.out.parts):
            try:
                p = p.relative_to(self.out)
            except ValueError:
                raise ValueError(f"{path} is not in the run directory {self.out}") from None
        if p.is_absolute() or ".." in p.parts or not p.parts:
            raise ValueError(f"{path!s} does not name a file in the run directory {self.out}")
        return p.as_posix()

    def _check(self, name: str, value: Any, declared: Any, where: str = "") -> None:
        try:
            check(value, declared)
        except FormatError as e:
            raise RunFileError(self.out, name, e, where) from None

    def _json_type(self, name: str) -> Any | None:
        """The declared type of JSON file ``name`` of this run directory (None: not a declared JSON file)."""
        return writers_json_type(name) if self.kind == HUDI_WRITERS else self.declared.get(name)

    def write_json(self, path: Path | str, data: Any) -> None:
        """Write pretty, key-sorted JSON atomically, checked first when the format declares the file."""
        name = self._name(path)
        declared = self._json_type(name)
        if declared is not None:
            self._check(name, json.loads(json.dumps(data)), declared)  # as a reader will see it
        write_json(self.out / name, data)

    def write_text(self, path: Path | str, text: str | bytes) -> None:
        """Write ``text`` (or bytes) atomically: ``scenario.toml`` checked as TOML, a declared JSON file
        against its type; the history only through :meth:`history`."""
        name = self._name(path)
        if name == HISTORY:
            raise ValueError(f"{HISTORY} is appended line by line (RunWriter.history), never written whole")
        if name == SCENARIO:
            try:
                tomllib.loads(text.decode() if isinstance(text, bytes) else text)
            except (tomllib.TOMLDecodeError, UnicodeDecodeError) as e:
                raise RunFileError(self.out, name, f"not valid TOML ({e})") from None
        elif (declared := self._json_type(name)) is not None:
            try:
                value = json.loads(text)
            except ValueError as e:
                raise RunFileError(self.out, name, f"not valid JSON ({e})") from None
            self._check(name, value, declared)
        elif (each := line_type(self.kind, name)) is not None:  # JSON lines, each of the declared type
            lines = text.decode() if isinstance(text, bytes) else text
            for n, line in enumerate(lines.splitlines(), start=1):
                try:
                    value = json.loads(line)
                except ValueError as e:
                    raise RunFileError(self.out, name, f"not valid JSON ({e})", f"line {n}") from None
                self._check(name, value, each, f"line {n}")
        write_atomic(self.out / name, text)

    def writer_plan(self, process: str, plan: Mapping[str, Any]) -> Path:
        """``plan-<process>.json`` of a hudi-writers run (``model.run_format.SparkWriterPlan``, checked),
        written as the writer process ``process`` will read it; its path, for that process."""
        name = process_file(PLAN, process)
        self.write_text(name, json.dumps(plan, indent=1))
        return self.out / name

    def log_path(self, name: str) -> Path:
        """The path of a log of a hudi-writers run that its own process writes as the run goes (the fault
        proxy's ``proxy.log``, a writer process's ``writer-<process>.log``): declared as text, not checked,
        never written by this writer."""
        of = per_process(name)
        if self.kind != HUDI_WRITERS or (name != PROXY_LOG and (of is None or of[0] != WRITER_LOG)):
            raise ValueError(f"{name}: not a log a {self.kind} run's own processes write (the fault proxy's "
                             f"{PROXY_LOG}, a writer process's {WRITER_LOG})")
        return self.out / self._name(name)

    def scenario(self, text: str) -> None:
        """``scenario.toml``: the resolved scenario."""
        self.write_text(SCENARIO, text)

    def _append(self, history: Any, event: Event) -> None:
        line = event.to_json()
        with self._lock:
            n = self._lines
            # EventLine constrains its fields by type (and ``type`` by name): one check per shape decides
            shape = (event.type, type(event.index), type(event.time), type(event.node), type(event.process),
                     type(event.f), type(event.clock))
            if shape not in self._shapes:
                self._check(HISTORY, json.loads(line), EventLine, f"line {n + 1}")
                self._shapes.add(shape)
            if event.f == "run-start" or (event.process, event.f) in EVENT_VALUES:  # as a reader sees it
                event = event._replace(value=json.loads(line)["value"])
            problem = history_line_error(event, n)  # as reports/load.py checks each line it reads
            if problem:
                raise RunFileError(self.out, HISTORY, problem)
            history.write(line + "\n")
            history.flush()
            self._lines = n + 1

    @contextlib.contextmanager
    def history(self, head: RunHead | None = None) -> Iterator[Callable[[Event], None]]:
        """A sink that appends events to ``history.jsonl`` line by line, flushed (a crash keeps what was
        written), each checked first; with ``head``, a signal inside the block marks the run interrupted
        (:meth:`marks_interrupted`)."""
        with contextlib.ExitStack() as stack:
            if head is not None:
                stack.enter_context(self.marks_interrupted(head))
            self._name(HISTORY)  # not a finished run's (after_run)
            self.out.mkdir(parents=True, exist_ok=True)
            history = stack.enter_context(open(self.out / HISTORY, "w"))
            self._lines = 0
            yield lambda event: self._append(history, event)

    def shared_history(self) -> Path:
        """``history.jsonl`` of a hudi-writers run, created empty; its path, for the run's own processes to
        append to (each writer process and the fault injector append whole ``WriterEvent`` lines, each
        flushed and fsynced, so a killed run keeps what was written).  Checked line by line as the loader
        reads it (:func:`reports.load.load_writers_history`), at the latest in :meth:`finish`."""
        if self.kind != HUDI_WRITERS:
            raise ValueError(f"a {self.kind} run's {HISTORY} is appended by RunWriter.history, not shared")
        write_atomic(self.out / self._name(HISTORY), "")
        return self.out / HISTORY

    def history_of(self, events: Iterable[Event]) -> None:
        """``history.jsonl`` of a run whose history came back whole (the Spark tasks' merged histories),
        appended line by line as :meth:`history` does."""
        with self.history() as sink:
            for event in events:
                sink(event)

    def table(self, objects: Mapping[str, bytes], prefix: str = "") -> Path:
        """The store the run left under ``table/`` (:func:`write_table`); the folder."""
        self._name(TABLE)  # not a finished run's (after_run)
        return write_table(self.out, objects, prefix)

    def keep_lock_table(self, objects: dict[str, bytes], base_path: str,
                        verdict: Verdict) -> tuple[RunVerdict, AuditSummary | None]:
        """A real-storage lock run's ending: the objects it left under its table (``base_path``) go to
        ``table/``, and Hudi's audit validator runs on them.  Returns the verdict as ``verdict.json`` holds
        it, its violations with ``audit_visible``, and the audit summary (None when the run left no
        objects)."""
        table = self.table(objects, prefix=base_path + "/")
        audit, seen = audit_of_run(table, verdict) if objects else (None, ())
        return with_audit(verdict, seen), audit

    def interrupted(self, exc: BaseException, head: RunHead) -> None:
        """``verdict.json`` of a run stopped by a signal: verdict ``interrupted``, the signal, the events
        kept."""
        verdict = verdict_file(head, {"verdict": "interrupted", "violations": [], "findings": []},
                               matches=False, out=str(self.out))
        verdict["signal"] = signal_name(exc)
        verdict["events"] = count_events(self.out / HISTORY)
        self.write_json(VERDICT, verdict)

    @contextlib.contextmanager
    def marks_interrupted(self, head: RunHead) -> Iterator[None]:
        """On SIGINT / SIGTERM inside the block: mark the run interrupted (history kept as written),
        re-raise."""
        try:
            yield
        except STOP_SIGNALS as e:
            self.interrupted(e, head)
            link_latest(self.out)
            raise

    def finish(self, verdict: Mapping[str, Any], metrics: Mapping[str, Any],
               report: bool = True) -> None:
        """The last step of every run directory of every world: ``metrics.json`` and ``verdict.json``
        (checked first: a writer that breaks the format is a bug, a RunFileError here rather than a run
        directory no reader accepts; a shared history is checked too), the report when asked, and a
        harness run linked as its scenario's latest."""
        self._name(VERDICT)  # not a finished run's (after_run)
        if verdict["protocol"] != self.protocol:
            raise RunFileError(self.out, VERDICT, f"field protocol = {verdict['protocol']!r}: this run "
                                                  f"directory is of protocol {self.protocol!r}")
        self._check(METRICS, json.loads(json.dumps(metrics)), self.declared[METRICS])
        self._check(VERDICT, json.loads(json.dumps(verdict)), self.declared[VERDICT])
        if self.kind == HUDI_WRITERS:
            try:
                load_writers_history(self.out)
            except RunDirError as e:
                raise RunFileError(self.out, HISTORY, e.reason.removeprefix(f"{HISTORY} ")) from None
        write_json(self.out / METRICS, metrics)
        write_json(self.out / VERDICT, verdict)
        if report:
            write_report(self.out, self.write_text, required=False)
        if self.kind == HARNESS:  # the store's latest is what hcc report and hcc gate read
            link_latest(self.out)


def execute(scenario: Scenario, seed: int | None = None, out: Path | None = None,
            report: bool = True) -> RunResult:
    """Run a simulated lock scenario (:func:`execute_entry`)."""
    return execute_entry(Entry("lock", scenario), seed, out, report)


def execute_entry(entry: Entry, seed: int | None = None, out: Path | None = None,
                  report: bool = True) -> RunResult:
    """Run any catalogue entry in its model (the simulated world, or the exhaustive search) and write its
    run directory: the history (streamed), the resolved scenario, the protocol's own files, the table the
    run left, verdict and metrics, and (``report``) its report.

    This is the one writer of simulated and explored run directories: every protocol's differences
    are answers of its registered object (``entry.plugin``, ``model/protocols``)."""
    plugin = entry.plugin
    seed = entry.seed if seed is None else seed
    out = out or new_run_dir(entry.name, seed)
    out.mkdir(parents=True, exist_ok=True)
    writer = RunWriter(out, entry.protocol)
    writer.scenario(entry.to_toml())
    head: RunHead = {"scenario": entry.name, "protocol": entry.protocol, "world": entry.world,
                     "seed": seed, "expect": entry.expect, "models": entry.models}
    if plugin.history:
        with writer.history(head) as sink:
            run = plugin.run(entry.config, seed, sink)
    else:
        with writer.marks_interrupted(head):
            run = plugin.run(entry.config, seed, None)
    verdict = plugin.check(entry.config, run)
    metrics = dict(plugin.metrics(entry.config, run))
    for name, content in run.files.items():  # plan.json, explore.json
        writer.write_json(name, content)
    audit: AuditSummary | None = None
    seen: tuple[bool, ...] = ()
    table_info: dict[str, Any] = {}
    if run.table_prefix is not None:
        shutil.rmtree(out / TABLE, ignore_errors=True)  # a rerun into the same folder leaves no stale files
        # a Hudi table (occ, nbcc) in Hudi's encoding, read back by hudi-rs (engines/oracle.py); else as is
        table, table_info = write_run_table(out, plugin.hudi_table, entry.config, run, write_table,
                                            writer.write_json)
        if plugin.audit_trail:
            audit, seen = audit_of_run(table, verdict)
    isolation = write_isolation(entry.protocol, run.events, writer.write_text)  # occ, nbcc
    if isolation is not None:
        metrics["isolation"] = anomaly_counts(isolation)
    result = RunResult(entry, seed, out, verdict, metrics, audit, seen, table_info)
    writer.finish(result.verdict_file(), metrics, report)
    return result


def audit_of_run(table: Path, verdict: Verdict) -> tuple[AuditSummary | None, tuple[bool, ...]]:
    """Hudi's audit validator on a run's own ``table/`` and, per violation, whether it would have seen it."""
    try:
        result = validate(read_local(table))
    except AuditFormatError:
        return None, ()
    seen = tuple(visible_to_audit(result, v.details) for v in verdict.violations)
    real = {violation_owners(v.details) for v in verdict.violations}
    false_alarms = sum(1 for pair in result.overlapping_owner_pairs() if pair not in real)
    summary: AuditSummary = {
        "validator": result.result, "windows": len(result.windows), "overlaps": len(result.overlaps),
        "without_end": len(result.unfinished), "violations_visible": sum(seen),
        "violations_invisible": len(seen) - sum(seen), "overlaps_without_violation": false_alarms}
    return summary, seen
