"""Kafka's built-in config providers and the resolution of ``${provider:[path:]key}``.

Resolution happens when a connector or task starts; the stored config keeps the
placeholders. A placeholder naming a provider that is not configured stays as it is
(Kafka does the same, so unrelated ``${...}`` text survives); a configured provider
that has no such key is an error that names the key and the path.
"""

from __future__ import annotations

import logging
import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Final

from connect.api.config_provider import ConfigProvider
from connect.api.errors import ConnectException
from connect.runtime.properties import load as load_properties

log = logging.getLogger(__name__)

# Kafka's ConfigTransformer pattern: ${provider:path:key} or ${provider:key}.
PLACEHOLDER: Final = re.compile(r"\$\{([^}]*?):(([^}]*?):)?([^}]*?)\}")


class FileConfigProvider(ConfigProvider):
    """``${file:/path/to/file.properties:key}``: a key of a properties file."""

    aliases = ("org.apache.kafka.common.config.provider.FileConfigProvider",)

    def configure(self, configs: Mapping[str, str]) -> None:
        self.allowed = _allowed_paths(configs)

    def get(self, path: str, keys: set[str] | None = None) -> dict[str, str]:
        p = _checked(path, self.allowed)
        values = load_properties(p).values
        return {k: v for k, v in values.items() if keys is None or k in keys}


class DirectoryConfigProvider(ConfigProvider):
    """``${directory:/path/to/dir:file}``: the content of a file in a directory."""

    aliases = ("org.apache.kafka.common.config.provider.DirectoryConfigProvider",)

    def configure(self, configs: Mapping[str, str]) -> None:
        self.allowed = _allowed_paths(configs)

    def get(self, path: str, keys: set[str] | None = None) -> dict[str, str]:
        d = _checked(path, self.allowed)
        if not d.is_dir():
            raise ConnectException(f"config provider 'directory': {d} is not a directory")
        out = {}
        for f in sorted(d.iterdir()):
            if f.is_file() and (keys is None or f.name in keys):
                out[f.name] = f.read_text(encoding="utf-8")
        return out


class EnvVarConfigProvider(ConfigProvider):
    """``${env:NAME}`` (or ``${env::NAME}``): an environment variable."""

    aliases = ("org.apache.kafka.common.config.provider.EnvVarConfigProvider",)

    def configure(self, configs: Mapping[str, str]) -> None:
        pattern = configs.get("allowlist.pattern")
        self.allow = re.compile(pattern) if pattern else None

    def get(self, path: str, keys: set[str] | None = None) -> dict[str, str]:
        if path:
            raise ConnectException("config provider 'env' takes no path: use ${env:NAME}")
        return {
            k: v
            for k, v in os.environ.items()
            if (keys is None or k in keys) and (self.allow is None or self.allow.fullmatch(k))
        }


def _allowed_paths(configs: Mapping[str, str]) -> list[Path] | None:
    raw = configs.get("allowed.paths")
    if not raw:
        return None
    return [Path(p.strip()).resolve() for p in raw.split(",") if p.strip()]


def _checked(path: str, allowed: list[Path] | None) -> Path:
    p = Path(path).resolve()
    if allowed is not None and not any(p == a or a in p.parents for a in allowed):
        raise ConnectException(f"{path} is not under the provider's allowed.paths")
    return p


def resolve(config: Mapping[str, str], providers: Mapping[str, ConfigProvider]) -> dict[str, str]:
    """``config`` with every placeholder of a configured provider replaced."""
    wanted: dict[tuple[str, str], set[str]] = {}
    for value in config.values():
        for m in PLACEHOLDER.finditer(value or ""):
            name, path, key = m.group(1), m.group(3) or "", m.group(4)
            if name in providers:
                wanted.setdefault((name, path), set()).add(key)
    if not wanted:
        return dict(config)
    found: dict[tuple[str, str], dict[str, str]] = {}
    for (name, path), keys in wanted.items():
        try:
            found[(name, path)] = providers[name].get(path, keys)
        except ConnectException:
            raise
        except Exception as exc:
            raise ConnectException(f"config provider '{name}' could not read '{path}': {exc}") from exc

    def substitute(m: re.Match[str]) -> str:
        name, path, key = m.group(1), m.group(3) or "", m.group(4)
        if name not in providers:
            return m.group(0)
        values = found[(name, path)]
        if key not in values:
            where = f" in '{path}'" if path else ""
            raise ConnectException(f"config provider '{name}' has no value for '{key}'{where}")
        return values[key]

    out = {}
    for k, v in config.items():
        try:
            out[k] = PLACEHOLDER.sub(substitute, v) if v else v
        except ConnectException as exc:
            raise ConnectException(f"cannot resolve {k}: {exc}") from None
    return out


def unresolved_providers(config: Mapping[str, str], providers: Mapping[str, ConfigProvider]) -> set[str]:
    """Provider names used in placeholders that no configured provider answers to."""
    names = {m.group(1) for v in config.values() for m in PLACEHOLDER.finditer(v or "")}
    return names - set(providers)
