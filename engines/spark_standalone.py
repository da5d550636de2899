"""A Spark standalone cluster on this machine: a master and a worker from PySpark's own ``spark-class``.

For tests and trials of ``--master spark://...``: both bind 127.0.0.1 on reserved ports
(:func:`backends.launchers.process.reserve_ports`), log to files in a work folder, run in process
groups of their own and are always stopped (:func:`standalone_cluster` is a context manager; the
launchers' watchdog kills them if the harness dies).  The worker does not see this process's
``PYTHONPATH``: its executors find the harness only where the driver ships it (:mod:`engines.ship`).
"""

from __future__ import annotations

import json
import os
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from backends.launchers.process import (
    HOST,
    LaunchError,
    ServerProcess,
    Unavailable,
    http_answers,
    start_server,
)
from engines.spark import SparkUnavailable, find_java

READY_TIMEOUT_S = 90.0
_MASTER = "org.apache.spark.deploy.master.Master"
_WORKER = "org.apache.spark.deploy.worker.Worker"


@dataclass(frozen=True)
class Cluster:
    """A running standalone cluster: its master URL (for ``--master``) and where its logs are."""

    master_url: str
    web_url: str
    workdir: Path


def spark_home() -> Path:
    """The Spark distribution inside the pyspark package (its ``bin/spark-class`` and ``jars/``)."""
    try:
        import pyspark
    except ImportError as e:
        raise Unavailable("PySpark is not installed: pip install 'hudi-cc-harness[spark]'") from e
    home = Path(pyspark.__file__).parent
    if not (home / "bin" / "spark-class").is_file() or not (home / "jars").is_dir():
        raise Unavailable(f"no bin/spark-class and jars/ in the pyspark package at {home}")
    return home


def _env(home: Path, workdir: Path) -> dict[str, str]:
    """Overrides of this process's environment (a ServerProcess starts from it) for master and worker."""
    try:
        java_home = find_java().home
    except SparkUnavailable as e:
        raise Unavailable(str(e)) from e
    conf = workdir / "conf"  # empty: no spark-defaults.conf of the machine leaks in
    conf.mkdir(parents=True, exist_ok=True)
    env = {"JAVA_HOME": java_home, "SPARK_HOME": str(home), "SPARK_CONF_DIR": str(conf),
           "SPARK_LOCAL_IP": HOST, "SPARK_LOG_DIR": str(workdir / "logs"), "SPARK_NO_DAEMONIZE": "1",
           "PYTHONPATH": ""}  # the executors must not find the harness through our PYTHONPATH
    # A taken port is an error (retried on fresh ports by start_server), not a silent move to port + 1.
    for opts in ("SPARK_MASTER_OPTS", "SPARK_WORKER_OPTS"):
        env[opts] = (os.environ.get(opts, "") + " -Dspark.port.maxRetries=0").strip()
    return env


def _alive_workers(web_url: str) -> int:
    try:
        with urllib.request.urlopen(f"{web_url}/json/", timeout=2) as r:
            state = json.load(r)
    except (OSError, ValueError):
        return 0
    return sum(1 for w in state.get("workers", []) if w.get("state") == "ALIVE")


@contextmanager
def standalone_cluster(workdir: Path, cores: int = 2, memory: str = "2g") -> Iterator[Cluster]:
    """Start a master and one worker (``cores`` cores, ``memory`` for executors); stop both on exit.

    Raises :class:`Unavailable` without PySpark or Java 17+, :class:`LaunchError` (naming the log)
    when a process does not come up within :data:`READY_TIMEOUT_S`.
    """
    home = spark_home()
    workdir.mkdir(parents=True, exist_ok=True)
    env = _env(home, workdir)
    spark_class = str(home / "bin" / "spark-class")

    def process(name: str, args: list[str]) -> ServerProcess:
        return ServerProcess(name, [spark_class, *args], workdir / f"{name}.log", cwd=workdir, env=env)

    def master(ports: list[int]) -> ServerProcess:
        return process("spark-master", [_MASTER, "--host", HOST, "--port", str(ports[0]),
                                        "--webui-port", str(ports[1])])

    started: list[ServerProcess] = []
    try:
        m = start_server("spark-master", 2, master, lambda p: p.wait_ready(
            lambda: http_answers(f"http://{HOST}:{p.ports[1]}/json/"), READY_TIMEOUT_S))
        started.append(m)
        master_url = f"spark://{HOST}:{m.ports[0]}"
        web_url = f"http://{HOST}:{m.ports[1]}"

        def worker(ports: list[int]) -> ServerProcess:
            return process("spark-worker", [_WORKER, "--host", HOST, "--port", str(ports[0]),
                                            "--webui-port", str(ports[1]), "--cores", str(cores),
                                            "--memory", memory, "--work-dir", str(workdir / "work"),
                                            master_url])

        started.append(start_server("spark-worker", 2, worker, lambda p: p.wait_ready(
            lambda: _alive_workers(web_url) >= 1, READY_TIMEOUT_S)))
        yield Cluster(master_url, web_url, workdir)
    finally:
        for proc in reversed(started):
            proc.stop()


__all__ = ["Cluster", "LaunchError", "Unavailable", "spark_home", "standalone_cluster"]
