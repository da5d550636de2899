"""The file slices a Hudi release's snapshot reader builds for a table copied to the local file system.

``python -m engines.hudi_spark.fsview TABLE_DIR [--partition P ...] [--hudi-version V ...]`` runs
``fsview/hcc/fsview/FsViewDump.java`` (compiled here with ``javac`` once per release and source) on Hudi
``V``'s own ``hudi-common``, ``hudi-io`` and ``hudi-hadoop-common`` jars (pinned in
``backends/hudi/artifacts.toml``) and PySpark's Hadoop client, Avro and Jackson jars (the hudi env): it
builds ``HoodieTableFileSystemView`` as ``BaseHoodieTableFileIndex#filterFiles`` does with storage listing
and prints, per file group, every slice the view holds, the committed ones and the reader's slices
(``getLatestMergedFileSlicesBeforeOrOn`` at the timeline's last instant), as JSON. A release with no Spark
bundle served (1.2.1) is read this way on a table Hudi 1.2.0's writers wrote.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from backends.hudi.artifacts import ArtifactError, compiled, hudi_jar, require_tool

SOURCES = Path(__file__).with_name("fsview")  # hcc/fsview/FsViewDump.java
MODULES = ("hudi-common", "hudi-io", "hudi-hadoop-common")


def _spark_jars() -> Path:
    """PySpark's ``jars`` folder (its Hadoop client, Avro, Jackson, slf4j)."""
    try:
        import pyspark
    except ImportError:
        raise ArtifactError("the file-slice reader needs PySpark's jars (the hudi env)") from None
    return Path(pyspark.__file__).parent / "jars"


def fsview_classpath(version: str) -> list[str]:
    """The classpath of ``FsViewDump`` on Hudi ``version``, the class compiled if needed (ArtifactError
    naming the coordinate or the tool when something is missing)."""
    jars = [str(hudi_jar(version, m)) for m in MODULES] + [str(_spark_jars() / "*")]
    classes = compiled("hudi-fsview", "FsViewDump", version, SOURCES, jars, "hcc/fsview/FsViewDump.class")
    return [str(classes), *jars]


def file_slices(table: Path, partitions: list[str], version: str, timeout_s: float = 120) -> dict[str, Any]:
    """Hudi ``version``'s view of ``table`` (a local copy): the timeline it uses, the query instant and per
    partition each file group's slices (all, committed) and the reader's slices."""
    cp = fsview_classpath(version)
    proc = subprocess.run([require_tool("java"), "-cp", os.pathsep.join(cp), "hcc.fsview.FsViewDump",
                           str(table.resolve()), *partitions], capture_output=True, text=True,
                          timeout=timeout_s, check=False)
    if proc.returncode != 0:
        # the first line is what a one-line note shows: the JVM's exception, its stack below
        cause = next((ln for ln in proc.stderr.splitlines() if "Exception" in ln), "no exception printed")
        raise RuntimeError(f"FsViewDump on Hudi {version} exited {proc.returncode}: {cause.strip()}\n"
                           f"{proc.stderr[-3000:]}")
    view: dict[str, Any] = json.loads(proc.stdout.strip().splitlines()[-1])
    return {"version": version, **view}


VERSIONS = ("1.2.0", "1.2.1")


def reader_views(table: Path, partitions: list[str]) -> dict[str, Any]:
    """Per release of :data:`VERSIONS`: its view of ``table`` (:func:`file_slices`) and, per partition, the
    file groups its reader reads and those it holds no committed slice of; or the error that stopped it."""
    views: dict[str, Any] = {}
    for version in VERSIONS:
        try:
            view = file_slices(table, partitions, version)
        except (ArtifactError, RuntimeError, subprocess.TimeoutExpired, ValueError) as e:
            views[version] = {"error": str(e)[:2000]}
            continue
        views[version] = {**view, "summary": {
            p: {"read": sorted(s["file_id"] for s in v["reader_slices"]),
                "hidden": sorted(g["file_id"] for g in v["file_groups"] if not g["committed_slices"])}
            for p, v in view["partitions"].items()}}
    return views


def main(argv: list[str] | None = None) -> int:
    """CLI: print each release's view as JSON; exit 2 on a missing jar, tool or table."""
    ap = argparse.ArgumentParser(prog="python -m engines.hudi_spark.fsview",
                                 description=__doc__.split("\n")[0])
    ap.add_argument("table", type=Path, help="a table copied to the local file system (a run's OUT/table)")
    ap.add_argument("--partition", action="append", help="partition path (repeatable; default p0)")
    ap.add_argument("--hudi-version", action="append", help="release (repeatable; default 1.2.0 and 1.2.1)")
    a = ap.parse_args(argv)
    if not (a.table / ".hoodie" / "hoodie.properties").is_file():
        print(f"hudi fsview: table={str(a.table)!r}: no .hoodie/hoodie.properties there", file=sys.stderr)
        return 2
    try:
        views = [file_slices(a.table, a.partition or ["p0"], v) for v in a.hudi_version or VERSIONS]
    except ArtifactError as e:
        print(f"hudi fsview: {e}", file=sys.stderr)
        return 2
    print(json.dumps(views, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
