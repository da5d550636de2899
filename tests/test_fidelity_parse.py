"""``hcc fidelity``'s reading of docs/fidelity.md and of Java, without Hudi's jars: how a row's citation is
tied to its class and release (analyses/fidelity.py's module docstring states the rules), the Java source
and ``javap`` parsers, the bytecode normalisation, and the check itself on a small jar built here."""

from __future__ import annotations

import zipfile
from pathlib import Path

import pytest

from analyses import fidelity as fid
from backends.hudi.artifacts import ArtifactError, pins
from cli.main import main

SHA = {"54cb": "54cb1a577ce5916ee21e5dccb5039e801b8fdeb5", "d5e5": "d5e5c40bd41065f24b3242a3fce9ad5b725d71cd",
       "50fc": "50fc937eb4b02564e148bc95229154671b33004f", "1d3a": "1d3a0affad873868e74df7207013ae8eeb4dbb8c",
       "60f6": "60f6c0cd24212d29cd95031710c09acd4df2cfff"}
PIN_ROWS = [
    ("`hudi-client/hudi-client-common/src/main/java/org/apache/hudi/client/transaction/lock/Provider.java`",
     f"`{SHA['54cb']}`", "1.2.0", "a provider"),
    ("`.../client/transaction/lock/Helper.java`", f"`{SHA['d5e5']}`", "1.2.0", "its helper"),
    ("`hudi-common/.../common/model/Group.java`", f"`{SHA['50fc']}`", "1.2.0", "a group"),
    ("same file", f"`{SHA['1d3a']}`", "1.2.1 (class files)", "a pull request's text 1.2.1 ships"),
    ("`.../client/transaction/Manager.java`", f"`{SHA['60f6']}`", "no release (PR #13577, open)", "a branch"),
    ("`hudi-aws/src/main/java/org/apache/hudi/aws/transaction/lock/S3Client.java`", f"`{SHA['54cb']}`",
     "— (not served)", "a client"),
    ("`hudi-spark-datasource/hudi-spark-common/.../Relation.scala`", "index id 528082199", "— (Scala)",
     "a reader"),
]
PIN_TABLE = ("\n| file (apache/hudi) | commit | released | what it is |\n|---|---|---|---|\n"
             + "".join("| " + " | ".join(row) + " |\n" for row in PIN_ROWS))


def _doc(rows: str, heading: str = "## Provider (1.2.0)") -> fid.Doc:
    table = "| # | condition | what Hudi does | Java (line) | model | test |\n|---|---|---|---|---|---|\n"
    return fid.parse_doc(PIN_TABLE + f"\n{heading}\n\n" + table + rows)


def _row(row: str, java: str) -> str:
    return f"| {row} | c | w | {java} | m | t |\n"


def test_a_bare_method_belongs_to_the_sections_class_and_a_named_class_carries_to_the_next() -> None:
    doc = _doc(_row("P1", "`#tryLock` (316-319), `#close`; `Helper#run` (10-20), `#stop` (30)"))
    got = [(c.row, c.cls, c.member, c.lines) for c in doc.citations]
    assert got == [("P1", "Provider", "tryLock", ((316, 319),)), ("P1", "Provider", "close", ()),
                   ("P1", "Helper", "run", ((10, 20),)), ("P1", "Helper", "stop", ((30, 30),))]
    assert {c.pin.class_name for c in doc.citations if c.pin} == {"Provider", "Helper"}
    assert all(c.released == "1.2.0" and c.claims_release for c in doc.citations)


def test_a_bare_method_with_no_class_in_the_cell_or_the_heading_is_an_error_naming_row_and_line() -> None:
    row = _row("K3", "`#heartbeatTaskRunner` (213-236)")
    with pytest.raises(fid.DocError) as err:
        _doc(row, heading="## The provider's monitor (1.2.0)")
    text = PIN_TABLE + "\n## x\n\n\n\n" + row
    line = next(n for n, ln in enumerate(text.splitlines(), 1) if "K3" in ln)
    assert f"line {line}, row K3: `#heartbeatTaskRunner`" in str(err.value)


