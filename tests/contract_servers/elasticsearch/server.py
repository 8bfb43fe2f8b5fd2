"""The Elasticsearch contract server: the server."""

from __future__ import annotations

import base64
import fnmatch
import hmac
import threading
import time
import traceback
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qsl, unquote, urlsplit

import orjson

from tests.contract_servers._http import (
    BackgroundServer,
)
from tests.contract_servers.elasticsearch.bulk import (
    _BadSource,
    _Op,
    _parse_bulk,
    _parse_meta,
    _parse_update_body,
    _validate_ops,
)
from tests.contract_servers.elasticsearch.cluster import _Cluster
from tests.contract_servers.elasticsearch.constants import _LUCENE, _MISSING, VERSION
from tests.contract_servers.elasticsearch.errors import EsError, _Drop, _illegal, _PlainError
from tests.contract_servers.elasticsearch.filtering import _filter_path
from tests.contract_servers.elasticsearch.http import (
    _ANONYMOUS_DENIED,
    _BULK_PARAMS,
    _COMPAT,
    _JSON_TYPES,
    _WWW_AUTHENTICATE,
    _fault_error,
    _HttpServer,
    _item_fault,
    _Response,
)
from tests.contract_servers.elasticsearch.indices import _nest_settings, _new_uuid

if TYPE_CHECKING:
    import ssl
    from collections.abc import Callable, Sequence


