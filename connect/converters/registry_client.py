"""A Schema Registry client for the schema converters: Confluent's REST API over HTTP
(the registry's internals are never imported), with the caches that keep converting
free of HTTP calls once a schema is known.

``schema.registry.url`` may list several URLs: a request that cannot reach one tries the
next. When none answers (or all answer 5xx), the request is retried with jittered
exponential backoff (``retry.backoff.ms``, 100, up to ``max.retry.time.ms``, 30000, as
Confluent's serde names them); then a ``ConnectException`` names the URLs, which fails the
task (a restart tries again). Credentials come from ``basic.auth.user.info`` (``basic.auth.credentials.source=
USER_INFO``) or from the URL itself (``URL``); error messages show URLs with them masked.
"""

from __future__ import annotations

import ssl
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any
from urllib.parse import quote, urlsplit, urlunsplit

import httpx

from connect.api import ConnectException, DataException
from connect.api.retry import backoff_seconds
from connect.rest.tls import TlsError, client_context, tls_settings_from

__all__ = ["RegistryClient", "RegistryClientError"]

# Confluent's SchemaRegistryClientConfig.CLIENT_NAMESPACE: the client's TLS keys are
# schema.registry.ssl.* (value.converter.schema.registry.ssl.* in a connector config).
_NAMESPACE = "schema.registry."


class RegistryClientError(DataException):
    """The registry answered with an error (``status`` and Confluent's ``code``)."""

    def __init__(self, message: str, status: int, code: int) -> None:
        super().__init__(message)
        self.status = status
        self.code = code


class _Unavailable(Exception):
    """No URL answered, or every one answered 5xx: worth retrying."""


def _tls(configs: Mapping[str, Any]) -> ssl.SSLContext | bool:
    """The TLS of https registry URLs from ``schema.registry.ssl.*`` (truststore, keystore
    for a registry that asks for client certificates, endpoint identification); without
    any, the system's CAs (httpx's default)."""
    keys = {k[len(_NAMESPACE) :]: v for k, v in configs.items() if k.startswith(_NAMESPACE + "ssl.")}
    if not keys:
        return True
    try:
        return client_context(tls_settings_from(keys))
    except TlsError as exc:
        raise ConnectException(f"{_NAMESPACE}ssl.*: {exc}") from None


def _masked(url: str) -> str:
    parts = urlsplit(url)
    if parts.password is None and parts.username is None:
        return url
    host = parts.hostname or ""
    if parts.port is not None:
        host += f":{parts.port}"
    return urlunsplit((parts.scheme, f"***:***@{host}", parts.path, parts.query, parts.fragment))


