"""TLS of SSL and SASL_SSL listeners: Kafka's ``ssl.*`` keys to an ``ssl.SSLContext``,
and the principal of a client certificate.

Keys (each also as ``listener.name.<listener>.ssl.*``, which wins):

- ``ssl.keystore.location`` / ``ssl.keystore.password`` / ``ssl.keystore.type``: PKCS12,
  or PEM (one file with the private key and the certificate chain). JKS is refused with
  the command that converts it. Without a type the file's content decides (Kafka's
  default type JKS is no use here).
- ``ssl.key.password``: the private key's own password (PEM key, or a PKCS12 whose key
  password differs from the store's).
- ``ssl.truststore.location`` / ``.password`` / ``.type``: the CAs that sign client
  certificates (PKCS12 or PEM).
- ``ssl.client.auth``: ``none`` (default), ``requested``, ``required``.
- ``ssl.enabled.protocols`` (default ``TLSv1.2,TLSv1.3``), ``ssl.cipher.suites``.

PKCS12 stores are opened with ``cryptography``; Python's ssl module loads keys only
from files, so the key is re-encrypted with a one-time password into a private
temporary file that is deleted as soon as it is loaded.
"""

from __future__ import annotations

import os
import secrets
import ssl
import tempfile
from collections.abc import Callable
from typing import Any

_PROTOCOLS = {"TLSv1.2": ssl.TLSVersion.TLSv1_2, "TLSv1.3": ssl.TLSVersion.TLSv1_3}
_CLIENT_AUTH = {"none": ssl.CERT_NONE, "requested": ssl.CERT_OPTIONAL, "required": ssl.CERT_REQUIRED}
_JKS_MAGIC = b"\xfe\xed\xfe\xed"

Setting = Callable[[str], str | None]


class TlsConfigError(ValueError):
    """An ``ssl.*`` setting that cannot be used; the message names the key and listener."""


def server_context(setting: Setting, where: str) -> ssl.SSLContext:
    """The server context of one listener (``where`` names it in error messages)."""
    location = setting("ssl.keystore.location")
    if not location:
        raise TlsConfigError(f"{where}: ssl.keystore.location is required on an SSL or SASL_SSL listener")
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    _protocols(ctx, setting("ssl.enabled.protocols"), where)
    ciphers = setting("ssl.cipher.suites")
    if ciphers:
        try:
            ctx.set_ciphers(":".join(c.strip() for c in ciphers.split(",") if c.strip()))
        except ssl.SSLError as exc:
            raise TlsConfigError(f"{where}: ssl.cipher.suites {ciphers!r}: {exc}") from None
    _load_keystore(
        ctx,
        location,
        setting("ssl.keystore.type"),
        setting("ssl.keystore.password"),
        setting("ssl.key.password"),
        where,
    )
    auth = (setting("ssl.client.auth") or "none").strip().lower()
    if auth not in _CLIENT_AUTH:
        raise TlsConfigError(f"{where}: ssl.client.auth must be none, requested or required, not {auth!r}")
    ctx.verify_mode = _CLIENT_AUTH[auth]
    truststore = setting("ssl.truststore.location")
    if truststore:
        _load_truststore(
            ctx, truststore, setting("ssl.truststore.type"), setting("ssl.truststore.password"), where
        )
    elif auth != "none":
        raise TlsConfigError(f"{where}: ssl.client.auth={auth} needs ssl.truststore.location")
    return ctx


def certificate_principal(ssl_object: Any) -> str | None:
    """``User:<subject DN>`` of the peer's certificate (Kafka's ``DEFAULT`` mapping rule:
    the RFC 2253 distinguished name, e.g. ``User:CN=alice,OU=eng,O=acme``), or None."""
    if ssl_object is None:
        return None
    der = ssl_object.getpeercert(binary_form=True)
    if not der:
        return None
    from cryptography import x509

    return "User:" + x509.load_der_x509_certificate(der).subject.rfc4514_string()


def _protocols(ctx: ssl.SSLContext, value: str | None, where: str) -> None:
    names = [p.strip() for p in (value or "TLSv1.2,TLSv1.3").split(",") if p.strip()]
    unknown = [n for n in names if n not in _PROTOCOLS]
    if unknown or not names:
        raise TlsConfigError(
            f"{where}: ssl.enabled.protocols: {', '.join(unknown) or 'nothing'} is not supported "
            f"(use {', '.join(_PROTOCOLS)})"
        )
    versions = sorted(_PROTOCOLS[n] for n in names)
    ctx.minimum_version, ctx.maximum_version = versions[0], versions[-1]


