"""What a transactional history says about itself: version orders, dependency edges, and the
anomalies found without a cycle.  Elle's inference (elle.list-append, elle.rw-register, elle.core):

**list-append.**  Every read of a key shows a prefix of its version order; the longest read is the
order (every other read must be a prefix of it: else ``incompatible-order``).  An append
``v`` to ``k`` by T2 follows the element before ``v`` in that order (or, when ``v`` was never
read, the last element read): its writer T1 gives ``T1 -ww-> T2``, and every transaction whose
read of ``k`` ended at that element gives ``R -rw-> T2``.  A read ending in ``v`` gives
``writer(v) -wr-> R``.  A key appended once and never read has the order ``[v]``.

**rw-register.**  Only external reads (the first micro-op on a key, when it is a read) and
external writes (the last write of a key) link transactions.  A read of ``v`` gives
``writer(v) -wr-> R``.  Version orders come from what Elle infers: the initial state ``nil``
precedes every value; with ``wfr_keys`` a transaction's external read precedes its external
write of the same key; with ``sequential_keys`` the process order, with ``linearizable_keys``
the real-time order of transactions orders the values they touched (the last value one
transaction touched precedes the first value the next one touched).  An order source that
makes a version order cyclic is left out and reported as ``cyclic-versions``.  Each version
edge ``v1 -> v2`` gives ``writer(v1) -ww-> writer(v2)`` and ``reader(v1) -rw-> writer(v2)``.

**Incomplete transactions.**  ``fail`` transactions never took effect: a read of their writes
is ``G1a`` (and, for list-append, a committed append after one in the order a
``dirty-update``); they are no nodes of the graph.  ``info`` transactions may or may not
have: their writes enter the graph, their reads are unknown, so they get edges in, and edges out
only where a read observed their writes (the read proves they happened).  (Elle's rw-register
leaves ``info`` writes out of its read index altogether; here they are in it, so a read of one
gives its ``wr`` edge, as list-append does.)
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable
from typing import Any

from model.checkers.txn_graph import PROCESS, REALTIME, RW, WR, WW, DepGraph, tarjan
from model.checkers.txn_history import APPEND, FAIL, INFO, OK, READ, WRITE, Txn, TxnHistory

INIT = ("init",)  # the initial (empty) state of a list-append key in explanations

Cases = dict[str, list[dict[str, Any]]]


def _add(cases: Cases, kind: str, case: dict[str, Any]) -> None:
    cases.setdefault(kind, []).append(case)


def _sort_key(v: Any) -> tuple[str, str]:
    return (type(v).__name__, repr(v))


# ---------------------------------------------------------------- list-append


def _la_internal(t: Txn) -> dict[str, Any] | None:
    """A read disagreeing with the transaction's own earlier appends and reads (Elle's op-int-case)."""
    state: dict[Any, tuple[bool, tuple[Any, ...]]] = {}  # key -> (prefix known, elements)
    for i, (f, k, v) in enumerate(t.mops):
        if f == APPEND:
            known, els = state.get(k, (False, ()))
            state[k] = (known, (*els, v))
        else:
            if k in state:
                known, els = state[k]
                bad = v != els if known else (len(v) < len(els) or tuple(v[len(v) - len(els):]) != els)
                if bad:
                    expected = list(els) if known else ["...", *els]
                    return {"txn": t.id, "mop": i, "expected": expected}
            state[k] = (True, tuple(v))
    return None


def _la_future_read(t: Txn) -> dict[str, Any] | None:
    """A read observing an element the transaction appends only later (Elle's future-read)."""
    seen: dict[tuple[Any, Any], int] = {}
    for i, (f, k, v) in enumerate(t.mops):
        if f == APPEND:
            if (k, v) in seen:
                return {"txn": t.id, "mop": seen[(k, v)], "element": v}
        else:
            for e in v:
                seen.setdefault((k, e), i)
    return None


def infer_list_append(h: TxnHistory, g: DepGraph) -> Cases:
    """Add the ww, wr and rw edges of a list-append history to ``g``; return the non-cycle
    anomalies (G1a, G1b, internal, future-read, duplicate-elements, incompatible-order,
    dirty-update, lost-update)."""
    cases: Cases = {}
    txns = h.txns
    writer: dict[tuple[Any, Any], int] = {}  # (k, element) -> ok/info txn that appended it
    failed: dict[tuple[Any, Any], int] = {}
    any_writer: dict[tuple[Any, Any], Txn] = {}
    intermediate: dict[tuple[Any, Any], int] = {}
    appends_per_key: dict[Any, list[Any]] = {}
    for t in txns:
        last: dict[Any, Any] = {}
        for f, k, v in t.mops:
            if f != APPEND:
                continue
            any_writer[(k, v)] = t
            if t.type == FAIL:
                failed[(k, v)] = t.id
            else:
                writer[(k, v)] = t.id
                appends_per_key.setdefault(k, []).append(v)
            if k in last:
                intermediate[(k, last[k])] = t.id
            last[k] = v
    reads: dict[Any, set[tuple[Any, ...]]] = {}
    read_index: dict[tuple[Any, Any], list[int]] = {}  # (k, last element or INIT) -> ok readers
    lost: dict[tuple[Any, tuple[Any, ...]], list[int]] = {}
    for t in txns:
        if t.type != OK:
            continue
        c = _la_internal(t)
        if c is not None:
            _add(cases, "internal", c)
        c = _la_future_read(t)
        if c is not None:
            _add(cases, "future-read", c)
        first_read: dict[Any, tuple[Any, ...]] = {}
        wrote: set[Any] = set()
        for i, (f, k, v) in enumerate(t.mops):
            if f == APPEND:
                if k not in wrote and k in first_read:
                    lost.setdefault((k, first_read[k]), []).append(t.id)
                wrote.add(k)
                continue
            if k not in first_read and k not in wrote:
                first_read[k] = v
            if v:
                reads.setdefault(k, set()).add(v)
            read_index.setdefault((k, v[-1] if v else INIT), []).append(t.id)
            for e in v:
                if (k, e) in failed:
                    _add(cases, "G1a", {"txn": t.id, "mop": i, "writer": failed[(k, e)], "element": e})
            if v:
                w = intermediate.get((k, v[-1]))
                if w is not None and w != t.id:
                    _add(cases, "G1b", {"txn": t.id, "mop": i, "writer": w, "element": v[-1]})
                counts: dict[Any, int] = {}
                for e in v:
                    counts[e] = counts.get(e, 0) + 1
                dups = {e: n for e, n in counts.items() if n > 1}
                if dups:
                    dup_list = sorted(dups.items(), key=lambda x: _sort_key(x[0]))
                    _add(cases, "duplicate-elements", {"txn": t.id, "mop": i, "duplicates": dup_list})
    for (k, v), ids in sorted(lost.items(), key=lambda x: (_sort_key(x[0][0]), _sort_key(x[0][1]))):
        if len(ids) > 1:
            _add(cases, "lost-update", {"key": k, "value": list(v), "txns": sorted(ids)})
    # version orders: the longest read, every other a prefix of it
    order: dict[Any, list[Any]] = {}
    for k in sorted(set(reads) | set(appends_per_key), key=_sort_key):
        vals = sorted(reads.get(k, ()), key=lambda r: (len(r), [_sort_key(x) for x in r]))
        if not vals:
            if len(appends_per_key.get(k, ())) == 1:
                order[k] = list(appends_per_key[k])
            continue
        for a, b in zip(vals, vals[1:], strict=False):
            if b[:len(a)] != a:
                _add(cases, "incompatible-order", {"key": k, "values": [list(a), list(b)]})
                break
        order[k] = list(dict.fromkeys(vals[-1]))
    index = {k: {e: i for i, e in enumerate(vs)} for k, vs in order.items()}
    _la_dirty_updates(order, any_writer, cases)
    # edges
    for t in txns:
        if t.type == FAIL:
            continue
        for f, k, v in t.mops:
            if f == READ:
                src = writer.get((k, v[-1])) if t.type == OK and v else None
                if src is not None:
                    g.link(src, t.id, WR, (k, v[-1]))
                continue
            vs = order.get(k, [])
            pos = index.get(k, {}).get(v)
            prev: Any = (vs[pos - 1] if pos > 0 else INIT) if pos is not None else (vs[-1] if vs else INIT)
            if prev is not INIT:
                w = writer.get((k, prev))
                if w is not None:
                    g.link(w, t.id, WW, (k, prev, v))
            for r in read_index.get((k, prev), ()):
                g.link(r, t.id, RW, (k, prev, v))
    return cases


def _la_dirty_updates(order: dict[Any, list[Any]], any_writer: dict[tuple[Any, Any], Txn],
                      cases: Cases) -> None:
    """A committed append after a failed one in a key's version order (Elle's dirty-update-cases)."""
    for k, vs in order.items():
        t1_type, t1_id = OK, -1
        seen: list[Any] = []
        for v in vs:
            t2 = any_writer.get((k, v))
            if t2 is None:
                continue
            seen = [*seen, v]
            if t2.type == OK:
                if t1_type == FAIL:
                    _add(cases, "dirty-update", {"key": k, "values": seen, "txns": [t1_id, t2.id]})
                t1_type, t1_id, seen = OK, t2.id, [v]
            elif t2.type == FAIL and t1_type != FAIL:
                t1_type, t1_id, seen = FAIL, t2.id, [v]
            # info: keep the range going


# ---------------------------------------------------------------- rw-register


def ext_reads(t: Txn) -> dict[Any, Any]:
    """Key -> value of the transaction's external reads (a read that is its first micro-op on the key)."""
    out: dict[Any, Any] = {}
    seen: set[Any] = set()
    for f, k, v in t.mops:
        if k not in seen:
            seen.add(k)
            if f == READ:
                out[k] = v
    return out


def ext_writes(t: Txn) -> dict[Any, Any]:
    """Key -> the last value the transaction wrote to it."""
    return {k: v for f, k, v in t.mops if f == WRITE}


def _rr_internal(t: Txn) -> dict[str, Any] | None:
    state: dict[Any, Any] = {}
    for i, (f, k, v) in enumerate(t.mops):
        if f == READ and k in state and state[k] != v:
            return {"txn": t.id, "mop": i, "expected": state[k]}
        state[k] = v
    return None


def _link_version(vg: dict[Any, dict[Any, set[Any]]], k: Any, v1: Any, v2: Any) -> None:
    if v1 != v2:
        vg.setdefault(k, {}).setdefault(v1, set()).add(v2)


def _cyclic(vg: dict[Any, dict[Any, set[Any]]]) -> list[tuple[Any, list[Any]]]:
    found = []
    for k in sorted(vg, key=_sort_key):
        graph = vg[k]
        nodes = sorted(set(graph) | {b for bs in graph.values() for b in bs}, key=_sort_key)
        ids = {v: i for i, v in enumerate(nodes)}
        succ = [sorted(ids[b] for b in graph.get(v, ())) for v in nodes]
        for comp in tarjan(range(len(nodes)), succ.__getitem__):
            found.append((k, [nodes[i] for i in comp]))
    return found


VersionGraphs = dict[Any, dict[Any, set[Any]]]  # key -> version -> later versions


def _merge(a: VersionGraphs, b: VersionGraphs) -> VersionGraphs:
    out = {k: {v: set(s) for v, s in m.items()} for k, m in a.items()}
    for k, m in b.items():
        for v, s in m.items():
            out.setdefault(k, {}).setdefault(v, set()).update(s)
    return out


def _first_value(t: Txn, k: Any, er: dict[Any, Any], ew: dict[Any, Any]) -> tuple[bool, Any]:
    if t.type == OK:
        if k in er:
            return True, er[k]
        return (True, ew[k]) if k in ew else (False, None)
    return (True, ew[k]) if t.type == INFO and k in ew else (False, None)


def _last_value(t: Txn, k: Any, er: dict[Any, Any], ew: dict[Any, Any]) -> tuple[bool, Any]:
    if k in ew:
        return True, ew[k]
    return (True, er[k]) if t.type == OK and k in er else (False, None)


def _order_versions(h: TxnHistory, ers: list[dict[Any, Any]], ews: list[dict[Any, Any]],
                    realtime: bool) -> dict[Any, dict[Any, set[Any]]]:
    """Version edges from the process order (sequential keys) or the real-time order (linearizable
    keys): the last value an ok transaction touched precedes the first value the next transaction
    to touch the key touched (Elle's transaction-graph->version-graphs)."""
    vg: dict[Any, dict[Any, set[Any]]] = {}
    by_key: dict[Any, list[Txn]] = {}
    for t in h.txns:
        if t.type == FAIL:
            continue
        er, ew = ers[t.id], ews[t.id]
        for k in set(ew) | (set(er) if t.type == OK else set()):
            by_key.setdefault(k, []).append(t)
    for k, ts in by_key.items():
        if not realtime:
            chains: dict[Any, list[Txn]] = {}
            for t in ts:
                if t.type == OK:
                    chains.setdefault(t.process, []).append(t)
            for chain in chains.values():
                chain.sort(key=lambda t: t.id)
                for a, b in zip(chain, chain[1:], strict=False):
                    ok1, v1 = _last_value(a, k, ers[a.id], ews[a.id])
                    ok2, v2 = _first_value(b, k, ers[b.id], ews[b.id])
                    if ok1 and ok2:
                        _link_version(vg, k, v1, v2)
            continue
        by_inv = sorted(ts, key=lambda t: (t.invoke, t.id))
        invokes = [t.invoke for t in by_inv]
        # suffix minimum of the completions of ok transactions, by invoke order
        suffix = [float("inf")] * (len(by_inv) + 1)
        for i in range(len(by_inv) - 1, -1, -1):
            t = by_inv[i]
            suffix[i] = min(suffix[i + 1], t.complete if t.type == OK else float("inf"))
        for a in ts:
            if a.type != OK:
                continue
            ok1, v1 = _last_value(a, k, ers[a.id], ews[a.id])
            if not ok1:
                continue
            lo = bisect.bisect_right(invokes, a.complete)
            m = suffix[lo]
            hi = bisect.bisect_right(invokes, m) if m != float("inf") else len(by_inv)
            for b in by_inv[lo:hi]:
                ok2, v2 = _first_value(b, k, ers[b.id], ews[b.id])
                if ok2:
                    _link_version(vg, k, v1, v2)
    return vg


def infer_rw_register(h: TxnHistory, g: DepGraph, wfr_keys: bool = False, sequential_keys: bool = False,
                      linearizable_keys: bool = False) -> tuple[Cases, list[str]]:
    """Add the ww, wr and rw edges of a rw-register history to ``g``; return the non-cycle
    anomalies (G1a, G1b, internal, lost-update, cyclic-versions) and the version-order sources
    used."""
    cases: Cases = {}
    txns = h.txns
    ers = [ext_reads(t) for t in txns]
    ews = [ext_writes(t) for t in txns]
    failed: dict[tuple[Any, Any], int] = {}
    intermediate: dict[tuple[Any, Any], int] = {}
    ext_writer: dict[tuple[Any, Any], int] = {}
    for t in txns:
        last: dict[Any, Any] = {}
        for f, k, v in t.mops:
            if f != WRITE:
                continue
            if t.type == FAIL:
                failed[(k, v)] = t.id
            if k in last:
                intermediate[(k, last[k])] = t.id
            last[k] = v
        if t.type != FAIL:
            for k, v in ews[t.id].items():
                ext_writer[(k, v)] = t.id
    lost: dict[tuple[Any, Any], list[int]] = {}
    ext_readers: dict[tuple[Any, Any], list[int]] = {}
    for t in txns:
        if t.type != OK:
            continue
        c = _rr_internal(t)
        if c is not None:
            _add(cases, "internal", c)
        first_read: dict[Any, Any] = {}
        wrote: set[Any] = set()
        for i, (f, k, v) in enumerate(t.mops):
            if f == WRITE:
                if k not in wrote and k in first_read:
                    lost.setdefault((k, first_read[k]), []).append(t.id)
                wrote.add(k)
                continue
            if k not in first_read and k not in wrote:
                first_read[k] = v
            if v is None:
                continue
            if (k, v) in failed:
                _add(cases, "G1a", {"txn": t.id, "mop": i, "writer": failed[(k, v)], "element": v})
            w = intermediate.get((k, v))
            if w is not None and w != t.id:
                _add(cases, "G1b", {"txn": t.id, "mop": i, "writer": w, "element": v})
        for k, v in ers[t.id].items():
            ext_readers.setdefault((k, v), []).append(t.id)
            if v is not None:
                w = ext_writer.get((k, v))
                if w is not None:
                    g.link(w, t.id, WR, (k, v))
    for (k, v), ids in sorted(lost.items(), key=lambda x: (_sort_key(x[0][0]), _sort_key(x[0][1]))):
        if len(ids) > 1:
            _add(cases, "lost-update", {"key": k, "value": v, "txns": sorted(ids)})
    # version graphs, source by source; a source that makes one cyclic is left out
    sources: list[tuple[str, dict[Any, dict[Any, set[Any]]]]] = []
    initial: dict[Any, dict[Any, set[Any]]] = {}
    for t in txns:
        if t.type == FAIL:
            continue
        vals: Iterable[tuple[Any, Any]] = list(ews[t.id].items()) + (list(ers[t.id].items()) if t.ok else [])
        for k, v in vals:
            if v is not None:
                _link_version(initial, k, None, v)
    sources.append(("initial-state", initial))
    if wfr_keys:
        wfr: dict[Any, dict[Any, set[Any]]] = {}
        for t in txns:
            if t.ok:
                for k, v in ers[t.id].items():
                    if v is not None and k in ews[t.id]:
                        _link_version(wfr, k, v, ews[t.id][k])
        sources.append(("wfr-keys", wfr))
    if sequential_keys:
        sources.append(("sequential-keys", _order_versions(h, ers, ews, realtime=False)))
    if linearizable_keys:
        sources.append(("linearizable-keys", _order_versions(h, ers, ews, realtime=True)))
    vg: dict[Any, dict[Any, set[Any]]] = {}
    used: list[str] = []
    for name, graph in sources:
        merged = _merge(vg, graph)
        cyc = _cyclic(merged)
        if cyc:
            for k, comp in cyc:
                _add(cases, "cyclic-versions", {"key": k, "scc": comp, "sources": [*used, name]})
            continue
        vg = merged
        used.append(name)
    for k in sorted(vg, key=_sort_key):
        for v1 in sorted(vg[k], key=_sort_key):
            w1 = ext_writer.get((k, v1)) if v1 is not None else None
            readers = ext_readers.get((k, v1), ())
            for v2 in sorted(vg[k][v1], key=_sort_key):
                w2 = ext_writer.get((k, v2))
                if w2 is None:
                    continue
                if w1 is not None:
                    g.link(w1, w2, WW, (k, v1, v2))
                for r in readers:
                    g.link(r, w2, RW, (k, v1, v2))
    return cases, used


# ---------------------------------------------------------------- process and real-time order


def link_process(h: TxnHistory, g: DepGraph) -> None:
    """Process edges: each ok transaction to the next ok transaction of its process (elle.core)."""
    last: dict[Any, int] = {}
    for t in sorted(h.txns, key=lambda t: (t.invoke, t.id)):
        if t.type != OK:
            continue
        if t.process in last:
            g.link(last[t.process], t.id, PROCESS, (t.process,))
        last[t.process] = t.id


def link_realtime(h: TxnHistory, g: DepGraph) -> None:
    """Real-time edges, a transitive reduction: an ok transaction that completed before another was
    invoked precedes it (equal times are concurrent).  As elle.core's realtime-graph: at each
    invoke, every ok transaction completed and not yet followed by another completed one links to
    the invoked transaction."""
    events: list[tuple[float, int, int]] = []
    for t in h.txns:
        if t.type == FAIL:
            continue
        events.append((t.invoke, 0, t.id))
        if t.type == OK:
            events.append((t.complete, 1, t.id))
    events.sort()
    frontier: set[int] = set()
    preds: dict[int, frozenset[int]] = {}
    for _, kind, tid in events:
        if kind == 0:
            preds[tid] = frozenset(frontier)
            for a in frontier:
                g.link(a, tid, REALTIME, ())
        else:
            frontier -= preds.get(tid, frozenset())
            frontier.add(tid)
