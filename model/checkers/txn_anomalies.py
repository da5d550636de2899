"""Anomalies and the consistency models they rule out, as Elle relates them.

The three relations below restate, as data, those of Elle's ``elle.consistency-model``
(Kingsbury & Alvaro, VLDB 2020; jepsen-io/elle): which anomaly implies which (``IMPLIED``:
G0 implies G1c, G-single-item implies G-single and G-nonadjacent-item, a lost update is a
G2-item, ...), which model implies which (``MODELS``: strict-serializable implies serializable
and snapshot isolation, ...), and which anomalies a model directly forbids (``PROSCRIBED``).
Model names are Elle's canonical names (Adya's ``PL-*`` where Elle uses them); ``FRIENDLY``
maps them to the names Elle prints (``PL-3`` is ``serializable``, ``PL-SI``
``snapshot-isolation``, ...).

- :func:`prohibited_anomalies` (``anomalies-prohibited-by``): the anomalies that must not occur
  if all the given models hold;
- :func:`impossible_models` (``anomalies->impossible-models``): the models ruled out by anomalies;
- :func:`boundary` (``friendly-boundary``): the weakest models ruled out (``not``) and the other
  ruled-out models (``also_not``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

# anomaly -> anomalies it implies (elle.consistency-model/implied-anomalies)
IMPLIED: dict[str, tuple[str, ...]] = {
    "G0": ("G1c", "G0-process"),
    "G0-process": ("G1c-process", "G0-realtime"),
    "G0-realtime": ("G1c-realtime",),
    "G1a": ("G1",),
    "G1b": ("G1",),
    "G1c": ("G1", "G1c-process"),
    "G1c-process": ("G1c-realtime", "G1-process"),
    "G1c-realtime": ("G1-realtime",),
    "G1": ("G1-process",),
    "G1-process": ("G1-realtime",),
    "G-single-item": ("G-single", "G-single-item-process", "G-nonadjacent-item"),
    "G-single-item-process": ("G-single-process", "G-single-item-realtime", "G-nonadjacent-item-process"),
    "G-single-item-realtime": ("G-single-realtime", "G-nonadjacent-item-realtime"),
    "G-single": ("G-nonadjacent", "GSIb", "G-single-process"),
    "G-single-process": ("G-nonadjacent-process", "G-single-realtime"),
    "G-single-realtime": ("G-nonadjacent-realtime",),
    "G-nonadjacent-item": ("G-nonadjacent", "G2-item", "G-nonadjacent-item-process"),
    "G-nonadjacent-item-process": ("G-nonadjacent-process", "G2-item-process", "G-nonadjacent-item-realtime"),
    "G-nonadjacent-item-realtime": ("G2-item-realtime", "G-nonadjacent-realtime"),
    "G-nonadjacent": ("G2", "G-nonadjacent-process"),
    "G-nonadjacent-process": ("G2-process", "G-nonadjacent-realtime"),
    "G-nonadjacent-realtime": ("G2-realtime",),
    "G2": ("G2-process",),
    "G2-item": ("G2", "G2-item-process"),
    "G2-item-process": ("G2-process", "G2-item-realtime"),
    "G2-item-realtime": ("G2-realtime",),
    "G2-process": ("G2-realtime",),
    "GSIa": ("GSI",),
    "GSIb": ("GSI",),
    "incompatible-order": ("G1a",),
    "future-read": ("G1c",),
    "dirty-update": ("G1a",),
    "lost-update": ("write-skew", "G2-item"),
    "write-skew": ("G2",),
}

# friendly name -> canonical name (elle.consistency-model/canonical-model-names)
CANONICAL: dict[str, str] = {
    "consistent-view": "PL-2+",
    "conflict-serializable": "PL-3",
    "cursor-stability": "PL-CS",
    "forward-consistent-view": "PL-FCV",
    "monotonic-snapshot-read": "PL-MSR",
    "monotonic-view": "PL-2L",
    "read-committed": "PL-2",
    "read-uncommitted": "PL-1",
    "repeatable-read": "PL-2.99",
    "serializable": "PL-3",
    "snapshot-isolation": "PL-SI",
    "strict-serializable": "PL-SS",
    "strong-serializable": "PL-SS",
    "update-serializable": "PL-3U",
    "strong-session-read-uncommitted": "strong-session-PL-1",
    "strong-session-read-committed": "strong-session-PL-2",
    "strong-read-uncommitted": "strong-PL-1",
    "strong-read-committed": "strong-PL-2",
}
FRIENDLY: dict[str, str] = {v: k for k, v in CANONICAL.items()}
FRIENDLY["PL-3"] = "serializable"
FRIENDLY["PL-SS"] = "strict-serializable"


def canonical(model: str) -> str:
    """Elle's canonical name of a model (``serializable`` -> ``PL-3``)."""
    return CANONICAL.get(model, model)


