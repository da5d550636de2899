"""The RFC-91 lock file: ``{"expired": bool, "validUntil": epoch ms, "owner": uuid}``.

The version tag (S3 ETag, GCS generation) is not in the JSON; it travels
beside the body as :class:`LockFile.version`.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Hashable
from dataclasses import dataclass

from model.explorable import Keyer
from model.runtime.frozen import fills_dict


@fills_dict
@dataclass(frozen=True)
class LockData:
    expired: bool
    valid_until: int
    owner: str

    def __explore_state__(self, k: Keyer) -> Hashable:
        """validUntil is a wall-clock time, the owner a name the run invented."""
        return (self.expired, k.wall(self.valid_until), k.name(self.owner))

    def encode(self) -> bytes:
        """Serialise as Hudi does (field order expired, validUntil, owner)."""
        # the bytes of json.dumps({...}, separators=(",", ":")), written out: no encoder per lock write
        expired, owner = "true" if self.expired else "false", json.dumps(self.owner)
        body = f'{{"expired":{expired},"validUntil":{self.valid_until},"owner":{owner}}}'.encode()
        if len(_ENCODED) >= 1024:
            _ENCODED.clear()
        _ENCODED[body] = self
        return body

    @staticmethod
    def decode(body: bytes) -> LockData:
        """Parse a lock file body; ValueError names the field that is wrong.

        A body this process encoded is its data at once (the store event of every lock write decodes
        the body just written); others are parsed, and cached (contenders poll the same body again and
        again; a LockData is immutable).
        """
        known = _ENCODED.get(body)
        return known if known is not None else _parse(body)


# bodies made by LockData.encode in this process, with their data (bounded: cleared when full)
_ENCODED: dict[bytes, LockData] = {}


@functools.lru_cache(maxsize=1024)
def _parse(body: bytes) -> LockData:
    try:
        raw = json.loads(body)
    except (ValueError, UnicodeDecodeError) as e:
        raise ValueError(f"lock file: not JSON: {body[:80]!r}") from e
    if not isinstance(raw, dict):
        raise ValueError(f"lock file: not an object: {raw!r}")
    expired, valid_until, owner = raw.get("expired"), raw.get("validUntil"), raw.get("owner")
    if not isinstance(expired, bool):
        raise ValueError(f"lock file: field expired = {expired!r} is not a boolean")
    if not isinstance(valid_until, int) or isinstance(valid_until, bool):
        raise ValueError(f"lock file: field validUntil = {valid_until!r} is not an integer")
    if not isinstance(owner, str):
        raise ValueError(f"lock file: field owner = {owner!r} is not a string")
    return LockData(expired, valid_until, owner)


@fills_dict
@dataclass(frozen=True)
class LockFile:
    """A lock file as read from storage: its data and its version tag."""

    data: LockData
    version: str

    @staticmethod
    @functools.lru_cache(maxsize=1024)
    def read(body: bytes, version: str) -> LockFile:
        """The lock file a read answered (cached like :meth:`LockData.decode`: one version, many reads)."""
        return LockFile(LockData.decode(body), version)
