"""The dependency graph of a transactional history: edges, strongly connected components, cycles.

Nodes are transaction ids.  An edge ``a -> b`` carries a set of relations (bits): ``ww`` (b
overwrote a's version), ``wr`` (b read a's version), ``rw`` (a read a version b overwrote; an
anti-dependency), ``process`` (the same process ran a, then b) and ``realtime`` (a completed
before b was invoked).  Each relation of an edge keeps the first reason found for it (the key
and the values), so a cycle can be explained step by step.

Strongly connected components are found with Tarjan's algorithm, written iteratively (no
recursion limit).  A cycle of a given anomaly class is searched as Elle searches it: restricted
to one component, starting with an edge of the class's most constrained relation (an ``rw`` for
G-single, G-nonadjacent and G2-item; a ``wr`` for G1c; a ``ww`` or the variant's edge for G0),
then a breadth-first search over (transaction, automaton state) back to the start, so the cycle
found is the shortest through that first edge that the class allows.  Only simple cycles (no
transaction twice) are returned.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

WW, WR, RW, PROCESS, REALTIME = 1, 2, 4, 8, 16
DATA = WW | WR | RW
REL_NAMES = {WW: "ww", WR: "wr", RW: "rw", PROCESS: "process", REALTIME: "realtime"}
BITS = (WW, WR, RW, PROCESS, REALTIME)

# A rw mode: how many anti-dependency edges a cycle class takes, and where
RW_NONE, RW_SINGLE, RW_NONADJACENT, RW_MULTIPLE = "none", "single", "nonadjacent", "multiple"


class Deadline(Exception):
    """The time budget passed (raised by a search through its ``tick`` callback)."""


class DepGraph:
    """A directed graph over transaction ids ``0..n-1`` whose edges carry relation bits."""

    def __init__(self, n: int) -> None:
        self.n = n
        self.out: list[dict[int, int]] = [{} for _ in range(n)]
        self.why: dict[tuple[int, int, int], tuple[Any, ...]] = {}

    def link(self, a: int, b: int, rel: int, why: tuple[Any, ...] = ()) -> None:
        """Add relation ``rel`` to the edge ``a -> b`` (self-edges are dropped), with its reason
        (kept only for the first time the relation is added)."""
        if a == b:
            return
        d = self.out[a]
        m = d.get(b, 0)
        if not m & rel:
            d[b] = m | rel
            self.why[(a, b, rel)] = why

    def edge_count(self) -> int:
        """Number of (a, b) pairs with at least one relation."""
        return sum(len(d) for d in self.out)

    def rels(self, a: int, b: int) -> int:
        """The relation bits of ``a -> b`` (0 when there is no edge)."""
        return self.out[a].get(b, 0)


def tarjan(nodes: Iterable[int], succ: Callable[[int], Iterable[int]]) -> list[list[int]]:
    """Strongly connected components with more than one node (each sorted, the list in order of
    their smallest node), by Tarjan's algorithm with an explicit stack."""
    index: dict[int, int] = {}
    low: dict[int, int] = {}
    on: set[int] = set()
    stack: list[int] = []
    found: list[list[int]] = []
    counter = 0
    for root in nodes:
        if root in index:
            continue
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on.add(root)
        work = [(root, iter(succ(root)))]
        while work:
            v, it = work[-1]
            pushed = False
            for w in it:
                if w not in index:
                    index[w] = low[w] = counter
                    counter += 1
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(succ(w))))
                    pushed = True
                    break
                if w in on and index[w] < low[v]:
                    low[v] = index[w]
            if pushed:
                continue
            work.pop()
            if work:
                u = work[-1][0]
                if low[v] < low[u]:
                    low[u] = low[v]
            if low[v] == index[v]:
                comp: list[int] = []
                while True:
                    w = stack.pop()
                    on.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                if len(comp) > 1:
                    found.append(sorted(comp))
    found.sort(key=lambda c: c[0])
    return found


def sccs(g: DepGraph, mask: int, nodes: Sequence[int] | None = None) -> list[list[int]]:
    """Nontrivial strongly connected components of ``g`` restricted to the relations in ``mask``
    (and to ``nodes``, when given)."""
    out = g.out
    if nodes is None:
        return tarjan(range(g.n), lambda v: [w for w, m in out[v].items() if m & mask])
    member = set(nodes)
    return tarjan(sorted(member), lambda v: [w for w, m in out[v].items() if m & mask and w in member])


