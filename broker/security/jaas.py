"""The broker's reading of ``sasl.jaas.config`` values.

``org.apache.kafka.common.security.plain.PlainLoginModule required user_alice="alice-secret";``
declares PLAIN users (``user_<name>="<password>"``), as Kafka's PlainServerCallbackHandler
reads them. (The worker's client-side translation of the same syntax lives in
``connect.api.kafka_clients``; the broker never imports ``connect``.)
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_ENTRY = re.compile(
    r"^\s*(?P<module>[\w.$]+)\s+(?P<flag>required|requisite|sufficient|optional)\b(?P<options>.*?)\s*;?\s*$",
    re.S,
)
_OPTION = re.compile(r'\s*(?P<key>[^\s=]+)\s*=\s*(?:"(?P<quoted>(?:[^"\\]|\\.)*)"|(?P<bare>[^\s";]+))')


class JaasError(ValueError):
    """A ``sasl.jaas.config`` value that is not one JAAS login module entry."""


@dataclass(frozen=True, slots=True)
class JaasEntry:
    module: str
    options: dict[str, str]


def parse_jaas(value: str, key: str = "sasl.jaas.config") -> JaasEntry:
    """One entry ``<LoginModule class> <flag> key=value ...;`` (values quoted or bare)."""
    m = _ENTRY.match(value)
    if m is None:
        raise JaasError(
            f"{key}: expected '<LoginModule class> required key=\"value\" ...;', got {value[:60]!r}"
        )
    options: dict[str, str] = {}
    rest = m.group("options")
    pos = 0
    while pos < len(rest.rstrip()):
        om = _OPTION.match(rest, pos)
        if om is None:
            raise JaasError(f"{key}: cannot read the options of {m.group('module')} at {rest[pos:][:40]!r}")
        quoted = om.group("quoted")
        options[om.group("key")] = re.sub(r"\\(.)", r"\1", quoted) if quoted is not None else om.group("bare")
        pos = om.end()
    return JaasEntry(m.group("module"), options)


def plain_users(value: str, key: str) -> dict[str, str]:
    """The ``user_<name>`` passwords of a PlainLoginModule entry."""
    entry = parse_jaas(value, key)
    if not entry.module.endswith("PlainLoginModule"):
        raise JaasError(f"{key}: PLAIN users need org.apache.kafka.common.security.plain.PlainLoginModule")
    return {k[len("user_") :]: v for k, v in entry.options.items() if k.startswith("user_") and len(k) > 5}
