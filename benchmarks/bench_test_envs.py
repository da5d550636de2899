"""Benchmark of a tox test environment's pytest run (not a test; prints figures, asserts nothing).

Runs the pytest command of ``[testenv:NAME]`` in tox.ini (its ``-n``, ``--dist`` and ``-m`` as written
there) in this interpreter, with this file loaded as a pytest plugin that records each test's wall and CPU
seconds (the process and the children it waited for; setup and teardown included, so a module fixture
counts in its module's first test). It prints the run's wall time, the CPU seconds of all its tests,
the modules and tests that cost most CPU, and the tests over ``--over`` CPU seconds that the environment
runs although they are not marked ``slow`` (candidates for ``tox -e tests-slow``). CPU seconds barely
depend on the machine's load, so the figures compare across runs on a shared machine where wall times do
not; ``uptime`` is printed before and after.

Run: python benchmarks/bench_test_envs.py [--env tests] [--over 10] [--top 25] [-- extra pytest args]
"""

from __future__ import annotations

import argparse
import configparser
import json
import os
import resource
import shlex
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent
_OUT = "HCC_BENCH_TEST_TIMES"  # the folder each pytest process (xdist worker) writes its rows into
_rows: list[tuple[str, float, float, bool]] = []


def _cpu() -> float:
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Iterator[None]:
    """Plugin hook: time one test, its setup and teardown included."""
    wall, cpu = time.perf_counter(), _cpu()
    yield
    _rows.append((item.nodeid, time.perf_counter() - wall, _cpu() - cpu,
                  item.get_closest_marker("slow") is not None))


def pytest_sessionfinish(session: pytest.Session) -> None:
    """Plugin hook: write this process's rows (one file per xdist worker)."""
    folder = os.environ.get(_OUT)
    if folder:
        name = os.environ.get("PYTEST_XDIST_WORKER", "main")
        (Path(folder) / f"{name}.json").write_text(json.dumps(_rows))


def tox_pytest_args(env: str) -> list[str]:
    """The arguments after ``pytest`` in tox.ini's ``[testenv:ENV]`` commands ({posargs} left out)."""
    ini = configparser.ConfigParser(interpolation=None)
    ini.read(ROOT / "tox.ini")
    section = f"testenv:{env}"
    if not ini.has_section(section):
        raise SystemExit(f"--env: tox.ini has no [{section}]")
    argv = shlex.split(ini.get(section, "commands").strip().replace("{posargs}", ""))
    if argv[:1] != ["pytest"]:
        raise SystemExit(f"--env: [{section}] commands is not one pytest command: {argv}")
    return argv[1:]


def _uptime() -> str:
    return subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()


def main() -> int:
    """Run the environment's pytest command with the timing plugin and print the figures."""
    ap = argparse.ArgumentParser(description="Time a tox test environment's pytest run, test by test.")
    ap.add_argument("--env", default="tests", help="the tox environment whose pytest command runs")
    ap.add_argument("--over", type=float, default=10.0, help="list unmarked tests over this many CPU seconds")
    ap.add_argument("--top", type=int, default=25, help="how many modules and tests to list")
    ap.add_argument("extra", nargs="*", help="more pytest arguments (after --)")
    args = ap.parse_args()
    if args.over < 0 or args.top < 1:
        ap.error(f"--over must be >= 0 and --top >= 1 (got {args.over}, {args.top})")
    with tempfile.TemporaryDirectory() as folder:
        argv = [sys.executable, "-m", "pytest", *tox_pytest_args(args.env), "-q", "-p", "no:cacheprovider",
                "-p", "bench_test_envs", *args.extra]
        path = [str(ROOT / "benchmarks"), os.environ.get("PYTHONPATH", "")]
        env = {**os.environ, _OUT: folder, "PYTHONPATH": os.pathsep.join(p for p in path if p)}
        print("before:", _uptime())
        print("$", shlex.join(argv[1:]))
        start = time.perf_counter()
        code = subprocess.run(argv, cwd=ROOT, env=env, stdout=subprocess.DEVNULL).returncode
        wall = time.perf_counter() - start
        print("after: ", _uptime())
        rows: list[list[Any]] = [r for f in Path(folder).glob("*.json") for r in json.loads(f.read_text())]
    cpu = sum(r[2] for r in rows)
    print(f"pytest exit {code}; {len(rows)} tests; wall {wall:.0f} s; CPU of the tests {cpu:.0f} s "
          f"({cpu / 60:.1f} min; on 2 idle cores about {cpu / 2 / 60:.1f} min of wall)")
    modules: Counter[str] = Counter()
    for nodeid, _, c, _ in rows:
        modules[nodeid.split("::")[0]] += c
    print(f"\nmodules by CPU seconds (top {args.top}):")
    for module, c in modules.most_common(args.top):
        print(f"  {c:7.1f}  {module}")
    print(f"\ntests by CPU seconds (top {args.top}; wall in brackets):")
    for nodeid, w, c, slow in sorted(rows, key=lambda r: -r[2])[:args.top]:
        print(f"  {c:7.1f} ({w:6.1f})  {nodeid}{'  [slow]' if slow else ''}")
    heavy = [r for r in rows if r[2] > args.over and not r[3]]
    print(f"\nunmarked tests over {args.over:g} CPU s: {len(heavy)}")
    for nodeid, _, c, _ in sorted(heavy, key=lambda r: -r[2]):
        print(f"  {c:7.1f}  {nodeid}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
