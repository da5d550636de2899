"""A small reader of EDN, for what Jepsen's history files contain.

Jepsen writes a test's history as EDN: one operation map per line (``history.edn``), e.g.
``{:type :invoke, :f :txn, :value [[:append :x 1] [:r :y nil]], :process 0, :time 12, :index 4}``,
or the whole history as one vector.  This reader covers the EDN such files hold: maps, vectors,
lists, sets, keywords, symbols, strings, characters, integers (with an ``N`` suffix too),
floats (with ``M``), ratios (as floats), ``nil``, ``true``, ``false``, comments (``;``),
discarded forms (``#_``) and tagged literals (``#inst "..."``, ``#jepsen.history.Op{...}``:
the tag is dropped and the form after it read).

Values become Python values: keywords :class:`Keyword` (a ``str`` holding the name without the
colon), symbols :class:`Symbol`, vectors and lists ``list``, maps ``dict``, sets ``frozenset``
(vectors inside a map key or a set become tuples, so they can be hashed).  Every defect is an
:class:`EDNError` naming the line and the column.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

_DELIMS = set("()[]{}\"; \t\r\n,")
_WS = set(" \t\r\n,")
_CHARS = {"newline": "\n", "space": " ", "tab": "\t", "return": "\r", "backspace": "\b",
          "formfeed": "\f"}
_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", '"': '"', "\\": "\\", "b": "\b", "f": "\f"}


class Keyword(str):
    """An EDN keyword; the string is its name without the colon (``:x`` is ``Keyword("x")``)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return ":" + str.__str__(self)


class Symbol(str):
    """An EDN symbol (``nil``, ``true`` and ``false`` are read as None, True, False instead)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return str.__str__(self)


class EDNError(ValueError):
    """Malformed EDN at ``line`` (1-based) and ``column`` (1-based)."""

    def __init__(self, line: int, column: int, message: str) -> None:
        self.line = line
        self.column = column
        self.message = message
        super().__init__(f"line {line}, column {column}: {message}")


class _Discard:
    """What ``#_`` leaves behind (skipped by the enclosing collection)."""


_DISCARD = _Discard()


def _hashable(v: Any) -> Any:
    if isinstance(v, list):
        return tuple(_hashable(x) for x in v)
    if isinstance(v, dict):
        return tuple(sorted(((repr(k), _hashable(x)) for k, x in v.items())))
    return v


