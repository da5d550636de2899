"""Issue 34: the upstream-ready write-ups under ``docs/findings/`` keep their shape and their citations.

Each file has the fixed headings; every Java citation ``Class#method (lines)`` names a method that
``docs/fidelity.md`` cites (its pinned sources, checked against the jars by ``hcc fidelity``) and, when it
gives lines, lines inside the span ``docs/fidelity.md`` cites for that method; a hudi-rs write-up cites
``crates/...rs:N-M`` lines of a release whose sdist it names with its sha256; every upstream reference
``#NNNN`` (``apache/hudi-rs#NNN`` for hudi-rs) is listed under "## Upstream" with its quoted title.
Plain and fast: no servers, no network.  A doctored copy of a write-up fails each check.
"""

from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path

import pytest

from analyses.fidelity import parse_doc

ROOT = Path(__file__).resolve().parent.parent
FINDINGS = ROOT / "docs" / "findings"
FIDELITY = ROOT / "docs" / "fidelity.md"

EXPECTED = {
    "renewals-fail-writer-continues.md",
    "release-stall-provider-monitor.md",
    "failed-release-kept-provider.md",
    "hudi-rs-incremental-late-write.md",
    "hudi-rs-content-length-abort.md",
    "shutdown-hook-releases-while-writing.md",
}
HEADINGS = (
    "## Affected",
    "## Summary",
    "## The code",
    "## Shortest schedule",
    "## On a real server",
    "## Smallest fix",
    "## What rests on what",
    "## Upstream",
)

_RANGES = r"\d+(?:-\d+)?(?:,\s*\d+(?:-\d+)?)*"
JAVA = re.compile(
    rf"(?<![\w./])(?P<cls>[A-Z]\w*)#(?P<member><init>|[a-z]\w*)(?:\s*\((?P<lines>{_RANGES})\))?")
RUST = re.compile(r"(?P<path>crates/[\w/]+\.rs):(?P<a>\d+)(?:-(?P<b>\d+))?")
REF = re.compile(r"(?<![\w#])(?P<repo>apache/hudi(?:-rs)?)?#(?P<num>\d{3,6})\b")
TITLED = re.compile(r'(?<![\w#])(?P<repo>apache/hudi(?:-rs)?)?#(?P<num>\d{3,6})\s"(?P<title>[^"]+?)"')
SDIST = re.compile(r"hudi-\d+\.\d+\.\d+\.tar\.gz.{0,80}?sha256\s*`?[0-9a-f]{64}", re.S)


def _ranges(text: str) -> list[tuple[int, int]]:
    out = []
    for part in text.split(","):
        a, _, b = part.strip().partition("-")
        out.append((int(a), int(b or a)))
    return out


@lru_cache(maxsize=1)
def fidelity_methods() -> dict[tuple[str, str], list[tuple[int, int]]]:
    """(class, method) -> the line spans docs/fidelity.md cites for it (empty: cited without lines)."""
    spans: dict[tuple[str, str], list[tuple[int, int]]] = {}
    for c in parse_doc(FIDELITY.read_text(encoding="utf-8")).citations:
        if c.kind == "method" and c.member:
            spans.setdefault((c.cls, c.member), []).extend((a, b if b is not None else a) for a, b in c.lines)
    return spans


def sections(text: str) -> dict[str, str]:
    """Each ``## `` heading's body."""
    out: dict[str, str] = {}
    parts = re.split(r"^(## .+)$", text, flags=re.M)
    for head, body in zip(parts[1::2], parts[2::2], strict=True):
        out[head.strip()] = body
    return out