def test_line_specs_constants_overloads_constructors_and_open_ranges() -> None:
    doc = _doc(_row("P7", "`#<init>` (128-135, 180-202: owner id 130, hook 199-200), "
                          "`#tryLock(long, TimeUnit)` (217-234), `#start` (136-), 80, 82-90"))
    init, overload, open_range, const, consts = doc.citations
    assert (init.member, init.lines) == ("<init>", ((128, 135), (180, 202), (130, 130), (199, 200)))
    assert init.pin_token is None  # "owner id 130" is a line, not an index id
    assert (overload.member, overload.params) == ("tryLock", ("long", "TimeUnit"))
    assert overload.lines == ((217, 234),)
    assert open_range.lines == ((136, None),)
    assert (const.kind, const.cls, const.lines) == ("lines", "Provider", ((80, 80),))
    assert consts.lines == ((82, 90),)


def test_pins_name_the_text_a_citations_lines_are_counted_in() -> None:
    doc = _doc(_row("NB16", "`Group#addLogFiles` (1.2.1: 137-147), `#addLogFile` (121); "
                            "`Group#isFileSliceCommitted` (1.2.0: 158-164; 1.2.1: 179-185); "
                            "`Group#getBaseInstantTime` (1d3a0aff 150-168); `Manager#acquireLock` (141-148); "
                            "`Helper#run`, `#stop` (d5e5c40b); `Group#addBaseFile` (id 40071447 @2700)"))
    by = [(c.member, c.released, c.claims_release) for c in doc.citations]
    assert by == [("addLogFiles", "1.2.1", True), ("addLogFile", "1.2.1", True),  # a pin with lines carries
                  ("isFileSliceCommitted", "1.2.0", True), ("isFileSliceCommitted", "1.2.1", True),
                  ("getBaseInstantTime", "1.2.1", True),  # the commit names the pin table's second row
                  ("acquireLock", None, False),  # a pull request's branch
                  ("run", "1.2.0", True), ("stop", "1.2.0", True),  # a trailing pin-only group applies back
                  ("addBaseFile", "1.2.0", True)]
    assert doc.citations[-1].offsets and not doc.citations[-1].lines


def test_fields_classes_and_remarks_in_parentheses() -> None:
    doc = _doc(_row("O10", "`Provider.DEFAULT_NAME`, `OTHER_NAME` (id 65819755 @4800); `Group` "
                           "(the call: `Helper#run` 254); config `hoodie.write.lock.provider`; "
                           "PR #12568/#13007"))
    got = [(c.cls, c.member, c.kind, c.lines) for c in doc.citations]
    assert got == [("Provider", "DEFAULT_NAME", "field", ()), ("Provider", "OTHER_NAME", "field", ()),
                   ("Group", None, "class", ((254, 254),))]


def test_pin_tables_expand_paths_and_map_modules_to_artifacts() -> None:
    doc = _doc("")
    by = {p.class_name + "@" + p.pin[:8]: p for p in doc.pins}
    assert by["Provider@54cb1a57"].module == "hudi-client-common"
    assert by["Group@50fc937e"].fqcn == "org.apache.hudi.common.model.Group"
    assert by["Group@1d3a0aff"].released == "1.2.1"  # "same file" takes the row above's path
    assert by["Manager@60f6c0cd"].claims_release is False and by["Manager@60f6c0cd"].released is None
    assert by["S3Client@54cb1a57"].module == "hudi-aws" and by["S3Client@54cb1a57"].released is None
    assert by["Relation@id 52808"].fqcn is None
    assert fid.expand_path(".../client/X.java") == fid.CLIENT_COMMON + "/client/X.java"
    assert doc.default_version() == "1.2.0"  # the release most pin rows count their lines in


JAVA = """package org.apache.hudi.client.transaction.lock;

/** A class { with braces } in its comment. */
public class Provider implements Runnable {
  private static final long CLOCK = 500;
  private final String name = "a { string";

  public Provider(String name) {
    this(name, 1);
  }

  Provider(String name, int n) {
    Runnable r = () -> {
      System.out.println("}");
    };
  }

  @Override
  public synchronized boolean tryLock() {
    return true;
  }

  public boolean tryLock(long time,
                         java.util.concurrent.TimeUnit unit) throws InterruptedException {
    if (time > 0) {
      return tryLock();
    }
    return false;
  }

  public void run() {
  }

  static class Inner {
    void run() { }
  }
}
"""


