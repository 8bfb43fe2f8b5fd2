"""The one SparkSession of a worker process, shared by every Spark sink task in it.

A JVM holds one SparkContext, so tasks cannot have sessions of their own: the first
task to start creates the session from its connector's ``spark.*`` settings and later
tasks share it (settings that differ are logged, not applied: Spark cannot change a
running context's master). The session lives as long as the process; stopping it when
the last task stops would cost every restart several seconds of JVM start-up.

Before starting the JVM we check for a usable Java ourselves, because PySpark's own
failure ("Java gateway process exited before sending its port number") names no cause.
"""

from __future__ import annotations

import logging
import os
import re
import shutil
import subprocess
import sys
import threading
from collections.abc import Mapping
from typing import TYPE_CHECKING

from connect.api import ConnectException

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

log = logging.getLogger(__name__)

MIN_JAVA = 17  # Spark 4 runs on Java 17 and 21
INSTALL_HINT = (
    "Spark 4 needs Java 17 or newer: install a JDK or JRE (Debian/Ubuntu: "
    "apt-get install openjdk-17-jre-headless) and put it on PATH or set JAVA_HOME"
)

_lock = threading.Lock()
_session: SparkSession | None = None
_settings: dict[str, str] = {}


def java_problem() -> str | None:
    """Why Spark cannot start a JVM here, or None when a Java >= 17 is available."""
    home = os.environ.get("JAVA_HOME")
    java = os.path.join(home, "bin", "java") if home else shutil.which("java")
    if not java or not os.access(java, os.X_OK):
        where = f"JAVA_HOME={home} has no bin/java" if home else "no java on PATH"
        return f"{where}. {INSTALL_HINT}"
    try:
        out = subprocess.run([java, "-version"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"{java} -version failed: {exc}. {INSTALL_HINT}"
    version = _java_major(out.stderr + out.stdout)
    if version is None:
        return (
            f"could not read the version of {java} ({(out.stderr or out.stdout).strip()!r}). {INSTALL_HINT}"
        )
    if version < MIN_JAVA:
        return f"{java} is Java {version}. {INSTALL_HINT}"
    return None


def _java_major(text: str) -> int | None:
    """The major version in ``java -version`` output: '"17.0.15"' -> 17, '"1.8.0_392"' -> 8."""
    m = re.search(r'version "(\d+)(?:\.(\d+))?', text)
    if not m:
        return None
    major = int(m.group(1))
    return int(m.group(2) or 0) if major == 1 else major


def session_settings(master: str, app_name: str, conf: Mapping[str, str]) -> dict[str, str]:
    """The Spark settings a worker's session starts with: ours first, the user's on top."""
    settings = {
        "spark.master": master,
        "spark.app.name": app_name,
        # Arrow turns record batches into DataFrames without a per-row Python/JVM hop.
        "spark.sql.execution.arrow.pyspark.enabled": "true",
        # Python workers (the reader's data source, UDFs) must import this very environment.
        "spark.pyspark.python": sys.executable,
        "spark.pyspark.driver.python": sys.executable,
        # A Connect worker is no interactive driver: no web UI on port 4040 unless asked for.
        "spark.ui.enabled": "false",
        "spark.ui.showConsoleProgress": "false",  # progress bars on a worker's stderr help nobody
        "spark.sql.session.timeZone": "UTC",
        # Connect's Time maps to Spark's TIME type, which Spark 4.1+ writes only when enabled.
        "spark.sql.timeType.enabled": "true",
        # A Python worker (the reader's streaming source) connects back to the JVM within
        # this; Spark's 15 s default failed a streaming query at its start on a loaded
        # 2-core machine ("Python worker failed to connect back", the test suite's CI run).
        "spark.python.authenticate.socketTimeout": "120s",
    }
    if master.startswith("local"):
        # One machine: keep Spark's driver and block manager ports on loopback.
        settings["spark.driver.host"] = "127.0.0.1"
        settings["spark.driver.bindAddress"] = "127.0.0.1"
    settings.update(conf)
    return settings


def shared_session(master: str, app_name: str, conf: Mapping[str, str] | None = None) -> SparkSession:
    """The process's SparkSession, created on first use. Raises ConnectException (with
    what to install or fix) when Java is missing or the session does not start."""
    global _session
    wanted = session_settings(master, app_name, conf or {})
    with _lock:
        if _session is not None and not _stopped(_session):
            differing = {k: v for k, v in wanted.items() if _settings.get(k) != v and k != "spark.app.name"}
            if differing:
                log.warning(
                    "This worker's SparkSession is already running with other settings; %s are not "
                    "applied (one SparkContext per process)",
                    ", ".join(f"{k}={v}" for k, v in sorted(differing.items())),
                )
            return _session
        problem = java_problem()
        if problem is not None:
            raise ConnectException(f"Cannot start Spark: {problem}")
        os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
        if master.startswith("local"):
            # Spark otherwise looks for a non-loopback address of its own and warns, on every
            # start, that the hostname resolves to loopback.
            os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
        try:
            from pyspark.sql import SparkSession
        except ImportError as exc:
            raise ConnectException(
                f"Cannot start Spark: PySpark is not installed ({exc}); pip install 'pyspark>=4'"
            ) from exc
        builder = SparkSession.builder
        for key, value in wanted.items():
            builder = builder.config(key, value)
        try:
            session = builder.getOrCreate()
        except Exception as exc:  # py4j, JVM start-up and config errors all land here
            raise ConnectException(
                f"Cannot start Spark with master {master!r}: {exc}. Check spark.master and the spark.conf.* "
                f"settings; {INSTALL_HINT.lower()}"
            ) from exc
        register_data_source(session)
        _session = session
        _settings.clear()
        _settings.update(wanted)
        return session


def register_data_source(session: SparkSession) -> None:
    """Make ``spark.read.format("sluiceway")`` available in ``session``."""
    from spark_sink.reader import SluicewayDataSource

    session.dataSource.register(SluicewayDataSource)


def _stopped(session: SparkSession) -> bool:
    sc = session.sparkContext
    return sc._jsc is None or bool(sc._jsc.sc().isStopped())
