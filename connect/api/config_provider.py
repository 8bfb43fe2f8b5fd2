"""Config providers: values kept outside connector configs (``${provider:path:key}``).

A worker lists providers in ``config.providers`` (``config.providers.<alias>.class``,
``config.providers.<alias>.param.*``). A connector config may then say
``connection.password=${file:/etc/secrets/db.properties:password}``; the placeholder
is what gets stored and returned over REST, and the value is looked up only when
the connector or its tasks start.

Example::

    class VaultProvider(ConfigProvider):
        def configure(self, configs):
            self.client = make_client(configs["address"])

        def get(self, path, keys=None):
            secret = self.client.read(path)
            return {k: v for k, v in secret.items() if keys is None or k in keys}
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping
from typing import ClassVar


class ConfigProvider(ABC):
    aliases: ClassVar[tuple[str, ...]] = ()

    def configure(self, configs: Mapping[str, str]) -> None:  # noqa: B027 - optional hook
        """The provider's ``param.*`` settings (prefix removed)."""

    @abstractmethod
    def get(self, path: str, keys: set[str] | None = None) -> dict[str, str]:
        """Values at ``path`` (all of them, or just ``keys``)."""

    def close(self) -> None:  # noqa: B027 - optional hook
        pass
