"""``hcc fidelity``: every Java citation of ``docs/fidelity.md`` checked against Hudi's published jars.

The document cites Hudi's Java row by row. This module reads those citations, ties each to a class
file of a released jar and checks it in one release:

* **The document.** A *pin table* is a Markdown table whose header starts with ``file`` and has a
  ``commit`` or ``pin`` column: each row pins a Hudi source file (its path, ``...`` abbreviating
  ``hudi-client/hudi-client-common/src/main/java/org/apache/hudi``; a ``/.../`` inside a path such as
  ``hudi-common/.../common/util/X.java`` abbreviating ``src/main/java/org/apache/hudi``; ``same file``
  the row above's) at a commit or an index id (history: where it was first read), and its ``released``
  column says whose text the rows' line numbers are counted in: a release (``1.2.0``), ``no release ...``
  (a pull request's branch: rows citing it follow no release, so a method missing from a release is
  expected), or ``—`` (a commit text no release was re-counted for: unserved modules, Scala).
  A *row table* is one whose header starts with ``#`` and has a ``Java (line)`` column; each row's id
  (``P1``, ``NB12``) and that column are read.
* **How a citation is tied to its class** (:func:`parse_doc`). In the Java cell, a backticked
  ``Class#method``, ``Outer.Inner#method(Type, Type)``, ``Class#<init>``, ``Class.FIELD`` or ``Class``
  names its class; a bare ``#method`` or ``FIELD`` belongs to the class last named in the same cell, and
  at the cell's start to the *section's class*: the first word of the section's heading (``##`` or
  ``###``) that names a pinned file (``## StorageBasedLockProvider (...)``). A bare citation with
  neither is an error of the document (:class:`DocError`, naming the doc line and the row). A class name
  is looked up in the pin table that precedes the row first, then in every pin table; one pinned twice
  (two commits) takes the pin the citation names, else the first. A class in no pin table is looked up
  by its simple name in the release's jars; its lines are checked only when the citation names the
  release (``(1.2.0: 94-106)``).
* **Line numbers.** A parenthesised group right after a citation gives its lines: ``(316-319)``,
  ``(128-135, 180-202: owner id 130)``, ``(136-)`` (from 136 on), ``(985 begin, 998 heartbeat)``: every
  number of at most 5 digits not after ``@`` or ``#`` is a line. Its pin: a release (``1.2.1: 137-147``),
  a commit prefix (7+ hex digits, or 6+ digits) or ``id N`` / ``ids N, M`` / ``stored (file) id N``
  (the pin table's row of that commit or id). ``@N`` is a character offset of an index text (such a
  citation's lines are not checked). ``(1.2.0: 1-2; 1.2.1: 3-4)``, two pinned line specs, is one
  citation per spec. A group that only pins (no lines) applies to every citation of its ``;``-segment
  that names no pin yet; a pin given with lines carries to the following citations of the same class
  in the segment. A bare ``, 80`` or ``, 82-90`` after a citation cites lines of that citation's class
  (a constant): they must lie inside the class. Backticks inside a parenthesised group are remarks,
  not citations.
* **The check** (:func:`check`). A class of a module Maven Central does not serve here (``hudi-aws``,
  ``hudi-gcp``, ``hudi-azure``, ``hudi-cli``: ``backends/hudi/artifacts.toml`` pins what is served) or
  not Java (Scala, the website) is ``unverifiable``. Otherwise the class is read from the release's
  ``-sources.jar`` when one is pinned (methods found by parsing the source: a span runs from the first
  annotation or modifier to the closing brace; a member only the class file has, a lombok getter, is
  taken from it), else from its class file (``javap -p -l -c``: a method's span is the min..max of its
  LineNumberTable and its lambdas', widened by ``SLACK_BEFORE``/``SLACK_AFTER``, or, when the lines
  are counted in a release with sources whose class file has the same line table shifted by *d*, that
  source span shifted by *d*). ``missing``: the class or member is absent; ``moved``: a cited range
  lies inside no member of that name (the released spans are given); else ``ok``. Each ``ok`` method
  carries the sha256 of its text (whitespace normalised) or of its normalised bytecode.

A citation is an **error** in release V when it is wrong about the text it cites: its member (or class)
is missing in V while the row claims a release and the citation cites V's text or none in particular;
or its lines are counted in V's text and fall outside the member. A citation of another release's text
(a 1.2.1 method checked in 1.2.0) or of a pull request's branch is reported, never an error: the
document counts each line in one text, and :func:`compare` says which cited methods changed between
two releases (normalised bytecode of both releases' class files).
"""

from __future__ import annotations

import hashlib
import os
import re
import subprocess
import zipfile
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from backends.hudi import artifacts
from backends.hudi.artifacts import ArtifactError

STATUSES = ("ok", "moved", "missing", "unverifiable")

# The ``...`` abbreviation of the document's pin tables: hudi-client-common's source root.
CLIENT_COMMON = "hudi-client/hudi-client-common/src/main/java/org/apache/hudi"

# A source path's first segments -> the Maven artifact that ships its classes.
MODULES = {
    "hudi-client/hudi-client-common": "hudi-client-common",
    "hudi-client/hudi-java-client": "hudi-java-client",
    "hudi-client/hudi-spark-client": "hudi-spark-client",
    "hudi-common": "hudi-common",
    "hudi-io": "hudi-io",
    "hudi-hadoop-common": "hudi-hadoop-common",
    "hudi-aws": "hudi-aws",
    "hudi-gcp": "hudi-gcp",
    "hudi-azure": "hudi-azure",
    "hudi-cli": "hudi-cli",
}

# Slack of a span read from bytecode alone: a LineNumberTable starts at the first statement and ends at
# the last one, while a method in the source starts at its annotations and signature (K1 cites a
# declaration's line) and ends at its closing brace and the braces of the blocks it ends in. Measured on
# the 1,345 methods of the classes the document cites in Hudi 1.2.0 (source span against class file):
# the first statement is 0-3 lines after the source's start for 95% of them (4-10 for a signature over
# several lines or a comment before the first statement), the last 0-2 lines before its end for 99%.
# Constructors' tables also hold the field initialisers, so their spans start earlier.
SLACK_BEFORE = 4
SLACK_AFTER = 3


class DocError(ValueError):
    """docs/fidelity.md cannot be read as citations: the message names the doc line, the row and the text."""


# ----------------------------------------------------------------------------------------------------
# The document


@dataclass(frozen=True)
class Pin:
    """One row of a pin table: a Hudi source file at a commit (or index id), and whose text its rows'
    line numbers are counted in."""

    path: str  # as written in the document
    source_path: str  # with the ``...`` abbreviations expanded
    module: str | None  # Maven artifact (None: not Java, or a module the document names no artifact for)
    fqcn: str | None  # org.apache.hudi... (None: not a Java file)
    pin: str  # commit or ``id N`` as written
    released: str | None  # the release its rows' lines are counted in
    claims_release: bool  # False: ``no release`` (a pull request's branch, an older master)
    doc_line: int
    table: int  # index of its pin table in the document

    @property
    def class_name(self) -> str:
        """The file's simple class name (``StorageBasedLockProvider``)."""
        return self.source_path.rsplit("/", 1)[-1].split(".", 1)[0]


