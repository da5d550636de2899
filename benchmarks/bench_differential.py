"""Benchmark of ``hcc differential lock`` (not a test; prints figures, asserts nothing).

Launches SeaweedFS, starts the JVMs of Hudi's provider once (their start is timed apart), then runs the
differential search over several seeds: schedules per minute once the JVMs are up (the issue's goal: at
least 10 on this 2-core machine), divergences found (and whether each came back when its schedule ran
again), and each node JVM's resident memory at the end (the goal: under 512 MB each).

Run: python benchmarks/bench_differential.py [--examples 40] [--seeds 3] [--hudi-version 1.2.1]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from analyses import lock_differential as ld
from backends.hudi.artifacts import default_version, driver_classpath
from backends.hudi.jvm import LockJvm
from backends.registry import open_endpoint


def main() -> None:
    """Print the figures."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--examples", type=int, default=40)
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--hudi-version", default=default_version())
    args = ap.parse_args()
    driver_classpath(args.hudi_version)  # built once, outside the timings
    with tempfile.TemporaryDirectory() as tmp, open_endpoint("seaweedfs") as ep:
        t = time.monotonic()
        jvm = LockJvm(args.hudi_version, Path(tmp) / "probe.log")
        jvm.start()
        jvm_start = time.monotonic() - t
        jvm.kill()
        print(f"Hudi {args.hudi_version}: a lock-driver JVM starts in {jvm_start:.2f} s")
        for seed in range(args.seeds):
            r = ld.search(ep, version=args.hudi_version, examples=args.examples, seed=seed,
                          log_dir=Path(tmp), shrink_seconds=120)
            rate = 60 * r.examples / r.seconds if r.seconds else 0.0
            found = "none" if r.found is None else (
                f"{len(r.found.divergences)} ({'flaky: did not come back' if r.flaky else 'came back'}): "
                + "; ".join(d.line()[:160] for d in r.found.divergences[:2]))
            print(f"seed {seed}: {r.examples} schedules in {r.seconds:.0f} s = {rate:.1f}/min "
                  f"(JVM starts included: {len(r.jvm_rss_mb)}); JVM RSS MB {r.jvm_rss_mb}; "
                  f"divergences {found}")


if __name__ == "__main__":
    main()
