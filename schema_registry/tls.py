"""TLS of the registry's listener and of its calls to the primary, from Confluent's keys
(rest-utils' ``RestConfig``, which the Schema Registry's config extends).

- ``ssl.keystore.location`` / ``ssl.keystore.password`` / ``ssl.key.password`` /
  ``ssl.keystore.type``: ``PKCS12``, ``PEM`` (one file with the private key and the
  certificate chain) or ``JKS``, the default type, which is read when the file is really a
  PKCS12 store (as Java's keystore loader does) and is otherwise an error saying how to
  convert it: without a JVM there is no JKS reader;
- ``ssl.truststore.location`` / ``ssl.truststore.password`` / ``ssl.truststore.type``: the
  CAs that client certificates (and, for forwarding, the primary's) are checked against;
  without one the system's CAs are trusted, as the JVM falls back to its own;
- ``ssl.client.authentication`` = ``NONE`` | ``REQUESTED`` | ``REQUIRED`` (and the older
  boolean ``ssl.client.auth``: ``true`` means ``REQUIRED``);
- ``ssl.enabled.protocols`` (a contiguous range of ``TLSv1.2``, ``TLSv1.3``; default both)
  and ``ssl.cipher.suites`` (OpenSSL's names of TLS 1.2 suites);
- ``ssl.endpoint.identification.algorithm`` for the calls to the primary: ``https``
  (default) checks its host name, empty does not.

The keys are parsed when the configuration is (errors name the key); the stores are read
when a context is made. Python's ``ssl`` loads keys only from files, so a PKCS12 key goes
through a temporary PEM file: created 0600, its key encrypted with a one-time password
held in memory, deleted as soon as the context has loaded it.
"""

from __future__ import annotations

import contextlib
import os
import re
import secrets
import ssl
import tempfile
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cryptography import x509
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.serialization import pkcs12

from schema_registry.config_error import ConfigError

__all__ = ["CLIENT_AUTHENTICATION", "TlsConfig"]

CLIENT_AUTHENTICATION = ("NONE", "REQUESTED", "REQUIRED")
_STORE_TYPES = ("JKS", "PKCS12", "PEM")
_JAVA_MAGIC = (bytes.fromhex("feedfeed"), bytes.fromhex("cececece"))  # JKS, JCEKS
_PRIVATE_KEY_PEM = re.compile(
    rb"-----BEGIN ([A-Z ]*)PRIVATE KEY-----.+?-----END \1PRIVATE KEY-----", re.DOTALL
)
_PROTOCOLS = {"TLSv1.2": ssl.TLSVersion.TLSv1_2, "TLSv1.3": ssl.TLSVersion.TLSv1_3}


def _store_type(values: Mapping[str, str], key: str) -> str:
    raw = values.get(key, "").strip().upper() or "JKS"
    if raw not in _STORE_TYPES:
        raise ConfigError(f"{key}={raw}: expected one of {', '.join(_STORE_TYPES)}")
    return raw


def _client_authentication(values: Mapping[str, str]) -> str:
    named = values.get("ssl.client.authentication", "").strip().upper()
    if named:
        if named not in CLIENT_AUTHENTICATION:
            raise ConfigError(
                f"ssl.client.authentication={named}: expected one of {', '.join(CLIENT_AUTHENTICATION)}"
            )
        return named
    old = values.get("ssl.client.auth", "").strip().lower()
    if old not in ("", "true", "false"):
        raise ConfigError(f"ssl.client.auth={old}: expected true or false")
    return "REQUIRED" if old == "true" else "NONE"


