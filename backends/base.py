"""The interpreter interface: a backend performs the model's storage effects on a real service.

Every backend has ``perform(effect) -> StoreResult`` for the storage effects of
:mod:`model.runtime.effects`.  The service's answers are mapped to :class:`Outcome`
exactly: 412, 409, 404, 429, any 5xx to UNAVAILABLE, and a timeout or a broken
connection to TIMEOUT (the request may have been applied).  Any other answer
(400, 403, ...) is not a protocol outcome but a misconfiguration or a refused
request, and raises :class:`StorageError`.

Each backend takes an endpoint URL, so that a fault-injecting proxy can sit
between the client and the server, and confines every key under a table
prefix (:mod:`backends.keys`).

SDK-level automatic retries are off in every client and ``perform`` makes exactly
one attempt: retries are the client policy's (``model/runtime/client.py``), applied by the
runtime kernel in every world, or by :func:`backends.client.call` for code that
talks to a backend directly.

The raw answer of the last ``perform`` (HTTP status and service error code) is
kept per thread and can be read with :meth:`Backend.last_answers`; the
conformance suite grades status codes from it.
"""

from __future__ import annotations

import abc
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from backends.keys import KeyGuard
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
from model.runtime.frozen import fills_dict


class StorageError(RuntimeError):
    """An answer that is no protocol outcome (e.g. 400 or 403): a bad request or a misconfiguration."""

    def __init__(self, status: int | None, code: str, message: str) -> None:
        super().__init__(f"storage answered {status} {code}: {message}")
        self.status = status
        self.code = code


@fills_dict
@dataclass(frozen=True)
class RawAnswer:
    """What the service said to one attempt: HTTP status (None: no answer) and its error code."""

    status: int | None
    code: str
    outcome: Outcome


def outcome_for_status(status: int) -> Outcome | None:
    """Map an HTTP status to an outcome; None when it is not a protocol outcome."""
    if 200 <= status < 300:
        return Outcome.OK
    if status >= 500:
        return Outcome.UNAVAILABLE
    return {
        404: Outcome.NOT_FOUND,
        409: Outcome.CONFLICT,
        412: Outcome.PRECONDITION_FAILED,
        429: Outcome.THROTTLED,
    }.get(status)


class Backend(abc.ABC):
    """Base of all backends.  Subclasses implement the ``_op`` methods for one attempt.

    ``dialect`` is ``s3``, ``gcs`` or ``azure`` (whose documented behaviour the
    conformance suite grades against); ``client`` names the SDK.
    """

    dialect: str = ""
    client: str = ""

    def __init__(self, prefix: str) -> None:
        self.guard = KeyGuard(prefix)
        self.prefix = self.guard.prefix
        self._local = threading.local()

    # ---- the interpreter -------------------------------------------------------------

    def perform(self, effect: StorageEffect) -> StoreResult:
        """Make one attempt of one storage effect and return its result (see the module doc)."""
        self._local.answers = []
        op = _OPS.get(type(effect))
        if op is None:
            raise TypeError(f"not a storage effect: {effect!r}")
        return op(self, effect)

    def last_answers(self) -> list[RawAnswer]:
        """Raw answers of this thread's last ``perform`` call (several for a read-check-write)."""
        return [RawAnswer(*a) for a in getattr(self._local, "answers", [])]

    def _note(self, status: int | None, code: str, outcome: Outcome) -> None:
        answers = getattr(self._local, "answers", None)
        if answers is None:
            answers = self._local.answers = []
        answers.append((status, code, outcome))  # a RawAnswer only when asked for: most never are

    def _answer(self, status: int | None, code: str, message: str = "") -> Outcome:
        """Record an answer and map it; raises StorageError for non-protocol statuses."""
        if status is None:
            self._note(None, code, Outcome.TIMEOUT)
            return Outcome.TIMEOUT
        outcome = outcome_for_status(status)
        if outcome is None:
            self._note(status, code, Outcome.UNAVAILABLE)
            raise StorageError(status, code, message)
        self._note(status, code, outcome)
        return outcome

    # ---- FencedPut: not atomic on real storage ---------------------------------------

    def _fenced_put(self, key: str, body: bytes, fence_key: str, fence_version: str) -> StoreResult:
        """Read-check-write: read ``fence_key``, then write ``key`` only if the version matched.

        NOT atomic on real object storage: the fence can change between the read
        and the write, so this only approximates a resource that checks fencing
        tokens.  Do not grade fencing safety on real storage with it.
        """
        fence = self._read(fence_key)
        if fence.outcome is Outcome.NOT_FOUND or (fence.ok and fence.version != fence_version):
            return StoreResult(Outcome.PRECONDITION_FAILED, version=fence.version)
        if not fence.ok:
            return StoreResult(fence.outcome)
        return self._put(key, body)

    # ---- one attempt of each operation -----------------------------------------------

    @abc.abstractmethod
    def _read(self, key: str) -> StoreResult: ...

    @abc.abstractmethod
    def _create_if_absent(self, key: str, body: bytes) -> StoreResult: ...

    @abc.abstractmethod
    def _replace_if_match(self, key: str, body: bytes, version: str) -> StoreResult: ...

    @abc.abstractmethod
    def _put(self, key: str, body: bytes) -> StoreResult: ...

    @abc.abstractmethod
    def _list_prefix(self, prefix: str) -> StoreResult: ...

    @abc.abstractmethod
    def _delete(self, key: str) -> StoreResult: ...

    def ensure_container(self) -> None:  # noqa: B027 - optional hook
        """Create the bucket/container if it does not exist (for launched servers)."""

    def close(self) -> None:  # noqa: B027 - optional hook
        """Release the client's connections."""

    def describe(self) -> str:
        """One line naming the client, endpoint and prefix."""
        return f"{self.client} prefix={self.prefix}"

    def __enter__(self) -> Backend:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


# ``perform``'s dispatch: each storage effect's key(s) checked against the prefix, then its one-attempt method
_OPS: dict[type, Callable[[Backend, Any], StoreResult]] = {
    Read: lambda b, e: b._read(b.guard.key(e.key)),
    CreateIfAbsent: lambda b, e: b._create_if_absent(b.guard.key(e.key), e.body),
    ReplaceIfMatch: lambda b, e: b._replace_if_match(b.guard.key(e.key), e.body, e.version),
    Put: lambda b, e: b._put(b.guard.key(e.key), e.body),
    FencedPut: lambda b, e: b._fenced_put(b.guard.key(e.key), e.body, b.guard.key(e.fence_key),
                                          e.fence_version),
    ListPrefix: lambda b, e: b._list_prefix(b.guard.list_prefix(e.prefix)),
    Delete: lambda b, e: b._delete(b.guard.key(e.key)),
}
