"""Hudi's lock audit trail as the provider writes it (``StorageLockProviderAuditService``), sans-I/O.

With ``<base>/.hoodie/.locks/audit_enabled.json`` holding
``{"STORAGE_LOCK_AUDIT_SERVICE_ENABLED":true}`` (written by ``hudi-cli locks audit
enable``), a provider creates its audit service at its first successful
acquisition (``StorageBasedLockProvider#tryLock``, apache/hudi 54cb1a57 line 396)
and records:

- ``START`` after each acquisition, with the acquisition's timestamp;
- ``RENEW`` after each successful renewal, with the renewal's timestamp;
- ``END`` only when the expire write succeeds, with the clock read just before it.

Each record holds ``ownerId``, ``transactionStartTime`` (the first acquisition's
timestamp), ``timestamp`` (the writer's own clock), ``state``,
``lockExpiration`` (timestamp + validity) and ``lockHeld`` (the provider's
``actuallyHoldsLock()`` when recording).  The service keeps every record of the
provider in a buffer and rewrites the whole file ``audit/<transactionStartTime>_<ownerId>.jsonl``
with an unconditional PUT after each one (``#recordOperation`` / ``#writeAuditFile``);
a failed write is logged and ignored.  One provider can record several
START..END cycles in one file.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Hashable
from dataclasses import dataclass, field

from model.explorable import Keyer
from model.runtime.effects import Put

AUDIT_FOLDER = "audit"
ENABLE_FILE = "audit_enabled.json"
ENABLED_FIELD = "STORAGE_LOCK_AUDIT_SERVICE_ENABLED"
STATES = ("START", "RENEW", "END")
_JSON_SPACE = " \t\n\r"  # the whitespace JSON allows before a value
_JAVA_TRIM = "".join(map(chr, range(33)))  # String#trim drops every char <= U+0020 at both ends


def _no_constants(name: str) -> object:
    raise ValueError(f"{name} is not JSON (Jackson rejects it)")


_DECODER = json.JSONDecoder(parse_constant=_no_constants)


def locks_folder(base_path: str) -> str:
    """``<base>/.hoodie/.locks`` (StorageLockClient#getLockFolderPath)."""
    return f"{base_path.rstrip('/')}/.hoodie/.locks"


def enable_key(base_path: str) -> str:
    """Where ``locks audit enable`` writes the enable file."""
    return f"{locks_folder(base_path)}/{ENABLE_FILE}"


def enable_body(enabled: bool = True) -> bytes:
    """The enable file as Jackson writes it."""
    return json.dumps({ENABLED_FIELD: enabled}, separators=(",", ":")).encode()


@functools.lru_cache(maxsize=64)  # every provider reads the same enable file
def is_enabled(body: bytes | None) -> bool:
    """AuditServiceFactory#isAuditEnabled: ``enabledNode != null && enabledNode.asBoolean(false)``.

    Jackson's ``readTree`` reads the first JSON value and ignores what follows it; ``asBoolean(false)`` is
    true for the literal ``true``, for the text ``"true"`` (after Java's ``trim``) and for a non-zero
    integer; false for everything else (a float, ``null``, an object, other text).  A body that does not
    parse, or whose root is not an object with the field, is off (any exception: off).
    """
    if body is None:
        return False
    try:
        text = body.decode(errors="replace")  # new String(bytes, UTF_8): bad bytes become U+FFFD
        raw, _ = _DECODER.raw_decode(text, len(text) - len(text.lstrip(_JSON_SPACE)))
    except ValueError:
        return False
    return isinstance(raw, dict) and jackson_as_boolean(raw.get(ENABLED_FIELD))


def jackson_as_boolean(value: object) -> bool:
    """``JsonNode#asBoolean(false)`` of a parsed JSON value (jackson-databind 2.x node classes)."""
    if isinstance(value, bool):  # BooleanNode
        return value
    if isinstance(value, int):  # IntNode, LongNode, BigIntegerNode: _value != 0
        return value != 0
    if isinstance(value, str):  # TextNode: "true" / "false" after String#trim (drops chars <= U+0020)
        return value.strip(_JAVA_TRIM) == "true"
    return False  # DoubleNode, NullNode, ObjectNode, ArrayNode and a missing field: the default


def audit_key(base_path: str, transaction_start: int, owner: str) -> str:
    """``audit/<transactionStartTime>_<ownerId>.jsonl`` under the locks folder."""
    return f"{locks_folder(base_path)}/{AUDIT_FOLDER}/{transaction_start}_{owner}.jsonl"


def record_line(owner: str, transaction_start: int, timestamp: int, state: str, lock_expiration: int,
                lock_held: bool) -> str:
    """One JSONL record, compact as Jackson writes it (the bytes of ``json.dumps`` with ``(",", ":")``)."""
    held = "true" if lock_held else "false"
    return (f'{{"ownerId":{json.dumps(owner)},"transactionStartTime":{transaction_start},'
            f'"timestamp":{timestamp},"state":{json.dumps(state)},"lockExpiration":{lock_expiration},'
            f'"lockHeld":{held}}}')


@dataclass
class AuditTrail:
    """One provider's audit service: its file and the records written so far."""

    base_path: str
    owner: str
    transaction_start: int
    validity_ms: int
    lines: list[str] = field(default_factory=list)

    # the writer makes it; its heartbeat appends RENEW records (``model/explore/shared.py``)
    __explore_shared__ = {"base_path": "c", "owner": "c", "transaction_start": "c", "validity_ms": "c",
                          "lines": "m"}

    __explore_excluded__ = {  # not in its state, each with why it does not decide the run's future
        "key": "a cache (cached_property) of audit_key(base_path, transaction_start, owner), all three in "
               "the state",
    }

    def __explore_state__(self, k: Keyer) -> Hashable:
        """Its file (owner, transaction start: a wall time) and the records so far (text, as written)."""
        return (self.base_path, k.name(self.owner), k.wall(self.transaction_start), self.validity_ms,
                tuple(self.lines))

    @functools.cached_property
    def key(self) -> str:
        return audit_key(self.base_path, self.transaction_start, self.owner)

    def record(self, state: str, timestamp: int, lock_held: bool) -> Put:
        """Append one record and return the PUT that rewrites the whole file."""
        self.lines.append(record_line(self.owner, self.transaction_start, timestamp, state,
                                      timestamp + self.validity_ms, lock_held))
        return Put(self.key, "".join(line + "\n" for line in self.lines).encode())