@dataclass(frozen=True)
class TlsConfig:
    """The ``ssl.*`` keys of the registry."""

    keystore_location: str = ""
    keystore_password: str | None = field(default=None, repr=False)
    keystore_type: str = "JKS"
    key_password: str | None = field(default=None, repr=False)
    truststore_location: str = ""
    truststore_password: str | None = field(default=None, repr=False)
    truststore_type: str = "JKS"
    client_authentication: str = "NONE"
    protocols: tuple[str, ...] = ("TLSv1.2", "TLSv1.3")
    cipher_suites: tuple[str, ...] = ()
    check_hostname: bool = True

    @classmethod
    def parse(cls, values: Mapping[str, str]) -> TlsConfig:
        protocols = tuple(
            p.strip() for p in values.get("ssl.enabled.protocols", "TLSv1.2,TLSv1.3").split(",") if p.strip()
        )
        unknown = [p for p in protocols if p not in _PROTOCOLS]
        if unknown or not protocols:
            raise ConfigError(
                f"ssl.enabled.protocols={','.join(protocols)}: the protocols served are "
                f"{', '.join(_PROTOCOLS)}"
            )
        algorithm = values.get("ssl.endpoint.identification.algorithm", "https").strip().lower()
        if algorithm not in ("https", ""):
            raise ConfigError(f"ssl.endpoint.identification.algorithm={algorithm}: expected https or empty")
        return cls(
            keystore_location=values.get("ssl.keystore.location", "").strip(),
            keystore_password=values.get("ssl.keystore.password") or None,
            keystore_type=_store_type(values, "ssl.keystore.type"),
            key_password=values.get("ssl.key.password") or None,
            truststore_location=values.get("ssl.truststore.location", "").strip(),
            truststore_password=values.get("ssl.truststore.password") or None,
            truststore_type=_store_type(values, "ssl.truststore.type"),
            client_authentication=_client_authentication(values),
            protocols=protocols,
            cipher_suites=tuple(
                c.strip() for c in values.get("ssl.cipher.suites", "").split(",") if c.strip()
            ),
            check_hostname=algorithm == "https",
        )

    # -- contexts ---------------------------------------------------------------------------

    def server_context(self) -> ssl.SSLContext:
        """The context of an https listener."""
        if not self.keystore_location:
            raise ConfigError(
                "an https listener needs a keystore: set ssl.keystore.location (and ssl.keystore.password)"
            )
        ctx = self._context(ssl.PROTOCOL_TLS_SERVER)
        self._load_key(ctx)
        if self.client_authentication != "NONE":
            self._load_trust(ctx, ssl.Purpose.CLIENT_AUTH)
            required = self.client_authentication == "REQUIRED"
            ctx.verify_mode = ssl.CERT_REQUIRED if required else ssl.CERT_OPTIONAL
        ctx.set_alpn_protocols(["http/1.1"])
        return ctx

    def client_context(self) -> ssl.SSLContext:
        """The context of the calls to the primary: trusts the truststore (or the system's
        CAs) and presents the keystore's certificate when the primary asks for one."""
        ctx = self._context(ssl.PROTOCOL_TLS_CLIENT)
        self._load_trust(ctx, ssl.Purpose.SERVER_AUTH)
        if self.keystore_location:
            self._load_key(ctx)
        ctx.check_hostname = self.check_hostname
        return ctx

    def _context(self, protocol: int) -> ssl.SSLContext:
        ctx = ssl.SSLContext(protocol)
        versions = sorted(_PROTOCOLS[p] for p in self.protocols)
        ctx.minimum_version, ctx.maximum_version = versions[0], versions[-1]
        if self.cipher_suites:
            try:
                ctx.set_ciphers(":".join(self.cipher_suites))
            except ssl.SSLError:
                raise ConfigError(
                    f"ssl.cipher.suites={','.join(self.cipher_suites)}: none is a TLS 1.2 suite OpenSSL has"
                ) from None
        return ctx

    # -- stores -----------------------------------------------------------------------------

    def _load_key(self, ctx: ssl.SSLContext) -> None:
        location = self.keystore_location
        data = _read("ssl.keystore.location", location)
        if self.keystore_type == "PEM":
            # Read here rather than by OpenSSL, which would prompt on the terminal for the
            # password of an encrypted key given none.
            key, chain = _pem_key(location, data, self.key_password), _pem_certificates(location, data)
            with _pem_file(key, chain) as (path, password):
                ctx.load_cert_chain(path, password=password)
            return
        _not_java("ssl.keystore", location, data)
        key, cert, more = _pkcs12(
            "ssl.keystore", location, data, [self.keystore_password, self.key_password, None]
        )
        if key is None or cert is None:
            raise ConfigError(f"ssl.keystore.location={location} holds no private key and certificate")
        with _pem_file(key, [cert, *more]) as (path, password):
            try:
                ctx.load_cert_chain(path, password=password)
            except ssl.SSLError as exc:
                raise ConfigError(
                    f"ssl.keystore.location={location}: the key and certificate cannot be used ({exc})"
                ) from None

    def _load_trust(self, ctx: ssl.SSLContext, purpose: ssl.Purpose) -> None:
        location = self.truststore_location
        if not location:
            ctx.load_default_certs(purpose)
            return
        data = _read("ssl.truststore.location", location)
        if self.truststore_type == "PEM":
            try:
                certs = list(x509.load_pem_x509_certificates(data))
            except ValueError:
                raise ConfigError(f"ssl.truststore.location={location}: no PEM certificate in it") from None
        else:
            _not_java("ssl.truststore", location, data)
            _, cert, more = _pkcs12("ssl.truststore", location, data, [self.truststore_password, None])
            certs = ([cert] if cert is not None else []) + list(more)
            if not certs:
                raise ConfigError(f"ssl.truststore.location={location} holds no certificate")
        ctx.load_verify_locations(
            cadata="".join(c.public_bytes(serialization.Encoding.PEM).decode("ascii") for c in certs)
        )


