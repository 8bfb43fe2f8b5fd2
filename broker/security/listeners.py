"""Listener names, their security protocols and their per-listener settings, as in Kafka.

``listeners=PLAINTEXT://:9092,SSL://:9093,SASL_SSL://:9094`` names listeners after
their protocol; custom names get one through ``listener.security.protocol.map``
(``INTERNAL:SASL_PLAINTEXT,EXTERNAL:SSL``). A setting is looked up as
``listener.name.<listener, lower case>.<key>`` first, then as ``<key>``; SASL login
settings also per mechanism: ``listener.name.<listener>.<mechanism>.sasl.jaas.config``.
"""

from __future__ import annotations

import ssl
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from broker.security.jaas import JaasError, plain_users
from broker.security.tls import server_context

PROTOCOLS: Final = ("PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL")
SASL_MECHANISMS: Final = ("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512")

# Keys read from the broker config's extras (they are not BrokerConfig fields).
SECURITY_KEY_PREFIXES: Final = ("ssl.", "sasl.", "listener.name.", "listener.security.protocol.map")
SECURITY_KEYS: Final = frozenset({"inter.broker.listener.name", "security.inter.broker.protocol"})


class ListenerConfigError(ValueError):
    """A listener's security settings cannot be used; the message names the key."""


def is_security_key(key: str) -> bool:
    return key in SECURITY_KEYS or key.startswith(SECURITY_KEY_PREFIXES)


@dataclass(frozen=True, slots=True)
class ListenerSecurity:
    """What one listener asks of its connections: TLS (a context), SASL (mechanisms, and the
    PLAIN users of its JAAS config), both or neither."""

    name: str
    protocol: str
    ssl_context: ssl.SSLContext | None = None
    mechanisms: tuple[str, ...] = ()
    plain_users: Mapping[str, str] = field(default_factory=dict)

    @property
    def sasl(self) -> bool:
        return self.protocol in ("SASL_PLAINTEXT", "SASL_SSL")


# What a connection gets when no listener is named (tests that serve a socket directly).
PLAINTEXT_LISTENER: Final = ListenerSecurity("PLAINTEXT", "PLAINTEXT")


def protocol_map(settings: Mapping[str, Any]) -> dict[str, str]:
    """listener name -> security protocol (the four protocols map to themselves)."""
    out = {p: p for p in PROTOCOLS}
    raw = str(settings.get("listener.security.protocol.map") or "")
    for item in (i.strip() for i in raw.split(",")):
        if not item:
            continue
        name, sep, protocol = item.partition(":")
        protocol = protocol.strip().upper()
        if not sep or not name.strip() or protocol not in PROTOCOLS:
            raise ListenerConfigError(
                f"listener.security.protocol.map: {item!r} is not NAME:PROTOCOL with PROTOCOL one of "
                f"{', '.join(PROTOCOLS)}"
            )
        out[name.strip().upper()] = protocol
    return out


def listener_security(name: str, settings: Mapping[str, Any]) -> ListenerSecurity:
    """The security of listener ``name`` from the broker's settings (Kafka key -> value)."""
    protocols = protocol_map(settings)
    protocol = protocols.get(name)
    if protocol is None:
        raise ListenerConfigError(
            f"listener {name} has no security protocol: name it after one ({', '.join(PROTOCOLS)}) "
            f"or map it in listener.security.protocol.map (e.g. {name}:SASL_SSL)"
        )
    prefix = f"listener.name.{name.lower()}."

    def setting(key: str) -> str | None:
        value = settings.get(prefix + key, settings.get(key))
        return None if value is None else str(value)

    where = f"listener {name} ({protocol})"
    context = server_context(setting, where) if protocol in ("SSL", "SASL_SSL") else None
    if protocol not in ("SASL_PLAINTEXT", "SASL_SSL"):
        return ListenerSecurity(name, protocol, context)
    raw = setting("sasl.enabled.mechanisms")
    if not raw:
        raise ListenerConfigError(
            f"{where}: set sasl.enabled.mechanisms (or {prefix}sasl.enabled.mechanisms) to some of "
            f"{', '.join(SASL_MECHANISMS)}; Kafka's default, GSSAPI, is not supported"
        )
    mechanisms = tuple(m.strip().upper() for m in raw.split(",") if m.strip())
    unsupported = [m for m in mechanisms if m not in SASL_MECHANISMS]
    if unsupported or not mechanisms:
        raise ListenerConfigError(
            f"{where}: sasl.enabled.mechanisms: {', '.join(unsupported) or 'nothing'} is not supported "
            f"(supported: {', '.join(SASL_MECHANISMS)})"
        )
    users: dict[str, str] = {}
    if "PLAIN" in mechanisms:
        key = f"{prefix}plain.sasl.jaas.config"
        jaas = settings.get(key)
        if jaas is None:
            key, jaas = "sasl.jaas.config", settings.get("sasl.jaas.config")
        if jaas is None:
            raise ListenerConfigError(
                f"{where}: PLAIN needs {prefix}plain.sasl.jaas.config (or sasl.jaas.config) = "
                "org.apache.kafka.common.security.plain.PlainLoginModule required "
                'user_<name>="<password>" ...;'
            )
        try:
            users = plain_users(str(jaas), key)
        except JaasError as exc:
            raise ListenerConfigError(f"{where}: {exc}") from None
        if not users:
            raise ListenerConfigError(f'{where}: {key} declares no user_<name>="<password>" entry')
    return ListenerSecurity(name, protocol, context, mechanisms, users)
