"""TLS of the REST API: the ``ssl.SSLContext`` of https listeners, and of the client a
worker uses to forward requests to other workers, from Kafka Connect's keys.

Which keys: as in Kafka's ``SSLUtils``, the ``listeners.https.``-prefixed keys if there is
at least one of them, and then only those; otherwise the top-level ``ssl.*`` keys (which
the worker's Kafka clients share). Both sides read the same set:

- ``ssl.keystore.location`` / ``.password`` / ``.type`` (``PKCS12``, ``PEM``; ``JKS``, the
  default type, is read when the file is really PKCS12, as Java does, and otherwise is an
  error saying how to convert it with keytool: there is no JKS reader without Java),
  ``ssl.key.password``, and for PEM also ``ssl.keystore.key`` + ``ssl.keystore.certificate.chain``;
- ``ssl.truststore.location`` / ``.password`` / ``.type``, or PEM ``ssl.truststore.certificates``;
- ``ssl.client.auth`` = ``none`` | ``requested`` | ``required`` (the key Kafka's REST server
  reads; ``ssl.client.authentication`` is accepted as another name of it);
- ``ssl.enabled.protocols`` (a contiguous range of TLSv1.2, TLSv1.3...), ``ssl.cipher.suites``
  (IANA names as Java takes them, or OpenSSL's; TLS 1.3 suites cannot be narrowed by Python's
  ssl module, so listing only TLS 1.3 suites means TLS 1.3 only);
- ``ssl.endpoint.identification.algorithm`` (client side: ``https`` checks the other
  worker's host name, empty does not).

Python's ``ssl`` loads keys only from files, so a key from a PKCS12 store or from config
values goes through a temporary PEM file: created 0600, its key encrypted with a one-time
password held in memory, deleted as soon as the context has loaded it.
"""

from __future__ import annotations

import contextlib
import logging
import os
import re
import secrets
import ssl
import tempfile
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Literal

from cryptography import x509
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.serialization import pkcs12
from pydantic import BeforeValidator, Field, SecretStr

from connect.api.config import CommaList, ConfigModel, ConfigValidationError, lower_case, upper_case
from connect.api.errors import ConnectException
from connect.runtime.config import WorkerConfig

log = logging.getLogger(__name__)

HTTPS_PREFIX = "listeners.https."

_JKS_MAGIC = bytes.fromhex("feedfeed")
_JCEKS_MAGIC = bytes.fromhex("cececece")
_PRIVATE_KEY_PEM = re.compile(
    rb"-----BEGIN ([A-Z ]*)PRIVATE KEY-----.+?-----END \1PRIVATE KEY-----", re.DOTALL
)


class TlsError(ConnectException):
    """TLS settings or stores that cannot be used; the message names the key."""


class _SslKeys(ConfigModel):
    """The ``ssl.*`` keys the REST server and its client read (without prefix)."""

    keystore_location: str | None = Field(None, alias="ssl.keystore.location")
    keystore_password: SecretStr | None = Field(None, alias="ssl.keystore.password")
    keystore_type: Annotated[Literal["JKS", "PKCS12", "PEM", "JCEKS"], BeforeValidator(upper_case)] = Field(
        "JKS", alias="ssl.keystore.type"
    )
    keystore_key: SecretStr | None = Field(None, alias="ssl.keystore.key")
    keystore_certificate_chain: str | None = Field(None, alias="ssl.keystore.certificate.chain")
    key_password: SecretStr | None = Field(None, alias="ssl.key.password")
    truststore_location: str | None = Field(None, alias="ssl.truststore.location")
    truststore_password: SecretStr | None = Field(None, alias="ssl.truststore.password")
    truststore_type: Annotated[Literal["JKS", "PKCS12", "PEM", "JCEKS"], BeforeValidator(upper_case)] = Field(
        "JKS", alias="ssl.truststore.type"
    )
    truststore_certificates: str | None = Field(None, alias="ssl.truststore.certificates")
    client_auth: Annotated[Literal["none", "requested", "required"] | None, BeforeValidator(lower_case)] = (
        Field(None, alias="ssl.client.auth")
    )
    client_authentication: Annotated[
        Literal["none", "requested", "required"] | None, BeforeValidator(lower_case)
    ] = Field(None, alias="ssl.client.authentication")
    enabled_protocols: CommaList = Field(
        default_factory=lambda: ["TLSv1.2", "TLSv1.3"], alias="ssl.enabled.protocols"
    )
    cipher_suites: CommaList = Field(default_factory=list, alias="ssl.cipher.suites")
    endpoint_identification_algorithm: Annotated[Literal["https", ""], BeforeValidator(lower_case)] = Field(
        "https", alias="ssl.endpoint.identification.algorithm"
    )


