"""Run directories: the history (streamed as it happens), verdicts, metrics, the resolved scenario, the table.

The history is appended and flushed line by line, so a run that crashes keeps
every event written so far; every other file is written atomically (a
temporary file, then a rename), so a reader never sees half of one.  A
simulated lock run also leaves its final store under ``table/`` (the lock file,
the register and Hudi's lock audit trail in ``table/.hoodie/.locks/audit/``),
and its verdict says, per violation, whether Hudi's audit validator
(``hcc check-audit`` on that trail) would have seen it.  A run stopped
by SIGINT or SIGTERM keeps its history and gets a ``verdict.json`` saying
``"verdict": "interrupted"`` and the signal (:func:`marks_interrupted`).

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
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from backends.hudi_audit import AuditFormatError, read_local, validate, violation_owners, visible_to_audit
from backends.secrets import redact_url
from engines.explorer import explore_metrics, explore_verdict, run_explore
from engines.lifecycle import INTERRUPTS, signal_name
from engines.oracle import write_run_table
from model.checkers.verdict import Verdict
from model.config import ConfigError, Scenario
from model.history import Event
from model.workloads.plugins import PLUGINS
from reports.isolation import write_isolation
from reports.report import write_report
from scenarios.catalogue import Entry

HISTORY = "history.jsonl"
VERDICT = "verdict.json"
METRICS = "metrics.json"
SCENARIO = "scenario.toml"
EXPLORE = "explore.json"  # an explore run's search result (no history)
PLAN = "plan.json"  # an NBCC run's plan (drawn from the seed)
TABLE = "table"
STORE = Path("out") / "runs"
SWEEPS = Path("out") / "sweeps"  # hcc sweep's store: out/sweeps/<grid>/<UTC time>
LATEST = "latest"
RUN_MARKERS = (HISTORY, VERDICT, "sweep.json")  # a folder holding one of these is a run (or sweep) directory
REPORTED = ("lock", "occ", "nbcc", "explore")  # protocols whose run directories ``hcc report`` renders


def _file_mode() -> int:
    """The mode ``open()`` gives a new file here (0o666 less the umask); mkstemp's own is 0o600."""
    umask = os.umask(0)
    os.umask(umask)
    return 0o666 & ~umask


