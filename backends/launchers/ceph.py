"""Ceph RADOS Gateway on a throw-away single-node cluster: optional, never required by the default tests.

Needs Debian's ``radosgw ceph-mon ceph-osd ceph-common`` (``backends/install_ceph.sh``).
One monitor, one OSD on ``memstore`` (in memory), no manager, cephx off
(radosgw then needs ``ms mon client mode = secure crc``), pool defaults of
size 1 and 8 PGs, and radosgw's beast frontend on 127.0.0.1.  An S3 user
``hcc`` / ``hcc-secret`` is created.  Start-up takes some 20 seconds.
"""

from __future__ import annotations

import contextlib
import shutil
import subprocess
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

from backends.endpoint import Endpoint
from backends.launchers.process import (
    HOST,
    LaunchError,
    ServerProcess,
    Unavailable,
    http_answers,
    reserve_ports,
    tail,
    which,
)
from backends.launchers.workdir import server_dir

ACCESS, SECRET = "hcc", "hcc-secret"
BINARIES = ("ceph-mon", "ceph-osd", "radosgw", "radosgw-admin", "monmaptool", "ceph-authtool", "ceph")


def _conf(d: Path, fsid: str, mon_port: int, rgw_port: int) -> str:
    return f"""[global]
fsid = {fsid}
mon host = v2:{HOST}:{mon_port}
mon initial members = a
public addr = {HOST}
auth cluster required = none
auth service required = none
auth client required = none
ms mon client mode = secure crc
osd pool default size = 1
osd pool default min size = 1
osd pool default pg num = 8
osd pool default pgp num = 8
mon allow pool size one = true
mon warn on pool no redundancy = false
mon max pg per osd = 1000
mon data avail warn = 1
osd crush chooseleaf type = 0
osd objectstore = memstore
memstore device bytes = 1073741824
mon data = {d}/mon.$id
osd data = {d}/osd.$id
run dir = {d}/run
admin socket = {d}/run/$name.asok
log file = {d}/log/$name.log
pid file = {d}/run/$name.pid
keyring = {d}/keyring
[client.rgw.a]
rgw frontends = beast endpoint={HOST}:{rgw_port}
rgw data = {d}/rgw
"""


def _run(argv: list[str], d: Path, timeout: float = 60) -> str:
    log = d / "log" / "setup.log"
    with open(log, "ab") as f:
        f.write(f"# {' '.join(argv)}\n".encode())
    try:
        p = subprocess.run(argv, cwd=d, capture_output=True, timeout=timeout, stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired as e:
        raise LaunchError(f"ceph setup step timed out after {timeout:g}s: {' '.join(argv)}; "
                          f"logs in {d}/log") from e
    with open(log, "ab") as f:
        f.write(p.stdout + p.stderr)
    if p.returncode != 0:
        raise LaunchError(f"ceph setup step failed ({p.returncode}): {' '.join(argv)}; "
                          f"log {log}:\n{tail(log)}")
    return p.stdout.decode()


@contextlib.contextmanager
def ceph(base: Path | None = None, *, bucket: str = "hcc-conformance",
         ready_timeout_s: float = 90.0) -> Iterator[Endpoint]:
    """Start mon + OSD + radosgw, yield the S3 Endpoint with ``bucket`` created, stop all three."""
    missing = [b for b in BINARIES if which(b) is None]
    if missing:
        raise Unavailable(f"Ceph RGW skipped: {', '.join(missing)} not installed "
                          "(bash backends/install_ceph.sh: radosgw ceph-mon ceph-osd ceph-common)")
    d = server_dir("ceph", base)
    for sub in ("mon.a", "osd.0", "run", "log", "rgw"):
        (d / sub).mkdir()
    fsid = str(uuid.uuid4())
    reservation = reserve_ports(2)  # released when the last daemon stops
    mon_port, rgw_port = reservation.ports
    conf = d / "ceph.conf"
    conf.write_text(_conf(d, fsid, mon_port, rgw_port))
    c = ["-c", str(conf)]
    procs: list[ServerProcess] = []
    try:
        _run(["ceph-authtool", "--create-keyring", str(d / "keyring"), "--gen-key", "-n", "mon.",
              "--cap", "mon", "allow *"], d)
        _run(["monmaptool", "--create", "--addv", "a", f"[v2:{HOST}:{mon_port}]", "--fsid", fsid,
              str(d / "monmap")], d)
        _run(["ceph-mon", *c, "--mkfs", "-i", "a", "--monmap", str(d / "monmap")], d)
        mon = ServerProcess("ceph-mon", ["ceph-mon", *c, "-i", "a", "-f"], d / "log" / "mon.out", cwd=d,
                            scratch=[d / "mon.a"])
        procs.append(mon)
        mon.start()
        deadline = time.monotonic() + ready_timeout_s
        osd_uuid = str(uuid.uuid4())
        osd_id = _run(["ceph", *c, "--connect-timeout", "30", "osd", "new", osd_uuid], d).strip()
        _run(["ceph-osd", *c, "-i", osd_id, "--mkfs", "--osd-uuid", osd_uuid], d)
        osd = ServerProcess("ceph-osd", ["ceph-osd", *c, "-i", osd_id, "-f"], d / "log" / "osd.out", cwd=d,
                            scratch=[d / "osd.0"])
        procs.append(osd)
        osd.start()
        rgw = ServerProcess("radosgw", ["radosgw", *c, "-n", "client.rgw.a", "-f"], d / "log" / "rgw.out",
                            cwd=d)
        procs.append(rgw)
        rgw.start()
        url = f"http://{HOST}:{rgw_port}"
        rgw.wait_ready(lambda: http_answers(url + "/"), max(5.0, deadline - time.monotonic()))
        _run(["radosgw-admin", *c, "user", "create", "--uid", ACCESS, "--display-name", "hcc",
              "--access-key", ACCESS, "--secret", SECRET], d)
        ep = Endpoint("ceph", "s3", url, bucket, ACCESS, SECRET, process=rgw,
                      notes=["Ceph RGW 16 single node (memstore OSD)"])
        ep.backend("hcc/").ensure_container()
        yield ep
    finally:
        for p in reversed(procs):
            p.stop(grace_s=5)
        for sub in ("mon.a", "osd.0", "rgw"):
            shutil.rmtree(d / sub, ignore_errors=True)  # logs stay
        reservation.release()
