"""Hudi's pinned jars (backends/hudi/artifacts.py) and the hudi world's answers to bad input.

The jars come from Maven Central once into the cache and are checked against their pins; a second run
downloads nothing; a file that does not match its pin is never kept.  A missing JDK tool, an unknown
version and a server that does not start are exit 2 with one line, and no JVM is left running.
"""

from __future__ import annotations

import os
import shutil
import urllib.request
from pathlib import Path

import pytest

from backends.hudi import artifacts
from backends.hudi.artifacts import ArtifactError, Coordinate
from cli.main import main

CLIENT = "org.apache.hudi:hudi-client-common:1.2.1"


def _drivers() -> int:
    """Lock-driver JVMs this process started that still run (from /proc: the test changes PATH)."""
    count = 0
    for proc in Path("/proc").glob("[0-9]*"):
        try:
            ours = f"\nPPid:\t{os.getpid()}\n" in (proc / "status").read_text()
            count += ours and artifacts.DRIVER_MAIN.encode() in (proc / "cmdline").read_bytes()
        except OSError:
            continue  # the process ended meanwhile
    return count


def test_a_pinned_jar_is_fetched_once_and_checked(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HCC_CACHE_DIR", str(tmp_path))
    first = artifacts.fetch(Coordinate.parse(CLIENT))
    assert first.is_file() and str(first).startswith(str(tmp_path))

    def offline(*_a: object, **_k: object) -> None:
        raise AssertionError("a second fetch went to the network")

    monkeypatch.setattr(urllib.request, "urlopen", offline)
    assert artifacts.fetch(Coordinate.parse(CLIENT)) == first  # from the cache, checked, no download


def test_a_file_that_does_not_match_its_pin_is_refused(tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HCC_CACHE_DIR", str(tmp_path))
    coord = Coordinate.parse(CLIENT)
    served = tmp_path / "served.jar"
    served.write_bytes(b"not hudi")
    real = artifacts.pins()
    monkeypatch.setattr(artifacts, "pins", lambda: {**real, "repository": tmp_path.as_uri()})
    (tmp_path / coord.path).parent.mkdir(parents=True)
    shutil.copy(served, tmp_path / coord.path)  # the "repository" serves a wrong file at the coordinate
    with pytest.raises(ArtifactError, match=f"{CLIENT}: sha256 .* is not the pinned"):
        artifacts.fetch(coord)
    assert not (tmp_path / "maven" / coord.path).exists()  # never kept


def test_unpinned_coordinates_and_versions_name_themselves() -> None:
    with pytest.raises(ArtifactError, match="org.apache.hudi:hudi-aws:1.2.1 is not pinned"):
        artifacts.fetch(Coordinate.parse("org.apache.hudi:hudi-aws:1.2.1"))
    with pytest.raises(ArtifactError, match="'0.9' is not pinned"):
        artifacts.hudi_jar("0.9", "hudi-client-common")
    with pytest.raises(ArtifactError, match="no -sources.jar"):
        artifacts.hudi_jar("1.2.1", "hudi-client-common", sources=True)


def test_the_driver_is_built_once_per_version_and_source(tmp_path: Path) -> None:
    for version in artifacts.versions():
        cp = artifacts.driver_classpath(version)
        assert (cp[0] / "hcc" / "driver" / "LockDriver.class").is_file()
        assert artifacts.driver_classpath(version) == cp


def test_bad_input_is_one_line_and_exit_2(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    before = _drivers()
    assert main(["run", "rfc91-safe", "--world", "hudi", "--hudi-version", "9.9", "--out",
                 str(tmp_path / "a")]) == 2
    assert "9.9" in capsys.readouterr().err
    # a server that does not start (nothing listens there): not-started, nothing ran
    assert main(["run", "rfc91-long-pause", "--world", "hudi", "--time-scale", "30", "--backend",
                 "http://k:s@127.0.0.1:9/bucket", "--out", str(tmp_path / "b")]) == 2
    err = capsys.readouterr().err
    assert "did not start" in err and "Traceback" not in err
    assert main(["run", "rfc91-fenced-long-pause", "--world", "hudi", "--out", str(tmp_path / "c")]) == 2
    assert "lock.variant = 'fenced'" in capsys.readouterr().err
    monkeypatch.delenv("JAVA_HOME", raising=False)
    monkeypatch.setenv("PATH", str(tmp_path))  # no java here
    assert main(["run", "rfc91-long-pause", "--world", "hudi", "--out", str(tmp_path / "d")]) == 2
    assert "java not found" in capsys.readouterr().err
    assert main(["run", "rfc91-safe", "--world", "hudi", "--out", str(tmp_path / "e")]) == 2
    assert "clocks.w1" in capsys.readouterr().err  # its clock drifts: a JVM's clock can only be offset
    assert _drivers() == before  # no JVM left behind
