"""``hcc run --all`` ends by saying how many entries gave their expected verdict and where the runs are."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from cli.main import main
from scenarios.catalogue import CATALOGUE


def test_run_all_ends_with_a_summary(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = tmp_path / "catalogue"
    folder.mkdir()
    shutil.copy(CATALOGUE / "rfc91-writer-thread-dies.toml", folder)
    entry = (CATALOGUE / "rfc91-holder-crash.toml").read_text()
    missed = entry.replace('expect = "ok"', 'expect = "violation"')
    (folder / "rfc91-holder-crash.toml").write_text(missed)
    out = tmp_path / "runs"
    assert main(["run", "--all", "--catalogue", str(folder), "--out", str(out)]) == 1
    last = capsys.readouterr().out.strip().splitlines()[-1]
    assert last == (f"1 of 2 entries gave their expected verdict; 1 did NOT (above). Run folders, each with "
                    f"report.html and report.md: {out}")
