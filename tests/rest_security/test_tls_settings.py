"""Which TLS keys the REST API reads, and the contexts built from PKCS12 and PEM stores."""

from __future__ import annotations

import os
import ssl
import tempfile
from pathlib import Path

import pytest

from connect.rest.tls import (
    TlsError,
    client_context,
    openssl_cipher_name,
    server_context,
    tls_settings_from,
)
from tests.certificates import TestCA


@pytest.fixture(scope="module")
def ca() -> TestCA:
    return TestCA()


def test_prefixed_keys_are_all_or_nothing() -> None:
    values = {
        "ssl.keystore.location": "/broker.p12",
        "ssl.client.auth": "required",
        "listeners.https.ssl.keystore.location": "/rest.p12",
        "listeners.https.ssl.keystore.type": "pkcs12",
    }
    settings = tls_settings_from(values)
    assert settings.prefix == "listeners.https."
    assert settings.keys.keystore_location == "/rest.p12"
    assert settings.keys.keystore_type == "PKCS12"
    assert settings.client_auth == "none"  # the top-level key is not looked at (Kafka's rule)
    top = tls_settings_from({k: v for k, v in values.items() if not k.startswith("listeners.")})
    assert (top.prefix, top.keys.keystore_location, top.client_auth) == ("", "/broker.p12", "required")
    assert top.keys.keystore_type == "JKS"  # Kafka's default
    assert top.keys.enabled_protocols == ["TLSv1.2", "TLSv1.3"]


def test_client_auth_has_two_names() -> None:
    assert tls_settings_from({"ssl.client.authentication": "REQUESTED"}).client_auth == "requested"
    with pytest.raises(TlsError, match="disagree"):
        tls_settings_from({"ssl.client.auth": "none", "ssl.client.authentication": "required"})


def test_bad_values_name_the_key_as_written() -> None:
    with pytest.raises(TlsError, match=r"^listeners\.https\.ssl\.client\.auth: Invalid value maybe"):
        tls_settings_from({"listeners.https.ssl.client.auth": "maybe"})
    with pytest.raises(TlsError, match=r"^ssl\.keystore\.type: Invalid value BKS"):
        tls_settings_from({"ssl.keystore.type": "BKS"})


def test_pkcs12_keystore_and_truststore(ca: TestCA, tmp_path: Path) -> None:
    keystore = ca.pkcs12_keystore(tmp_path, "node", "ks-pw")
    truststore = ca.pkcs12_truststore(tmp_path, "trust", "ts-pw")
    settings = tls_settings_from(
        {
            "ssl.keystore.location": str(keystore),
            "ssl.keystore.password": "ks-pw",
            "ssl.keystore.type": "PKCS12",
            "ssl.truststore.location": str(truststore),
            "ssl.truststore.password": "ts-pw",
            "ssl.truststore.type": "PKCS12",
            "ssl.client.auth": "requested",
        }
    )
    before = set(os.listdir(tempfile.gettempdir()))
    server = server_context(settings)
    assert server.verify_mode == ssl.CERT_OPTIONAL
    assert server.minimum_version == ssl.TLSVersion.TLSv1_2
    client = client_context(settings)
    assert client.check_hostname and client.verify_mode == ssl.CERT_REQUIRED
    assert len(client.get_ca_certs()) == 1
    # The temporary PEM files of the keys are gone once the contexts are built.
    leftovers = {
        n for n in set(os.listdir(tempfile.gettempdir())) - before if n.startswith("sluiceway-rest-")
    }
    assert leftovers == set()


def test_a_jks_typed_pkcs12_file_is_read_as_java_does(ca: TestCA, tmp_path: Path) -> None:
    keystore = ca.pkcs12_keystore(tmp_path, "node", "pw")
    settings = tls_settings_from({"ssl.keystore.location": str(keystore), "ssl.keystore.password": "pw"})
    assert server_context(settings).verify_mode == ssl.CERT_NONE


def test_pem_keystore_with_encrypted_key_and_inline_values(ca: TestCA, tmp_path: Path) -> None:
    cert, key = ca.pem_files(tmp_path, "node", key_password="key-pw")
    both = tmp_path / "keystore.pem"
    both.write_bytes(key.read_bytes() + cert.read_bytes())
    ca_pem = ca.write_pem(tmp_path / "ca.pem")
    settings = tls_settings_from(
        {
            "ssl.keystore.type": "PEM",
            "ssl.keystore.location": str(both),
            "ssl.key.password": "key-pw",
            "ssl.truststore.type": "PEM",
            "ssl.truststore.location": str(ca_pem),
            "ssl.client.auth": "required",
        }
    )
    assert server_context(settings).verify_mode == ssl.CERT_REQUIRED
    inline = tls_settings_from(
        {
            "ssl.keystore.type": "PEM",
            "ssl.keystore.key": key.read_text(),
            "ssl.keystore.certificate.chain": cert.read_text(),
            "ssl.key.password": "key-pw",
            "ssl.truststore.type": "PEM",
            "ssl.truststore.certificates": ca_pem.read_text(),
            "ssl.endpoint.identification.algorithm": "",
        }
    )
    assert server_context(inline).verify_mode == ssl.CERT_NONE
    assert not client_context(inline).check_hostname
    with pytest.raises(
        TlsError, match=r"ssl\.keystore\.location=.*cannot read the private key.*ssl\.key\.password"
    ):
        server_context(tls_settings_from({"ssl.keystore.type": "PEM", "ssl.keystore.location": str(both)}))