def friendly(model: str) -> str:
    """The name Elle prints for a model (``PL-3`` -> ``serializable``)."""
    return FRIENDLY.get(model, model)


# model -> models it implies (elle.consistency-model/models), in friendly or canonical names
_MODELS_RAW: dict[str, tuple[str, ...]] = {
    "causal-cerone": ("read-atomic",),
    "consistent-view": ("cursor-stability", "monotonic-view"),
    "conflict-serializable": ("view-serializable",),
    "cursor-stability": ("read-committed", "PL-2"),
    "forward-consistent-view": ("consistent-view",),
    "PL-2": ("PL-1",),
    "PL-3": ("repeatable-read", "update-serializable"),
    "update-serializable": ("forward-consistent-view",),
    "monotonic-atomic-view": ("read-committed",),
    "monotonic-view": ("PL-2",),
    "monotonic-snapshot-read": ("PL-2",),
    "parallel-snapshot-isolation": ("causal-cerone", "update-atomic"),
    "prefix": ("causal-cerone",),
    "read-atomic": ("monotonic-atomic-view",),
    "read-committed": ("read-uncommitted",),
    "repeatable-read": ("cursor-stability", "monotonic-atomic-view"),
    "update-atomic": ("read-atomic",),
    "serializable": ("repeatable-read", "snapshot-isolation", "view-serializable"),
    "session-serializable": ("1SR",),
    "snapshot-isolation": ("forward-consistent-view", "monotonic-atomic-view", "monotonic-snapshot-read",
                           "parallel-snapshot-isolation", "prefix"),
    "strict-serializable": ("PL-3", "serializable", "linearizable", "snapshot-isolation",
                            "strong-snapshot-isolation", "strong-session-serializable"),
    "strong-session-PL-1": ("PL-1",),
    "strong-session-PL-2": ("PL-2", "strong-session-PL-1"),
    "strong-PL-1": ("strong-session-PL-1",),
    "strong-PL-2": ("strong-session-PL-2", "strong-PL-1"),
    "strong-session-serializable": ("serializable", "strong-session-snapshot-isolation"),
    "strong-session-snapshot-isolation": ("snapshot-isolation", "strong-session-PL-2"),
    "strong-serializable": ("session-serializable",),
    "strong-snapshot-isolation": ("strong-session-snapshot-isolation", "strong-PL-2"),
    "linearizable": ("sequential",),
    "sequential": ("causal",),
    "causal": ("writes-follow-reads", "PRAM"),
    "PRAM": ("monotonic-reads", "monotonic-writes", "read-your-writes"),
}


def _canonical_graph(raw: Mapping[str, Iterable[str]]) -> dict[str, tuple[str, ...]]:
    out: dict[str, set[str]] = {}
    for a, bs in raw.items():
        out.setdefault(canonical(a), set()).update(canonical(b) for b in bs)
    return {a: tuple(sorted(bs)) for a, bs in sorted(out.items())}


