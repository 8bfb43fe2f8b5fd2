"""DescribeUserScramCredentials (API 50): users' SCRAM mechanisms and iteration counts.

Null or empty users means every user. It needs DESCRIBE on the cluster, as in Kafka (anyone
may when no authorizer is configured).
"""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING, Any

from kio.schema.errors import ErrorCode

from broker.authorizer.acl import Operation
from broker.authorizer.checks import authorize_cluster
from broker.broker import RequestContext
from broker.security.scram import MECHANISM_IDS

if TYPE_CHECKING:
    from broker.protocol.requests import DescribeUserScramCredentialsRequest


async def handle(ctx: RequestContext, req: DescribeUserScramCredentialsRequest) -> Any:
    if not authorize_cluster(ctx, Operation.DESCRIBE):
        return ctx.respond(error_code=ErrorCode.cluster_authorization_failed, error_message=None, results=())
    known = ctx.broker.scram.users()
    if not req.users:  # null or empty: every user, as Kafka
        names = list(known)
        counts: Counter[str] = Counter()
    else:
        names = [u.name for u in req.users]
        counts = Counter(names)
    results = []
    for name in dict.fromkeys(names):
        if counts[name] > 1:
            results.append(
                _result(
                    name,
                    ErrorCode.duplicate_resource,
                    f"Cannot describe SCRAM credentials for the same user twice in a single request: {name}",
                )
            )
        elif name not in known:
            results.append(
                _result(
                    name,
                    ErrorCode.resource_not_found,
                    f"Attempt to describe a user credential that does not exist: {name}",
                )
            )
        else:
            results.append(
                {
                    "user": name,
                    "error_code": ErrorCode.none,
                    "error_message": None,
                    "credential_infos": [
                        {"mechanism": MECHANISM_IDS[m], "iterations": i} for m, i in known[name].items()
                    ],
                }
            )
    return ctx.respond(error_code=ErrorCode.none, error_message=None, results=results)


def _result(user: str, error: ErrorCode, message: str) -> dict[str, Any]:
    return {"user": user, "error_code": error, "error_message": message, "credential_infos": ()}
