"""The client policy (``model/runtime/client.py``) applied to a backend called directly, with real sleeps.

The runtime kernel retries inside every world; code that talks to a backend
outside a run (the conformance suite, benchmarks, tests) uses :func:`call`.
"""

from __future__ import annotations

import time

from backends.base import Backend
from model.runtime.client import Call, RetryPolicy
from model.runtime.effects import StorageEffect, StoreResult


def call(backend: Backend, effect: StorageEffect, policy: RetryPolicy) -> StoreResult:
    """Perform ``effect`` on ``backend``, retrying as ``policy`` says; the result counts the attempts."""
    c = Call(policy, effect)
    while (backoff := c.after(backend.perform(effect))) is not None:
        time.sleep(backoff / 1000)
    assert c.result is not None
    return c.result
