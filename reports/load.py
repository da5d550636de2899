"""Read a run directory and check it against its declared format (``model/run_format.py``).

Every world writes one format (``engines/rundir.py``), so there is one reader: ``verdict.json`` says the
run's protocol, and the protocol (``model/protocols``) says which files it holds beside ``verdict.json``,
``metrics.json`` and ``scenario.toml`` (``history.jsonl`` unless it is an exhaustive search, ``plan.json``,
``explore.json``) and the type of each.  Anything missing, unreadable or not as declared raises
``RunDirError`` naming the directory, the file and the field, before any report file is written; so
does a run stopped by a signal (``"verdict": "interrupted"``) or one whose storage never started
(``"not-started"``).  Hudi's own Spark writers' run directories (the format's kind ``hudi-writers``) are
read by :func:`load_writers_run` and :func:`load_writers_history`, their other files (those added after
the run, ``reads.json`` and ``differential.json``; the writers' plans, the records view, the logs) by
:func:`load_writers_file` (the first writer's plan: :func:`load_writers_plan`).

:func:`find_runs` follows the store's ``latest`` links (``engines/rundir.py``): the store
``out/runs`` gives the newest run of each scenario, a scenario's folder its newest run.
"""

from __future__ import annotations

import json
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from model.protocols import PROTOCOLS
from model.run_format import (
    AFTER_RUN,
    EVENT_VALUES,
    FSVIEW,
    HARNESS,
    HISTORY,
    HUDI_WRITERS,
    ISOLATION,
    METRICS,
    ORACLE,
    PLAN,
    SCENARIO,
    TIMELINE,
    VERDICT,
    WRITERS_FILES,
    WRITERS_LINES,
    WRITERS_PER_PROCESS,
    WRITERS_TEXT,
    FormatError,
    HistoryHeader,
    IsolationFile,
    OracleFile,
    VerdictFile,
    WriterEvent,
    WritersMetrics,
    WritersVerdict,
    check,
    per_process,
)
from model.runtime.history import Event, loads

RUN_FILES = (HISTORY, VERDICT, METRICS, SCENARIO)  # a folder holding one of these is a run directory
LATEST = "latest"


class RunDirError(ValueError):
    """A run directory that is missing, incomplete or corrupted."""

    def __init__(self, path: Path, reason: str) -> None:
        super().__init__(f"run directory {path}: {reason}")
        self.path = path
        self.reason = reason


@dataclass(frozen=True)
class RunData:
    """Everything a report or the gate needs from one run directory, checked against its format."""

    path: Path
    scenario: dict[str, Any]  # the resolved scenario.toml, as parsed
    verdict: VerdictFile
    metrics: dict[str, Any]  # metrics.json: the protocol's metrics type (Plugin.metrics_type)
    events: tuple[Event, ...]  # () for an exhaustive search
    files: dict[str, Any] = field(default_factory=dict)  # the protocol's own files (plan.json, explore.json)

    @property
    def protocol(self) -> str:
        return self.verdict["protocol"]

    @property
    def name(self) -> str:
        return self.verdict["scenario"]

    @property
    def seed(self) -> int:
        return self.verdict["seed"]

    @property
    def expect(self) -> str:
        return self.verdict["expect"]

    @property
    def outcome(self) -> str:
        return self.verdict["verdict"]


def is_run_dir(path: Path) -> bool:
    """True when ``path`` holds at least one of the run files (complete or not)."""
    return path.is_dir() and any((path / f).exists() for f in RUN_FILES)


def _read_json(path: Path, name: str, declared: Any) -> Any:
    """``name`` parsed and checked against its declared type."""
    try:
        raw = json.loads((path / name).read_text())
    except ValueError as e:
        raise RunDirError(path, f"{name} is not valid JSON ({e})") from None
    try:
        check(raw, declared)
    except FormatError as e:
        raise RunDirError(path, f"{name}: {e}") from None
    return raw


def _refuse_unfinished(path: Path) -> None:
    """A run stopped by a signal, or whose storage never started, has no verdict to report or gate."""
    try:
        verdict = json.loads((path / VERDICT).read_text())
    except (OSError, ValueError):
        return  # the full read says what is wrong
    if not isinstance(verdict, dict):
        return
    if verdict.get("verdict") == "interrupted":
        raise RunDirError(path, f"the run was interrupted by {verdict.get('signal') or 'a signal'} after "
                                f"{verdict.get('events', 'some')} events: no verdict to report or gate "
                                f"(its {HISTORY} is kept)")
    if verdict.get("verdict") == "not-started":
        why = verdict.get("error") or "its storage did not start"
        raise RunDirError(path, f"the run never started ({why}): no verdict to report or gate")