MODELS: dict[str, tuple[str, ...]] = _canonical_graph(_MODELS_RAW)

# canonical model -> anomalies it directly forbids (elle.consistency-model/direct-proscribed-anomalies)
PROSCRIBED: dict[str, tuple[str, ...]] = _canonical_graph({
    "causal-cerone": ("internal", "G1a"),
    "cursor-stability": ("G1", "G-cursor", "lost-update"),
    "monotonic-view": ("G1", "G-monotonic"),
    "monotonic-snapshot-read": ("G1", "G-MSR"),
    "consistent-view": ("G1", "G-single"),
    "forward-consistent-view": ("G1", "G-SIb"),
    "parallel-snapshot-isolation": ("internal", "G1a"),
    "PL-3": ("G1", "G2", "predicate-read-miss", "PL-3-cycle-exists"),
    "PL-2": ("G1", "PL-2-cycle-exists"),
    "PL-1": ("G0", "duplicate-elements", "cyclic-versions", "PL-1-cycle-exists"),
    "prefix": ("internal", "G1a"),
    "serializable": ("internal",),
    "snapshot-isolation": ("internal", "G1", "G-SI", "G-nonadjacent", "PL-SI-cycle-exists"),
    "read-atomic": ("internal", "G1a", "future-read"),
    "repeatable-read": ("G1", "G2-item", "PL-2.99-cycle-exists", "lost-update"),
    "update-atomic": ("lost-update",),
    "strict-serializable": ("G1", "G1c-realtime", "G2-realtime", "PL-SS-cycle-exists"),
    "strong-session-PL-1": ("strong-session-PL-1-cycle-exists", "G0-process"),
    "strong-session-PL-2": ("strong-session-PL-2-cycle-exists", "G1c-process"),
    "strong-PL-1": ("strong-PL-1-cycle-exists", "G0-realtime"),
    "strong-PL-2": ("strong-PL-2-cycle-exists", "G1c-realtime"),
    "strong-session-snapshot-isolation": ("internal", "G1-process", "G-nonadjacent-process",
                                          "strong-session-snapshot-isolation-cycle-exists"),
    "strong-snapshot-isolation": ("internal", "G1-realtime", "G-nonadjacent-realtime",
                                  "strong-snapshot-isolation-cycle-exists"),
    "strong-session-serializable": ("G1-process", "G2-process", "strong-session-serializable-cycle-exists"),
    "update-serializable": ("G1", "G-update"),
})


def _reverse(graph: Mapping[str, Iterable[str]]) -> dict[str, set[str]]:
    rev: dict[str, set[str]] = {}
    for a, bs in graph.items():
        for b in bs:
            rev.setdefault(b, set()).add(a)
    return rev


_IMPLIED_BY = _reverse(IMPLIED)
_IMPLIED_MODELS_BY = _reverse(MODELS)
_PROSCRIBED_BY = _reverse(PROSCRIBED)

ALL_MODELS: frozenset[str] = frozenset(
    set(MODELS) | {b for bs in MODELS.values() for b in bs} | set(CANONICAL) | set(CANONICAL.values()))


def _closure(start: Iterable[str], graph: Mapping[str, Iterable[str]]) -> set[str]:
    seen = set(start)
    todo = list(seen)
    while todo:
        for b in graph.get(todo.pop(), ()):
            if b not in seen:
                seen.add(b)
                todo.append(b)
    return seen


def implied_anomalies(anomalies: Iterable[str]) -> set[str]:
    """The anomalies and every anomaly they imply."""
    return _closure(anomalies, IMPLIED)


def anomalies_implying(anomalies: Iterable[str]) -> set[str]:
    """The anomalies and every anomaly that implies one of them."""
    return _closure(anomalies, _IMPLIED_BY)


def known_model(model: str) -> bool:
    """True when Elle knows the model (friendly or canonical name)."""
    return model in ALL_MODELS


