"""CreateAcls, DescribeAcls and DeleteAcls: administer the authorizer's ACLs (kafka-acls).

Creating and deleting need CLUSTER ALTER, describing CLUSTER DESCRIBE; without an
authorizer every request fails with SECURITY_DISABLED, as in Kafka.
"""

from __future__ import annotations

from collections import defaultdict
from typing import TYPE_CHECKING, Any

from kio.schema.errors import ErrorCode

from broker.authorizer import Operation, authorize_cluster
from broker.authorizer.acl import AclBinding, InvalidAcl, ResourcePattern, new_binding, new_filter
from broker.broker import RequestContext

if TYPE_CHECKING:
    from broker.protocol.requests import CreateAclsRequest, DeleteAclsRequest, DescribeAclsRequest

_NO_AUTHORIZER = "No Authorizer is configured on the broker"


async def create(ctx: RequestContext, req: CreateAclsRequest) -> Any:
    authorizer = ctx.broker.authorizer
    if authorizer is None:
        return ctx.respond(
            results=[{"error_code": ErrorCode.security_disabled, "error_message": _NO_AUTHORIZER}]
            * len(req.creations)
        )
    if not authorize_cluster(ctx, Operation.ALTER):
        return ctx.respond(
            results=[{"error_code": ErrorCode.cluster_authorization_failed, "error_message": None}]
            * len(req.creations)
        )
    results: list[dict[str, Any]] = []
    valid: list[AclBinding] = []
    for c in req.creations:
        try:
            valid.append(
                new_binding(
                    c.resource_type,
                    c.resource_name,
                    c.resource_pattern_type,
                    c.principal,
                    c.host,
                    c.operation,
                    c.permission_type,
                )
            )
            results.append({"error_code": ErrorCode.none, "error_message": None})
        except InvalidAcl as exc:
            results.append({"error_code": ErrorCode.invalid_request, "error_message": str(exc)})
    try:
        authorizer.create(valid)
    except OSError as exc:
        return ctx.respond(
            results=[{"error_code": ErrorCode.kafka_storage_error, "error_message": str(exc)}]
            * len(req.creations)
        )
    return ctx.respond(results=results)


def _described(acls: list[AclBinding]) -> list[dict[str, Any]]:
    by_pattern: defaultdict[ResourcePattern, list[dict[str, Any]]] = defaultdict(list)
    for a in acls:
        e = a.entry
        by_pattern[a.pattern].append(
            {
                "principal": e.principal,
                "host": e.host,
                "operation": e.operation,
                "permission_type": e.permission,
            }
        )
    return [
        {
            "resource_type": p.resource_type,
            "resource_name": p.name,
            "pattern_type": p.pattern_type,
            "acls": entries,
        }
        for p, entries in by_pattern.items()
    ]


async def describe(ctx: RequestContext, req: DescribeAclsRequest) -> Any:
    authorizer = ctx.broker.authorizer
    if authorizer is None:
        return ctx.respond(error_code=ErrorCode.security_disabled, error_message=_NO_AUTHORIZER, resources=())
    if not authorize_cluster(ctx, Operation.DESCRIBE):
        return ctx.respond(
            error_code=ErrorCode.cluster_authorization_failed, error_message=None, resources=()
        )
    try:
        flt = new_filter(
            req.resource_type_filter,
            req.resource_name_filter,
            req.pattern_type_filter,
            req.principal_filter,
            req.host_filter,
            req.operation,
            req.permission_type,
        )
    except InvalidAcl as exc:
        return ctx.respond(error_code=ErrorCode.invalid_request, error_message=str(exc), resources=())
    return ctx.respond(
        error_code=ErrorCode.none, error_message=None, resources=_described(authorizer.describe(flt))
    )


async def delete(ctx: RequestContext, req: DeleteAclsRequest) -> Any:
    authorizer = ctx.broker.authorizer

    def failed(code: ErrorCode, message: str | None) -> Any:
        return ctx.respond(
            filter_results=[{"error_code": code, "error_message": message, "matching_acls": ()}]
            * len(req.filters)
        )

    if authorizer is None:
        return failed(ErrorCode.security_disabled, _NO_AUTHORIZER)
    if not authorize_cluster(ctx, Operation.ALTER):
        return failed(ErrorCode.cluster_authorization_failed, None)
    filters = []
    for f in req.filters:
        try:
            filters.append(
                new_filter(
                    f.resource_type_filter,
                    f.resource_name_filter,
                    f.pattern_type_filter,
                    f.principal_filter,
                    f.host_filter,
                    f.operation,
                    f.permission_type,
                )
            )
        except InvalidAcl as exc:
            return failed(ErrorCode.invalid_request, str(exc))
    try:
        matched = authorizer.delete(filters)
    except OSError as exc:
        return failed(ErrorCode.kafka_storage_error, str(exc))
    return ctx.respond(
        filter_results=[
            {
                "error_code": ErrorCode.none,
                "error_message": None,
                "matching_acls": [
                    {
                        "error_code": ErrorCode.none,
                        "error_message": None,
                        "resource_type": a.pattern.resource_type,
                        "resource_name": a.pattern.name,
                        "pattern_type": a.pattern.pattern_type,
                        "principal": a.entry.principal,
                        "host": a.entry.host,
                        "operation": a.entry.operation,
                        "permission_type": a.entry.permission,
                    }
                    for a in acls
                ],
            }
            for acls in matched
        ]
    )
