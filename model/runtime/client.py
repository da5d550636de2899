"""The storage client's policy: which answers are retried, how long it backs off, what is ambiguous.

One policy for every world: the simulated store and every real backend make exactly
one attempt per request, and the runtime kernel (or :func:`backends.client.call`
for code that talks to a backend directly) retries according to this policy, the
way an SDK's retry layer would:

- retried: the answers whose outcome the client cannot know or that ask it to come
  back (timeout / no answer, 409 ConditionalRequestConflict, 429, 5xx), up to
  ``retries`` times, after ``backoff_ms * attempt`` milliseconds;
- ambiguous: a later answer of a *write* whose earlier attempt had no answer at all
  (a timeout: the request may have been applied), so a 412 may be the client's own
  earlier write.  A 409/429/5xx answer is the server refusing the request.
"""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass, replace

from model.explorable import Keyer
from model.runtime.effects import Outcome, StorageEffect, StoreResult
from model.runtime.objectstore import is_write


@dataclass(frozen=True)
class RetryPolicy:
    """``retries`` extra attempts of unknown outcomes, ``backoff_ms`` x attempt apart."""

    retries: int = 0
    backoff_ms: int = 0

    def __post_init__(self) -> None:
        if self.retries < 0:
            raise ValueError(f"retries = {self.retries!r}: must be >= 0")
        if self.backoff_ms < 0:
            raise ValueError(f"backoff_ms = {self.backoff_ms!r}: must be >= 0")


class Call:
    """The client's state across the attempts of one request.

    Feed each attempt's answer to :meth:`after`; it returns the backoff in ms
    before the next attempt, or None when :attr:`result` is final.
    """

    def __init__(self, policy: RetryPolicy, effect: StorageEffect) -> None:
        self.policy = policy
        self.effect = effect
        self.attempts = 0
        self.ambiguous = False
        self.result: StoreResult | None = None

    def __explore_state__(self, k: Keyer) -> Hashable:
        """The policy, the request, the attempts so far and what they left."""
        return (k.value(self.policy), k.value(self.effect), self.attempts, self.ambiguous,
                k.value(self.result))

    @staticmethod
    def first_is_final(policy: RetryPolicy, answer: StoreResult) -> bool:
        """True when a call's first answer is its result as it stands (no retry, nothing to add): the
        common case, in which the kernel makes no Call at all."""
        if policy.retries and answer.outcome.unknown:
            return False
        return answer.attempts == 1 and not answer.ambiguous

    def after(self, answer: StoreResult) -> int | None:
        """Account one attempt's answer: the backoff before a retry, or None (then :attr:`result` is set)."""
        self.attempts += 1
        if self.attempts <= self.policy.retries and answer.outcome.unknown:
            self.ambiguous = self.ambiguous or (answer.outcome is Outcome.TIMEOUT and is_write(self.effect))
            return self.policy.backoff_ms * self.attempts
        if self.attempts == answer.attempts and self.ambiguous == answer.ambiguous:
            self.result = answer  # the common case: one attempt, nothing to add
        else:
            self.result = replace(answer, attempts=self.attempts, ambiguous=self.ambiguous)
        return None
