"""``kafka-emu report-server``: a local Spark Connect server that stays up between reports.

A report in a fresh local Spark pays for starting a JVM and compiling Spark's code each time
(at 10M events about a sixth of the job); a report sent to a Spark that is already up does
not. This starts pyspark's own Spark Connect server (its wheel carries the server's jar) set up
as the report's local session is: loopback, the UI off, the same heap and JVM flags, the job's
settings as every session's defaults, Spark's log in a file. Then any number of
``kafka-emu report ... --remote sc://HOST:PORT`` runs share it. It runs in the foreground until
Ctrl-C or SIGTERM, which stop the server with it.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import TextIO

from .spark import (ReportError, job_confs, local_confs, local_heap, local_java_options,
                    log_options, require_java, require_pyspark, reserve_heap)

CONNECT_SERVER = "org.apache.spark.sql.connect.service.SparkConnectServer"
START_TIMEOUT_S = 300.0  # a cold JVM on a busy 2-core machine takes tens of seconds


class _Stop(Exception):
    """SIGTERM, turned into an exception so the server is stopped on the way out."""


def _raise_stop(_signum, _frame) -> None:
    raise _Stop


def _port_free(host: str, port: int) -> bool:
    with socket.socket() as s:
        try:
            s.bind((host, port))
        except OSError:
            return False
    return True


def _accepting(host: str, port: int) -> bool:
    try:
        with socket.create_connection((host, port), timeout=1):
            return True
    except OSError:
        return False


def command(host: str, port: int, master: str, log_dir: Path, memory: str | None = None,
            reserve: bool | None = None) -> tuple[list[str], dict]:
    """spark-submit's command line and environment for the server (``memory``, ``reserve``:
    its heap, as for a local report)."""
    import pyspark
    home = Path(pyspark.__file__).parent
    confs = job_confs() | {"spark.app.name": "kafka-emu report-server",
                           "spark.connect.grpc.binding.address": host,
                           "spark.connect.grpc.binding.port": str(port)}
    logging = log_options(log_dir)
    java_options = list(logging)
    if master.startswith("local"):  # (the driver's JVM is the whole Spark)
        heap = local_heap(memory)
        confs |= local_confs(heap)
        java_options = local_java_options(heap, reserve_heap(reserve)) + java_options
    confs["spark.driver.extraJavaOptions"] = " ".join(java_options)
    argv = [str(home / "bin" / "spark-submit"), "--class", CONNECT_SERVER, "--master", master]
    for key, value in confs.items():
        argv += ["--conf", f"{key}={value}"]
    argv.append("spark-internal")
    env = os.environ | {"SPARK_HOME": str(home), "PYSPARK_PYTHON": sys.executable,
                        "SPARK_LOCAL_IP": os.environ.get("SPARK_LOCAL_IP", "127.0.0.1"),
                        "SPARK_SUBMIT_OPTS": " ".join(logging)}
    return argv, env


def serve(host: str, port: int, master: str = "local[*]", log_dir: Path | None = None,
          say: TextIO = sys.stderr, memory: str | None = None,
          reserve: bool | None = None) -> int:
    """Start the server, say where it is, run until stopped; 0 when stopped on request, 1 when
    the port is taken or the server ends (or never starts) on its own. ReportError: pyspark or
    Java missing, or the log directory cannot be written."""
    require_pyspark()
    require_java()
    if not _port_free(host, port):
        say.write(f"kafka-emu report-server: error: {host}:{port} is in use "
                  f"(choose another --port)\n")
        return 1
    log_dir = log_dir or Path(tempfile.mkdtemp(prefix="kafka-emu-report-server-"))
    log = log_dir / "spark.log"
    try:
        argv, env = command(host, port, master, log_dir, memory, reserve)
        out = open(log, "ab")
    except OSError as exc:
        raise ReportError(f"cannot write Spark's log in {log_dir}: {exc.strerror}") from None
    with out:
        # its own process group: Ctrl-C reaches us, and we stop the whole server tree
        proc = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT, env=env,
                                start_new_session=True)
    previous = signal.signal(signal.SIGTERM, _raise_stop)
    try:
        deadline = time.monotonic() + START_TIMEOUT_S
        while not _accepting(host, port):
            if proc.poll() is not None or time.monotonic() > deadline:
                say.write(f"kafka-emu report-server: error: the Spark Connect server did not "
                          f"start (see {log})\n")
                return 1
            time.sleep(0.5)
        say.write(f"kafka-emu report-server: ready on sc://{host}:{port} (master {master}; "
                  f"Spark's log {log}); run: kafka-emu report TRACES --out DIR "
                  f"--remote sc://{host}:{port}\n")
        say.flush()
        proc.wait()
        say.write(f"kafka-emu report-server: error: the Spark Connect server stopped "
                  f"(see {log})\n")
        return 1
    except (KeyboardInterrupt, _Stop):
        say.write("kafka-emu report-server: stopping\n")
        return 0
    finally:
        signal.signal(signal.SIGTERM, previous)
        _stop(proc)


def _stop(proc: subprocess.Popen) -> None:
    if proc.poll() is not None:
        return
    try:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=60)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    except ProcessLookupError:
        pass