def test_the_source_parser_finds_methods_overloads_constructors_and_nested_types() -> None:
    shape = fid.source_shape(JAVA, ["Provider"], "org.apache.hudi.client.transaction.lock.Provider", "a")
    assert shape is not None and (shape.first, shape.last) == (4, 37)
    spans = {(m.name, m.params): (m.first, m.last) for m in shape.members if m.kind == "method"}
    assert spans == {("<init>", ("String",)): (8, 10), ("<init>", ("String", "int")): (12, 16),
                     ("tryLock", ()): (18, 21), ("tryLock", ("long", "TimeUnit")): (23, 29),
                     ("run", ()): (31, 32)}
    assert {m.name for m in shape.members if m.kind == "field"} == {"CLOCK", "name"}
    inner = fid.source_shape(JAVA, ["Provider", "Inner"], "x.Provider$Inner", "a")
    assert inner is not None and [(m.name, m.first) for m in inner.members] == [("run", 35)]
    same = fid.source_shape(JAVA.replace("    return true;", "    return  true ;"), ["Provider"], "x", "a")
    digest = {(m.name, m.params): m.digest for m in shape.members}
    changed = {(m.name, m.params): m.digest for m in same.members} if same else {}
    assert changed[("tryLock", ())] != digest[("tryLock", ())]  # text changed, not only its whitespace
    assert changed[("run", ())] == digest[("run", ())]


JAVAP = """Compiled from "Provider.java"
public class x.Provider implements x.LockProvider<x.File> {
  private static final long CLOCK;

  public x.Provider(java.lang.String);
    Code:
       0: aload_0
       1: invokespecial #1                  // Method java/lang/Object."<init>":()V
       4: return
    LineNumberTable:
      line 8: 0
      line 10: 4

  public synchronized x.File getLock();
    Code:
       0: aload_0
       1: getfield      #2                  // Field lock:Lx/File;
       4: areturn
    LineNumberTable:
      line 20: 0

  public boolean tryLock(long, java.util.concurrent.TimeUnit) throws java.lang.InterruptedException;
    Code:
       0: lload_1
       1: lconst_0
       2: lcmp
       3: ifle          11
       6: ldc_w         #300                // String held
       9: pop
      10: iconst_1
      11: ireturn
    LineNumberTable:
      line 24: 0
      line 27: 11

  public java.lang.Object getLock();
    Code:
       0: aload_0
       1: invokevirtual #5                  // Method getLock:()Lx/File;
       4: areturn
    LineNumberTable:
      line 4: 0

  private void lambda$tryLock$0();
    Code:
       0: return
    LineNumberTable:
      line 29: 0
}
"""


def test_javap_text_gives_spans_from_line_tables_with_lambdas_and_without_bridges() -> None:
    shape = fid.shape_from_javap("x.Provider", JAVAP, "a")
    methods = [(m.name, m.params, m.span()) for m in shape.members if m.kind == "method"]
    assert methods == [("<init>", ("String",), "8-10"), ("getLock", (), "20-20"),
                       ("tryLock", ("long", "TimeUnit"), "24-29")]  # the lambda's line 29; no bridge
    assert [m.name for m in shape.members if m.kind == "field"] == ["CLOCK"]


def test_bytecode_normalisation_ignores_pool_indices_wide_forms_and_string_concatenation_styles() -> None:
    old = """    Code:
       0: aload_1
       1: invokestatic  #12 // Method java/lang/String.valueOf:(Ljava/lang/Object;)Ljava/lang/String;
       4: invokedynamic #40,  0 // InvokeDynamic #3:makeConcatWithConstants:(Ljava/lang/String;)LString;
       9: ldc           #7                  // String x
      11: ifnull        16
      14: goto          9
      16: return
    LineNumberTable:
      line 5: 0"""
    new = """    Code:
       0: aload_1
       1: invokedynamic #41,  0 // InvokeDynamic #9:makeConcatWithConstants:(Lx/Instant;)Ljava/lang/String;
       6: ldc_w         #300                // String x
       9: ifnull        14
      12: goto          6
      14: return
    LineNumberTable:
      line 9: 0"""
    assert fid.normalise_bytecode(old) == fid.normalise_bytecode(new)
    assert fid.normalise_bytecode(old) != fid.normalise_bytecode(new.replace("String x", "String y"))


PROVIDER = "org/apache/hudi/client/transaction/lock/Provider"


