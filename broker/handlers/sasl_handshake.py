"""SaslHandshake (v1): the client picks a SASL mechanism of the listener.

Before authentication the connection's ``SaslSession`` answers (``exchange``); the
entry in ``HANDLERS`` is reached only once a connection is authenticated or on a
listener without SASL, where Kafka answers ILLEGAL_SASL_STATE.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kio.schema.errors import ErrorCode

from broker.broker import RequestContext
from broker.security.sasl import SaslSession

if TYPE_CHECKING:
    from broker.protocol.requests import SaslHandshakeRequest


async def handle(ctx: RequestContext, req: SaslHandshakeRequest) -> Any:
    return ctx.respond(error_code=ErrorCode.illegal_sasl_state, mechanisms=())


def exchange(ctx: RequestContext, req: SaslHandshakeRequest, session: SaslSession) -> tuple[Any, bool]:
    """(response, close the connection after it)."""
    error = session.handshake(req.mechanism)
    return ctx.respond(error_code=error, mechanisms=session.listener.mechanisms), error != ErrorCode.none