def prohibited_anomalies(models: Iterable[str]) -> set[str]:
    """The anomalies that must not occur if all ``models`` hold (Elle's ``anomalies-prohibited-by``)."""
    implied = _closure((canonical(m) for m in models), MODELS)
    direct = {a for m in implied for a in PROSCRIBED.get(m, ())}
    return anomalies_implying(direct)


def impossible_models(anomalies: Iterable[str]) -> set[str]:
    """The canonical models ruled out by ``anomalies`` (Elle's ``anomalies->impossible-models``)."""
    direct = {m for a in implied_anomalies(anomalies) for m in _PROSCRIBED_BY.get(a, ())}
    return _closure(direct, _IMPLIED_MODELS_BY)


def models_implying(model: str) -> set[str]:
    """The canonical models ruled out when ``model`` is: itself and every model that implies it."""
    return _closure([canonical(model)], _IMPLIED_MODELS_BY)


def weakest(models: Iterable[str]) -> set[str]:
    """The models of the set not implied by another of the set (Elle's ``weakest-models``)."""
    ms = {canonical(m) for m in models}
    out = set(ms)
    for m in sorted(ms):
        others = out - {m}
        if others & (_closure([m], MODELS) - {m}):
            out.discard(m)
    return out


def boundary(anomalies: Iterable[str]) -> tuple[list[str], list[str]]:
    """``(not, also_not)``: the weakest models the anomalies rule out, and the other ruled-out
    models, each sorted, in the names Elle prints."""
    impossible = impossible_models(anomalies)
    is_not = weakest(impossible)
    return (sorted({friendly(m) for m in is_not}),
            sorted({friendly(m) for m in impossible - is_not} - {friendly(m) for m in is_not}))


# Cycle-existence checks (elle.txn/cycle-exists-specs): a model whose subgraph has a cycle is ruled
# out even when no cycle of a named class was found.  (model, relations, extension relations or 0)
CYCLE_EXISTS: tuple[tuple[str, str, str], ...] = (
    ("PL-1", "ww", ""),
    ("PL-2", "ww wr", ""),
    ("PL-SI", "ww wr", "rw"),
    ("PL-2.99", "ww wr rw", ""),
    ("PL-3", "ww wr rw", ""),
    ("strong-session-PL-1", "ww process", ""),
    ("strong-session-PL-2", "ww wr process", ""),
    ("strong-session-snapshot-isolation", "ww wr process", "rw"),
    ("strong-session-serializable", "ww wr rw process", ""),
    ("strong-PL-1", "ww realtime", ""),
    ("strong-PL-2", "ww wr realtime", ""),
    ("strong-snapshot-isolation", "ww wr realtime", "rw"),
    ("PL-SS", "ww wr rw realtime", ""),
)

# anomalies that leave the verdict unknown rather than invalid (elle.txn/unknown-anomaly-types)
UNKNOWN_ANOMALIES = frozenset({"empty-transaction-graph", "cycle-search-timeout"})

# cycle classes in the order Elle searches them (worst first; elle.txn/cycle-anomaly-specs sorted by
# anomaly depth): data dependencies, then with process edges, then with realtime edges
BASE_CYCLES = ("G0", "G1c", "G-single-item", "G-nonadjacent-item", "G2-item")
CYCLE_TYPES = BASE_CYCLES + tuple(f"{c}-process" for c in BASE_CYCLES) + tuple(
    f"{c}-realtime" for c in BASE_CYCLES)


def needs_graphs(models: Iterable[str]) -> tuple[bool, bool]:
    """``(process, realtime)``: which extra edges checking ``models`` needs (Elle's
    ``additional-graphs``: realtime when a realtime anomaly is prohibited, which covers process
    order too; else process when a process anomaly is)."""
    prohibited = prohibited_anomalies(models)
    realtime = any(a.endswith("-realtime") for a in prohibited)
    process = not realtime and any(a.endswith("-process") for a in prohibited)
    return process, realtime
