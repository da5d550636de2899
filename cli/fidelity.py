"""``hcc fidelity``: every Java citation of docs/fidelity.md checked against Hudi's published jars.

Each row's Java citation (``#tryLock`` (319-326), ``HoodieFileGroup#getBaseInstantTime`` ...) is tied to
a class of a released jar (the section's class, the pin tables' files) and checked in one release: from
its ``-sources.jar`` where Maven Central serves one (1.2.0), else from its class files (``javap``: each
method's line span from its LineNumberTable). Per citation: ``ok``; ``moved`` (the member exists but a
cited line is outside it; the released span is shown); ``missing`` (no such class or member);
``unverifiable`` (a module not served here, such as hudi-aws, or not Java in a jar).

An error is a citation that is wrong about the text it cites: its class or member is missing from the
release while its row claims a release and the citation cites this release's text or none in particular;
or its lines are counted in this release's text (the pin tables' ``released`` column, or a row's own
``(1.2.1: 137-147)``) and fall outside the member. A citation of another release's text, or of a pull
request's branch (``released``: no release), is shown with its status and why it is no error: the
document counts each line in one text, and ``--compare OLD NEW`` lists the cited methods whose bytecode
differs between two releases (constant-pool indices, line tables and javac's string-concatenation
differences left out) and counts those that do not.

Exit status: 0 no error; 1 an error (each is listed); 2 bad input (an unknown version, a document whose
citations cannot be tied to a class, no javap where class files must be read).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

from analyses import fidelity
from backends.hudi.artifacts import check_version
from cli.options import add_json
from model.config import ConfigError

DOC = Path(__file__).resolve().parent.parent / "docs" / "fidelity.md"


def register(subparsers: Any) -> None:
    """Add ``fidelity``."""
    p = subparsers.add_parser(
        "fidelity", help="docs/fidelity.md's Java citations checked against Hudi's published jars",
        description=__doc__.split("\n\n", 1)[1] if __doc__ else None,
        formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--hudi-version", metavar="V",
                   help="the release to check in (default: the release most pin-table rows count their "
                        "line numbers in, their 'released' column)")
    p.add_argument("--compare", nargs=2, metavar=("OLD", "NEW"),
                   help="list the cited methods whose bytecode differs between two releases")
    p.add_argument("--doc", metavar="PATH", default=str(DOC), help="the document (default docs/fidelity.md)")
    add_json(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Run the command; returns the exit code."""
    started = time.monotonic()
    try:
        doc = fidelity.read_doc(args.doc)
    except fidelity.DocError as e:
        raise ConfigError("--doc", args.doc, str(e)) from None
    if args.compare:
        old, new = (check_version(v) for v in args.compare)
        changes = fidelity.compare(doc, old, new)
        _print_compare(changes, old, new, args.json)
        return 0
    version = args.hudi_version or doc.default_version()
    if version is None:
        raise ConfigError("--hudi-version", None, f"{args.doc} names no release in a pin table's "
                                                  "'released' column: give --hudi-version")
    check_version(version)
    results = fidelity.check(doc, version)
    bad = fidelity.errors(results)
    if args.json:
        print(json.dumps({"version": version, "doc": args.doc, "counts": fidelity.counts(results),
                          "errors": len(bad), "seconds": round(time.monotonic() - started, 2),
                          "citations": [r.to_json() for r in results]}, indent=2))
    else:
        _print_table(results, version)
        print(f"Hudi {version}: " + ", ".join(f"{n} {s}" for s, n in fidelity.counts(results).items())
              + f"; {len(bad)} error{'s' if len(bad) != 1 else ''} "
              f"({time.monotonic() - started:.1f} s)")
        for r in bad:
            print(f"error: {r.citation.row} {r.citation.text}: {r.status}: {r.reason}", file=sys.stderr)
    return 1 if bad else 0


def _print_table(results: list[fidelity.Result], version: str) -> None:
    section = None
    for r in results:
        c = r.citation
        if c.section != section:
            section = c.section
            print(f"\n## {section}")
            print(f"  {'row':<5} {'status':<13} {'Hudi ' + version + ' span':<18} citation")
        mark = "!" if r.error else " "
        span = ",".join(r.spans) if r.spans else "-"
        text = c.text if len(c.text) <= 70 else c.text[:67] + "..."
        print(f"{mark} {c.row:<5} {r.status:<13} {span:<18} {text}")
        if r.reason and r.status != "ok":
            print(f"  {'':<5} {'':<13} {'':<18}   {r.reason}")
    print()


def _print_compare(changes: list[fidelity.Change], old: str, new: str, as_json: bool) -> None:
    states = {s: [c for c in changes if c.state == s]
              for s in ("changed", "added", "removed", "lines", "same")}
    if as_json:
        print(json.dumps({"old": old, "new": new, "counts": {s: len(v) for s, v in states.items()},
                          "methods": [c.to_json() for c in changes]}, indent=2))
        return
    print(f"cited methods, Hudi {old} -> {new} (normalised bytecode):")
    for state in ("changed", "added", "removed"):
        for c in states[state]:
            print(f"  {state:<8} {c.where.rsplit('.', 1)[-1]}#{c.method}  {c.spans[0] or '-'} -> "
                  f"{c.spans[1] or '-'}  rows {', '.join(c.rows)}"
                  + (f"  ({len(c.diff)} bytecode lines differ)" if c.diff else ""))
    print(f"{len(states['changed'])} changed, {len(states['added'])} only in {new}, "
          f"{len(states['removed'])} only in {old}, {len(states['same']) + len(states['lines'])} unchanged "
          f"({len(states['lines'])} of them at other lines)")
