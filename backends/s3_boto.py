"""S3 backend through boto3: any endpoint, path-style addressing, botocore retries off.

botocore's automatic retries are off unless ``native_retries=True`` (kept
only to grade what the SDK's own retry does to a lost reply).

Create-if-absent is ``PutObject`` with ``If-None-Match: *``; replace is
``PutObject`` with ``If-Match: <ETag>``.  The version tag is the ETag exactly
as the server returned it (quotes included).
"""

from __future__ import annotations

from typing import Any

from backends.base import Backend, StorageError
from backends.secrets import redact_url
from model.runtime.effects import Outcome, StoreResult


class BotoS3Backend(Backend):
    """S3 via boto3.  ``endpoint`` is e.g. ``http://127.0.0.1:8333`` (None: AWS)."""

    dialect = "s3"
    client = "boto3"

    def __init__(self, endpoint: str | None, bucket: str, prefix: str, *, access_key: str | None = None,
                 secret_key: str | None = None, region: str = "us-east-1", timeout_s: float = 10.0,
                 native_retries: bool = False,
                 max_pool: int = 64) -> None:
        super().__init__(prefix)
        import boto3
        from botocore.config import Config

        self.endpoint = endpoint
        self.bucket = bucket
        self.native_retries = native_retries
        cfg = Config(
            # off: the harness must see each attempt; native_retries=True keeps botocore's (for grading)
            retries={"total_max_attempts": 5 if native_retries else 1, "mode": "standard"},
            connect_timeout=timeout_s,
            read_timeout=timeout_s,
            s3={"addressing_style": "path"},
            signature_version="s3v4",
            max_pool_connections=max_pool,
            request_checksum_calculation="when_required",
            response_checksum_validation="when_required",
        )
        session = boto3.session.Session()
        self._s3: Any = session.client(
            "s3", endpoint_url=endpoint, region_name=region, aws_access_key_id=access_key,
            aws_secret_access_key=secret_key, config=cfg,
        )

    def describe(self) -> str:
        """One line naming the client, endpoint, bucket and prefix."""
        return f"boto3 {redact_url(self.endpoint or 'aws')} bucket={self.bucket} prefix={self.prefix}"

    def _call(self, fn: Any, **kw: Any) -> tuple[Outcome, Any]:
        from botocore.exceptions import BotoCoreError, ClientError, ConnectionError, HTTPClientError

        try:
            resp = fn(Bucket=self.bucket, **kw)
        except ClientError as e:
            status = e.response.get("ResponseMetadata", {}).get("HTTPStatusCode")
            code = str(e.response.get("Error", {}).get("Code", ""))
            return self._answer(status, code, str(e)), None
        except (ConnectionError, HTTPClientError) as e:
            return self._answer(None, type(e).__name__, str(e)), None
        except BotoCoreError as e:
            raise StorageError(None, type(e).__name__, str(e)) from e
        status = resp.get("ResponseMetadata", {}).get("HTTPStatusCode", 200)
        return self._answer(status, ""), resp

    def _read(self, key: str) -> StoreResult:
        outcome, resp = self._call(self._s3.get_object, Key=key)
        if outcome is not Outcome.OK:
            return StoreResult(outcome)
        try:
            body = resp["Body"].read()
        except Exception as e:  # a connection cut while the body streams
            self._note(None, type(e).__name__, Outcome.TIMEOUT)
            return StoreResult(Outcome.TIMEOUT)
        return StoreResult(Outcome.OK, body=body, version=resp.get("ETag"))

    def _write(self, key: str, body: bytes, **cond: str) -> StoreResult:
        outcome, resp = self._call(self._s3.put_object, Key=key, Body=body, **cond)
        return StoreResult(outcome, version=resp.get("ETag") if resp else None)

    def _create_if_absent(self, key: str, body: bytes) -> StoreResult:
        return self._write(key, body, IfNoneMatch="*")

    def _replace_if_match(self, key: str, body: bytes, version: str) -> StoreResult:
        return self._write(key, body, IfMatch=version)

    def _put(self, key: str, body: bytes) -> StoreResult:
        return self._write(key, body)

    def _list_prefix(self, prefix: str) -> StoreResult:
        keys: list[str] = []
        token: str | None = None
        while True:
            kw: dict[str, Any] = {"Prefix": prefix}
            if token:
                kw["ContinuationToken"] = token
            outcome, resp = self._call(self._s3.list_objects_v2, **kw)
            if outcome is not Outcome.OK:
                return StoreResult(outcome)
            keys += [o["Key"] for o in resp.get("Contents", [])]
            token = resp.get("NextContinuationToken")
            if not resp.get("IsTruncated") or not token:
                break
        return StoreResult(Outcome.OK, body="\n".join(sorted(keys)).encode())

    def _delete(self, key: str) -> StoreResult:
        outcome, _ = self._call(self._s3.delete_object, Key=key)
        return StoreResult(outcome)

    def ensure_container(self) -> None:
        """Create the bucket unless it exists."""
        from botocore.exceptions import ClientError

        try:
            self._s3.head_bucket(Bucket=self.bucket)
            return
        except ClientError:
            pass
        try:
            self._s3.create_bucket(Bucket=self.bucket)
        except ClientError as e:
            code = e.response.get("Error", {}).get("Code")
            if code not in ("BucketAlreadyOwnedByYou", "BucketAlreadyExists"):
                raise

    def close(self) -> None:
        """Close the HTTP connections."""
        self._s3.close()