class RegistryClient:
    def __init__(self, configs: Mapping[str, Any], timeout_s: float = 30.0) -> None:
        raw = str(configs.get("schema.registry.url") or "").strip()
        if not raw:
            raise ConnectException(
                "schema.registry.url is required: the Schema Registry's URL (a comma list)"
            )
        self.urls = [u.strip().rstrip("/") for u in raw.split(",") if u.strip()]
        source = str(configs.get("basic.auth.credentials.source", "URL")).upper()
        auth: tuple[str, str] | None = None
        if source == "USER_INFO":
            info = str(configs.get("basic.auth.user.info", ""))
            user, sep, password = info.partition(":")
            if not sep:
                raise ConnectException(
                    "basic.auth.user.info must be user:password with basic.auth.credentials.source=USER_INFO"
                )
            auth = (user, password)
        elif source not in ("URL", "SASL_INHERIT"):
            raise ConnectException(
                f"basic.auth.credentials.source={source}: expected URL, USER_INFO or SASL_INHERIT"
            )
        self._client = httpx.Client(timeout=timeout_s, auth=auth, verify=_tls(configs))
        self.retry_backoff_ms = int(configs.get("retry.backoff.ms", 100))
        self.max_retry_s = int(configs.get("max.retry.time.ms", 30_000)) / 1000
        self._lock = threading.Lock()
        self._schemas: dict[
            tuple[int, str | None], dict[str, Any]
        ] = {}  # (id, format) -> GET /schemas/ids/{id}
        self._ids: dict[tuple[str, str], int] = {}  # (subject, schema) -> id
        self._latest: dict[str, dict[str, Any]] = {}
        self._id_versions: dict[int, Any] = {}
        self._ref_versions: dict[tuple[str, str], int] = {}
        self._versions: dict[tuple[str, int, str | None], dict[str, Any]] = {}

    @property
    def shown_urls(self) -> str:
        return ",".join(_masked(u) for u in self.urls)

    def _request(self, method: str, path: str, body: Any = None) -> Any:
        deadline = time.monotonic() + self.max_retry_s
        attempt = 0
        while True:
            try:
                return self._request_once(method, path, body)
            except _Unavailable as exc:
                if time.monotonic() >= deadline:
                    raise ConnectException(
                        f"Schema Registry unreachable at {self.shown_urls} after {attempt + 1} attempts: "
                        f"{exc}"
                    ) from None
                time.sleep(
                    min(backoff_seconds(attempt, self.retry_backoff_ms), max(deadline - time.monotonic(), 0))
                )
                attempt += 1

    def _request_once(self, method: str, path: str, body: Any = None) -> Any:
        failures = []
        for url in self.urls:
            try:
                response = self._client.request(
                    method,
                    url + path,
                    json=body,
                    headers={"Content-Type": "application/vnd.schemaregistry.v1+json"},
                )
            except httpx.HTTPError as exc:
                failures.append(f"{_masked(url)}: {exc}")
                continue
            if response.status_code >= 500:
                failures.append(f"{_masked(url)}: HTTP {response.status_code} {response.text[:200]}")
                continue
            if response.status_code >= 400:
                try:
                    error = response.json()
                    code, message = (
                        int(error.get("error_code", response.status_code)),
                        str(error.get("message")),
                    )
                except (ValueError, AttributeError):
                    code, message = response.status_code, response.text[:500]
                raise RegistryClientError(
                    f"Schema Registry {_masked(url)} answered {method} {path} with {response.status_code} "
                    f"(error {code}): {message}",
                    response.status_code,
                    code,
                )
            return response.json()
        raise _Unavailable("; ".join(failures))

    def _cached(self, cache: dict[Any, Any], key: Any, fetch: Callable[[], Any]) -> Any:
        """``cache[key]``, fetched from the registry the first time (no lock held meanwhile:
        two threads may both fetch, and agree)."""
        with self._lock:
            if key in cache:
                return cache[key]
        found = fetch()
        with self._lock:
            cache[key] = found
        return found

    @staticmethod
    def _body(schema: str, schema_type: str, references: Sequence[Mapping[str, Any]] = ()) -> dict[str, Any]:
        body: dict[str, Any] = {"schema": schema}
        if schema_type != "AVRO":
            body["schemaType"] = schema_type
        if references:
            body["references"] = [dict(r) for r in references]
        return body

    def register(
        self,
        subject: str,
        schema: str,
        schema_type: str = "AVRO",
        normalize: bool = False,
        references: Sequence[Mapping[str, Any]] = (),
    ) -> int:
        """The schema's id under ``subject``, registering it if needed (kept once known);
        ``references``: Confluent's ``{name, subject, version}`` of the schemas it uses."""
        path = f"/subjects/{quote(subject, safe='')}/versions" + ("?normalize=true" if normalize else "")
        body = self._body(schema, schema_type, references)
        return int(
            self._cached(self._ids, (subject, schema), lambda: self._request("POST", path, body)["id"])
        )

    def register_version(
        self, subject: str, schema: str, schema_type: str, references: Sequence[Mapping[str, Any]] = ()
    ) -> int:
        """Registers (or finds) the schema under ``subject`` and returns its version there,
        for a schema other schemas refer to (kept once known)."""
        path = f"/subjects/{quote(subject, safe='')}"
        body = self._body(schema, schema_type, references)

        def fetch() -> int:
            self._request("POST", f"{path}/versions", body)
            return int(self._request("POST", path, body)["version"])

        return int(self._cached(self._ref_versions, (subject, schema), fetch))

    def lookup(
        self,
        subject: str,
        schema: str,
        schema_type: str = "AVRO",
        references: Sequence[Mapping[str, Any]] = (),
    ) -> int:
        """The schema's id under ``subject``; a ``RegistryClientError`` (40401/40403) if it is not there."""
        path = f"/subjects/{quote(subject, safe='')}"
        body = self._body(schema, schema_type, references)
        return int(
            self._cached(self._ids, (subject, schema), lambda: self._request("POST", path, body)["id"])
        )

    def schema(self, schema_id: int, fmt: str | None = None) -> dict[str, Any]:
        """``GET /schemas/ids/{id}`` (an id's schema never changes: kept); ``fmt``: the
        registry's ``format`` (``serialized``: a Protobuf schema as a base64 descriptor)."""
        path = f"/schemas/ids/{schema_id}" + (f"?format={fmt}" if fmt else "")
        found = self._cached(self._schemas, (schema_id, fmt), lambda: self._request("GET", path))
        return dict(found)

    def versions_of_id(self, schema_id: int) -> list[dict[str, Any]]:
        """``GET /schemas/ids/{id}/versions``: the (subject, version) pairs an id is
        registered as, as first asked (a reader needs the version its subject gave the id)."""
        path = f"/schemas/ids/{schema_id}/versions"
        return list(self._cached(self._id_versions, schema_id, lambda: self._request("GET", path)))

    def version(self, subject: str, version: int, fmt: str | None = None) -> dict[str, Any]:
        """``GET /subjects/{subject}/versions/{version}`` (a version's schema never changes: kept)."""
        path = f"/subjects/{quote(subject, safe='')}/versions/{version}" + (f"?format={fmt}" if fmt else "")
        return dict(self._cached(self._versions, (subject, version, fmt), lambda: self._request("GET", path)))

    def latest(self, subject: str) -> dict[str, Any]:
        """The subject's latest version, as first asked (``use.latest.version`` keeps it)."""
        path = f"/subjects/{quote(subject, safe='')}/versions/latest"
        return dict(self._cached(self._latest, subject, lambda: self._request("GET", path)))

    def close(self) -> None:
        self._client.close()
