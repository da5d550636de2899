"""A reachable storage service: where it is, how to log in, and how to make a backend for it.

Launchers yield an :class:`Endpoint`; :func:`from_url` makes one for a service
that already runs (a real bucket or a server started elsewhere), with
credentials from the URL's user info or the usual environment variables.  The
credentials never show: ``name``, ``url`` and :meth:`Endpoint.describe` carry no
user info (:mod:`backends.secrets`).
"""

from __future__ import annotations

import os
import urllib.parse
from dataclasses import dataclass, field
from typing import Any

from backends.base import Backend
from backends.launchers.process import ServerProcess
from backends.secrets import redact_url, split_userinfo


@dataclass
class Endpoint:
    """A storage service.  ``kind`` is ``s3``, ``gcs`` or ``azure``; ``url`` may be None (cloud default)."""

    name: str
    kind: str
    url: str | None
    bucket: str
    access_key: str | None = None
    secret_key: str | None = None
    region: str = "us-east-1"
    process: ServerProcess | None = None
    notes: list[str] = field(default_factory=list)

    def __repr__(self) -> str:
        return f"Endpoint({self.describe()})"  # never the keys

    def describe(self) -> str:
        """One line for outputs: name, kind, URL and bucket (no credentials)."""
        where = redact_url(self.url or "default endpoint")
        return f"{redact_url(self.name)} ({self.kind} {where} {self.bucket})"

    def backend(self, prefix: str, *, client: str | None = None, **kw: Any) -> Backend:
        """A backend for this service confined to ``prefix``.

        ``client`` picks the S3 SDK (``boto3``, default, or ``minio``); extra
        keywords (``timeout_s``, ``client``, ...) go to the backend.
        ``url`` may be replaced by ``kw['url']`` (e.g. a proxy in front).
        """
        url = kw.pop("url", self.url)
        if self.kind == "s3":
            if client in (None, "boto3"):
                from backends.s3_boto import BotoS3Backend

                return BotoS3Backend(url, self.bucket, prefix, access_key=self.access_key,
                                     secret_key=self.secret_key, region=self.region, **kw)
            if client == "minio":
                from backends.s3_minio import MinioS3Backend

                if url is None:
                    url = f"https://s3.{self.region}.amazonaws.com"
                return MinioS3Backend(url, self.bucket, prefix, access_key=self.access_key,
                                      secret_key=self.secret_key, region=self.region, **kw)
            raise ValueError(f"unknown S3 client {client!r} (boto3 or minio)")
        if client is not None:
            raise ValueError(f"client {client!r} only applies to S3 endpoints")
        if self.kind == "gcs":
            from backends.gcs import GcsBackend

            return GcsBackend(url, self.bucket, prefix, **kw)
        if self.kind == "azure":
            from backends.azure_blob import AzureBlobBackend

            return AzureBlobBackend(url, self.bucket, prefix, account_name=self.access_key,
                                    account_key=self.secret_key, **kw)
        raise ValueError(f"unknown endpoint kind {self.kind!r}")


def from_url(url: str, bucket: str | None = None) -> Endpoint:
    """An endpoint for an existing service, credentials from the environment.

    Forms:
      ``s3://BUCKET`` (AWS, ``AWS_*`` variables), ``s3+http://HOST:PORT/BUCKET``
      and ``s3+https://...`` (any S3 server), ``http(s)://HOST:PORT/BUCKET``
      (same as ``s3+http``), ``gs://BUCKET`` (GCS, default credentials or
      ``STORAGE_EMULATOR_HOST``), ``gs+http://HOST:PORT/BUCKET`` (GCS emulator),
      ``az://CONTAINER`` (``AZURE_STORAGE_CONNECTION_STRING``),
      ``az+http://HOST:PORT/ACCOUNT/CONTAINER`` (``AZURE_STORAGE_KEY`` or Azurite's key).
    User info in a URL (``s3+http://KEY:SECRET@HOST:PORT/BUCKET``, ``s3://KEY:SECRET@BUCKET``)
    is the S3 access key and secret (or the Azure account key after ``:``); it is masked in
    the endpoint's name and dropped from its URL, which outputs show.
    """
    plain, user, password = split_userinfo(url)
    shown = redact_url(url)
    try:
        u = urllib.parse.urlsplit(plain)
        u.port  # noqa: B018 - raises ValueError for a port that is not a number
    except ValueError:
        raise ValueError(f"not a storage URL: {shown!r} (bad host or port)") from None
    netloc = u.netloc
    scheme = u.scheme.lower()
    parts = [p for p in u.path.split("/") if p]
    env = os.environ
    if scheme in ("s3", "gs", "az"):
        name = bucket or netloc
        if not name:
            raise ValueError(f"URL {shown!r} names no bucket")
        if scheme == "s3":
            return Endpoint(shown, "s3", env.get("AWS_ENDPOINT_URL_S3") or env.get("AWS_ENDPOINT_URL"), name,
                            user or env.get("AWS_ACCESS_KEY_ID"),
                            password or env.get("AWS_SECRET_ACCESS_KEY"),
                            env.get("AWS_REGION") or env.get("AWS_DEFAULT_REGION") or "us-east-1")
        if scheme == "gs":
            return Endpoint(shown, "gcs", env.get("STORAGE_EMULATOR_HOST"), name)
        return Endpoint(shown, "azure", None, name)
    base, _, sub = scheme.partition("+")
    if not sub:
        base, sub = "s3", scheme
    if sub not in ("http", "https") or not netloc:
        raise ValueError(f"not a storage URL: {shown!r} (see `hcc conformance --help`)")
    root = f"{sub}://{netloc}"
    if base == "s3":
        name = bucket or (parts[0] if parts else env.get("HCC_BUCKET", "hcc-conformance"))
        return Endpoint(shown, "s3", root, name, user or env.get("AWS_ACCESS_KEY_ID", "hcc"),
                        password or env.get("AWS_SECRET_ACCESS_KEY", "hcc-secret"),
                        env.get("AWS_REGION") or env.get("AWS_DEFAULT_REGION") or "us-east-1")
    if base in ("gs", "gcs"):
        name = bucket or (parts[0] if parts else env.get("HCC_BUCKET", "hcc-conformance"))
        return Endpoint(shown, "gcs", root, name)
    if base in ("az", "azure"):
        from backends.azure_blob import AZURITE_ACCOUNT, AZURITE_KEY

        account = parts[0] if parts else AZURITE_ACCOUNT
        name = bucket or (parts[1] if len(parts) > 1 else env.get("HCC_BUCKET", "hcc-conformance"))
        key = (password or env.get("AZURE_STORAGE_KEY")
               or (AZURITE_KEY if account == AZURITE_ACCOUNT else None))
        return Endpoint(shown, "azure", f"{root}/{account}", name, account, key)
    raise ValueError(f"unknown storage scheme {u.scheme!r} in {shown!r}")