@dataclass(frozen=True)
class TlsSettings:
    """The REST TLS keys of a worker, and the prefix they were found under."""

    keys: _SslKeys
    prefix: str = ""

    def name(self, key: str) -> str:
        """``key`` as the user wrote it (with the prefix, if that is where it came from)."""
        return self.prefix + key

    @property
    def client_auth(self) -> Literal["none", "requested", "required"]:
        return self.keys.client_auth or self.keys.client_authentication or "none"

    @property
    def has_keystore(self) -> bool:
        return bool(self.keys.keystore_location or self.keys.keystore_key)


def tls_settings_from(values: Mapping[str, Any]) -> TlsSettings:
    """The REST TLS settings among a worker's keys (Kafka's all-or-nothing prefix rule)."""
    prefixed = {k[len(HTTPS_PREFIX) :]: v for k, v in values.items() if k.startswith(HTTPS_PREFIX)}
    prefix = HTTPS_PREFIX if prefixed else ""
    chosen = prefixed if prefixed else {k: v for k, v in values.items() if k.startswith("ssl.")}
    wanted = {f.alias for f in _SslKeys.model_fields.values()}
    try:
        keys = _SslKeys.parse({k: v for k, v in chosen.items() if k in wanted})
    except ConfigValidationError as exc:
        raise TlsError("; ".join(f"{prefix}{i.key}: {i.message}" for i in exc.issues)) from None
    if keys.client_auth and keys.client_authentication and keys.client_auth != keys.client_authentication:
        raise TlsError(
            f"{prefix}ssl.client.auth={keys.client_auth} and {prefix}ssl.client.authentication="
            f"{keys.client_authentication} disagree; set one of them"
        )
    return TlsSettings(keys, prefix)


def tls_settings(config: WorkerConfig) -> TlsSettings:
    return tls_settings_from(config.originals())


# -- stores ----------------------------------------------------------------------------------


def _secret(value: SecretStr | None) -> bytes | None:
    return value.get_secret_value().encode("utf-8") if value is not None else None


def _read(settings: TlsSettings, key: str, location: str) -> bytes:
    try:
        return Path(location).read_bytes()
    except OSError as exc:
        raise TlsError(f"{settings.name(key)}={location}: cannot read: {exc.strerror}") from None


def _pkcs12(
    settings: TlsSettings, key: str, location: str, data: bytes, passwords: list[bytes | None]
) -> tuple[Any, x509.Certificate | None, list[x509.Certificate]]:
    """Open a PKCS12 store, trying each password (Java keeps a store and a key password)."""
    for password in passwords:
        try:
            return pkcs12.load_key_and_certificates(data, password)
        except ValueError:
            continue
    raise TlsError(
        f"{settings.name(key)}={location}: not a PKCS12 store, or the password "
        f"({settings.name(key.replace('location', 'password'))}) is wrong"
    )