@dataclass(frozen=True)
class Citation:
    """One Java citation of a row: a class, a member of it (or none: the class, or lines of it)."""

    row: str  # P1, NB12
    section: str  # the heading above the row's table
    doc_line: int
    text: str  # as cited, e.g. "#tryLock (316-319)"
    cls: str  # class as named: "StorageBasedLockProvider", "HoodieWriteConfig.Builder"
    member: str | None  # "tryLock", "<init>", "ENABLE"; None: the class or lines of it
    kind: str  # "method", "field", "class", "lines"
    params: tuple[str, ...] | None = None  # simple type names when the citation gives them
    lines: tuple[tuple[int, int | None], ...] = ()  # (first, last); last None: open range
    pin_token: str | None = None  # the pin the citation names (commit prefix, "id N" or a release)
    offsets: bool = False  # cited by character offset of an index text
    pin: Pin | None = None  # resolved

    @property
    def released(self) -> str | None:
        """The release whose text the citation's lines are counted in (None: not a release's)."""
        if self.pin_token and _VERSION.fullmatch(self.pin_token):
            return self.pin_token
        return self.pin.released if self.pin else None

    @property
    def claims_release(self) -> bool:
        """Whether the row follows a release here (False for a pin marked ``no release``)."""
        if self.pin_token and _VERSION.fullmatch(self.pin_token):
            return True
        return self.pin.claims_release if self.pin else True


@dataclass
class Doc:
    """The citations of a document and its pin tables."""

    pins: list[Pin]
    citations: list[Citation]

    def default_version(self) -> str | None:
        """The release most pin-table rows count their line numbers in (``hcc fidelity``'s default; a
        tie goes to the newer)."""
        named = [p.released for p in self.pins if p.released]
        if not named:
            return None
        return max(set(named), key=lambda v: (named.count(v), _version_key(v)))


_VERSION = re.compile(r"\d+\.\d+\.\d+")
_ROW_ID = re.compile(r"[A-Z]+\d+")
_METHOD = re.compile(r"(?P<cls>[A-Z]\w*(?:\.[A-Z]\w*)*)?#(?P<name><init>|\w+)(?:\((?P<params>[^)]*)\))?")
_FIELD = re.compile(r"(?:(?P<cls>[A-Z]\w*[a-z]\w*(?:\.[A-Z]\w*[a-z]\w*)*)\.)?(?P<name>[A-Z][A-Z0-9_]+)")
_CLASS = re.compile(r"[A-Z]\w*[a-z]\w*(?:\.[A-Z]\w*[a-z]\w*)*")
_LINE = re.compile(r"(?<![\w@#./$-])(\d{1,5})(?:-(\d{1,5})?)?(?![\w./])")
_COMMIT = re.compile(r"(?<![\w@#.])([0-9a-f]{7,40}|\d{6,})(?![\w.])")
_ID = re.compile(r"\b(?:stored file id|stored id|index ids?|ids?)\s+(\d{6,})")


def parse_doc(text: str) -> Doc:
    """The pin tables and citations of ``text`` (docs/fidelity.md); DocError for a citation that is
    tied to no class."""
    lines = text.splitlines()
    pins: list[Pin] = []
    tables: list[list[Pin]] = []
    raw: list[tuple[int, str, str, str, int]] = []  # doc line, row ("": a heading), section, cell, pin table
    section = ""
    header: list[str] | None = None
    for n, line in enumerate(lines, start=1):
        if line.startswith("#"):
            section = line.lstrip("#").strip()
            header = None
            raw.append((n, "", section, "", -1))
            continue
        if not line.startswith("|"):
            header = None
            continue
        cells = _cells(line)
        if header is None:
            header = [c.lower() for c in cells]
            if _is_pin_table(header):
                tables.append([])
            continue
        if set("".join(cells)) <= set("-: |"):
            continue
        if _is_pin_table(header) and tables:
            pin = _pin_row(cells, header, n, len(tables) - 1, tables[-1][-1] if tables[-1] else None)
            if pin is not None:
                pins.append(pin)
                tables[-1].append(pin)
        elif header[0] == "#" and any(h.startswith("java") for h in header) and _ROW_ID.fullmatch(cells[0]):
            col = next(i for i, h in enumerate(header) if h.startswith("java"))
            raw.append((n, cells[0], section, cells[col] if col < len(cells) else "", len(tables) - 1))
    citations: list[Citation] = []
    section_class = None  # a heading's class, once every pin table is known
    for n, row, sec, cell, table in raw:
        if not row:
            section_class = _heading_class(sec, pins)
            continue
        for c in _parse_cell(cell, row, sec, n, section_class):
            citations.append(replace(c, pin=_resolve_pin(c, pins, tables[table] if table >= 0 else [])))
    return Doc(pins, citations)


def _is_pin_table(header: Sequence[str]) -> bool:
    """A pin table's header: ``file ...`` first, a ``commit`` or ``pin`` column."""
    return header[0].startswith("file") and any(h.split()[:1] in (["commit"], ["pin"]) for h in header)


def _cells(line: str) -> list[str]:
    """A Markdown table line's cells (a ``|`` inside backticks, as in ``\\|``, does not split)."""
    out, cur, tick = [], "", False
    body = line.strip()
    body = body[1:] if body.startswith("|") else body
    body = body[:-1] if body.endswith("|") and not body.endswith("\\|") else body
    i = 0
    while i < len(body):
        ch = body[i]
        if ch == "\\" and i + 1 < len(body) and body[i + 1] == "|":
            cur += "|"
            i += 2
            continue
        if ch == "`":
            tick = not tick
        if ch == "|" and not tick:
            out.append(cur.strip())
            cur = ""
        else:
            cur += ch
        i += 1
    out.append(cur.strip())
    return out


def expand_path(path: str) -> str:
    """A pin table's path with its ``...`` abbreviations written out."""
    if path.startswith(".../"):
        return CLIENT_COMMON + "/" + path[4:]
    if "/.../" in path:
        head, tail = path.split("/.../", 1)
        return f"{head}/src/main/java/org/apache/hudi/{tail}"
    return path


def module_of(source_path: str) -> str | None:
    """The Maven artifact of a Hudi source path (None: the document names no artifact for its module)."""
    for prefix, artifact in MODULES.items():
        if source_path.startswith(prefix + "/"):
            return artifact
    return None


def _pin_row(cells: list[str], header: list[str], n: int, table: int, previous: Pin | None) -> Pin | None:
    paths = re.findall(r"`([^`]+\.(?:java|scala|md))`", cells[0])
    if not paths and previous is not None and cells[0].strip().lower() == "same file":
        paths = [previous.path]
    if not paths:
        return None  # "Hudi's tests ported" and other rows that pin no single file
    path = paths[0]
    col = {h.split()[0] if h else h: i for i, h in enumerate(header)}
    pin_col = col.get("commit", col.get("pin", 1))
    pin_text = cells[pin_col] if pin_col < len(cells) else ""
    commit = re.search(r"`([0-9a-f]{7,40})`", pin_text)
    ident = _ID.search(pin_text)
    pin = commit.group(1) if commit else (f"id {ident.group(1)}" if ident else pin_text.strip())
    rcol = col.get("released", len(cells))
    released_text = cells[rcol] if rcol < len(cells) else ""
    version = _VERSION.search(released_text)
    claims = "no release" not in released_text.lower()
    source = expand_path(path)
    fqcn = None
    if source.endswith(".java") and "/java/" in source:
        fqcn = source.split("/java/", 1)[1][: -len(".java")].replace("/", ".")
    return Pin(path=path, source_path=source, module=module_of(source), fqcn=fqcn, pin=pin,
               released=version.group(0) if version and claims else None, claims_release=claims,
               doc_line=n, table=table)


