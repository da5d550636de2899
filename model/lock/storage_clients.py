"""Hudi's storage lock clients: how each storage answer becomes a lock result, or an exception.

``S3StorageLockClient``, ``GCSStorageLockClient`` and ``AzureStorageLockClient``
(apache/hudi 54cb1a57, ``hudi-aws`` / ``hudi-gcp`` / ``hudi-azure``) turn the
service's answer into a ``LockGetResult`` (read) or a ``LockUpsertResult``
(conditional write), and let some failures through as exceptions.  The provider
branches on these results exactly as ``StorageBasedLockProvider`` does.  An
answer of the model is an :class:`~model.runtime.effects.Outcome`; ``TIMEOUT`` stands
for every client-side failure without an HTTP status (S3 ``SdkClientException``
such as ``ApiCallTimeoutException`` or an interrupted call; GCS
``StorageException`` with code 0; on Azure a timeout or I/O failure of the
HTTP pipeline, which is no ``BlobStorageException``), which each client treats
alike.

Azure answers a create (``If-None-Match: *``) of an existing blob with 409
``BlobAlreadyExists``; the model's store and the Azure backend report that answer
as ``PRECONDITION_FAILED`` (``model/runtime/objectstore.py``, ``backends/azure_blob.py``),
so on Azure a create answered ``PRECONDITION_FAILED`` is that 409, which Hudi's
client reads as UNKNOWN_ERROR (neither 412 nor ``CONDITION_NOT_MET``).
"""

from __future__ import annotations

import enum

from model.runtime.effects import Outcome


class GetResult(enum.Enum):
    """Hudi's ``LockGetResult``."""

    SUCCESS = 0
    NOT_EXISTS = 1
    UNKNOWN_ERROR = 2


class UpsertResult(enum.Enum):
    """Hudi's ``LockUpsertResult``."""

    SUCCESS = 0
    ACQUIRED_BY_OTHERS = 1
    UNKNOWN_ERROR = 2
    THROTTLED = 3


class LockClientError(Exception):
    """An exception Hudi's lock client lets through to the provider (and from there to its caller)."""

    def __init__(self, flavor: str, op: str, outcome: Outcome) -> None:
        client_side = outcome is Outcome.TIMEOUT
        kind = {"s3": "SdkClientException" if client_side else "S3Exception",
                "gcs": "StorageException",
                "azure": "RuntimeException" if client_side else "BlobStorageException"}[flavor]
        super().__init__(f"{kind} on {op} ({outcome.name})")
        self.flavor = flavor
        self.op = op
        self.outcome = outcome


def read_result(flavor: str, outcome: Outcome) -> GetResult:
    """``readCurrentLockFile``: the answer to a read of the lock file; raises LockClientError.

    S3 (S3StorageLockClient#readCurrentLockFile, lines 104-132): 404 NOT_EXISTS; 409, 429, 5xx
    UNKNOWN_ERROR; any other S3Exception is rethrown, and a client-side failure (timeout) is not
    caught at all.  GCS (GCSStorageLockClient#readCurrentLockFile / #handleGetStorageException,
    lines 173-188): 404 NOT_EXISTS; 429, 5xx UNKNOWN_ERROR; any other code (409, 0) rethrown.
    Azure (AzureStorageLockClient#readCurrentLockFile / #handleGetStorageException): 404 (or
    ``BLOB_NOT_FOUND``) NOT_EXISTS; 429, 5xx UNKNOWN_ERROR; any other status (409) rethrown; only
    ``BlobStorageException`` is caught, so a client-side failure (timeout) is thrown too.
    """
    if outcome is Outcome.OK:
        return GetResult.SUCCESS
    if outcome is Outcome.NOT_FOUND:
        return GetResult.NOT_EXISTS
    unknown = (Outcome.CONFLICT, Outcome.THROTTLED, Outcome.UNAVAILABLE) if flavor == "s3" else (
        Outcome.THROTTLED, Outcome.UNAVAILABLE)  # GCS, Azure
    if outcome in unknown:
        return GetResult.UNKNOWN_ERROR
    raise LockClientError(flavor, "read", outcome)


def upsert_result(flavor: str, outcome: Outcome, creating: bool, throttled_result: bool) -> UpsertResult:
    """``tryUpsertLockFile``: the answer to a conditional write of the lock file; raises LockClientError.

    ``creating``: there was no previous lock file (S3 ``If-None-Match: *``, GCS generation 0).
    ``throttled_result``: 429 is THROTTLED (PR #18439); before, it fell through to UNKNOWN_ERROR.

    S3 (S3StorageLockClient#tryUpsertLockFile / #handleUpsertS3Exception, lines 135-202): 412
    ACQUIRED_BY_OTHERS; 429 THROTTLED; 409, 5xx and any other status UNKNOWN_ERROR; a client-side
    failure is rethrown when creating and UNKNOWN_ERROR otherwise.  GCS
    (GCSStorageLockClient#tryUpsertLockFile, lines 139-162): 412 ACQUIRED_BY_OTHERS; 429 THROTTLED;
    5xx UNKNOWN_ERROR; any other code (404, 409, 0) rethrown.  Azure
    (AzureStorageLockClient#tryUpsertLockFile / #handleUpsertBlobStorageException): 412 or
    ``CONDITION_NOT_MET`` ACQUIRED_BY_OTHERS; 429 THROTTLED; 409, 5xx and any other status UNKNOWN_ERROR;
    any other exception (a client-side failure) UNKNOWN_ERROR, on a create too; it throws only a
    non-storage ``HttpResponseException`` on a create, which no answer of the model is.  A create
    answered PRECONDITION_FAILED is Azure's 409 BlobAlreadyExists (see the module doc): UNKNOWN_ERROR.
    """
    if outcome is Outcome.OK:
        return UpsertResult.SUCCESS
    if flavor == "azure":
        if outcome is Outcome.PRECONDITION_FAILED and not creating:
            return UpsertResult.ACQUIRED_BY_OTHERS
        if outcome is Outcome.THROTTLED and throttled_result:
            return UpsertResult.THROTTLED
        return UpsertResult.UNKNOWN_ERROR
    if outcome is Outcome.PRECONDITION_FAILED:
        return UpsertResult.ACQUIRED_BY_OTHERS
    if outcome is Outcome.THROTTLED:
        return UpsertResult.THROTTLED if throttled_result else UpsertResult.UNKNOWN_ERROR
    if outcome is Outcome.UNAVAILABLE:
        return UpsertResult.UNKNOWN_ERROR
    if flavor == "s3" and not (outcome is Outcome.TIMEOUT and creating):
        return UpsertResult.UNKNOWN_ERROR
    raise LockClientError(flavor, "create" if creating else "write", outcome)
