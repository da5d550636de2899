"""Read and validate run directories (history, verdict, metrics, scenario) for reports and the gate.

A run directory holds the run of one protocol (:func:`protocol_of`):

- ``lock``: what ``hcc run`` writes: ``history.jsonl``, ``verdict.json``, ``metrics.json``
  (with ``acquisitions`` and ``writers``) and ``scenario.toml``;
- ``occ``: what ``hcc timeline run`` writes: the same four files, ``scenario.toml`` with a
  ``[timeline]`` table, ``metrics.json`` with ``ops``;
- ``nbcc``: what ``hcc nbcc run`` writes: ``history.jsonl``, ``verdict.json``, ``plan.json`` and
  ``table/`` (``metrics.json`` and ``scenario.toml`` are read when present);
- ``explore``: ``verdict.json`` and ``explore.json`` (the object ``hcc explore --json`` prints).

Anything missing or unreadable raises ``RunDirError`` naming the directory, the file and what
is wrong, before any report file is written; so does a run stopped by a signal
(``"verdict": "interrupted"``) or one whose storage never started (``"not-started"``).

:func:`find_runs` follows the store's ``latest`` links (``engines/rundir.py``): the store
``out/runs`` gives the newest run of each scenario, a scenario's folder its newest run.
"""

from __future__ import annotations

import json
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from model.history import Event, loads

HISTORY = "history.jsonl"
VERDICT = "verdict.json"
METRICS = "metrics.json"
SCENARIO = "scenario.toml"
PLAN = "plan.json"
EXPLORE = "explore.json"
RUN_FILES = (HISTORY, VERDICT, METRICS, SCENARIO)
PROTOCOLS = ("lock", "occ", "nbcc", "explore")
# The files each protocol's run directory must hold (the others are read when present).
REQUIRED = {"lock": RUN_FILES, "occ": RUN_FILES, "nbcc": (HISTORY, VERDICT, PLAN),
            "explore": (VERDICT, EXPLORE)}
# What the command that writes each kind is called, for the error of an incomplete directory.
WRITER = {"lock": "hcc run", "occ": "hcc timeline run", "nbcc": "hcc nbcc run", "explore": "hcc explore"}
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
    scenario: dict[str, Any]  # the resolved scenario.toml, as parsed ({} when the run has none)
    verdict: dict[str, Any]  # verdict.json
    metrics: dict[str, Any]  # metrics.json ({} when the run has none)
    events: tuple[Event, ...]
    protocol: str = "lock"  # one of PROTOCOLS
    extra: dict[str, Any] = field(default_factory=dict)  # plan.json (nbcc) or explore.json (explore)

    @property
    def name(self) -> str:
        return str(self.scenario.get("name") or self.verdict.get("scenario") or self.path.name)

    @property
    def seed(self) -> int:
        return int(self.verdict.get("seed", self.scenario.get("seed", 0)))

    @property
    def expect(self) -> str:
        return str(self.scenario.get("expect", self.verdict.get("expect", "ok")))

    @property
    def outcome(self) -> str:
        return str(self.verdict["verdict"])


def is_run_dir(path: Path) -> bool:
    """True when ``path`` holds at least one of the run files (complete or not)."""
    return path.is_dir() and any((path / f).exists() for f in (*RUN_FILES, PLAN, EXPLORE))


def protocol_of(run_dir: Path | str) -> str:
    """The protocol of a run directory: ``lock``, ``occ``, ``nbcc`` or ``explore``.

    ``verdict.json``'s field ``protocol`` when it has one (RunDirError for another value); for
    older runs without it: ``explore.json`` -> explore, ``plan.json`` -> nbcc, ``scenario.toml``
    with a ``[timeline]`` table -> occ, else lock.  An unreadable verdict.json or scenario.toml
    does not decide here: :func:`load_run` reports it.
    """
    path = Path(run_dir)
    try:
        verdict = json.loads((path / VERDICT).read_text())
    except (OSError, ValueError):
        verdict = None
    if isinstance(verdict, dict) and "protocol" in verdict:
        if verdict["protocol"] not in PROTOCOLS:
            raise RunDirError(path, f"{VERDICT}: field protocol = {verdict['protocol']!r} is not one of "
                                    f"{', '.join(PROTOCOLS)}")
        return str(verdict["protocol"])
    if (path / EXPLORE).is_file():
        return "explore"
    if (path / PLAN).is_file():
        return "nbcc"
    try:
        scenario = tomllib.loads((path / SCENARIO).read_text())
    except (OSError, ValueError):
        return "lock"
    return "occ" if isinstance(scenario.get("timeline"), dict) else "lock"


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