def problems(text: str) -> list[str]:
    """What is wrong with one write-up (empty: nothing)."""
    found: list[str] = []
    if not text.startswith("# "):
        found.append("no title line ('# ...') first")
    secs = sections(text)
    found += [f"missing heading {h!r}" for h in HEADINGS if h not in secs]

    methods = fidelity_methods()
    for m in JAVA.finditer(text):
        key = (m["cls"], m["member"])
        if key not in methods:
            found.append(f"{m[0]}: {m['cls']}#{m['member']} is not cited in docs/fidelity.md")
            continue
        if m["lines"]:
            known = methods[key]
            if not known:
                found.append(f"{m[0]}: docs/fidelity.md cites {m['cls']}#{m['member']} without lines")
                continue
            lo, hi = min(a for a, _ in known), max(b for _, b in known)
            for a, b in _ranges(m["lines"]):
                if not (lo <= a <= b <= hi):
                    found.append(f"{m[0]}: lines {a}-{b} outside {lo}-{hi}, the span docs/fidelity.md cites")

    rust = list(RUST.finditer(text))
    if rust and not SDIST.search(secs.get("## The code", "")):
        found.append("cites hudi-rs lines but '## The code' names no release sdist with its sha256")
    for m in rust:
        if m["b"] and int(m["b"]) < int(m["a"]):
            found.append(f"{m[0]}: an empty line range")

    upstream = secs.get("## Upstream", "")
    # a title may wrap onto the next line, never across a paragraph
    titled = {(t["repo"] or "apache/hudi", t["num"]) for t in TITLED.finditer(upstream)
              if t["title"].strip() and not re.search(r"\n\s*\n", t["title"])}
    for m in REF.finditer(upstream):
        if (m["repo"] or "apache/hudi", m["num"]) not in titled:
            found.append(f"{m[0]} under '## Upstream' without a quoted title right after it")
    for m in REF.finditer(text):
        if (m["repo"] or "apache/hudi", m["num"]) not in titled:
            found.append(f"{m[0]} is not listed under '## Upstream' with its quoted title")
    return found


def test_the_findings_folder_holds_the_write_ups() -> None:
    assert {p.name for p in FINDINGS.glob("*.md")} == EXPECTED


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_a_write_up_has_its_headings_and_true_citations(name: str) -> None:
    text = (FINDINGS / name).read_text(encoding="utf-8")
    assert problems(text) == []
    assert TITLED.search(sections(text)["## Upstream"]), "no upstream thread cited"


def test_every_lock_write_up_cites_java_and_every_hudi_rs_one_cites_rust() -> None:
    for path in FINDINGS.glob("*.md"):
        text = path.read_text(encoding="utf-8")
        if path.name.startswith("hudi-rs-"):
            assert RUST.search(text), path.name
        else:
            assert JAVA.search(text), path.name


DOCTORINGS = {
    "a heading gone": (("## Smallest fix", "## A fix"), "missing heading '## Smallest fix'"),
    "a method fidelity.md does not cite": (
        ("StorageBasedLockProvider#renewLock (626-633)", "StorageBasedLockProvider#renewLockTwice (626-633)"),
        "is not cited in docs/fidelity.md"),
    "lines outside the method": (
        ("StorageBasedLockProvider#renewLock (626-633)", "StorageBasedLockProvider#renewLock (700-720)"),
        "outside 594-657"),
    "a reference without its title": (("## Upstream\n", "## Upstream\n\n- #99999 (a thread)\n"),
                                      "#99999 under '## Upstream' without a quoted title"),
    "a reference not listed": (("## Summary\n", "## Summary\n\nSee PR #12345.\n"),
                               "#12345 is not listed under '## Upstream'"),
}


@pytest.mark.parametrize("case", sorted(DOCTORINGS))
def test_a_doctored_copy_fails(case: str, tmp_path: Path) -> None:
    (old, new), expected = DOCTORINGS[case]
    text = (FINDINGS / "renewals-fail-writer-continues.md").read_text(encoding="utf-8")
    assert old in text
    doctored = tmp_path / "doctored.md"
    doctored.write_text(text.replace(old, new, 1), encoding="utf-8")
    found = problems(doctored.read_text(encoding="utf-8"))
    assert any(expected in p for p in found), found


def test_a_doctored_hudi_rs_copy_without_its_sdist_fails(tmp_path: Path) -> None:
    text = (FINDINGS / "hudi-rs-content-length-abort.md").read_text(encoding="utf-8")
    doctored = tmp_path / "doctored.md"
    doctored.write_text(re.sub(r"[0-9a-f]{64}", "not-a-digest", text), encoding="utf-8")
    assert any("names no release sdist" in p for p in problems(doctored.read_text(encoding="utf-8")))


def test_the_readme_points_to_the_write_ups() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    after = readme.split("<!-- /hudi-findings -->", 1)[1]
    assert "docs/findings/" in after.split("\n\n", 2)[1]