def _heading_class(heading: str, pins: Sequence[Pin]) -> str | None:
    """The section's class: the first word of its heading that names a pinned file."""
    names = {p.class_name for p in pins}
    for word in re.findall(r"[A-Za-z]\w*", heading):
        if word in names:
            return str(word)
    return None


def _split_top(text: str, sep: str) -> list[str]:
    """``text`` split at ``sep`` outside backticks and parentheses."""
    out, cur, depth, tick = [], "", 0, False
    for ch in text:
        if ch == "`":
            tick = not tick
        elif not tick and ch == "(":
            depth += 1
        elif not tick and ch == ")":
            depth = max(0, depth - 1)
        if ch == sep and depth == 0 and not tick:
            out.append(cur)
            cur = ""
        else:
            cur += ch
    out.append(cur)
    return out


def _tokens(segment: str) -> list[tuple[str, str]]:
    """A segment's tokens: ("tick", code), ("paren", inner text), ("text", anything else)."""
    out: list[tuple[str, str]] = []
    i, cur = 0, ""
    while i < len(segment):
        ch = segment[i]
        if ch in "`(":
            if cur:
                out.append(("text", cur))
                cur = ""
            if ch == "`":
                j = segment.find("`", i + 1)
                j = len(segment) if j < 0 else j
                out.append(("tick", segment[i + 1:j]))
                i = j + 1
                continue
            depth, j, tick = 0, i, False
            while j < len(segment):
                c = segment[j]
                if c == "`":
                    tick = not tick
                elif not tick and c == "(":
                    depth += 1
                elif not tick and c == ")":
                    depth -= 1
                    if depth == 0:
                        break
                j += 1
            out.append(("paren", segment[i + 1:j]))
            i = j + 1
            continue
        cur += ch
        i += 1
    if cur:
        out.append(("text", cur))
    return out


@dataclass
class _Spec:
    lines: list[tuple[int, int | None]] = field(default_factory=list)
    pin: str | None = None
    offsets: bool = False


def _paren_specs(inner: str) -> list[_Spec]:
    """A parenthesised group read as line specs (one, or one per ``;`` part when several parts give
    lines and a pin)."""
    parts = [_paren_spec(p) for p in _split_top(inner, ";")]
    pinned = [p for p in parts if p.lines and p.pin]
    if len(pinned) >= 2:
        return [p for p in parts if p.lines]
    whole = _Spec()
    for p in parts:
        whole.lines += p.lines
        whole.pin = whole.pin or p.pin
        whole.offsets = whole.offsets or p.offsets
    return [whole]


def _paren_spec(text: str) -> _Spec:
    spec = _Spec()
    plain = re.sub(r"`[^`]*`", " ", text)
    ident = _ID.search(plain)
    if ident:
        spec.pin = f"id {ident.group(1)}"
        plain = plain[: ident.start()] + " " + _ID.sub(" ", plain[ident.start():])
    version = _VERSION.search(plain)
    if version and spec.pin is None:
        spec.pin = version.group(0)
    plain = _VERSION.sub(" ", plain)
    if re.search(r"@\d", plain):
        spec.offsets = True
    plain = re.sub(r"@\d+(?:-\d+)?(?:,\s*@\d+(?:-\d+)?)*", " ", plain)
    commit = _COMMIT.search(plain)
    if commit and spec.pin is None:
        spec.pin = commit.group(1)
    plain = _COMMIT.sub(" ", plain)
    for m in _LINE.finditer(plain):
        first = int(m.group(1))
        if m.group(0).endswith("-"):
            spec.lines.append((first, None))
        else:
            spec.lines.append((first, int(m.group(2)) if m.group(2) else first))
    return spec


def _parse_tick(code: str, current: str | None) -> tuple[str | None, str | None, str, tuple[str, ...] | None]:
    """A backticked span as (class, member, kind, params); kind "" when it is no citation."""
    code = code.strip()
    m = _METHOD.fullmatch(code)
    if m:
        params = None
        if m.group("params") is not None:
            params = tuple(_simple_type(p) for p in _split_params(m.group("params")))
        return m.group("cls") or current, m.group("name"), "method", params
    m = _FIELD.fullmatch(code)
    if m and (m.group("cls") or "." not in code):
        return m.group("cls") or current, m.group("name"), "field", None
    if _CLASS.fullmatch(code):
        return code, None, "class", None
    return None, None, "", None


def _parse_cell(cell: str, row: str, section: str, n: int, section_class: str | None) -> list[Citation]:
    out: list[Citation] = []
    current = section_class
    for segment in _split_top(cell, ";"):
        seg_start = len(out)
        carry: tuple[str, str] | None = None  # (class, pin) a pin given with lines carries to
        last: Citation | None = None
        after = ""  # what came after the last citation (a paren, text)
        for kind, value in _tokens(segment):
            if kind == "tick":
                cls, member, what, params = _parse_tick(value, current)
                if not what:
                    after += "x"
                    continue
                if cls is None:
                    raise DocError(f"line {n}, row {row}: `{value}` names no class and the section "
                                   f"{section!r} names none (write Class#method)")
                current = cls
                pin = carry[1] if carry and carry[0] == cls else None
                last = Citation(row=row, section=section, doc_line=n, text=f"`{value}`", cls=cls,
                                member=member, kind=what, params=params, pin_token=pin)
                out.append(last)
                after = ""
            elif kind == "paren":
                specs = _paren_specs(value)
                if last is not None and after == "":
                    base = out.pop()
                    for spec in specs:
                        pin = spec.pin or base.pin_token
                        c = replace(base, text=f"{base.text} ({value})", lines=tuple(spec.lines),
                                    pin_token=pin, offsets=spec.offsets)
                        out.append(c)
                        if spec.pin and spec.lines:
                            carry = (c.cls, spec.pin)
                    last = out[-1]
                    if len(specs) == 1 and specs[0].pin and not specs[0].lines:
                        _pin_back(out, seg_start, specs[0].pin)
                elif len(specs) == 1 and specs[0].pin and not specs[0].lines and out[seg_start:]:
                    _pin_back(out, seg_start, specs[0].pin)  # a trailing group that only pins
                after += "p"
            else:
                m = re.fullmatch(r"(?:,\s*\d{1,5}(?:-\d{1,5})?)+\s*,?\s*", value)
                if m and last is not None and after in ("", "p"):
                    for num in re.finditer(r"(\d{1,5})(?:-(\d{1,5}))?", value):
                        first = int(num.group(1))
                        out.append(Citation(row=row, section=section, doc_line=n, text=num.group(0),
                                            cls=last.cls, member=None, kind="lines",
                                            lines=((first, int(num.group(2)) if num.group(2) else first),),
                                            pin_token=last.pin_token))
                    after = ""
                elif value.strip(" ,"):
                    after += "t"
                    last = None if not value.strip().startswith(",") else last
    return out


def _pin_back(out: list[Citation], start: int, pin: str) -> None:
    for i in range(start, len(out)):
        if out[i].pin_token is None:
            out[i] = replace(out[i], pin_token=pin)


def _resolve_pin(c: Citation, pins: Sequence[Pin], table: Sequence[Pin]) -> Pin | None:
    """The pin table row of a citation's class (its outer class's file), by the pin it names if any."""
    outer = c.cls.split(".", 1)[0]
    for scope in (table, pins):
        found = [p for p in scope if p.class_name == outer]
        if not found:
            continue
        token = c.pin_token
        if token and not _VERSION.fullmatch(token):
            named = [p for p in found if p.pin == token or (not token.startswith("id ") and
                                                                p.pin.startswith(token))]
            if named:
                return named[0]
        return found[0]
    return None


