"""Azure Blob backend through azure-storage-blob.

Create-if-absent is Put Blob with ``If-None-Match: *``; replace is Put Blob
with ``If-Match: <ETag>``.  The version tag is the ETag as returned.

Deviation, documented: Azure (and Azurite) answer a create-if-absent on an
existing blob with **409 BlobAlreadyExists**, where S3 and GCS answer 412.
The protocol needs PRECONDITION_FAILED there (in the model, CONFLICT is an
unknown, retryable outcome, while a lost create is a definite loss), so this
backend maps exactly that answer (409 with error code BlobAlreadyExists to a
conditional create) to PRECONDITION_FAILED.  Every other 409 stays CONFLICT.
The raw 409 is kept in :meth:`Backend.last_answers`, and the conformance suite
reports it as a deviation.

The SDK's retry policy is off (``retry_total=0``).  ``api_version`` defaults to
``2025-11-05``, which Azurite 3.35 accepts.
"""

from __future__ import annotations

import os
from typing import Any

from backends.base import Backend, StorageError
from backends.secrets import redact_url
from model.runtime.effects import Outcome, StoreResult

AZURITE_ACCOUNT = "devstoreaccount1"
AZURITE_KEY = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="


class AzureBlobBackend(Backend):
    """Azure Blob via azure-storage-blob.

    ``endpoint`` is the account URL (``http://127.0.0.1:10000/devstoreaccount1``
    for Azurite); with ``endpoint=None`` the connection string in
    ``AZURE_STORAGE_CONNECTION_STRING`` is used.
    """

    dialect = "azure"
    client = "azure-storage-blob"

    def __init__(self, endpoint: str | None, container: str, prefix: str, *, account_name: str | None = None,
                 account_key: str | None = None, api_version: str = "2025-11-05",
                 timeout_s: float = 10.0) -> None:
        super().__init__(prefix)
        from azure.storage.blob import BlobServiceClient

        self.endpoint = endpoint
        self.container_name = container
        kw: dict[str, Any] = dict(api_version=api_version, retry_total=0, connection_timeout=timeout_s,
                                  read_timeout=timeout_s)
        if endpoint:
            cred = None
            if account_name and account_key:
                cred = {"account_name": account_name, "account_key": account_key}
            self._svc: Any = BlobServiceClient(account_url=endpoint, credential=cred, **kw)
        else:
            conn = os.environ.get("AZURE_STORAGE_CONNECTION_STRING")
            if not conn:
                raise ValueError("AzureBlobBackend needs an endpoint or AZURE_STORAGE_CONNECTION_STRING")
            self._svc = BlobServiceClient.from_connection_string(conn, **kw)
        self._container: Any = self._svc.get_container_client(container)

    def describe(self) -> str:
        """One line naming the client, endpoint, container and prefix."""
        where = redact_url(self.endpoint or "azure")
        return f"azure-storage-blob {where} container={self.container_name} prefix={self.prefix}"

    def _call(self, fn: Any, create: bool = False) -> tuple[Outcome, Any]:
        from azure.core.exceptions import (
            HttpResponseError,
            ServiceRequestError,
            ServiceResponseError,
        )

        try:
            resp = fn()
        except (ServiceRequestError, ServiceResponseError) as e:
            return self._answer(None, type(e).__name__, str(e)), None
        except HttpResponseError as e:
            status = e.status_code
            err = getattr(e, "error_code", None)
            code = str(getattr(err, "value", err) or "")
            if status is None:
                return self._answer(None, type(e).__name__, str(e)), None
            outcome = self._answer(status, code, str(e))
            if create and status == 409 and code == "BlobAlreadyExists":
                outcome = Outcome.PRECONDITION_FAILED  # documented deviation, see the module doc
            return outcome, None
        except OSError as e:
            return self._answer(None, type(e).__name__, str(e)), None
        return self._answer(200, ""), resp

    def _read(self, key: str) -> StoreResult:
        blob = self._container.get_blob_client(key)

        def get() -> tuple[bytes, str]:
            dl = blob.download_blob()
            return dl.readall(), dl.properties.etag

        outcome, got = self._call(get)
        if outcome is not Outcome.OK:
            return StoreResult(outcome)
        body, etag = got
        return StoreResult(Outcome.OK, body=body, version=etag)

    def _write(self, key: str, body: bytes, **cond: Any) -> StoreResult:
        from azure.core import MatchConditions

        blob = self._container.get_blob_client(key)
        create = cond.pop("create", False)
        if "etag" in cond:
            kw: dict[str, Any] = {"overwrite": True, "etag": cond["etag"],
                                  "match_condition": MatchConditions.IfNotModified}
        elif create:
            kw = {"overwrite": False}  # If-None-Match: *
        else:
            kw = {"overwrite": True}
        outcome, resp = self._call(lambda: blob.upload_blob(body, **kw), create=create)
        return StoreResult(outcome, version=resp.get("etag") if resp else None)

    def _create_if_absent(self, key: str, body: bytes) -> StoreResult:
        return self._write(key, body, create=True)

    def _replace_if_match(self, key: str, body: bytes, version: str) -> StoreResult:
        return self._write(key, body, etag=version)

    def _put(self, key: str, body: bytes) -> StoreResult:
        return self._write(key, body)

    def _list_prefix(self, prefix: str) -> StoreResult:
        outcome, names = self._call(
            lambda: [b.name for b in self._container.list_blobs(name_starts_with=prefix)])
        if outcome is not Outcome.OK:
            return StoreResult(outcome)
        return StoreResult(Outcome.OK, body="\n".join(sorted(names)).encode())

    def _delete(self, key: str) -> StoreResult:
        blob = self._container.get_blob_client(key)
        outcome, _ = self._call(blob.delete_blob)
        return StoreResult(outcome)

    def ensure_container(self) -> None:
        """Create the container unless it exists."""
        from azure.core.exceptions import ResourceExistsError

        try:
            self._container.create_container()
        except ResourceExistsError:
            pass
        except Exception as e:  # noqa: BLE001 - re-raised with context
            raise StorageError(None, type(e).__name__, f"cannot create container: {e}") from e

    def close(self) -> None:
        """Close the HTTP connections."""
        self._svc.close()
