"""What a connection must do before its requests reach the handlers, and who it is.

``ConnectionSecurity`` is made per accepted connection from its listener's
``ListenerSecurity``. On SSL listeners the principal is the client certificate's
subject DN (or ANONYMOUS without one); on SASL listeners, every request but
ApiVersions goes to ``authenticate`` until the SASL exchange completes, and the
principal is the SASL user; on PLAINTEXT listeners nothing is asked.
"""

from __future__ import annotations

from typing import Any

from broker.broker import ANONYMOUS, RequestContext
from broker.handlers import sasl_authenticate, sasl_handshake
from broker.protocol.codec import ProtocolError
from broker.protocol.versions import ApiKey
from broker.security.listeners import ListenerSecurity
from broker.security.sasl import SaslSession
from broker.security.scram_store import ScramStore
from broker.security.tls import certificate_principal


class AuthenticationRequired(ProtocolError):
    """A request other than ApiVersions/SaslHandshake/SaslAuthenticate before SASL
    authentication completed: Kafka closes such connections."""


class ConnectionSecurity:
    """The listener, principal and (on SASL listeners) SASL state of one connection."""

    def __init__(self, listener: ListenerSecurity, store: ScramStore, ssl_object: Any = None) -> None:
        self.listener = listener.name
        self.principal = ANONYMOUS
        if listener.protocol == "SSL":
            self.principal = certificate_principal(ssl_object) or ANONYMOUS
        self._sasl = SaslSession(listener, store) if listener.sasl else None

    @property
    def authenticated(self) -> bool:
        return self._sasl is None or self._sasl.complete

    def passes(self, api_key: int) -> bool:
        """Whether a request goes to the handlers as usual (else to ``authenticate``)."""
        return self.authenticated or api_key == ApiKey.API_VERSIONS

    def authenticate(self, ctx: RequestContext, req: Any) -> tuple[Any, bool]:
        """The response to a SASL request before authentication, and whether to close the
        connection after writing it; raises ``AuthenticationRequired`` for anything else."""
        session = self._sasl
        assert session is not None
        if ctx.api_key == ApiKey.SASL_HANDSHAKE:
            response, close = sasl_handshake.exchange(ctx, req, session)
        elif ctx.api_key == ApiKey.SASL_AUTHENTICATE:
            response, close = sasl_authenticate.exchange(ctx, req, session)
        else:
            raise AuthenticationRequired(
                f"{ApiKey(ctx.api_key).name} request before SASL authentication on listener {self.listener}"
            )
        if session.complete and session.principal is not None:
            self.principal = session.principal
        return response, close
