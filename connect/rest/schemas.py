"""``/sluiceway/schemas``: the Schema Registry as the web console shows it, read through the
worker (the browser then needs no access to the registry, and no CORS).

- ``GET /sluiceway/schemas``: every subject with its versions, latest id and type, and
  its compatibility level (its own, or the global one);
- ``GET /sluiceway/schemas/{subject}``: the subject's versions with their ids and schemas.

The registry is ``console.schema.registry.url`` in the worker's config, or the worker's
own embedded one (``embedded.schema.registry.listeners``); without either, 404 says
which key to set. Only the registry's REST API is used: it may be Confluent's.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import quote, urlsplit

import httpx
from fastapi import APIRouter

from connect.api.errors import ConnectException, NotFoundException
from connect.herder.base import Herder
from connect.runtime.config import WorkerConfig

__all__ = ["registry_url", "router"]


def registry_url(config: WorkerConfig) -> str | None:
    """The registry the console shows, if the worker knows one."""
    extra = {k: str(v) for k, v in (config.model_extra or {}).items()}
    explicit = extra.get("console.schema.registry.url", "").strip()
    if explicit:
        return explicit.split(",")[0].strip().rstrip("/")
    listeners = extra.get("embedded.schema.registry.listeners", "").strip()
    if not listeners:
        return None
    url = urlsplit(listeners.split(",")[0].strip())
    host = "127.0.0.1" if url.hostname in (None, "0.0.0.0", "::") else url.hostname
    return f"{url.scheme}://{host}:{url.port}"


class _Registry:
    def __init__(self, url: str) -> None:
        self.url = url

    def get(self, path: str) -> Any:
        try:
            response = httpx.get(self.url + path, timeout=10)
        except httpx.HTTPError as exc:
            raise ConnectException(f"the Schema Registry at {self.url} did not answer: {exc}") from None
        if response.status_code == 404:
            raise NotFoundException(response.json().get("message", f"{path} not found"))
        if response.status_code >= 400:
            raise ConnectException(
                f"the Schema Registry at {self.url} answered {response.status_code}: {response.text}"
            )
        return response.json()

    def level(self, subject: str) -> str:
        own = httpx.get(f"{self.url}/config/{quote(subject, safe='')}?defaultToGlobal=true", timeout=10)
        return str(own.json().get("compatibilityLevel", "")) if own.status_code == 200 else ""

    def subjects(self) -> list[dict[str, Any]]:
        out = []
        for subject in self.get("/subjects"):
            s = quote(subject, safe="")
            latest = self.get(f"/subjects/{s}/versions/latest")
            out.append(
                {
                    "subject": subject,
                    "versions": self.get(f"/subjects/{s}/versions"),
                    "latest_id": latest["id"],
                    "schema_type": latest.get("schemaType", "AVRO"),
                    "compatibility": self.level(subject),
                }
            )
        return out

    def subject(self, subject: str) -> dict[str, Any]:
        s = quote(subject, safe="")
        versions = [self.get(f"/subjects/{s}/versions/{v}") for v in self.get(f"/subjects/{s}/versions")]
        return {
            "subject": subject,
            "compatibility": self.level(subject),
            "versions": [
                {
                    "version": v["version"],
                    "id": v["id"],
                    "schema_type": v.get("schemaType", "AVRO"),
                    "schema": v["schema"],
                    "references": v.get("references", []),
                }
                for v in versions
            ],
        }


def router(herder: Herder) -> APIRouter:
    """The ``/sluiceway/schemas`` routes of a worker."""
    api = APIRouter(prefix="/sluiceway", tags=["Sluiceway extensions"])

    def registry() -> _Registry:
        url = registry_url(herder.worker.config)
        if url is None:
            raise NotFoundException(
                "No Schema Registry is known to this worker: set console.schema.registry.url (or run one "
                "inside it with embedded.schema.registry.listeners)"
            )
        return _Registry(url)

    @api.get("/schemas", summary="The Schema Registry's subjects (Sluiceway extension)")
    async def list_schemas() -> list[dict[str, Any]]:
        return await herder.blocking(lambda: registry().subjects())

    @api.get("/schemas/{subject}", summary="A subject's versions and schemas (Sluiceway extension)")
    async def get_subject(subject: str) -> dict[str, Any]:
        return await herder.blocking(lambda: registry().subject(subject))

    return api
