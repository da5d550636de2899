"""Effect requests yielded by sans-I/O protocol code, and the results sent back.

Protocol code is written as generators: ``result = yield Read(key)``.  It never
touches a socket, a thread or a clock; an interpreter (the simulated world,
a real backend, a replay) performs each effect and sends the result back.

Storage effects return a :class:`StoreResult`.  Its ``outcome`` is one of the
:class:`Outcome` values, mapped exactly from the storage service's answer;
``TIMEOUT`` means the outcome is unknown (the request may have been applied).
"""

from __future__ import annotations

import enum
import typing
from collections.abc import Callable, Generator, Hashable
from dataclasses import dataclass, field
from typing import Any

from model.explorable import Keyer
from model.runtime.frozen import fills_dict


class Outcome(enum.Enum):
    """What a storage request answered, independent of the service."""

    OK = 200
    NOT_FOUND = 404
    CONFLICT = 409  # S3 ConditionalRequestConflict, Azure 409 on create-if-absent
    PRECONDITION_FAILED = 412
    THROTTLED = 429
    UNAVAILABLE = 503
    TIMEOUT = 0  # no answer: the request may or may not have been applied

    unknown: bool
    """True when the request may have been applied or not (a retryable error)."""


# set on each member rather than computed by a property: an enum member's attribute costs a tenth
# of a property that reads members (Python 3.11's EnumType.__getattr__ keeps class lookups slow)
for _outcome in Outcome:
    _outcome.unknown = _outcome in (Outcome.CONFLICT, Outcome.THROTTLED, Outcome.UNAVAILABLE, Outcome.TIMEOUT)
_OK = Outcome.OK


@fills_dict
@dataclass(frozen=True)
class StoreResult:
    """Answer to a storage effect.

    ``version`` is the object's version tag after the call (S3 ETag, GCS
    generation as a decimal string, Azure ETag); ``body`` is set for reads.
    ``attempts`` counts the client's tries (SDK retries included) and
    ``ambiguous`` is true when an earlier attempt of the same call had an
    unknown outcome, so a 412 may have been caused by our own earlier write.
    """

    outcome: Outcome
    body: bytes | None = None
    version: str | None = None
    attempts: int = 1
    ambiguous: bool = False

    @property
    def ok(self) -> bool:
        return self.outcome is _OK


BARE: dict[Outcome, StoreResult] = {outcome: StoreResult(outcome) for outcome in Outcome}
"""The answer of each outcome without body or version (immutable, so one object serves every request)."""


# ---- storage ----------------------------------------------------------------


@fills_dict
@dataclass(frozen=True)
class Read:
    """Read an object: OK with body and version, or NOT_FOUND."""

    key: str


@fills_dict
@dataclass(frozen=True)
class CreateIfAbsent:
    """Write only if no object exists (S3 If-None-Match: *, GCS ifGenerationMatch=0)."""

    key: str
    body: bytes

    def __explore_state__(self, k: Keyer) -> Hashable:
        """The body as the workload declares its content."""
        return (self.key, k.body(self.key, self.body))


@fills_dict
@dataclass(frozen=True)
class ReplaceIfMatch:
    """Write only if the object's version tag equals ``version`` (S3 If-Match, GCS ifGenerationMatch)."""

    key: str
    body: bytes
    version: str

    def __explore_state__(self, k: Keyer) -> Hashable:
        """The body as the workload declares its content."""
        return (self.key, k.body(self.key, self.body), k.name(self.version))


@fills_dict
@dataclass(frozen=True)
class Put:
    """Unconditional write."""

    key: str
    body: bytes

    def __explore_state__(self, k: Keyer) -> Hashable:
        """The body as the workload declares its content."""
        return (self.key, k.body(self.key, self.body))


@fills_dict
@dataclass(frozen=True)
class FencedPut:
    """Write ``key`` only if ``fence_key`` still has version ``fence_version``.

    Models a protected resource that checks a fencing token atomically with
    the write (PRECONDITION_FAILED when the token is stale).
    """

    key: str
    body: bytes
    fence_key: str
    fence_version: str

    def __explore_state__(self, k: Keyer) -> Hashable:
        """The body as the workload declares its content."""
        return (self.key, k.body(self.key, self.body), self.fence_key, k.name(self.fence_version))