def _fake_jars(tmp_path: Path) -> fid.JarGetter:
    """hudi_jar's signature over two small zips: a 'binary' jar that lists the class and a -sources.jar."""
    binary, sources = tmp_path / "client.jar", tmp_path / "client-sources.jar"
    with zipfile.ZipFile(binary, "w") as z:
        z.writestr(PROVIDER + ".class", b"")
    with zipfile.ZipFile(sources, "w") as z:
        z.writestr(PROVIDER + ".java", JAVA)
    empty = tmp_path / "empty.jar"
    with zipfile.ZipFile(empty, "w"):
        pass

    def jar(version: str, artifact: str, src: bool) -> Path:
        if artifact != "hudi-client-common":
            return empty
        return sources if src else binary

    return jar


def test_the_check_on_sources_gives_each_status_and_errors_only_where_the_row_claims_the_release(
        tmp_path: Path) -> None:
    sourced = [v for v in pins()["hudi"] if fid.served(v)[1]]
    assert sourced, "no pinned release has -sources.jar files"
    version = sourced[0]
    rows = (_row("P1", f"`#tryLock` ({version}: 18-21), `#tryLock(long, TimeUnit)` (23-29), "
                       "`#<init>` (12-14), 5")
            + _row("P2", "`#tryLock` (40-45), `#unlockNowhere` (1-2)")
            + _row("P3", "`#tryLockLater` (1.99.0: 1-2); `Manager#acquireLock` (141-148)")
            + _row("P4", "`S3Client#read` (104-132); `Relation#x`"))
    results = fid.check(_doc(rows), version, jar=_fake_jars(tmp_path))
    got = [(r.citation.row, r.citation.member, r.status, r.error) for r in results]
    assert got == [("P1", "tryLock", "ok", False), ("P1", "tryLock", "ok", False),
                   ("P1", "<init>", "ok", False), ("P1", None, "ok", False),
                   ("P2", "tryLock", "moved", True), ("P2", "unlockNowhere", "missing", True),
                   ("P3", "tryLockLater", "missing", False),  # cites another release's text
                   ("P3", "acquireLock", "missing", False),  # a pull request's branch: no error
                   ("P4", "read", "unverifiable", False), ("P4", "x", "unverifiable", False)]
    moved = results[4]
    assert moved.spans == ("18-21", "23-29") and "40-45" in moved.reason
    assert "org.apache.hudi:hudi-aws:" + version in results[8].reason
    assert results[9].reason.startswith("not Java in a jar")
    assert len(results[0].digests) == 1 and len(results[0].digests[0]) == 64
    assert fid.counts(results) == {"ok": 4, "moved": 1, "missing": 3, "unverifiable": 2}
    assert [r.citation.row for r in fid.errors(results)] == ["P2", "P2"]


def test_a_release_without_sources_needs_javap_and_says_so(tmp_path: Path,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    unsourced = [v for v in pins()["hudi"] if not fid.served(v)[1]]
    if not unsourced:
        pytest.skip("every pinned release has -sources.jar files")
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.delenv("JAVA_HOME", raising=False)
    with pytest.raises(ArtifactError, match="javap"):
        fid.check(_doc(_row("P1", "`#tryLock` (18-21)")), unsourced[0], jar=_fake_jars(tmp_path))


def test_bad_input_is_exit_2_naming_it(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["fidelity", "--hudi-version", "9.9.9"]) == 2
    err = capsys.readouterr().err
    assert "'9.9.9'" in err and "Traceback" not in err and len(err.strip().splitlines()) == 1
    assert main(["fidelity", "--doc", str(tmp_path / "nowhere.md")]) == 2
    assert "nowhere.md" in capsys.readouterr().err
    bad = tmp_path / "bad.md"
    bad.write_text("## The monitor\n\n| # | c | w | Java (line) | m | t |\n|---|---|---|---|---|---|\n"
                   + _row("K9", "`#run` (1-2)"))
    assert main(["fidelity", "--doc", str(bad)]) == 2
    assert "K9" in capsys.readouterr().err


def test_the_real_document_ties_every_citation_to_a_class() -> None:
    doc = fid.read_doc(Path(__file__).resolve().parent.parent / "docs" / "fidelity.md")
    assert len(doc.citations) > 200 and doc.default_version() in pins()["hudi"]
    assert all(c.cls for c in doc.citations)
    lines_without_a_text = [c for c in doc.citations if c.lines and c.claims_release and c.pin is not None
                            and c.pin.module in fid.served(doc.default_version() or "")[0]
                            and not c.released and not c.offsets]
    assert not lines_without_a_text, [(c.row, c.text) for c in lines_without_a_text]
