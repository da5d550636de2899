"""PySpark's JVM and its Python workers die with a SIGKILLed harness.

PySpark starts the JVM with a pipe on its stdin and the JVM (``PythonGatewayServer``) exits at end
of file, which the kernel delivers when the driver dies, however it dies; the workers
(``pyspark.daemon``) exit when the JVM goes.  Nothing of the harness's is needed for that; this
test guards it.  Every process is found by a marker in its environment, which all of them inherit.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from engines.spark import spark_available

REPO = Path(__file__).resolve().parents[1]
DRIVER = """
import sys
from engines.spark import start_session
s = start_session("local[2]")
assert s.sparkContext.parallelize(range(4), 2).map(lambda x: x + 1).collect() == [1, 2, 3, 4]
print("READY", s.sparkContext._gateway.proc.pid, flush=True)
sys.stdin.read()
"""


def _with_marker(marker: str) -> list[int]:
    found = []
    for d in Path("/proc").iterdir():
        if d.name.isdigit() and int(d.name) != os.getpid():
            try:
                if marker.encode() in (d / "environ").read_bytes().split(b"\0"):
                    state = (d / "stat").read_text().rsplit(")", 1)[1].split()[0]
                    if state not in ("Z", "X"):
                        found.append(int(d.name))
            except (OSError, IndexError):
                continue
    return found


@pytest.mark.skipif(spark_available() is not None, reason=str(spark_available()))
def test_the_jvm_and_workers_die_with_a_sigkilled_driver() -> None:
    marker = f"HCC_TEST_MARK={uuid.uuid4().hex}"
    env = {**os.environ, marker.split("=")[0]: marker.split("=")[1],
           "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")])}
    driver = subprocess.Popen([sys.executable, "-c", DRIVER], env=env, stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                              start_new_session=True)
    try:
        line = driver.stdout.readline() if driver.stdout else ""
        assert line.startswith("READY"), line
        jvm = int(line.split()[1])
        assert len(_with_marker(marker)) >= 3  # driver, JVM, at least one worker daemon
        driver.send_signal(signal.SIGKILL)
        driver.wait(timeout=10)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and _with_marker(marker):
            time.sleep(0.5)
        assert jvm not in _with_marker(marker) and _with_marker(marker) == [], "Spark outlived the driver"
    finally:
        for pid in _with_marker(marker):
            os.kill(pid, signal.SIGKILL)
