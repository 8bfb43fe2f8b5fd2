"""Throwaway database servers for tests and benchmarks: PostgreSQL and MariaDB.

Each server gets its own data directory under a fresh temporary directory, listens on
an ephemeral port on 127.0.0.1, runs with the settings its test needs (PostgreSQL with
``wal_level=logical`` for CDC) and is removed when stopped. Nothing is shared with a
server the machine may already run. ``make test`` installs the binaries (Debian's
``postgresql`` and ``mariadb-server``) where they are missing.

Database servers refuse to run as root, so under root the server runs as the
``postgres`` / ``mysql`` system user (which the Debian packages create).
"""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping
from pathlib import Path

from tests.support import free_port, terminate

# Stops a server when the process that started it dies without cleaning up (a test run
# killed by a timeout, say): it waits for its stdin, a pipe only that process holds, to
# close, then runs the stop command and removes the server's directory.
_WATCHDOG = """
import shutil, subprocess, sys
sys.stdin.read()
subprocess.run(sys.argv[1:-1], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=60)
shutil.rmtree(sys.argv[-1], ignore_errors=True)
"""


def _watchdog(stop: list[str], directory: Path) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-c", _WATCHDOG, *stop, str(directory)],
        stdin=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,  # a Ctrl-C meant for the tests must not stop it first
    )


class ServerUnavailable(RuntimeError):
    """The binaries are not installed (``make test`` installs them)."""


def _run_as(user: str) -> list[str]:
    """The command prefix that runs a server as ``user`` when we are root."""
    if os.geteuid() != 0:
        return []
    try:
        pwd.getpwnam(user)
    except KeyError:
        raise ServerUnavailable(
            f"running as root and there is no {user!r} user to run the server as"
        ) from None
    return ["runuser", "-u", user, "--"]


def _own(path: Path, user: str) -> None:
    if os.geteuid() == 0:
        entry = pwd.getpwnam(user)
        for p in [path, *path.rglob("*")]:
            os.chown(p, entry.pw_uid, entry.pw_gid)


def _wait_port(port: int, timeout: float, proc: subprocess.Popen[bytes] | None, log: Path) -> None:
    import socket

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc is not None and proc.poll() is not None:
            raise RuntimeError(
                f"the server exited with {proc.returncode}:\n{log.read_text(errors='replace')[-3000:]}"
            )
        with socket.socket() as s:
            s.settimeout(0.2)
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.05)
    raise RuntimeError(
        f"the server did not listen on {port} in {timeout:.0f} s:\n{log.read_text(errors='replace')[-3000:]}"
    )


def _release(guard: subprocess.Popen[bytes] | None) -> None:
    """The server is gone already: let its watchdog finish (its stop command finds nothing)."""
    if guard is not None and guard.stdin is not None:
        guard.stdin.close()
        guard.wait(70)


def postgres_bin(name: str) -> str:
    """A PostgreSQL server binary (Debian keeps them out of PATH, per major version)."""
    found = shutil.which(name)
    if found:
        return found
    candidates = sorted(
        glob.glob(f"/usr/lib/postgresql/*/bin/{name}"),
        key=lambda p: int(p.split("/")[4]) if p.split("/")[4].isdigit() else 0,
    )
    if not candidates:
        raise ServerUnavailable(
            f"PostgreSQL's {name} is not installed (make test installs Debian's postgresql)"
        )
    return candidates[-1]


class PostgresServer:
    """A throwaway PostgreSQL cluster (initdb), trust authentication, user ``postgres``.

    ``settings`` go into postgresql.conf; logical replication is on by default.
    """

    USER = "postgres"

    def __init__(self, settings: Mapping[str, str] | None = None) -> None:
        self.settings = {
            "wal_level": "logical",
            "max_replication_slots": "20",
            "max_wal_senders": "20",
            "fsync": "off",  # throwaway data: durability against power loss is not under test
            "synchronous_commit": "off",
            "full_page_writes": "off",
            **(settings or {}),
        }
        self.port = free_port()
        self.dir = Path(tempfile.mkdtemp(prefix="sluiceway-pg-"))
        self.data = self.dir / "data"
        self.log = self.dir / "server.log"
        self._prefix = _run_as(self.USER)
        self._initialised = False
        self._guard: subprocess.Popen[bytes] | None = None

    @property
    def host(self) -> str:
        return "127.0.0.1"

    def url(self, database: str = "postgres", driver: str = "postgresql+psycopg") -> str:
        """A SQLAlchemy URL (``driver`` ``postgresql+psycopg``, psycopg 3)."""
        return f"{driver}://{self.USER}@127.0.0.1:{self.port}/{database}"

    def dsn(self, database: str = "postgres") -> str:
        """A libpq connection string (psycopg / psycopg2)."""
        return f"host=127.0.0.1 port={self.port} user={self.USER} dbname={database}"

    def _pg(self, *args: str, timeout: float = 60) -> None:
        subprocess.run(
            [*self._prefix, *args],
            check=True,
            timeout=timeout,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )

    def start(self) -> PostgresServer:
        if not self._initialised:
            os.chmod(self.dir, 0o755)
            _own(self.dir, self.USER)
            initdb = postgres_bin("initdb")
            self._pg(
                initdb,
                "-D",
                str(self.data),
                "-A",
                "trust",
                "-U",
                self.USER,
                "-E",
                "UTF8",
                "--no-sync",
                "--locale=C",
            )
            conf = {
                **self.settings,
                "port": str(self.port),
                "listen_addresses": "'127.0.0.1'",
                "unix_socket_directories": f"'{self.dir}'",
                "max_connections": "100",
            }
            with open(self.data / "postgresql.conf", "a") as f:
                f.write("".join(f"{k} = {v}\n" for k, v in conf.items()))
            with open(self.data / "pg_hba.conf", "a") as f:
                f.write("host replication all 127.0.0.1/32 trust\n")
            self._initialised = True
        self._pg(postgres_bin("pg_ctl"), "-D", str(self.data), "-l", str(self.log), "-w", "-t", "60", "start")
        if self._guard is None:
            stop = [*self._prefix, postgres_bin("pg_ctl"), "-D", str(self.data), "-m", "immediate", "stop"]
            self._guard = _watchdog(stop, self.dir)
        return self

    def stop(self, mode: str = "fast") -> None:
        """``fast`` (clean), or ``immediate`` (like a crash: recovery on the next start)."""
        if self._initialised and (self.data / "postmaster.pid").exists():
            self._pg(postgres_bin("pg_ctl"), "-D", str(self.data), "-m", mode, "-w", "stop")

    def restart(self, mode: str = "fast") -> None:
        self.stop(mode)
        self.start()

    def remove(self) -> None:
        try:
            self.stop("immediate")
        finally:
            shutil.rmtree(self.dir, ignore_errors=True)
            _release(self._guard)

    def execute(self, sql: str, database: str = "postgres") -> None:
        """Run ``sql`` in autocommit (CREATE DATABASE cannot run in a transaction)."""
        import psycopg

        with psycopg.connect(self.dsn(database), autocommit=True) as conn:
            conn.execute(sql)  # type: ignore[arg-type]

    def __enter__(self) -> PostgresServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.remove()


