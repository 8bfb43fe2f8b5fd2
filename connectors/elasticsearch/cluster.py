"""The connection to Elasticsearch: the official client, configured from the sink's keys.

The client's own retries are off: the task retries with jittered exponential backoff
under ``max.retries`` (``bulk_items.backoff_seconds``) and tells transient failures
(``TransientError``: no connection, timeouts, 429 and 5xx) from permanent ones
(``ConnectException``: refused credentials, a request Elasticsearch will never accept).
"""

from __future__ import annotations

import logging
import os
import ssl
import tempfile
import threading
from typing import Any

import urllib3
from elastic_transport import TlsError
from elasticsearch import ApiError, Elasticsearch, NotFoundError, TransportError

from connect.api import ConnectException
from connectors.elasticsearch.bulk_items import describe_error
from connectors.elasticsearch.config import ElasticsearchSinkConfig
from connectors.elasticsearch.errors import TransientError

log = logging.getLogger(__name__)

# Only the fields the task reads: a large bulk answer shrinks to a few bytes per item.
_BULK_FILTER = ["errors", "items.*.status", "items.*.error"]


def _is_transient_status(status: int) -> bool:
    return status == 429 or status >= 500


def _api_message(exc: ApiError) -> str:
    body = exc.body
    if isinstance(body, dict) and "error" in body:
        return f"{exc.meta.status} {describe_error(body['error'])}"
    return f"{exc.meta.status} {exc.message}"


class Cluster:
    """One client per task; thread-safe (bulk requests run on several threads)."""

    def __init__(self, config: ElasticsearchSinkConfig) -> None:
        self.config = config
        urls = list(config.connection_url)
        secure = config.elastic_security_protocol == "SSL" or any(u.startswith("https://") for u in urls)
        if secure:
            urls = ["https://" + u.split("://", 1)[1] for u in urls]
        password = config.password()
        kwargs: dict[str, Any] = {
            "hosts": urls,
            "request_timeout": config.read_timeout_ms / 1000,
            "max_retries": 0,
            "retry_on_status": (),
            "retry_on_timeout": False,
            "http_compress": config.connection_compression,
            # Room for every in-flight bulk plus the index checks of put().
            "connections_per_node": config.max_in_flight_requests + 2,
        }
        if config.connection_username and password is not None:
            kwargs["basic_auth"] = (config.connection_username, password)
        if secure:
            kwargs["ssl_context"] = ssl_context(config)
        self.es = Elasticsearch(**kwargs)
        # The client has one timeout for a whole request; give connecting its own, shorter one.
        timeout = urllib3.Timeout(
            connect=config.connection_timeout_ms / 1000, read=config.read_timeout_ms / 1000
        )
        for node in self.es.transport.node_pool.all():
            pool = getattr(node, "pool", None)
            if pool is not None:
                pool.timeout = timeout
        self.urls = urls
        self._known: set[str] = set()
        self._lock = threading.Lock()

    # -- requests -----------------------------------------------------------------------

    def call(self, what: str, fn: Any, *args: Any, **kwargs: Any) -> Any:
        """Run one client call; failures become ``TransientError`` or ``ConnectException``."""
        try:
            return fn(*args, **kwargs)
        except ApiError as exc:
            status = exc.meta.status
            message = f"{what} failed: {_api_message(exc)}"
            if _is_transient_status(status):
                raise TransientError(message) from None
            if status == 401:
                raise ConnectException(
                    f"{what}: Elasticsearch refused the credentials (401); check connection.username "
                    "and connection.password"
                ) from None
            if status == 403:
                raise ConnectException(
                    f"{what}: the user may not do this (403); grant it the index privileges "
                    f"create_index and write (or create_doc): {_api_message(exc)}"
                ) from None
            raise ConnectException(message) from None
        except TlsError as exc:  # no retry fixes a certificate nobody trusts
            raise ConnectException(
                f"{what} failed: TLS with Elasticsearch at {', '.join(self.urls)} failed: {exc.message}; "
                "elastic.https.ssl.truststore.location must hold the CA that signed the nodes' certificates"
            ) from None
        except TransportError as exc:  # no connection, a timeout
            raise TransientError(
                f"{what} failed: cannot reach Elasticsearch at {', '.join(self.urls)}: {exc.message}"
            ) from None

    def info(self) -> dict[str, Any]:
        return dict(self.call("Asking for the cluster's version", self.es.info).body)

    def bulk(self, lines: list[bytes]) -> list[dict[str, Any]]:
        """Send a bulk body; the answer's items, in request order, each unwrapped from its op."""
        body = self.call("A bulk request", self.es.bulk, operations=lines, filter_path=_BULK_FILTER).body
        items = body.get("items") or []
        return [next(iter(item.values())) for item in items]

    # -- indices ------------------------------------------------------------------------

    def ensure(self, index: str, mappings: dict[str, Any] | None) -> None:
        """Make sure ``index`` (or data stream) exists, with ``mappings`` when it is new or
        has none yet. Each name is checked once per task."""
        with self._lock:
            if index in self._known:
                return
        if self.config.is_data_stream:
            self._ensure_data_stream(index)
        else:
            self._ensure_index(index, mappings)
        with self._lock:
            self._known.add(index)

    def _ensure_index(self, index: str, mappings: dict[str, Any] | None) -> None:
        exists = self.call(f"Checking index {index}", self.es.indices.exists, index=index)
        if not exists:
            try:
                self.call(f"Creating index {index}", self.es.indices.create, index=index, mappings=mappings)
                log.info("Created index %s%s", index, " with a mapping from the schema" if mappings else "")
                return
            except ConnectException:
                # Another task may have created it meanwhile; anything else is real.
                if not self.call(f"Checking index {index}", self.es.indices.exists, index=index):
                    raise
        if mappings:
            current = self.call(
                f"Reading the mapping of {index}", self.es.indices.get_mapping, index=index
            ).body
            declared = any((m.get("mappings") or {}).get("properties") for m in current.values())
            if not declared:
                self.call(
                    f"Putting a mapping on {index}", self.es.indices.put_mapping, index=index, **mappings
                )
                log.info("Put a mapping from the schema on index %s", index)

    def _ensure_data_stream(self, name: str) -> None:
        try:
            self.es.indices.get_data_stream(name=name)
            return
        except NotFoundError:
            pass
        except (ApiError, TransportError):
            pass  # reported by the create below, with its reason
        try:
            self.call(f"Creating data stream {name}", self.es.indices.create_data_stream, name=name)
            log.info("Created data stream %s", name)
        except ConnectException as exc:
            if "resource_already_exists_exception" in str(exc):
                return
            raise ConnectException(
                f"{exc}; data streams need an index template matching {name} (Elasticsearch ships "
                "logs-*-* and metrics-*-*)"
            ) from None

    def close(self) -> None:
        self.es.close()