# ----------------------------------------------------------------------------------------------------
# Classes as released: members and their spans, from sources or bytecode


@dataclass(frozen=True)
class Member:
    """A method, constructor (``<init>``) or field of a released class, with its line span."""

    name: str
    params: tuple[str, ...]  # simple type names
    first: int
    last: int
    digest: str  # sha256 of its text (normalised whitespace) or of its normalised bytecode
    kind: str = "method"  # or "field"
    table: tuple[int, ...] = ()  # bytecode: the lines of its LineNumberTable and its lambdas', sorted

    def span(self) -> str:
        """``first-last``."""
        return f"{self.first}-{self.last}"


@dataclass(frozen=True)
class ClassShape:
    """What a release has of one class: its members and its span; read from ``source`` or ``bytecode``."""

    fqcn: str
    artifact: str
    origin: str  # "source" or "bytecode"
    first: int
    last: int
    members: tuple[Member, ...]
    bytecode: dict[str, str] = field(default_factory=dict, compare=False)  # member key -> normalised


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def blank_java(text: str) -> str:
    """``text`` with comments, string and char literals replaced by spaces (newlines kept)."""
    out = list(text)
    i, n = 0, len(text)

    def blank(a: int, b: int) -> None:
        for k in range(a, min(b, n)):
            if out[k] != "\n":
                out[k] = " "

    while i < n:
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            blank(i, j)
            i = j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            blank(i, j)
            i = j
        elif text.startswith('"""', i):
            j = text.find('"""', i + 3)
            j = n if j < 0 else j + 3
            blank(i + 1, j - 1)
            i = j
        elif text[i] in "\"'":
            q, j = text[i], i + 1
            while j < n and text[j] != q and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            blank(i + 1, j)
            i = j + 1
        else:
            i += 1
    return "".join(out)


_TYPE_DECL = re.compile(r"\b(class|interface|enum|record)\s+([A-Za-z_]\w*)")
_KEYWORDS = {"if", "for", "while", "switch", "catch", "synchronized", "return", "new", "throw", "else",
             "try", "do", "assert", "super", "this", "case"}


def _match(code: str, i: int, open_ch: str, close_ch: str) -> int:
    depth = 0
    for j in range(i, len(code)):
        if code[j] == open_ch:
            depth += 1
        elif code[j] == close_ch:
            depth -= 1
            if depth == 0:
                return j
    return len(code) - 1


def _line_at(code: str, i: int) -> int:
    return code.count("\n", 0, i) + 1


def _body_of(code: str, path: Sequence[str]) -> tuple[int, int, int] | None:
    """(declaration offset, ``{`` offset, ``}`` offset) of the nested type ``path`` (outer first)."""
    start, end, decl = 0, len(code), 0
    for name in path:
        found = None
        for m in _TYPE_DECL.finditer(code, start, end):
            if m.group(2) != name:
                continue
            brace = code.find("{", m.end(), end)
            if brace < 0:
                continue
            found = (m.start(), brace, _match(code, brace, "{", "}"))
            break
        if found is None:
            return None
        decl, start, end = found[0], found[1] + 1, found[2]
    return decl, start - 1, end


def _member_start(code: str, body_open: int, name_at: int) -> int:
    """Where a member's declaration begins: after the previous member's ``;``, ``}`` or the body's ``{``."""
    j = name_at
    while j > body_open and code[j - 1] not in ";{}":
        j -= 1
    while j < name_at and code[j].isspace():
        j += 1
    return j


def _split_params(text: str) -> list[str]:
    out, cur, depth = [], "", 0
    for ch in text:
        if ch == "<":
            depth += 1
        elif ch == ">":
            depth -= 1
        if ch == "," and depth == 0:
            out.append(cur)
            cur = ""
        else:
            cur += ch
    if cur.strip():
        out.append(cur)
    return [p.strip() for p in out if p.strip()]


def _simple_type(text: str) -> str:
    """``java.util.concurrent.TimeUnit`` / ``Map<K, V>`` / ``Outer$Inner`` -> ``TimeUnit`` / ``Map`` /
    ``Inner``; arrays and varargs keep ``[]``."""
    t = re.sub(r"<.*>", "", " ".join(text.split())).strip()
    dims = t.count("[]") + (1 if t.endswith("...") else 0)
    t = t.replace("[]", "").replace("...", "").strip()
    return re.split(r"[.$]", t)[-1] + "[]" * dims


def _source_param_types(text: str) -> tuple[str, ...]:
    out = []
    for p in _split_params(text):
        p = re.sub(r"@\w+(?:\.\w+)*(?:\([^)]*\))?", " ", p)
        p = re.sub(r"\bfinal\b", " ", p).strip()
        typ = p.rsplit(None, 1)[0] if len(p.split()) > 1 else p
        out.append(_simple_type(typ))
    return tuple(out)


def source_shape(text: str, nested: Sequence[str], fqcn: str, artifact: str) -> ClassShape | None:
    """The members of the type ``nested`` (outer first: ``["HoodieWriteConfig", "Builder"]``) in the
    Java source ``text``: methods and constructors by parsing (spans from their first annotation or
    modifier to their closing brace, digests of their text with whitespace normalised) and fields."""
    code = blank_java(text)
    body = _body_of(code, nested)
    if body is None:
        return None
    decl, open_at, close_at = body
    members: list[Member] = []
    depth, parens, i = 0, 0, open_at + 1  # braces and parentheses opened inside the type's body
    src_lines = text.splitlines()
    while i < close_at:
        ch = code[i]
        if ch in "{}":
            depth += 1 if ch == "{" else -1
        elif ch in "()":
            parens += 1 if ch == "(" else -1
        elif depth == 0 and parens == 0 and (ch.isalpha() or ch == "_"):
            m = re.match(r"[A-Za-z_]\w*", code[i:])
            if m is None:
                i += 1
                continue
            word = m.group(0)
            j = i + len(word)
            k = j
            while k < close_at and code[k].isspace():
                k += 1
            before = code[max(open_at, i - 20):i].rstrip()
            call = before.endswith(("new", ".", "@"))
            if k < close_at and code[k] == "(" and word not in _KEYWORDS and not call:
                end_paren = _match(code, k, "(", ")")
                after = end_paren + 1
                rest = re.match(r"\s*(?:throws\s+[\w.<>?,\s]+?)?\s*([{;=])", code[after:close_at])
                if rest and rest.group(1) == "{":
                    brace = after + rest.end() - 1
                    end = _match(code, brace, "{", "}")
                    start = _member_start(code, open_at, i)
                    name = "<init>" if word == nested[-1] else word
                    first, last = _line_at(code, start), _line_at(code, end)
                    body_text = "\n".join(src_lines[first - 1:last])
                    members.append(Member(name=name, params=_source_param_types(code[k + 1:end_paren]),
                                          first=first, last=last,
                                          digest=_sha(" ".join(body_text.split()))))
                    i = end + 1
                    continue
                if rest and rest.group(1) == ";":
                    i = after
                    continue
            if k < close_at and code[k] in "=;," and word[:1].isalpha():
                line = _line_at(code, i)
                members.append(Member(name=word, params=(), first=line, last=line,
                                      digest=_sha(" ".join(src_lines[line - 1].split())), kind="field"))
            i = j
            continue
        i += 1
    return ClassShape(fqcn=fqcn, artifact=artifact, origin="source", first=_line_at(code, decl),
                      last=_line_at(code, close_at), members=tuple(members))


