"""Cross-origin access to the REST API: Kafka Connect's ``access.control.allow.origin`` and
``access.control.allow.methods``, with the defaults of the Jetty ``CrossOriginFilter``
Kafka Connect installs, served by Starlette's ``CORSMiddleware``.

- ``access.control.allow.origin`` empty (the default): no CORS headers, browsers keep
  pages of other origins out; ``*``: any origin; otherwise a comma list of origins, where
  ``*`` inside an entry matches any characters (``https://*.example.com``), as in Jetty.
- ``access.control.allow.methods`` empty: ``GET,POST,HEAD`` (Jetty's default).
- Allowed request headers are Jetty's defaults plus ``Authorization``, so a page may log
  in when authentication is on; credentials are allowed (Jetty's default); preflight
  answers are cached 30 minutes (Jetty's default).

The middleware sits outside authentication, so a preflight (which never carries
credentials) is answered without any.
"""

from __future__ import annotations

import re
from typing import Any

DEFAULT_METHODS = ("GET", "POST", "HEAD")
ALLOWED_HEADERS = ("X-Requested-With", "Content-Type", "Accept", "Origin", "Authorization")
MAX_AGE_S = 1800


def cors_options(allow_origin: str, allow_methods: str) -> dict[str, Any] | None:
    """``CORSMiddleware`` keyword arguments for the two Kafka keys, or None (CORS off)."""
    origins = [o.strip() for o in allow_origin.split(",") if o.strip()]
    if not origins:
        return None
    methods = [m.strip().upper() for m in allow_methods.split(",") if m.strip()] or list(DEFAULT_METHODS)
    options: dict[str, Any] = {
        "allow_methods": methods,
        "allow_headers": list(ALLOWED_HEADERS),
        "allow_credentials": True,
        "max_age": MAX_AGE_S,
    }
    if "*" in origins:
        options["allow_origins"] = ["*"]
        return options
    exact = [o for o in origins if "*" not in o]
    patterns = [o for o in origins if "*" in o]
    options["allow_origins"] = exact
    if patterns:
        options["allow_origin_regex"] = "|".join(
            ".*".join(re.escape(part) for part in p.split("*")) for p in patterns
        )
    return options
