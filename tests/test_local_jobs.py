"""``--engine local --jobs N``: runs in worker processes, rows identical to one process, failures named."""

from __future__ import annotations

import dataclasses
import multiprocessing
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from cli.main import main
from engines import cells
from engines.local import LocalEngine, TaskFailed, default_jobs, describe_task
from model.config import Dist
from scenarios import grid

ROOT = Path(__file__).resolve().parents[1]


def _smoke(seeds: int = 3) -> list[cells.SweepRun]:
    return cells.expand(grid.load("smoke"), seeds=seeds)


def _broken(task: cells.SweepRun) -> cells.SweepRun:
    workload = dataclasses.replace(task.scenario.workload, work_ms=Dist("bogus"))
    return dataclasses.replace(task, scenario=dataclasses.replace(task.scenario, workload=workload))


# Row functions for the workers: module level, so a worker process imports them by name.

def dies_on_seed_2_of_cell_1(task: cells.SweepRun) -> dict[str, Any]:
    """A run whose worker process dies (as a segfault or the OOM killer would kill it)."""
    if task.cell == 1 and task.seed == 2:
        os._exit(7)
    return cells.run_task(task)


def raises_on_cell_2(task: cells.SweepRun) -> dict[str, Any]:
    """A row function that raises (run_task itself turns a model crash into an error row)."""
    if task.cell == 2:
        raise ValueError("no row for this cell")
    return cells.run_task(task)


def test_two_workers_give_the_rows_of_one_process_in_task_order() -> None:
    tasks = _smoke()
    one = LocalEngine(quiet=True).run(tasks)
    engine = LocalEngine(quiet=True, jobs=2)
    try:
        two = engine.run(tasks)
        assert len(engine.worker_pids()) == 2 and os.getpid() not in engine.worker_pids()
        again = engine.run(tasks[::-1])  # the workers are reused; rows follow the tasks given
    finally:
        engine.close()
    assert two == one
    assert again == one[::-1]
    assert {r["verdict"] for r in two} == {"ok", "violation"}  # the grid's rows are not all alike
    assert engine.worker_pids() == []


def test_a_model_crash_in_a_worker_is_the_error_row_one_process_makes() -> None:
    tasks = _smoke(1)
    tasks[1] = _broken(tasks[1])
    with_two = LocalEngine(quiet=True, jobs=2)
    try:
        rows = with_two.run(tasks)
    finally:
        with_two.close()
    assert rows == LocalEngine(quiet=True).run(tasks)
    assert rows[1]["verdict"] == "error" and rows[1]["cell"] == 1 and rows[1]["seed"] == 1
    assert "bogus" in rows[1]["error"] and [r["verdict"] for r in rows].count("error") == 1


def test_a_dead_worker_names_its_cell_and_seed_and_the_others_go_on() -> None:
    tasks = _smoke()
    engine = LocalEngine(quiet=True, jobs=2)
    try:
        rows = engine.run(tasks, fn=dies_on_seed_2_of_cell_1)
        dead = [r for r in rows if r["verdict"] == "error"]
        assert [(r["cell"], r["seed"]) for r in dead] == [(1, 2)]
        assert "worker process died (exit code 7)" in dead[0]["error"]
        assert "cell 1 (faults.pauses[0].duration_ms=3000, lock.variant=fenced) seed 2" in dead[0]["error"]
        reference = LocalEngine(quiet=True).run(tasks)
        others = [r for r in reference if (r["cell"], r["seed"]) != (1, 2)]
        assert [r for r in rows if r is not dead[0]] == others
        assert engine.run(tasks[:4]) == reference[:4]  # the pool still works after the deaths
    finally:
        engine.close()


def test_a_row_function_that_raises_stops_the_run_naming_the_task() -> None:
    tasks = _smoke(1)
    engine = LocalEngine(quiet=True, jobs=2)
    with pytest.raises(TaskFailed) as err:
        engine.run(tasks, fn=raises_on_cell_2)
    assert describe_task(tasks[2]) in str(err.value) and "ValueError: no row for this cell" in str(err.value)
    assert engine.worker_pids() == []  # stopped on the way out


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="reads /proc for the processes left")
def test_sigint_in_the_parent_stops_the_workers() -> None:
    from engines.lifecycle import signals_as_exceptions

    tasks = _smoke(40)
    engine = LocalEngine(quiet=True, jobs=2)
    seen: list[int] = []

    def interrupt() -> None:
        # once both workers are at work (their start is slow on a loaded machine), not at a fixed time
        deadline = time.monotonic() + 60
        while len(engine.worker_pids()) < 2 and time.monotonic() < deadline:
            time.sleep(0.05)
        seen.extend(engine.worker_pids())  # the workers at work when the signal comes
        os.kill(os.getpid(), signal.SIGINT)

    timer = threading.Timer(0.1, interrupt)
    try:
        with signals_as_exceptions(), pytest.raises(KeyboardInterrupt):
            timer.start()
            engine.run(tasks)
    finally:
        timer.cancel()
        engine.close()
    assert len(seen) == 2 and engine.worker_pids() == []
    assert not [pid for pid in seen if _alive(pid)]


