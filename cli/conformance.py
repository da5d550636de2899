"""``hcc conformance BACKEND``: grade a storage backend's conditional writes.

BACKEND is a name (fake-gcs, seaweedfs, ceph, moto, azurite, s3rver, minio;
the server is started and always stopped) or a URL of a running service
(``s3+http://HOST:PORT/BUCKET``, ``gs+http://HOST:PORT/BUCKET``,
``az+http://HOST:PORT/ACCOUNT/CONTAINER``, ``s3://BUCKET``, ``gs://BUCKET``,
``az://CONTAINER``; credentials from the usual environment variables).

Exit status: 0 every property passed, 1 a property failed (or the server could
not start), 2 bad input (the message names the value).
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from backends import registry
from backends.conformance import DEFAULT_CLIENTS, DEFAULT_ROUNDS, run_suite
from backends.launchers.process import LaunchError, Unavailable
from backends.secrets import redact, redact_url


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
    p.add_argument("--json", action="store_true", help="print one JSON object instead of a table")
    p.add_argument("--quiet", action="store_true", help="no progress lines on stderr")
    p.set_defaults(func=run)


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
    log = None if args.quiet or args.json else (lambda msg: print(msg, file=sys.stderr, flush=True))
    try:
        with registry.open_endpoint(args.backend) as ep:
            if args.client and ep.kind != "s3":
                return _bad("--client", args.client,
                            f"only applies to S3 backends ({name} is {ep.kind})")
            if getattr(args, "create_bucket", False):
                with ep.backend("hcc-conformance/") as b:
                    b.ensure_container()
            report = run_suite(name, ep, rounds=args.rounds, clients=args.clients, client=args.client,
                               log=log)
    except Unavailable as e:
        print(f"hcc conformance: {name} unavailable here: {redact(str(e))}", file=sys.stderr)
        return 1
    except LaunchError as e:
        print(f"hcc conformance: {name} did not start: {redact(str(e))}", file=sys.stderr)
        return 1
    print(redact(report.dumps() if args.json else report.table()))
    return 0 if report.passed else 1
