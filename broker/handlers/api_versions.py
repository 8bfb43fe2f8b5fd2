"""ApiVersions: the table of implemented versions (cached per request version).

An unsupported ApiVersions version is answered by the connection layer with a
v0 body carrying UNSUPPORTED_VERSION (see ``unsupported_version_response``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kio.schema.errors import ErrorCode

from broker.broker import RequestContext
from broker.protocol.build import build
from broker.protocol.codec import encode_response, response_class
from broker.protocol.versions import ADVERTISED_VERSIONS, ApiKey

if TYPE_CHECKING:
    from broker.protocol.requests import ApiVersionsRequest


def _table() -> list[dict[str, int]]:
    return [
        {"api_key": k, "min_version": lo, "max_version": hi}
        for k, (lo, hi) in sorted(ADVERTISED_VERSIONS.items())
    ]


async def handle(ctx: RequestContext, req: ApiVersionsRequest) -> Any:
    return ctx.broker.cached(("api_versions", ctx.api_version), lambda: ctx.respond(api_keys=_table()))


def unsupported_version_response(correlation_id: int) -> bytes:
    """Kafka's answer to an ApiVersions version it does not know: a v0 body with error 35
    and the supported range, which clients use to retry at a version we speak."""
    body = build(
        response_class(ApiKey.API_VERSIONS, 0), error_code=ErrorCode.unsupported_version, api_keys=_table()
    )
    return encode_response(correlation_id, body)