def _refuse_unfinished(path: Path, verdict: dict[str, Any]) -> None:
    """A run stopped by a signal, or whose storage never started, has no verdict to report or gate."""
    if verdict["verdict"] == "interrupted":
        raise RunDirError(path, f"the run was interrupted by {verdict.get('signal') or 'a signal'} after "
                                f"{verdict.get('events', '?')} events: no verdict to report or gate "
                                f"(its {HISTORY} is kept)")
    if verdict["verdict"] == "not-started":
        why = verdict.get("error") or "its storage did not start"
        raise RunDirError(path, f"the run never started ({why}): no verdict to report or gate")


METRIC_FIELDS = {"lock": ("acquisitions", "writers"), "occ": ("ops",)}
VERDICTS = {"explore": ("ok", "violation", "unknown")}  # an explorer stopped at --max-states: unknown
EXTRA = {"nbcc": (PLAN, ()), "explore": (EXPLORE, ("verdict", "states", "depth"))}


def _read_history(path: Path) -> list[Event]:
    try:
        events = loads((path / HISTORY).read_text())
    except (ValueError, UnicodeDecodeError) as e:
        raise RunDirError(path, f"{HISTORY}: {e}") from None
    if not events:
        raise RunDirError(path, f"{HISTORY} holds no events")
    for i, ev in enumerate(events):
        if ev.index != i:
            raise RunDirError(path, f"{HISTORY}: event {i} has index {ev.index} "
                                    "(events missing or out of order)")
    for i, ev in enumerate(events):
        if ev.process == "store" and ev.f == "lock-file" and not _lock_file_value(ev.value):
            raise RunDirError(path, f"{HISTORY}: line {i + 1}: a lock-file event needs owner (text), expired "
                                    f"(true/false) and valid_until (integer), got {ev.value!r}")
    return events


def load_run(path: Path | str) -> RunData:
    """Load one run directory of any protocol; ``RunDirError`` says which file is missing or corrupted
    and why."""
    path = Path(path)
    if not path.exists():
        raise RunDirError(path, "does not exist")
    if not path.is_dir():
        raise RunDirError(path, "is not a directory")
    if (path / VERDICT).is_file():
        _refuse_unfinished(path, _read_json(path, VERDICT, ("verdict",)))
    protocol = protocol_of(path)
    missing = [f for f in REQUIRED[protocol] if not (path / f).is_file()]
    if missing:
        raise RunDirError(path, f"missing {', '.join(missing)} (not a complete run of '{WRITER[protocol]}')")
    scenario: dict[str, Any] = {}
    if (path / SCENARIO).is_file():
        try:
            scenario = tomllib.loads((path / SCENARIO).read_text())
        except (tomllib.TOMLDecodeError, UnicodeDecodeError) as e:
            raise RunDirError(path, f"{SCENARIO} is not valid TOML ({e})") from None
    verdict = _read_json(path, VERDICT, ("verdict", "violations", "findings"))
    allowed = VERDICTS.get(protocol, ("ok", "violation"))
    if verdict["verdict"] not in allowed:
        raise RunDirError(path, f"{VERDICT}: field verdict = {verdict['verdict']!r} is not "
                                f"{', '.join(allowed[:-1])} or {allowed[-1]}")
    for name in ("violations", "findings"):
        if not isinstance(verdict[name], list) or any(
                not isinstance(v, dict) or not {"kind", "message", "events"} <= v.keys()
                or not isinstance(v["kind"], str) or not isinstance(v["message"], str)
                or not isinstance(v["events"], list) for v in verdict[name]):
            raise RunDirError(path, f"{VERDICT}: field {name} is not a list of violations "
                                    "(kind and message: text, events: a list)")
    seed = verdict.get("seed", scenario.get("seed", 0))
    if not isinstance(seed, int) or isinstance(seed, bool):
        raise RunDirError(path, f"{VERDICT}: field seed = {seed!r} is not an integer")
    for name in ("name", "expect"):
        if not isinstance(scenario.get(name, ""), str):
            raise RunDirError(path, f"{SCENARIO}: field {name} = {scenario[name]!r} is not a string")
    metrics: dict[str, Any] = {}
    if protocol in METRIC_FIELDS or (path / METRICS).is_file():
        metrics = _read_json(path, METRICS, METRIC_FIELDS.get(protocol, ()))
    extra: dict[str, Any] = {}
    if protocol in EXTRA:
        extra = _read_json(path, *EXTRA[protocol])
    events = _read_history(path) if HISTORY in REQUIRED[protocol] else []
    if events:
        n = len(events)
        for v in verdict["violations"] + verdict["findings"]:
            bad = [i for i in v["events"] if not isinstance(i, int) or not 0 <= i < n]
            if bad:
                raise RunDirError(path, f"{VERDICT}: {v['kind']} cites events {bad} "
                                        f"outside the history (0..{n - 1})")
    return RunData(path, scenario, verdict, metrics, tuple(events), protocol, extra)


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
