"""Kafka Connect's REST API, path for path (Kafka 3.9 / 4.x), on FastAPI.

Bodies, status codes and the error body ``{"error_code": <status>, "message": ...}``
match Kafka Connect's, so its CLIs, UIs, Terraform providers and client libraries
work unchanged. Every handler delegates to the herder; none calls plugin code on
the event loop. The OpenAPI document is at ``/openapi.json`` (``/docs`` renders it).
"""

from __future__ import annotations

import logging
import re
import ssl
import time
from importlib.metadata import PackageNotFoundError, version
from typing import Any, Final

import httpx
import orjson
from fastapi import FastAPI, Query, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response
from starlette.exceptions import HTTPException as StarletteHTTPException

from connect.api.errors import AlreadyExistsException, ConnectException, NotFoundException
from connect.herder.base import Herder, RequestError, RequestTargetException, bad_request
from connect.rest import console
from connect.rest.metrics import metrics_router
from connect.rest.schemas import router as schemas_router
from connect.rest.security import secure
from connect.rest.tls import worker_client_context
from connect.rest.topic_records import router as topic_records_router
from connect.rest.topics import router as topics_router
from connect.runtime.config import as_strings
from connect.runtime.status import ConnectorTaskId, TargetState

log = logging.getLogger(__name__)

try:
    VERSION = version("sluiceway")
except PackageNotFoundError:  # running from a source tree without installing
    VERSION = "0.0.0"


def error(status: int, message: str) -> JSONResponse:
    return JSONResponse({"error_code": status, "message": message}, status_code=status)


def _json(body: Any, status: int = 200, headers: dict[str, str] | None = None) -> Response:
    return Response(orjson.dumps(body), status_code=status, media_type="application/json", headers=headers)


# The bodies the routes read themselves (so malformed JSON gets Kafka Connect's error body),
# declared in /openapi.json for clients and for the schemathesis fuzz test.
_STRINGS: Final[dict[str, Any]] = {"type": "object", "additionalProperties": {"type": "string"}}


def _json_body(schema: dict[str, Any]) -> dict[str, Any]:
    return {"requestBody": {"required": True, "content": {"application/json": {"schema": schema}}}}


_CREATE_BODY: Final = _json_body(
    {
        "type": "object",
        "required": ["name", "config"],
        "properties": {
            "name": {"type": "string"},
            "config": _STRINGS,
            "initial_state": {"type": "string", "enum": ["RUNNING", "PAUSED", "STOPPED"]},
        },
    }
)
_CONFIG_BODY: Final = _json_body(_STRINGS)
_PATCH_BODY: Final = _json_body({"type": "object", "additionalProperties": {"type": ["string", "null"]}})
_OFFSETS_BODY: Final = _json_body(
    {
        "type": "object",
        "required": ["offsets"],
        "properties": {
            "offsets": {
                "type": "array",
                "items": {
                    "type": "object",
                    "required": ["partition"],
                    "properties": {
                        "partition": {"type": "object"},
                        "offset": {"type": ["object", "null"]},
                    },
                },
            }
        },
    }
)
_LOGGER_BODY: Final = _json_body(
    {"type": "object", "required": ["level"], "properties": {"level": {"type": "string"}}}
)


async def _body(request: Request) -> Any:
    raw = await request.body()
    if not raw.strip():
        raise bad_request("Request body is empty")
    try:
        return orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        raise bad_request(f"Request body is not valid JSON: {exc}") from None


def _string_map(value: Any, what: str, allow_null: bool = False) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise bad_request(f"{what} must be a JSON object of strings")
    out: dict[str, Any] = {}
    for k, v in value.items():
        if v is None:
            if not allow_null:
                raise bad_request(f"{what}: the value of '{k}' must not be null")
            out[k] = None
        elif isinstance(v, (dict, list)):
            raise bad_request(f"{what}: the value of '{k}' must be a string")
        else:
            out[k] = v
    return out


def _connector_name(raw: Any) -> str:
    if not isinstance(raw, str):
        raise bad_request("Connector name is required and must be a string")
    name = raw.strip()
    if not name:
        raise bad_request("Connector name cannot be empty")
    if "/" in name:
        raise bad_request("Connector name must not contain '/'")
    return name


def _task_id(connector: str, task: str) -> ConnectorTaskId:
    # JAX-RS answers a path parameter it cannot convert with 404, and so does this.
    # ASCII digits only: str.isdigit() also takes digits int() refuses (superscript '³').
    if re.fullmatch(r"-?[0-9]+", task) is None:
        raise NotFoundException("HTTP 404 Not Found")
    return ConnectorTaskId(connector, int(task))


