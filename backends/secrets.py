"""Credentials stay out of outputs: URLs lose their user info, secret environment values are masked.

A storage URL may carry credentials (``s3+https://KEY:SECRET@host/bucket``) and the
environment holds keys (``AWS_SECRET_ACCESS_KEY``, ...).  Anything the harness writes
(run directories, reports, logs, JUnit files, error messages) goes through
:func:`redact_url` or :func:`redact` where it is formatted, and launched servers get an
environment without these variables (:func:`server_env`).
"""

from __future__ import annotations

import os
import re
import urllib.parse
from collections.abc import Mapping

# Environment variables that hold credentials (values masked in outputs, dropped for servers).
SECRET_ENV = (
    "AWS_ACCESS_KEY_ID",
    "AWS_SECRET_ACCESS_KEY",
    "AWS_SESSION_TOKEN",
    "AZURE_STORAGE_KEY",
    "AZURE_STORAGE_CONNECTION_STRING",
    "AZURE_STORAGE_SAS_TOKEN",
)
MASK = "***"
_USERINFO = re.compile(r"(?P<scheme>[A-Za-z][A-Za-z0-9+.-]*://)(?P<userinfo>[^/@\s'\"]*)@")


def redact_url(url: str) -> str:
    """``url`` without its user info (``scheme://***@host/...``); other text is returned unchanged."""
    u = urllib.parse.urlsplit(url)
    if "@" not in u.netloc:
        return url
    host = u.netloc.rsplit("@", 1)[1]
    return urllib.parse.urlunsplit((u.scheme, f"{MASK}@{host}", u.path, u.query, u.fragment))


def _secret_values(env: Mapping[str, str]) -> list[str]:
    values = [env[k] for k in SECRET_ENV if len(env.get(k) or "") >= 4]
    return sorted(values, key=len, reverse=True)  # longest first: a key inside a connection string


def redact(text: str, env: Mapping[str, str] | None = None) -> str:
    """``text`` with the user info of every URL and the value of every secret variable masked."""
    text = _USERINFO.sub(lambda m: f"{m.group('scheme')}{MASK}@", text)
    for value in _secret_values(os.environ if env is None else env):
        text = text.replace(value, MASK)
    return text


def server_env(extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment for a launched server: ours without the credential variables, plus ``extra``."""
    env = {k: v for k, v in os.environ.items() if k not in SECRET_ENV}
    env.update(extra or {})
    return env
