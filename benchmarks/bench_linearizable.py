"""Benchmark of the linearizability checker on Jepsen's public histories, against Porcupine in the same run.

Data: Porcupine's test data (not part of this repository): the etcd compare-and-set register
histories ``test_data/jepsen/etcd_NNN.log`` with the verdicts its tests expect (read from its
``porcupine_test.go``: ``checkJepsen(t, N, true|false)``), and the key-value histories
``test_data/kv/cNN-ok|bad.txt``.  ``--porcupine DIR`` (or ``PORCUPINE_DIR``) is a checkout of
github.com/anishathalye/porcupine: a work tree, or a bare git directory (read with ``git show``).

Porcupine's own time: ``--porcupine-test-binary BIN`` is Porcupine's compiled Go test binary for
that checkout (built by the user with Porcupine's own Go tooling; this repository holds no
recipe for it).  It is run with ``-test.bench`` on the same histories (``ns/op`` per history,
parsing excluded, as here).  Without it, the Porcupine figures are skipped with the reason.

Figures (each printed with its goal):

1. verdicts right/wrong on the 102 etcd histories (goal: all right);
2. verdict-only time for all, ratio to Porcupine (goal <= 3x);
3. time with counterexamples, ratio to the verdict-only time (goal <= 2x), and what the
   counterexamples say (longest prefix, operations that cannot follow it);
4. the kv histories: verdicts and time against Porcupine's (partitioned kv model).

Rounds alternate Porcupine and this checker (the machine is shared and noisy); times are the
best round, ratios the median of the rounds' ratios (and best against best is printed too; a
goal is met when both are).

Run: python benchmarks/bench_linearizable.py --porcupine DIR [--porcupine-test-binary BIN] [--rounds 3]
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from model.checkers.jepsen_log import parse_etcd_log, parse_kv_log
from model.checkers.lin_models import KVModel, Model, Operation, RegisterModel
from model.checkers.linearizable import LinVerdict, check_operations, pair

GOAL_VERDICT_RATIO = 3.0
GOAL_COUNTEREXAMPLE_RATIO = 2.0


class Checkout:
    """Porcupine's files, from a work tree or a git directory."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.git = not (path / "porcupine_test.go").exists()
        if self.git and not (path / "HEAD").exists() and not (path / ".git").exists():
            raise FileNotFoundError(f"{path} is neither a Porcupine work tree nor a git directory")

    def read(self, name: str) -> str:
        """The text of file ``name`` (relative to the repository root)."""
        if not self.git:
            return (self.path / name).read_text()
        return subprocess.run(["git", "--git-dir", str(self.path), "show", f"HEAD:{name}"], check=True,
                              capture_output=True, text=True).stdout

    def names(self, folder: str) -> list[str]:
        """The files directly under ``folder``."""
        if not self.git:
            return sorted(f"{folder}/{p.name}" for p in (self.path / folder).iterdir())
        out = subprocess.run(["git", "--git-dir", str(self.path), "ls-tree", "--name-only", "HEAD",
                              f"{folder}/"], check=True, capture_output=True, text=True).stdout
        return sorted(out.split())


@dataclass
class Case:
    """One history: its name, Porcupine's benchmark for it, the expected verdict, the operations."""

    name: str
    bench: str
    expected: bool
    model: Model[object]
    ops: list[Operation]
    unknown: int = 0
    times: dict[str, list[float]] = field(default_factory=dict)
    verdicts: dict[str, LinVerdict] = field(default_factory=dict)


def load_cases(co: Checkout) -> tuple[list[Case], list[Case]]:
    """The etcd and kv histories with the verdicts Porcupine's tests expect."""
    tests = co.read("porcupine_test.go")
    etcd = []
    for num, verdict in re.findall(r"checkJepsen\(t, (\d+), (true|false)\)", tests):
        n = int(num)
        ops = pair(parse_etcd_log(co.read(f"test_data/jepsen/etcd_{n:03d}.log").splitlines()))
        etcd.append(Case(f"etcd_{n:03d}", f"BenchmarkEtcdJepsen{n:03d}", verdict == "true", RegisterModel(),
                         ops, sum(op.status == "info" for op in ops)))
    kv = []
    kv_bench = r'func (BenchmarkKv\w+)\(b \*testing\.B\) \{\s*benchKv\(b, "([^"]+)", (true|false), true\)'
    for bench, name, verdict in re.findall(kv_bench, tests):
        ops = pair(parse_kv_log(co.read(f"test_data/kv/{name}.txt").splitlines()))
        unknown = sum(op.status == "info" for op in ops)
        kv.append(Case(name, bench, verdict == "true", KVModel(), ops, unknown))
    return etcd, kv


