"""Confluent's Schema Registry REST API, path for path (``rest/resources/*Resource.java``).

Reads are answered by any instance; writes (registrations, deletes, config and mode
changes) by the primary (``election``): another instance forwards them to it and passes
its answer back, as Confluent's followers do (50004 when no primary is known within a few
seconds, 50003 when it cannot be reached).

Requests may be ``application/vnd.schemaregistry.v1+json``, ``application/json`` or
``application/octet-stream``; answers are ``application/vnd.schemaregistry.v1+json``;
errors are ``{"error_code": ..., "message": ...}`` with the code's HTTP status. Boolean
query parameters are read as Java reads them (``true`` in any case is true), and unknown
parameters are ignored, as Jersey does. A subject may hold a ``/`` sent as ``%2F`` (the
Protobuf serializer names a dependency's subject after its file, ``crm/customer.proto``):
routes match the path as sent, as Jersey matches it, and decode the subject after.
"""

from __future__ import annotations

import asyncio
import ssl
import time
from typing import Any
from urllib.parse import unquote

import httpx
import orjson
from fastapi import FastAPI, Request
from fastapi.responses import Response
from starlette.concurrency import run_in_threadpool
from starlette.convertors import Convertor, register_url_convertor
from starlette.types import ASGIApp, Receive, Scope, Send

from schema_registry.election import Election
from schema_registry.errors import RegistryError
from schema_registry.service import Registry, SchemaRequest

__all__ = ["CONTENT_TYPE", "create_app"]

CONTENT_TYPE = "application/vnd.schemaregistry.v1+json"


class _Subject(Convertor[str]):
    """A path segment as ``_EncodedSlashes`` leaves it: ``%2F`` and ``%25`` decoded here."""

    regex = "[^/]+"

    def convert(self, value: str) -> str:
        return value.replace("%2F", "/").replace("%25", "%")

    def to_string(self, value: str) -> str:
        return value.replace("%", "%25").replace("/", "%2F")


register_url_convertor("subject", _Subject())


