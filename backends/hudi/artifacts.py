"""Apache Hudi's own jars, pinned and cached: what the ``hudi`` world runs and ``hcc fidelity`` reads.

``backends/hudi/artifacts.toml`` names, per Hudi version, the Hudi modules (and their ``-sources.jar``
where Maven Central serves one) and the third-party jars the lock driver needs, each with its sha256.
:func:`fetch` downloads a pinned file from Maven Central once into the cache
(``$HCC_CACHE_DIR/maven/``, else ``~/.cache/hudi-cc-harness/maven/``), checks it against its pin (a
mismatch is never kept), and afterwards reads nothing from the network. :func:`driver_classpath` also
compiles the driver (``backends/hudi/driver/``, a few Java files: the rest of the bytecode is Hudi's) with
``javac`` against the pinned jars, once per version and source content.

Every failure is an :class:`ArtifactError` naming the coordinate, the version or the tool
(``java``, ``javac``): the CLI turns it into exit 2.
"""

from __future__ import annotations

import functools
import hashlib
import os
import shutil
import subprocess
import tempfile
import tomllib
import urllib.error
import urllib.request
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

PINS = Path(__file__).with_name("artifacts.toml")
DRIVER_SOURCES = Path(__file__).with_name("driver")
DRIVER_MAIN = "hcc.driver.LockDriver"


class ArtifactError(ValueError):
    """A Hudi artifact that cannot be had: not pinned, not served, a bad checksum, or a missing tool."""


def cache_root() -> Path:
    """The project's per-user cache: ``$HCC_CACHE_DIR``, else ``$XDG_CACHE_HOME/hudi-cc-harness``, else
    ``~/.cache/hudi-cc-harness`` (outside the work tree)."""
    base = os.environ.get("HCC_CACHE_DIR")
    if not base:
        xdg = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
        base = str(Path(xdg) / "hudi-cc-harness")
    return Path(base)


@functools.cache
def pins() -> dict[str, Any]:
    """The parsed ``artifacts.toml``."""
    with PINS.open("rb") as f:
        return tomllib.load(f)


def versions() -> list[str]:
    """The pinned Hudi versions, oldest first."""
    return sorted(pins()["hudi"], key=lambda v: tuple(int(x) for x in v.split(".")))


def default_version() -> str:
    """The newest pinned release, which the ``hudi`` world runs unless told otherwise."""
    return str(pins()["default"])


def check_version(version: str) -> str:
    """``version`` when it is pinned; else ArtifactError naming it and the pinned ones."""
    if version not in pins()["hudi"]:
        raise ArtifactError(f"Hudi version {version!r} is not pinned (pinned: {', '.join(versions())}; "
                            f"{PINS.name} lists each version's jars and checksums)")
    return version


@dataclass(frozen=True)
class Coordinate:
    """``group:artifact:version[:classifier]`` of a jar on Maven Central."""

    group: str
    artifact: str
    version: str
    classifier: str = ""

    @classmethod
    def parse(cls, text: str) -> Coordinate:
        """From ``g:a:v`` or ``g:a:v:classifier``."""
        parts = text.split(":")
        if len(parts) not in (3, 4) or not all(parts):
            raise ArtifactError(f"bad Maven coordinate {text!r} in {PINS.name}: "
                                "expected group:artifact:version")
        return cls(*parts)

    def __str__(self) -> str:
        return ":".join(p for p in (self.group, self.artifact, self.version, self.classifier) if p)

    @property
    def file_name(self) -> str:
        return f"{self.artifact}-{self.version}{'-' + self.classifier if self.classifier else ''}.jar"

    @property
    def path(self) -> str:
        """Its path in a Maven repository."""
        return f"{self.group.replace('.', '/')}/{self.artifact}/{self.version}/{self.file_name}"


def fetch(coord: Coordinate, *, cache: Path | None = None) -> Path:
    """The cached file of a pinned coordinate, downloaded and checked against its sha256 the first time."""
    sha = pins()["sha256"].get(str(coord))
    if sha is None:
        raise ArtifactError(f"{coord} is not pinned in {PINS.name}")
    target = (cache or cache_root()) / "maven" / coord.path
    if target.is_file() and _sha256(target) == sha:
        return target
    url = f"{pins()['repository'].rstrip('/')}/{coord.path}"
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(dir=target.parent, prefix=".part-")
    tmp = Path(tmp_name)
    try:
        with os.fdopen(fd, "wb") as out:
            try:
                with urllib.request.urlopen(url, timeout=120) as resp:
                    shutil.copyfileobj(resp, out)
            except urllib.error.HTTPError as e:
                raise ArtifactError(f"{coord} does not resolve: {url} answered {e.code}") from None
            except (urllib.error.URLError, OSError) as e:
                raise ArtifactError(f"{coord}: cannot download {url}: {e}") from None
        got = _sha256(tmp)
        if got != sha:
            raise ArtifactError(f"{coord}: sha256 {got} is not the pinned {sha} ({url})")
        tmp.replace(target)
    finally:
        tmp.unlink(missing_ok=True)
    return target