def _read(path: str, key: str, where: str) -> bytes:
    try:
        with open(path, "rb") as f:
            return f.read()
    except OSError as exc:
        raise TlsConfigError(f"{where}: {key} {path}: {exc.strerror or exc}") from None


def _store_type(declared: str | None, data: bytes, key: str, path: str, where: str) -> str:
    kind = (declared or "").strip().upper()
    if kind == "JKS" or data.startswith(_JKS_MAGIC):
        raise TlsConfigError(
            f"{where}: {key} {path} is a JKS store, which this broker cannot read; convert it with "
            f"'keytool -importkeystore -srckeystore {path} -destkeystore store.p12 -deststoretype PKCS12' "
            "and set the type to PKCS12 (or use PEM)"
        )
    if not kind:
        kind = "PEM" if b"-----BEGIN" in data else "PKCS12"
    if kind not in ("PKCS12", "PEM"):
        raise TlsConfigError(f"{where}: store type {kind} of {path} is not supported (use PKCS12 or PEM)")
    return kind


def _load_keystore(
    ctx: ssl.SSLContext,
    path: str,
    kind: str | None,
    store_password: str | None,
    key_password: str | None,
    where: str,
) -> None:
    data = _read(path, "ssl.keystore.location", where)
    kind = _store_type(kind, data, "ssl.keystore.location", path, where)
    if kind == "PEM":
        try:
            ctx.load_cert_chain(path, password=key_password or store_password)
        except (ssl.SSLError, OSError) as exc:
            raise TlsConfigError(
                f"{where}: ssl.keystore.location {path} (PEM) needs the private key and its certificate "
                f"chain, the key decrypted with ssl.key.password: {exc}"
            ) from None
        return
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.serialization import pkcs12

    key = cert = None
    extra: list[Any] = []
    for candidate in dict.fromkeys(p for p in (store_password, key_password, None)):
        try:
            key, cert, extra = pkcs12.load_key_and_certificates(
                data, candidate.encode() if candidate is not None else None
            )
            break
        except ValueError:
            continue
    else:
        raise TlsConfigError(
            f"{where}: cannot open the PKCS12 keystore {path}: wrong ssl.keystore.password or not PKCS12"
        )
    if key is None or cert is None:
        raise TlsConfigError(f"{where}: the keystore {path} holds no private key with its certificate")
    one_time = secrets.token_urlsafe(24)
    chain = b"".join(c.public_bytes(serialization.Encoding.PEM) for c in [cert, *extra])
    pem_key = key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.BestAvailableEncryption(one_time.encode()),
    )
    with tempfile.TemporaryDirectory(prefix="sluiceway-tls-") as tmp:
        file = os.path.join(tmp, "keystore.pem")
        fd = os.open(file, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "wb") as f:
            f.write(pem_key + chain)
        ctx.load_cert_chain(file, password=one_time)


def _load_truststore(
    ctx: ssl.SSLContext, path: str, kind: str | None, password: str | None, where: str
) -> None:
    data = _read(path, "ssl.truststore.location", where)
    kind = _store_type(kind, data, "ssl.truststore.location", path, where)
    if kind == "PEM":
        try:
            ctx.load_verify_locations(cafile=path)
        except ssl.SSLError as exc:
            raise TlsConfigError(f"{where}: ssl.truststore.location {path}: {exc}") from None
        return
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.serialization import pkcs12

    try:
        _, cert, extra = pkcs12.load_key_and_certificates(data, password.encode() if password else None)
    except ValueError:
        raise TlsConfigError(
            f"{where}: cannot open the PKCS12 truststore {path}: wrong ssl.truststore.password or not PKCS12"
        ) from None
    certs = [c for c in [cert, *extra] if c is not None]
    if not certs:
        raise TlsConfigError(f"{where}: the truststore {path} holds no certificate")
    ctx.load_verify_locations(
        cadata="".join(c.public_bytes(serialization.Encoding.PEM).decode() for c in certs)
    )
