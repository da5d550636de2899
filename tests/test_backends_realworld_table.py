"""``hcc realworld`` leaves the objects of its prefix under ``table/`` (fake-gcs-server and SeaweedFS).

The run directory holds what the run left under its prefix, read back from the bucket (the lock
file, the register, Hudi's audit trail and its enable file) and nothing from outside the prefix;
``hcc check-audit RUN/table`` reads it; the store events carry the version chain of the lock file.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from backends.endpoint import Endpoint
from backends.fixtures import fake_gcs_endpoint, seaweedfs_endpoint  # noqa: F401
from cli.main import main
from model.runtime.effects import Put, Read
from model.runtime.history import loads
from reports.load import load_run

SHORT = ["lock.validity_secs=4", "lock.renew_interval_secs=1", "lock.enforce_hudi_limits=false",
         "storage.timeout_ms=400", "lock.wait_time_ms=10000", "duration_ms=4000"]
OUTSIDE = {"rw-table-sibling/table/.hoodie/.locks/table_lock.json": b'{"owner": "someone else"}',
           "elsewhere/table/.hoodie/.locks/audit/x_y.jsonl": b"not ours\n"}


@pytest.mark.parametrize("fixture", ["fake_gcs_endpoint", "seaweedfs_endpoint"])
def test_the_run_directory_holds_the_prefix_and_only_it(fixture: str, request: pytest.FixtureRequest,
                                                        tmp_path: Path) -> None:
    ep: Endpoint = request.getfixturevalue(fixture)
    for key, body in OUTSIDE.items():
        with ep.backend(key.split("/", 1)[0] + "/") as b:
            b.ensure_container()
            assert b.perform(Put(key, body)).ok
    url = (f"gs+{ep.url}/{ep.bucket}" if ep.kind == "gcs" else f"s3+{ep.url}/{ep.bucket}")
    out = tmp_path / "run"
    code = main(["realworld", "rfc91-safe", "--backend", url, "--prefix", "rw-table/", "--out", str(out),
                 *[x for s in SHORT for x in ("--set", s)]])
    assert code == 0
    table = out / "table"
    locks = table / ".hoodie" / ".locks"
    enable = json.loads((locks / "audit_enabled.json").read_text())
    assert enable["STORAGE_LOCK_AUDIT_SERVICE_ENABLED"] is True
    assert (locks / "table_lock.json").is_file() and (table / "register").is_file()
    trail = sorted((locks / "audit").glob("*.jsonl"))
    assert trail
    files = {p.relative_to(table).as_posix() for p in table.rglob("*") if p.is_file()}
    assert "someone else" not in (locks / "table_lock.json").read_text()
    assert not any("x_y" in f for f in files)  # nothing from outside the prefix came in
    for key, body in OUTSIDE.items():  # and nothing outside it was cleared or changed
        with ep.backend(key.split("/", 1)[0] + "/") as b:
            got = b.perform(Read(key))
            assert got.ok and got.body == body
    assert main(["check-audit", str(table)]) in (0, 1)  # Hudi's validator reads the run's own table
    verdict = json.loads((out / "verdict.json").read_text())
    assert verdict["audit"] is not None and verdict["audit"]["windows"] == len(trail)
    run = load_run(out)  # the one reader takes it as every world's run directory, with its report
    assert run.verdict["world"] == "real" and (out / "report.md").is_file()
    # the lock file's store events carry the version chain, in the form the server gives it
    events = loads((out / "history.jsonl").read_text())
    lock_files = [e for e in events if e.process == "store" and e.f == "lock-file"]
    versions = {e.value["version"] for e in lock_files}
    assert all("replaces" in e.value for e in lock_files)
    assert sum(1 for e in lock_files if e.value["replaces"] in versions) >= len(trail)
