"""Replay: re-run a simulated run with a real backend under the simulated world, step by step.

The simulated world (:class:`model.runtime.sim.SimWorld`) takes a ``store``.  A replay
re-runs the run's scenario with its seed, so the same writers take the same
steps in the same order with the same faults (pauses, lost replies, injected
errors are the simulated network's), and the store is a :class:`ReplayStore`:
every storage effect that reaches the store is applied to the model's own
:class:`model.runtime.objectstore.ObjectStore` **and** to the real backend, the
protocol is fed the **real backend's answer**, and each step records whether
the two agreed:

- outcome class: ``ok``; ``refused`` (412, or 404 to a conditional replace:
  S3 says 404 where GCS says 412, both refuse); ``not-found``; ``unknown``
  (timeout, 409, 429, 5xx);
- for reads, the body; for listings, the key list;
- version tags are compared by their equality structure, not their bytes (GCS
  generations and S3 ETags differ in value): each real tag must stand for one
  model tag and back.  The protocol's tags (the real ones) are translated to
  the model's before the model store sees them.

On a disagreement the model store is re-synchronised from the backend (the
object is read back), so the replay continues on the backend's state.

Keys are put under the backend's table prefix (``<prefix><model key>``).
Time is virtual: the run's pauses (400 s in ``rfc91-long-pause``) cost nothing;
a replay takes as long as its storage requests.
"""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from backends.base import Backend
from model.checkers.verdict import Verdict
from model.config import Scenario
from model.protocols import plugin
from model.protocols.base import ModelRun
from model.runtime.effects import (
    CreateIfAbsent,
    Delete,
    FencedPut,
    ListPrefix,
    Outcome,
    Put,
    Read,
    ReplaceIfMatch,
    StorageEffect,
    StoreResult,
)
from model.runtime.history import Event
from model.runtime.objectstore import ObjectStore, StoredObject, is_write
from model.runtime.sim import SimWorld


@dataclass(frozen=True)
class ReplayStep:
    """One storage effect as the model and the backend answered it."""

    step: int
    time: int  # virtual ms
    node: str
    op: str
    key: str  # the model's key
    model: str  # outcome class
    real: str
    agree: bool
    note: str = ""

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        return dataclasses.asdict(self)


def outcome_class(effect: StorageEffect, outcome: Outcome) -> str:
    """``ok``, ``refused``, ``not-found`` or ``unknown`` (see the module doc)."""
    if outcome is Outcome.OK:
        return "ok"
    if outcome is Outcome.PRECONDITION_FAILED:
        return "refused"
    if outcome is Outcome.NOT_FOUND:
        return "refused" if isinstance(effect, ReplaceIfMatch | FencedPut) else "not-found"
    return "unknown"


class ReplayStore:
    """The model's store and a real backend side by side.

    Implements :class:`model.runtime.objectstore.Store`.
    """

    def __init__(self, backend: Backend, flavor: str) -> None:
        self.flavor = flavor
        self.model = ObjectStore(flavor)
        self.backend = backend
        self.prefix = backend.prefix
        self.steps: list[ReplayStep] = []
        self.version_notes: list[str] = []
        self._r2m: dict[str, dict[str, str]] = {}  # key -> real tag -> model tag
        self._m2r: dict[str, dict[str, str]] = {}

    # ---- key and tag mapping --------------------------------------------------------

    def real_key(self, key: str) -> str:
        """The backend's key for a model key."""
        return self.prefix + key

    def _real_effect(self, effect: StorageEffect) -> StorageEffect:
        match effect:
            case ListPrefix(prefix):
                return ListPrefix(self.real_key(prefix))
            case FencedPut(key, body, fence_key, version):
                return FencedPut(self.real_key(key), body, self.real_key(fence_key), version)
            case _:
                return dataclasses.replace(effect, key=self.real_key(effect.key))

    def _model_tag(self, key: str, real: str) -> str:
        return self._r2m.get(key, {}).get(real, f"unmapped:{real}")

    def _model_effect(self, effect: StorageEffect) -> StorageEffect:
        match effect:
            case ReplaceIfMatch(key, body, version):
                return ReplaceIfMatch(key, body, self._model_tag(key, version))
            case FencedPut(key, body, fence_key, version):
                return FencedPut(key, body, fence_key, self._model_tag(fence_key, version))
        return effect

    def _pair(self, key: str, real: str | None, model: str | None) -> str:
        """Record that ``real`` and ``model`` name the same version; a note when that breaks the structure."""
        if real is None or model is None:
            return ""
        r2m, m2r = self._r2m.setdefault(key, {}), self._m2r.setdefault(key, {})
        note = ""
        if r2m.get(real, model) != model or m2r.get(model, real) != real:
            note = f"version structure differs on {key}: real {real} / model {model}"
            self.version_notes.append(note)
        r2m[real], m2r[model] = model, real
        return note

    # ---- the Store protocol -----------------------------------------------------------

    def peek(self, key: str) -> StoredObject | None:
        """The model's object (kept in step with the backend)."""
        return self.model.peek(key)

    def apply(self, effect: StorageEffect, *, node: str = "-", now: int = 0) -> StoreResult:
        """Apply to the model and to the backend; record the step; answer with the backend's result."""
        m = self.model.apply(self._model_effect(effect))
        r = self.backend.perform(self._real_effect(effect))
        if isinstance(effect, ListPrefix) and r.ok and r.body is not None:
            keys = [k[len(self.prefix):] for k in r.body.decode().split("\n") if k]
            r = dataclasses.replace(r, body="\n".join(keys).encode())
        mc, rc = outcome_class(effect, m.outcome), outcome_class(effect, r.outcome)
        notes: list[str] = []
        if mc != rc:
            notes.append(f"model {m.outcome.name}, backend {r.outcome.name}")
        elif isinstance(effect, Read | ListPrefix) and r.ok and r.body != m.body:
            notes.append("body differs")
        key = getattr(effect, "key", getattr(effect, "prefix", ""))
        agree = not notes
        if r.ok and m.ok and isinstance(effect, Read | CreateIfAbsent | ReplaceIfMatch | Put | FencedPut):
            vnote = self._pair(key, r.version, m.version)
            if vnote:
                notes.append(vnote)
        if not agree and (is_write(effect) or isinstance(effect, Read)):
            self._resync(key)
        self.steps.append(ReplayStep(len(self.steps), now, node, type(effect).__name__, key, mc, rc,
                                     agree, "; ".join(notes)))
        return r

    def _resync(self, key: str) -> None:
        """Make the model's object equal the backend's (after a disagreement)."""
        r = self.backend.perform(Read(self.real_key(key)))
        if r.ok and r.body is not None:
            written = self.model.apply(Put(key, r.body))
            self._pair(key, r.version, written.version)
        elif r.outcome is Outcome.NOT_FOUND:
            self.model.apply(Delete(key))