def history_line_error(event: Event, n: int) -> str | None:
    """What is wrong with ``event`` as the history's event ``n`` (from 0), None when nothing: its index is
    not ``n`` (events missing or out of order), the first is not ``run-start``, or a value the format
    declares (the header, ``EVENT_VALUES``) is not as declared.  The writer checks each line with it as
    the line is appended, the loader as it is read."""
    if event.index != n:
        return f"event {n} has index {event.index} (events missing or out of order)"
    if n == 0 and event.f != "run-start":
        return f"line 1 is {event.f}, not run-start (the history's header)"
    declared = HistoryHeader if event.f == "run-start" else EVENT_VALUES.get((event.process, event.f))
    if declared is not None:
        try:
            check(event.value, declared)
        except FormatError as e:
            return f"line {n + 1}: the value of a {event.f} event: {e}"
    return None


def load_history(path: Path | str) -> list[Event]:
    """The history of a run directory, complete or not (a run that crashed keeps the lines it had written;
    a torn last line is left out), checked against its format: events in order from 0, the first a
    ``run-start`` with its header, each value the format declares as declared.  RunDirError otherwise."""
    path = Path(path)
    try:
        events = loads((path / HISTORY).read_text())
    except OSError as e:
        raise RunDirError(path, f"{HISTORY} cannot be read ({e.strerror or e})") from None
    except (ValueError, UnicodeDecodeError) as e:
        raise RunDirError(path, f"{HISTORY}: {e}") from None
    if not events:
        raise RunDirError(path, f"{HISTORY} holds no events")
    for i, ev in enumerate(events):
        problem = history_line_error(ev, i)
        if problem:
            raise RunDirError(path, f"{HISTORY}: {problem}")
    return events


def _read_history(path: Path, verdict: VerdictFile) -> list[Event]:
    """The history (:func:`load_history`), every event the verdict cites in it."""
    events = load_history(path)
    n = len(events)
    for v in verdict["violations"] + verdict["findings"]:
        bad = [i for i in v["events"] if not 0 <= i < n]
        if bad:
            raise RunDirError(path, f"{VERDICT}: {v['kind']} cites events {bad} outside the history "
                                    f"(0..{n - 1})")
    return events


def _complete(path: Path) -> None:
    """A folder holding ``verdict.json``; RunDirError saying what it is otherwise."""
    if not path.exists():
        raise RunDirError(path, "does not exist")
    if not path.is_dir():
        raise RunDirError(path, "is not a directory")
    if not (path / VERDICT).is_file():
        raise RunDirError(path, f"missing {VERDICT} (not a complete run directory)")


def run_kind(path: Path | str) -> str:
    """The kind of the run directory at ``path`` (``model.run_format.KINDS``): ``hudi-writers`` when its
    ``verdict.json`` is Hudi's Spark writers' (it says ``valid``, where the harness's says ``verdict``),
    else ``harness`` (whatever is wrong with it is the full read's to say)."""
    try:
        verdict = json.loads((Path(path) / VERDICT).read_text())
    except (OSError, ValueError):
        return HARNESS
    writers = isinstance(verdict, dict) and "valid" in verdict and "verdict" not in verdict
    return HUDI_WRITERS if writers else HARNESS


def load_run(path: Path | str) -> RunData:
    """Load one run directory of any world and protocol; ``RunDirError`` says which file is missing or
    not as declared, and which field."""
    path = Path(path)
    _complete(path)
    if run_kind(path) == HUDI_WRITERS:
        raise RunDirError(path, "a run of Hudi's own Spark writers (hudi-writers), not of a harness world: "
                                "hcc differential writers ENTRY --run DIR judges it")
    _refuse_unfinished(path)
    verdict: VerdictFile = _read_json(path, VERDICT, VerdictFile)
    plugin = PROTOCOLS[verdict["protocol"]]
    required = [SCENARIO, METRICS, *([HISTORY] if plugin.history else []), *plugin.files]
    missing = [f for f in required if not (path / f).is_file()]
    if missing:
        raise RunDirError(path, f"missing {', '.join(missing)} (not a complete run directory of a "
                                f"{verdict['protocol']} run)")
    try:
        scenario = tomllib.loads((path / SCENARIO).read_text())
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as e:
        raise RunDirError(path, f"{SCENARIO} is not valid TOML ({e})") from None
    metrics: dict[str, Any] = _read_json(path, METRICS, plugin.metrics_type)
    files = {name: _read_json(path, name, declared) for name, declared in plugin.files.items()}
    if plugin.hudi_table is not None and (path / ORACLE).is_file():
        files[ORACLE] = _read_json(path, ORACLE, OracleFile)
    if plugin.transactions is not None and (path / ISOLATION).is_file():
        files[ISOLATION] = _read_json(path, ISOLATION, IsolationFile)
    events = _read_history(path, verdict) if plugin.history else []
    return RunData(path, scenario, verdict, metrics, tuple(events), files)


