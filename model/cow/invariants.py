"""ConsistentRead, the invariant of the TLA+ specification, over encoded states.

For every key and every time ``ts`` from 1 to the highest action time on the
timeline, a snapshot read at ``ts`` sees, in each file group, the file slice of
the newest completed instant with action time ``<= ts`` (all of them if several
share that time).  The value expected at ``ts`` is the last committed
operation on the key (in commit order) whose time is ``<= ts``; a delete
expects no value.  The read must return exactly that value from every slice
that has the key, and no slice may have the key when nothing is expected.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from model.cow.spec import COMPLETED, DELETE, Files, KvLog, State, Timeline, find_slice


@dataclass(frozen=True)
class ReadViolation:
    """A read at ``ts`` of ``key`` that does not return the committed value.

    ``expected`` is the value the committed operations imply (None: absent);
    ``found`` lists ``(file_group, value)`` for every visible slice holding the key.
    """

    key: int
    ts: int
    expected: int | None
    found: tuple[tuple[int, int], ...]

    @property
    def kind(self) -> str:
        """A short classification of the anomaly."""
        groups = {fg for fg, _ in self.found}
        values = {v for _, v in self.found}
        if len(groups) > 1 and len(values) > 1:
            return "key visible in two file groups with different values"
        if self.expected is None:
            return "deleted or never-committed value visible"
        if not self.found:
            return "committed value lost"
        return "wrong value read (lost update or overwritten file)"

    def describe(self, key_names: str = "k", value_names: str = "ABCDEFGHI") -> str:
        """One line for people: what the read returned and what it should have."""
        exp = "nothing" if self.expected is None else value_names[self.expected]
        got = ", ".join(f"{value_names[v]} in fg{fg}" for fg, v in self.found) or "nothing"
        return (f"ConsistentRead violated ({self.kind}): read of {key_names}{self.key + 1} at ts {self.ts} "
                f"should return {exp} but returns {got}")


def consistent_read_violations(timeline: Timeline, files: Files, kv_log: KvLog) -> Iterator[ReadViolation]:
    """Every ConsistentRead violation, by ts, then key (lazily: the first costs only its own search)."""
    max_ts = max((e[0] for e in timeline), default=0)
    completed = [(e[0], e[2], e[3]) for e in timeline if e[1] == COMPLETED]
    n_keys = len(kv_log)
    for ts in range(1, max_ts + 1):
        newest: dict[int, int] = {}
        for cts, _salt, fid in completed:
            if cts <= ts and cts > newest.get(fid, 0):
                newest[fid] = cts
        visible = []
        for cts, salt, fid in completed:
            if newest.get(fid) == cts:
                sl = find_slice(files[fid - 1], cts, salt)
                assert sl is not None, "a completed instant always names a written slice"
                visible.append((fid, sl))
        for key in range(n_keys):
            expected: int | None = None
            for op, value, ots in kv_log[key]:
                if ots <= ts:
                    expected = None if op == DELETE else value
            found = tuple(sorted((fid, sl[2 + key] - 1) for fid, sl in visible if sl[2 + key] != 0))
            if expected is None:
                if found:
                    yield ReadViolation(key, ts, None, found)
            elif not found or any(v != expected for _, v in found):
                yield ReadViolation(key, ts, expected, found)


def check_consistent_read(timeline: Timeline, files: Files, kv_log: KvLog) -> ReadViolation | None:
    """Return the first ConsistentRead violation (by ts, then key), or None when it holds."""
    return next(consistent_read_violations(timeline, files, kv_log), None)


def consistent_read(state: State) -> ReadViolation | None:
    """ConsistentRead on a whole state (it depends on timeline, files and the commit log only)."""
    return check_consistent_read(state[4], state[5], state[7])
