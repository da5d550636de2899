"""Gate checks as JUnit XML (one test suite per scenario, one test case per check)."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Sequence
from itertools import groupby

from reports.gate import Check


def junit_xml(checks: Sequence[Check]) -> str:
    """A ``<testsuites>`` document; failed checks carry a ``<failure>`` with the reason."""
    root = ET.Element("testsuites", name="hcc gate", tests=str(len(checks)),
                      failures=str(sum(not c.ok for c in checks)))
    for scenario, group in groupby(sorted(checks, key=lambda c: c.scenario), key=lambda c: c.scenario):
        items = list(group)
        suite = ET.SubElement(root, "testsuite", name=scenario, tests=str(len(items)),
                              failures=str(sum(not c.ok for c in items)))
        for c in items:
            case = ET.SubElement(suite, "testcase", classname=f"gate.{scenario}", name=c.name)
            if not c.ok:
                failure = ET.SubElement(case, "failure", message=c.message)
                failure.text = f"baseline {c.baseline}, now {c.now}, change {c.change}, limit {c.limit}"
    return ET.tostring(root, encoding="unicode", xml_declaration=True) + "\n"
