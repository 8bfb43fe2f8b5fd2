"""A distributed cluster with HTTPS (client certificates required) and basic auth:
followers forward users' requests to the leader over TLS with the users' credentials,
hand task configs over signed, and internal endpoints take no unsigned request."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import orjson
import pytest

from connect.herder.request_signing import sign
from sluiceway.embedded import EmbeddedConnectCluster
from tests.certificates import TestCA
from tests.rest_security.conftest import source_config, trusting

ADMIN = ("admin", "admin-pw")
VIEWER = ("viewer", "viewer-pw")


@pytest.fixture(scope="module")
def cluster(
    tmp_path_factory: pytest.TempPathFactory, bootstrap: str, ca: TestCA, ca_pem: Path
) -> Iterator[EmbeddedConnectCluster]:
    work = tmp_path_factory.mktemp("secured-cluster")
    users = work / "users.properties"
    users.write_text(f"{ADMIN[0]}: {ADMIN[1]}\n{VIEWER[0]}: {VIEWER[1]},viewer\n")
    # The workers' certificate serves their listeners and identifies them to each other.
    keystore = ca.pkcs12_keystore(work, "worker", "ks-pw", server=True, client=True)
    truststore = ca.pkcs12_truststore(work, "trust", "ts-pw")
    config = {
        "listeners": "https://127.0.0.1:0",
        "listeners.https.ssl.keystore.location": str(keystore),
        "listeners.https.ssl.keystore.password": "ks-pw",
        "listeners.https.ssl.keystore.type": "PKCS12",
        "listeners.https.ssl.truststore.location": str(truststore),
        "listeners.https.ssl.truststore.password": "ts-pw",
        "listeners.https.ssl.truststore.type": "PKCS12",
        "listeners.https.ssl.client.auth": "required",
        "rest.authentication.basic.credentials.file": str(users),
    }
    client_cert = ca.pem_files(work, "operator", server=False, client=True)
    http = {"verify": trusting(ca_pem, client_cert), "auth": ADMIN}
    with EmbeddedConnectCluster(work, 2, config, bootstrap, http_options=http) as c:
        yield c


def test_connectors_created_through_a_follower_run(cluster: EmbeddedConnectCluster, tmp_path: Path) -> None:
    follower, leader = cluster.follower(), cluster.leader()
    assert cluster.url(follower).startswith("https://127.0.0.1:")
    names = ["fwd-a", "fwd-b"]
    for name in names:
        r = cluster.request(
            "POST", "/connectors", {"name": name, "config": source_config(tmp_path, name)}, follower
        )
        assert r.status_code == 201, r.text  # the leader authorised the forwarded request's user
    for name in names:
        cluster.wait_for_running(name, timeout=60)
    cluster.wait_for(cluster.settled, 60, "the cluster to settle")
    owners = {cluster.status(n)["connector"]["worker_id"] for n in names}
    follower_id = cluster.workers[follower].rest.worker_id
    # A connector on the follower got its tasks only through a signed, TLS hand-over to the leader.
    assert follower_id in owners, f"no connector on the follower {follower_id}: {owners}"
    assert cluster.workers[leader].rest.worker_id in owners


def anonymous(cluster: EmbeddedConnectCluster, index: int) -> httpx.Client:
    """A client of worker ``index`` with the cluster's TLS settings and no user."""
    return httpx.Client(base_url=cluster.url(index), verify=cluster.http_options["verify"], timeout=60)


def test_users_are_checked_on_every_worker(cluster: EmbeddedConnectCluster, tmp_path: Path) -> None:
    follower = cluster.follower()
    client = cluster.client(follower)
    body = {"name": "nope", "config": source_config(tmp_path, "nope")}
    assert client.post("/connectors", json=body, auth=VIEWER).status_code == 403
    with anonymous(cluster, follower) as nobody:
        refused = nobody.post("/connectors", json=body)
    assert refused.status_code == 401 and refused.json()["error_code"] == 401
    assert client.get("/connectors", auth=VIEWER).status_code == 200
    assert "nope" not in client.get("/connectors").json()


def test_internal_requests_need_the_session_key(cluster: EmbeddedConnectCluster, tmp_path: Path) -> None:
    leader = cluster.leader()
    cluster.create_connector("internal", source_config(tmp_path, "internal"))
    cluster.wait_for_running("internal", timeout=60)
    client = cluster.client(leader)  # admin credentials and a trusted client certificate
    current = [t["config"] for t in client.get("/connectors/internal/tasks").json()]
    body = orjson.dumps(current)
    headers = {"content-type": "application/json"}

    unsigned = client.put("/connectors/internal/tasks", content=body, headers=headers)
    assert unsigned.status_code == 403, unsigned.text
    assert unsigned.json() == {"error_code": 403, "message": "Internal request missing required signature"}

    forged = {
        **headers,
        "X-Connect-Authorization": "AAAA",
        "X-Connect-Request-Signature-Algorithm": "HmacSHA256",
    }
    bad = client.put("/connectors/internal/tasks", content=body, headers=forged)
    assert bad.status_code == 403 and "invalid signature" in bad.json()["message"]

    key = cluster.workers[leader].herder._session_key
    assert key is not None
    signed = {**headers, **sign(key, "HmacSHA256", body)}
    # A worker's signed request needs no user: the signature is its credential.
    with anonymous(cluster, leader) as worker:
        accepted = worker.put("/connectors/internal/tasks", content=body, headers=signed)
    assert accepted.status_code == 204, accepted.text
