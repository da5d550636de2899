"""``hcc conformance BACKEND``: grade a storage backend's conditional writes.

BACKEND is a name (fake-gcs, seaweedfs, ceph, moto, azurite, s3rver, minio;
the server is started and always stopped) or a URL of a running service
(``s3+http://HOST:PORT/BUCKET``, ``gs+http://HOST:PORT/BUCKET``,
``az+http://HOST:PORT/ACCOUNT/CONTAINER``, ``s3://BUCKET``, ``gs://BUCKET``,
``az://CONTAINER``; credentials from the usual environment variables).

A race that is not linearizable is drawn as an HTML/SVG timeline (one row per client, the
longest linearizable prefix and the writes that cannot follow it marked) under
``--timeline-dir`` (default ``out/conformance``); the table and the JSON name the file.

While it runs, stderr says what it does: the server's start, each property as it starts and
ends with its seconds and the requests that waited out the client timeout, the rounds of a race
(a bar in a terminal).  The JSON has ``seconds`` and ``timeouts`` per property and ``phases``
(seconds of the start and the suite).

Exit status: 0 every property passed, 1 a property failed (or the server could
not start), 2 bad input (the message names the value).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import re
import sys
from pathlib import Path
from typing import Any

from backends import registry
from backends.conformance import DEFAULT_CLIENTS, DEFAULT_ROUNDS, Report, run_suite
from backends.launchers.process import LaunchError, Unavailable
from backends.secrets import redact, redact_url
from cli.options import add_json, add_quiet
from engines.progress import Progress, Steps
from engines.rundir import write_atomic
from reports.linearizability import render_timeline


def register(subparsers: Any) -> None:
    """Add the ``conformance`` subcommand to an argparse subparsers object."""
    p = subparsers.add_parser(
        "conformance",
        help="grade a storage backend's conditional writes (status codes, races, lost replies)",
        description=__doc__.split("\n\n", 1)[1] if __doc__ else None,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("backend", metavar="BACKEND",
                   help=f"one of {', '.join(registry.NAMES)}, or a URL of a running service")
    p.add_argument("--rounds", type=int, default=DEFAULT_ROUNDS,
                   help=f"rounds of each race (default {DEFAULT_ROUNDS})")
    p.add_argument("--clients", type=int, default=DEFAULT_CLIENTS,
                   help=f"racing clients per round (default {DEFAULT_CLIENTS})")
    p.add_argument("--client", choices=("boto3", "minio"), default=None,
                   help="S3 SDK for the status and race properties (default boto3)")
    p.add_argument("--create-bucket", action="store_true",
                   help="create the bucket/container of a URL backend first if it is missing")
    add_json(p, "one JSON object instead of a table")
    add_quiet(p)
    p.add_argument("--timeline-dir", type=Path, default=Path("out/conformance"), metavar="DIR",
                   help="where the timeline of a non-linearizable race is written (default out/conformance)")
    p.set_defaults(func=run)


def write_timelines(report: Report, folder: Path) -> list[Path]:
    """Write the HTML timeline of every non-linearizable race of ``report`` under ``folder`` (atomically)
    and record each path on its property."""
    written = []
    backend = re.sub(r"[^A-Za-z0-9_.-]+", "_", report.backend).strip("_") or "backend"
    for prop in report.properties:
        if prop.verdict is None:
            continue
        path = folder / f"{backend}-{report.run_id}-{prop.name}.html"
        title = f"hcc conformance {report.backend}: {prop.name} not linearizable"
        write_atomic(path, render_timeline(prop.verdict, title))
        prop.timeline = str(path)
        written.append(path)
    return written


def _bad(what: str, value: object, why: str) -> int:
    print(redact(f"hcc conformance: bad {what} {value!r}: {why}"), file=sys.stderr)
    return 2


def run(args: argparse.Namespace) -> int:
    """Run the suite; returns the exit code (0 pass, 1 fail, 2 bad input)."""
    try:
        registry.validate(args.backend)
    except ValueError as e:
        return _bad("backend", args.backend, str(e))
    if args.rounds < 1:
        return _bad("--rounds", args.rounds, "must be at least 1")
    if args.clients < 2:
        return _bad("--clients", args.clients, "must be at least 2")
    name = redact_url(args.backend)  # what outputs may show of the backend
    steps = Steps(f"hcc conformance {name}", quiet=args.quiet)
    bars: dict[str, Progress | None] = {}

    def rounds_done(prop: str, done: int, rounds: int) -> None:
        if prop not in bars:
            bars[prop] = steps.progress(prop, rounds, unit="rounds")
        bar = bars[prop]
        if bar is not None:
            bar.update(done)

    try:
        with contextlib.ExitStack() as stack:
            with steps.part(f"start {name}"):
                ep = stack.enter_context(registry.open_endpoint(args.backend))
            if args.client and ep.kind != "s3":
                return _bad("--client", args.client,
                            f"only applies to S3 backends ({name} is {ep.kind})")
            if getattr(args, "create_bucket", False):
                with ep.backend("hcc-conformance/") as b:
                    b.ensure_container()
            with steps.part("suite"):
                report = run_suite(name, ep, rounds=args.rounds, clients=args.clients, client=args.client,
                                   log=steps.say, rounds_done=rounds_done)
    except Unavailable as e:
        print(f"hcc conformance: {name} unavailable here: {redact(str(e))}", file=sys.stderr)
        return 1
    except LaunchError as e:
        print(f"hcc conformance: {name} did not start: {redact(str(e))}", file=sys.stderr)
        return 1
    folder = getattr(args, "timeline_dir", None)
    if folder is not None:
        try:
            write_timelines(report, folder)
        except OSError as e:
            print(f"hcc conformance: cannot write the timeline under {folder}: {e.strerror or e}",
                  file=sys.stderr)
    if args.json:
        print(redact(json.dumps({**report.to_json(), "phases": steps.seconds}, indent=2)))
    else:
        print(redact(report.table()))
    return 0 if report.passed else 1
