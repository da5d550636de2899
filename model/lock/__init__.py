"""The storage-based lock provider (RFC-91): Hudi's provider, its storage clients, the lock file, the
audit log, the variants, the register writer the checkers judge, and the lock's metrics."""
