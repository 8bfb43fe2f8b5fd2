"""The exit codes of ``sluiceway ctl`` and how HTTP answers map onto them."""

from __future__ import annotations

from collections.abc import Iterable
from enum import IntEnum


class ExitCode(IntEnum):
    OK = 0
    REFUSED = 1  # the cluster refused the request, or a validation found errors
    USAGE = 2  # argparse's own code for bad arguments; bad input files too
    UNREACHABLE = 3
    TIMEOUT = 4


HELP = """exit codes:
  0  success
  1  the cluster refused the request (an HTTP 4xx or 5xx answer: its error message is
     printed), answered something that is not Kafka Connect's REST API, or `validate`
     / `apply --dry-run` found configuration errors
  2  usage error: bad arguments, or an input file that cannot be read or parsed
  3  cannot reach the worker at --url (connection refused, TLS failure, no answer in time)
  4  a wait (--wait, offsets reset/alter) did not reach the target state within --timeout
"""


def for_http_status(status: int) -> ExitCode:
    """Any successful answer is OK; every error answer is a refusal."""
    return ExitCode.OK if 200 <= status < 300 else ExitCode.REFUSED


def overall(codes: Iterable[int]) -> int:
    """The exit code of a command run on several connectors: the first failure's
    (the others were reported as they happened)."""
    return next((c for c in codes if c != ExitCode.OK), ExitCode.OK)