def _read(key: str, location: str) -> bytes:
    try:
        return Path(location).read_bytes()
    except OSError as exc:
        raise ConfigError(f"{key}={location}: cannot read: {exc.strerror}") from None


def _pem_key(location: str, data: bytes, password: str | None) -> Any:
    found = _PRIVATE_KEY_PEM.search(data)
    if found is None:
        raise ConfigError(f"ssl.keystore.location={location}: no PEM private key in it")
    encrypted = b"ENCRYPTED" in found.group()
    try:
        return serialization.load_pem_private_key(
            found.group(), password.encode() if encrypted and password is not None else None
        )
    except (ValueError, TypeError) as exc:
        raise ConfigError(
            f"ssl.keystore.location={location}: cannot read the private key ({exc}); an encrypted key "
            "needs ssl.key.password"
        ) from None


def _pem_certificates(location: str, data: bytes) -> list[x509.Certificate]:
    try:
        return list(x509.load_pem_x509_certificates(data))
    except ValueError:
        raise ConfigError(f"ssl.keystore.location={location}: no PEM certificate in it") from None


def _not_java(store: str, location: str, data: bytes) -> None:
    """A real JKS/JCEKS store cannot be read without Java: say how to convert it."""
    if data.startswith(_JAVA_MAGIC):
        raise ConfigError(
            f"{store}.location={location} is a Java (JKS) store, which only Java can read; convert it with: "
            f"keytool -importkeystore -srckeystore {location} -destkeystore {Path(location).stem}.p12 "
            f"-deststoretype PKCS12, then set {store}.type=PKCS12"
        )


def _pkcs12(
    store: str, location: str, data: bytes, passwords: list[str | None]
) -> tuple[Any, x509.Certificate | None, list[x509.Certificate]]:
    """Open a PKCS12 store, trying each password (Java keeps a store and a key password)."""
    for password in passwords:
        try:
            return pkcs12.load_key_and_certificates(data, password.encode() if password is not None else None)
        except ValueError:
            continue
    raise ConfigError(f"{store}.location={location}: not a PKCS12 store, or {store}.password is wrong")


@contextlib.contextmanager
def _pem_file(key: Any, chain: list[x509.Certificate]) -> Iterator[tuple[str, str]]:
    """(path, password) of a 0600 temporary PEM file holding the chain and the encrypted
    key; the file is gone when the block ends."""
    password = secrets.token_urlsafe(32)
    fd, path = tempfile.mkstemp(prefix="schema-registry-", suffix=".pem")  # mkstemp: 0600
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(
                key.private_bytes(
                    serialization.Encoding.PEM,
                    serialization.PrivateFormat.PKCS8,
                    serialization.BestAvailableEncryption(password.encode()),
                )
            )
            for cert in chain:
                out.write(cert.public_bytes(serialization.Encoding.PEM))
        yield path, password
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(path)
