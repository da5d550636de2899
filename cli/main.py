"""The ``hcc`` command line.

Exit status: 0 when a run's verdict equals the scenario's expected verdict,
1 when it does not, 2 for bad input (the message names the field and value),
130 when stopped by SIGINT and 143 by SIGTERM (servers stopped, the run marked interrupted).
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Sequence
from typing import Any

from backends.hudi.artifacts import ArtifactError
from backends.secrets import redact
from engines.lifecycle import EXIT_CODES, STOP_SIGNALS, signal_name, signals_as_exceptions
from model.config import ConfigError

# What a user does -> the modules of its commands.  Each module has register(subparsers) and
# imports heavy optional dependencies (Spark, SDKs, pandas) only when a command runs.
COMMAND_GROUPS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("run and explore", ("cli.run", "cli.timeline", "cli.nbcc", "cli.explore", "cli.explore_lock",
                         "cli.slices", "cli.check_history", "cli.search")),
    ("real storage", ("cli.conformance", "cli.realworld", "cli.replay", "cli.check_audit")),
    ("Spark", ("cli.sweep", "cli.boundary", "cli.contention")),
    ("Hudi itself", ("cli.differential", "cli.fidelity")),
    ("reports and gate", ("cli.report", "cli.gate")),
)


class _GroupedCommands:
    """What each command module's ``register`` sees as the subparsers: ``add_parser`` records the
    command's name and help for the grouped list and registers the command without a help, so that
    argparse does not list it a second time, flat."""

    def __init__(self, sub: Any) -> None:  # what ArgumentParser.add_subparsers returned
        self.sub = sub
        self.rows: list[tuple[str, str]] = []

    def add_parser(self, name: str, **kwargs: object) -> argparse.ArgumentParser:
        help_text = kwargs.pop("help", "")
        self.rows.append((name, str(help_text or "")))
        parser: argparse.ArgumentParser = self.sub.add_parser(name, **kwargs)
        return parser


def build_parser() -> argparse.ArgumentParser:
    """The ``hcc`` parser; ``hcc --help`` lists the commands grouped by what a user does."""
    parser = argparse.ArgumentParser(
        prog="hcc", description="Hudi concurrency-control harness",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND",
                                help="one of the commands below; hcc COMMAND --help for its options")
    lines = []
    for group, modules in COMMAND_GROUPS:
        lines.append(f"{group}:")
        commands = _GroupedCommands(sub)
        for module in modules:
            importlib.import_module(module).register(commands)
        lines += [f"  {name:<14} {help_text}" for name, help_text in commands.rows]
    parser.epilog = "commands:\n" + "\n".join("  " + line for line in lines)
    return parser


# optional dependencies -> the extra that installs them (pyproject.toml)
EXTRAS = {"pandas": "reports", "matplotlib": "reports", "pyspark": "spark", "pyarrow": "spark",
          "boto3": "backends", "google": "backends", "azure": "backends", "moto": "backends",
          "minio": "backends"}


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        with signals_as_exceptions():
            code: int = args.func(args)
        return code
    except (ConfigError, ArtifactError) as e:  # bad input; a Hudi artifact or JDK tool that is missing
        print(f"hcc: error: {redact(str(e))}", file=sys.stderr)
        return 2
    except ModuleNotFoundError as e:
        extra = EXTRAS.get((e.name or "").split(".")[0])
        if extra is None:
            raise
        print(f"hcc: error: {args.command} needs {e.name}, which is missing: "
              f"pip install 'hudi-cc-harness[{extra}]'", file=sys.stderr)
        return 2
    except BrokenPipeError:  # the reader went away (hcc list | head): not an error of ours
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except STOP_SIGNALS as e:
        name = signal_name(e) or "SIGINT"
        print(f"hcc: interrupted by {name}; servers stopped", file=sys.stderr)
        return EXIT_CODES[name]


if __name__ == "__main__":
    sys.exit(main())
