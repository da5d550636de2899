"""Readable text for transitions and states of the copy-on-write model."""

from __future__ import annotations

from model.cow.spec import (
    ACTION_NAMES,
    APPEND_COMMIT,
    APPEND_REQUESTED,
    COMPLETED,
    KEY_LOOKUP,
    OBTAIN_TS,
    OCC_CHECK_ACTION,
    OP_NAMES,
    READ_MERGE_TARGET,
    READY,
    STATE_NAMES,
    UPDATE_INDEXES,
    W_FID,
    W_KEY,
    W_MTS,
    W_OP,
    W_SALT,
    W_TS,
    W_VALUE,
    WRITE_FILE_SLICES,
    WRITER_FAIL,
    State,
)

VALUE_NAMES = "ABCDEFGHI"


def _entries(e: tuple[int, ...]) -> str:
    items = [f"k{i + 1}={VALUE_NAMES[v - 1]}" for i, v in enumerate(e) if v]
    return "{" + ", ".join(items) + "}"


def _instant_id(ts: int, salt: int, with_salt: bool) -> str:
    return f"{ts}" + (f"~s{salt}" if with_salt else "")


def describe_transition(prev: State, action: int, w: int, nxt: State, with_salt: bool = False) -> str:
    """One line: which writer took which TLA+ action, with what effect."""
    name = ACTION_NAMES[action]
    before = prev[0][w]
    after = nxt[0][w]
    aborted = after[0] == READY and action not in (APPEND_COMMIT,)
    head = f"w{w + 1} {name}"
    if action == OBTAIN_TS:
        return (f"{head}: {OP_NAMES[after[W_OP]]} k{after[W_KEY] + 1}"
                + (f"={VALUE_NAMES[after[W_VALUE]]}" if after[W_OP] == 0 else "")
                + f" with action ts {_instant_id(after[W_TS], after[W_SALT], with_salt)}")
    iid = _instant_id(before[W_TS], before[W_SALT], with_salt)
    if action == APPEND_REQUESTED:
        return f"{head}: aborts, requested instant {iid} exists" if aborted else \
            f"{head}: writes {iid}.commit.requested"
    if action == KEY_LOOKUP:
        if aborted:
            return f"{head}: k{before[W_KEY] + 1} absent, nothing to delete; aborts"
        return f"{head}: {OP_NAMES[after[W_OP]]} of k{after[W_KEY] + 1} goes to file group {after[W_FID]}"
    if action == READ_MERGE_TARGET:
        if aborted:
            return f"{head}: aborts (merge target newer than its ts, or inflight {iid} exists)"
        if after[W_MTS] == 0:
            return f"{head}: no slice to merge in fg{after[W_FID]}; writes {iid}.commit.inflight"
        return (f"{head}: merges slice {after[W_MTS]} of fg{after[W_FID]} {_entries(after[W_MTS + 2:])}; "
                f"writes {iid}.commit.inflight")
    if action == WRITE_FILE_SLICES:
        if aborted:
            return f"{head}: aborts, slice {iid} of fg{before[W_FID]} exists"
        group = nxt[5][before[W_FID] - 1]
        sl = next(s for s in group if s[0] == before[W_TS] and s[1] == before[W_SALT])
        return f"{head}: writes slice {iid} of fg{before[W_FID]} {_entries(sl[2:])}"
    if action == UPDATE_INDEXES:
        if aborted:
            return f"{head}: primary-key conflict on k{before[W_KEY] + 1}; aborts"
        return f"{head}: maps k{before[W_KEY] + 1} to fg{before[W_FID]}"
    if action == OCC_CHECK_ACTION:
        return f"{head}: conflict on fg{before[W_FID]}; aborts" if aborted else f"{head}: no conflict"
    if action == APPEND_COMMIT:
        if prev[4] == nxt[4] and prev[7] == nxt[7]:
            return f"{head}: completed instant {iid} exists; nothing written"
        return (f"{head}: writes {iid}.commit (completed, fg{before[W_FID]}); "
                f"{OP_NAMES[before[W_OP]]} k{before[W_KEY] + 1}"
                + ("" if before[W_OP] == 1 else f"={VALUE_NAMES[before[W_VALUE]]}") + " committed")
    if action == WRITER_FAIL:
        return f"{head}: fails before writing the completed instant {iid}"
    return head


def describe_state(s: State, with_salt: bool = False) -> str:
    """A compact multi-part summary of timeline, file groups and index."""
    tl = " ".join(f"{_instant_id(e[0], e[2], with_salt)}.{STATE_NAMES[e[1]]}"
                  + (f"(fg{e[3]})" if e[1] == COMPLETED else "") for e in s[4])
    files = " ".join(f"fg{i + 1}:[" + " ".join(f"{_instant_id(sl[0], sl[1], with_salt)}{_entries(sl[2:])}"
                                               for sl in g) + "]" for i, g in enumerate(s[5]))
    index = " ".join(f"k{i + 1}->fg{f}" for i, f in enumerate(s[3]) if f)
    return f"timeline: {tl or '-'} | files: {files} | index: {index or '-'}"
