"""Certificates made in the test run (no private key is ever committed): a CA, and server
and client certificates for 127.0.0.1/localhost signed by it, as PEM files or PKCS12 stores."""

from __future__ import annotations

import datetime as dt
import ipaddress
from pathlib import Path
from typing import Any


class TestCA:
    """A certificate authority made for one test: ``issue`` signs node certificates."""

    __test__ = False  # not a pytest test class

    def __init__(self, name: str = "contract test CA") -> None:
        from cryptography import x509
        from cryptography.hazmat.primitives import hashes
        from cryptography.hazmat.primitives.asymmetric import ec
        from cryptography.x509.oid import NameOID

        self.now = dt.datetime.now(dt.UTC)
        self.key = ec.generate_private_key(ec.SECP256R1())
        self.name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)])
        self.certificate = (
            x509.CertificateBuilder()
            .subject_name(self.name)
            .issuer_name(self.name)
            .public_key(self.key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(self.now - dt.timedelta(minutes=5))
            .not_valid_after(self.now + dt.timedelta(days=1))
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
            .add_extension(
                x509.KeyUsage(
                    digital_signature=True,
                    content_commitment=False,
                    key_encipherment=False,
                    data_encipherment=False,
                    key_agreement=False,
                    key_cert_sign=True,
                    crl_sign=True,
                    encipher_only=False,
                    decipher_only=False,
                ),
                critical=True,
            )
            .add_extension(x509.SubjectKeyIdentifier.from_public_key(self.key.public_key()), critical=False)
            .sign(self.key, hashes.SHA256())
        )

    def write_pem(self, path: Path) -> Path:
        from cryptography.hazmat.primitives import serialization

        path.write_bytes(self.certificate.public_bytes(serialization.Encoding.PEM))
        return path

    def issue(
        self, common_name: str = "127.0.0.1", server: bool = True, client: bool = False
    ) -> tuple[Any, Any]:
        """(private key, certificate) for 127.0.0.1 and localhost, usable as a TLS server
        and/or client certificate."""
        from cryptography import x509
        from cryptography.hazmat.primitives import hashes
        from cryptography.hazmat.primitives.asymmetric import ec
        from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

        usages = ([ExtendedKeyUsageOID.SERVER_AUTH] if server else []) + (
            [ExtendedKeyUsageOID.CLIENT_AUTH] if client else []
        )
        key = ec.generate_private_key(ec.SECP256R1())
        cert = (
            x509.CertificateBuilder()
            .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)]))
            .issuer_name(self.name)
            .public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(self.now - dt.timedelta(minutes=5))
            .not_valid_after(self.now + dt.timedelta(days=1))
            .add_extension(
                x509.SubjectAlternativeName(
                    [x509.IPAddress(ipaddress.ip_address("127.0.0.1")), x509.DNSName("localhost")]
                ),
                critical=False,
            )
            .add_extension(x509.ExtendedKeyUsage(usages), critical=False)
            .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
            .add_extension(
                x509.AuthorityKeyIdentifier.from_issuer_public_key(self.key.public_key()), critical=False
            )
            .sign(self.key, hashes.SHA256())
        )
        return key, cert

    def pem_files(
        self,
        directory: Path,
        name: str,
        server: bool = True,
        client: bool = False,
        key_password: str | None = None,
    ) -> tuple[Path, Path]:
        """(certificate, key) PEM files of a new certificate; the key is encrypted with
        ``key_password`` if given."""
        from cryptography.hazmat.primitives import serialization

        key, cert = self.issue(server=server, client=client)
        cert_path, key_path = directory / f"{name}.pem", directory / f"{name}.key"
        cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
        encryption = (
            serialization.BestAvailableEncryption(key_password.encode())
            if key_password
            else serialization.NoEncryption()
        )
        key_path.write_bytes(
            key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, encryption)
        )
        return cert_path, key_path

    def pkcs12_keystore(
        self, directory: Path, name: str, password: str, server: bool = True, client: bool = False
    ) -> Path:
        """A PKCS12 keystore with a new key and its certificate (and the CA's)."""
        from cryptography.hazmat.primitives.serialization import BestAvailableEncryption, pkcs12

        key, cert = self.issue(server=server, client=client)
        path = directory / f"{name}.p12"
        path.write_bytes(
            pkcs12.serialize_key_and_certificates(
                name.encode(), key, cert, [self.certificate], BestAvailableEncryption(password.encode())
            )
        )
        return path

    def pkcs12_truststore(self, directory: Path, name: str, password: str) -> Path:
        """A PKCS12 truststore holding the CA's certificate."""
        from cryptography.hazmat.primitives.serialization import BestAvailableEncryption, pkcs12

        path = directory / f"{name}.p12"
        path.write_bytes(
            pkcs12.serialize_key_and_certificates(
                b"ca", None, None, [self.certificate], BestAvailableEncryption(password.encode())
            )
        )
        return path


def tls_files(tmp_path: Path) -> tuple[Path, Path, Path]:
    """(CA, server certificate, server key) PEM files for 127.0.0.1/localhost."""
    ca = TestCA()
    ca_path = ca.write_pem(tmp_path / "ca.pem")
    cert_path, key_path = ca.pem_files(tmp_path, "node")
    return ca_path, cert_path, key_path
