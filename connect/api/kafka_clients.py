"""Java Kafka client settings as librdkafka (confluent-kafka) takes them.

For the runtime's own clients and for connectors that talk to a Kafka cluster of their
own (MirrorMaker 2's source and target clusters, a schema history topic): worker files,
connector configs and the Java tools' ``--command-config`` files carry the Java client's
keys, and ``librdkafka_config`` turns them into settings confluent-kafka accepts.

Security keys (``librdkafka_security``); librdkafka names some differently and lacks others:

- ``sasl.jaas.config`` with PlainLoginModule or ScramLoginModule becomes
  ``sasl.username``/``sasl.password``; other login modules are refused.
- ``sasl.mechanism`` is librdkafka's ``sasl.mechanisms``.
- ``ssl.truststore.location``: a PEM file becomes ``ssl.ca.location``; JKS and PKCS12
  truststores are refused (librdkafka reads CAs only from PEM), with the command that
  converts them. ``ssl.truststore.certificates`` (inline PEM) becomes ``ssl.ca.pem``.
- ``ssl.keystore.location``: PKCS12 stays (librdkafka reads it with
  ``ssl.keystore.password``); a PEM file holding key and chain becomes
  ``ssl.certificate.location`` + ``ssl.key.location``; JKS is refused.
- ``ssl.endpoint.identification.algorithm=`` (empty, Java's "off") becomes ``none``.
- Java-only keys without a librdkafka meaning (store types, ``ssl.enabled.protocols``,
  ``ssl.protocol``, ...) are dropped.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Mapping
from typing import Any, Final

_JAAS: Final = re.compile(
    r"\b(?P<module>[\w.]+LoginModule)\s+(?:required|requisite|sufficient|optional)\b(?P<options>.*?);?\s*$",
    re.S,
)
_JAAS_OPTION: Final = re.compile(r'(\w+)\s*=\s*(?:"((?:[^"\\]|\\.)*)"|(\S+?))(?=\s|;|$)')
_JKS_MAGIC: Final = b"\xfe\xed\xfe\xed"

log = logging.getLogger(__name__)

# Java client key -> librdkafka key (None: no equivalent, dropped).
_JAVA_KEYS: Final[dict[str, str | None]] = {
    "max.request.size": "message.max.bytes",
    "key.serializer": None,
    "value.serializer": None,
    "key.deserializer": None,
    "value.deserializer": None,
    "interceptor.classes": None,
    "buffer.memory": None,
    "max.block.ms": None,
    "send.buffer.bytes": "socket.send.buffer.bytes",
    "receive.buffer.bytes": "socket.receive.buffer.bytes",
    "max.poll.records": None,  # the runtime's own batch size (see sink_batch_size)
    "default.api.timeout.ms": None,
    "exclude.internal.topics": None,
    "partitioner.class": None,
}

_warned: set[str] = set()

# Java keys librdkafka does not know and that need no translation.
_DROPPED: Final = frozenset(
    {
        "ssl.keystore.type",
        "ssl.truststore.type",
        "ssl.truststore.password",
        "ssl.enabled.protocols",
        "ssl.protocol",
        "ssl.keymanager.algorithm",
        "ssl.trustmanager.algorithm",
        "ssl.secure.random.implementation",
        "ssl.provider",
        "ssl.engine.factory.class",
        # the REST server's keys, which share the ssl. prefix (Kafka Connect does the same)
        "ssl.client.auth",
        "ssl.client.authentication",
        "sasl.login.callback.handler.class",
        "sasl.client.callback.handler.class",
    }
)


class ClientSecurityError(ValueError):
    """A client security setting librdkafka cannot be given; the message says what to do."""


def jaas_credentials(jaas: str) -> dict[str, str]:
    """``sasl.username``/``sasl.password`` of a PLAIN or SCRAM ``sasl.jaas.config`` value."""
    m = _JAAS.search(jaas)
    if m is None or not m.group("module").endswith(("PlainLoginModule", "ScramLoginModule")):
        raise ClientSecurityError(
            "sasl.jaas.config: only PlainLoginModule and ScramLoginModule can be translated for librdkafka; "
            "set sasl.username and sasl.password (or librdkafka's own SASL settings) instead"
        )
    options: dict[str, str] = {}
    for option in _JAAS_OPTION.finditer(m.group("options")):
        quoted, bare = option.group(2), option.group(3)
        options[option.group(1)] = bare if quoted is None else re.sub(r"\\(.)", r"\1", quoted)
    out = {}
    for name, key in (("username", "sasl.username"), ("password", "sasl.password")):
        if name in options:
            out[key] = options[name]
    return out


def is_security_key(key: str) -> bool:
    return key == "security.protocol" or key.startswith(("ssl.", "sasl."))


def librdkafka_security(settings: Mapping[str, Any]) -> dict[str, Any]:
    """``settings`` with their security keys translated (see the module docstring);
    other keys pass through unchanged."""
    out: dict[str, Any] = {}
    # As Kafka's clients do, ssl.* keys only matter on a TLS connection: a worker whose
    # clients speak PLAINTEXT may carry TLS keys meant for something else (even JKS stores).
    tls = str(settings.get("security.protocol", "PLAINTEXT")).upper() in ("SSL", "SASL_SSL")
    for key, value in settings.items():
        if not is_security_key(key):
            out[key] = value
        elif key in _DROPPED or (key.startswith("ssl.") and not tls):
            continue
        elif key == "sasl.jaas.config":
            out.update(jaas_credentials(str(value)))
        elif key == "sasl.mechanism":
            out["sasl.mechanisms"] = value
        elif key == "ssl.endpoint.identification.algorithm" and value == "":
            out[key] = "none"  # Java's way of switching host name verification off
        elif key == "ssl.truststore.location":
            _store(
                str(value), settings.get("ssl.truststore.type"), "ssl.truststore.location", truststore=True
            )
            out["ssl.ca.location"] = value
        elif key == "ssl.truststore.certificates":
            out["ssl.ca.pem"] = value
        elif key == "ssl.keystore.location":
            kind = _store(str(value), settings.get("ssl.keystore.type"), key, truststore=False)
            if kind == "PEM":
                out["ssl.certificate.location"] = out["ssl.key.location"] = value
            else:
                out[key] = value
        elif key == "ssl.keystore.key":
            out["ssl.key.pem"] = value
        elif key == "ssl.keystore.certificate.chain":
            out["ssl.certificate.pem"] = value
        else:
            out[key] = value
    if out.get("ssl.keystore.location") is None:
        # A PEM keystore's password is its key's (librdkafka: ssl.key.password).
        password = out.pop("ssl.keystore.password", None)
        if password is not None and "ssl.key.location" in out:
            out.setdefault("ssl.key.password", password)
    return out


def _store(path: str, declared: Any, key: str, truststore: bool) -> str:
    kind = str(declared or "").strip().upper()
    try:
        with open(path, "rb") as f:
            head = f.read(4096)
    except OSError as exc:
        raise ClientSecurityError(f"{key} {path}: {exc.strerror or exc}") from None
    if not kind or kind == "JKS":
        kind = "JKS" if head.startswith(_JKS_MAGIC) else "PEM" if b"-----BEGIN" in head else kind or "PKCS12"
    if kind == "JKS":
        raise ClientSecurityError(
            f"{key} {path} is a JKS store, which librdkafka cannot read; convert it with "
            f"'keytool -importkeystore -srckeystore {path} -destkeystore store.p12 -deststoretype PKCS12'"
            + (" and then to PEM" if truststore else "")
        )
    if truststore and kind != "PEM":
        raise ClientSecurityError(
            f"{key} {path} is a {kind} truststore; librdkafka reads CA certificates only from PEM: convert "
            f"it with 'openssl pkcs12 -in {path} -nokeys -out ca.pem' and set {key}=ca.pem "
            "(or ssl.ca.location)"
        )
    return kind


def librdkafka_config(settings: Mapping[str, Any]) -> dict[str, Any]:
    """Java client ``settings`` as a confluent-kafka config: security keys translated
    (``librdkafka_security``), a few Java keys renamed to their librdkafka equivalent, and
    Java-only keys without one (serializers, interceptors, JVM buffer sizes) dropped with a
    warning instead of making the client refuse to start. Raises ``ClientSecurityError``
    for a security setting librdkafka cannot be given."""
    out: dict[str, Any] = {}
    for key, value in librdkafka_security(settings).items():
        if key in _JAVA_KEYS:
            target = _JAVA_KEYS[key]
            if target is None:
                if key not in _warned:
                    _warned.add(key)
                    log.warning(
                        "client setting %s is a Java client setting without a librdkafka equivalent; ignored",
                        key,
                    )
                continue
            key = target
        out[key] = value
    return out