@dataclass(frozen=True)
class WritersRunData:
    """A run directory of Hudi's own Spark writers (``engines/hudi_spark/run.py``), checked against its
    format (``model.run_format.WRITERS_FILES``)."""

    path: Path
    scenario: dict[str, Any]  # scenario.toml as parsed: the entry's, and the run's [hudi] table
    verdict: WritersVerdict
    metrics: WritersMetrics
    events: tuple[dict[str, Any], ...]  # history.jsonl's lines (WriterEvent), a torn one left out
    timeline: tuple[dict[str, Any], ...]  # timeline.json (TimelineInstant)
    file_slices: dict[str, Any] | None  # fsview.json; None when the run recorded none


def load_writers_history(path: Path | str) -> list[dict[str, Any]]:
    """The ``history.jsonl`` of a hudi-writers run directory, complete or not: each line a
    ``WriterEvent``; a line that is not JSON (a killed writer's torn write, which the next process's
    append may follow on the same line) is left out.  RunDirError naming the line otherwise."""
    path = Path(path)
    try:
        text = (path / HISTORY).read_text()
    except (OSError, UnicodeDecodeError) as e:
        raise RunDirError(path, f"{HISTORY} cannot be read ({e})") from None
    events = []
    for n, line in enumerate(text.splitlines(), start=1):
        try:
            event = json.loads(line)
        except ValueError:
            continue
        try:
            check(event, WriterEvent)
        except FormatError as e:
            raise RunDirError(path, f"{HISTORY} line {n}: {e}") from None
        events.append(event)
    return events


def load_writers_timeline(path: Path | str) -> list[dict[str, Any]]:
    """The ``timeline.json`` of a hudi-writers run directory, finished or not (each instant a
    ``TimelineInstant``); RunDirError naming the file and the field otherwise."""
    return list(_read_json(Path(path), TIMELINE, WRITERS_FILES[TIMELINE]))


def load_writers_run(path: Path | str) -> WritersRunData:
    """Load a run directory of Hudi's own Spark writers; ``RunDirError`` says which file is missing or not
    as declared, and which field (a run of a harness world is refused: :func:`load_run` reads it)."""
    path = Path(path)
    _complete(path)
    if run_kind(path) != HUDI_WRITERS:
        raise RunDirError(path, f"not a run of Hudi's own Spark writers (its {VERDICT} has no field valid)")
    missing = [f for f in (METRICS, HISTORY, TIMELINE) if not (path / f).is_file()]
    if missing:
        raise RunDirError(path, f"missing {', '.join(missing)} (not a complete run of Hudi's Spark writers)")
    scenario: dict[str, Any] = {}  # runs before 2026-11-29 03:15 (adcf61a) kept no scenario.toml
    if (path / SCENARIO).is_file():
        try:
            scenario = tomllib.loads((path / SCENARIO).read_text())
        except (tomllib.TOMLDecodeError, UnicodeDecodeError) as e:
            raise RunDirError(path, f"{SCENARIO} is not valid TOML ({e})") from None
    files = {name: _read_json(path, name, declared) for name, declared in WRITERS_FILES.items()
             if name not in AFTER_RUN[HUDI_WRITERS] and (name != FSVIEW or (path / name).is_file())}
    return WritersRunData(path, scenario, files[VERDICT], files[METRICS], tuple(load_writers_history(path)),
                          tuple(files[TIMELINE]), files.get(FSVIEW))


