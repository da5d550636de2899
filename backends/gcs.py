"""GCS backend through google-cloud-storage.

Create-if-absent is an upload with ``ifGenerationMatch=0``; replace is an
upload with ``ifGenerationMatch=<generation>``.  The version tag is the
object's generation as a decimal string.  The library's default retry (which
retries conditional uploads) is turned off on every call (``retry=None``).

``endpoint`` (or ``STORAGE_EMULATOR_HOST`` when no endpoint is given) points
the client at an emulator with anonymous credentials; with neither, the
client uses Google's default credentials and the real service.
"""

from __future__ import annotations

import contextlib
import os
from typing import Any

from backends.base import Backend, StorageError
from backends.secrets import redact_url
from model.runtime.effects import Outcome, StoreResult


class GcsBackend(Backend):
    """GCS via google-cloud-storage."""

    dialect = "gcs"
    client = "google-cloud-storage"

    def __init__(self, endpoint: str | None, bucket: str, prefix: str, *, project: str = "hcc",
                 timeout_s: float = 10.0) -> None:
        super().__init__(prefix)
        from google.auth.credentials import AnonymousCredentials
        from google.cloud import storage

        endpoint = endpoint or os.environ.get("STORAGE_EMULATOR_HOST") or None
        if endpoint and "://" not in endpoint:
            endpoint = "http://" + endpoint
        self.endpoint = endpoint
        self.bucket_name = bucket
        self.timeout_s = timeout_s
        if endpoint:
            self._client: Any = storage.Client(project=project, credentials=AnonymousCredentials(),  # type: ignore[no-untyped-call]
                                               client_options={"api_endpoint": endpoint})
        else:
            self._client = storage.Client()
        # google-cloud-storage 3.x keeps bucket metadata for its telemetry and, after every 404, checks on a
        # thread of its own that the bucket still exists (a bucket GET): not a request of the protocol
        self._client._bucket_metadata_cache = None
        self._bucket: Any = self._client.bucket(bucket)
        # room for many racing threads on one client (the default pool keeps 10 connections)
        from requests.adapters import HTTPAdapter

        self._client._http.mount("http://", HTTPAdapter(pool_connections=4, pool_maxsize=64, max_retries=0))
        self._client._http.mount("https://", HTTPAdapter(pool_connections=4, pool_maxsize=64, max_retries=0))
        # requests reads the proxy variables (and ~/.netrc) again for every request when trust_env is on:
        # read the proxies once here instead (they cannot change during a run; GCS never uses netrc)
        from requests.utils import get_environ_proxies

        session = self._client._http
        session.proxies.update(get_environ_proxies(endpoint or "https://storage.googleapis.com"))
        session.trust_env = False
        # what _call catches, looked up once (an import statement in a function costs ~0.5 us a call)
        import requests
        from google.api_core import exceptions as gexc
        from google.auth.exceptions import TransportError

        self._answered: type[Exception] = gexc.GoogleAPICallError
        self._no_answer = (requests.ConnectionError, requests.Timeout, TransportError, OSError)
        self._refused: type[Exception] = requests.RequestException

    def describe(self) -> str:
        """One line naming the client, endpoint, bucket and prefix."""
        where = redact_url(self.endpoint or "gcs")
        return f"google-cloud-storage {where} bucket={self.bucket_name} prefix={self.prefix}"

    def _call(self, fn: Any) -> tuple[Outcome, Any]:
        try:
            resp = fn()
        except self._answered as e:  # google.api_core's GoogleAPICallError
            status = int(e.code) if e.code is not None else None  # type: ignore[attr-defined]
            if status is None:
                return self._answer(None, type(e).__name__, str(e)), None
            return self._answer(status, type(e).__name__, str(e)), None
        except self._no_answer as e:
            return self._answer(None, type(e).__name__, str(e)), None
        except self._refused as e:
            raise StorageError(None, type(e).__name__, str(e)) from e
        return self._answer(200, ""), resp

    def _read(self, key: str) -> StoreResult:
        blob = self._bucket.blob(key)

        def get() -> bytes:
            data: bytes = blob.download_as_bytes(timeout=self.timeout_s, retry=None)
            return data

        outcome, body = self._call(get)
        if outcome is not Outcome.OK:
            return StoreResult(outcome)
        return StoreResult(Outcome.OK, body=body, version=str(blob.generation))

    def _write(self, key: str, body: bytes, generation: int | None) -> StoreResult:
        blob = self._bucket.blob(key)
        outcome, _ = self._call(lambda: blob.upload_from_string(
            body, if_generation_match=generation, timeout=self.timeout_s, retry=None))
        version = str(blob.generation) if outcome is Outcome.OK and blob.generation is not None else None
        return StoreResult(outcome, version=version)

    def _create_if_absent(self, key: str, body: bytes) -> StoreResult:
        return self._write(key, body, 0)

    def _replace_if_match(self, key: str, body: bytes, version: str) -> StoreResult:
        try:
            generation = int(version)
        except ValueError:
            raise ValueError(f"GCS version tag must be a decimal generation, got {version!r}") from None
        if generation <= 0:
            raise ValueError(f"GCS generation must be positive for a replace, got {version!r}")
        return self._write(key, body, generation)

    def _put(self, key: str, body: bytes) -> StoreResult:
        return self._write(key, body, None)

    def _list_prefix(self, prefix: str) -> StoreResult:
        outcome, names = self._call(lambda: [b.name for b in self._client.list_blobs(
            self._bucket, prefix=prefix, timeout=self.timeout_s, retry=None)])
        if outcome is not Outcome.OK:
            return StoreResult(outcome)
        return StoreResult(Outcome.OK, body="\n".join(sorted(names)).encode())

    def _delete(self, key: str) -> StoreResult:
        blob = self._bucket.blob(key)
        outcome, _ = self._call(lambda: blob.delete(timeout=self.timeout_s, retry=None))
        return StoreResult(outcome)

    def ensure_container(self) -> None:
        """Create the bucket unless it exists."""
        from google.api_core import exceptions as gexc

        with contextlib.suppress(gexc.Conflict):
            self._client.create_bucket(self.bucket_name)

    def close(self) -> None:
        """Close the HTTP session."""
        http = getattr(self._client, "_http_internal", None)
        if http is not None:
            http.close()
