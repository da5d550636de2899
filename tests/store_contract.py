"""The store contract: one script of storage effects, answered alike by the model's store and real servers.

:func:`trace` runs the script through any ``perform(effect) -> StoreResult`` under a
key prefix and returns what a client can observe of each step: the outcome, the body
of a read or a listing, and the version tags by their equality structure (tag #0, #1,
...: GCS generations and S3 ETags differ in value, not in structure).  The model's
:class:`model.runtime.objectstore.ObjectStore` of the matching flavor must give the same trace
as every launched server of that dialect (``tests/test_backends_store_contract.py``);
a difference is a bug in the model (or a server deviation to list).
"""

from __future__ import annotations

from collections.abc import Callable

from model.runtime.effects import (
    CreateIfAbsent,
    Delete,
    FencedPut,
    ListPrefix,
    Put,
    Read,
    ReplaceIfMatch,
    StorageEffect,
    StoreResult,
)

Step = tuple[str, str, str | None, str | None]  # (step, outcome, body, version as #n)


def trace(perform: Callable[[StorageEffect], StoreResult], prefix: str) -> list[Step]:
    """Run the contract's script under ``prefix`` (keys relative to it appear in bodies) and trace it."""
    tags: dict[str, str] = {}
    steps: list[Step] = []
    last: dict[str, str] = {}

    def tag(version: str | None) -> str | None:
        if version is None:
            return None
        return tags.setdefault(version, f"#{len(tags)}")

    def do(name: str, effect: StorageEffect) -> StoreResult:
        r = perform(effect)
        body = r.body.decode().replace(prefix, "") if r.body is not None else None
        steps.append((name, r.outcome.name, body, tag(r.version) if r.ok else None))
        if r.ok and r.version is not None:
            last[name] = r.version
        return r

    a, b, fence = f"{prefix}a/obj", f"{prefix}b/obj", f"{prefix}fence"
    do("read missing", Read(a))
    do("replace missing", ReplaceIfMatch(a, b"x", "1"))
    do("delete missing", Delete(a))
    one = do("create", CreateIfAbsent(a, b"one"))
    do("create again", CreateIfAbsent(a, b"other"))
    do("read", Read(a))
    two = do("replace", ReplaceIfMatch(a, b"two", one.version or ""))
    do("replace stale", ReplaceIfMatch(a, b"three", one.version or ""))
    do("replace same body", ReplaceIfMatch(a, b"two", two.version or ""))
    do("put", Put(b, b"four"))
    do("put again", Put(b, b"four"))
    do("list all", ListPrefix(prefix))
    do("list one", ListPrefix(f"{prefix}b/"))
    do("list none", ListPrefix(f"{prefix}none/"))
    f1 = do("create fence", CreateIfAbsent(fence, b"token-1"))
    do("fenced put", FencedPut(b, b"fenced", fence, f1.version or ""))
    do("replace fence", ReplaceIfMatch(fence, b"token-2", f1.version or ""))
    do("fenced put stale", FencedPut(b, b"stale", fence, f1.version or ""))
    do("read fenced", Read(b))
    do("delete", Delete(a))
    do("read deleted", Read(a))
    do("delete again", Delete(a))
    do("create after delete", CreateIfAbsent(a, b"one"))
    return steps
