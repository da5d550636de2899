"""An in-memory object store with the conditional-write semantics of S3, GCS and Azure Blob.

S3: the version tag is the ETag, the MD5 of the body (quoted hex, as S3 sends it).
``If-None-Match: *`` answers 412 when the key exists; ``If-Match`` answers 412 on
a mismatch and 404 when the key is absent; deleting a missing key answers 204.

GCS: the version tag is the generation, a number that grows with every write
to the bucket.  ``ifGenerationMatch=0`` means "absent"; any other mismatch,
including a missing object, answers 412; deleting a missing object answers 404.

Azure: the version tag is an opaque ETag, new on every write (a rewrite of the same
body gets a new one).  ``If-Match`` on a missing blob answers 412; a create on an
existing blob is Azure's 409 BlobAlreadyExists, which the Azure backend maps to 412
(``backends/azure_blob.py``); deleting a missing blob answers 404.  The tests hold
every launched server to its flavor (``tests/test_backends_store_contract.py``).

The store applies each request atomically at one instant; latency, lost
replies and injected errors are the interpreter's business (see ``sim.py``).
"""

from __future__ import annotations

import hashlib
from collections.abc import Hashable
from dataclasses import dataclass
from typing import Protocol

from model.explorable import Keyer
from model.runtime.effects import (
    BARE,
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

FLAVORS = ("s3", "gcs", "azure")


@fills_dict
@dataclass(frozen=True)
class StoredObject:
    body: bytes
    version: str


class Store(Protocol):
    """What the simulated world needs of a store: the model's own, or a real backend during a replay."""

    flavor: str

    def apply(self, effect: StorageEffect, *, node: str = "-", now: int = 0) -> StoreResult:
        """Execute one storage effect atomically and return the service's answer.

        ``node`` and ``now`` (true ms) say who sent it and when, for stores that log their steps.
        """
        ...

    def peek(self, key: str) -> StoredObject | None:
        """The object as it is now (for the store-side record of the history), without a request."""
        ...


class ObjectStore:
    """Objects by key; ``apply`` executes one storage effect atomically."""

    def __init__(self, flavor: str = "s3") -> None:
        if flavor not in FLAVORS:
            raise ValueError(f"storage.flavor: {flavor!r} is not one of {', '.join(FLAVORS)}")
        self.flavor = flavor
        self.objects: dict[str, StoredObject] = {}
        self._reads: dict[str, StoreResult] = {}  # the answer to a read of each object, made once per version
        self._generation = 1_700_000_000_000_000  # GCS generations are large microsecond-like numbers

    __explore_excluded__ = {  # not in its state, each with why it does not decide the run's future
        "_generation": "the GCS/Azure generation counter: it only spells the next version tag, a name the "
                       "store invents (renamed in the key) and compared by equality only",
        "_reads": "a cache of the answer to a read of each object at its version, dropped on every write",
        "flavor": "the scenario's storage flavor, a constant of the run",
    }

    def __explore_state__(self, k: Keyer) -> Hashable:
        """Each object's body (as the workload declares it) and version tag (a name the store invented).  The
        GCS generation counter only picks the next tag's spelling, and the read cache is a cache."""
        return tuple((key, k.body(key, o.body), k.name(o.version)) for key, o in sorted(self.objects.items()))

    def peek(self, key: str) -> StoredObject | None:
        """The object under ``key``, or None."""
        return self.objects.get(key)

    def _new_version(self, body: bytes) -> str:
        if self.flavor == "s3":
            return '"' + hashlib.md5(body, usedforsecurity=False).hexdigest() + '"'
        self._generation += 1
        return f'"0x{self._generation:X}"' if self.flavor == "azure" else str(self._generation)

    def _write(self, key: str, body: bytes) -> StoreResult:
        version = self._new_version(body)
        self.objects[key] = StoredObject(body, version)
        self._reads.pop(key, None)
        return StoreResult(Outcome.OK, None, version)

    def _precondition(self, key: str, expected: str) -> Outcome | None:
        """Check an If-Match / ifGenerationMatch precondition; None when it holds."""
        current = self.objects.get(key)
        if current is None:
            return Outcome.NOT_FOUND if self.flavor == "s3" else Outcome.PRECONDITION_FAILED
        if current.version != expected:
            return Outcome.PRECONDITION_FAILED
        return None

    def apply(self, effect: StorageEffect, *, node: str = "-", now: int = 0) -> StoreResult:
        """Execute one storage effect and return the service's answer (``node``/``now`` are unused)."""
        # type tests, not a match statement: this runs for every request of a simulation
        if type(effect) is Read:  # contenders read one version again and again: one answer for all
            read = self._reads.get(effect.key)
            if read is None:
                obj = self.objects.get(effect.key)
                if obj is None:
                    return BARE[Outcome.NOT_FOUND]
                read = self._reads[effect.key] = StoreResult(Outcome.OK, obj.body, obj.version)
            return read
        if type(effect) is ReplaceIfMatch:
            failed = self._precondition(effect.key, effect.version)
            return BARE[failed] if failed else self._write(effect.key, effect.body)
        if type(effect) is Put:
            return self._write(effect.key, effect.body)
        if type(effect) is CreateIfAbsent:
            if effect.key in self.objects:
                return BARE[Outcome.PRECONDITION_FAILED]
            return self._write(effect.key, effect.body)
        if type(effect) is FencedPut:
            fence = self.objects.get(effect.fence_key)
            if fence is None or fence.version != effect.fence_version:
                return BARE[Outcome.PRECONDITION_FAILED]
            return self._write(effect.key, effect.body)
        if type(effect) is ListPrefix:
            keys = sorted(k for k in self.objects if k.startswith(effect.prefix))
            return StoreResult(Outcome.OK, body="\n".join(keys).encode())
        if type(effect) is Delete:
            # S3 answers 204 to deleting a missing key; GCS answers 404
            self._reads.pop(effect.key, None)
            if self.objects.pop(effect.key, None) is None and self.flavor != "s3":
                return BARE[Outcome.NOT_FOUND]
            return BARE[Outcome.OK]
        raise TypeError(f"not a storage effect: {effect!r}")


def is_write(effect: StorageEffect) -> bool:
    """True for effects that may change the store."""
    return type(effect) in _WRITES


_WRITES = frozenset({CreateIfAbsent, ReplaceIfMatch, Put, FencedPut, Delete})


def effect_key(effect: StorageEffect) -> str:
    """The key a request is about (a listing's prefix)."""
    return effect.prefix if isinstance(effect, ListPrefix) else effect.key
