"""Kafka Connect's REST API over httpx: one method per endpoint ``ctl`` uses.

The one translation point for failures: transport errors become ``UnreachableError``
(naming the URL), HTTP error answers ``RefusedError`` carrying the message of Kafka
Connect's error body ``{"error_code": ..., "message": ...}``.
"""

from __future__ import annotations

import ssl
from collections.abc import Mapping
from pathlib import Path
from types import TracebackType
from typing import Any
from urllib.parse import quote

import httpx

from sluiceway.ctl.errors import RefusedError, UnexpectedAnswer, UnreachableError, UsageError
from sluiceway.ctl.rest_models import ErrorBody


def parse_url(raw: str) -> str:
    """A worker's base URL, ``http(s)://host[:port][/prefix]`` without a trailing slash."""
    try:
        url = httpx.URL(raw.strip())
    except httpx.InvalidURL as exc:
        raise UsageError(f"--url '{raw}': not a valid URL: {exc}") from None
    if url.scheme not in ("http", "https") or not url.host:
        raise UsageError(f"--url '{raw}': expected http://HOST:PORT or https://HOST:PORT")
    if url.port is not None and not 0 < url.port < 65536:
        raise UsageError(f"--url '{raw}': not a valid URL: port {url.port} is out of range")
    if url.query or url.fragment:
        raise UsageError(f"--url '{raw}': a worker URL has no query or fragment")
    return str(url.copy_with(path=url.path.rstrip("/") or "/")).rstrip("/")


def parse_user(raw: str) -> tuple[str, str]:
    """``USER:PASSWORD`` for HTTP basic auth (the password may contain ``:``)."""
    user, sep, password = raw.partition(":")
    if not sep or not user:
        raise UsageError("--user: expected USER:PASSWORD")
    return user, password


def tls_verify(insecure: bool, cacert: str | None) -> bool | ssl.SSLContext:
    """What httpx checks the worker's certificate with: the system CAs, a CA file, or nothing."""
    if insecure and cacert:
        raise UsageError("--insecure and --cacert contradict each other: give one")
    if insecure:
        return False
    if cacert is None:
        return True
    if not Path(cacert).is_file():
        raise UsageError(f"--cacert {cacert}: no such file")
    try:
        return ssl.create_default_context(cafile=cacert)
    except (ssl.SSLError, OSError) as exc:
        raise UsageError(f"--cacert {cacert}: not a PEM file of CA certificates ({exc})") from None


def _segment(name: str) -> str:
    # connector and logger names are single path segments (Kafka Connect rejects '/')
    return quote(name, safe="")


def error_message(response: httpx.Response) -> str:
    try:
        body = ErrorBody.model_validate_json(response.content)
    except ValueError:
        text = response.text.strip()
        detail = f": {text[:300]}" if text else ""
        return f"HTTP {response.status_code} {response.reason_phrase}{detail}"
    return f"{body.message} (HTTP {response.status_code})"