def extension_sccs(g: DepGraph, base: int, ext: int, nodes: Sequence[int]) -> list[list[int]]:
    """Components of Elle's sequential extension ``base ∪ (base ; ext)`` restricted to ``nodes``:
    a cycle there is a cycle of ``g`` in which every ``ext`` edge follows a ``base`` edge (for
    snapshot isolation: no two anti-dependencies in a row).  Computed on the product graph
    (node, last edge was ``ext``), which has a cycle exactly when the extension has; each
    component is reported by its transactions."""
    member = set(nodes)
    out = g.out

    def succ(x: int) -> list[int]:
        v, after_ext = x >> 1, x & 1
        nxt: list[int] = []
        for w, m in out[v].items():
            if w not in member:
                continue
            if m & base:
                nxt.append(w << 1)
            if m & ext and not after_ext:
                nxt.append((w << 1) | 1)
        return nxt

    comps = tarjan([v << 1 for v in sorted(member)], succ)
    return [list(c) for c in sorted({tuple(sorted({x >> 1 for x in c})) for c in comps})]


@dataclass(frozen=True)
class CycleSpec:
    """What a cycle of one anomaly class may and must contain.

    ``first``: the relation of the edge the search starts with; ``allowed``: the relations the
    other edges may have besides ``rw``; ``rw``: how anti-dependencies are taken (none; exactly
    one; two or more, never two in a row; two or more, at least two in a row); ``require``: a
    relation (process or realtime) at least one edge must have."""

    name: str
    first: int
    allowed: int
    rw: str
    require: int = 0


Step = tuple[int, int, int]  # (a, b, relation bit)


def _accepting(spec: CycleSpec, s: int) -> bool:
    nrw, last_rw, adj, req = s & 3, (s >> 2) & 1, (s >> 3) & 1, (s >> 4) & 1
    if spec.require and not req:
        return False
    if spec.rw == RW_NONE:
        return True
    if spec.rw == RW_SINGLE:
        return nrw == 1
    if spec.rw == RW_NONADJACENT:
        return nrw >= 2 and not last_rw  # the first edge is rw: the last must not be
    return nrw >= 2 and bool(adj or last_rw)


def _step_state(spec: CycleSpec, s: int, bit: int) -> int:
    """The automaton state after taking relation ``bit`` (-1 when the class forbids it here)."""
    nrw, last_rw, adj, req = s & 3, (s >> 2) & 1, (s >> 3) & 1, (s >> 4) & 1
    if bit == RW:
        if spec.rw == RW_NONE or (spec.rw == RW_SINGLE and nrw >= 1):
            return -1
        if spec.rw == RW_NONADJACENT and last_rw:
            return -1
        if last_rw:
            adj = 1
        nrw = min(2, nrw + 1)
        last_rw = 1
    else:
        if not bit & spec.allowed:
            return -1
        last_rw = 0
        if bit & spec.require:
            req = 1
    return nrw | (last_rw << 2) | (adj << 3) | (req << 4)


def _tables(spec: CycleSpec) -> tuple[list[int], list[bool]]:
    """The automaton of ``spec`` as tables: ``step[(state << 5) | bit]`` and ``accept[state]``."""
    step = [-1] * (32 * 32)
    for st in range(32):
        for bit in BITS:
            step[(st << 5) | bit] = _step_state(spec, st, bit)
    return step, [_accepting(spec, st) for st in range(32)]


def cycle_through(g: DepGraph, spec: CycleSpec, u: int, v: int, member: list[bool],
                  work: list[int], tick: Callable[[], None] | None = None,
                  limit: float = float("inf")) -> list[Step] | None:
    """The shortest simple cycle of class ``spec`` that starts with the edge ``u -> v`` (relation
    ``spec.first``), stays in ``member`` and has fewer than ``limit`` steps; None when the search
    finds none, or when it has taken ``work[0]`` steps (``work[0]`` is decreased by the steps
    taken).  Breadth first, layer by layer, over (transaction, automaton state)."""
    s0 = _step_state(spec, 0, spec.first)
    if s0 < 0:
        return None
    table, accept = _TABLES[spec] if spec in _TABLES else _TABLES.setdefault(spec, _tables(spec))
    out = g.out
    mask = spec.allowed | (RW if spec.rw != RW_NONE else 0)
    start = (v << 5) | s0
    parent: dict[int, tuple[int, int]] = {start: (-1, spec.first)}
    layer = [start]
    depth = 1  # edges taken to reach the layer
    pops = 0
    while layer and depth + 1 < limit:
        nxt: list[int] = []
        for code in layer:
            x, s = code >> 5, (code & 31) << 5
            pops += 1
            if not pops & 1023:
                if tick is not None:
                    tick()
                if pops > work[0]:
                    work[0] -= pops
                    return None
            for y, m in out[x].items():
                m &= mask
                if not m or not member[y]:
                    continue
                for bit in BITS:
                    if not m & bit:
                        continue
                    s2 = table[s | bit]
                    if s2 < 0:
                        continue
                    if y == u:
                        if accept[s2]:
                            path = _path(parent, code, u, bit)
                            if path is not None:
                                work[0] -= pops
                                return [(u, v, spec.first), *path]
                        continue
                    c2 = (y << 5) | s2
                    if c2 not in parent:
                        parent[c2] = (code, bit)
                        nxt.append(c2)
        layer = nxt
        depth += 1
    work[0] -= pops
    return None