def porcupine_times(binary: Path, co: Checkout, pattern: str, iterations: int) -> dict[str, float]:
    """Seconds per history by Porcupine's Go benchmarks matching ``pattern`` (ns/op: a mean of
    ``iterations``)."""
    with tempfile.TemporaryDirectory() as tmp:
        cwd = co.path
        if co.git:  # the binary reads test_data/ from its working directory
            cwd = Path(tmp)
            for folder in ("test_data/jepsen", "test_data/kv"):
                (cwd / folder).mkdir(parents=True)
                for name in co.names(folder):
                    (cwd / name).write_text(co.read(name))
        out = subprocess.run([str(binary.resolve()), "-test.run", "^$", "-test.bench", pattern,
                              f"-test.benchtime={iterations}x"], cwd=cwd, capture_output=True, text=True,
                             timeout=3600, check=False)
    if out.returncode != 0:
        raise RuntimeError(f"{binary} failed ({out.returncode}): {(out.stdout + out.stderr)[-800:]}")
    return {m.group(1): float(m.group(2)) / 1e9
            for m in re.finditer(r"^(Benchmark\w+?)(?:-\d+)?\s+\d+\s+([\d.]+) ns/op", out.stdout, re.M)}


def time_checker(cases: list[Case], label: str, counterexample: bool, timeout: float) -> float:
    """Check every case once; returns the total seconds (parsing excluded)."""
    total = 0.0
    for c in cases:
        t0 = time.perf_counter()
        v = check_operations(c.ops, model=c.model, counterexample=counterexample, timeout=timeout)
        dt = time.perf_counter() - t0
        total += dt
        c.times.setdefault(label, []).append(dt)
        c.verdicts[label] = v
    return total


def _right(cases: list[Case], label: str) -> tuple[int, int, int]:
    right = sum(c.verdicts[label].result == ("ok" if c.expected else "illegal") for c in cases)
    unknown = sum(c.verdicts[label].result == "unknown" for c in cases)
    return right, len(cases) - right - unknown, unknown


def _verdict_line(goal: str, ok: bool) -> str:
    return f"  goal {goal}: {'met' if ok else 'NOT met'}"


