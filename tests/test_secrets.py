"""Credentials never show: URL user info and secret environment values are masked where outputs are made."""

from __future__ import annotations

import pytest

from backends.endpoint import from_url
from backends.secrets import MASK, redact, redact_url, server_env
from cli.main import main
from engines.rundir import slug

KEY, SECRET = "AKIAHCCFAKEKEY000001", "hccFakeSecret/0123456789abcdefXYZ"
URL = f"s3+http://{KEY}:{SECRET}@127.0.0.1:9/bucket"


def test_redact_url_drops_user_info_only() -> None:
    assert redact_url(URL) == f"s3+http://{MASK}@127.0.0.1:9/bucket"
    assert redact_url("gs+http://127.0.0.1:9/b") == "gs+http://127.0.0.1:9/b"
    assert redact_url("fake-gcs") == "fake-gcs"


def test_redact_masks_urls_in_text_and_secret_environment_values(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "envSecretValue123")
    text = redact(f"failed: {URL} said no; key envSecretValue123 in 'x://u:p@h/'")
    assert KEY not in text and SECRET not in text and "envSecretValue123" not in text and "u:p" not in text
    assert "127.0.0.1:9/bucket" in text  # where it went stays readable


def test_user_info_becomes_the_credentials_and_never_shows() -> None:
    ep = from_url(URL)
    assert (ep.access_key, ep.secret_key) == (KEY, SECRET)
    assert ep.url == "http://127.0.0.1:9" and ep.bucket == "bucket"
    for shown in (ep.name, ep.describe(), repr(ep), slug(URL)):
        assert KEY not in shown and SECRET not in shown
    pytest.importorskip("boto3", reason="boto3 is the backends extra (see test_backends_secrets.py)")
    with ep.backend("p/") as b:
        assert KEY not in b.describe() and SECRET not in b.describe()


def test_servers_get_no_credential_variables(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "x" * 10)
    monkeypatch.setenv("AZURE_STORAGE_CONNECTION_STRING", "y" * 10)
    env = server_env({"MINIO_ROOT_USER": "u"})
    assert "AWS_SECRET_ACCESS_KEY" not in env and "AZURE_STORAGE_CONNECTION_STRING" not in env
    assert env["MINIO_ROOT_USER"] == "u" and env["PATH"]


def test_bad_urls_are_reported_without_their_credentials(capsys: pytest.CaptureFixture[str]) -> None:
    bad = f"s3+ftp://{KEY}:{SECRET}@host/bucket"
    assert main(["conformance", bad]) == 2
    assert main(["realworld", "rfc91-safe", "--backend", bad]) == 2
    assert main(["realworld", "rfc91-safe", "--backend", f"s3+http://{KEY}:{SECRET}@host:notaport/b"]) == 2
    captured = capsys.readouterr()
    text = captured.out + captured.err
    assert "bad backend" in text and KEY not in text and SECRET not in text