class ConnectClient:
    """A worker's REST API. ``timeout`` bounds each request (connect, read, write)."""

    def __init__(
        self,
        url: str,
        *,
        timeout: float,
        auth: tuple[str, str] | None = None,
        verify: bool | ssl.SSLContext = True,
    ) -> None:
        self.url = url
        self.timeout = timeout
        self._http = httpx.Client(
            base_url=url,
            timeout=timeout,
            auth=auth,
            verify=verify,
            headers={"accept": "application/json"},
        )

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> ConnectClient:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    # -- transport ------------------------------------------------------------------------

    def send(
        self,
        method: str,
        path: str,
        *,
        params: Mapping[str, str] | httpx.QueryParams | None = None,
        body: Any = None,
        allow: tuple[int, ...] = (),
    ) -> httpx.Response:
        """The answer to one request; error statuses other than ``allow`` raise ``RefusedError``."""
        try:
            response = self._http.request(
                method, path, params=params, json=body if body is not None else None
            )
        except httpx.TimeoutException:
            raise UnreachableError(
                f"the worker at {self.url} did not answer {method} {path} within {self.timeout:g} s"
            ) from None
        except httpx.TransportError as exc:
            reason = str(exc) or type(exc).__name__
            raise UnreachableError(f"cannot reach the worker at {self.url}: {reason}") from None
        if response.is_error and response.status_code not in allow:
            raise RefusedError(error_message(response), response.status_code)
        return response

    def json(self, method: str, path: str, **kwargs: Any) -> Any:
        response = self.send(method, path, **kwargs)
        return decode(response, f"{method} {path}")

    # -- connectors -----------------------------------------------------------------------

    def connectors_expanded(self) -> Any:
        return self.json(
            "GET", "/connectors", params=httpx.QueryParams([("expand", "status"), ("expand", "info")])
        )

    def connector(self, name: str) -> Any:
        return self.json("GET", f"/connectors/{_segment(name)}")

    def config(self, name: str) -> Any | None:
        """The connector's config, or None when there is no such connector."""
        path = f"/connectors/{_segment(name)}/config"
        response = self.send("GET", path, allow=(404,))
        return None if response.status_code == 404 else decode(response, f"GET {path}")

    def status(self, name: str) -> Any:
        return self.json("GET", f"/connectors/{_segment(name)}/status")

    def topics(self, name: str) -> Any | None:
        """``{name: {"topics": [...]}}``, or None when the worker does not track topics (403)."""
        path = f"/connectors/{_segment(name)}/topics"
        response = self.send("GET", path, allow=(403,))
        return None if response.status_code == 403 else decode(response, f"GET {path}")

    def put_config(self, name: str, config: dict[str, str]) -> tuple[bool, Any]:
        """(created, ConnectorInfo): 201 means a new connector, 200 an updated one."""
        path = f"/connectors/{_segment(name)}/config"
        response = self.send("PUT", path, body=config)
        return response.status_code == 201, decode(response, f"PUT {path}")

    def patch_config(self, name: str, patch: dict[str, str | None]) -> Any:
        return self.json("PATCH", f"/connectors/{_segment(name)}/config", body=patch)

    def pause(self, name: str) -> None:
        self.send("PUT", f"/connectors/{_segment(name)}/pause")

    def resume(self, name: str) -> None:
        self.send("PUT", f"/connectors/{_segment(name)}/resume")

    def stop(self, name: str) -> None:
        self.send("PUT", f"/connectors/{_segment(name)}/stop")

    def restart(self, name: str, include_tasks: bool, only_failed: bool) -> Any | None:
        """The status with the instances being restarted (202), or None (204, the connector only)."""
        path = f"/connectors/{_segment(name)}/restart"
        params = {"includeTasks": str(include_tasks).lower(), "onlyFailed": str(only_failed).lower()}
        response = self.send("POST", path, params=params)
        if response.status_code == 204 or not response.content:
            return None
        return decode(response, f"POST {path}")

    def restart_task(self, name: str, task: int) -> None:
        self.send("POST", f"/connectors/{_segment(name)}/tasks/{task}/restart")

    def delete(self, name: str) -> None:
        self.send("DELETE", f"/connectors/{_segment(name)}")

    # -- offsets (KIP-875) -----------------------------------------------------------------

    def offsets(self, name: str) -> Any:
        return self.json("GET", f"/connectors/{_segment(name)}/offsets")

    def reset_offsets(self, name: str) -> Any:
        return self.json("DELETE", f"/connectors/{_segment(name)}/offsets")

    def alter_offsets(self, name: str, body: dict[str, Any]) -> Any:
        return self.json("PATCH", f"/connectors/{_segment(name)}/offsets", body=body)

    # -- plugins --------------------------------------------------------------------------

    def plugins(self, connectors_only: bool) -> Any:
        return self.json("GET", "/connector-plugins", params={"connectorsOnly": str(connectors_only).lower()})

    def validate(self, plugin: str, config: dict[str, str]) -> Any:
        return self.json("PUT", f"/connector-plugins/{_segment(plugin)}/config/validate", body=config)

    # -- loggers ----------------------------------------------------------------------------

    def loggers(self) -> Any:
        return self.json("GET", "/admin/loggers")

    def logger(self, name: str) -> Any:
        return self.json("GET", f"/admin/loggers/{_segment(name)}")

    def set_logger(self, name: str, level: str, scope: str) -> Any | None:
        """The loggers whose level changed (worker scope), or None (cluster scope: 204)."""
        path = f"/admin/loggers/{_segment(name)}"
        response = self.send("PUT", path, params={"scope": scope}, body={"level": level})
        if response.status_code == 204 or not response.content:
            return None
        return decode(response, f"PUT {path}")


def decode(response: httpx.Response, what: str) -> Any:
    try:
        return response.json()
    except ValueError:
        raise UnexpectedAnswer(
            f"unexpected answer to {what}: HTTP {response.status_code} without a JSON body "
            "(is this Kafka Connect's REST API?)"
        ) from None