def ssl_context(config: ElasticsearchSinkConfig) -> ssl.SSLContext:
    """TLS from the ``elastic.https.ssl.*`` keys: PEM files or PKCS12 stores."""
    ctx = ssl.create_default_context()
    if config.ssl_truststore_location:
        location = config.ssl_truststore_location
        if config.ssl_truststore_type == "JKS":
            raise ConnectException(_jks(location))
        if config.ssl_truststore_type == "PKCS12":
            ctx.load_verify_locations(cadata=_pkcs12_certificates(location, config.ssl_truststore_password))
        else:
            ctx.load_verify_locations(cafile=location)
    if config.ssl_keystore_location:
        location = config.ssl_keystore_location
        if config.ssl_keystore_type == "JKS":
            raise ConnectException(_jks(location))
        if config.ssl_keystore_type == "PKCS12":
            _load_pkcs12_identity(ctx, location, config.ssl_keystore_password)
        else:
            secret = config.ssl_key_password or config.ssl_keystore_password
            ctx.load_cert_chain(location, password=secret.get_secret_value() if secret else None)
    if not config.ssl_endpoint_identification_algorithm:
        ctx.check_hostname = False
    return ctx


def _jks(location: str) -> str:
    return (
        f"{location} is a JKS store, which Python cannot read: convert it with keytool -importkeystore "
        "-deststoretype PKCS12, or use PEM files"
    )


def _read_pkcs12(location: str, password: Any) -> Any:
    from cryptography.hazmat.primitives.serialization import pkcs12

    secret = password.get_secret_value().encode() if password is not None else None
    try:
        with open(location, "rb") as f:
            return pkcs12.load_pkcs12(f.read(), secret)
    except (OSError, ValueError) as exc:
        raise ConnectException(f"Cannot read the PKCS12 store {location}: {exc}") from None


def _pkcs12_certificates(location: str, password: Any) -> str:
    from cryptography.hazmat.primitives.serialization import Encoding

    store = _read_pkcs12(location, password)
    certs = ([store.cert] if store.cert else []) + list(store.additional_certs)
    if not certs:
        raise ConnectException(f"The trust store {location} holds no certificate")
    return "".join(c.certificate.public_bytes(Encoding.PEM).decode() for c in certs)


def _load_pkcs12_identity(ctx: ssl.SSLContext, location: str, password: Any) -> None:
    from cryptography.hazmat.primitives.serialization import Encoding, NoEncryption, PrivateFormat

    store = _read_pkcs12(location, password)
    if store.key is None or store.cert is None:
        raise ConnectException(f"The key store {location} holds no private key with its certificate")
    pem = store.key.private_bytes(Encoding.PEM, PrivateFormat.PKCS8, NoEncryption())
    pem += store.cert.certificate.public_bytes(Encoding.PEM)
    for extra in store.additional_certs:
        pem += extra.certificate.public_bytes(Encoding.PEM)
    # ssl loads a client identity from a file only: a private one, removed at once.
    fd, path = tempfile.mkstemp(suffix=".pem")
    try:
        os.write(fd, pem)
        os.close(fd)
        ctx.load_cert_chain(path)
    finally:
        os.unlink(path)