def run(args: argparse.Namespace) -> int:
    source = args.porcupine or os.environ.get("PORCUPINE_DIR")
    if not source:
        print("SKIP: no Porcupine checkout: give --porcupine DIR (a work tree or git directory of "
              "github.com/anishathalye/porcupine) or set PORCUPINE_DIR")
        return 0
    try:
        co = Checkout(Path(source))
        t0 = time.perf_counter()
        etcd, kv = load_cases(co)
        parse_s = time.perf_counter() - t0
    except (OSError, subprocess.CalledProcessError) as e:
        print(f"SKIP: cannot read Porcupine's test data under {source}: {e}")
        return 0
    binary = Path(args.porcupine_test_binary) if args.porcupine_test_binary else None
    if binary is not None and not binary.exists():
        print(f"Porcupine timing skipped: {binary} does not exist")
        binary = None
    sizes = [len(c.ops) for c in etcd]
    unknowns = [c.unknown for c in etcd]
    linearizable = sum(c.expected for c in etcd)
    print(f"etcd: {len(etcd)} histories with Porcupine's verdicts ({linearizable} linearizable), "
          f"{min(sizes)}-{max(sizes)} operations, {min(unknowns)}-{max(unknowns)} unknown outcomes each; "
          f"kv: {len(kv)} histories; parsed in {parse_s:.2f} s (not timed below)")
    print(f"load average at start: {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores")
    if binary is None:
        print("Porcupine timing skipped: no --porcupine-test-binary (Porcupine's compiled Go test binary)")

    rounds: list[dict[str, float]] = []
    for r in range(args.rounds):
        row: dict[str, float] = {}
        if binary is not None:
            go = porcupine_times(binary, co, "^BenchmarkEtcdJepsen", args.go_iterations)
            for c in etcd:
                c.times.setdefault("go", []).append(go[c.bench])
            row["go"] = sum(go[c.bench] for c in etcd)
        row["verdict"] = time_checker(etcd, "verdict", False, args.timeout)
        row["counterexample"] = time_checker(etcd, "counterexample", True, args.timeout)
        rounds.append(row)
        parts = [f"{k} {v:.3f} s" for k, v in row.items()]
        ratios = f"; verdict/Porcupine {row['verdict'] / row['go']:.2f}x" if "go" in row else ""
        print(f"round {r + 1}: " + ", ".join(parts) + ratios +
              f"; counterexample/verdict {row['counterexample'] / row['verdict']:.2f}x")

    best = {k: min(row[k] for row in rounds) for k in rounds[0]}
    print("\n1. verdicts on the etcd histories (goal: all right)")
    for label in ("verdict", "counterexample"):
        right, wrong, unknown = _right(etcd, label)
        print(f"  {label:>14}: {right} right, {wrong} wrong, {unknown} unknown of {len(etcd)}")
        for c in etcd:
            if c.verdicts[label].result != ("ok" if c.expected else "illegal"):
                want = "ok" if c.expected else "illegal"
                print(f"    {c.name}: expected {want}, got {c.verdicts[label].result}")
    all_right = _right(etcd, "verdict")[0] == len(etcd) == _right(etcd, "counterexample")[0]
    print(_verdict_line("all right", all_right))

    print(f"\n2. verdict-only time for the {len(etcd)} etcd histories (best of {len(rounds)} rounds)")
    print(f"  this checker: {best['verdict']:.3f} s")
    if "go" in best:
        ratio = best["verdict"] / best["go"]
        per_round = [row["verdict"] / row["go"] for row in rounds]
        median = statistics.median(per_round)
        print(f"  Porcupine (Go, same run): {best['go']:.3f} s")
        listed = ", ".join(f"{x:.2f}" for x in per_round)
        print(f"  ratio: {median:.2f}x, the median of the rounds ({listed}); best against best {ratio:.2f}x")
        met = max(median, ratio) <= GOAL_VERDICT_RATIO
        print(_verdict_line(f"<= {GOAL_VERDICT_RATIO:g}x Porcupine", met))
    slow = sorted(etcd, key=lambda c: -min(c.times["verdict"]))[:5]
    print("  slowest: " + "; ".join(
        f"{c.name} {min(c.times['verdict']) * 1e3:.0f} ms" +
        (f" (Porcupine {min(c.times['go']) * 1e3:.0f} ms)" if "go" in c.times else "") for c in slow))

    print("\n3. with counterexamples")
    cx_ratio = max(best["counterexample"] / best["verdict"],
                   statistics.median(row["counterexample"] / row["verdict"] for row in rounds))
    print(f"  time: {best['counterexample']:.3f} s, {cx_ratio:.2f}x the verdict-only time (the larger of "
          "best against best and the median of the rounds)")
    print(_verdict_line(f"<= {GOAL_COUNTEREXAMPLE_RATIO:g}x the verdict time",
                        cx_ratio <= GOAL_COUNTEREXAMPLE_RATIO))
    bad = [c.verdicts["counterexample"] for c in etcd if c.verdicts["counterexample"].result == "illegal"]
    prefix = [len(v.failed[0].order) for v in bad]
    blocked = [len(v.failed[0].blocked) for v in bad]
    named = [len(v.counterexample) for v in bad]
    if bad:
        print(f"  {len(bad)} counterexamples: longest linearizable prefix {min(prefix)}-{max(prefix)} "
              f"operations (median {statistics.median(prefix):g}); {min(blocked)}-{max(blocked)} "
              f"operations that cannot follow it; {sum(x >= 2 for x in named)} name 2 or more conflicting "
              "operations")
        for v in bad[:3]:
            print(f"    e.g. {v.explain()}")

    print("\n4. kv histories (partitioned by key)")
    for c in kv:
        time_checker([c], "verdict", False, args.timeout)
        time_checker([c], "counterexample", True, args.timeout)
    go_kv = porcupine_times(binary, co, "^BenchmarkKv[0-9]", 1) if binary is not None else {}
    for c in kv:
        v = c.verdicts["verdict"]
        go = f", Porcupine {go_kv[c.bench] * 1e3:.1f} ms" if c.bench in go_kv else ""
        want = "ok" if c.expected else "illegal"
        print(f"  {c.name}: {len(c.ops)} ops, {len(v.partitions)} keys, expected {want}, got {v.result}; "
              f"{c.times['verdict'][-1] * 1e3:.1f} ms{go}; "
              f"with counterexamples {c.verdicts['counterexample'].result} "
              f"{c.times['counterexample'][-1] * 1e3:.1f} ms")
    if go_kv:
        mine = sum(c.times["verdict"][-1] for c in kv)
        theirs = sum(go_kv[c.bench] for c in kv if c.bench in go_kv)
        print(f"  total {mine:.3f} s, Porcupine {theirs:.3f} s: {mine / theirs:.2f}x")
    return 0


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    p.add_argument("--porcupine", default=None, metavar="DIR",
                   help="Porcupine checkout (work tree or git directory); default $PORCUPINE_DIR")
    p.add_argument("--porcupine-test-binary", default=None, metavar="BIN",
                   help="Porcupine's compiled Go test binary for that checkout (its timings)")
    p.add_argument("--rounds", type=int, default=3, help="alternating rounds (default 3)")
    p.add_argument("--go-iterations", type=int, default=3, help="iterations per Go benchmark (default 3)")
    p.add_argument("--timeout", type=float, default=300.0, help="time limit per history, seconds")
    return run(p.parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