@fills_dict
@dataclass(frozen=True)
class ListPrefix:
    """List keys under a prefix; the result's body is the newline-joined sorted keys."""

    prefix: str


@fills_dict
@dataclass(frozen=True)
class Delete:
    """Unconditional delete."""

    key: str


StorageEffect = Read | CreateIfAbsent | ReplaceIfMatch | Put | FencedPut | ListPrefix | Delete
STORAGE_EFFECTS: frozenset[type] = frozenset(typing.get_args(StorageEffect))  # for type(effect) tests


# ---- local ----------------------------------------------------------------------


@fills_dict
@dataclass(frozen=True)
class Now:
    """Read this node's wall clock (epoch milliseconds, possibly skewed).

    ``monotonic=True`` reads the node's monotonic clock instead (Java's
    ``System.nanoTime`` in ms): it drifts with the node's clock rate but has
    no offset and never jumps; its origin is arbitrary (0 at the run's start).
    """

    monotonic: bool = False


@fills_dict
@dataclass(frozen=True)
class Sleep:
    """Sleep ``ms`` milliseconds of this node's time.

    ``interruptible`` (Java's ``Thread.sleep``) lets a pending interrupt end the
    sleep, if the task's interrupt policy allows it; ``False`` stands for work
    the thread does meanwhile (computation, not a wait), which no interrupt stops.
    """

    ms: int
    interruptible: bool = True


@fills_dict
@dataclass(frozen=True)
class Record:
    """Append an event to the history (Jepsen style: type is invoke/ok/fail/info)."""

    f: str
    type: str
    value: Any = None


WRITER_TASK = "writer"  # the task the kernel starts on every node for its workload's writer


@fills_dict
@dataclass(frozen=True)
class Spawn:
    """Start ``body`` as a concurrent task of this node named ``name``.

    Returns True when the task started, False when the interpreter could not
    start it (a fault plan can make that happen).
    """

    name: str
    body: Generator[Any, Any, Any] = field(compare=False)


@fills_dict
@dataclass(frozen=True)
class Cancel:
    """Stop task ``name`` of this node: at once if it sleeps, else after its current step.

    Returns True once the task is stopped (or was not running).  With
    ``timeout_ms`` the caller waits at most that long (its own time) and gets
    False when the task is still in its step (Hudi's ``stopHeartbeat`` gives up
    after 15 s); the task still stops after that step.
    """

    name: str
    timeout_ms: int | None = None


@fills_dict
@dataclass(frozen=True)
class Interrupt:
    """Interrupt task ``name`` of this node (Java's Thread.interrupt).

    The task gets :class:`Interrupted` thrown at its current sleep or its next effect.
    """

    name: str


@fills_dict
@dataclass(frozen=True)
class IsAlive:
    """True while task ``name`` of this node is running."""

    name: str


@fills_dict
@dataclass(frozen=True)
class CheckInterrupt:
    """An explicit interruption point (Java's ``Thread.interrupted()`` check).

    Handled by the kernel's task loop itself (``model/runtime/taskloop.py``): a pending interrupt is
    thrown here when the task's interrupt policy honours checkpoints; otherwise
    it answers None and the task goes on.
    """


@fills_dict
@dataclass(frozen=True)
class ShutdownHook:
    """Register (``hook`` set) or remove (``hook`` None) a JVM shutdown hook of this node under ``key``.

    On a graceful shutdown of the node (``faults.shutdowns``) the interpreter
    runs every registered hook as a task of its own, while the node's other
    tasks keep running, waits for them, then stops the node.  A crash runs none.
    """

    key: str
    hook: Callable[[], Generator[Any, Any, Any]] | None = field(default=None, compare=False)


Effect = (
    StorageEffect | Now | Sleep | Record | Spawn | Cancel | Interrupt | IsAlive | CheckInterrupt
    | ShutdownHook
)


class Interrupted(Exception):
    """Thrown into a task that was interrupted (see :class:`Interrupt`)."""


ProtocolGen = Generator[Effect, Any, Any]
