"""Where launched servers keep their logs and data, and where npm packages are installed."""

from __future__ import annotations

import itertools
import os
import time
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]
_counter = itertools.count()


def run_tmp() -> Path:
    """The folder for server logs and data: ``$HCC_RUN_TMP`` or ``runs/tmp/servers`` in the repo."""
    return Path(os.environ.get("HCC_RUN_TMP") or REPO_ROOT / "runs" / "tmp" / "servers")


def server_dir(name: str, base: Path | None = None) -> Path:
    """A new folder for one server instance, or one run's logs (``<base>/<name>-<time>-<pid>-<n>``).

    Unique per process and call, so two harness runs at once never share one.
    """
    stamp = time.strftime("%Y%m%dT%H%M%S")
    d = (base or run_tmp()) / f"{name}-{stamp}-{os.getpid()}-{next(_counter)}"
    d.mkdir(parents=True, exist_ok=True)
    return d


def npm_bin(package: str, script: str) -> Path | None:
    """Path of a script of an npm package installed by backends/install.sh, or None."""
    prefix = Path(os.environ.get("HCC_NPM_PREFIX") or REPO_ROOT / ".cache" / "npm")
    p = prefix / "node_modules" / package / script
    return p if p.is_file() else None