def _alive(pid: int) -> bool:
    """A process that exists and is not a zombie."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def _pids() -> list[int]:
    return [int(e.name) for e in Path("/proc").iterdir() if e.name.isdigit()]


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="reads /proc for the processes left")
def test_ctrl_c_on_a_sweep_exits_130_and_leaves_no_process(tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen(
        [sys.executable, "-m", "cli.main", "sweep", "smoke", "--engine", "local", "--jobs", "2",
         "--seeds", "500", "--out", str(tmp_path / "s")],
        cwd=ROOT, env=env, stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        assert proc.stderr is not None
        while "runs" not in proc.stderr.readline():  # the first progress line: workers are running
            assert proc.poll() is None
        time.sleep(0.5)
        os.killpg(proc.pid, signal.SIGINT)  # as a terminal's Ctrl-C: the whole process group
        assert proc.wait(timeout=60) == 130
        err = proc.stderr.read()
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    assert "interrupted by SIGINT" in err and "Traceback" not in err  # the workers ignored it quietly
    deadline = time.monotonic() + 10
    while (left := _session(proc.pid)) and time.monotonic() < deadline:
        time.sleep(0.1)  # the fork server leaves when it reads end-of-file from its parent
    assert left == []


def _session(sid: int) -> list[int]:
    """Live processes of session ``sid``."""
    found = []
    for pid in _pids():
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[3]) == sid and fields[0] != "Z":
            found.append(pid)
    return found


def test_cli_jobs_two_writes_the_rows_of_one_process(tmp_path: Path,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    pd = pytest.importorskip("pandas")
    pytest.importorskip("pyarrow")
    from analyses import sweep_summary as summary

    for jobs in ("1", "2"):
        assert main(["sweep", "smoke", "--engine", "local", "--jobs", jobs, "--out", str(tmp_path / jobs),
                     "--quiet"]) == 0
    out = capsys.readouterr().out
    assert "on local (one process)" in out and "on local (2 worker processes)" in out
    one, two = summary.read_rows(tmp_path / "1"), summary.read_rows(tmp_path / "2")
    pd.testing.assert_frame_equal(one, two)
    assert len(two) == 12


def test_jobs_is_checked_and_defaults_to_the_cores(capsys: pytest.CaptureFixture[str]) -> None:
    from engines.sweep_engines import open_engine

    assert main(["sweep", "smoke", "--engine", "local", "--jobs", "0"]) == 2
    assert "--jobs = 0" in capsys.readouterr().err
    assert main(["sweep", "smoke", "--engine", "spark", "--jobs", "2"]) == 2
    assert "only applies to --engine local" in capsys.readouterr().err
    engine = open_engine("local")
    assert engine.jobs == default_jobs() == (os.cpu_count() or 1)
    engine.close()


def test_a_script_without_a_main_guard_fails_to_start_its_workers_and_says_so(tmp_path: Path) -> None:
    script = tmp_path / "unguarded.py"
    script.write_text("from engines import cells\nfrom engines.local import LocalEngine\n"
                      "from scenarios import grid\n"
                      "LocalEngine(quiet=True, jobs=2).run(cells.expand(grid.load('smoke'), seeds=1))\n")
    done = subprocess.run([sys.executable, str(script)], cwd=tmp_path,
                          env={**os.environ, "PYTHONPATH": str(ROOT)}, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 1
    assert "WorkersFailed: a worker process failed to start" in done.stderr


def test_boundary_probes_in_workers_are_those_of_one_process() -> None:
    from analyses.boundary import Prober, bisect

    fast = ["lock.validity_secs=10", "lock.renew_interval_secs=1", "duration_ms=40000",
            "faults.pauses[0].at_ms=5000"]
    pause = "faults.pauses[0].duration_ms"
    pooled = LocalEngine(quiet=True, jobs=2)
    try:
        in_workers = bisect(pause, 0, 30_000, 500, Prober("rfc91-long-pause", fast, pause, [1, 2, 3], pooled))
    finally:
        pooled.close()
    one = LocalEngine(quiet=True)
    alone = bisect(pause, 0, 30_000, 500, Prober("rfc91-long-pause", fast, pause, [1, 2, 3], one))
    assert in_workers.outcome == "found" and in_workers.probes == alone.probes


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="reads /proc for the fork server's signal mask")
def test_the_fork_server_ignores_sigint_from_its_start() -> None:
    # a Ctrl-C to the process group while the fork server still imports its preload (the whole model) once
    # killed it with a traceback; started with SIGINT ignored, it ignores it from its first instruction
    from engines.local import _context

    if "forkserver" not in multiprocessing.get_all_start_methods():
        pytest.skip("no fork server on this platform")
    _context()
    servers = [pid for pid in _pids() if _parent(pid) == os.getpid() and b"forkserver" in _cmdline(pid)]
    assert servers
    for pid in servers:
        ignored = int(next(line for line in Path(f"/proc/{pid}/status").read_text().splitlines()
                           if line.startswith("SigIgn:")).split()[1], 16)
        assert ignored & (1 << (signal.SIGINT - 1))


def _parent(pid: int) -> int:
    try:
        return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
    except (OSError, IndexError, ValueError):
        return -1


def _cmdline(pid: int) -> bytes:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return b""
