"""Password values never reach logs or status traces: connect.runtime.secrets, then a real
worker whose connector fails with its password in the exception."""

from __future__ import annotations

import logging
from pathlib import Path

import httpx
import pytest
from hypothesis import given
from hypothesis import strategies as st

from connect.runtime.secrets import (
    HIDDEN,
    RedactingFilter,
    SecretRegistry,
    is_client_password_key,
    secret_values,
)
from sluiceway.embedded import EmbeddedConnect


def test_which_keys_are_secret() -> None:
    config = {
        "connection.password": "hunter22",
        "connection.user": "alice",
        "producer.override.sasl.jaas.config": 'PlainLoginModule required password="pw-1234";',
        "consumer.override.ssl.key.password": "keypass",
        "aws.secret.access.key": "AKIASECRET",
        "pin": "123",  # too short to hide safely
    }
    assert secret_values(config, {"aws.secret.access.key"}) == {
        "hunter22",
        'PlainLoginModule required password="pw-1234";',
        "keypass",
        "AKIASECRET",
    }
    assert is_client_password_key("admin.override.ssl.truststore.password")
    assert not is_client_password_key("ssl.truststore.location")


def test_redaction_hides_every_occurrence_longest_first() -> None:
    r = SecretRegistry()
    assert r.redact("nothing registered") == "nothing registered"
    r.register(["pass", "password123"])
    assert r.redact("x password123 y pass z") == f"x {HIDDEN} y {HIDDEN} z"
    r.register(["a+b(c)"])  # regex metacharacters are literal
    assert r.redact("a+b(c) and abc") == f"{HIDDEN} and abc"


@given(st.text(min_size=4, max_size=20), st.text(max_size=30), st.text(max_size=30))
def test_a_registered_secret_never_survives(secret: str, before: str, after: str) -> None:
    r = SecretRegistry()
    r.register([secret])
    assert secret not in r.redact(before + secret + after)


def test_log_records_and_their_tracebacks_are_redacted() -> None:
    registry = SecretRegistry()
    registry.register(["s3cr3t-value"])
    records: list[str] = []

    class Keep(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            records.append(self.format(record))

    handler = Keep()
    handler.addFilter(RedactingFilter(registry))
    handler.setFormatter(logging.Formatter("%(message)s"))
    log = logging.getLogger("tests.secrets")
    log.addHandler(handler)
    log.propagate = False
    try:
        log.warning("connecting with %s", "s3cr3t-value")
        try:
            raise RuntimeError("login failed for password s3cr3t-value")
        except RuntimeError:
            log.exception("driver said")
    finally:
        log.removeHandler(handler)
    assert all("s3cr3t-value" not in line for line in records), records
    assert records[0] == f"connecting with {HIDDEN}"
    assert f"login failed for password {HIDDEN}" in records[1]


@pytest.mark.parametrize("task_failure", [False, True])
def test_a_failing_connectors_password_is_hidden_in_its_status_trace(
    tmp_path: Path, task_failure: bool
) -> None:
    """The connector (or its task) fails with an error quoting its password."""
    password = "very-secret-pw-42"
    with EmbeddedConnect(tmp_path) as c:
        config = {
            "connector.class": "tests.connect.plugins.LeakySourceConnector",
            "connection.password": password,
            "fail.in": "task" if task_failure else "connector",
        }
        c.create_connector("leaky", config)
        if task_failure:
            state = c.wait_for_state("leaky", "RUNNING", tasks=1, task_state="FAILED", timeout=30)
        else:
            state = c.wait_for_state("leaky", "FAILED", timeout=30)
        trace = (state["tasks"][0] if task_failure else state["connector"])["trace"]
        assert "RuntimeError" in trace
        assert password not in trace and HIDDEN in trace
        body = httpx.get(f"{c.url}/connectors/leaky/status").text
        assert password not in body