def hudi_jar(version: str, artifact: str, *, sources: bool = False) -> Path:
    """The cached jar (or ``-sources.jar``) of the Hudi module ``artifact`` (e.g. ``hudi-client-common``)."""
    check_version(version)
    coord = Coordinate("org.apache.hudi", artifact, version, "sources" if sources else "")
    listed = pins()["hudi"][version]["sources" if sources else "jars"]
    if str(coord) not in listed:
        what = "-sources.jar" if sources else "jar"
        raise ArtifactError(f"{coord}: no {what} of {artifact} is pinned for Hudi {version} "
                            f"(pinned: {', '.join(listed) or 'none: Maven Central serves none here'})")
    return fetch(coord)


def lock_jars(version: str) -> list[Path]:
    """Hudi's lock modules for ``version`` and the driver's third-party jars, fetched."""
    check_version(version)
    coords = [*pins()["hudi"][version]["lock"], *pins()["runtime"]["jars"]]
    return [fetch(Coordinate.parse(c)) for c in coords]


def spark_jars(version: str) -> list[Path]:
    """The jars a PySpark 3.5 session needs to write Hudi ``version`` tables on s3a: Hudi's Spark bundle,
    hadoop-aws and the AWS SDK bundle, fetched. ArtifactError naming the coordinate when no bundle is
    served for ``version``."""
    check_version(version)
    bundle = pins()["hudi"][version].get("spark", [])
    if not bundle:
        raise ArtifactError(f"org.apache.hudi:hudi-spark3.5-bundle_2.12:{version} is not served by the Maven "
                            f"Central reached here: no Hudi Spark bundle for Hudi {version} (pinned: "
                            + ", ".join(v for v in versions() if pins()["hudi"][v].get("spark")) + ")")
    return [fetch(Coordinate.parse(c)) for c in [*bundle, *pins()["spark"]["jars"]]]


def spark_checksums(version: str) -> dict[str, str]:
    """The pinned sha256 of each jar a Hudi Spark writer of ``version`` runs (for ``verdict.json``)."""
    check_version(version)
    coords = [*pins()["hudi"][version].get("spark", []), *pins()["spark"]["jars"]]
    return {c: pins()["sha256"][c] for c in coords}


def require_tool(name: str) -> str:
    """The path of a JDK tool (``java``, ``javac``, ``javap``): on PATH or under ``$JAVA_HOME/bin``."""
    home = os.environ.get("JAVA_HOME")
    found = shutil.which(name, path=str(Path(home) / "bin")) if home else None
    found = found or shutil.which(name)
    if found is None:
        raise ArtifactError(f"{name} not found: Hudi's jars need a JDK 17 or later "
                            f"(Debian: apt-get install openjdk-17-jdk-headless; or set JAVA_HOME)")
    return found


def compiled(name: str, what: str, version: str, root: Path, jars: Sequence[str | Path], marker: str) -> Path:
    """The Java sources under ``root`` compiled with ``javac`` against ``jars``, once per Hudi ``version``
    and sources: ``cache_root()/name/<version>-<digest>`` (built in a temporary folder and moved in, so a
    concurrent build or a crash leaves no half-built folder); ``marker`` is a class file's path in it.
    ArtifactError naming ``what`` when javac fails."""
    sources = sorted(root.rglob("*.java"))
    digest = hashlib.sha256(version.encode())
    for src in sources:
        digest.update(src.relative_to(root).as_posix().encode() + b"\0" + src.read_bytes())
    classes = cache_root() / name / f"{version}-{digest.hexdigest()[:16]}"
    if not (classes / marker).is_file():
        javac = require_tool("javac")
        build = Path(tempfile.mkdtemp(prefix=".build-", dir=_mkdir(classes.parent)))
        try:
            proc = subprocess.run([javac, "-nowarn", "-d", str(build), "-cp", os.pathsep.join(map(str, jars)),
                                   *map(str, sources)], capture_output=True, text=True, check=False)
            if proc.returncode != 0:
                raise ArtifactError(f"javac could not build {what} against Hudi {version}:\n"
                                    f"{proc.stderr.strip()}")
            if not classes.exists():  # another process may have built it meanwhile
                build.replace(classes)
        finally:
            shutil.rmtree(build, ignore_errors=True)
    return classes


def driver_classpath(version: str) -> list[Path]:
    """The lock driver's classpath for Hudi ``version``: its classes (compiled here once) and the jars."""
    jars = lock_jars(version)
    return [compiled("hudi-driver", "the lock driver", version, DRIVER_SOURCES, jars,
                     "hcc/driver/LockDriver.class"), *jars]


def checksums(version: str) -> dict[str, str]:
    """The pinned sha256 of each Hudi jar the ``hudi`` world runs (for ``verdict.json``)."""
    check_version(version)
    return {c: pins()["sha256"][c] for c in pins()["hudi"][version]["lock"]}


def _mkdir(p: Path) -> Path:
    p.mkdir(parents=True, exist_ok=True)
    return p


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def main(argv: list[str] | None = None) -> int:
    """``python -m backends.hudi.artifacts [VERSION ...]``: fetch and build what is pinned (CI's install)."""
    import sys

    try:
        for version in (argv if argv is not None else sys.argv[1:]) or versions():
            check_version(version)
            for artifact in (Coordinate.parse(c).artifact for c in pins()["hudi"][version]["jars"]):
                hudi_jar(version, artifact)
            for c in pins()["hudi"][version]["sources"]:
                fetch(Coordinate.parse(c))
            if pins()["hudi"][version].get("spark"):
                spark_jars(version)
            print(f"Hudi {version}: {len(driver_classpath(version))} classpath entries in {cache_root()}")
    except ArtifactError as e:
        print(f"hudi artifacts: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