def mysql_execute(port: int, sql: str, database: str | None = None) -> None:
    """``sql`` as root without a password on the MySQL or MariaDB server at ``port``."""
    import pymysql

    conn = pymysql.connect(host="127.0.0.1", port=port, user="root", database=database, autocommit=True)
    try:
        with conn.cursor() as cur:
            cur.execute(sql)
    finally:
        conn.close()


class MariaDBServer:
    """A throwaway MariaDB server (mariadb-install-db), user ``root`` without a password.

    ``settings`` are extra server options (``{"log-bin": "mysql-bin", "binlog-format":
    "ROW", "server-id": "1"}`` for CDC); without ``log-bin`` the binlog stays off.
    """

    USER = "mysql"

    def __init__(self, settings: Mapping[str, str] | None = None) -> None:
        self.settings = dict(settings or {})
        self.port = free_port()
        self.dir = Path(tempfile.mkdtemp(prefix="sluiceway-maria-"))
        self.data = self.dir / "data"
        self.log = self.dir / "server.log"
        self.socket = self.dir / "mysqld.sock"
        # mariadbd drops to --user itself when started as root (and signals reach it directly).
        self._user = [f"--user={self.USER}"] if os.geteuid() == 0 else []
        self.proc: subprocess.Popen[bytes] | None = None
        self._initialised = False
        self._guards: list[subprocess.Popen[bytes]] = []

    def url(self, database: str = "test", driver: str = "mysql+pymysql") -> str:
        return f"{driver}://root@127.0.0.1:{self.port}/{database}"

    def start(self) -> MariaDBServer:
        server = shutil.which("mariadbd") or (
            "/usr/sbin/mariadbd" if os.path.exists("/usr/sbin/mariadbd") else None
        )
        install = shutil.which("mariadb-install-db") or shutil.which("mysql_install_db")
        if server is None or install is None:
            raise ServerUnavailable("MariaDB is not installed (make test installs Debian's mariadb-server)")
        if not self._initialised:
            os.chmod(self.dir, 0o755)
            _own(self.dir, self.USER)
            subprocess.run(
                [
                    install,
                    "--no-defaults",
                    *self._user,
                    f"--datadir={self.data}",
                    "--auth-root-authentication-method=normal",
                    "--skip-test-db",
                ],
                check=True,
                timeout=120,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE,
            )
            self._initialised = True
        with open(self.log, "ab") as log:
            self.proc = subprocess.Popen(
                [
                    server,
                    "--no-defaults",
                    *self._user,
                    f"--datadir={self.data}",
                    f"--port={self.port}",
                    "--bind-address=127.0.0.1",
                    f"--socket={self.socket}",
                    f"--pid-file={self.dir / 'mysqld.pid'}",
                    "--skip-name-resolve",
                    "--innodb-flush-log-at-trx-commit=0",
                    "--innodb-buffer-pool-size=64M",
                    *([] if "log-bin" in self.settings else ["--skip-log-bin"]),
                    *(f"--{key}={value}" for key, value in self.settings.items()),
                ],
                stdout=log,
                stderr=log,
            )
        self._guards.append(_watchdog(["kill", "-9", str(self.proc.pid)], self.dir))
        _wait_port(self.port, 60, self.proc, self.log)
        self.execute("CREATE DATABASE IF NOT EXISTS test")
        return self

    def execute(self, sql: str, database: str | None = None) -> None:
        mysql_execute(self.port, sql, database)

    def stop(self) -> None:
        if self.proc is not None:
            terminate(self.proc)

    def restart(self) -> None:
        """Stop and start again on the same port and data (a server restart to ride out)."""
        self.stop()
        self.start()

    def remove(self) -> None:
        try:
            self.stop()
        finally:
            shutil.rmtree(self.dir, ignore_errors=True)
            for guard in self._guards:
                _release(guard)

    def __enter__(self) -> MariaDBServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.remove()
