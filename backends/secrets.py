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
# Everything between "://" and the last "@" of a URL-like token: user info, even when a secret holds an
# unescaped "/" (which a URL parser would take for the start of the path, leaving the secret in "the host").
_USERINFO = re.compile(r"(?P<scheme>[A-Za-z][A-Za-z0-9+.-]*://)(?P<userinfo>[^\s'\"]*)@")


def split_userinfo(url: str) -> tuple[str, str | None, str | None]:
    """``url`` without its user info, and the user and password in it (percent-decoded), if any.

    The user info runs to the last ``@`` of the URL, so a secret with an unescaped ``/`` or
    ``@`` is still taken whole (bucket names hold neither).
    """
    scheme, sep, rest = url.partition("://")
    if not sep or "@" not in rest:
        return url, None, None
    info, _, host = rest.rpartition("@")
    user, colon, password = info.partition(":")
    return (f"{scheme}://{host}", urllib.parse.unquote(user) or None,
            urllib.parse.unquote(password) if colon else None)


def redact_url(url: str) -> str:
    """``url`` with its user info masked (``scheme://***@host/...``); other text is returned unchanged."""
    plain, user, password = split_userinfo(url)
    if user is None and password is None:
        return url
    scheme, _, host = plain.partition("://")
    return f"{scheme}://{MASK}@{host}"


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