class ElasticsearchContractServer(BackgroundServer):
    """An in-process Elasticsearch 8 stand-in (see the module docstring).

    Data lives on this object, so ``stop()`` followed by ``start()`` (same port) brings the
    "cluster" back with everything it held."""

    accept_thread_name = "es-contract-accept"

    def __init__(
        self,
        host: str = "127.0.0.1",
        port: int = 0,
        *,
        username: str | None = None,
        password: str | None = None,
        api_key: str | tuple[str, str] | None = None,
        ssl_context: ssl.SSLContext | None = None,
        cluster_name: str = "contract-cluster",
        node_name: str = "contract-node-1",
    ) -> None:
        if (username is None) != (password is None):
            raise ValueError("username and password go together")
        super().__init__(host, port)
        self.username = username
        self.password = password
        if isinstance(api_key, tuple):
            api_key = base64.b64encode(f"{api_key[0]}:{api_key[1]}".encode()).decode()
        self.api_key = api_key
        self.ssl_context = ssl_context
        self.cluster_name = cluster_name
        self.node_name = node_name
        self.cluster_uuid = _new_uuid()
        self._cluster = _Cluster()
        self._lock = threading.Lock()
        self._faults = threading.Lock()
        self._fail_remaining = 0
        self._fail_status = 429
        self._fail_paths: tuple[str, ...] = ("_bulk",)
        self._reject_remaining = 0
        self._reject_status = 429
        self._delay_s = 0.0
        self._reset_counters()

    # -- lifecycle

    def _make_server(self, address: tuple[str, int]) -> _HttpServer:
        return _HttpServer(address, self)

    @property
    def url(self) -> str:
        scheme = "https" if self.ssl_context is not None else "http"
        return f"{scheme}://{self.host}:{self._port}"

    # -- fault injection

    def fail_next_requests(self, n: int, status: int = 429, paths: str | Sequence[str] = "_bulk") -> None:
        """The next ``n`` requests whose path contains one of ``paths`` ("" or "*": any) get
        ``status`` with Elasticsearch's error body for it; status 0 closes the connection
        without an answer instead."""
        with self._faults:
            self._fail_remaining = n
            self._fail_status = status
            self._fail_paths = (paths,) if isinstance(paths, str) else tuple(paths)

    def reject_next_items(self, n: int, status: int = 429) -> None:
        """The next ``n`` bulk items (across requests) fail on their own with ``status``
        (429: ``es_rejected_execution_exception``) while the rest of each bulk succeeds."""
        with self._faults:
            self._reject_remaining = n
            self._reject_status = status

    def delay(self, ms: float) -> None:
        """Every bulk request waits ``ms`` before it is processed (0 turns it off)."""
        with self._faults:
            self._delay_s = max(ms, 0) / 1000.0

    def clear_faults(self) -> None:
        with self._faults:
            self._fail_remaining = 0
            self._reject_remaining = 0
            self._delay_s = 0.0

    # -- observation

    def _reset_counters(self) -> None:
        self._bulk_requests = 0
        self._bulk_items: list[int] = []
        self._bulk_in_flight = 0
        self._max_concurrent_bulks = 0
        self._failed_requests = 0
        self._rejected_items = 0
        self._requests = 0

    def reset_observations(self) -> None:
        with self._faults:
            in_flight = self._bulk_in_flight
            self._reset_counters()
            self._bulk_in_flight = in_flight

    @property
    def bulk_requests(self) -> int:
        """Bulk requests received, injected failures included."""
        with self._faults:
            return self._bulk_requests

    @property
    def bulk_items(self) -> list[int]:
        """Item count of each bulk request that was processed, in arrival order."""
        with self._faults:
            return list(self._bulk_items)

    @property
    def max_concurrent_bulks(self) -> int:
        with self._faults:
            return self._max_concurrent_bulks

    def document_counts(self) -> dict[str, int]:
        """Live documents per index, data streams counted under their own name."""
        with self._lock:
            cluster = self._cluster
            counts = {n: len(i.docs) for n, i in cluster.indices.items() if i.data_stream is None}
            for name, stream in cluster.data_streams.items():
                counts[name] = sum(len(i.docs) for i in stream.indices)
            return counts

    def document_count(self, index: str) -> int:
        with self._lock:
            return sum(len(i.docs) for i in self._cluster.resolve(index, allow_missing=True))

    def documents(self, index: str) -> dict[str, dict[str, Any]]:
        """``{id: _source}`` of an index or data stream; the sources are the server's own
        objects, so read them, do not change them."""
        with self._lock:
            out: dict[str, dict[str, Any]] = {}
            for idx in self._cluster.resolve(index, allow_missing=True):
                out.update((doc_id, doc.source) for doc_id, doc in idx.docs.items())
            return out

    def mapping(self, index: str) -> dict[str, Any]:
        with self._lock:
            return self._cluster.single_index(index).mapping.render()

    def observations(self) -> dict[str, Any]:
        counts = self.document_counts()
        with self._faults:
            return {
                "requests": self._requests,
                "bulk_requests": self._bulk_requests,
                "bulk_items": list(self._bulk_items),
                "max_concurrent_bulks": self._max_concurrent_bulks,
                "bulk_in_flight": self._bulk_in_flight,
                "failed_requests": self._failed_requests,
                "rejected_items": self._rejected_items,
                "documents": counts,
            }

    def reset(self) -> None:
        """Forgets every index, data stream and user template, faults and observations."""
        with self._lock:
            self._cluster = _Cluster()
        self.clear_faults()
        self.reset_observations()

    # -- request handling (handler threads)

    def _dispatch(self, method: str, target: str, headers: Any, body: bytes) -> _Response | None:
        split = urlsplit(target)
        path = split.path or "/"
        params = dict(parse_qsl(split.query, keep_blank_values=True))
        try:
            if path.startswith("/_contract/") or path == "/_contract":
                return self._admin(method, path, body)
            with self._faults:
                self._requests += 1
            self._check_auth(headers.get("Authorization"), target)
            self._check_media(headers, body)
            fault = self._take_fault(path)
            is_bulk = path.endswith("/_bulk")
            if is_bulk:
                with self._faults:
                    self._bulk_requests += 1
            if fault is not None:
                with self._faults:
                    self._failed_requests += 1
                if fault == 0:
                    return None
                raise _fault_error(fault, len(body))
            response = self._route(method, path, params, body)
        except _Drop:
            return None
        except EsError as exc:
            response = _Response(exc.status, exc.body(), exc.headers)
        except _PlainError as exc:
            response = _Response(exc.status, {"error": exc.message, "status": exc.status})
        except Exception as exc:  # a bug here must reach the client as an error, not a hang
            traceback.print_exc()
            error = EsError(500, "exception", f"contract server failure: {exc!r}")
            response = _Response(500, error.body())
        if "filter_path" in params and isinstance(response.body, dict):
            response.body = _filter_path(response.body, params["filter_path"])
        return response

    def _check_auth(self, header: str | None, target: str) -> None:
        if self.username is None and self.api_key is None:
            return
        request = f"REST request [{target}]"
        if not header:
            raise EsError(
                401,
                "security_exception",
                f"missing authentication credentials for {request}",
                extra={"header": {"WWW-Authenticate": [v for _, v in _WWW_AUTHENTICATE]}},
                headers=_WWW_AUTHENTICATE,
            )
        scheme, _, credentials = header.partition(" ")
        scheme = scheme.lower()
        credentials = credentials.strip()
        if scheme == "basic" and self.username is not None:
            try:
                user, _, secret = base64.b64decode(credentials, validate=True).decode().partition(":")
            except (ValueError, UnicodeDecodeError):
                user, secret = "", None
            if hmac.compare_digest(user.encode(), self.username.encode()) and hmac.compare_digest(
                (secret or "").encode(), (self.password or "").encode()
            ):
                return
            reason = f"unable to authenticate user [{user}] for {request}"
        elif scheme == "apikey" and self.api_key is not None:
            if hmac.compare_digest(credentials.encode(), self.api_key.encode()):
                return
            reason = _ANONYMOUS_DENIED
        else:
            reason = _ANONYMOUS_DENIED
        raise EsError(
            401,
            "security_exception",
            reason,
            extra={"header": {"WWW-Authenticate": [v for _, v in _WWW_AUTHENTICATE]}},
            headers=_WWW_AUTHENTICATE,
        )

    def _check_media(self, headers: Any, body: bytes) -> None:
        content_type = headers.get("Content-Type")
        accept = headers.get("Accept")
        versions: dict[str, str] = {}
        for name, value in (("Content-Type", content_type), ("Accept", accept)):
            match = _COMPAT.search(value or "")
            if match:
                versions[name] = match.group(1)
                if match.group(1) not in ("7", "8"):
                    raise _media_type_error(
                        f"{name} version must be either version 8 or 7, but found "
                        f"{match.group(1)}. {name}={value}"
                    )
        if body and "Content-Type" in versions and "Accept" in versions and len(set(versions.values())) > 1:
            raise _media_type_error(
                "A compatible version is required on both Content-Type and Accept headers if "
                "either one has requested a compatible version and the compatible versions must match. "
                f"Accept={accept}, Content-Type={content_type}"
            )
        if body:
            if not content_type:
                raise _PlainError(406, "Content-Type header is missing")
            base = content_type.split(";")[0].strip().lower()
            if base not in _JSON_TYPES:
                raise _PlainError(406, f"Content-Type header [{content_type}] is not supported")

    def _take_fault(self, path: str) -> int | None:
        with self._faults:
            if self._fail_remaining <= 0:
                return None
            if not any(p in ("", "*") or p in path for p in self._fail_paths):
                return None
            self._fail_remaining -= 1
            return self._fail_status

    def _admin(self, method: str, path: str, body: bytes) -> _Response:
        parts = [unquote(p) for p in path.strip("/").split("/")][1:]
        try:
            args: dict[str, Any] = orjson.loads(body) if body else {}
        except orjson.JSONDecodeError:
            raise _illegal("admin request bodies are JSON objects") from None
        if not isinstance(args, dict):
            raise _illegal("admin request bodies are JSON objects")
        op = parts[0] if parts else ""
        ack = {"acknowledged": True}
        if op == "fail_next_requests":
            self.fail_next_requests(
                int(args.get("n", 1)), int(args.get("status", 429)), args.get("paths", "_bulk")
            )
            return _Response(200, ack)
        if op == "reject_next_items":
            self.reject_next_items(int(args.get("n", 1)), int(args.get("status", 429)))
            return _Response(200, ack)
        if op == "delay":
            self.delay(float(args.get("ms", 0)))
            return _Response(200, ack)
        if op == "clear_faults":
            self.clear_faults()
            return _Response(200, ack)
        if op == "observations":
            return _Response(200, self.observations())
        if op == "reset_observations":
            self.reset_observations()
            return _Response(200, ack)
        if op == "reset":
            self.reset()
            return _Response(200, ack)
        if op == "documents":
            index = parts[1] if len(parts) > 1 else str(args.get("index", ""))
            return _Response(200, self.documents(index))
        raise _PlainError(400, f"no handler found for uri [{path}] and method [{method}]")

    # -- routing

    def _route(self, method: str, path: str, params: dict[str, str], body: bytes) -> _Response:
        parts = [unquote(p) for p in path.strip("/").split("/")] if path.strip("/") else []
        n = len(parts)
        first = parts[0] if parts else ""

        def allow(*methods: str) -> None:
            if method not in methods:
                raise _PlainError(
                    405,
                    f"Incorrect HTTP method for uri [{path}] and method [{method}], allowed: "
                    f"[{', '.join(methods)}]",
                )

        if n == 0:
            allow("GET", "HEAD")
            return _Response(200, self._info())
        if first == "_bulk" and n == 1:
            allow("POST", "PUT")
            return self._bulk(None, params, body, path)
        if first == "_cluster" and n >= 2 and parts[1] == "health":
            allow("GET")
            return _Response(200, self._health())
        if first == "_data_stream":
            return self._data_stream_route(method, parts[1:], allow)
        if first == "_index_template":
            return self._template_route(method, parts[1:], body, allow, component=False)
        if first == "_component_template":
            return self._template_route(method, parts[1:], body, allow, component=True)
        if first in ("_search", "_count", "_refresh", "_mapping", "_settings") and n == 1:
            return self._index_route(method, ["*", first], params, body, allow, path)
        return self._index_route(method, parts, params, body, allow, path)

    def _json(self, body: bytes) -> Any:
        if not body:
            return None
        try:
            return orjson.loads(body)
        except orjson.JSONDecodeError as exc:
            raise EsError(400, "x_content_parse_exception", f"[1:{exc.colno}] {exc.msg}") from None

    def _index_route(
        self,
        method: str,
        parts: list[str],
        params: dict[str, str],
        body: bytes,
        allow: Callable[..., None],
        path: str,
    ) -> _Response:
        name = parts[0]
        n = len(parts)
        cluster = self._cluster
        if n == 1:
            allow("GET", "HEAD", "PUT", "DELETE")
            if method == "PUT":
                parsed = self._json(body)
                with self._lock:
                    return _Response(200, cluster.create_index_api(name, parsed))
            with self._lock:
                if method == "DELETE":
                    return _Response(200, cluster.delete_index(name))
                if method == "HEAD":
                    try:
                        found = bool(cluster.resolve(name))
                    except EsError:
                        found = False
                    return _Response(200 if found else 404, None)
                return _Response(200, {i.name: i.describe() for i in cluster.resolve(name)})
        action = parts[1]
        if action == "_bulk" and n == 2:
            allow("POST", "PUT")
            return self._bulk(name, params, body, path)
        if action in ("_doc", "_create", "_update") and n in (2, 3):
            return self._document_route(
                method, name, action, parts[2] if n == 3 else None, params, body, allow
            )
        if action == "_source" and n == 3:
            allow("GET", "HEAD")
            with self._lock:
                status, doc = cluster.get_doc(name, parts[2])
            if status == 404:
                raise EsError(
                    404,
                    "resource_not_found_exception",
                    f"Document not found [{doc['_index']}]/[{parts[2]}]",
                )
            return _Response(200, doc["_source"])
        if n != 2:
            raise _PlainError(400, f"no handler found for uri [{path}] and method [{method}]")
        if action == "_mapping":
            allow("GET", "PUT", "POST")
            if method == "GET":
                with self._lock:
                    return _Response(
                        200, {i.name: {"mappings": i.mapping.render()} for i in cluster.resolve(name)}
                    )
            parsed = self._json(body)
            with self._lock:
                return _Response(200, cluster.put_mapping(name, parsed))
        if action == "_settings":
            allow("GET", "PUT")
            if method == "GET":
                with self._lock:
                    return _Response(
                        200, {i.name: {"settings": _nest_settings(i.settings)} for i in cluster.resolve(name)}
                    )
            parsed = self._json(body)
            with self._lock:
                return _Response(200, cluster.put_settings(name, parsed))
        if action in ("_refresh", "_flush"):
            allow("GET", "POST")
            with self._lock:
                count = len(cluster.resolve(name))
            return _Response(200, {"_shards": {"total": 2 * count, "successful": count, "failed": 0}})
        if action == "_count":
            allow("GET", "POST")
            parsed = self._json(body)
            with self._lock:
                return _Response(200, cluster.count(name, parsed))
        if action == "_search":
            allow("GET", "POST")
            parsed = self._json(body) or {}
            if not isinstance(parsed, dict):
                raise EsError(400, "parsing_exception", "Expected [START_OBJECT] but found [START_ARRAY]")
            with self._lock:
                return _Response(200, cluster.search(name, parsed, params))
        if action == "_rollover":
            allow("POST")
            with self._lock:
                stream = cluster.data_streams.get(name)
                if stream is None:
                    raise _illegal(f"rollover target [{name}] does not exist or is not a data stream")
                old = stream.write_index.name
                new = cluster.roll_over(stream).name
            return _Response(
                200,
                {
                    "acknowledged": True,
                    "shards_acknowledged": True,
                    "old_index": old,
                    "new_index": new,
                    "rolled_over": True,
                    "dry_run": False,
                    "lazy": False,
                    "conditions": {},
                },
            )
        raise _PlainError(400, f"no handler found for uri [{path}] and method [{method}]")

    def _document_route(
        self,
        method: str,
        name: str,
        action: str,
        doc_id: str | None,
        params: dict[str, str],
        body: bytes,
        allow: Callable[..., None],
    ) -> _Response:
        if action == "_doc" and method in ("GET", "HEAD") and doc_id is not None:
            with self._lock:
                status, doc = self._cluster.get_doc(name, doc_id)
            return _Response(status, doc)
        if action == "_doc":
            if doc_id is None:
                allow("POST")
            else:
                allow("GET", "HEAD", "PUT", "POST", "DELETE")
            kind = (
                "delete"
                if method == "DELETE"
                else ("create" if params.get("op_type") == "create" else "index")
            )
        elif action == "_create":
            allow("PUT", "POST")
            kind = "create"
        else:
            allow("POST")
            kind = "update"
        op = _Op(kind)
        op.index = name
        op.id = doc_id
        meta = {
            k: v
            for k, v in params.items()
            if k in ("version", "version_type", "if_seq_no", "if_primary_term", "pipeline", "require_alias")
        }
        _parse_meta(op, meta, 1, name)
        if kind == "update":
            op.source = _parse_update_body(body) if body else _MISSING
        elif kind != "delete":
            if not body:
                raise EsError(400, "parse_exception", "request body is required")
            op.raw = body
            try:
                op.source = orjson.loads(body)
            except orjson.JSONDecodeError as exc:
                op.source = _BadSource(exc.msg, exc.colno)
        _validate_ops([op])
        refresh = params.get("refresh")
        with self._lock:
            result = self._cluster.execute(op, time.monotonic())
        if refresh in ("", "true"):
            result = {**result, "forced_refresh": True}
        status = int(result.pop("status"))
        return _Response(status, result)

    def _data_stream_route(self, method: str, rest: list[str], allow: Callable[..., None]) -> _Response:
        cluster = self._cluster
        if not rest:
            allow("GET")
            rest = ["*"]
        if len(rest) != 1:
            raise _PlainError(
                400, f"no handler found for uri [/_data_stream/{'/'.join(rest)}] and method [{method}]"
            )
        allow("GET", "PUT", "DELETE")
        name = rest[0]
        with self._lock:
            if method == "PUT":
                cluster.create_data_stream(name)
                return _Response(200, {"acknowledged": True})
            if method == "DELETE":
                return _Response(200, cluster.delete_data_streams(name))
            names = cluster.data_stream_names(name, allow_missing="*" in name or name == "_all")
            streams = []
            for ds_name in names:
                stream = cluster.data_streams[ds_name]
                template = cluster.templates.get(stream.template)
                streams.append(stream.describe(template.body.get("_meta") if template else None))
            return _Response(200, {"data_streams": streams})

    def _template_route(
        self, method: str, rest: list[str], body: bytes, allow: Callable[..., None], *, component: bool
    ) -> _Response:
        cluster = self._cluster
        kind = "component_template" if component else "index_template"
        store: dict[str, Any] = cluster.components if component else cluster.templates
        if not rest:
            allow("GET")
            rest = ["*"]
        allow("GET", "HEAD", "PUT", "POST", "DELETE")
        name = rest[0]
        with self._lock:
            if method in ("PUT", "POST"):
                parsed = self._json(body)
                if component:
                    cluster.put_component(name, parsed)
                else:
                    cluster.put_template(name, parsed)
                return _Response(200, {"acknowledged": True})
            names = [n for n in store if fnmatch.fnmatchcase(n, name)]
            if not names and "*" not in name:
                raise EsError(
                    404,
                    "resource_not_found_exception",
                    f"{kind.replace('_', ' ')} matching [{name}] not found",
                )
            if method == "HEAD":
                return _Response(200 if names else 404, None)
            if method == "DELETE":
                for found in names:
                    del store[found]
                return _Response(200, {"acknowledged": True})
            if component:
                items = [{"name": n, "component_template": store[n]} for n in names]
            else:
                items = [{"name": n, "index_template": store[n].body} for n in names]
            return _Response(200, {f"{kind}s": items})

    # -- endpoints

    def _info(self) -> dict[str, Any]:
        return {
            "name": self.node_name,
            "cluster_name": self.cluster_name,
            "cluster_uuid": self.cluster_uuid,
            "version": {
                "number": VERSION,
                "build_flavor": "default",
                "build_type": "tar",
                "build_hash": "1a77947f34deddb41af25e6f0ddb8e830159c179",
                "build_date": "2024-08-05T10:05:34.233336849Z",
                "build_snapshot": False,
                "lucene_version": _LUCENE,
                "minimum_wire_compatibility_version": "7.17.0",
                "minimum_index_compatibility_version": "7.0.0",
            },
            "tagline": "You Know, for Search",
        }

    def _health(self) -> dict[str, Any]:
        with self._lock:
            count = len(self._cluster.indices)
        return {
            "cluster_name": self.cluster_name,
            "status": "yellow" if count else "green",
            "timed_out": False,
            "number_of_nodes": 1,
            "number_of_data_nodes": 1,
            "active_primary_shards": count,
            "active_shards": count,
            "relocating_shards": 0,
            "initializing_shards": 0,
            "unassigned_shards": count,
            "delayed_unassigned_shards": 0,
            "number_of_pending_tasks": 0,
            "number_of_in_flight_fetch": 0,
            "task_max_waiting_in_queue_millis": 0,
            "active_shards_percent_as_number": 50.0 if count else 100.0,
        }

    def _bulk(self, default_index: str | None, params: dict[str, str], body: bytes, path: str) -> _Response:
        started = time.perf_counter()
        for key in params:
            if key not in _BULK_PARAMS:
                raise _illegal(f"request [{path}] contains unrecognized parameter: [{key}]")
        refresh = params.get("refresh")
        if refresh is not None and refresh not in ("", "true", "false", "wait_for"):
            raise _illegal(f"Unknown value for refresh: [{refresh}].")
        with self._faults:
            self._bulk_in_flight += 1
            self._max_concurrent_bulks = max(self._max_concurrent_bulks, self._bulk_in_flight)
            delay = self._delay_s
        try:
            if delay and self._stopping.wait(delay):
                raise _Drop
            return self._bulk_inner(default_index, params, body, started, refresh in ("", "true"))
        finally:
            with self._faults:
                self._bulk_in_flight -= 1

    def _bulk_inner(
        self, default_index: str | None, params: dict[str, str], body: bytes, started: float, forced: bool
    ) -> _Response:
        default_pipeline = params.get("pipeline")
        ops = _parse_bulk(body, default_index)
        if default_pipeline is not None:
            for op in ops:
                if op.pipeline is None and op.action != "delete":
                    op.pipeline = default_pipeline
        if params.get("require_alias") in ("", "true"):
            for op in ops:
                op.require_alias = True
        _validate_ops(ops)
        with self._faults:
            rejected = min(self._reject_remaining, len(ops))
            self._reject_remaining -= rejected
            reject_status = self._reject_status
            self._rejected_items += rejected
            self._bulk_items.append(len(ops))
        items: list[dict[str, Any]] = []
        errors = False
        now = time.monotonic()
        with self._lock:
            execute = self._cluster.execute
            for n, op in enumerate(ops):
                if n < rejected:
                    items.append(
                        {
                            op.action: {
                                "_index": op.index,
                                "_id": op.id,
                                "status": reject_status,
                                "error": _item_fault(reject_status),
                            }
                        }
                    )
                    errors = True
                    continue
                try:
                    result = execute(op, now)
                except EsError as exc:
                    errors = True
                    index = exc.extra.get("index")
                    items.append(
                        {
                            op.action: {
                                "_index": index or self._item_index(op),
                                "_id": op.id,
                                "status": exc.status,
                                "error": exc.error_object(),
                            }
                        }
                    )
                    continue
                if forced:
                    result = {**result, "forced_refresh": True}
                items.append({op.action: result})
        took = int((time.perf_counter() - started) * 1000)
        return _Response(200, {"errors": errors, "took": took, "items": items})

    def _item_index(self, op: _Op) -> str | None:
        """Failed items name the concrete index they were meant for (a data stream's write index)."""
        name = op.index
        stream = self._cluster.data_streams.get(name or "")
        if stream is not None and op.action == "create":
            return stream.write_index.name
        return name


def _media_type_error(reason: str) -> EsError:
    """Elasticsearch's refusal of a compatible-with media type it cannot honour."""
    return EsError(
        400,
        "media_type_header_exception",
        "Invalid media-type value on headers [Content-Type, Accept]",
        caused_by={"type": "status_exception", "reason": reason},
    )