_TABLES: dict[CycleSpec, tuple[list[int], list[bool]]] = {}


def _path(parent: dict[int, tuple[int, int]], code: int, u: int, last_bit: int) -> list[Step] | None:
    """The steps from the start to ``code``, then to ``u``; None when a node repeats."""
    rev: list[Step] = []
    nxt, bit = u, last_bit
    while True:
        x = code >> 5
        rev.append((x, nxt, bit))
        prev, pbit = parent[code]
        if prev < 0:
            break
        nxt, bit, code = x, pbit, prev
    rev.reverse()
    nodes = [a for a, _, _ in rev]
    if len(set(nodes)) != len(nodes) or u in nodes:
        return None
    return rev


def classify(steps: Sequence[Step]) -> str:
    """Elle's name for a cycle by its relations: G0 (ww only), G1c (ww and wr), G-single-item
    (exactly one rw), G-nonadjacent-item (two or more rw, never two in a row, counting around the
    cycle), G2-item (two or more, some in a row); ``-realtime`` when a step is realtime, else
    ``-process`` when a step is a process edge."""
    bits = [b for _, _, b in steps]
    rw = bits.count(RW)
    if rw == 1:
        kind = "G-single-item"
    elif rw > 1:
        adjacent = any(bits[i] == RW and bits[i - 1] == RW for i in range(len(bits)))
        kind = "G2-item" if adjacent else "G-nonadjacent-item"
    elif WR in bits:
        kind = "G1c"
    elif WW in bits:
        kind = "G0"
    else:
        raise ValueError(f"cannot classify a cycle of {[REL_NAMES[b] for b in bits]}")
    if REALTIME in bits:
        return kind + "-realtime"
    if PROCESS in bits:
        return kind + "-process"
    return kind


def find_cycle(g: DepGraph, spec: CycleSpec, nodes: Sequence[int], budget: int,
               tick: Callable[[], None] | None = None, more: int = 8) -> list[Step] | None:
    """A short simple cycle of class ``spec`` within ``nodes`` (one component), or None.

    Candidate first edges are tried in order of (a, b); after the first cycle found, ``more``
    further candidates are tried and the shortest cycle kept (ties: the first).  The search
    stops after ``budget`` search steps (a step: one (transaction, state) taken from the queue),
    so its result does not depend on the machine's speed."""
    member = [False] * g.n
    for x in nodes:
        member[x] = True
    out = g.out
    cands = [(a, b) for a in nodes for b, m in sorted(out[a].items()) if m & spec.first and member[b]]
    # candidates likelier to close a cycle of the class first: for G2-item an rw edge next to
    # another rw edge; for a variant, an edge next to a process / realtime edge
    near = 0
    if spec.rw == RW_MULTIPLE:
        near |= RW
    near |= spec.require
    if near:
        into = {b for a in nodes for b, m in out[a].items() if m & near and member[b]}
        cands.sort(key=lambda e: (not (e[0] in into or any(m & near and member[y]
                                                           for y, m in out[e[1]].items())), e))
    best: list[Step] | None = None
    left = more
    work = [budget]
    for a, b in cands:
        if work[0] <= 0:
            break
        c = cycle_through(g, spec, a, b, member, work, tick, len(best) if best is not None else float("inf"))
        if c is not None and classify(c) == spec.name and (best is None or len(c) < len(best)):
            best = c
        if best is not None:
            if left <= 0 or len(best) == 2:
                break
            left -= 1
    return best
