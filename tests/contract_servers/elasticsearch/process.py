"""The Elasticsearch contract server: a server in its own process."""

from __future__ import annotations

import argparse
import subprocess
import sys
import urllib.request
from typing import TYPE_CHECKING, Any, Self

import orjson

from tests.contract_servers._http import (
    Lifecycle,
    end_process,
    listening_port,
    serve_until_signalled,
)
from tests.contract_servers.elasticsearch.constants import _ROOT
from tests.contract_servers.elasticsearch.server import ElasticsearchContractServer

if TYPE_CHECKING:
    from collections.abc import Sequence


class ElasticsearchContractProcess(Lifecycle):
    """``python -m tests.contract_servers.elasticsearch`` as a child process, so a benchmark's
    server does not share the GIL with the code under test. Faults and observations go
    through ``admin()`` (the ``/_contract/...`` endpoints)."""

    def __init__(
        self,
        port: int = 0,
        *,
        username: str | None = None,
        password: str | None = None,
        api_key: str | None = None,
    ) -> None:
        self._requested_port = port
        self.port = port
        self.username = username
        self.password = password
        self.api_key = api_key
        self.proc: subprocess.Popen[str] | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def command(self) -> list[str]:
        args = [
            sys.executable,
            "-m",
            "tests.contract_servers.elasticsearch",
            "--port",
            str(self._requested_port),
        ]
        if self.username is not None:
            args += ["--username", self.username, "--password", self.password or ""]
        if self.api_key is not None:
            args += ["--api-key", self.api_key]
        return args

    def start(self, timeout: float = 30.0) -> Self:
        self.proc = subprocess.Popen(self.command(), cwd=_ROOT, stdout=subprocess.PIPE, text=True)
        port = listening_port(self.proc, timeout)
        if port is None:
            self.stop()
            raise RuntimeError("the Elasticsearch contract server did not start")
        self.port = port
        # Later ports (a restart on the same one) reuse the port the first start got.
        self._requested_port = port
        return self

    def admin(self, op: str, **payload: Any) -> Any:
        request = urllib.request.Request(
            f"{self.url}/_contract/{op}",
            data=orjson.dumps(payload),
            method="POST",
            headers={"Content-Type": "application/json"},
        )
        with urllib.request.urlopen(request, timeout=30) as response:
            return orjson.loads(response.read())

    def stop(self, timeout: float = 15.0) -> int | None:
        proc, self.proc = self.proc, None
        return None if proc is None else end_process(proc, timeout)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m tests.contract_servers.elasticsearch", description=__doc__
    )
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--username")
    parser.add_argument("--password")
    parser.add_argument("--api-key", help="the encoded key clients send as 'ApiKey <key>'")
    args = parser.parse_args(argv)
    server = ElasticsearchContractServer(
        args.host, args.port, username=args.username, password=args.password, api_key=args.api_key
    ).start()
    try:
        # Not watching stdin: ElasticsearchContractProcess does not pipe it, so it is the parent's own.
        serve_until_signalled(server.port, watch_parent=False)
    finally:
        server.stop()
    return 0
