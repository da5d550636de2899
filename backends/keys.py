"""Confinement of object keys under the table prefix chosen by the user.

Effect keys are full object names (the protocol's base path is the table
prefix).  A backend refuses any key that is not strictly under its prefix, or
that could be read differently by a server or a proxy (``..`` or ``.``
segments, empty segments, backslashes, absolute paths, control characters).
"""

from __future__ import annotations

import re

_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
_ACCEPTED_MAX = 4096  # keys remembered as checked, per guard (a run uses a few dozen)


class PrefixViolation(ValueError):
    """A key, or a listed prefix, lies outside the table prefix."""

    def __init__(self, key: str, prefix: str, reason: str) -> None:
        super().__init__(f"refused key {key!r}: {reason} (table prefix {prefix!r})")
        self.key = key
        self.prefix = prefix
        self.reason = reason


def _bad_part(text: str) -> str | None:
    """Why ``text`` (a path) is unsafe, or None."""
    if not text:
        return "empty"
    if text.startswith("/"):
        return "absolute path"
    if "\\" in text:
        return "backslash"
    if _CONTROL.search(text):
        return "control character"
    parts = text.split("/")
    # a trailing '/' is allowed (folder-like prefix), other empty segments are not
    inner = parts[:-1] if parts[-1] == "" else parts
    for part in inner:
        if part == "":
            return "empty path segment"
        if part in (".", ".."):
            return f"'{part}' segment"
    return None


def normalise_prefix(prefix: str) -> str:
    """Check a table prefix and return it with exactly one trailing '/'."""
    why = _bad_part(prefix.strip("/") if prefix.endswith("/") else prefix)
    if prefix.startswith("/"):
        why = "absolute path"
    if why:
        raise PrefixViolation(prefix, prefix, f"bad table prefix: {why}")
    return prefix.rstrip("/") + "/"


class KeyGuard:
    """Checks keys against one table prefix (``tables/t1/`` style)."""

    def __init__(self, prefix: str) -> None:
        self.prefix = normalise_prefix(prefix)
        self._accepted: set[str] = set()  # every request checks its key: the same few keys, again and again

    def key(self, key: str) -> str:
        """Return ``key`` if it is an object name strictly under the prefix, else raise."""
        if not isinstance(key, str):
            raise PrefixViolation(repr(key), self.prefix, "key is not a string")
        if key in self._accepted:
            return key
        why = _bad_part(key)
        if why:
            raise PrefixViolation(key, self.prefix, why)
        if not key.startswith(self.prefix) or key == self.prefix:
            raise PrefixViolation(key, self.prefix, "not under the table prefix")
        if key.endswith("/"):
            raise PrefixViolation(key, self.prefix, "object key ends with '/'")
        if len(self._accepted) >= _ACCEPTED_MAX:
            self._accepted.clear()
        self._accepted.add(key)
        return key

    def list_prefix(self, prefix: str) -> str:
        """Return ``prefix`` if listing it stays under the table prefix, else raise."""
        if not isinstance(prefix, str):
            raise PrefixViolation(repr(prefix), self.prefix, "prefix is not a string")
        why = _bad_part(prefix)
        if why:
            raise PrefixViolation(prefix, self.prefix, why)
        if not prefix.startswith(self.prefix):
            raise PrefixViolation(prefix, self.prefix, "not under the table prefix")
        return prefix
