"""Filesystem and zip I/O for the pure Hudi table reader (:mod:`model.nbcc.timeline_reader`).

A table path may be a table folder (holding ``.hoodie/``), a folder that contains one table, or a
zip of either.  macOS leftovers (``__MACOSX/``, ``.DS_Store``) are skipped.
"""

from __future__ import annotations

import os
import zipfile
from collections.abc import Callable
from pathlib import Path

from model.nbcc.timeline_reader import HudiTable, clean_listing, find_table_root, read_table


def _list_folder(root: Path) -> list[str]:
    out: list[str] = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if d != "__MACOSX"]
        rel = Path(dirpath).relative_to(root).as_posix()
        for f in filenames:
            out.append(f if rel == "." else f"{rel}/{f}")
    return clean_listing(out)


def open_listing(path: str | os.PathLike[str]) -> tuple[list[str], Callable[[str], bytes]]:
    """The whole listing under ``path`` (relative, ``/``-separated) and a function reading a file.

    Raises FileNotFoundError when ``path`` does not exist and ValueError for a bad zip file."""
    p = Path(path)
    if p.is_dir():
        return _list_folder(p), lambda rel: (p / rel).read_bytes()
    if not p.exists():
        raise FileNotFoundError(f"{p}: no such file or directory")
    try:
        zf = zipfile.ZipFile(p)
    except zipfile.BadZipFile as exc:
        raise ValueError(f"{p}: not a folder or a zip file ({exc})") from None
    names = [n for n in zf.namelist() if not n.endswith("/")]
    return clean_listing(names), lambda rel: zf.read(rel)


def load_table(path: str | os.PathLike[str], *, with_metadata: bool = True) -> HudiTable:
    """Read the Hudi table at ``path`` (folder or zip).  ValueError names the path on bad input."""
    return open_table(path, with_metadata=with_metadata)[0]


def open_table(path: str | os.PathLike[str], *,
               with_metadata: bool = True) -> tuple[HudiTable, Callable[[str], bytes], str]:
    """The Hudi table at ``path`` (folder or zip), a function reading a file by its path relative to the
    table's base path (for its data files), and that base path inside ``path`` (``""``: ``path`` itself).
    ValueError names the path on bad input."""
    listing, read = open_listing(path)
    try:
        root = find_table_root(listing)
    except ValueError as exc:
        raise ValueError(f"{path}: {exc}") from None
    prefix = root + "/" if root else ""
    sub = [x[len(prefix) :] for x in listing if x.startswith(prefix)]

    def read_rel(rel: str) -> bytes:
        return read(prefix + rel)

    try:
        return read_table(sub, read_rel, with_metadata=with_metadata), read_rel, root
    except ValueError as exc:
        raise ValueError(f"{path}: {exc}") from None


def table_folder(path: str | os.PathLike[str], root: str, scratch: Path) -> Path:
    """A folder holding the table at ``path`` (for readers that need one, such as hudi-rs): the folder
    itself, or for a zip its table extracted under ``scratch``."""
    p = Path(path)
    if p.is_dir():
        return p / root if root else p
    with zipfile.ZipFile(p) as zf:
        prefix = root + "/" if root else ""
        for name in zf.namelist():
            if name.startswith(prefix) and not name.endswith("/") and clean_listing([name]):
                zf.extract(name, scratch)
    return scratch / root if root else scratch