def _java_store(settings: TlsSettings, key: str, location: str, data: bytes, kind: str) -> None:
    """A JKS/JCEKS store cannot be read here: say how to convert it."""
    if data.startswith((_JKS_MAGIC, _JCEKS_MAGIC)):
        raise TlsError(
            f"{settings.name(key)}={location} is a {kind} store, which only Java can read; convert it "
            f"with: keytool -importkeystore -srckeystore {location} -destkeystore {Path(location).stem}.p12 "
            f"-deststoretype PKCS12, then set {settings.name(key.replace('location', 'type'))}=PKCS12"
        )


def _key_material(settings: TlsSettings) -> tuple[Any, list[x509.Certificate]]:
    """(private key, certificate chain) of the keystore."""
    k = settings.keys
    key_password = _secret(k.key_password)
    if k.keystore_key is not None:
        if k.keystore_type != "PEM":
            raise TlsError(
                f"{settings.name('ssl.keystore.key')} needs {settings.name('ssl.keystore.type')}=PEM"
            )
        if not k.keystore_certificate_chain:
            raise TlsError(
                f"{settings.name('ssl.keystore.key')} needs {settings.name('ssl.keystore.certificate.chain')}"
            )
        key_pem = k.keystore_key.get_secret_value().encode("utf-8")
        return (
            _pem_key(settings, "ssl.keystore.key", "(config value)", key_pem, key_password),
            _pem_certificates(
                settings,
                "ssl.keystore.certificate.chain",
                "(config value)",
                k.keystore_certificate_chain.encode(),
            ),
        )
    location = k.keystore_location or ""
    data = _read(settings, "ssl.keystore.location", location)
    if k.keystore_type == "PEM":
        return (
            _pem_key(settings, "ssl.keystore.location", location, data, key_password),
            _pem_certificates(settings, "ssl.keystore.location", location, data),
        )
    if k.keystore_type in ("JKS", "JCEKS"):
        _java_store(settings, "ssl.keystore.location", location, data, k.keystore_type)
    store_password = _secret(k.keystore_password)
    key, cert, more = _pkcs12(
        settings, "ssl.keystore.location", location, data, [store_password, key_password, None]
    )
    if key is None or cert is None:
        raise TlsError(
            f"{settings.name('ssl.keystore.location')}={location} holds no private key and certificate"
        )
    return key, [cert, *more]


def _pem_key(settings: TlsSettings, key: str, location: str, data: bytes, password: bytes | None) -> Any:
    m = _PRIVATE_KEY_PEM.search(data)
    if m is None:
        raise TlsError(f"{settings.name(key)}={location}: no PEM private key in it")
    try:
        return serialization.load_pem_private_key(m.group(), password if b"ENCRYPTED" in m.group() else None)
    except (ValueError, TypeError) as exc:
        raise TlsError(
            f"{settings.name(key)}={location}: cannot read the private key ({exc}); an encrypted key "
            f"needs {settings.name('ssl.key.password')}"
        ) from None


def _pem_certificates(settings: TlsSettings, key: str, location: str, data: bytes) -> list[x509.Certificate]:
    try:
        return list(x509.load_pem_x509_certificates(data))
    except ValueError:
        raise TlsError(f"{settings.name(key)}={location}: no PEM certificate in it") from None


def _trusted_pem(settings: TlsSettings) -> str | None:
    """The trusted certificates, as PEM text (None: no truststore configured)."""
    k = settings.keys
    if k.truststore_certificates:
        certs = _pem_certificates(
            settings, "ssl.truststore.certificates", "(config value)", k.truststore_certificates.encode()
        )
    elif k.truststore_location:
        location = k.truststore_location
        data = _read(settings, "ssl.truststore.location", location)
        if k.truststore_type == "PEM":
            certs = _pem_certificates(settings, "ssl.truststore.location", location, data)
        else:
            if k.truststore_type in ("JKS", "JCEKS"):
                _java_store(settings, "ssl.truststore.location", location, data, k.truststore_type)
            _, cert, more = _pkcs12(
                settings, "ssl.truststore.location", location, data, [_secret(k.truststore_password), None]
            )
            certs = ([cert] if cert is not None else []) + list(more)
            if not certs:
                raise TlsError(f"{settings.name('ssl.truststore.location')}={location} holds no certificate")
    else:
        return None
    return "".join(c.public_bytes(serialization.Encoding.PEM).decode("ascii") for c in certs)


