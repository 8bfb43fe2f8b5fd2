"""The client side of SASL PLAIN and SCRAM, as Kafka's clients speak it.

The group-membership client is our own Kafka-protocol client (librdkafka has no group
API for a Connect protocol), so it authenticates itself: after ApiVersions, a
SaslHandshake v1 names the mechanism and each SASL token travels in a SaslAuthenticate
request (KIP-152). This module holds only the token exchange, free of I/O: a generator
that yields the client's tokens and is sent the broker's answers.

Credentials come from the worker's Java keys, as Kafka Connect reads them:
``security.protocol`` (SASL_PLAINTEXT or SASL_SSL), ``sasl.mechanism`` (Kafka's default is
GSSAPI, which we cannot speak: it must be set) and ``sasl.jaas.config`` with
PlainLoginModule or ScramLoginModule (librdkafka's ``sasl.username``/``sasl.password``
are taken too).
"""

from __future__ import annotations

from collections.abc import Generator, Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from scramp import ScramClient, ScramException  # type: ignore[import-untyped]

from connect.api.kafka_clients import ClientSecurityError, jaas_credentials

MECHANISMS: Final = ("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512")
SASL_PROTOCOLS: Final = ("SASL_PLAINTEXT", "SASL_SSL")


class SaslFailure(Exception):
    """The broker's side of the exchange did not check out (a wrong SCRAM server signature)."""


@dataclass(frozen=True)
class SaslCredentials:
    mechanism: str
    username: str
    password: str = field(repr=False)


def sasl_credentials(settings: Mapping[str, Any]) -> SaslCredentials | None:
    """The SASL credentials of a worker's client settings, or None when its
    ``security.protocol`` does not use SASL. Raises ``ClientSecurityError`` naming the key
    that is missing or cannot be used."""
    protocol = str(settings.get("security.protocol", "PLAINTEXT")).strip().upper()
    if protocol not in SASL_PROTOCOLS:
        return None
    mechanism = str(settings.get("sasl.mechanism") or settings.get("sasl.mechanisms") or "GSSAPI")
    mechanism = mechanism.strip().upper()
    if mechanism not in MECHANISMS:
        raise ClientSecurityError(
            f"sasl.mechanism={mechanism}: a worker's group membership speaks {', '.join(MECHANISMS)}; "
            "set sasl.mechanism to one of them"
        )
    found: dict[str, str] = {}
    if settings.get("sasl.jaas.config"):
        found = jaas_credentials(str(settings["sasl.jaas.config"]))
    for key in ("sasl.username", "sasl.password"):
        if settings.get(key) is not None:
            found.setdefault(key, str(settings[key]))
    if "sasl.username" not in found or "sasl.password" not in found:
        raise ClientSecurityError(
            f"security.protocol={protocol} with sasl.mechanism={mechanism} needs a user name and password: "
            'set sasl.jaas.config (e.g. ...LoginModule required username="..." password="...";)'
        )
    return SaslCredentials(mechanism, found["sasl.username"], found["sasl.password"])


def sasl_exchange(credentials: SaslCredentials) -> Generator[bytes, bytes, None]:
    """Yields the client's SASL tokens in order; send it each of the broker's answers.
    It returns when the client has nothing more to say (and, for SCRAM, has verified the
    broker's signature; ``SaslFailure`` if that does not match)."""
    if credentials.mechanism == "PLAIN":
        # RFC 4616: authzid (empty: act as the authenticated user), authcid, password.
        yield b"\0" + credentials.username.encode() + b"\0" + credentials.password.encode()
        return
    client = ScramClient([credentials.mechanism], credentials.username, credentials.password)
    try:
        server_first = yield client.get_client_first().encode()
        client.set_server_first(server_first.decode())
        server_final = yield client.get_client_final().encode()
        client.set_server_final(server_final.decode())
    except (ScramException, UnicodeDecodeError) as exc:
        raise SaslFailure(f"{credentials.mechanism} exchange with the broker failed: {exc}") from exc
