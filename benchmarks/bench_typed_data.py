"""Benchmark: msgspec against pydantic for the project's plain data -> typed values (issue 35, item 3).

For each library, in fresh subprocesses (``--repeat`` each, the median kept, the two interleaved so a
machine whose load drifts penalises neither):

- its import time, from ``python -X importtime`` (the cumulative microseconds of the modules the import
  statement adds to a bare interpreter's);
- converting a catalogue scenario's parsed TOML into ``model.config.Scenario`` the first time (building
  the library's validator for the dataclasses included: what one ``hcc run`` pays) and again (the
  median of 200 conversions: what a sweep or an explorer's ``[explore]`` table pays per scenario).

Then the ratios pydantic / msgspec.  It also shows what decided the pick beside the times: msgspec
0.22 accepts an undeclared field of a dataclass or a TypedDict without a word (only its own ``Struct``
type can forbid them), so a misspelt scenario key would be silently ignored; pydantic refuses it.

Not a test: timings depend on the machine (the figures it prints are the record, with ``uptime``).
msgspec is not a dependency: install it to compare (``pip install msgspec==0.22.0``), or point
``--msgspec-path`` at a folder holding it (``pip install --target DIR msgspec``).

Run: python benchmarks/bench_typed_data.py [--scenario NAME] [--repeat N] [--msgspec-path DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

IMPORTS = {"msgspec": "import msgspec", "pydantic": "from pydantic import TypeAdapter"}

# one conversion, cold then warm; prints {"cold_ms": ..., "warm_us": ..., "equal": ...}
CONVERT = """
import json, sys, time, timeit
from scenarios.loader import raw_of
from model.config import Scenario
raw = raw_of(sys.argv[2], "lock")
t0 = time.perf_counter()
if sys.argv[1] == "msgspec":
    import msgspec
    def convert(): return msgspec.convert(raw, Scenario)
else:
    from model.typed import convert as typed_convert
    def convert(): return typed_convert(raw, Scenario)
first = convert()
cold = time.perf_counter() - t0
warm = min(timeit.repeat(convert, number=200, repeat=3)) / 200
from scenarios.loader import from_raw
print(json.dumps({"cold_ms": cold * 1e3, "warm_us": warm * 1e6, "equal": first == from_raw(raw)}))
"""

# an undeclared field: does the library refuse it?
UNKNOWN = """
import sys
from scenarios.loader import raw_of
from model.config import Scenario
raw = raw_of(sys.argv[2], "lock")
raw["lock"]["validity_sec"] = 1  # misspelt
try:
    if sys.argv[1] == "msgspec":
        import msgspec
        msgspec.convert(raw, Scenario)
    else:
        from model.typed import convert
        convert(raw, Scenario)
    print("accepted")
except Exception as e:
    print("refused: " + str(e).splitlines()[0])
"""


def _env(msgspec_path: str | None) -> dict[str, str]:
    paths = [str(ROOT), *([msgspec_path] if msgspec_path else [])]
    return {**os.environ, "PYTHONPATH": os.pathsep.join(paths)}


def _run(args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, *args], capture_output=True, text=True, check=True, env=env,
                          cwd=ROOT)


def _imported_us(statement: str, env: dict[str, str]) -> float:
    """Microseconds the top-level imports of ``statement`` take beyond a bare interpreter's."""
    def top_level(stderr: str) -> dict[str, int]:
        out = {}
        for line in stderr.splitlines():
            if line.startswith("import time:") and "|" in line:
                _, cumulative, name = line.split("|")
                if not name.startswith("  ") and cumulative.strip().isdigit():
                    out[name.strip()] = int(cumulative)
        return out

    bare = top_level(_run(["-X", "importtime", "-c", "pass"], env).stderr)
    added = top_level(_run(["-X", "importtime", "-c", statement], env).stderr)
    return float(sum(us for name, us in added.items() if name not in bare))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--scenario", default="rfc91-lost-reply", help="a lock catalogue scenario")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--msgspec-path", help="a folder holding msgspec (pip install --target)")
    args = parser.parse_args()
    env = _env(args.msgspec_path)
    libs = list(IMPORTS)
    imports: dict[str, list[float]] = {lib: [] for lib in libs}
    cold: dict[str, list[float]] = {lib: [] for lib in libs}
    warm: dict[str, list[float]] = {lib: [] for lib in libs}
    equal: dict[str, bool] = {}
    for i in range(args.repeat):
        for lib in libs if i % 2 == 0 else reversed(libs):
            imports[lib].append(_imported_us(IMPORTS[lib], env))
            got = json.loads(_run(["-c", CONVERT, lib, args.scenario], env).stdout)
            cold[lib].append(got["cold_ms"])
            warm[lib].append(got["warm_us"])
            equal[lib] = got["equal"]
    print(f"scenario {args.scenario}, {args.repeat} runs each, medians; {os.uname().nodename}: "
          f"{subprocess.run(['uptime'], capture_output=True, text=True).stdout.strip()}")
    print(f"{'':10} {'import ms':>10} {'first ms':>10} {'again us':>10}  same Scenario  undeclared field")
    med = {lib: (statistics.median(imports[lib]) / 1e3, statistics.median(cold[lib]),
                 statistics.median(warm[lib])) for lib in libs}
    for lib in libs:
        unknown = _run(["-c", UNKNOWN, lib, args.scenario], env).stdout.strip()
        imported, first, again = med[lib]
        print(f"{lib:10} {imported:10.1f} {first:10.1f} {again:10.1f}  {equal[lib]!s:13}  {unknown}")
    ratios = [med["pydantic"][k] / med["msgspec"][k] for k in range(3)]
    print(f"{'pyd/msgs':10} {ratios[0]:10.1f} {ratios[1]:10.1f} {ratios[2]:10.1f}")


if __name__ == "__main__":
    main()
