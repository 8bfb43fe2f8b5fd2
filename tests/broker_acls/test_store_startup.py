"""A broken ACL file stops the broker with a message naming it, and leaves log.dirs
unlocked so the corrected broker starts at once."""

from __future__ import annotations

from pathlib import Path

import pytest

from broker.authorizer.store import AclStore, AclStoreError
from broker.config import load_config
from broker.server import EmbeddedBroker


def test_a_corrupt_acl_file_is_named_and_releases_the_lock(tmp_path: Path) -> None:
    config = load_config(
        {
            "listeners": "PLAINTEXT://127.0.0.1:0",
            "log.dirs": str(tmp_path),
            "authorizer.class.name": "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
            "allow.everyone.if.no.acl.found": "true",
        }
    )
    with EmbeddedBroker(config):
        pass  # creates the data directory
    acl_file = tmp_path / AclStore.FILE
    acl_file.write_text("{not json")
    with pytest.raises((AclStoreError, RuntimeError), match=AclStore.FILE):
        EmbeddedBroker(config).start()
    acl_file.unlink()
    with EmbeddedBroker(config) as broker:  # the failed start left no lock behind
        assert broker.bootstrap