def write_atomic(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` through a temporary file in the same folder and a rename; the file
    gets the mode of any new file (readable by the team sharing the folder, as the umask allows)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        os.fchmod(fd, _file_mode())
        with os.fdopen(fd, "w") as f:
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
    audit: dict[str, Any] | None = None
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

    def summary(self) -> dict[str, Any]:
        """The object ``hcc run --json`` prints (violations carry ``audit_visible`` when there is a trail)."""
        verdict = self.verdict.to_dict()
        for v, seen in zip(verdict["violations"], self.audit_visible, strict=False):
            v["audit_visible"] = seen
        return {
            "scenario": self.entry.name,
            "protocol": self.entry.protocol,
            "models": self.entry.models,
            "seed": self.seed,
            "expect": self.entry.expect,
            "matches_expectation": self.matches_expectation,
            "out": str(self.out),
            **verdict,
            "audit": self.audit,
            **self.table,
            "metrics": self.metrics,
        }


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


def write_interrupted(out: Path, exc: BaseException, summary: Mapping[str, Any]) -> None:
    """``verdict.json`` of a run stopped by a signal: verdict ``interrupted``, the signal, the events kept."""
    write_json(out / VERDICT, {**summary, "verdict": "interrupted", "signal": signal_name(exc),
                               "matches_expectation": False, "events": count_events(out / HISTORY),
                               "violations": [], "findings": [], "out": str(out)})


@contextlib.contextmanager
def marks_interrupted(out: Path, summary: Mapping[str, Any]) -> Iterator[None]:
    """On SIGINT / SIGTERM inside the block: mark the run interrupted (history kept as written), re-raise."""
    try:
        yield
    except INTERRUPTS as e:
        write_interrupted(out, e, summary)
        link_latest(out)
        raise


def execute(scenario: Scenario, seed: int | None = None, out: Path | None = None,
            report: bool = True) -> RunResult:
    """Run a simulated lock scenario (:func:`execute_entry`)."""
    return execute_entry(Entry("lock", scenario), seed, out, report)


@contextlib.contextmanager
def history_sink(out: Path, marker: Mapping[str, Any]) -> Iterator[Callable[[Event], None]]:
    """A sink that streams events to ``out/history.jsonl`` line by line (a crash keeps what was written);
    a signal inside the block marks the run interrupted (:func:`marks_interrupted`)."""
    with marks_interrupted(out, marker), open(out / HISTORY, "w") as history:

        def sink(event: Event) -> None:
            history.write(event.to_json() + "\n")
            history.flush()

        yield sink


def execute_entry(entry: Entry, seed: int | None = None, out: Path | None = None,
                  report: bool = True) -> RunResult:
    """Run any catalogue entry in simulation and write its run directory: the history (streamed),
    the resolved scenario, the table the run left, verdict and metrics, and (``report``) its report.

    This is the one writer of simulated run directories, for every protocol."""
    seed = entry.seed if seed is None else seed
    out = out or new_run_dir(entry.name, seed)
    out.mkdir(parents=True, exist_ok=True)
    write_atomic(out / SCENARIO, entry.to_toml())
    audit: dict[str, Any] | None = None
    seen: tuple[bool, ...] = ()
    table_info: dict[str, Any] = {}
    if entry.protocol == "explore":
        found = run_explore(entry.config.settings)
        write_json(out / EXPLORE, found)
        verdict, metrics = explore_verdict(found), explore_metrics(found)
    else:
        plugin = PLUGINS[entry.protocol]
        with history_sink(out, {"scenario": entry.name, "protocol": entry.protocol, "seed": seed,
                                "expect": entry.expect}) as sink:
            sim = plugin.simulate(entry.config, seed, sink)
        verdict = plugin.check(entry.config, sim)
        metrics = plugin.metrics(entry.config, sim)
        shutil.rmtree(out / TABLE, ignore_errors=True)  # a rerun into the same folder leaves no stale files
        # occ, nbcc: table/ in Hudi's encoding, read back by hudi-rs (engines/oracle.py); others as stored
        table, table_info = write_run_table(out, entry.protocol, entry.config, sim, write_table, write_json)
        if entry.protocol == "lock":
            audit, seen = audit_of_run(table, verdict)
        if entry.protocol == "nbcc":
            write_json(out / PLAN, dataclasses.asdict(entry.config.plan(seed)))
        write_isolation(out, entry.protocol, sim.events, write_atomic)  # occ, nbcc: isolation.json
    result = RunResult(entry, seed, out, verdict, metrics, audit, seen, table_info)
    finish_run(out, result.summary(), report and entry.protocol in REPORTED)
    return result


def finish_run(out: Path, summary: Mapping[str, Any], report: bool = True) -> None:
    """Write ``metrics.json`` and ``verdict.json`` (the summary without its metrics), the report when
    asked, and link the run as the latest of its scenario: the last step of every run directory."""
    write_json(out / METRICS, summary.get("metrics") or {})
    write_json(out / VERDICT, {k: v for k, v in summary.items() if k != "metrics"})
    if report:
        write_report(out, write_atomic, required=False)
    link_latest(out)


def keep_lock_table(out: Path, objects: dict[str, bytes], base_path: str,
                    verdict: Verdict) -> tuple[dict[str, Any], dict[str, Any] | None]:
    """A real-storage lock run's ending: the objects it left under its table (``base_path``) go to
    ``out/table/``, and Hudi's audit validator runs on them.  Returns the verdict as a dict whose
    violations carry ``audit_visible``, and the audit summary (None when the run left no objects)."""
    table = write_table(out, objects, prefix=base_path + "/")
    audit, seen = audit_of_run(table, verdict) if objects else (None, ())
    found = verdict.to_dict()
    for v, visible in zip(found["violations"], seen, strict=False):
        v["audit_visible"] = visible
    return found, audit


def audit_of_run(table: Path, verdict: Verdict) -> tuple[dict[str, Any] | None, tuple[bool, ...]]:
    """Hudi's audit validator on a run's own ``table/`` and, per violation, whether it would have seen it."""
    try:
        result = validate(read_local(table))
    except AuditFormatError:
        return None, ()
    seen = tuple(visible_to_audit(result, v.details) for v in verdict.violations)
    real = {violation_owners(v.details) for v in verdict.violations}
    false_alarms = sum(1 for pair in result.overlapping_owner_pairs() if pair not in real)
    summary = {"validator": result.result, "windows": len(result.windows), "overlaps": len(result.overlaps),
               "without_end": len(result.unfinished), "violations_visible": sum(seen),
               "violations_invisible": len(seen) - sum(seen), "overlaps_without_violation": false_alarms}
    return summary, seen
