"""Marks tests by the world they need, so tox environments can select them; Hypothesis profiles.

- ``backends``: tests that launch real storage servers (tests/test_backends_*.py);
- ``spark``: tests that start Spark (tests/test_sweep*.py, tests/test_boundary*.py, tests/test_spark*.py);
- ``hudi``: tests that run Apache Hudi's own jars (tests/test_real_hudi_*.py: JVMs, launched servers).
"""

from __future__ import annotations

import os

import pytest
from hypothesis import settings

# CI runs the same examples every time (a red CI is a regression, not a lucky draw); a developer's
# run explores new examples and keeps failing ones in .hypothesis/.
settings.register_profile("ci", derandomize=True, database=None, print_blob=True)
if os.environ.get("CI"):
    settings.load_profile("ci")

_BY_PREFIX = {
    "test_backends_": "backends",
    "test_sweep": "spark",
    "test_boundary": "spark",
    "test_spark": "spark",
    "test_contention": "spark",
    "test_real_hudi_": "hudi",
}


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        name = item.path.name
        for prefix, marker in _BY_PREFIX.items():
            if name.startswith(prefix):
                item.add_marker(getattr(pytest.mark, marker))
