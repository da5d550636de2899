"""A sample of the configuration space against a launched server: catalogue entries with changed fields
run on real threads against fake-gcs-server end with a verdict (never a traceback), and what the model
cannot run is refused before anything is launched, naming the field and the value."""

from __future__ import annotations

from pathlib import Path

import pytest

from backends.endpoint import Endpoint
from backends.fixtures import fake_gcs_endpoint  # noqa: F401
from backends.realworld import run_realworld
from model.config import ConfigError
from scenarios import loader

pytestmark = pytest.mark.backends

# a few seconds of validity, Hudi's limits off, a client timeout of its own: runs of about 8 s
SHORT = ["lock.validity_secs=4", "lock.renew_interval_secs=1", "lock.enforce_hudi_limits=false",
         "storage.timeout_ms=400", "lock.wait_time_ms=10000", "duration_ms=8000", "storage.flavor=gcs"]

SAMPLE = [
    ("rfc91-safe", ["lock.client_num_retries=0"]),
    ("rfc91-lost-reply", ["lock.variant=412-recovery"]),
    ("rfc91-renewals-fail", ["workload.interrupt=checkpoints", "workload.writers=4"]),
    ("rfc91-failed-release-reuse", ["workload.after_failed_release=close"]),
]


@pytest.mark.parametrize("name, changes", SAMPLE)
def test_changed_entries_end_with_a_verdict_on_a_real_server(name: str, changes: list[str], tmp_path: Path,
                                                             fake_gcs_endpoint: Endpoint) -> None:  # noqa: F811
    sc = loader.load(name, [*SHORT, *changes])
    res = run_realworld(sc, fake_gcs_endpoint, prefix=f"space-{name}/", log_dir=tmp_path)
    assert res.verdict.verdict in ("ok", "violation")
    assert res.events[0].f == "run-start" and res.events[-1].f == "run-end"


def test_a_zero_second_client_timeout_is_refused_before_anything_runs() -> None:
    with pytest.raises(ConfigError) as e:
        loader.load("rfc91-safe", ["lock.validity_secs=4", "lock.enforce_hudi_limits=false",
                                   "lock.renew_interval_secs=1", "storage.flavor=s3"])
    assert e.value.field == "lock.validity_secs" and e.value.value == 4
