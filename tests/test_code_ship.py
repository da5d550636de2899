"""The code zip shipped to Spark executors (engines.ship) and the batching of sweep runs (engines.spark.deal).

No Spark here: the zip is imported by a Python that sees nothing else of the project
(tests/test_spark_cluster.py runs it on a real cluster).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import pytest

from engines import ship
from engines.spark import deal

REPO = Path(__file__).resolve().parents[1]


def _copy_project(dst: Path) -> Path:
    for package in ship.PACKAGES:
        shutil.copytree(REPO / package, dst / package, ignore=shutil.ignore_patterns("__pycache__"))
    return dst


def test_the_zip_holds_every_package_with_its_data_and_is_cached_by_content(tmp_path: Path) -> None:
    root = _copy_project(tmp_path / "src")
    cache = tmp_path / "cache"
    first = ship.code_zip(root, cache)
    names = zipfile.ZipFile(first).namelist()
    assert {n.split("/")[0] for n in names} == set(ship.PACKAGES)
    assert "engines/cells.py" in names and "scenarios/grids/smoke.toml" in names
    assert not any("__pycache__" in n or n.endswith(".pyc") for n in names)
    assert ship.code_zip(root, cache) == first  # same content: the cached zip
    rebuilt = ship.code_zip(root, tmp_path / "other-cache")
    assert rebuilt.read_bytes() == first.read_bytes()  # deterministic bytes
    (root / "model" / "config.py").write_text((root / "model" / "config.py").read_text() + "\n# changed\n")
    changed = ship.code_zip(root, cache)
    assert changed != first and changed.is_file() and first.is_file()
    assert zipfile.ZipFile(changed).read("model/config.py").endswith(b"# changed\n")


def test_an_unused_old_zip_is_pruned_when_a_new_one_is_built(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    cache.mkdir()
    stale, recent = cache / "hcc-stale.zip", cache / "hcc-recent.zip"
    stale.write_bytes(b"x")
    recent.write_bytes(b"x")
    old = stale.stat().st_mtime - ship.KEEP_UNUSED_S - 60
    os.utime(stale, (old, old))
    ship.code_zip(_copy_project(tmp_path / "src"), cache)
    assert not stale.exists() and recent.exists()


def test_a_folder_without_the_project_is_refused(tmp_path: Path) -> None:
    with pytest.raises(RuntimeError, match="no project packages"):
        ship.code_zip(tmp_path, tmp_path / "cache")


def test_a_python_without_the_project_imports_it_from_the_zip(tmp_path: Path) -> None:
    shipped = ship.code_zip(REPO, tmp_path / "cache")
    # -I: no PYTHONPATH, no user site, no current folder; the zip first on the path as Spark's worker puts it.
    code = (f"import sys; sys.path.insert(0, {str(shipped)!r}); import model.config, engines.ship; "
            "print(model.config.__file__); print(engines.ship.EXECUTOR_REQUIREMENTS)")
    out = subprocess.run([sys.executable, "-I", "-c", code], capture_output=True, text=True, cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines()[0] == f"{shipped}/model/config.py"


def test_executor_requirements_are_the_projects_core_dependencies() -> None:
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    assert sorted(ship.EXECUTOR_REQUIREMENTS) == sorted(project["dependencies"])
    packages = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"]["find"]
    assert sorted(f"{p}*" for p in ship.PACKAGES) == sorted(packages["include"])


@pytest.mark.parametrize("count,batches", [(1, 1), (12, 6), (13, 6), (5, 5), (100, 3)])
def test_deal_puts_every_run_in_exactly_one_batch_round_robin(count: int, batches: int) -> None:
    dealt = deal(count, batches)
    assert len(dealt) == batches and sorted(i for b in dealt for i in b) == list(range(count))
    assert max(map(len, dealt)) - min(map(len, dealt)) <= 1
    assert all(b == list(range(k, count, batches)) for k, b in enumerate(dealt))


class _Context:
    """Does to sys.path what SparkContext.addPyFile does on the driver (inserts the copy at position 1)."""

    def __init__(self) -> None:
        self.added: list[str] = []

    def addPyFile(self, path: str) -> None:  # noqa: N802 - Spark's name
        self.added.append(path)
        sys.path.insert(1, f"/spark-files/{Path(path).name}")


def test_ship_gives_the_zip_to_spark_and_leaves_the_drivers_path(monkeypatch: pytest.MonkeyPatch,
                                                                 tmp_path: Path) -> None:
    monkeypatch.setenv("HCC_CACHE_DIR", str(tmp_path))
    before = list(sys.path)
    sc = _Context()
    shipped = ship.ship(sc, _copy_project(tmp_path / "src"))
    assert sc.added == [str(shipped)] and shipped.parent == tmp_path / "spark-py"
    assert sys.path == before