@contextlib.contextmanager
def _pem_file(key: Any, chain: list[x509.Certificate]) -> Iterator[tuple[str, str]]:
    """(path, password) of a 0600 temporary PEM file with the chain and the encrypted key;
    the file is gone when the block ends."""
    password = secrets.token_urlsafe(32)
    fd, path = tempfile.mkstemp(prefix="sluiceway-rest-", suffix=".pem")  # mkstemp creates it 0600
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


def _load_key(ctx: ssl.SSLContext, settings: TlsSettings) -> None:
    key, chain = _key_material(settings)
    where = settings.name("ssl.keystore.location")
    with _pem_file(key, chain) as (path, password):
        try:
            ctx.load_cert_chain(path, password=password)
        except ssl.SSLError as exc:
            raise TlsError(f"{where}: the key and certificate cannot be used together ({exc})") from None


# -- protocols and cipher suites -------------------------------------------------------------

_PROTOCOLS = {
    "TLSv1": ssl.TLSVersion.TLSv1,
    "TLSv1.1": ssl.TLSVersion.TLSv1_1,
    "TLSv1.2": ssl.TLSVersion.TLSv1_2,
    "TLSv1.3": ssl.TLSVersion.TLSv1_3,
}
_ORDER = list(_PROTOCOLS)

# IANA (Java) names of TLS 1.2 suites -> OpenSSL's: key exchange, then cipher and MAC.
_KEY_EXCHANGE = {"ECDHE_ECDSA": "ECDHE-ECDSA", "ECDHE_RSA": "ECDHE-RSA", "DHE_RSA": "DHE-RSA", "RSA": ""}
_CIPHER_MAC = {
    "AES_128_GCM_SHA256": "AES128-GCM-SHA256",
    "AES_256_GCM_SHA384": "AES256-GCM-SHA384",
    "CHACHA20_POLY1305_SHA256": "CHACHA20-POLY1305",
    "AES_128_CBC_SHA256": "AES128-SHA256",
    "AES_256_CBC_SHA384": "AES256-SHA384",
    "AES_256_CBC_SHA256": "AES256-SHA256",
    "AES_128_CBC_SHA": "AES128-SHA",
    "AES_256_CBC_SHA": "AES256-SHA",
}
_IANA = re.compile(r"TLS_(?P<kx>[A-Z0-9_]+?)_WITH_(?P<cipher>[A-Z0-9_]+)")


def openssl_cipher_name(name: str) -> str:
    """OpenSSL's name of a TLS 1.2 cipher suite given by its IANA name (or OpenSSL's already)."""
    m = _IANA.fullmatch(name)
    if m is None or m["kx"] not in _KEY_EXCHANGE or m["cipher"] not in _CIPHER_MAC:
        return name
    kx = _KEY_EXCHANGE[m["kx"]]
    return f"{kx}-{_CIPHER_MAC[m['cipher']]}" if kx else _CIPHER_MAC[m["cipher"]]


