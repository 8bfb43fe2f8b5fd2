"""``ConfigError``: a setting the registry cannot use (the message names the key). Its own
module so that every part that reads settings (server, TLS, authentication) can raise it."""

from __future__ import annotations

__all__ = ["ConfigError"]


class ConfigError(ValueError):
    """A setting that cannot be used; the message names it."""
