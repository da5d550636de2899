"""``hcc fidelity`` against Hudi's published jars (the pinned ones, fetched into the cache; a JDK's javap):
docs/fidelity.md has no citation error in any pinned release, a doctored copy is caught row by row, and
``--compare`` finds what 1.2.1 changed."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from analyses import fidelity as fid
from backends.hudi.artifacts import versions
from cli.main import main

DOC = Path(__file__).resolve().parent.parent / "docs" / "fidelity.md"


@pytest.fixture(scope="module")
def doc() -> fid.Doc:
    return fid.read_doc(DOC)


def test_the_document_has_no_citation_error_in_its_default_release(
        doc: fid.Doc, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["fidelity", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["version"] == doc.default_version() and out["errors"] == 0
    assert out["counts"]["ok"] > 150
    checked = [c for c in out["citations"] if c["status"] == "ok" and c["lines"] and c["origin"] == "source"]
    assert checked and all(len(h) == 64 for c in checked for h in c["sha256"])


@pytest.mark.parametrize("version", versions())
def test_no_citation_error_in_any_pinned_release(doc: fid.Doc, version: str) -> None:
    results = fid.check(doc, version)
    assert not fid.errors(results), [(r.citation.row, r.citation.text, r.status, r.reason)
                                     for r in fid.errors(results)]
    unverifiable = {r.reason.split(":")[0] for r in results if r.status == "unverifiable"}
    assert unverifiable <= {"artifact not served by Maven Central here", "not Java in a jar"} | {
        r.reason.split(":")[0] for r in results if "in no pin table" in r.reason}


def _doctor(doc: fid.Doc, text: str) -> tuple[str, str, str, str]:
    """A copy of the document with one method renamed and another citation's lines moved past its class's
    end: (the text, the renamed row, the moved row, the moved citation's new range)."""
    version = doc.default_version()
    assert version is not None
    results = {id(r.citation): r for r in fid.check(doc, version)}
    ok = [c for c in doc.citations if c.kind == "method" and c.lines and c.released == version
          and results[id(c)].status == "ok" and c.text.startswith("`#") and c.member != "<init>"
          and c.params is None]
    rename = ok[0]
    move = next(c for c in ok if c.row != rename.row and c.cls == rename.cls and len(c.lines) == 1)
    shape_last = max(int(s.split("-")[1]) for s in results[id(move)].spans)
    lines = text.splitlines()
    renamed = f"`#{rename.member}Nowhere`"
    moved = f"({shape_last + 1000}-{shape_last + 1005})"
    for i, line in enumerate(lines):
        if line.startswith(f"| {rename.row} |"):
            lines[i] = line.replace(f"`#{rename.member}`", renamed, 1)
        if line.startswith(f"| {move.row} |"):
            a, b = move.lines[0]
            lines[i] = line.replace(f"`#{move.member}` ({a}-{b})", f"`#{move.member}` {moved}", 1)
    doctored = "\n".join(lines) + "\n"
    assert renamed in doctored and moved in doctored
    return doctored, rename.row, move.row, moved


def test_a_doctored_copy_gives_missing_and_moved_with_the_rows_and_exit_1(
        doc: fid.Doc, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    doctored, renamed_row, moved_row, moved = _doctor(doc, DOC.read_text())
    path = tmp_path / "fidelity.md"
    path.write_text(doctored)
    assert main(["fidelity", "--doc", str(path)]) == 1
    captured = capsys.readouterr()
    errors = [ln for ln in captured.err.splitlines() if ln.startswith("error: ")]
    assert any(ln.startswith(f"error: {renamed_row} ") and ": missing: " in ln for ln in errors), errors
    assert any(ln.startswith(f"error: {moved_row} ") and ": moved: " in ln and moved[1:-1] in ln
               for ln in errors), errors
    assert len(errors) == 2
    assert main(["fidelity", "--doc", str(path), "--json"]) == 1
    out = json.loads(capsys.readouterr().out)
    bad = {(c["row"], c["status"]) for c in out["citations"] if c["error"]}
    assert bad == {(renamed_row, "missing"), (moved_row, "moved")}


def test_compare_lists_what_1_2_1_changed(doc: fid.Doc, capsys: pytest.CaptureFixture[str]) -> None:
    old, new = versions()[0], versions()[-1]
    changes = {(c.where.rsplit(".", 1)[-1], c.method.split("(")[0]): c.state
               for c in fid.compare(doc, old, new)}
    assert changes[("HoodieFileGroup", "addLogFiles")] == "added"  # PR #19785
    assert changes[("AbstractTableFileSystemView", "buildFileGroups")] == "changed"
    assert changes[("HoodieHeartbeatClient", "updateHeartbeat")] == "changed"  # PR #18904
    assert changes[("StorageBasedLockProvider", "unlock")] == "changed"  # PR #19574's messages
    for unchanged in (("LockProviderHeartbeatManager", "heartbeatTaskRunner"), ("LockManager", "lock"),
                      ("TransactionManager", "beginStateChange"),
                      ("HoodieFileGroup", "isFileSliceCommitted")):
        assert changes[unchanged] in ("same", "lines"), unchanged
    assert main(["fidelity", "--compare", old, new]) == 0
    text = capsys.readouterr().out
    assert "HoodieFileGroup#addLogFiles" in text and re.search(r"\d+ unchanged", text)


def test_an_unknown_version_is_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["fidelity", "--hudi-version", "0.0.1"]) == 2
    assert main(["fidelity", "--compare", versions()[0], "0.0.1"]) == 2
    err = capsys.readouterr().err
    assert err.count("'0.0.1'") == 2 and "Traceback" not in err
