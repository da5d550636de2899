"""Issue 28: one corrupted byte in a log file of a run's exported table.

Both readers must refuse the file with an error that names it, or, where hudi-rs 0.5.0 silently skips the
damaged block (a changed block length: it takes the block for corrupt, as Java's reader does), the
harness must say so; where hudi-rs aborts the process (a content length one short), the harness reports
the abort.  Nothing raises: ``engines/oracle.read_back`` reports it all in its result.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("pyarrow", reason="pyarrow (the oracle extra) is not installed")
pytest.importorskip("hudi", reason="hudi-rs (PyPI hudi 0.5.0, the oracle extra) is not installed")

from engines.oracle import encode_table, read_back  # noqa: E402
from engines.rundir import write_table  # noqa: E402
from model.hudi_files.errors import HudiFileError  # noqa: E402
from model.hudi_files.log_blocks import content_offset  # noqa: E402
from model.hudi_files.log_format import decode_log_file  # noqa: E402
from model.hudi_files.records import read_data_file  # noqa: E402
from model.oracle.nbcc import nbcc_points  # noqa: E402
from model.protocols import PROTOCOLS  # noqa: E402
from scenarios import catalogue  # noqa: E402

NAME = "nbcc-uncommitted-anchor-pr-19785"


@pytest.fixture(scope="module")
def pristine(tmp_path_factory: pytest.TempPathFactory) -> tuple[Any, Any, Path, dict[str, Any], str]:
    """The run, its table folder in Hudi's encoding, the encoding summary, and the log to corrupt: one
    holding a write the snapshot reads."""
    entry = catalogue.load(NAME)
    sim = PROTOCOLS[entry.protocol].run(entry.config, entry.seed, None)
    objects, encoding = encode_table(entry.plugin.hudi_table, sim.objects, sim.table_prefix)
    out = tmp_path_factory.mktemp("pristine")
    table = write_table(out, objects, prefix=sim.table_prefix)
    found = read_back(entry.plugin.hudi_table, entry.config, sim, table, encoding)
    assert found["status"] == "done"
    [snapshot] = [c for c in found["comparisons"] if c["kind"] == "snapshot"]
    assert snapshot["counts"] == {"agree": snapshot["keys"]}
    rid, commit = sorted(nbcc_points(sim.events, sim.objects, sim.table_prefix.rstrip("/"),
                                     entry.config.nbcc.slicing_rule)[0].expected.values())[-1].split("@")
    holder = next(p for p in sorted(table.rglob(f".*_{commit}.log.*"))
                  if any(r["rid"] == rid for r in read_data_file(p.name, p.read_bytes()).blocks[0].records))
    return entry, sim, table, encoding, holder.relative_to(table).as_posix()


def corrupted(pristine: Any, tmp_path: Path, at: int, delta: int) -> tuple[dict[str, Any], str, bytes]:
    entry, sim, table, encoding, log = pristine
    copy = tmp_path / "table"
    shutil.copytree(table, copy)
    data = bytearray((copy / log).read_bytes())
    data[at] = (data[at] + delta) % 256
    (copy / log).write_bytes(bytes(data))
    found = read_back(entry.plugin.hudi_table, entry.config, sim, copy, encoding)
    return found, log, bytes(data)


def test_a_changed_magic_byte_is_refused_by_both_readers_naming_the_file(
    pristine: Any, tmp_path: Path
) -> None:
    found, log, data = corrupted(pristine, tmp_path, 0, 1)
    with pytest.raises(HudiFileError, match=r"byte 0: bad magic") as exc:
        read_data_file(log, data)
    assert exc.value.path == log
    assert "bad magic" in found["files_refused_by_model"][log] and log in found["files_refused_by_model"][log]
    assert "Invalid magic" in found["files_refused"][log]
    assert found["files_skipped_silently_by_hudi_rs"] == []
    # the reads that touch the file fail in hudi-rs, reported point by point, never raised
    assert found["status"] == "error" and any("Invalid magic" in e["error"] for e in found["errors"])


def test_a_changed_block_length_is_refused_by_the_model_and_skipped_silently_by_hudi_rs(
    pristine: Any, tmp_path: Path
) -> None:
    found, log, data = corrupted(pristine, tmp_path, 13, 1)
    with pytest.raises(HudiFileError, match=r"block length"):
        read_data_file(log, data)
    assert log in found["files_refused_by_model"] and log not in found["files_refused"]
    assert found["files_skipped_silently_by_hudi_rs"] == [log]
    # hudi-rs reads on without the block: the write it held vanishes from its snapshot, and the oracle
    # names the key where it now differs from the expected rows and the model's reader
    [snapshot] = [c for c in found["comparisons"] if c["kind"] == "snapshot"]
    assert any(d["outcome"] == "hudi-rs differs" and d["hudi_rs"] != d["expected"]
               for d in snapshot["differences"])


def test_a_content_length_one_short_aborts_hudi_rs_and_the_harness_reports_it(
    pristine: Any, tmp_path: Path
) -> None:
    _, _, table, _, log = pristine
    at = content_offset(decode_log_file((table / log).read_bytes())[0]) - 1
    found, log, data = corrupted(pristine, tmp_path, at, -1)
    with pytest.raises(HudiFileError, match=r"content length|block"):
        read_data_file(log, data)
    assert log in found["files_refused_by_model"]
    assert found["status"] == "error"
    assert found["hudi_rs_error"] and "aborted" in found["hudi_rs_error"], found["hudi_rs_error"]
    assert found["errors"]  # the points it never answered, each listed
