"""The lock variants: which Hudi release each follows, and the branches where they differ, as data.

The provider (``model/lock/provider.py``) is one piece of code; a variant only
switches its branches.  ``hudi`` is the newest Hudi (release 1.2.0, commit
54cb1a57 of apache/hudi; release 1.2.1 changed nothing on the lock path that is
known, see ``docs/fidelity.md``); ``hudi-1.1`` keeps the behaviour that releases
1.0.2 to 1.1.0 shipped where it moves a verdict.  The other variants are
``hudi`` with one change each; ``pr-13577`` follows a pull request no release has
merged; ``careful-margin`` is a hypothetical holder-side check, not anything Hudi
does.  ``docs/fidelity.md`` cites the Java of every
branch.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Variant:
    """One lock variant: the Hudi release it follows and each branch that differs."""

    name: str
    follows: str  # the Hudi release (or the RFC text) this variant follows
    # LockProviderHeartbeatManager#heartbeatTaskRunner interrupts the writer when a renewal fails (PR #17870).
    interrupt_on_renewal_failure: bool = True
    # The lock clients return THROTTLED for a 429 (PR #18439); before, a 429 fell through to UNKNOWN_ERROR.
    throttled_result: bool = True
    # unlock() retries a throttled expire write (1 s, 2 s, 4 s) with an identity check (PR #18439).
    unlock_throttle_retries: int = 3
    unlock_throttle_base_ms: int = 1_000
    # tryExpireCurrentLock: a 412 (ACQUIRED_BY_OTHERS) is a failed release that unlock() throws (PR #17871);
    # before, the lock was cleared and unlock() returned normally.
    unlock_acquired_by_others_fails: bool = True
    # The RFC's "if the renewal fails past the expiration, stop the heartbeat" (no writer interrupt).
    renewal_stops_past_expiry: bool = False
    # 412-recovery: a lock file naming this provider's own owner id is adopted (owner ids are per provider).
    adopt_own_lock: bool = False
    # The register write carries the lock file's version as a fencing token.
    fenced: bool = False
    # Hypothetical: the writer checks before each write that its lock is valid until validUntil - drift.
    holder_margin_check: bool = False
    # The SDK retries of Hudi's lock clients: off (maxAttempts 1, PR #17869; Azure setMaxRetries(0)) or
    # the SDKs' defaults.
    sdk_retries_s3: int = 0
    sdk_retries_gcs: int = 0
    sdk_retries_azure: int = 0
    # Hudi's AzureStorageLockClient exists (PR #17951, release 1.2.0).
    azure_client: bool = True
    # TransactionManager keeps ``hasLock`` across a failed release and skips lockManager.lock() while it is
    # set ("Lock already acquired, skipping lock acquisition"): the unmerged PR #13577 (60f6c0cd); no
    # release has it.  Without it (every release), each transaction calls lockManager.lock().
    transaction_has_lock_skip: bool = False
    # Hypothetical fix of the shutdown hook (docs/findings/shutdown-hook-releases-while-writing.md): the
    # hook expires the lock only once the writer thread it guards has ended; while the writer runs the
    # lock is left to lapse at validUntil + drift, as after a crash.
    hook_checks_writer: bool = False
    hypothetical: bool = False
    unmerged_pr: int | None = None  # the variant follows a pull request no release has merged

    def sdk_retries(self, flavor: str) -> int:
        """The client retries Hudi's lock client makes on ``flavor`` (s3, gcs or azure) in this variant."""
        return {"gcs": self.sdk_retries_gcs, "azure": self.sdk_retries_azure}.get(flavor, self.sdk_retries_s3)


HUDI = Variant("hudi", "Hudi 1.2.0 (apache/hudi 54cb1a57)")

_VARIANTS = (
    HUDI,
    Variant(
        "hudi-1.1",
        "Hudi 1.0.2 to 1.1.0 (before PRs #17869, #17870, #17871, #18439)",
        interrupt_on_renewal_failure=False,
        throttled_result=False,
        unlock_throttle_retries=0,
        unlock_acquired_by_others_fails=False,
        # The SDKs' defaults: AWS SDK v2 legacy mode (up to 3 retries), google-cloud-storage (6 attempts).
        sdk_retries_s3=3,
        sdk_retries_gcs=5,
        azure_client=False,  # AzureStorageLockClient came with 1.2.0
    ),
    Variant(
        "rfc91-as-written",
        "RFC-91 as written (renewal failing past expiry stops the heartbeat; no interrupt)",
        interrupt_on_renewal_failure=False,
        renewal_stops_past_expiry=True,
    ),
    Variant("fenced", "Hudi 1.2.0 with a fencing token on the protected write", fenced=True),
    Variant("412-recovery", "Hudi 1.2.0, adopting a lock file that names its own owner id",
            adopt_own_lock=True),
    Variant(
        "pr-13577",
        "unmerged PR #13577 on Hudi 1.2.0: TransactionManager#hasLock (60f6c0cd) skips the acquisition "
        "after a failed release",
        transaction_has_lock_skip=True,
        unmerged_pr=13577,
    ),
    Variant(
        "hook-checks-writer",
        "hypothetical: Hudi 1.2.0 whose shutdown hook expires the lock only when the writer thread has ended",
        hook_checks_writer=True,
        hypothetical=True,
    ),
    Variant(
        "careful-margin",
        "hypothetical: Hudi 1.2.0 plus a holder-side check that stops at validUntil - 500 ms",
        holder_margin_check=True,
        hypothetical=True,
    ),
)

VARIANTS: tuple[str, ...] = tuple(v.name for v in _VARIANTS)
_BY_NAME = {v.name: v for v in _VARIANTS}


def variant(name: str) -> Variant:
    """The variant called ``name`` (KeyError for an unknown name; LockConfig.validate names it first)."""
    return _BY_NAME[name]
