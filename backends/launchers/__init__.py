"""Launchers: context managers that start a storage server, yield an Endpoint, and always stop it.

Each launcher takes a work folder (logs and data go there; default
``runs/tmp/servers``), binds to 127.0.0.1 only, waits until the server answers
with a bounded timeout, and raises :class:`LaunchError` pointing at the log
when it does not.  :class:`Unavailable` means the server cannot run here
(missing binary, no Docker engine): a reason to skip, printed by the tests.
"""

from backends.launchers.process import LaunchError, Unavailable

__all__ = ["LaunchError", "Unavailable"]
