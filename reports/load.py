"""Read and validate run directories (history, verdict, metrics, scenario) for reports and the gate.

A run directory is what ``hcc run`` writes: ``history.jsonl``, ``verdict.json``,
``metrics.json`` and ``scenario.toml``.  Anything missing or unreadable raises
``RunDirError`` naming the directory, the file and what is wrong, before any
report file is written; so does a run stopped by a signal (``"verdict": "interrupted"``).

:func:`find_runs` follows the store's ``latest`` links (``engines/rundir.py``): the store
``out/runs`` gives the newest run of each scenario, a scenario's folder its newest run.
"""

from __future__ import annotations

import json
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from model.history import Event, loads

HISTORY = "history.jsonl"
VERDICT = "verdict.json"
METRICS = "metrics.json"
SCENARIO = "scenario.toml"
RUN_FILES = (HISTORY, VERDICT, METRICS, SCENARIO)
LATEST = "latest"


class RunDirError(ValueError):
    """A run directory that is missing, incomplete or corrupted."""

    def __init__(self, path: Path, reason: str) -> None:
        super().__init__(f"run directory {path}: {reason}")
        self.path = path
        self.reason = reason


@dataclass(frozen=True)
class RunData:
    """Everything a report or the gate needs from one run directory."""

    path: Path
    scenario: dict[str, Any]  # the resolved scenario.toml, as parsed
    verdict: dict[str, Any]  # verdict.json
    metrics: dict[str, Any]  # metrics.json
    events: tuple[Event, ...]

    @property
    def name(self) -> str:
        return str(self.scenario.get("name", self.path.name))

    @property
    def seed(self) -> int:
        return int(self.verdict.get("seed", self.scenario.get("seed", 0)))

    @property
    def expect(self) -> str:
        return str(self.scenario.get("expect", "ok"))

    @property
    def outcome(self) -> str:
        return str(self.verdict["verdict"])


def is_run_dir(path: Path) -> bool:
    """True when ``path`` holds at least one of the run files (complete or not)."""
    return path.is_dir() and any((path / f).exists() for f in RUN_FILES)


def _read_json(path: Path, name: str, required: tuple[str, ...]) -> dict[str, Any]:
    try:
        raw = json.loads((path / name).read_text())
    except ValueError as e:
        raise RunDirError(path, f"{name} is not valid JSON ({e})") from None
    if not isinstance(raw, dict):
        raise RunDirError(path, f"{name} is not a JSON object")
    for key in required:
        if key not in raw:
            raise RunDirError(path, f"{name} has no field {key!r}")
    return raw


def _lock_file_value(v: Any) -> bool:
    return (isinstance(v, dict) and isinstance(v.get("owner"), str) and isinstance(v.get("expired"), bool)
            and isinstance(v.get("valid_until"), int) and not isinstance(v.get("valid_until"), bool))


def _refuse_interrupted(path: Path, verdict: dict[str, Any]) -> None:
    if verdict["verdict"] == "interrupted":
        raise RunDirError(path, f"the run was interrupted by {verdict.get('signal') or 'a signal'} after "
                                f"{verdict.get('events', '?')} events: no verdict to report or gate "
                                f"(its {HISTORY} is kept)")


def load_run(path: Path | str) -> RunData:
    """Load one run directory; ``RunDirError`` says which file is missing or corrupted and why."""
    path = Path(path)
    if not path.exists():
        raise RunDirError(path, "does not exist")
    if not path.is_dir():
        raise RunDirError(path, "is not a directory")
    if (path / VERDICT).is_file():
        _refuse_interrupted(path, _read_json(path, VERDICT, ("verdict",)))
    missing = [f for f in RUN_FILES if not (path / f).is_file()]
    if missing:
        raise RunDirError(path, f"missing {', '.join(missing)} (not a complete run of 'hcc run')")
    try:
        scenario = tomllib.loads((path / SCENARIO).read_text())
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as e:
        raise RunDirError(path, f"{SCENARIO} is not valid TOML ({e})") from None
    verdict = _read_json(path, VERDICT, ("verdict", "violations", "findings"))
    if verdict["verdict"] not in ("ok", "violation"):
        raise RunDirError(path, f"{VERDICT}: field verdict = {verdict['verdict']!r} is not ok or violation")
    for field in ("violations", "findings"):
        if not isinstance(verdict[field], list) or any(
                not isinstance(v, dict) or not {"kind", "message", "events"} <= v.keys()
                or not isinstance(v["kind"], str) or not isinstance(v["message"], str)
                or not isinstance(v["events"], list) for v in verdict[field]):
            raise RunDirError(path, f"{VERDICT}: field {field} is not a list of violations "
                                    "(kind and message: text, events: a list)")
    seed = verdict.get("seed", scenario.get("seed", 0))
    if not isinstance(seed, int) or isinstance(seed, bool):
        raise RunDirError(path, f"{VERDICT}: field seed = {seed!r} is not an integer")
    for field in ("name", "expect"):
        if not isinstance(scenario.get(field, ""), str):
            raise RunDirError(path, f"{SCENARIO}: field {field} = {scenario[field]!r} is not a string")
    metrics = _read_json(path, METRICS, ("acquisitions", "writers"))
    try:
        events = loads((path / HISTORY).read_text())
    except (ValueError, UnicodeDecodeError) as e:
        raise RunDirError(path, f"{HISTORY}: {e}") from None
    if not events:
        raise RunDirError(path, f"{HISTORY} holds no events")
    for i, e in enumerate(events):
        if e.index != i:
            raise RunDirError(path, f"{HISTORY}: event {i} has index {e.index} "
                                    "(events missing or out of order)")
    for i, e in enumerate(events):
        if e.process == "store" and e.f == "lock-file" and not _lock_file_value(e.value):
            raise RunDirError(path, f"{HISTORY}: line {i + 1}: a lock-file event needs owner (text), expired "
                                    f"(true/false) and valid_until (integer), got {e.value!r}")
    n = len(events)
    for v in verdict["violations"] + verdict["findings"]:
        bad = [i for i in v["events"] if not isinstance(i, int) or not 0 <= i < n]
        if bad:
            raise RunDirError(path, f"{VERDICT}: {v['kind']} cites events {bad} "
                                    f"outside the history (0..{n - 1})")
    return RunData(path, scenario, verdict, metrics, tuple(events))


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
