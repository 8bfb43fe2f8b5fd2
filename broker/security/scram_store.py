"""The SCRAM credentials of the broker's users, durable in the data directory.

One JSON snapshot, ``__scram_credentials.json`` beside the cluster metadata, replaced
atomically (write to a temporary file, fsync, rename) like ``__cluster_metadata.json``.
It holds per user and mechanism the salt, StoredKey, ServerKey and iteration count
(base64), never a password: a stolen file does not let anyone log in, only try to
guess passwords offline, as with Kafka's ``/config/users`` records.
"""

from __future__ import annotations

import base64
import os
import threading
from typing import Final

import orjson

from broker.security.scram import ScramCredential
from broker.storage.durable_file import replace_durably


class ScramStore:
    """Credentials by user and mechanism, loaded at start and saved on every change."""

    FILE: Final = "__scram_credentials.json"

    def __init__(self, data_dir: str) -> None:
        self.path = os.path.join(data_dir, self.FILE)
        self._users: dict[str, dict[str, ScramCredential]] = {}
        # The bootstrap path (broker CLI) and the event loop never overlap, but the
        # embedded broker's tests read it from another thread.
        self._lock = threading.Lock()
        self._load()

    def _load(self) -> None:
        try:
            with open(self.path, "rb") as f:
                data = orjson.loads(f.read())
        except FileNotFoundError:
            return
        except (OSError, orjson.JSONDecodeError) as exc:
            raise ValueError(f"cannot read the SCRAM credentials in {self.path}: {exc}") from None
        for user, mechanisms in data.get("users", {}).items():
            self._users[user] = {
                mech: ScramCredential(
                    base64.b64decode(c["salt"]),
                    base64.b64decode(c["stored_key"]),
                    base64.b64decode(c["server_key"]),
                    int(c["iterations"]),
                )
                for mech, c in mechanisms.items()
            }

    def get(self, user: str, mechanism: str) -> ScramCredential | None:
        with self._lock:
            return self._users.get(user, {}).get(mechanism)

    def users(self) -> dict[str, dict[str, int]]:
        """user -> mechanism -> iterations (what DescribeUserScramCredentials shows)."""
        with self._lock:
            return {
                u: {m: c.iterations for m, c in sorted(mechs.items())}
                for u, mechs in sorted(self._users.items())
            }

    def apply(
        self, upserts: list[tuple[str, str, ScramCredential]], deletions: list[tuple[str, str]]
    ) -> None:
        """Delete then upsert (user, mechanism) credentials, saved as one change."""
        with self._lock:
            for user, mechanism in deletions:
                mechs = self._users.get(user, {})
                mechs.pop(mechanism, None)
                if not mechs:
                    self._users.pop(user, None)
            for user, mechanism, cred in upserts:
                self._users.setdefault(user, {})[mechanism] = cred
            self._save()

    def _save(self) -> None:
        payload = orjson.dumps(
            {
                "users": {
                    user: {
                        mech: {
                            "salt": base64.b64encode(c.salt).decode(),
                            "stored_key": base64.b64encode(c.stored_key).decode(),
                            "server_key": base64.b64encode(c.server_key).decode(),
                            "iterations": c.iterations,
                        }
                        for mech, c in sorted(mechs.items())
                    }
                    for user, mechs in sorted(self._users.items())
                }
            },
            option=orjson.OPT_INDENT_2,
        )
        os.makedirs(os.path.dirname(self.path), exist_ok=True)
        # Owner-only: hashes are not passwords, but there is no reason to share them.
        replace_durably(self.path, payload, 0o600)
