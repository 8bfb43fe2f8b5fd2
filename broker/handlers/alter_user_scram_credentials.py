"""AlterUserScramCredentials (API 51): add, replace and delete users' SCRAM credentials.

Clients send the salt, iterations and SaltedPassword (``kafka-configs --alter
--add-config 'SCRAM-SHA-256=[password=...]' --entity-type users``, confluent-kafka's
``alter_user_scram_credentials``); the broker keeps StoredKey/ServerKey derived from
it. Checks and messages follow Kafka's ControllerApis/ScramControlManager: a user
altered twice in one request is refused as a whole (DUPLICATE_RESOURCE), unknown
mechanisms are UNSUPPORTED_SASL_MECHANISM, iterations outside 4096..16384 and empty
names or salts UNACCEPTABLE_CREDENTIAL, deleting what does not exist RESOURCE_NOT_FOUND.
It needs ALTER on the cluster, as in Kafka (anyone may when no authorizer is configured).
"""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING, Any

from kio.schema.errors import ErrorCode

from broker.authorizer.acl import Operation
from broker.authorizer.checks import authorize_cluster
from broker.broker import RequestContext
from broker.security.scram import (
    MAX_ITERATIONS,
    MECHANISM_NAMES,
    MIN_ITERATIONS,
    ScramCredential,
    credential_from_salted_password,
)

if TYPE_CHECKING:
    from broker.protocol.requests import AlterUserScramCredentialsRequest


async def handle(ctx: RequestContext, req: AlterUserScramCredentialsRequest) -> Any:
    store = ctx.broker.scram
    counts = Counter([d.name for d in req.deletions] + [u.name for u in req.upsertions])
    if not authorize_cluster(ctx, Operation.ALTER):
        return ctx.respond(
            results=[
                {"user": name, "error_code": ErrorCode.cluster_authorization_failed, "error_message": None}
                for name in counts
            ]
        )
    errors: dict[str, tuple[ErrorCode, str | None]] = {}
    deletions: list[tuple[str, str]] = []
    upserts: list[tuple[str, str, ScramCredential]] = []
    for name, count in counts.items():
        if count > 1:
            errors[name] = (
                ErrorCode.duplicate_resource,
                "A user credential cannot be altered twice in the same request",
            )
    for d in req.deletions:
        if d.name in errors:
            continue
        mechanism = MECHANISM_NAMES.get(d.mechanism)
        if not d.name:
            errors[d.name] = (ErrorCode.unacceptable_credential, "Username must not be empty")
        elif mechanism is None:
            errors[d.name] = (ErrorCode.unsupported_sasl_mechanism, "Unknown SCRAM mechanism")
        elif store.get(d.name, mechanism) is None:
            errors[d.name] = (
                ErrorCode.resource_not_found,
                f"Attempt to delete a user credential that does not exist: {d.name}",
            )
        else:
            deletions.append((d.name, mechanism))
    for u in req.upsertions:
        if u.name in errors:
            continue
        mechanism = MECHANISM_NAMES.get(u.mechanism)
        if not u.name:
            errors[u.name] = (ErrorCode.unacceptable_credential, "Username must not be empty")
        elif mechanism is None:
            errors[u.name] = (ErrorCode.unsupported_sasl_mechanism, "Unknown SCRAM mechanism")
        elif u.iterations < MIN_ITERATIONS:
            errors[u.name] = (
                ErrorCode.unacceptable_credential,
                f"Too few iterations ({MIN_ITERATIONS} at least)",
            )
        elif u.iterations > MAX_ITERATIONS:
            errors[u.name] = (
                ErrorCode.unacceptable_credential,
                f"Too many iterations ({MAX_ITERATIONS} at most)",
            )
        elif not u.salt or not u.salted_password:
            errors[u.name] = (ErrorCode.unacceptable_credential, "Salt and salted password must not be empty")
        else:
            upserts.append(
                (
                    u.name,
                    mechanism,
                    credential_from_salted_password(
                        mechanism, bytes(u.salt), bytes(u.salted_password), u.iterations
                    ),
                )
            )
    if deletions or upserts:
        store.apply(upserts, deletions)
    results = []
    for name in counts:
        code, message = errors.get(name, (ErrorCode.none, None))
        results.append({"user": name, "error_code": code, "error_message": message})
    return ctx.respond(results=results)