_JAVAP_MEMBER = re.compile(r"^  (?!  )(?P<decl>[^ ].*?);$")


def javap_shapes(jar: Path, classes: Sequence[str], artifact: str, javap: str) -> dict[str, ClassShape]:
    """The members of ``classes`` (binary names, ``Outer$Inner``) in ``jar``, read with
    ``javap -p -l -c``: each method's span is the min..max of its LineNumberTable and of the lambdas
    javac named after it (``lambda$name$N``, ``lambda$new$N`` for a constructor), its digest that of its
    bytecode normalised by :func:`normalise_bytecode` (its lambdas' included, sorted). Classes javap
    does not find are left out."""
    if not classes:
        return {}
    proc = subprocess.run([javap, "-p", "-l", "-c", "-cp", str(jar), *classes], capture_output=True,
                          text=True, check=False)
    out: dict[str, ClassShape] = {}
    for chunk in re.split(r"^(?=Compiled from )", proc.stdout, flags=re.M):
        m = re.search(r"^(?:[\w ]*?)(?:class|interface|enum)\s+([\w.$]+)", chunk, flags=re.M)
        if not m or m.group(1) not in classes:
            continue
        out[m.group(1)] = shape_from_javap(m.group(1), chunk, artifact)
    return out


_Raw = tuple[str, tuple[str, ...], list[int], str, str]  # name, params, line table, code, kind


def shape_from_javap(fqcn: str, chunk: str, artifact: str) -> ClassShape:
    """A class's shape from its ``javap -p -l -c`` text (see :func:`javap_shapes`); a compiler bridge
    (a covariant return: one instruction block at the class's first line calling the method of the same
    name) is left out."""
    simple = fqcn.rsplit(".", 1)[-1]
    raw: list[_Raw] = []
    fields: list[str] = []
    cur: list[str] | None = None
    name, kind = "", "method"
    params: tuple[str, ...] = ()
    for line in chunk.splitlines():
        m = _JAVAP_MEMBER.match(line)
        if m and not line.startswith("   "):
            if cur is not None:
                raw.append((name, params, _lnt(cur), "\n".join(cur), kind))
                cur = None
            decl = m.group("decl")
            if "(" not in decl:
                if decl.strip() != "static {}":
                    fields.append(decl.split()[-1])
                    continue
                name, params, kind, cur = "<clinit>", (), "method", []
                continue
            head, args = decl.split("(", 1)
            word = head.split()[-1]
            name = "<init>" if word == fqcn or word.rsplit(".", 1)[-1] == simple else word
            params = tuple(_simple_type(p) for p in _split_params(args.rsplit(")", 1)[0]))
            kind, cur = "method", [decl]  # its modifiers, types and throws are part of what is compared
            continue
        if cur is not None:
            cur.append(line)
    if cur is not None:
        raw.append((name, params, _lnt(cur), "\n".join(cur), kind))
    lambdas = [r for r in raw if r[0].startswith("lambda$")]
    methods = [r for r in raw if not r[0].startswith("lambda$") and r[0] != "$deserializeLambda$"]
    own: dict[int, list[_Raw]] = {i: [] for i in range(len(methods))}
    for lam in lambdas:
        host = lam[0].split("$")[1]
        host = {"new": "<init>", "static": "<clinit>"}.get(host, host)
        cands = [i for i, r in enumerate(methods) if r[0] == host]
        if not cands or not lam[2]:
            continue
        lo = min(lam[2])
        inside = [i for i in cands if methods[i][2] and min(methods[i][2]) <= lo <= max(methods[i][2])]
        below = sorted((i for i in cands if methods[i][2] and min(methods[i][2]) <= lo),
                       key=lambda i: lo - max(methods[i][2]))
        pick = inside[0] if inside else (below[0] if below else cands[0])
        own[pick].append(lam)
    members: list[Member] = []
    codes: dict[str, str] = {}
    all_lines: list[int] = []
    names = [r[0] for r in methods]
    bridges = {i for i, r in enumerate(methods) if names.count(r[0]) > 1 and _is_bridge(r[0], r[3], r[2])}
    lowest = min((x for i, r in enumerate(methods) if i not in bridges for x in r[2]), default=0)
    for i, (mname, mparams, mlines, code, _) in enumerate(methods):
        lines = mlines + [x for lam in own[i] for x in lam[2]]
        if not lines or (i in bridges and max(mlines) <= lowest):
            continue
        norm = normalise_bytecode(code)
        extra = sorted(normalise_bytecode(lam[3]) for lam in own[i])
        text = "\n".join([norm, *extra])
        members.append(Member(name=mname, params=mparams, first=min(lines), last=max(lines),
                              digest=_sha(text), table=tuple(sorted(set(lines)))))
        codes[_key(mname, mparams)] = text
        all_lines += lines
    for fname in fields:
        members.append(Member(name=fname, params=(), first=0, last=0, digest="", kind="field"))
    first = min(all_lines) if all_lines else 0
    last = max(all_lines) if all_lines else 0
    return ClassShape(fqcn=fqcn, artifact=artifact, origin="bytecode", first=1 if all_lines else 0,
                      last=last if all_lines else first, members=tuple(members), bytecode=codes)


def _is_bridge(name: str, code: str, lines: Sequence[int]) -> bool:
    """A compiler bridge (a covariant return, an erased parameter): one line (the class's declaration),
    a few instructions that call the method of the same name."""
    insns = [ln for ln in code.splitlines() if _INSN.match(ln)]
    return len(set(lines)) == 1 and len(insns) <= 10 and f"// Method {name}:" in code


def _key(name: str, params: Sequence[str]) -> str:
    return f"{name}({', '.join(params)})"


def _lnt(lines: Sequence[str]) -> list[int]:
    return [int(m.group(1)) for ln in lines if (m := re.match(r"\s+line (\d+): \d+", ln))]


_INSN = re.compile(r"^\s*(\d+): (\w+)(.*)$")
_BRANCH = {"ifeq", "ifne", "iflt", "ifge", "ifgt", "ifle", "if_icmpeq", "if_icmpne", "if_icmplt",
           "if_icmpge", "if_icmpgt", "if_icmple", "if_acmpeq", "if_acmpne", "goto", "goto_w", "jsr",
           "jsr_w", "ifnull", "ifnonnull"}