# log4j's level names (what Kafka Connect's /admin/loggers speaks) and Python's levels.
TRACE = 5
OFF = logging.CRITICAL + 10
logging.addLevelName(TRACE, "TRACE")
_LOG4J_TO_PY = {
    "ALL": 1,
    "TRACE": TRACE,
    "DEBUG": logging.DEBUG,
    "INFO": logging.INFO,
    "WARN": logging.WARNING,
    "ERROR": logging.ERROR,
    "FATAL": logging.CRITICAL,
    "OFF": OFF,
}
_PY_TO_LOG4J = {v: k for k, v in _LOG4J_TO_PY.items()}


def log4j_level(level: int) -> str:
    """The log4j name of a Python level (the nearest named level at or below it)."""
    for value in sorted(_PY_TO_LOG4J, reverse=True):
        if level >= value:
            return _PY_TO_LOG4J[value]
    return "ALL"


class _TrailingSlash:
    """``/connectors/`` is ``/connectors`` (Jersey serves both; kcctl calls the former)."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            path = scope["path"]
            if len(path) > 1 and path.endswith("/"):
                scope = {**scope, "path": path.rstrip("/") or "/"}
        await self.app(scope, receive, send)


def _with_name(name: str, config: dict[str, Any]) -> dict[str, str]:
    given = config.get("name")
    if given is not None and str(given) != name:
        raise bad_request(
            f"Connector name configuration ({given}) doesn't match connector name in the URL ({name})"
        )
    return as_strings({**config, "name": name})


_FORWARDED_HEADERS = (
    "content-type",
    "accept",
    "authorization",  # the leader authorises the original user, as in Kafka
    "x-connect-authorization",
    "x-connect-request-signature-algorithm",
)
_RELAYED_HEADERS = ("location", "content-type")


async def _forward_request(request: Request, target: str, tls: ssl.SSLContext | bool = True) -> Response:
    """Re-send a request this worker cannot serve to the worker that can (Kafka's rules:
    a user request may be forwarded twice at most; ``forward=false`` marks the last hop)."""
    forward = request.query_params.get("forward")
    if forward is not None and forward.lower() != "true":
        return error(
            409, "Cannot complete request because of a conflicting operation (e.g. worker rebalance)"
        )
    params: list[tuple[str, str | int | float | bool | None]] = [
        (k, v) for k, v in request.query_params.multi_items() if k != "forward"
    ]
    params.append(("forward", "true" if forward is None else "false"))
    url = target.rstrip("/") + request.url.path
    headers = {k: v for k, v in request.headers.items() if k.lower() in _FORWARDED_HEADERS}
    body = await request.body()
    try:
        async with httpx.AsyncClient(timeout=60.0, verify=tls) as client:
            answer = await client.request(request.method, url, params=params, content=body, headers=headers)
    except httpx.HTTPError as exc:
        log.warning("forwarding %s %s to %s failed: %s", request.method, request.url.path, target, exc)
        return error(409, f"Cannot complete request: the worker at {target} did not answer ({exc})")
    relayed = {k: v for k, v in answer.headers.items() if k.lower() in _RELAYED_HEADERS}
    return Response(answer.content, status_code=answer.status_code, headers=relayed)


def create_app(herder: Herder) -> FastAPI:
    app = FastAPI(
        title="Sluiceway Connect REST API",
        version=VERSION,
        description="Kafka Connect's REST API, served by a Sluiceway worker.",
        redirect_slashes=False,
    )
    app.add_middleware(_TrailingSlash)
    app.include_router(metrics_router(herder))
    forward_tls = worker_client_context(herder.worker.config)  # trusts the other workers' listeners
    logger_changes: dict[str, int] = {}

    # -- errors -------------------------------------------------------------------------

    @app.exception_handler(NotFoundException)
    async def _not_found(_: Request, exc: NotFoundException) -> JSONResponse:
        return error(404, str(exc))

    @app.exception_handler(AlreadyExistsException)
    async def _exists(_: Request, exc: AlreadyExistsException) -> JSONResponse:
        return error(409, str(exc))

    @app.exception_handler(RequestError)
    async def _request(_: Request, exc: RequestError) -> JSONResponse:
        return error(exc.status, str(exc))

    @app.exception_handler(RequestTargetException)
    async def _forward(request: Request, exc: RequestTargetException) -> Response:
        return await _forward_request(request, exc.url, forward_tls)

    @app.exception_handler(ConnectException)
    async def _connect(_: Request, exc: ConnectException) -> JSONResponse:
        log.error("request failed: %s", exc)
        return error(500, str(exc))

    @app.exception_handler(StarletteHTTPException)
    async def _http(_: Request, exc: StarletteHTTPException) -> JSONResponse:
        # Jersey's texts for its own errors, e.g. "HTTP 405 Method Not Allowed".
        return error(exc.status_code, f"HTTP {exc.status_code} {exc.detail}")

    @app.exception_handler(Exception)
    async def _unexpected(_: Request, exc: Exception) -> JSONResponse:
        log.error("request failed unexpectedly", exc_info=exc)
        return error(500, f"{type(exc).__name__}: {exc}")

    @app.exception_handler(RequestValidationError)
    async def _invalid(_: Request, exc: RequestValidationError) -> JSONResponse:
        problems = "; ".join(f"{'.'.join(str(p) for p in e['loc'])}: {e['msg']}" for e in exc.errors())
        return error(400, problems or "invalid request")

    # -- root -----------------------------------------------------------------------

    @app.get("/", summary="Worker version and Kafka cluster")
    async def root() -> Response:
        return _json({"version": VERSION, "commit": "sluiceway", "kafka_cluster_id": herder.kafka_cluster_id})

    @app.get("/health", summary="Worker health (KIP-1017)")
    async def health() -> Response:
        if not herder.ready:
            return _json({"status": "starting", "message": "Worker is still starting up."}, 503)
        return _json(
            {"status": "healthy", "message": "Worker has completed startup and is ready to handle requests."}
        )

    # -- connectors -------------------------------------------------------------------

    @app.get("/connectors", summary="List connectors (expand=status, expand=info)")
    async def list_connectors(expand: list[str] = Query(default=[])) -> Response:  # noqa: B008
        names = await herder.connectors()
        if not expand:
            return _json(names)
        wanted = {e for e in expand if e in ("status", "info")}  # others give {} per connector, as in Kafka
        out: dict[str, Any] = {}
        for name in names:
            entry: dict[str, Any] = {}
            try:
                if "status" in wanted:
                    entry["status"] = await herder.connector_status(name)
                if "info" in wanted:
                    entry["info"] = await herder.connector_info(name)
            except NotFoundException:
                continue  # deleted meanwhile
            out[name] = entry
        return _json(out)

    @app.post("/connectors", status_code=201, summary="Create a connector", openapi_extra=_CREATE_BODY)
    async def create_connector(request: Request) -> Response:
        body = await _body(request)
        if not isinstance(body, dict):
            raise bad_request("Request body must be a JSON object with 'name' and 'config'")
        name = _connector_name(body.get("name"))
        config = _with_name(name, _string_map(body.get("config") or {}, "config"))
        state = body.get("initial_state")
        try:
            initial = TargetState.from_initial(str(state).upper()) if state is not None else None
        except ValueError as exc:
            raise bad_request(str(exc)) from None
        await herder.put_connector_config(name, config, allow_replace=False, initial_state=initial)
        info = await herder.connector_info(name)
        return _json(info, 201, {"Location": f"{request.base_url}connectors/{name}"})

    @app.get("/connectors/{connector}", summary="Connector config and tasks")
    async def get_connector(connector: str) -> Response:
        return _json(await herder.connector_info(connector))

    @app.delete("/connectors/{connector}", status_code=204, summary="Delete a connector")
    async def delete_connector(connector: str) -> Response:
        await herder.delete_connector(connector)
        return Response(status_code=204)

    @app.get("/connectors/{connector}/config", summary="Connector config")
    async def get_config(connector: str) -> Response:
        return _json(await herder.connector_config(connector))

    @app.put(
        "/connectors/{connector}/config",
        summary="Create or replace a connector's config",
        openapi_extra=_CONFIG_BODY,
    )
    async def put_config(connector: str, request: Request) -> Response:
        config = _with_name(_connector_name(connector), _string_map(await _body(request), "config"))
        created = await herder.put_connector_config(connector, config, allow_replace=True)
        info = await herder.connector_info(connector)
        if created:
            return _json(info, 201, {"Location": f"{request.base_url}connectors/{connector}"})
        return _json(info)

    @app.patch(
        "/connectors/{connector}/config",
        summary="Change some keys of a connector's config (null removes)",
        openapi_extra=_PATCH_BODY,
    )
    async def patch_config(connector: str, request: Request) -> Response:
        patch = _string_map(await _body(request), "config", allow_null=True)
        current = await herder.connector_config(connector)
        merged: dict[str, Any] = dict(current)
        for k, v in patch.items():
            if v is None:
                merged.pop(k, None)
            else:
                merged[k] = v
        config = _with_name(connector, merged)
        await herder.put_connector_config(connector, config, allow_replace=True)
        return _json(await herder.connector_info(connector))

    @app.get("/connectors/{connector}/status", summary="Connector and task states")
    async def status(connector: str) -> Response:
        return _json(await herder.connector_status(connector))

    @app.get("/connectors/{connector}/tasks", summary="Task configs")
    async def tasks(connector: str) -> Response:
        configs = await herder.task_configs(connector)
        return _json(
            [{"id": {"connector": connector, "task": i}, "config": c} for i, c in enumerate(configs)]
        )

    @app.get("/connectors/{connector}/tasks/{task}/status", summary="One task's state")
    async def task_status(connector: str, task: str) -> Response:
        return _json(await herder.task_status(_task_id(connector, task)))

    @app.post("/connectors/{connector}/tasks/{task}/restart", status_code=204, summary="Restart one task")
    async def restart_task(connector: str, task: str) -> Response:
        await herder.restart_task(_task_id(connector, task))
        return Response(status_code=204)

    @app.post("/connectors/{connector}/restart", summary="Restart a connector (and its tasks, KIP-745)")
    async def restart(connector: str, includeTasks: bool = False, onlyFailed: bool = False) -> Response:
        result = await herder.restart_connector(connector, includeTasks, onlyFailed)
        if result is None:
            return Response(status_code=204)
        return _json(result, 202)

    @app.put(
        "/connectors/{connector}/pause",
        status_code=202,
        response_class=Response,
        summary="Pause a connector and its tasks",
    )
    async def pause(connector: str) -> Response:
        await herder.set_target_state(connector, TargetState.PAUSED)
        return Response(status_code=202)

    @app.put(
        "/connectors/{connector}/resume",
        status_code=202,
        response_class=Response,
        summary="Resume a paused or stopped connector",
    )
    async def resume(connector: str) -> Response:
        await herder.set_target_state(connector, TargetState.STARTED)
        return Response(status_code=202)

    @app.put(
        "/connectors/{connector}/stop", status_code=204, summary="Stop a connector and shut down its tasks"
    )
    async def stop(connector: str) -> Response:
        await herder.set_target_state(connector, TargetState.STOPPED)
        return Response(status_code=204)

    # -- internal: task configs from other workers (distributed mode) ------------------

    @app.put("/connectors/{connector}/tasks", status_code=204, include_in_schema=False)
    async def put_task_configs(connector: str, request: Request) -> Response:
        accept = getattr(herder, "put_task_configs", None)
        if accept is None:
            raise NotFoundException("HTTP 404 Not Found")  # only distributed workers take these
        raw = await request.body()
        configs = await _body(request)
        if not isinstance(configs, list) or not all(isinstance(c, dict) for c in configs):
            raise bad_request("Task configs must be a JSON array of objects")
        await accept(connector, [as_strings(c) for c in configs], dict(request.headers), raw)
        return Response(status_code=204)

    @app.put("/connectors/{connector}/fence", status_code=204, include_in_schema=False)
    async def fence_zombies(connector: str, request: Request) -> Response:
        # Internal (KIP-618): a worker about to start exactly-once tasks asks the leader to
        # fence the producers of their older generation; signed like the task configs.
        fence = getattr(herder, "fence_zombies", None)
        if fence is None:
            raise NotFoundException("HTTP 404 Not Found")  # only distributed workers take these
        await fence(connector, dict(request.headers), await request.body())
        return Response(status_code=204)

    # -- offsets (KIP-875) ----------------------------------------------------------------

    @app.get("/connectors/{connector}/offsets", summary="Committed offsets")
    async def get_offsets(connector: str) -> Response:
        return _json({"offsets": await herder.connector_offsets(connector)})

    @app.patch(
        "/connectors/{connector}/offsets",
        summary="Alter offsets of a STOPPED connector",
        openapi_extra=_OFFSETS_BODY,
    )
    async def alter_offsets(connector: str, request: Request) -> Response:
        body = await _body(request)
        offsets = body.get("offsets") if isinstance(body, dict) else None
        if not isinstance(offsets, list) or not offsets:
            raise bad_request("Partitions / offsets need to be provided for an alter offsets request")
        return _json({"message": await herder.alter_offsets(connector, offsets)})

    @app.delete("/connectors/{connector}/offsets", summary="Reset the offsets of a STOPPED connector")
    async def reset_offsets(connector: str) -> Response:
        return _json({"message": await herder.reset_offsets(connector)})

    # -- active topics (KIP-558) --------------------------------------------------------

    @app.get("/connectors/{connector}/topics", summary="Topics the connector has used")
    async def topics(connector: str) -> Response:
        if not herder.worker.config.topic_tracking_enable:
            return error(403, "Topic tracking is disabled.")
        return _json({connector: {"topics": herder.active_topics(connector)}})

    @app.put(
        "/connectors/{connector}/topics/reset",
        status_code=202,
        response_class=Response,  # an empty 202: no JSON body to declare in /openapi.json
        summary="Forget the connector's topics",
    )
    async def reset_topics(connector: str) -> Response:
        cfg = herder.worker.config
        if not cfg.topic_tracking_enable:
            return error(403, "Topic tracking is disabled.")
        if not cfg.topic_tracking_allow_reset:
            return error(403, "Topic tracking reset is disabled.")
        await herder.reset_active_topics(connector)
        return Response(status_code=202)

    # -- plugins ------------------------------------------------------------------------

    @app.get("/connector-plugins", summary="Installed plugins")
    async def plugins(connectorsOnly: str = "true") -> Response:
        # Kafka's semantics: anything but "true" lists every kind of plugin.
        return _json(herder.plugins_list(connectorsOnly.lower() == "true"))

    @app.get("/connector-plugins/{plugin}/config", summary="A plugin's config definitions")
    async def plugin_config(plugin: str) -> Response:
        return _json(herder.plugin_config(plugin))

    @app.put(
        "/connector-plugins/{plugin}/config/validate",
        summary="Validate a connector config",
        openapi_extra=_CONFIG_BODY,
    )
    async def validate(plugin: str, request: Request) -> Response:
        config = as_strings(_string_map(await _body(request), "config"))
        given = config.get("connector.class")
        if given is None:
            shown = "{" + ", ".join(f"{k}={v}" for k, v in config.items()) + "}"
            raise bad_request(f"Connector config {shown} contains no connector type")
        if not herder.plugin_matches(plugin, given):
            raise bad_request("Included connector type " + given + " does not match request type " + plugin)
        from connect.runtime.validation import BadRequest

        try:
            result = await herder.validate(config)
        except BadRequest as exc:
            raise bad_request(str(exc)) from None
        return _json(result.infos)

    # -- loggers ----------------------------------------------------------------------

    def _logger_body(name: str) -> dict[str, Any]:
        logger = logging.getLogger(None if name == "root" else name)
        return {"level": log4j_level(logger.getEffectiveLevel()), "last_modified": logger_changes.get(name)}

    @app.get("/admin/loggers", summary="Levels of the configured loggers")
    async def loggers() -> Response:
        configured = (
            n
            for n, lg in logging.Logger.manager.loggerDict.items()
            if isinstance(lg, logging.Logger) and lg.level != logging.NOTSET
        )
        names = ["root", *sorted(configured)]
        return _json({n: _logger_body(n) for n in names})

    @app.get("/admin/loggers/{name}", summary="A logger's level")
    async def get_logger(name: str) -> Response:
        if name != "root" and name not in logging.Logger.manager.loggerDict:
            return error(404, f"Logger {name} not found.")
        return _json(_logger_body(name))

    @app.put(
        "/admin/loggers/{name}",
        summary="Set a logger's level (and its children's)",
        openapi_extra=_LOGGER_BODY,
    )
    async def set_logger(name: str, request: Request, scope: str = "worker") -> Response:
        body = await _body(request)
        level = body.get("level") if isinstance(body, dict) else None
        if not level:
            raise bad_request("Desired 'level' parameter was not specified in request.")
        value = _LOG4J_TO_PY.get(str(level).upper())
        if value is None:
            return error(404, f"invalid log level '{level}'.")  # Kafka answers 404 here, a known quirk
        now = int(time.time() * 1000)
        affected = [name]
        logging.getLogger(None if name == "root" else name).setLevel(value)
        logger_changes[name] = now
        for child, lg in list(logging.Logger.manager.loggerDict.items()):
            if isinstance(lg, logging.Logger) and (name == "root" or child.startswith(name + ".")):
                lg.setLevel(value)
                logger_changes[child] = now
                affected.append(child)
        if scope == "cluster":
            return Response(status_code=204)
        return _json(sorted(set(affected)))

    app.include_router(topics_router(herder))  # /sluiceway/topics, a read-only extension
    app.include_router(schemas_router(herder))  # /sluiceway/schemas, the registry as the console shows it
    app.include_router(topic_records_router(herder))  # /sluiceway/topics/{name}/records, decoded
    app.include_router(console.router)  # the web console: /ui and its files
    app.mount(console.PATH, console.assets(), name="console")

    secure(app, herder.worker.config)  # CORS and authentication, outermost
    return app