class _EncodedSlashes:
    """Routes a path whose segments hold an encoded ``/`` by its segments as sent: each
    segment decoded but for ``/`` and ``%``, which ``_Subject`` decodes."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        raw = scope.get("raw_path") if scope["type"] == "http" else None
        if raw is not None and b"%2f" in raw.lower():
            segments = raw.decode("latin-1").split("?", 1)[0].split("/")
            decoded = (unquote(seg).replace("%", "%25").replace("/", "%2F") for seg in segments)
            scope = {**scope, "path": "/".join(decoded)}
        await self.app(scope, receive, send)


def _json(body: Any, status: int = 200) -> Response:
    return Response(orjson.dumps(body), status_code=status, media_type=CONTENT_TYPE)


def _flag(request: Request, name: str) -> bool:
    return request.query_params.get(name, "false").strip().lower() == "true"


def _id(text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise RegistryError(404, 40403, f"Schema {text} not found") from None


async def _body(request: Request) -> Any:
    raw = await request.body()
    try:
        return orjson.loads(raw) if raw.strip() else None
    except orjson.JSONDecodeError as exc:
        raise RegistryError(400, 400, f"the request body is not JSON: {exc}") from None


_FORWARD_WAIT_S = 30.0  # a failover takes the primary's session timeout and a rebalance
_FORWARD_CONNECT_S = 5.0  # a primary whose host died answers nothing: ask the election again


# What a forwarded request carries of the caller's (Confluent's RequestHeaderBuilder): the
# primary authenticates the caller, not the follower.
_FORWARDED_HEADERS = ("content-type", "accept", "authorization")
# Marks a request one instance forwarded to another. The announced primary can be stale (a
# primary that was killed, deposed, or restarted as a follower at the same URL), and two
# instances must never pass a write back and forth: one that receives a forwarded write and
# is not the primary answers 50004 at once, and the forwarding instance asks the election
# again (Confluent's instances ignore the header).
FORWARDED_HEADER = "x-sluiceway-forwarded"


def _not_the_primary(answer: httpx.Response) -> bool:
    """Whether ``answer`` is an instance saying it is not the primary (see FORWARDED_HEADER)."""
    if answer.status_code != 500:
        return False
    try:
        body = answer.json()
    except ValueError:
        return False
    return isinstance(body, dict) and body.get("error_code") == 50004


async def _forward(election: Election, request: Request, tls: ssl.SSLContext | None) -> Response | None:
    """The primary's answer to this write, when this instance is not the primary (``tls``:
    the context of https calls to it). The announced primary may be one that just died or
    stepped down: the election is asked again, until another takes over, for as long as a
    failover takes."""
    deadline = time.monotonic() + _FORWARD_WAIT_S
    body = await request.body()
    problem = ""
    while True:
        if election.is_primary:
            return None
        if FORWARDED_HEADER in request.headers:
            raise RegistryError(
                500,
                50004,
                f"Unknown leader: {election.url} is not the primary (the request was forwarded here)",
            )
        primary = await run_in_threadpool(election.wait_primary, max(deadline - time.monotonic(), 0.0))
        if primary is None:
            if problem:
                raise RegistryError(
                    500, 50003, f"Error while forwarding the request to the leader: {problem}"
                )
            raise RegistryError(500, 50004, "Unknown leader: no instance of this registry takes writes now")
        if primary == election.url:
            return None
        url = primary.rstrip("/") + request.url.path + (f"?{request.url.query}" if request.url.query else "")
        headers = {name: request.headers[name] for name in _FORWARDED_HEADERS if name in request.headers}
        headers.setdefault("content-type", CONTENT_TYPE)
        headers[FORWARDED_HEADER] = election.url
        connect_s = min(_FORWARD_CONNECT_S, max(deadline - time.monotonic(), 0.5))
        try:
            async with httpx.AsyncClient(
                timeout=httpx.Timeout(60, connect=connect_s), verify=tls if tls is not None else True
            ) as client:
                answer = await client.request(request.method, url, content=body, headers=headers)
        except httpx.TransportError as exc:
            problem = f"{primary}: {exc!r}"
        else:
            if not _not_the_primary(answer):
                return Response(answer.content, status_code=answer.status_code, media_type=CONTENT_TYPE)
            problem = f"{primary} is not the primary"
        if time.monotonic() > deadline:
            raise RegistryError(500, 50003, f"Error while forwarding the request to the leader: {problem}")
        await asyncio.sleep(0.5)


def create_app(registry: Registry, election: Election, forward_tls: ssl.SSLContext | None = None) -> FastAPI:
    """The REST API (``forward_tls``: the context of https calls to the primary)."""
    app = FastAPI(title="Sluiceway Schema Registry", docs_url=None, redoc_url=None)
    app.add_middleware(_EncodedSlashes)

    @app.exception_handler(RegistryError)
    async def registry_error(_: Request, exc: RegistryError) -> Response:
        return _json({"error_code": exc.code, "message": exc.message}, exc.status)

    @app.get("/")
    def root() -> Response:
        return _json({})

    # -- schemas ----------------------------------------------------------------------------------

    @app.get("/schemas/types")
    def schema_types() -> Response:
        return _json(registry.schema_types())

    @app.get("/schemas/ids/{schema_id}")
    def schema_by_id(schema_id: str, request: Request) -> Response:
        q = request.query_params
        return _json(registry.schema_by_id(_id(schema_id), q.get("subject"), q.get("format", "")))

    @app.get("/schemas/ids/{schema_id}/schema")
    def raw_schema_by_id(schema_id: str, request: Request) -> Response:
        schema = registry.schema_by_id(_id(schema_id), None, request.query_params.get("format", ""))["schema"]
        return Response(schema, media_type=CONTENT_TYPE)

    @app.get("/schemas/ids/{schema_id}/subjects")
    def subjects_of_id(schema_id: str, request: Request) -> Response:
        return _json(registry.subjects_of_id(_id(schema_id), _flag(request, "deleted")))

    @app.get("/schemas/ids/{schema_id}/versions")
    def versions_of_id(schema_id: str, request: Request) -> Response:
        return _json(registry.versions_of_id(_id(schema_id), _flag(request, "deleted")))

    # -- subjects ---------------------------------------------------------------------------------

    @app.get("/subjects")
    def subjects(request: Request) -> Response:
        q = request.query_params
        prefix = q.get("subjectPrefix") or q.get("subject") or ""
        deleted_only = _flag(request, "deletedOnly") or _flag(request, "deleted_only")
        return _json(registry.subjects(prefix, _flag(request, "deleted"), deleted_only))

    @app.post("/subjects/{subject:subject}")
    async def lookup(subject: str, request: Request) -> Response:
        body = SchemaRequest(await _body(request))
        return _json(
            await run_in_threadpool(
                registry.lookup,
                subject,
                body,
                _flag(request, "normalize"),
                _flag(request, "deleted"),
                request.query_params.get("format", ""),
            )
        )

    @app.delete("/subjects/{subject:subject}")
    async def delete_subject(subject: str, request: Request) -> Response:
        if (forwarded := await _forward(election, request, forward_tls)) is not None:
            return forwarded
        return _json(await run_in_threadpool(registry.delete_subject, subject, _flag(request, "permanent")))

    @app.get("/subjects/{subject:subject}/versions")
    def versions(subject: str, request: Request) -> Response:
        deleted_only = _flag(request, "deletedOnly") or _flag(request, "deleted_only")
        return _json(registry.versions(subject, _flag(request, "deleted"), deleted_only))

    @app.post("/subjects/{subject:subject}/versions")
    async def register(subject: str, request: Request) -> Response:
        if (forwarded := await _forward(election, request, forward_tls)) is not None:
            return forwarded
        body = SchemaRequest(await _body(request))
        return _json(await run_in_threadpool(registry.register, subject, body, _flag(request, "normalize")))

    @app.get("/subjects/{subject:subject}/versions/{version}")
    def version(subject: str, version: str, request: Request) -> Response:
        fmt = request.query_params.get("format", "")
        return _json(registry.version(subject, version, _flag(request, "deleted"), fmt))

    @app.get("/subjects/{subject:subject}/versions/{version}/schema")
    def raw_version(subject: str, version: str, request: Request) -> Response:
        fmt = request.query_params.get("format", "")
        schema = registry.version(subject, version, _flag(request, "deleted"), fmt)["schema"]
        return Response(schema, media_type=CONTENT_TYPE)

    @app.get("/subjects/{subject:subject}/versions/{version}/referencedby")
    def referenced_by(subject: str, version: str) -> Response:
        return _json(registry.referenced_by(subject, version))

    @app.delete("/subjects/{subject:subject}/versions/{version}")
    async def delete_version(subject: str, version: str, request: Request) -> Response:
        if (forwarded := await _forward(election, request, forward_tls)) is not None:
            return forwarded
        return _json(
            await run_in_threadpool(registry.delete_version, subject, version, _flag(request, "permanent"))
        )

    # -- compatibility ----------------------------------------------------------------------------

    @app.post("/compatibility/subjects/{subject:subject}/versions/{version}")
    async def check_version(subject: str, version: str, request: Request) -> Response:
        body = SchemaRequest(await _body(request))
        return _json(
            await run_in_threadpool(
                registry.check, subject, version, body, _flag(request, "normalize"), _flag(request, "verbose")
            )
        )

    @app.post("/compatibility/subjects/{subject:subject}/versions")
    async def check_all(subject: str, request: Request) -> Response:
        body = SchemaRequest(await _body(request))
        return _json(
            await run_in_threadpool(
                registry.check, subject, None, body, _flag(request, "normalize"), _flag(request, "verbose")
            )
        )

    # -- config -----------------------------------------------------------------------------------

    @app.get("/config")
    def global_config() -> Response:
        return _json(registry.get_config(None, True))

    @app.put("/config")
    async def put_global_config(request: Request) -> Response:
        if (forwarded := await _forward(election, request, forward_tls)) is not None:
            return forwarded
        return _json(await run_in_threadpool(registry.put_config, None, await _body(request)))

    @app.delete("/config")
    async def delete_global_config(request: Request) -> Response:
        if (forwarded := await _forward(election, request, forward_tls)) is not None:
            return forwarded
        return _json(await run_in_threadpool(registry.delete_config, None))

    @app.get("/config/{subject:subject}")
    def subject_config(subject: str, request: Request) -> Response:
        return _json(registry.get_config(subject, _flag(request, "defaultToGlobal")))

    @app.put("/config/{subject:subject}")
    async def put_subject_config(subject: str, request: Request) -> Response:
        if (forwarded := await _forward(election, request, forward_tls)) is not None:
            return forwarded
        return _json(await run_in_threadpool(registry.put_config, subject, await _body(request)))

    @app.delete("/config/{subject:subject}")
    async def delete_subject_config(subject: str, request: Request) -> Response:
        if (forwarded := await _forward(election, request, forward_tls)) is not None:
            return forwarded
        return _json(await run_in_threadpool(registry.delete_config, subject))

    # -- mode -------------------------------------------------------------------------------------

    @app.get("/mode")
    def global_mode() -> Response:
        return _json(registry.get_mode(None, True))

    @app.put("/mode")
    async def put_global_mode(request: Request) -> Response:
        if (forwarded := await _forward(election, request, forward_tls)) is not None:
            return forwarded
        return _json(
            await run_in_threadpool(registry.put_mode, None, await _body(request), _flag(request, "force"))
        )

    @app.get("/mode/{subject:subject}")
    def subject_mode(subject: str, request: Request) -> Response:
        return _json(registry.get_mode(subject, _flag(request, "defaultToGlobal")))

    @app.put("/mode/{subject:subject}")
    async def put_subject_mode(subject: str, request: Request) -> Response:
        if (forwarded := await _forward(election, request, forward_tls)) is not None:
            return forwarded
        return _json(
            await run_in_threadpool(registry.put_mode, subject, await _body(request), _flag(request, "force"))
        )

    @app.delete("/mode/{subject:subject}")
    async def delete_subject_mode(subject: str, request: Request) -> Response:
        if (forwarded := await _forward(election, request, forward_tls)) is not None:
            return forwarded
        return _json(await run_in_threadpool(registry.delete_mode, subject))

    return app
