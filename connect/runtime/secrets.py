"""Keeping the values of password keys out of logs and status traces.

A connector's password keys (``SecretStr`` fields of its config model, and the Kafka
client keys Kafka types as PASSWORD under any ``producer.``/``consumer.``/``admin.``
prefix) are registered with their resolved values when the connector or a task
starts; every log line and every trace a worker reports then shows ``[hidden]`` where
such a value would appear. Values reach logs in ways no code review catches (a driver's
exception quoting its connection string, pydantic echoing an input), so redaction
works on the text, not on the call sites.
"""

from __future__ import annotations

import logging
import re
import threading
from collections.abc import Iterable, Mapping

HIDDEN = "[hidden]"

# Kafka client keys of type PASSWORD (clients' ConfigDefs), matched after any prefix.
_CLIENT_PASSWORD_KEYS = frozenset(
    {
        "ssl.key.password",
        "ssl.keystore.password",
        "ssl.truststore.password",
        "ssl.keystore.key",
        "ssl.keystore.certificate.chain",
        "ssl.truststore.certificates",
        "sasl.jaas.config",
        "sasl.oauthbearer.client.credentials.client.secret",
        "basic.auth.user.info",
    }
)
# Shorter values are left alone: hiding "a" or "12" everywhere would mangle every line.
_MIN_LENGTH = 4


def is_client_password_key(key: str) -> bool:
    """Kafka's client password keys under any prefix, and any ``*.password`` key."""
    return key.endswith(".password") or any(key == k or key.endswith("." + k) for k in _CLIENT_PASSWORD_KEYS)


def secret_values(config: Mapping[str, str], password_keys: Iterable[str]) -> set[str]:
    """The values in ``config`` of the given password keys and of Kafka's client password keys."""
    keys = set(password_keys)
    return {
        value
        for key, value in config.items()
        if value and len(value) >= _MIN_LENGTH and (key in keys or is_client_password_key(key))
    }


class SecretRegistry:
    """The secret values a worker knows of; ``redact`` hides every occurrence of each."""

    def __init__(self) -> None:
        self._values: set[str] = set()
        self._pattern: re.Pattern[str] | None = None
        self._lock = threading.Lock()

    def register(self, values: Iterable[str]) -> None:
        new = {v for v in values if len(v) >= _MIN_LENGTH} - self._values
        if not new:
            return
        with self._lock:
            self._values |= new
            # Longest first, so a secret containing another is hidden whole.
            alternatives = sorted(self._values, key=len, reverse=True)
            self._pattern = re.compile("|".join(re.escape(v) for v in alternatives))

    @property
    def active(self) -> bool:
        return self._pattern is not None

    def redact(self, text: str) -> str:
        pattern = self._pattern
        return text if pattern is None else pattern.sub(HIDDEN, text)


SECRETS = SecretRegistry()


class RedactingFilter(logging.Filter):
    """Formats a record's message (and traceback) once, with registered secrets hidden."""

    def __init__(self, registry: SecretRegistry = SECRETS) -> None:
        super().__init__()
        self.registry = registry
        self._formatter = logging.Formatter()

    def filter(self, record: logging.LogRecord) -> bool:
        if not self.registry.active:
            return True
        message = record.getMessage()
        redacted = self.registry.redact(message)
        if redacted != message:
            record.msg, record.args = redacted, None
        if record.exc_info and not record.exc_text:
            record.exc_text = self.registry.redact(self._formatter.formatException(record.exc_info))
        return True
