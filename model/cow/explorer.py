"""Breadth-first exhaustive exploration of the copy-on-write model.

Like TLC in breadth-first mode: every reachable state is generated level by
level, stored once (by a 64-bit fingerprint of its encoding, or exactly), and
ConsistentRead is checked on each new state.  The first violating state found
lies on a shortest path from the initial state; the path is rebuilt from
parent pointers and replayed on concrete states so that every step is a real
transition of the specification, even under symmetry reduction.

Depth and counterexample length count states, the initial state included,
as TLC reports them.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from dataclasses import dataclass, field

from model.cow.config import CowConfig
from model.cow.invariants import ReadViolation, check_consistent_read
from model.cow.render import describe_state, describe_transition
from model.cow.spec import ACTION_NAMES, CowSpec, State
from model.cow.symmetry import Canonicalizer


@dataclass(frozen=True)
class TraceStep:
    """One state of a counterexample: how it was reached, what it looks like, and the state itself."""

    index: int
    action: str
    writer: int
    text: str
    state: str
    raw: State


@dataclass(frozen=True)
class CowExploreResult:
    """Outcome of an exploration.

    ``states`` counts distinct (canonical, under symmetry) states stored,
    ``generated`` counts generated successors, ``depth`` is the number of
    breadth-first levels reached (the initial state is level 1).  A violation
    carries the shortest counterexample as ``trace`` (initial state first).
    ``complete`` is False (and the verdict "unknown") when ``max_states`` stopped the search early.
    """

    verdict: str
    states: int
    generated: int
    depth: int
    symmetry: bool
    complete: bool = True
    violation: ReadViolation | None = None
    trace: tuple[TraceStep, ...] = field(default_factory=tuple)

    @property
    def counterexample_length(self) -> int | None:
        """Number of states in the counterexample, the initial one included."""
        return len(self.trace) if self.violation is not None else None


def explore(cfg: CowConfig, symmetry: bool = False, exact: bool = False,
            max_states: int | None = None) -> CowExploreResult:
    """Explore every interleaving of ``cfg`` and check ConsistentRead.

    ``symmetry`` reduces by renaming writers, keys and values; ``exact``
    stores whole states instead of 64-bit fingerprints (no collision risk,
    more memory); ``max_states`` bounds the number of stored states.
    """
    spec = CowSpec(cfg)
    canon: Callable[[State], State]
    if symmetry:
        canon = Canonicalizer(cfg.keys, cfg.values).canonical
    else:
        def canon(s: State) -> State:
            return s

    def key_of(s: State) -> Hashable:
        return s if exact else hash(s)

    inv_cache: dict[Hashable, ReadViolation | None] = {}

    def check(s: State) -> ReadViolation | None:
        k = (s[4], s[5], s[7])
        try:
            return inv_cache[k]
        except KeyError:
            v = check_consistent_read(s[4], s[5], s[7])
            inv_cache[k] = v
            return v

    init = canon(spec.initial())
    init_key = key_of(init)
    parent: dict[Hashable, Hashable] = {init_key: None}
    generated = 1
    violation = check(init)
    if violation is not None:
        return _violated(spec, cfg, [init_key], canon, key_of, violation, 1, generated, symmetry)
    frontier = [init]
    depth = 1
    successors = spec.successors
    while frontier:
        nxt: list[State] = []
        for s in frontier:
            sk: Hashable = s if exact else hash(s)
            s_tl, s_files, s_log = s[4], s[5], s[7]
            for _action, _w, t in successors(s):
                generated += 1
                c = canon(t)
                ck: Hashable = c if exact else hash(c)
                if ck in parent:
                    continue
                parent[ck] = sk
                # ConsistentRead reads only the timeline, the files and the commit log; when the
                # step left them untouched (same objects), the parent's verdict (it holds) carries over.
                if not (t[4] is s_tl and t[5] is s_files and t[7] is s_log):
                    violation = check(c)
                    if violation is not None:
                        path: list[Hashable] = [ck]
                        while (p := parent[path[-1]]) is not None:
                            path.append(p)
                        path.reverse()
                        return _violated(spec, cfg, path, canon, key_of, violation, len(path), generated,
                                         symmetry, stored=len(parent))
                nxt.append(c)
                if max_states is not None and len(parent) >= max_states:
                    return CowExploreResult("unknown", len(parent), generated, depth + 1, symmetry,
                                         complete=False)
        if nxt:
            depth += 1
        frontier = nxt
    return CowExploreResult("holds", len(parent), generated, depth, symmetry)


def _violated(spec: CowSpec, cfg: CowConfig, path: list[Hashable], canon: Callable[[State], State],
              key_of: Callable[[State], Hashable], violation: ReadViolation, depth: int, generated: int,
              symmetry: bool, stored: int = 1) -> CowExploreResult:
    """Replay ``path`` (keys of canonical states) on concrete states and describe each step."""
    cur = spec.initial()
    steps = [TraceStep(1, "Init", 0, "initial state", describe_state(cur, cfg.salt), cur)]
    for i, want in enumerate(path[1:], start=2):
        for action, w, t in spec.successors(cur):
            if key_of(canon(t)) == want:
                steps.append(TraceStep(i, ACTION_NAMES[action], w + 1,
                                       describe_transition(cur, action, w, t, cfg.salt),
                                       describe_state(t, cfg.salt), t))
                cur = t
                break
        else:  # pragma: no cover - would mean a fingerprint collision
            raise RuntimeError("counterexample replay failed (fingerprint collision?)")
    concrete = check_consistent_read(cur[4], cur[5], cur[7])
    return CowExploreResult("violated", stored, generated, depth, symmetry,
                         violation=concrete if concrete is not None else violation, trace=tuple(steps))