def _apply_algorithms(ctx: ssl.SSLContext, settings: TlsSettings) -> None:
    key = settings.name("ssl.enabled.protocols")
    wanted = settings.keys.enabled_protocols
    unknown = [p for p in wanted if p not in _PROTOCOLS]
    if unknown or not wanted:
        raise TlsError(f"{key}: {', '.join(unknown) or '(empty)'}: the protocols are {', '.join(_ORDER)}")
    positions = sorted(_ORDER.index(p) for p in set(wanted))
    if positions != list(range(positions[0], positions[-1] + 1)):
        raise TlsError(
            f"{key}: {', '.join(wanted)}: Python's ssl can only enable a contiguous range of versions"
        )
    lowest, highest = _PROTOCOLS[_ORDER[positions[0]]], _PROTOCOLS[_ORDER[positions[-1]]]

    suites = settings.keys.cipher_suites
    if suites:
        probe = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
        probe.set_ciphers("ALL:@SECLEVEL=0")
        available = {c["name"]: c["protocol"] for c in probe.get_ciphers()}
        tls12: list[str] = []
        tls13 = False
        for suite in suites:
            name = openssl_cipher_name(suite)
            if name not in available:
                raise TlsError(
                    f"{settings.name('ssl.cipher.suites')}: {suite} is not a cipher suite OpenSSL has"
                )
            if available[name] == "TLSv1.3":
                tls13 = True
            else:
                tls12.append(name)
        if tls12:
            ctx.set_ciphers(":".join(tls12))
        if not tls12 or not tls13:
            # Only one generation listed: keep the connection to protocols that can use it.
            if not tls12:
                lowest = max(lowest, ssl.TLSVersion.TLSv1_3)
            else:
                highest = min(highest, ssl.TLSVersion.TLSv1_2)
            if lowest > highest:
                raise TlsError(
                    f"{settings.name('ssl.cipher.suites')} and {key}: none of the suites works with the "
                    "enabled protocols"
                )
    try:
        ctx.minimum_version = lowest
        ctx.maximum_version = highest
    except (ValueError, ssl.SSLError) as exc:
        raise TlsError(f"{key}: {exc}") from None


# -- contexts --------------------------------------------------------------------------------


def server_context(settings: TlsSettings) -> ssl.SSLContext:
    """The context of an https listener."""
    if not settings.has_keystore:
        raise TlsError(
            f"an https listener needs a keystore: set {settings.name('ssl.keystore.location')} "
            f"(and {settings.name('ssl.keystore.password')}), or {settings.name('ssl.keystore.key')} and "
            f"{settings.name('ssl.keystore.certificate.chain')}"
        )
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    _apply_algorithms(ctx, settings)
    _load_key(ctx, settings)
    if settings.client_auth != "none":
        trusted = _trusted_pem(settings)
        if trusted is not None:
            ctx.load_verify_locations(cadata=trusted)
        else:  # as the JVM falls back to its default truststore
            ctx.load_default_certs(ssl.Purpose.CLIENT_AUTH)
        ctx.verify_mode = ssl.CERT_REQUIRED if settings.client_auth == "required" else ssl.CERT_OPTIONAL
    ctx.set_alpn_protocols(["http/1.1"])
    return ctx


def client_context(settings: TlsSettings) -> ssl.SSLContext:
    """The context of requests to other workers: trusts the truststore (or the system's CAs),
    presents the keystore's certificate when asked."""
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    _apply_algorithms(ctx, settings)
    trusted = _trusted_pem(settings)
    if trusted is not None:
        ctx.load_verify_locations(cadata=trusted)
    else:
        ctx.load_default_certs(ssl.Purpose.SERVER_AUTH)
    if settings.has_keystore:
        _load_key(ctx, settings)
    if settings.keys.endpoint_identification_algorithm == "":
        ctx.check_hostname = False
    return ctx


def worker_client_context(config: WorkerConfig) -> ssl.SSLContext:
    """``client_context`` of a worker config.

    A worker whose listeners are all http may still carry top-level ``ssl.*`` keys for its
    Kafka clients, with stores only Java reads (JKS): those are not for REST, so they
    must not stop it. It then trusts the system's CAs, and says so."""
    try:
        return client_context(tls_settings(config))
    except TlsError as exc:
        if any(str(item).strip().lower().startswith("https:") for item in config.listeners):
            raise
        log.warning("requests to other workers over https will trust the system's CAs only: %s", exc)
        return ssl.create_default_context()
