"""Helpers of the writer-fault tests (engines/hudi_spark/launch.py): a proxy exchange and a stand-in writer
process (``sleep``, its own process group) to pause, kill or restart."""

from __future__ import annotations

import subprocess
import time
from pathlib import Path

from backends.fault_proxy import Exchange
from engines.hudi_spark.launch import WriterProcess


def exchange(node: str, key: str) -> Exchange:
    """A PUT of ``key`` by ``node`` that the server applied (200)."""
    return Exchange(at_ms=1, node=node, method="PUT", key=key, if_match=None, if_none_match=None,
                    action="forward", status=200, version=None, body=b"")


def sleeper(tmp_path: Path, name: str) -> WriterProcess:
    """A writer process named ``name`` that sleeps 60 s in its own session (the caller kills it)."""
    proc = subprocess.Popen(["sleep", "60"], start_new_session=True)
    return WriterProcess(name, proc, tmp_path / "log", tmp_path / "plan", time.monotonic())
