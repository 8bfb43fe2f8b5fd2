"""Who may send which REST request: the roles, and which paths need no user at all.

Pure decisions, no I/O, used by the authentication middleware:

- ``/health`` is open, so load balancers can probe a worker without credentials;
- the internal endpoints workers send each other (``PUT``/``POST /connectors/{c}/tasks``,
  ``PUT /connectors/{c}/fence``) are authenticated by the session-key signature the
  herder checks (KIP-507), not by a user: Kafka's ``JaasBasicAuthFilter`` skips them too;
- everything else (``/metrics``, ``/ui``, ``/openapi.json`` included) needs a user, and
  ``role_allows`` decides whether that user's role may use the method.
"""

from __future__ import annotations

import re
from enum import Enum, StrEnum


class Role(StrEnum):
    """A user's role. Kafka's basic-auth extension has no roles (any user may do
    anything), so a user listed without one is an ``ADMIN``."""

    ADMIN = "admin"
    VIEWER = "viewer"

    @classmethod
    def parse(cls, text: str) -> Role:
        """The role named ``text`` (any case); ValueError naming the known roles otherwise."""
        try:
            return cls(text.strip().lower())
        except ValueError:
            known = ", ".join(r.value for r in cls)
            raise ValueError(f"unknown role {text.strip()!r} (known roles: {known})") from None


class Access(Enum):
    """What a request needs before the app sees it."""

    OPEN = "open"  # nothing
    SIGNED = "signed"  # a worker's session-key signature, checked by the herder
    USER = "user"  # an authenticated user whose role allows the method


READ_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})

_OPEN_PATHS = frozenset({"/health"})
# (method, path) of the internal endpoints. Kafka's own task-config endpoint is POST; ours is
# PUT (both are let through: the herder refuses any request without a valid signature).
_SIGNED = (
    (frozenset({"PUT", "POST"}), re.compile(r"/connectors/[^/]+/tasks")),
    (frozenset({"PUT"}), re.compile(r"/connectors/[^/]+/fence")),
)


def required_access(method: str, path: str) -> Access:
    """What a ``method`` request to ``path`` (the decoded ASGI path) needs."""
    # The app serves /x/ as /x (a middleware strips the slash), so decide on the same path.
    normalized = path.rstrip("/") or "/"
    if normalized in _OPEN_PATHS:
        return Access.OPEN
    upper = method.upper()
    for methods, pattern in _SIGNED:
        if upper in methods and pattern.fullmatch(normalized):
            return Access.SIGNED
    return Access.USER


def role_allows(role: Role, method: str) -> bool:
    """Whether a user with ``role`` may send a ``method`` request: admins anything,
    viewers only reads."""
    return role is Role.ADMIN or method.upper() in READ_METHODS
