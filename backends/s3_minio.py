"""S3 backend through the ``minio`` SDK, the second S3 client.

The SDK's own urllib3 pool retries 5xx answers and broken connections five
times by default (PUT counts as idempotent for urllib3), which hides a lost
reply from the caller: the retry then sees 412 with no hint that the first
attempt was applied.  By default this backend replaces that pool with one that
does not retry (``native_retries=False``), so the harness sees each attempt;
``native_retries=True`` keeps the SDK's behaviour so it can be graded.

``put_object`` turns unknown headers into user metadata (``X-Amz-Meta-...``),
so the conditional headers go through the SDK's internal ``_put_object``
(present in minio 7.2).
"""

from __future__ import annotations

import urllib.parse
from typing import Any

from backends.base import Backend, StorageError
from backends.secrets import redact_url
from model.runtime.effects import Outcome, StoreResult


class MinioS3Backend(Backend):
    """S3 via the minio SDK.  ``endpoint`` is e.g. ``http://127.0.0.1:9000``."""

    dialect = "s3"
    client = "minio"

    def __init__(self, endpoint: str, bucket: str, prefix: str, *, access_key: str | None = None,
                 secret_key: str | None = None, region: str = "us-east-1", timeout_s: float = 10.0,
                 native_retries: bool = False,
                 max_pool: int = 64) -> None:
        super().__init__(prefix)
        import urllib3
        from minio import Minio

        u = urllib.parse.urlsplit(endpoint)
        if u.scheme not in ("http", "https") or not u.netloc:
            raise ValueError(f"minio endpoint must be http(s)://host:port, got {endpoint!r}")
        self.endpoint = endpoint
        self.bucket = bucket
        self.native_retries = native_retries
        http = None
        if not native_retries:
            http = urllib3.PoolManager(
                timeout=urllib3.Timeout(connect=timeout_s, read=timeout_s), maxsize=max_pool, retries=False,
            )
        self._mc: Any = Minio(u.netloc, access_key=access_key, secret_key=secret_key,
                              secure=u.scheme == "https", region=region, http_client=http)

    def describe(self) -> str:
        """One line naming the client, endpoint, bucket and prefix."""
        return f"minio-py {redact_url(self.endpoint)} bucket={self.bucket} prefix={self.prefix}"

    def _call(self, fn: Any, *args: Any, **kw: Any) -> tuple[Outcome, Any]:
        import urllib3.exceptions
        from minio.error import InvalidResponseError, S3Error, ServerError

        try:
            resp = fn(*args, **kw)
        except S3Error as e:
            status = e.response.status if e.response is not None else None
            return self._answer(status, e.code or "", str(e)), None
        except ServerError as e:
            return self._answer(e.status_code, "ServerError", str(e)), None
        except InvalidResponseError as e:
            raise StorageError(None, "InvalidResponse", str(e)) from e
        except (urllib3.exceptions.HTTPError, OSError) as e:
            return self._answer(None, type(e).__name__, str(e)), None
        return self._answer(200, ""), resp

    def _read(self, key: str) -> StoreResult:
        outcome, resp = self._call(self._mc.get_object, self.bucket, key)
        if outcome is not Outcome.OK:
            return StoreResult(outcome)
        try:
            body = resp.read()
            etag = resp.headers.get("ETag")
        except Exception as e:
            self._note(None, type(e).__name__, Outcome.TIMEOUT)
            return StoreResult(Outcome.TIMEOUT)
        finally:
            resp.close()
            resp.release_conn()
        return StoreResult(Outcome.OK, body=body, version=etag)

    def _write(self, key: str, body: bytes, headers: dict[str, str]) -> StoreResult:
        hdrs = {"Content-Type": "application/octet-stream", **headers}
        outcome, resp = self._call(self._mc._put_object, self.bucket, key, body, hdrs)
        version = None
        if resp is not None:
            version = resp.http_headers.get("ETag") or (f'"{resp.etag}"' if resp.etag else None)
        return StoreResult(outcome, version=version)

    def _create_if_absent(self, key: str, body: bytes) -> StoreResult:
        return self._write(key, body, {"If-None-Match": "*"})

    def _replace_if_match(self, key: str, body: bytes, version: str) -> StoreResult:
        return self._write(key, body, {"If-Match": version})

    def _put(self, key: str, body: bytes) -> StoreResult:
        return self._write(key, body, {})

    def _list_prefix(self, prefix: str) -> StoreResult:
        outcome, objs = self._call(
            lambda: list(self._mc.list_objects(self.bucket, prefix=prefix, recursive=True)))
        if outcome is not Outcome.OK:
            return StoreResult(outcome)
        return StoreResult(Outcome.OK, body="\n".join(sorted(o.object_name for o in objs)).encode())

    def _delete(self, key: str) -> StoreResult:
        outcome, _ = self._call(self._mc.remove_object, self.bucket, key)
        return StoreResult(outcome)

    def ensure_container(self) -> None:
        """Create the bucket unless it exists."""
        if not self._mc.bucket_exists(self.bucket):
            self._mc.make_bucket(self.bucket)
