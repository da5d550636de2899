"""Ship the harness's own code to Spark executors, so they need no installed copy of the project.

At session start the driver zips its project packages (the ones it imports, from where it imports
them: a checkout or site-packages) into ``hcc-<hash>.zip``, named by the hash of their content and
cached in a per-user folder (:func:`cache_dir`), and gives it to ``SparkContext.addPyFile``: every
executor's Python puts the zip on its ``sys.path``.  The driver's own ``sys.path`` is left as it was
(``addPyFile`` would put the copy ahead of the driver's sources).

What an executor's Python needs besides: pyspark's own (Spark puts ``pyspark.zip`` and py4j on its
path) and :data:`EXECUTOR_REQUIREMENTS` for sweeps; contention workloads also need the storage
clients of the ``backends`` extra.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import sys
import tempfile
import time
import zipfile
from pathlib import Path
from typing import Any

from backends.hudi.artifacts import cache_root

# The project's top-level packages (pyproject.toml [tool.setuptools.packages.find]).
PACKAGES = ("model", "backends", "scenarios", "reports", "engines", "analyses", "cli")
SUFFIXES = (".py", ".toml")  # code and the package data (scenario catalogues, grids)
# What run_task imports from PyPI (the project's core dependencies); pyspark's own come with Spark.
EXECUTOR_REQUIREMENTS = ("simpy>=4.1,<5", "tomli-w>=1.0", "pydantic>=2.10,<3")
_EPOCH = (1980, 1, 1, 0, 0, 0)  # fixed zip timestamps: the same sources give the same bytes
KEEP_UNUSED_S = 7 * 24 * 3600  # zips not used for this long are deleted when a new one is built


def source_root() -> Path:
    """The folder holding the project packages this process imports (a checkout or site-packages)."""
    return Path(__file__).resolve().parent.parent


def cache_dir() -> Path:
    """Per-user cache of built zips: ``$HCC_CACHE_DIR``, else ``$XDG_CACHE_HOME/hudi-cc-harness``, else
    ``~/.cache/hudi-cc-harness``; the zips live in its ``spark-py`` folder."""
    return cache_root() / "spark-py"


def project_files(root: Path) -> list[tuple[str, Path]]:
    """(name in the zip, file) for every source and data file of the project packages under ``root``."""
    found: list[tuple[str, Path]] = []
    for package in PACKAGES:
        top = root / package
        if not (top / "__init__.py").is_file():
            continue
        for path in top.rglob("*"):
            if path.suffix in SUFFIXES and path.is_file() and "__pycache__" not in path.parts:
                found.append((path.relative_to(root).as_posix(), path))
    return sorted(found)


def code_zip(root: Path | None = None, cache: Path | None = None) -> Path:
    """The zip of the project's code under ``root``, built once per content (cached by its hash)."""
    files = project_files(root or source_root())
    if not any(name.startswith("engines/") for name, _ in files):
        raise RuntimeError(f"no project packages under {root or source_root()}: nothing to ship")
    contents = [(name, path.read_bytes()) for name, path in files]
    digest = hashlib.sha256()
    for name, data in contents:
        digest.update(name.encode() + b"\0" + len(data).to_bytes(8, "big") + data)
    folder = cache or cache_dir()
    target = folder / f"hcc-{digest.hexdigest()[:20]}.zip"
    if target.is_file():
        os.utime(target)  # last used: the pruning below keeps it
        return target
    folder.mkdir(parents=True, exist_ok=True)
    _prune(folder)
    # Written aside and renamed: a concurrent session never reads a half-written zip.
    fd, tmp = tempfile.mkstemp(dir=folder, prefix=".hcc-", suffix=".zip.tmp")
    try:
        with os.fdopen(fd, "wb") as raw, zipfile.ZipFile(raw, "w", zipfile.ZIP_DEFLATED) as z:
            for name, data in contents:
                info = zipfile.ZipInfo(name, _EPOCH)
                info.compress_type = zipfile.ZIP_DEFLATED
                info.external_attr = 0o644 << 16
                z.writestr(info, data)
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return target


def _prune(folder: Path) -> None:
    """Delete zips unused for :data:`KEEP_UNUSED_S` (a running session's zip is touched at its start)."""
    now = time.time()
    for old in folder.glob("hcc-*.zip"):
        with contextlib.suppress(OSError):
            if now - old.stat().st_mtime > KEEP_UNUSED_S:
                old.unlink()


def ship(sc: Any, root: Path | None = None) -> Path:
    """Give the project's code to the executors of SparkContext ``sc``; the driver's ``sys.path`` stays."""
    path = code_zip(root)
    before = list(sys.path)
    sc.addPyFile(str(path))
    sys.path[:] = before
    return path
