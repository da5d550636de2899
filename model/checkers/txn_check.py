"""Elle's transactional check: anomalies of a list-append or rw-register history, each cycle
explained, and the consistency models they rule out.

:func:`check_txns` infers the dependency graph (model/checkers/txn_infer.py), adds process or
real-time edges when the claimed models need them (as Elle's ``additional-graphs``), finds the
strongly connected components, and in each:

1. proves which models' subgraphs have a cycle at all (Elle's ``cycle-exists`` checks: ww for
   read uncommitted, ww+wr for read committed, ww+wr with single rw hops for snapshot
   isolation, all data edges for serializable, and their process / realtime variants); a
   model whose subgraph is acyclic rules out searching for the anomalies it forbids;
2. searches, worst first, for one short cycle of each class still possible (G0, G1c,
   G-single-item, G-nonadjacent-item, G2-item, then the ``-process`` and ``-realtime``
   variants), skipping classes implied by one already found.

A model ruled out by a cycle-exists check but by no cycle found is reported as
``<model>-cycle-exists`` (Elle's fallback).  The verdict is ``valid`` True when no anomaly the
claimed models forbid was found, False when one was, ``unknown`` when the search timed out or
the graph has no edge (``empty-transaction-graph``: nothing could be inferred).  Pure: no I/O;
the same history gives the same verdict.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from model.checkers.txn_anomalies import (
    BASE_CYCLES,
    CYCLE_EXISTS,
    CYCLE_TYPES,
    UNKNOWN_ANOMALIES,
    boundary,
    friendly,
    implied_anomalies,
    impossible_models,
    known_model,
    models_implying,
    needs_graphs,
    prohibited_anomalies,
)
from model.checkers.txn_graph import (
    PROCESS,
    REALTIME,
    REL_NAMES,
    RW,
    RW_MULTIPLE,
    RW_NONADJACENT,
    RW_NONE,
    RW_SINGLE,
    WR,
    WW,
    CycleSpec,
    Deadline,
    DepGraph,
    Step,
    extension_sccs,
    find_cycle,
    sccs,
)
from model.checkers.txn_history import LIST_APPEND, Txn, TxnHistory, process_name, show, show_txn
from model.checkers.txn_infer import INIT, infer_list_append, infer_rw_register, link_process, link_realtime

DEFAULT_MODEL = "strict-serializable"
DEFAULT_BUDGET = 400_000  # search steps per cycle class and component
MAX_CASES = 100  # cases of one non-cycle anomaly kept in the report

_REL_BITS = {"ww": WW, "wr": WR, "rw": RW, "process": PROCESS, "realtime": REALTIME}


def _spec(name: str) -> CycleSpec:
    """The search specification of a cycle class (Elle's cycle-anomaly-specs)."""
    base = name.removesuffix("-process").removesuffix("-realtime")
    if name.endswith("-process"):
        extra, require = PROCESS, PROCESS
    elif name.endswith("-realtime"):
        extra, require = PROCESS | REALTIME, REALTIME
    else:
        extra, require = 0, 0
    rw, first, allowed = {
        "G0": (RW_NONE, WW, WW),
        "G1c": (RW_NONE, WR, WW | WR),
        "G-single-item": (RW_SINGLE, RW, WW | WR),
        "G-nonadjacent-item": (RW_NONADJACENT, RW, WW | WR),
        "G2-item": (RW_MULTIPLE, RW, WW | WR),
    }[base]
    if base == "G0" and require:
        first = require
    return CycleSpec(name, first, allowed | extra, rw, require)


SPECS = {name: _spec(name) for name in CYCLE_TYPES}


@dataclass
class CycleCase:
    """One cycle: its class and its steps ``(a, b, relation bit)``, the first step's ``a`` first."""

    type: str
    steps: list[Step]


@dataclass
class TxnVerdict:
    """What :func:`check_txns` found."""

    kind: str
    models: list[str]
    valid: bool | str
    anomalies: dict[str, list[dict[str, Any]]]  # non-cycle anomalies and cycle-exists cases
    cycles: dict[str, CycleCase]
    not_models: list[str]
    also_not: list[str]
    forbidden: list[str]  # anomaly kinds found that the claimed models forbid
    txns: list[Txn]
    graph: DepGraph
    sources: list[str] = field(default_factory=list)
    counts: dict[str, int] = field(default_factory=dict)
    elapsed: float = 0.0
    timed: bool = False  # the history's invoke/complete are times (else event positions)

    @property
    def anomaly_types(self) -> list[str]:
        """Every anomaly kind found, sorted."""
        return sorted(set(self.anomalies) | set(self.cycles))

    @property
    def result(self) -> str:
        """``ok``, ``illegal`` or ``unknown``."""
        return "unknown" if self.valid == "unknown" else ("ok" if self.valid else "illegal")

    # ------------------------------------------------------------------ explanations

    def names(self, case: CycleCase) -> dict[int, str]:
        """``T1``, ``T2``, ... for the transactions of a cycle, in cycle order."""
        return {a: f"T{i + 1}" for i, (a, _, _) in enumerate(case.steps)}

    def explain_step(self, step: Step, names: dict[int, str]) -> dict[str, Any]:
        """One step of a cycle as data: relation, key, values, and a sentence."""
        a, b, bit = step
        why = self.graph.why.get(step, ())
        an, bn = names.get(a, f"txn {a}"), names.get(b, f"txn {b}")
        out: dict[str, Any] = {"from": an, "to": bn, "type": REL_NAMES[bit]}
        la = self.kind == LIST_APPEND
        if bit == WW:
            k, v1, v2 = why
            out.update(key=k, value=v1, **{"value'": v2})
            out["explanation"] = (
                f"{bn} appended {show(v2)} after {an} appended {show(v1)} to {show(k)}" if la
                else f"{an} set key {show(k)} to {show(v1)}, and {bn} set it to {show(v2)}, "
                     "which came later in the version order")
        elif bit == WR:
            k, v = why
            out.update(key=k, value=v)
            out["explanation"] = (f"{bn} observed {an}'s append of {show(v)} to key {show(k)}" if la
                                  else f"{an} wrote {show(k)} = {show(v)}, which was read by {bn}")
        elif bit == RW:
            k, v1, v2 = why
            init = v1 is INIT if la else v1 is None
            out.update(key=k, value=None if v1 is INIT else v1, **{"value'": v2})
            if la:
                out["explanation"] = (f"{an} observed the initial (empty) state of {show(k)}, which {bn} "
                                      f"created by appending {show(v2)}" if init else
                                      f"{an} read {show(k)} up to {show(v1)} and did not observe {bn}'s "
                                      f"append of {show(v2)}")
            else:
                seen = "null (the initial state)" if init else show(v1)
                out["explanation"] = (f"{an} read key {show(k)} = {seen}, and {bn} set it to {show(v2)}, "
                                      "which came later in the version order")
        elif bit == PROCESS:
            out["process"] = why[0]
            out["explanation"] = f"process {show(why[0])} executed {an} before {bn}"
        else:
            ta, tb = self.txns[a], self.txns[b]
            out.update(completed=ta.complete, invoked=tb.invoke)
            at = "time" if self.timed else "event"  # an untimed history's order is its event positions
            out["explanation"] = (f"{an} completed (at {at} {ta.complete:g}) before {bn} was invoked "
                                  f"(at {at} {tb.invoke:g})")
        return out

    def txn_json(self, tid: int, locate: Callable[[int], str] | None) -> dict[str, Any]:
        """A transaction as data."""
        t = self.txns[tid]
        d: dict[str, Any] = {"id": t.id, "process": t.process, "type": t.type,
                             "value": [list(m) for m in t.mops]}
        if locate is not None:
            d["at"] = locate(tid)
        return d

    def cycle_json(self, case: CycleCase, locate: Callable[[int], str] | None) -> dict[str, Any]:
        """A cycle as data."""
        names = self.names(case)
        return {"type": case.type,
                "txns": [{"name": names[a], **self.txn_json(a, locate)} for a, _, _ in case.steps],
                "steps": [self.explain_step(s, names) for s in case.steps]}

    def case_text(self, kind: str, c: dict[str, Any], locate: Callable[[int], str] | None) -> str:
        """One non-cycle anomaly in words."""
        def who(tid: int) -> str:
            t = self.txns[tid]
            where = f" ({locate(tid)})" if locate is not None else ""
            return f"txn {tid} by {process_name(t.process)} {show_txn(t)}{where}"

        if "txn" in c and "mop" in c:
            t = self.txns[c["txn"]]
            f, k, v = t.mops[c["mop"]]
            head = f"{who(c['txn'])}: {f} {show(k)} {show(v)}"
            if kind == "G1a":
                return f"{head} saw {show(c['element'])}, written by the failed {who(c['writer'])}"
            if kind == "G1b":
                return f"{head} saw {show(c['element'])}, an intermediate write of {who(c['writer'])}"
            if kind == "internal":
                return f"{head}, but its own earlier micro-ops imply {show(c['expected'])}"
            if kind == "future-read":
                return f"{head} saw {show(c['element'])}, which it appends only later"
            if kind == "duplicate-elements":
                return f"{head} has duplicates {', '.join(f'{show(e)} x{n}' for e, n in c['duplicates'])}"
        if kind == "lost-update":
            return (f"key {show(c['key'])}: {len(c['txns'])} committed transactions read {show(c['value'])} "
                    f"and wrote it: " + "; ".join(who(t) for t in c["txns"]))
        if kind == "incompatible-order":
            a, b = c["values"]
            return f"key {show(c['key'])}: read {show(a)} is not a prefix of read {show(b)}"
        if kind == "dirty-update":
            t1, t2 = c["txns"]
            return (f"key {show(c['key'])}: {who(t2)} appended after the failed {who(t1)} "
                    f"(versions {show(c['values'])})")
        if kind == "cyclic-versions":
            return (f"key {show(c['key'])}: versions {show(c['scc'])} form a cycle "
                    f"(from {', '.join(c['sources'])})")
        if kind.endswith("-cycle-exists"):
            return (f"a cycle exists among {c['scc_size']} transactions (relations {c['subgraph']}), "
                    f"though no cycle of a named class was found: not {c['not']}")
        if kind == "empty-transaction-graph":
            return "no dependency between transactions could be inferred"
        if kind == "cycle-search-timeout":
            return f"the time limit passed during the search for {c.get('searching', 'cycles')}"
        return repr(c)

    def to_json(self, locate: Callable[[int], str] | None = None) -> dict[str, Any]:
        """The verdict as one JSON-able object (deterministic order)."""
        anomalies: dict[str, Any] = {}
        for kind in self.anomaly_types:
            if kind in self.cycles:
                anomalies[kind] = [self.cycle_json(self.cycles[kind], locate)]
                continue
            cases = self.anomalies[kind]
            out = []
            for c in cases[:MAX_CASES]:
                d = dict(c)
                for name in ("txn", "writer"):
                    if name in d:
                        d[name] = self.txn_json(d[name], locate)
                if "txns" in d:
                    d["txns"] = [self.txn_json(t, locate) for t in d["txns"]]
                d["explanation"] = self.case_text(kind, c, locate)
                out.append(d)
            anomalies[kind] = out
        return {"model": self.kind, "consistency_models": self.models,
                "valid": self.valid, "result": self.result,
                "anomaly_types": self.anomaly_types, "forbidden": self.forbidden,
                "not": self.not_models, "also_not": self.also_not,
                "counts": {**self.counts, **{k: len(v) for k, v in sorted(self.anomalies.items())}},
                "version_sources": self.sources, "anomalies": anomalies}

    def text(self, locate: Callable[[int], str] | None = None, max_cases: int = 3) -> str:
        """The verdict in words: the headline, the models ruled out, each cycle step by step."""
        claimed = ", ".join(self.models)
        n = self.counts.get("transactions", len(self.txns))
        if self.valid is True:
            head = f"consistent with {claimed}"
        elif self.valid is False:
            head = f"NOT {claimed}"
        else:
            head = f"unknown for {claimed}"
        lines = [f"{head} ({self.kind}, {n} transaction{'s' if n != 1 else ''})"]
        if self.anomaly_types:
            lines.append("anomalies: " + ", ".join(
                t + (" (forbidden)" if t in self.forbidden else "") for t in self.anomaly_types))
        if self.not_models:
            lines.append("ruled out: " + ", ".join(self.not_models)
                         + (f" (and so {', '.join(self.also_not)})" if self.also_not else ""))
        for kind in self.anomaly_types:
            if kind in self.cycles:
                case = self.cycles[kind]
                names = self.names(case)
                lines.append(f"{kind}: a cycle of {len(case.steps)} transactions")
                for a, _, _ in case.steps:
                    t = self.txns[a]
                    where = f" ({locate(a)})" if locate is not None else ""
                    lines.append(f"  {names[a]} = txn {a} by {process_name(t.process)} {show_txn(t)}{where}")
                steps = [self.explain_step(s, names) for s in case.steps]
                for i, s in enumerate(steps):
                    text = f"{s['from']} < {s['to']} ({s['type']}), because {s['explanation']}"
                    last = i == len(steps) - 1
                    lines.append(f"  - {'However, ' + text + ': a contradiction!' if last else text}")
                continue
            cases = self.anomalies[kind]
            lines.append(f"{kind}: {len(cases)} case{'s' if len(cases) != 1 else ''}")
            for c in cases[:max_cases]:
                lines.append("  " + self.case_text(kind, c, locate))
            if len(cases) > max_cases:
                lines.append(f"  ... and {len(cases) - max_cases} more")
        return "\n".join(lines)


def _cycle_exists(g: DepGraph, nodes: Sequence[int], process: bool, realtime: bool,
                  tick: Callable[[], None]) -> list[dict[str, Any]]:
    """Elle's cycle-exists cases in one component (elle.txn/cycle-exists-cases)."""
    found: list[dict[str, Any]] = []
    redundant: set[str] = set()
    memo: dict[tuple[int, int], list[list[int]]] = {}
    for model, rels, ext in CYCLE_EXISTS:
        if model in redundant:
            continue
        if ("process" in rels and not process) or ("realtime" in rels and not realtime):
            continue
        mask = sum(_REL_BITS[r] for r in rels.split())
        ext_mask = sum(_REL_BITS[r] for r in ext.split())
        if (mask, ext_mask) not in memo:
            tick()
            memo[(mask, ext_mask)] = (extension_sccs(g, mask, ext_mask, nodes) if ext_mask
                                      else sccs(g, mask, nodes))
        comps = memo[(mask, ext_mask)]
        if not comps:
            continue
        comp = min(comps, key=lambda c: (len(c), c))
        subgraph = f"{' '.join(rels.split())}" + (f" extended by single {ext}" if ext else "")
        found.append({"type": f"{model}-cycle-exists", "model": model, "not": friendly(model),
                      "subgraph": subgraph, "scc_size": len(comp), "scc": comp})
        redundant |= models_implying(model)
    return found


def check_txns(h: TxnHistory, models: Sequence[str] = (DEFAULT_MODEL,), *, wfr_keys: bool = False,
               sequential_keys: bool = False, linearizable_keys: bool = False, timeout: float | None = None,
               budget: int = DEFAULT_BUDGET, clock: Callable[[], float] = time.monotonic) -> TxnVerdict:
    """Check a transactional history against the consistency ``models`` its user claims (Elle's
    friendly or canonical names; default strict-serializable).  ``wfr_keys``,
    ``sequential_keys`` and ``linearizable_keys`` are Elle's version-order options for
    rw-register.  ``timeout`` (seconds) bounds the cycle search: when it passes the verdict is
    ``unknown`` unless a forbidden anomaly was already found.  Raises ValueError for an unknown
    model."""
    for m in models:
        if not known_model(m):
            raise ValueError(f"unknown consistency model {m!r}")
    start = clock()
    deadline = math.inf if timeout is None else start + timeout

    def tick() -> None:
        if clock() > deadline:
            raise Deadline()

    process, realtime = needs_graphs(models)
    g = DepGraph(len(h.txns))
    sources: list[str] = []
    if h.kind == LIST_APPEND:
        anomalies = infer_list_append(h, g)
    else:
        anomalies, sources = infer_rw_register(h, g, wfr_keys, sequential_keys, linearizable_keys)
    if process:
        link_process(h, g)
    if realtime:
        link_realtime(h, g)
    if g.edge_count() == 0:
        anomalies["empty-transaction-graph"] = [{}]
    cycles: dict[str, CycleCase] = {}
    exists: dict[str, dict[str, Any]] = {}
    components = sccs(g, WW | WR | RW | PROCESS | REALTIME)
    searching = ""
    try:
        for comp in components:
            tick()
            cases = _cycle_exists(g, comp, process, realtime, tick)
            for c in cases:
                old = exists.get(c["type"])
                if old is None or c["scc_size"] < old["scc_size"]:
                    exists[c["type"]] = c
            impossible = impossible_models([c["type"] for c in cases])
            possible = {m for m, _, _ in CYCLE_EXISTS} - impossible
            redundant = set(CYCLE_TYPES) & prohibited_anomalies(possible)
            for name in CYCLE_TYPES:
                if name in redundant:
                    continue
                if name.endswith("-process") and not process:
                    continue
                if name.endswith("-realtime") and not realtime:
                    continue
                searching = name
                cyc = find_cycle(g, SPECS[name], comp, budget, tick)
                if cyc is None:
                    continue
                old_case = cycles.get(name)
                if old_case is None or len(cyc) < len(old_case.steps):
                    cycles[name] = CycleCase(name, cyc)
                redundant |= implied_anomalies([name])
    except Deadline:
        anomalies["cycle-search-timeout"] = [{"searching": searching or "cycles"}]
    # cycle-exists cases ruled out by a cycle found, or by another anomaly, are dropped
    others = set(anomalies) | set(cycles)
    ruled = impossible_models(others - UNKNOWN_ANOMALIES)
    for name, c in sorted(exists.items()):
        if c["model"] not in ruled:
            anomalies[name] = [c]
    found = set(anomalies) | set(cycles)
    all_found = found | set(exists)
    prohibited = prohibited_anomalies(models)
    forbidden = sorted(found & prohibited)
    valid: bool | str = False if forbidden else ("unknown" if found & UNKNOWN_ANOMALIES else True)
    not_models, also_not = boundary(all_found - UNKNOWN_ANOMALIES)
    counts = {"transactions": len(h.txns), "ok": sum(t.ok for t in h.txns),
              "edges": g.edge_count(), "components": len(components),
              "largest_component": max((len(c) for c in components), default=0)}
    return TxnVerdict(h.kind, list(models), valid, anomalies, cycles, not_models, also_not, forbidden,
                      h.txns, g, sources, counts, clock() - start, h.timed)


__all__ = ["BASE_CYCLES", "SPECS", "CycleCase", "TxnVerdict", "check_txns"]