def test_store_problems_name_the_key(ca: TestCA, tmp_path: Path) -> None:
    jks = tmp_path / "server.jks"
    jks.write_bytes(bytes.fromhex("feedfeed00000002") + b"\0" * 32)
    with pytest.raises(TlsError) as caught:
        server_context(tls_settings_from({"listeners.https.ssl.keystore.location": str(jks)}))
    message = str(caught.value)
    assert message.startswith(f"listeners.https.ssl.keystore.location={jks} is a JKS store")
    assert "keytool -importkeystore" in message and "-deststoretype PKCS12" in message

    keystore = ca.pkcs12_keystore(tmp_path, "node", "right")
    with pytest.raises(TlsError, match=r"ssl\.keystore\.password\) is wrong"):
        server_context(
            tls_settings_from({"ssl.keystore.location": str(keystore), "ssl.keystore.password": "x"})
        )
    with pytest.raises(TlsError, match=r"ssl\.keystore\.location=/nonexistent\.p12: cannot read"):
        server_context(tls_settings_from({"ssl.keystore.location": "/nonexistent.p12"}))
    with pytest.raises(TlsError, match=r"an https listener needs a keystore: set ssl\.keystore\.location"):
        server_context(tls_settings_from({}))


def test_protocols_and_cipher_suites(ca: TestCA, tmp_path: Path) -> None:
    keystore = str(ca.pkcs12_keystore(tmp_path, "node", "pw"))
    base = {"ssl.keystore.location": keystore, "ssl.keystore.password": "pw"}
    only13 = server_context(tls_settings_from({**base, "ssl.enabled.protocols": "TLSv1.3"}))
    assert only13.minimum_version == only13.maximum_version == ssl.TLSVersion.TLSv1_3
    with pytest.raises(TlsError, match=r"ssl\.enabled\.protocols: SSLv3"):
        server_context(tls_settings_from({**base, "ssl.enabled.protocols": "SSLv3,TLSv1.2"}))
    with pytest.raises(TlsError, match="contiguous range"):
        server_context(tls_settings_from({**base, "ssl.enabled.protocols": "TLSv1.1,TLSv1.3"}))

    suites = "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256,ECDHE-ECDSA-AES256-GCM-SHA384"
    ctx = server_context(tls_settings_from({**base, "ssl.cipher.suites": suites}))
    names = {c["name"] for c in ctx.get_ciphers() if c["protocol"] == "TLSv1.2"}
    assert names == {"ECDHE-ECDSA-AES128-GCM-SHA256", "ECDHE-ECDSA-AES256-GCM-SHA384"}
    assert ctx.maximum_version == ssl.TLSVersion.TLSv1_2  # no TLS 1.3 suite was listed
    tls13 = server_context(tls_settings_from({**base, "ssl.cipher.suites": "TLS_AES_128_GCM_SHA256"}))
    assert tls13.minimum_version == ssl.TLSVersion.TLSv1_3
    with pytest.raises(TlsError, match=r"ssl\.cipher\.suites: TLS_FOO_WITH_BAR is not a cipher suite"):
        server_context(tls_settings_from({**base, "ssl.cipher.suites": "TLS_FOO_WITH_BAR"}))


@pytest.mark.parametrize(
    ("iana", "openssl"),
    [
        ("TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384", "ECDHE-RSA-AES256-GCM-SHA384"),
        ("TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256", "ECDHE-ECDSA-CHACHA20-POLY1305"),
        ("TLS_DHE_RSA_WITH_AES_128_CBC_SHA256", "DHE-RSA-AES128-SHA256"),
        ("TLS_RSA_WITH_AES_128_GCM_SHA256", "AES128-GCM-SHA256"),
        ("TLS_AES_128_GCM_SHA256", "TLS_AES_128_GCM_SHA256"),  # TLS 1.3: one name everywhere
        ("ECDHE-RSA-AES128-SHA", "ECDHE-RSA-AES128-SHA"),
    ],
)
def test_iana_names_become_openssl_names(iana: str, openssl: str) -> None:
    assert openssl_cipher_name(iana) == openssl