def normalise_bytecode(code: str) -> str:
    """javap ``-c`` text of one method without what a recompilation of unchanged source may change:
    constant-pool indices (``#NN``), the LineNumberTable and LocalVariable(Type)Table (debug
    information), the wide forms ``ldc_w``/``goto_w``, absolute offsets (instructions renumbered,
    branch and exception-table targets too), lambdas' class-wide numbers, whitespace, and how javac
    compiles ``"..." + object``: JDK 19+ calls ``String.valueOf(Object)`` before the indy concatenation
    (JDK-8273914) where earlier compilers pass the object, so those calls are dropped and a
    concatenation's descriptor is reduced to its number of arguments (Hudi 1.2.0 and 1.2.1 were
    compiled by different javac versions)."""
    kept: list[str] = []
    skipping = False
    for line in code.splitlines():
        s = line.strip()
        if s.startswith(("LineNumberTable:", "LocalVariableTable:", "LocalVariableTypeTable:")):
            skipping = True
            continue
        if skipping and (s.startswith(("line ", "Start ")) or re.match(r"\d+\s+\d+\s+\d+\s", s)):
            continue
        skipping = False
        if s and s != "Code:":
            kept.append(s)
    dropped = {int(m.group(1)) for ln in kept if (m := _INSN.match(ln)) and _VALUE_OF in ln}
    offsets = sorted(int(m.group(1)) for ln in kept if (m := _INSN.match(ln)))
    index: dict[int, int] = {}
    for off in offsets:
        if off not in dropped:
            index[off] = len(index)
    for off in sorted(dropped, reverse=True):  # a target on a dropped call: the instruction after it
        later = [o for o in offsets if o > off and o in index]
        index[off] = index[later[0]] if later else len(index)

    def target(t: re.Match[str]) -> str:
        return f"@{index.get(int(t.group(0)), t.group(0))}"

    out: list[str] = []
    for ln in kept:
        m = _INSN.match(ln)
        if m and int(m.group(1)) in dropped:
            continue
        ln = re.sub(r"#\d+(,\s*\d+)?", "#", ln)
        ln = re.sub(r"(lambda\$[\w$]*?)\$\d+\b", r"\1$", ln)  # lambdas are numbered class-wide
        ln = re.sub(r"makeConcatWithConstants:\(([^)]*)\)\S*",
                    lambda c: f"makeConcatWithConstants:({_arity(c.group(1))} arguments)", ln)
        m = _INSN.match(ln)
        if m:
            op = {"ldc_w": "ldc", "goto_w": "goto", "jsr_w": "jsr"}.get(m.group(2), m.group(2))
            args = m.group(3)
            if op in _BRANCH:
                args = re.sub(r"\d+", target, args, count=1)
            out.append(f"{index[int(m.group(1))]}: {op} {' '.join(args.split())}".rstrip())
            continue
        case = re.match(r"^(-?\d+|default): (\d+)$", ln)
        if case:
            out.append(f"{case.group(1)}: @{index.get(int(case.group(2)), case.group(2))}")
            continue
        exc = re.match(r"^(\d+)\s+(\d+)\s+(\d+)\s+(.*)$", ln)
        if exc:
            a, b, c = (index.get(int(exc.group(k)), exc.group(k)) for k in (1, 2, 3))
            out.append(f"{a} {b} {c} {' '.join(exc.group(4).split())}")
            continue
        out.append(" ".join(ln.split()))
    return "\n".join(out)


_VALUE_OF = "// Method java/lang/String.valueOf:(Ljava/lang/Object;)Ljava/lang/String;"


def _arity(descriptor: str) -> int:
    """The number of arguments of a JVM method descriptor's parameter list (``Ljava/lang/String;J[I``: 3)."""
    return len(re.findall(r"\[*(?:L[^;]+;|[BCDFIJSZ])", descriptor))


# ----------------------------------------------------------------------------------------------------
# Reading a release


JarGetter = Callable[[str, str, bool], Path]


def _default_jar(version: str, artifact: str, sources: bool) -> Path:
    return artifacts.hudi_jar(version, artifact, sources=sources)


def served(version: str) -> tuple[list[str], list[str]]:
    """The Hudi artifacts pinned (served here) for ``version``: (jars, artifacts with a -sources.jar)."""
    artifacts.check_version(version)
    hudi = artifacts.pins()["hudi"][version]
    jars = [artifacts.Coordinate.parse(c).artifact for c in hudi["jars"]]
    sources = [artifacts.Coordinate.parse(c).artifact for c in hudi["sources"]]
    return jars, sources


class Release:
    """One Hudi release's served jars, read lazily: class lookup, sources, javap."""

    def __init__(self, version: str, jar: JarGetter | None = None, javap: str | None = None) -> None:
        self.version = version
        self.jars, self.sources = served(version)
        self._jar = jar or _default_jar
        self._javap = javap
        self._names: dict[str, set[str]] = {}
        self._shapes: dict[tuple[str, str, bool], ClassShape | None] = {}

    def javap(self) -> str:
        """The javap tool (ArtifactError naming it when there is none)."""
        if self._javap is None:
            self._javap = artifacts.require_tool("javap")
        return self._javap

    def names(self, artifact: str) -> set[str]:
        """Binary class names (``a.b.C$D``) in an artifact's jar."""
        if artifact not in self._names:
            with zipfile.ZipFile(self._jar(self.version, artifact, False)) as z:
                self._names[artifact] = {n[: -len(".class")].replace("/", ".") for n in z.namelist()
                                         if n.endswith(".class")}
        return self._names[artifact]

    def locate(self, fqcn: str | None, simple: str, artifact: str | None) -> list[tuple[str, str]]:
        """Where a class is: (artifact, binary name); the pinned module's jar first by full name, then
        every served jar by full name, then by simple name (a class moved to another package)."""
        order = ([artifact] if artifact in self.jars else []) + [a for a in self.jars if a != artifact]
        if fqcn:
            for a in order:
                if fqcn in self.names(a):
                    return [(a, fqcn)]
        found = []
        for a in order:
            found += [(a, n) for n in sorted(self.names(a)) if n.rsplit(".", 1)[-1] == simple]
        return found

    def shape(self, artifact: str, binary: str, *, prefer_source: bool = True) -> ClassShape | None:
        """A class's shape: from the -sources.jar when pinned (and ``prefer_source``), else javap."""
        use_source = prefer_source and artifact in self.sources
        key = (artifact, binary, use_source)
        if key not in self._shapes:
            if use_source:
                outer, *nested = binary.split("$")
                path = outer.replace(".", "/") + ".java"
                with zipfile.ZipFile(self._jar(self.version, artifact, True)) as z:
                    text = z.read(path).decode() if path in z.namelist() else None
                chain = [outer.rsplit(".", 1)[-1], *nested]
                self._shapes[key] = None if text is None else source_shape(text, chain, binary, artifact)
            else:
                self.preload(artifact, [binary])
        return self._shapes.get(key)

    def preload(self, artifact: str, binaries: Iterable[str]) -> None:
        """Run javap once over several classes of one jar (one JVM)."""
        todo = sorted({b for b in binaries if (artifact, b, False) not in self._shapes})
        if not todo:
            return
        tool = self.javap()  # before any download: a missing JDK is said first
        shapes = javap_shapes(self._jar(self.version, artifact, False), todo, artifact, tool)
        for b in todo:
            self._shapes[(artifact, b, False)] = shapes.get(b)


# ----------------------------------------------------------------------------------------------------
# The check


@dataclass(frozen=True)
class Result:
    """A citation checked in one release."""

    citation: Citation
    version: str
    status: str  # one of STATUSES
    reason: str = ""
    where: str = ""  # artifact:binary class name
    origin: str = ""  # "source" or "bytecode"
    spans: tuple[str, ...] = ()  # the released spans of the members of that name (or of the class)
    digests: tuple[str, ...] = ()  # sha256 of the cited member(s)' text or normalised bytecode
    error: bool = False

    def to_json(self) -> dict[str, object]:
        """A JSON object: the row, the citation, the status and what was found."""
        c = self.citation
        return {"row": c.row, "section": c.section, "doc_line": c.doc_line, "citation": c.text,
                "class": c.cls, "member": c.member, "kind": c.kind,
                "lines": [[a, b] for a, b in c.lines], "lines_counted_in": c.released,
                "pin": c.pin.pin if c.pin else None, "claims_release": c.claims_release,
                "version": self.version, "status": self.status, "reason": self.reason, "where": self.where,
                "origin": self.origin, "released_spans": list(self.spans),
                "sha256": list(self.digests), "error": self.error}


