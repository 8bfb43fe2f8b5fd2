"""SaslAuthenticate (v0-2): one token of the chosen mechanism's exchange.

As with SaslHandshake, the connection's ``SaslSession`` answers before authentication;
``handle`` (in ``HANDLERS``) is reached once authenticated or without SASL, and answers
ILLEGAL_SASL_STATE (re-authentication, KIP-368, is not supported).
"""

from __future__ import annotations

import datetime as dt
from typing import TYPE_CHECKING, Any

from kio.schema.errors import ErrorCode

from broker.broker import RequestContext
from broker.security.sasl import SaslSession

if TYPE_CHECKING:
    from broker.protocol.requests import SaslAuthenticateRequest


async def handle(ctx: RequestContext, req: SaslAuthenticateRequest) -> Any:
    return _respond(
        ctx,
        ErrorCode.illegal_sasl_state,
        "SaslAuthenticate outside of a SASL handshake is not supported",
        b"",
    )


def exchange(ctx: RequestContext, req: SaslAuthenticateRequest, session: SaslSession) -> tuple[Any, bool]:
    """(response, close the connection after it)."""
    step = session.authenticate(bytes(req.auth_bytes))
    return _respond(ctx, step.error_code, step.error_message, step.auth_bytes), step.close


def _respond(ctx: RequestContext, error: ErrorCode, message: str | None, auth_bytes: bytes) -> Any:
    fields: dict[str, Any] = {"error_code": error, "error_message": message, "auth_bytes": auth_bytes}
    if ctx.api_version >= 1:
        fields["session_lifetime"] = dt.timedelta(0)  # no re-authentication
    return ctx.respond(**fields)