@dataclass
class ReplayReport:
    """A replay's result: its steps, history and verdict beside the original's."""

    scenario: str
    seed: int
    backend: str
    steps: list[ReplayStep]
    events: list[Event]
    verdict: Verdict
    original_verdict: str | None
    version_notes: list[str]
    schedule_divergence: int | None  # first history index whose (time, node, process, type, f) differs

    @property
    def agreed(self) -> int:
        """Steps where the backend answered as the model did."""
        return sum(s.agree for s in self.steps)

    @property
    def same_verdict(self) -> bool:
        """True when the replay's verdict is the original run's."""
        return self.original_verdict is None or self.original_verdict == self.verdict.verdict

    @property
    def all_agree(self) -> bool:
        """True when every step agreed."""
        return self.agreed == len(self.steps)

    def summary(self) -> dict[str, Any]:
        """The JSON summary (``hcc replay --json``)."""
        first = next((s for s in self.steps if not s.agree), None)
        return {
            "scenario": self.scenario,
            "seed": self.seed,
            "backend": self.backend,
            "steps": len(self.steps),
            "agreed": self.agreed,
            "first_disagreement": first.to_dict() if first else None,
            "verdict": self.verdict.verdict,
            "original_verdict": self.original_verdict,
            "same_verdict": self.same_verdict,
            "violations": [v.to_dict() for v in self.verdict.violations],
            "version_notes": len(self.version_notes),
            "schedule_divergence": self.schedule_divergence,
        }


def _divergence(a: Sequence[Event], b: Sequence[Event]) -> int | None:
    for i, (x, y) in enumerate(zip(a, b, strict=False)):
        if (x.time, x.node, x.process, x.type, x.f) != (y.time, y.node, y.process, y.type, y.f):
            return i
    return None if len(a) == len(b) else min(len(a), len(b))


def clear(backend: Backend) -> None:
    """Delete every object under the backend's prefix (a fresh table for the replay)."""
    listed = backend.perform(ListPrefix(backend.prefix))
    if listed.ok and listed.body:
        for key in listed.body.decode().split("\n"):
            with contextlib.suppress(Exception):
                backend.perform(Delete(key))


def replay(scenario: Scenario, seed: int, backend: Backend, *, backend_name: str = "",
           original: Sequence[Event] | None = None, original_verdict: str | None = None,
           sink: Callable[[Event], None] | None = None) -> ReplayReport:
    """Replay ``scenario`` with ``seed`` on ``backend`` (its prefix is cleared first) and check the history.

    ``original`` (the simulated run's history) is compared event by event;
    ``original_verdict`` defaults to the verdict of ``original`` when given.
    """
    clear(backend)
    store = ReplayStore(backend, scenario.storage.flavor)
    events = SimWorld(scenario, seed, sink, store=store).run()
    lock = plugin("lock")  # the verdict as every world's lock run gets it (model/protocols)
    verdict = lock.check(scenario, ModelRun(events))
    if original_verdict is None and original is not None:
        original_verdict = lock.check(scenario, ModelRun(list(original))).verdict
    return ReplayReport(scenario.name, seed, backend_name or backend.describe(), store.steps, events, verdict,
                        original_verdict, store.version_notes,
                        _divergence(original, events) if original is not None else None)
