"""Options several commands share, declared once: where a run goes (``--out``, ``--force``), what it
prints (``--json``, ``--quiet``), overrides (``--set``) and which storage it talks to (``--backend``,
``--prefix``, ``--client``).  Each command passes only what differs (its default folder, its prefix)."""

from __future__ import annotations

import argparse
from typing import Any


def add_out(p: argparse.ArgumentParser, default: str, what: str = "run directory") -> None:
    """``--out`` (a new or empty folder; ``default`` says where it goes otherwise) and ``--force``."""
    p.add_argument("--out", help=f"{what}, new or empty (default: {default})")
    p.add_argument("--force", action="store_true", help=f"replace the {what} in a used --out folder")


def add_json(p: argparse.ArgumentParser, what: str = "one JSON object") -> None:
    """``--json``: print ``what`` instead of text."""
    p.add_argument("--json", action="store_true", help=f"print {what}")


def add_quiet(p: argparse.ArgumentParser) -> None:
    """``--quiet``: no progress lines on stderr."""
    p.add_argument("--quiet", action="store_true", help="no progress lines on stderr")


def add_set(p: argparse.ArgumentParser) -> None:
    """``--set KEY=VALUE`` (repeatable): override a scenario field by its dotted key."""
    p.add_argument("--set", action="append", metavar="KEY=VALUE", help="override a field (dotted key)")


def add_backend(p: argparse.ArgumentParser, names: Any, prefix: str | None = None,
                prefix_help: str = "the run's key prefix on the bucket", urls: bool = True,
                default: str | None = None, required: bool = True) -> None:
    """``--backend`` (a launcher name of ``names``, or with ``urls`` a URL of a running service), and,
    when the command keeps its keys under a prefix, ``--prefix`` (default ``prefix``) and ``--client``.
    ``default``: the server when none is given (then not ``required``)."""
    what = f"one of {', '.join(names)}" + (", or a URL of a running service" if urls else "")
    p.add_argument("--backend", required=required and default is None, default=default,
                   help=what + (f" (default {default})" if default else ""))
    if prefix is not None:
        p.add_argument("--prefix", default=prefix, help=f"{prefix_help} (default {prefix})")
        p.add_argument("--client", choices=("boto3", "minio"), default=None, help="S3 SDK (default boto3)")