def _version_key(v: str) -> tuple[int, ...]:
    return tuple(int(x) for x in v.split("."))


def _binary(c: Citation, located: str) -> str:
    nested = c.cls.split(".")[1:]
    return "$".join([located, *nested])


def _target(c: Citation, release: Release) -> tuple[str, str] | str:
    """(artifact, binary name) of the citation's class in the release, or why it cannot be had."""
    pin = c.pin
    if pin is not None:
        if pin.fqcn is None:
            return "not Java in a jar: " + pin.path
        if pin.module is None or pin.module not in release.jars:
            module = pin.module or pin.source_path.split("/", 1)[0]
            return (f"artifact not served by Maven Central here: org.apache.hudi:{module}:{release.version}"
                    " (not pinned in backends/hudi/artifacts.toml)")
        found = release.locate(pin.fqcn, pin.class_name, pin.module)
        if not found:
            return ""
        return found[0][0], _binary(c, found[0][1])
    outer = c.cls.split(".", 1)[0]
    found = release.locate(None, outer, None)
    if not found:
        return (f"{outer} is in no pin table and in none of Hudi {release.version}'s served jars "
                f"({', '.join(release.jars)})")
    if len(found) > 1:
        return f"{outer} is in no pin table and names several classes: " + ", ".join(b for _, b in found)
    return found[0][0], _binary(c, found[0][1])


def _inside(lines: Sequence[tuple[int, int | None]], first: int, last: int, slack: tuple[int, int]) -> bool:
    return all(first - slack[0] <= a and (b if b is not None else a) <= last + slack[1] for a, b in lines)


def check_citation(c: Citation, release: Release, counted: Release | None = None) -> Result:
    """One citation in one release (see the module's docstring for the statuses and the error rule).

    ``counted`` is the release whose text the citation's lines are counted in, when that is another
    release with sources: a method whose line table in ``release`` is the counted release's shifted by
    ``d`` lines (the same statements, moved) gets the counted source's span shifted by ``d``, exactly;
    otherwise a bytecode span is widened by ``SLACK_BEFORE`` / ``SLACK_AFTER``."""
    v = release.version
    target = _target(c, release)
    if isinstance(target, str):
        if target:
            return Result(c, v, "unverifiable", target)
        return Result(c, v, "missing", f"no class {c.cls} in Hudi {v}'s served jars",
                      error=_missing_is_error(c, v))
    artifact, binary = target
    shape = release.shape(artifact, binary)
    where = f"{artifact}:{binary}"
    if shape is None:
        return Result(c, v, "missing", f"no class {binary} in {artifact} {v}", where=where,
                      error=_missing_is_error(c, v))
    moved_note = ""
    if c.pin is not None and c.pin.fqcn and binary.split("$")[0] != c.pin.fqcn:
        moved_note = f"released as {binary.split('$')[0]}"
    counted_here = c.released == v
    unchecked = ""
    if c.lines and c.offsets:
        unchecked = "lines of an index text (cited with @offsets): not checked"
    elif c.lines and not c.released and c.pin is not None:
        unchecked = f"lines counted in {c.pin.pin}, not in a release's text: not checked"
    elif c.lines and not c.released:
        unchecked = "lines of a class in no pin table (give the release: `(1.2.0: 94-106)`): not checked"
    origin = shape.origin
    note = "; ".join(x for x in (moved_note, unchecked) if x)
    if c.kind in ("class", "lines"):
        span = f"{shape.first}-{shape.last}"
        slack = (0, SLACK_AFTER) if shape.origin == "bytecode" else (0, 0)
        if c.lines and not unchecked and not _inside(c.lines, shape.first, shape.last, slack):
            return Result(c, v, "moved", _join(note, f"line outside the class ({span})"), spans=(span,),
                          error=counted_here, where=where, origin=origin)
        return Result(c, v, "ok", note, spans=(span,), where=where, origin=origin)
    members = _named(shape, c)
    if not members and shape.origin == "source":
        # a member javac or lombok generates (a getter, a default constructor) is in the class file only
        try:
            compiled = release.shape(artifact, binary, prefer_source=False)
        except ArtifactError as e:  # no JDK: the sources alone decide
            compiled, note = None, _join(note, f"class file not read ({e})")
        if compiled is not None and _named(compiled, c):
            shape, members = compiled, _named(compiled, c)
            origin = "bytecode"
            note = _join(note, "not in the source: generated (lombok, a default constructor)")
    if not members:
        sig = f"{c.member}({', '.join(c.params)})" if c.params is not None else c.member
        return Result(c, v, "missing", _join(note, f"no {c.kind} {sig} in {binary}"),
                      error=_missing_is_error(c, v), where=where, origin=origin)
    if c.kind == "field":
        return Result(c, v, "ok", note, digests=tuple(m.digest for m in members), where=where, origin=origin)
    spans = [_span(m, shape, artifact, binary, counted) for m in members]
    shown = tuple(f"{a}-{b}" for a, b, _ in spans)
    if any(how for _, _, how in spans):
        origin = f"bytecode, {spans[0][2]}" if spans[0][2] else "bytecode"
    if not c.lines or unchecked:
        return Result(c, v, "ok", note, spans=shown, digests=tuple(m.digest for m in members),
                      where=where, origin=origin)
    hits: list[int] = []
    outside = []
    for rng in c.lines:
        inside = [i for i, (a, b, how) in enumerate(spans)
                  if _inside([rng], a, b, (0, 0) if how or shape.origin == "source" else
                             (SLACK_BEFORE, SLACK_AFTER))]
        if inside:
            hits += [i for i in inside if i not in hits]
        else:
            outside.append(f"{rng[0]}-{rng[1] if rng[1] is not None else ''}")
    if outside:
        return Result(c, v, "moved", _join(note, f"lines {', '.join(outside)} outside {c.member} "
                                                 f"({', '.join(shown)})"),
                      spans=shown, digests=tuple(m.digest for m in members), error=counted_here,
                      where=where, origin=origin)
    return Result(c, v, "ok", note, spans=tuple(shown[i] for i in hits),
                  digests=tuple(members[i].digest for i in hits), where=where, origin=origin)


def _named(shape: ClassShape, c: Citation) -> list[Member]:
    """The members of ``shape`` a citation names (by kind, name and, when it gives them, parameters)."""
    found = [m for m in shape.members if m.name == c.member and (m.kind == "field") == (c.kind == "field")]
    return [m for m in found if m.params == c.params] if c.params is not None else found


def _span(m: Member, shape: ClassShape, artifact: str, binary: str,
          counted: Release | None) -> tuple[int, int, str]:
    """A member's span in its release; from bytecode, the counted release's source span shifted when
    the line tables say the statements only moved ("" how: the plain span)."""
    if shape.origin != "bytecode" or counted is None or artifact not in counted.sources:
        return m.first, m.last, ""
    src = counted.shape(artifact, binary)
    old = counted.shape(artifact, binary, prefer_source=False)
    if src is None or old is None:
        return m.first, m.last, ""
    key = (m.name, m.params)
    before = next((x for x in old.members if (x.name, x.params) == key), None)
    text = next((x for x in src.members if (x.name, x.params) == key), None)
    if before is None or text is None or len(before.table) != len(m.table) or not m.table:
        return m.first, m.last, ""
    delta = m.table[0] - before.table[0]
    if any(b - a != delta for a, b in zip(before.table, m.table, strict=True)):
        return m.first, m.last, ""
    how = f"{counted.version}'s source span {f'shifted by {delta:+d}' if delta else 'unchanged'}"
    return text.first + delta, text.last + delta, how


