"""Errors of ``sluiceway ctl``; each ends the process with its exit code and message.

    CtlError                  any expected failure: message, no traceback
    ├── UsageError            2  bad arguments or input files
    ├── RefusedError          1  the worker answered with an HTTP error (status, its message)
    │   └── UnexpectedAnswer  1  the answer is not what Kafka Connect's REST API sends
    ├── UnreachableError      3  no answer from the worker at a URL
    └── WaitTimeout           4  a connector did not reach a state in time

``client`` is the one place that turns httpx errors and HTTP error answers into these.
"""

from __future__ import annotations

from sluiceway.ctl.exit_codes import ExitCode


class CtlError(Exception):
    exit_code: int = ExitCode.REFUSED


class UsageError(CtlError):
    exit_code = ExitCode.USAGE


class RefusedError(CtlError):
    exit_code = ExitCode.REFUSED

    def __init__(self, message: str, status: int = 0) -> None:
        super().__init__(message)
        self.status = status


class UnexpectedAnswer(RefusedError):
    pass


class UnreachableError(CtlError):
    exit_code = ExitCode.UNREACHABLE


class WaitTimeout(CtlError):
    exit_code = ExitCode.TIMEOUT