class _Reader:
    def __init__(self, text: str) -> None:
        self.s = text
        self.i = 0
        self.n = len(text)
        self._at = 0  # lines counted up to here
        self._line = 1

    def where(self, i: int | None = None) -> tuple[int, int]:
        pos = self.i if i is None else i
        if pos >= self._at:
            self._line += self.s.count("\n", self._at, pos)
            self._at = pos
            line = self._line
        else:
            line = self.s.count("\n", 0, pos) + 1
        col = pos - (self.s.rfind("\n", 0, pos) + 1) + 1
        return line, col

    def error(self, message: str, i: int | None = None) -> EDNError:
        line, col = self.where(i)
        return EDNError(line, col, message)

    def skip(self) -> None:
        s, n = self.s, self.n
        while self.i < n:
            c = s[self.i]
            if c in _WS:
                self.i += 1
            elif c == ";":
                j = s.find("\n", self.i)
                self.i = n if j < 0 else j + 1
            else:
                return

    def form(self, depth: int = 0) -> Any:
        """The next form (``_DISCARD`` for ``#_ x``); raises at the end of input."""
        if depth > 200:
            raise self.error("nested too deep")
        self.skip()
        if self.i >= self.n:
            raise self.error("unexpected end of input")
        c = self.s[self.i]
        if c == "[":
            self.i += 1
            return self.seq("]", depth)
        if c == "(":
            self.i += 1
            return self.seq(")", depth)
        if c == "{":
            start = self.i
            self.i += 1
            items = self.seq("}", depth)
            if len(items) % 2:
                raise self.error("a map needs an even number of forms", start)
            out: dict[Any, Any] = {}
            for k, v in zip(items[::2], items[1::2], strict=True):
                out[_hashable(k)] = v
            return out
        if c in ")]}":
            raise self.error(f"unexpected {c!r}")
        if c == '"':
            return self.string()
        if c == "#":
            return self.dispatch(depth)
        if c == "\\":
            return self.char()
        return self.atom()

    def seq(self, close: str, depth: int) -> list[Any]:
        out: list[Any] = []
        while True:
            self.skip()
            if self.i >= self.n:
                raise self.error(f"unexpected end of input (expected {close!r})")
            if self.s[self.i] == close:
                self.i += 1
                return out
            v = self.form(depth + 1)
            if v is not _DISCARD:
                out.append(v)

    def dispatch(self, depth: int) -> Any:
        start = self.i
        self.i += 1
        if self.i >= self.n:
            raise self.error("unexpected end of input after '#'", start)
        c = self.s[self.i]
        if c == "{":
            self.i += 1
            return frozenset(_hashable(v) for v in self.seq("}", depth))
        if c == "_":
            self.i += 1
            self.form(depth + 1)
            return _DISCARD
        if c == "#":  # ##Inf, ##NaN
            self.i += 1
            tok = self.token()
            values = {"Inf": float("inf"), "-Inf": float("-inf"), "NaN": float("nan")}
            if tok not in values:
                raise self.error(f"unknown symbolic value ##{tok}", start)
            return values[tok]
        if c.isalpha():
            self.token()  # the tag; the form after it is the value
            v = self.form(depth + 1)
            return v
        raise self.error(f"unsupported dispatch '#{c}'", start)

    def token(self) -> str:
        j = self.i
        s, n = self.s, self.n
        while j < n and s[j] not in _DELIMS:
            j += 1
        tok = s[self.i:j]
        self.i = j
        return tok

    def string(self) -> str:
        start = self.i
        self.i += 1
        parts: list[str] = []
        s, n = self.s, self.n
        while True:
            j = self.i
            while j < n and s[j] not in '"\\':
                j += 1
            parts.append(s[self.i:j])
            if j >= n:
                raise self.error("unterminated string", start)
            if s[j] == '"':
                self.i = j + 1
                return "".join(parts)
            if j + 1 >= n:
                raise self.error("unterminated string", start)
            e = s[j + 1]
            if e == "u":
                code = s[j + 2:j + 6]
                try:
                    parts.append(chr(int(code, 16)))
                except ValueError:
                    raise self.error(f"bad escape \\u{code}", j) from None
                self.i = j + 6
            elif e in _ESCAPES:
                parts.append(_ESCAPES[e])
                self.i = j + 2
            else:
                raise self.error(f"bad escape \\{e}", j)

    def char(self) -> str:
        start = self.i
        self.i += 1
        if self.i >= self.n:
            raise self.error("unexpected end of input after '\\'", start)
        j = self.i + 1
        while j < self.n and self.s[j] not in _DELIMS:
            j += 1
        tok = self.s[self.i:j]
        self.i = j
        if len(tok) == 1:
            return tok
        if tok in _CHARS:
            return _CHARS[tok]
        if tok.startswith("u") and len(tok) == 5:
            try:
                return chr(int(tok[1:], 16))
            except ValueError:
                pass
        raise self.error(f"unknown character \\{tok}", start)

    def atom(self) -> Any:
        start = self.i
        tok = self.token()
        if not tok:
            raise self.error(f"unexpected {self.s[self.i]!r}")
        if tok == "nil":
            return None
        if tok == "true":
            return True
        if tok == "false":
            return False
        if tok[0] == ":":
            if len(tok) == 1:
                raise self.error("empty keyword", start)
            return Keyword(tok[2:] if tok.startswith("::") else tok[1:])
        c = tok[0]
        if c.isdigit() or (c in "+-" and len(tok) > 1 and tok[1].isdigit()):
            return self.number(tok, start)
        return Symbol(tok)

    def number(self, tok: str, start: int) -> int | float:
        body = tok[:-1] if tok[-1] in "NM" else tok
        try:
            if "/" in body:
                num, den = body.split("/", 1)
                return int(num) / int(den)
            if any(ch in body for ch in ".eE") and not body.lower().startswith(("0x", "-0x", "+0x")):
                return float(body)
            return int(body, 0) if body.lower().lstrip("+-").startswith("0x") else int(body)
        except (ValueError, ZeroDivisionError):
            raise self.error(f"bad number {tok!r}", start) from None


def read_forms(text: str) -> Iterator[tuple[int, Any]]:
    """Each top-level form of ``text`` with the line it starts on; raises :class:`EDNError`."""
    r = _Reader(text)
    while True:
        r.skip()
        if r.i >= r.n:
            return
        line, _ = r.where()
        v = r.form()
        if v is not _DISCARD:
            yield line, v


def read_items(text: str) -> Iterator[tuple[int, Any]]:
    """Like :func:`read_forms`, but a top-level vector yields its elements, each with its own line
    (a Jepsen history is one map per line, or one vector of maps)."""
    r = _Reader(text)
    while True:
        r.skip()
        if r.i >= r.n:
            return
        line, _ = r.where()
        if r.s[r.i] != "[":
            v = r.form()
            if v is not _DISCARD:
                yield line, v
            continue
        r.i += 1
        while True:
            r.skip()
            if r.i >= r.n:
                raise r.error("unexpected end of input (expected ']')")
            if r.s[r.i] == "]":
                r.i += 1
                break
            line, _ = r.where()
            v = r.form(1)
            if v is not _DISCARD:
                yield line, v


def loads(text: str) -> Any:
    """The single form of ``text`` (raises :class:`EDNError` when there is none or more than one)."""
    forms = list(read_forms(text))
    if len(forms) != 1:
        raise EDNError(1, 1, f"expected one form, found {len(forms)}")
    return forms[0][1]