def _missing_is_error(c: Citation, version: str) -> bool:
    """A missing class or member is an error when the row claims a release and the citation is of this
    release (its lines are counted in it) or of no particular one (a class in no pin table, a pin whose
    numbers no release was re-counted for); not when it cites another release's text (a method 1.2.1
    added, checked in 1.2.0) or a pull request's branch."""
    return c.claims_release and c.released in (None, version)


def _join(*parts: str) -> str:
    return "; ".join(p for p in parts if p)


def check(doc: Doc, version: str, *, jar: JarGetter | None = None, javap: str | None = None) -> list[Result]:
    """Every citation of ``doc`` checked in Hudi ``version`` (ArtifactError: an unpinned version, a jar
    that cannot be had, no javap where bytecode must be read)."""
    release = Release(version, jar, javap)
    _preload(doc.citations, release)
    counted: dict[str, Release] = {}
    for c in doc.citations:
        r = c.released
        if r and r != version and r not in counted and r in artifacts.versions() and served(r)[1]:
            counted[r] = Release(r, jar, javap)
            _preload(doc.citations, counted[r], bytecode=True)
    results = [check_citation(c, release, counted.get(c.released or "")) for c in doc.citations]
    return [_why_no_error(r) for r in results]


def _why_no_error(r: Result) -> Result:
    """A ``moved`` or ``missing`` that is no error says why."""
    if r.error or r.status not in ("moved", "missing"):
        return r
    c = r.citation
    if not c.claims_release:
        why = f"no error: the row follows no release ({c.pin.pin[:8] if c.pin else 'unpinned'})"
    elif c.released and c.released != r.version:
        why = f"no error: its lines are Hudi {c.released}'s"
    else:
        return r
    return replace(r, reason=_join(r.reason, why))


def _preload(citations: Sequence[Citation], release: Release, *, bytecode: bool = False) -> None:
    """Read the classes the citations need from each jar with one javap run per jar."""
    wanted: dict[str, set[str]] = {}
    for c in citations:
        t = _target(c, release)
        if isinstance(t, tuple) and (bytecode or t[0] not in release.sources):
            wanted.setdefault(t[0], set()).add(t[1])
    for artifact, binaries in wanted.items():
        release.preload(artifact, binaries)


def errors(results: Iterable[Result]) -> list[Result]:
    """The results that are errors (the exit status of ``hcc fidelity``)."""
    return [r for r in results if r.error]


def counts(results: Iterable[Result]) -> dict[str, int]:
    """Results per status, every status present."""
    out = dict.fromkeys(STATUSES, 0)
    for r in results:
        out[r.status] += 1
    return out


# ----------------------------------------------------------------------------------------------------
# Two releases compared


@dataclass(frozen=True)
class Change:
    """One cited method in two releases: ``changed``, ``same`` (bytecode equal), ``lines`` (bytecode
    equal, line numbers shifted), ``added`` / ``removed`` (in one release only)."""

    where: str  # binary class name
    method: str  # name(params)
    state: str
    rows: tuple[str, ...]
    spans: tuple[str, str]  # span in each release ("" when absent)
    diff: tuple[str, ...] = ()  # the normalised bytecode lines that differ (- old, + new)

    def to_json(self) -> dict[str, object]:
        """A JSON object."""
        return {"class": self.where, "method": self.method, "state": self.state, "rows": list(self.rows),
                "spans": list(self.spans), "diff": list(self.diff)}


def compare(doc: Doc, old: str, new: str, *, jar: JarGetter | None = None,
            javap: str | None = None) -> list[Change]:
    """The methods the document cites, compared between two releases by their normalised bytecode
    (each release's class files: :func:`javap_shapes`); every overload of a cited name is compared."""
    releases = [Release(old, jar, javap), Release(new, jar, javap)]
    for r in releases:
        _preload(doc.citations, r, bytecode=True)
    cited: dict[tuple[str, str], set[str]] = {}
    for c in doc.citations:
        if c.kind != "method" or c.member is None:
            continue
        t = _target(c, releases[0])
        t2 = _target(c, releases[1])
        t = t if isinstance(t, tuple) else t2
        if not isinstance(t, tuple):
            continue
        cited.setdefault((t[0] + ":" + t[1], c.member), set()).add(c.row)
    out: list[Change] = []
    for (where, member), rows in sorted(cited.items()):
        artifact, binary = where.split(":", 1)
        shapes = [r.shape(artifact, binary, prefer_source=False) for r in releases]
        per = [{_key(m.name, m.params): m for m in (s.members if s else ()) if m.name == member}
               for s in shapes]
        codes = [s.bytecode if s else {} for s in shapes]
        for key in sorted(set(per[0]) | set(per[1])):
            a, b = per[0].get(key), per[1].get(key)
            spans = (a.span() if a else "", b.span() if b else "")
            if a is None or b is None:
                state = "added" if a is None else "removed"
                out.append(Change(binary, key, state, tuple(sorted(rows, key=_row_key)), spans))
                continue
            if a.digest != b.digest:
                diff = _diff(codes[0].get(key, ""), codes[1].get(key, ""))
                out.append(Change(binary, key, "changed", tuple(sorted(rows, key=_row_key)), spans, diff))
            else:
                state = "same" if spans[0] == spans[1] else "lines"
                out.append(Change(binary, key, state, tuple(sorted(rows, key=_row_key)), spans))
    return out


def _diff(a: str, b: str) -> tuple[str, ...]:
    """The lines that differ (``-`` old, ``+`` new), instruction numbers and branch targets left out so
    that an insertion shows as one."""
    import difflib

    def plain(text: str) -> list[str]:
        return [re.sub(r"@\d+", "@", re.sub(r"^\d+: ", "", ln)) for ln in text.splitlines()]

    return tuple(ln for ln in difflib.unified_diff(plain(a), plain(b), lineterm="", n=0)
                 if ln[:1] in "+-" and not ln.startswith(("+++", "---")))


def _row_key(row: str) -> tuple[str, int]:
    m = re.fullmatch(r"([A-Z]+)(\d+)", row)
    return (m.group(1), int(m.group(2))) if m else (row, 0)


def read_doc(path: str | os.PathLike[str]) -> Doc:
    """:func:`parse_doc` of a file (DocError naming it when it cannot be read)."""
    p = Path(path)
    try:
        text = p.read_text()
    except (OSError, UnicodeDecodeError) as e:
        why = e.strerror if isinstance(e, OSError) else str(e)
        raise DocError(f"cannot be read ({e.__class__.__name__}: {why})") from None
    doc = parse_doc(text)
    if not doc.citations:
        raise DocError("no Java citation found (no row table with a 'Java (line)' column)")
    return doc


__all__ = ["STATUSES", "ArtifactError", "Change", "Citation", "ClassShape", "Doc", "DocError", "Member",
           "Pin", "Release", "Result", "blank_java", "check", "check_citation", "compare", "counts",
           "errors", "expand_path", "javap_shapes", "module_of", "normalise_bytecode", "parse_doc",
           "read_doc", "served", "shape_from_javap", "source_shape"]
