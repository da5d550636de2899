"""Symmetry reduction: writers, keys and values are interchangeable.

The specification treats writers, keys and values as model values compared
only for equality, the initial state is invariant under renaming them, and so
is ConsistentRead.  Breadth-first search over one canonical representative per
orbit therefore finds the same verdict, the same depth and the same shortest
counterexample length as the full search.  (Timestamps and salts are ordered,
so they are not permuted.)

The canonical form: for each permutation of keys and of values, rename, then
sort the writers by (record, holds the table lock, file-group locks held) and
renumber the lock owners; keep the smallest result.  Sorting picks one
representative of every writer orbit, so the minimum over key and value
permutations is a function of the whole orbit.
"""

from __future__ import annotations

from itertools import permutations

from model.cow.spec import (
    W_ENTRIES,
    W_KEY,
    W_VALUE,
    Files,
    KvLog,
    State,
    Writer,
)

_Head = tuple[tuple[Writer, ...], int, tuple[int, ...], tuple[int, ...]]


class Canonicalizer:
    """Maps a state to the canonical representative of its symmetry orbit.

    Renamings of writer records, file groups and commit logs are cached per
    permutation (the same components recur in many states), and the full
    renaming is built only for the permutations whose sorted writers and locks
    are smallest, which usually leaves one.
    """

    def __init__(self, n_keys: int, n_values: int) -> None:
        self.n_keys = n_keys
        perms: list[tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...], tuple[int, ...]]] = []
        for kp in permutations(range(n_keys)):
            kinv = tuple(kp.index(j) for j in range(n_keys))
            for vp in permutations(range(n_values)):
                vmap = (0, *(v + 1 for v in vp))
                perms.append((kp, kinv, vp, vmap))
        self._perms = perms
        self._wcache: list[dict[Writer, Writer]] = [{} for _ in perms]
        self._fcache: list[dict[Files, Files]] = [{} for _ in perms]
        self._lcache: list[dict[KvLog, KvLog]] = [{} for _ in perms]
        self._hcache: dict[tuple[tuple[Writer, ...], int, tuple[int, ...]], _Head] = {}

    def _writer(self, pi: int, wr: Writer) -> Writer:
        cache = self._wcache[pi]
        try:
            return cache[wr]
        except KeyError:
            kp, kinv, vp, vmap = self._perms[pi]
            out = wr if len(wr) == 1 else (
                *wr[:W_KEY], kp[wr[W_KEY]], vp[wr[W_VALUE]], *wr[W_VALUE + 1:W_ENTRIES],
                *_rename_entries(wr, W_ENTRIES, kinv, vmap))
            cache[wr] = out
            return out

    def _files(self, pi: int, files: Files) -> Files:
        cache = self._fcache[pi]
        try:
            return cache[files]
        except KeyError:
            _kp, kinv, _vp, vmap = self._perms[pi]
            out: Files = tuple(tuple((sl[0], sl[1], *_rename_entries(sl, 2, kinv, vmap)) for sl in group)
                               for group in files)
            cache[files] = out
            return out

    def _log(self, pi: int, log: KvLog) -> KvLog:
        cache = self._lcache[pi]
        try:
            return cache[log]
        except KeyError:
            _kp, kinv, vp, _vmap = self._perms[pi]
            out: KvLog = tuple(tuple((op, vp[v], ts) for op, v, ts in log[i]) for i in kinv)
            cache[log] = out
            return out

    def _head(self, writers: tuple[Writer, ...], tlock: int, fglock: tuple[int, ...]) -> _Head:
        key = (writers, tlock, fglock)
        try:
            return self._hcache[key]
        except KeyError:
            pass
        best: tuple[tuple[Writer, ...], int, tuple[int, ...]] | None = None
        tied: list[int] = []
        for pi in range(len(self._perms)):
            rw = writers if pi == 0 else tuple(self._writer(pi, wr) for wr in writers)
            head = _sort_head(rw, tlock, fglock)
            if best is None or head < best:
                best = head
                tied = [pi]
            elif head == best:
                tied.append(pi)
        assert best is not None
        out = (best[0], best[1], best[2], tuple(tied))
        self._hcache[key] = out
        return out

    def canonical(self, s: State) -> State:
        """The least writer-sorted renaming of ``s`` over all key and value permutations."""
        writers, tlock, fglock, mapping, tl, files, ctr, kvlog, opc = s
        hw, htl, hfl, tied = self._head(writers, tlock, fglock)
        if len(tied) == 1:
            pi = tied[0]
            if pi == 0:
                return (hw, htl, hfl, mapping, tl, files, ctr, kvlog, opc)
            kinv = self._perms[pi][1]
            return (hw, htl, hfl, tuple(mapping[i] for i in kinv), tl, self._files(pi, files), ctr,
                    self._log(pi, kvlog), opc)
        tail: tuple[tuple[int, ...], Files, KvLog] | None = None
        for pi in tied:
            if pi == 0:
                cand = (mapping, files, kvlog)
            else:
                kinv = self._perms[pi][1]
                cand = (tuple(mapping[i] for i in kinv), self._files(pi, files), self._log(pi, kvlog))
            if tail is None or cand < tail:
                tail = cand
        assert tail is not None
        return (hw, htl, hfl, tail[0], tl, tail[1], ctr, tail[2], opc)


def _rename_entries(e: tuple[int, ...], off: int, kinv: tuple[int, ...],
                    vmap: tuple[int, ...]) -> tuple[int, ...]:
    return tuple(vmap[e[off + i]] for i in kinv)


_SWAP = (0, 2, 1)


def _sort_head(writers: tuple[Writer, ...], tlock: int,
               fglock: tuple[int, ...]) -> tuple[tuple[Writer, ...], int, tuple[int, ...]]:
    """Writers sorted by (record, holds table lock, file-group locks held), owners renumbered."""
    n = len(writers)
    if n == 1:
        return writers, tlock, fglock
    if n == 2:
        a, b = writers
        if a < b or (a == b and (tlock == 1, tuple(x == 1 for x in fglock))
                     <= (tlock == 2, tuple(x == 2 for x in fglock))):
            return writers, tlock, fglock
        return (b, a), _SWAP[tlock], tuple(_SWAP[x] for x in fglock)
    order = sorted(range(n), key=lambda i: (writers[i], tlock == i + 1, tuple(x == i + 1 for x in fglock)))
    if all(order[i] == i for i in range(n)):
        return writers, tlock, fglock
    newid = [0] * (n + 1)
    for pos, old in enumerate(order):
        newid[old + 1] = pos + 1
    return tuple(writers[i] for i in order), newid[tlock], tuple(newid[x] for x in fglock)