def load_writers_file(path: Path | str, name: str) -> Any | None:
    """A file of a hudi-writers run directory beyond what :func:`load_writers_run` reads, as declared
    (``model/run_format.py``) and checked: a JSON file added after the run (``reads.json``,
    ``differential.json``) or a writer process's plan (``plan-<process>.json``) parsed; a JSON-lines file
    (``isolation-records.jsonl``) as the list of its lines; a log (``proxy.log``, ``reads.log``,
    ``writer-<process>.log``) as its text.  None when the run has none (yet); RunDirError when it is not as
    declared; ValueError for a name that is none of these."""
    path = Path(path)
    of = per_process(name)
    json_type = WRITERS_FILES[name] if name in AFTER_RUN[HUDI_WRITERS] and name in WRITERS_FILES else (
        WRITERS_PER_PROCESS[of[0]] if of is not None else None)
    text = name in WRITERS_TEXT or (of is not None and json_type is None)
    if json_type is None and not text and name not in WRITERS_LINES:
        known = [*sorted(AFTER_RUN[HUDI_WRITERS] | WRITERS_TEXT | WRITERS_LINES.keys()), *WRITERS_PER_PROCESS]
        raise ValueError(f"{name} is not a file of a hudi-writers run read apart from load_writers_run "
                         f"(known: {', '.join(known)})")
    if not (path / name).is_file():
        return None
    if json_type is not None:
        return _read_json(path, name, json_type)
    try:
        content = (path / name).read_text()
    except (OSError, UnicodeDecodeError) as e:
        raise RunDirError(path, f"{name} cannot be read ({e})") from None
    if text:
        return content
    lines = []
    for n, line in enumerate(content.splitlines(), start=1):
        try:
            value = json.loads(line)
            check(value, WRITERS_LINES[name])
        except ValueError as e:  # FormatError is one
            raise RunDirError(path, f"{name} line {n}: {e}") from None
        lines.append(value)
    return lines


def load_writers_plan(path: Path | str) -> dict[str, Any]:
    """The plan of a hudi-writers run's first writer process (``plan-<process>.json``, the first by name):
    what every writer of the run shares (the table's ``base_path``, the ``classpath``, whether the final
    read listed through the metadata table).  Every plan of the run is checked: RunDirError when the run
    has none or one is not as declared."""
    path = Path(path)
    names = sorted(p.name for p in path.glob(PLAN.format(writer="*")) if per_process(p.name))
    if not names:
        raise RunDirError(path, f"holds no writer's plan ({PLAN.format(writer='<process>')}): not a run of "
                                "Hudi's own Spark writers")
    plans = [_read_json(path, name, WRITERS_PER_PROCESS[PLAN]) for name in names]
    return dict(plans[0])


def load_finished(path: Path | str) -> tuple[str, str]:
    """The kind (``model.run_format.KINDS``) and protocol of the finished run directory at ``path``, read
    by its kind's loader (:func:`load_run`, :func:`load_writers_run`); RunDirError when it is not one."""
    kind = run_kind(path)
    if kind == HUDI_WRITERS:
        return kind, load_writers_run(path).verdict["protocol"]
    return kind, load_run(path).protocol


def _children(path: Path) -> list[Path]:
    return sorted(p for p in path.iterdir() if p.name != LATEST)


def is_one_run(path: Path | str) -> bool:
    """True when ``path`` is one run: a run directory, or a scenario's folder of the store (its latest)."""
    path = Path(path)
    if is_run_dir(path):
        return True
    return path.is_dir() and is_run_dir(path / LATEST) and any(is_run_dir(p) for p in _children(path))


def find_runs(path: Path | str) -> list[Path]:
    """The run directories at ``path``.

    ``path`` itself when it is one; in a scenario's folder of the store, the run its
    ``latest`` link points at; in the store, each scenario's latest run; else the run
    directories one level down (``hcc run --all --out DIR``).
    """
    path = Path(path)
    if not path.exists():
        raise RunDirError(path, "does not exist" + (" (a broken latest link?)" if path.is_symlink() else ""))
    if is_run_dir(path):
        return [path]
    if not path.is_dir():
        raise RunDirError(path, "is not a directory")
    children = _children(path)
    runs = [p for p in children if is_run_dir(p)]
    if runs and is_run_dir(path / LATEST):
        return [(path / LATEST).resolve()]
    if not runs:
        runs = [(p / LATEST).resolve() for p in children if is_run_dir(p / LATEST)]
    if not runs:
        raise RunDirError(path, f"holds no run directory (none of {', '.join(RUN_FILES)} here or one "
                                f"level down, and no {LATEST} link)")
    return runs
