"""The first SCRAM users, created without a running broker, as ``kafka-storage format
--add-scram 'SCRAM-SHA-256=[name=alice,password=alice-secret]'`` does.

``connect-broker server.properties --add-scram '...'`` (repeatable) stores them in
the data directory before the listeners open; later changes go through
AlterUserScramCredentials. ``iterations=`` (default 4096) and ``salt=`` (base64) are
accepted as in Kafka.
"""

from __future__ import annotations

import base64
import binascii
import re
from dataclasses import dataclass

from broker.security.scram import (
    MAX_ITERATIONS,
    MECHANISM_IDS,
    MIN_ITERATIONS,
    ScramCredential,
    credential_from_password,
)
from broker.security.scram_store import ScramStore

_SPEC = re.compile(r"^\s*(?P<mechanism>[A-Z0-9-]+)\s*=\s*\[(?P<fields>.*)\]\s*$", re.S)


@dataclass(frozen=True, slots=True)
class ScramUser:
    mechanism: str
    name: str
    credential: ScramCredential


def parse_add_scram(text: str) -> ScramUser:
    """``SCRAM-SHA-256=[name=alice,password=alice-secret(,iterations=N)(,salt=b64)]``."""
    m = _SPEC.match(text)
    if m is None:
        raise ValueError(f"--add-scram {text!r}: expected 'SCRAM-SHA-256=[name=<user>,password=<password>]'")
    mechanism = m.group("mechanism")
    if mechanism not in MECHANISM_IDS:
        raise ValueError(f"--add-scram {text!r}: mechanism must be one of {', '.join(MECHANISM_IDS)}")
    fields: dict[str, str] = {}
    for item in m.group("fields").split(","):
        key, sep, value = item.partition("=")
        if not sep:
            raise ValueError(f"--add-scram {text!r}: {item!r} is not key=value")
        fields[key.strip()] = value.strip().strip('"')
    unknown = set(fields) - {"name", "password", "iterations", "salt"}
    if unknown or not fields.get("name") or not fields.get("password"):
        raise ValueError(
            f"--add-scram {text!r}: needs name= and password= (and optionally iterations=, salt=)"
        )
    try:
        iterations = int(fields.get("iterations", MIN_ITERATIONS))
        salt = base64.b64decode(fields["salt"], validate=True) if "salt" in fields else None
    except (ValueError, binascii.Error):
        raise ValueError(f"--add-scram {text!r}: iterations must be a number and salt base64") from None
    if not MIN_ITERATIONS <= iterations <= MAX_ITERATIONS:
        raise ValueError(f"--add-scram {text!r}: iterations must be {MIN_ITERATIONS}..{MAX_ITERATIONS}")
    return ScramUser(
        mechanism, fields["name"], credential_from_password(mechanism, fields["password"], iterations, salt)
    )


def add_scram_users(data_dir: str, users: list[ScramUser]) -> None:
    ScramStore(data_dir).apply([(u.name, u.mechanism, u.credential) for u in users], [])
