"""The Elasticsearch contract server: the cluster: state and operations (callers hold the lock)."""

from __future__ import annotations

import base64
import fnmatch
import os
import time
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any, Final, cast

from tests.contract_servers.elasticsearch.bulk import _BadSource, _Op
from tests.contract_servers.elasticsearch.constants import (
    _MAX_RESULT_WINDOW,
    _NOOP_SHARDS,
    _SEARCH_SHARDS,
    _SHARDS,
)
from tests.contract_servers.elasticsearch.dates import _now_iso
from tests.contract_servers.elasticsearch.documents import _Doc, _DocParse, _merge_source
from tests.contract_servers.elasticsearch.errors import (
    EsError,
    _bool_param,
    _conflict,
    _illegal,
    _index_not_found,
    _MappingError,
    _search_failure,
    _shard_extra,
)
from tests.contract_servers.elasticsearch.indices import (
    _builtin_components,
    _builtin_templates,
    _DataStream,
    _expand_mapping_props,
    _flatten_settings,
    _Index,
    _merge_mapping_layers,
    _Template,
    _validate_index_name,
)
from tests.contract_servers.elasticsearch.mappings import (
    _FLOAT_LIMITS,
    _INT_RANGES,
    _TEXTS,
    _as_list,
    _Field,
    _MapOpts,
    _Mapping,
)
from tests.contract_servers.elasticsearch.queries import _normalize, _QueryCompiler, _source_values


class _Cluster:
    def __init__(self) -> None:
        self.indices: dict[str, _Index] = {}
        self.data_streams: dict[str, _DataStream] = {}
        self.templates: dict[str, _Template] = _builtin_templates()
        self.components: dict[str, dict[str, Any]] = _builtin_components()
        self._id_prefix = os.urandom(7)
        self._id_counter = 0

    # -- ids

    def new_id(self) -> str:
        self._id_counter += 1
        raw = self._id_prefix + self._id_counter.to_bytes(8, "big")
        return base64.urlsafe_b64encode(raw[-15:]).decode()

    # -- templates

    def match_template(self, name: str) -> _Template | None:
        best: _Template | None = None
        for template in self.templates.values():
            if template.matches(name) and (best is None or template.priority > best.priority):
                best = template
        return best

    def template_layers(self, template: _Template) -> tuple[dict[str, Any], dict[str, Any]]:
        """Settings (flat) and mappings of a composable template, components first."""
        settings: dict[str, Any] = {}
        mappings: dict[str, Any] = {}
        layers = [self.components[c] for c in template.composed_of if c in self.components]
        layers.append(template.body)
        for layer in layers:
            inner = layer.get("template") or {}
            if inner.get("settings"):
                settings.update(_flatten_settings(inner["settings"]))
            if inner.get("mappings"):
                mappings = _merge_mapping_layers(mappings, _expand_mapping_props(inner["mappings"]))
        return settings, mappings

    def put_template(self, name: str, body: Any) -> None:
        if not isinstance(body, dict):
            raise EsError(400, "parse_exception", "request body is required")
        patterns = body.get("index_patterns")
        if not patterns:
            raise EsError(
                400,
                "action_request_validation_exception",
                "Validation Failed: 1: index patterns are missing;",
            )
        template = _Template(name, body)
        missing = [
            c for c in template.composed_of if c not in self.components and c not in template.ignore_missing
        ]
        if missing:
            raise EsError(
                400,
                "invalid_index_template_exception",
                f"index_template [{name}] invalid, cause [index template [{name}] specifies component "
                f"templates {missing} that do not exist]",
            )
        settings, mappings = self.template_layers(template)
        self._build_mapping(mappings, settings, "Failed to parse mapping: ")
        self.templates[name] = template

    def put_component(self, name: str, body: Any) -> None:
        if not isinstance(body, dict) or not isinstance(body.get("template"), dict):
            raise EsError(
                400, "action_request_validation_exception", "Validation Failed: 1: template is required;"
            )
        inner = body["template"]
        self._build_mapping(
            _expand_mapping_props(inner.get("mappings") or {}),
            _flatten_settings(inner.get("settings") or {}),
            "Failed to parse mapping: ",
        )
        self.components[name] = body

    # -- indices

    def _build_mapping(self, mappings: Any, settings: dict[str, Any], prefix: str) -> _Mapping:
        mapping = _Mapping()
        opts = _MapOpts(
            ignore_malformed=settings.get("index.mapping.ignore_malformed") == "true",
            coerce=settings.get("index.mapping.coerce", "true") != "false",
        )
        try:
            mapping.apply(mappings or {}, opts, replace=True)
        except _MappingError as exc:
            reason = str(exc)
            raise EsError(
                400,
                "mapper_parsing_exception",
                prefix + reason,
                caused_by={"type": "mapper_parsing_exception", "reason": reason},
            ) from None
        except EsError as exc:
            raise EsError(
                400, "mapper_parsing_exception", prefix + exc.reason, caused_by=exc.error_object()
            ) from None
        return mapping

    def create_index(
        self,
        name: str,
        body: dict[str, Any] | None,
        template: _Template | None = None,
        data_stream: str | None = None,
    ) -> _Index:
        body = body or {}
        for key in body:
            if key not in ("settings", "mappings", "aliases"):
                raise EsError(400, "parse_exception", f"unknown key [{key}] for create index")
        if body.get("aliases"):
            raise _illegal("aliases are not supported by the Elasticsearch contract server")
        settings: dict[str, Any] = {}
        mappings: dict[str, Any] = {}
        if template is not None:
            settings, mappings = self.template_layers(template)
        if body.get("settings"):
            settings.update(_flatten_settings(body["settings"]))
        if body.get("mappings"):
            mappings = _merge_mapping_layers(mappings, _expand_mapping_props(body["mappings"]))
        if data_stream is not None:
            settings["index.hidden"] = "true"
            mappings = _merge_mapping_layers(
                {"_data_stream_timestamp": {"enabled": True}, "properties": {"@timestamp": {"type": "date"}}},
                mappings,
            )
            timestamp = mappings["properties"].get("@timestamp")
            if isinstance(timestamp, dict) and settings.get("index.mapping.ignore_malformed") == "true":
                # the data stream timestamp never ignores malformed values
                mappings["properties"]["@timestamp"] = {**timestamp, "ignore_malformed": False}
        mapping = self._build_mapping(mappings, settings, "Failed to parse mapping: ")
        index = _Index(name, settings, mapping, data_stream)
        if index.field_count > index.total_fields_limit:
            raise _illegal(f"Limit of total fields [{index.total_fields_limit}] has been exceeded")
        self.indices[name] = index
        return index

    def create_index_api(self, name: str, body: Any) -> dict[str, Any]:
        _validate_index_name(name)
        if body is not None and not isinstance(body, dict):
            raise EsError(400, "parse_exception", "request body must be an object")
        existing = self.indices.get(name)
        if existing is not None:
            raise EsError(
                400,
                "resource_already_exists_exception",
                f"index [{name}/{existing.uuid}] already exists",
                extra={"index_uuid": existing.uuid, "index": name},
            )
        if name in self.data_streams:
            raise EsError(
                400,
                "resource_already_exists_exception",
                f"data stream [{name}] already exists",
                extra={"index_uuid": "_na_", "index": name},
            )
        template = self.match_template(name)
        if template is not None and template.data_stream is not None:
            raise _illegal(
                f"cannot create index with name [{name}], because it matches with template [{template.name}] "
                "that creates data streams only, use create data stream api instead"
            )
        self.create_index(name, body, template)
        return {"acknowledged": True, "shards_acknowledged": True, "index": name}

    def resolve(self, expression: str, *, allow_missing: bool = False) -> list[_Index]:
        """Indices named by a read expression: names, data streams, comma lists, wildcards."""
        out: dict[str, _Index] = {}
        for part in expression.split(","):
            part = part.strip()
            if not part:
                continue
            if part in ("_all", "*") or "*" in part:
                pattern = "*" if part == "_all" else part
                for name, candidate in self.indices.items():
                    if (
                        candidate.data_stream is None
                        and not name.startswith(".")
                        and fnmatch.fnmatchcase(name, pattern)
                    ):
                        out[name] = candidate
                for ds_name, each in self.data_streams.items():
                    if fnmatch.fnmatchcase(ds_name, pattern):
                        out.update((i.name, i) for i in each.indices)
                continue
            stream = self.data_streams.get(part)
            if stream is not None:
                out.update((i.name, i) for i in stream.indices)
                continue
            index = self.indices.get(part)
            if index is None:
                if allow_missing:
                    continue
                raise _index_not_found(part)
            out[part] = index
        return list(out.values())

    def single_index(self, name: str) -> _Index:
        if name in self.data_streams:
            raise _illegal(
                f"The provided expression [{name}] matches a data stream, specify the corresponding concrete "
                "indices instead."
            )
        index = self.indices.get(name)
        if index is None:
            raise _index_not_found(name)
        return index

    def delete_index(self, expression: str) -> dict[str, Any]:
        targets: list[_Index] = []
        for name in expression.split(","):
            if "*" in name or name == "_all":
                raise _illegal("Wildcard expressions or all indices are not allowed")
            index = self.single_index(name)
            if index.data_stream is not None:
                stream = self.data_streams[index.data_stream]
                if stream.write_index is index:
                    raise _illegal(
                        f"index [{name}] is the write index for data stream [{stream.name}] and cannot be "
                        "deleted"
                    )
            targets.append(index)
        for index in targets:
            del self.indices[index.name]
            if index.data_stream is not None:
                self.data_streams[index.data_stream].indices.remove(index)
        return {"acknowledged": True}

    def put_mapping(self, expression: str, body: Any) -> dict[str, Any]:
        if not isinstance(body, dict):
            raise EsError(400, "parse_exception", "request body is required")
        indices = self.resolve(expression)
        staged: list[tuple[_Index, _Mapping]] = []
        for index in indices:
            mapping = index.mapping.copy()
            try:
                mapping.apply(_expand_mapping_props(body), index.opts, replace=False)
            except _MappingError as exc:
                reason = str(exc)
                kind = (
                    "mapper_parsing_exception"
                    if reason.startswith(("No handler", "Root mapping"))
                    else "illegal_argument_exception"
                )
                raise EsError(400, kind, reason) from None
            count = mapping.field_count()
            if count > index.total_fields_limit:
                raise _illegal(f"Limit of total fields [{index.total_fields_limit}] has been exceeded")
            staged.append((index, mapping))
        for index, mapping in staged:
            index.mapping = mapping
            index.field_count = mapping.field_count()
        return {"acknowledged": True}

    def put_settings(self, expression: str, body: Any) -> dict[str, Any]:
        if not isinstance(body, dict):
            raise EsError(400, "parse_exception", "request body is required")
        updates = _flatten_settings(
            body.get("settings", body) if isinstance(body.get("settings"), dict) else body
        )
        static = sorted(k for k in updates if k in ("index.number_of_shards", "index.codec", "index.mode"))
        if static:
            listed = ", ".join(static)
            raise _illegal(f"Can't update non dynamic settings [[{listed}]] for open indices")
        for index in self.resolve(expression):
            for key, value in updates.items():
                if value is None:
                    index.settings.pop(key, None)
                else:
                    index.settings[key] = value
            index.apply_settings()
        return {"acknowledged": True}

    # -- data streams

    def create_data_stream(self, name: str) -> _DataStream:
        for why, bad in (
            ("must be lowercase", name.lower() != name),
            ("must not contain '#'", "#" in name),
            ("must not contain ':'", ":" in name),
            ("must not start with '_', '-', or '+'", bool(name) and name[0] in "_-+"),
            ("must not start with '.ds-'", name.startswith(".ds-")),
        ):
            if bad:
                raise _illegal(f"data_stream [{name}] {why}")
        _validate_index_name(name)
        if name in self.data_streams:
            raise EsError(400, "resource_already_exists_exception", f"data_stream [{name}] already exists")
        if name in self.indices:
            raise EsError(
                400,
                "resource_already_exists_exception",
                f"index [{name}/{self.indices[name].uuid}] already exists",
            )
        template = self.match_template(name)
        if template is None:
            raise _illegal(f"no matching index template found for data stream [{name}]")
        if template.data_stream is None:
            raise _illegal(
                f"matching index template [{template.name}] for data stream [{name}] has no data stream "
                "template"
            )
        stream = _DataStream(name, template.name)
        self.data_streams[name] = stream
        self.roll_over(stream)
        return stream

    def roll_over(self, stream: _DataStream) -> _Index:
        template = self.templates.get(stream.template) or self.match_template(stream.name)
        stream.generation += 1
        day = datetime.now(UTC).strftime("%Y.%m.%d")
        name = f".ds-{stream.name}-{day}-{stream.generation:06d}"
        index = self.create_index(name, None, template, data_stream=stream.name)
        stream.indices.append(index)
        return index

    def data_stream_names(self, expression: str, *, allow_missing: bool) -> list[str]:
        names: list[str] = []
        for part in expression.split(","):
            if "*" in part or part == "_all":
                pattern = "*" if part == "_all" else part
                names.extend(n for n in self.data_streams if fnmatch.fnmatchcase(n, pattern))
            elif part in self.data_streams:
                names.append(part)
            elif not allow_missing:
                raise _index_not_found(part)
        return list(dict.fromkeys(names))

    def delete_data_streams(self, expression: str) -> dict[str, Any]:
        names = self.data_stream_names(expression, allow_missing=False)
        for name in names:
            stream = self.data_streams.pop(name)
            for index in stream.indices:
                self.indices.pop(index.name, None)
        return {"acknowledged": True}

    # -- writes

    def write_target(self, op: _Op) -> _Index:
        name = cast(str, op.index)
        stream = self.data_streams.get(name)
        if stream is not None:
            if op.action != "create":
                raise _illegal("only write ops with an op_type of create are allowed in data streams")
            return stream.write_index
        index = self.indices.get(name)
        if index is not None:
            if index.data_stream is not None and op.action in ("index", "create"):
                if op.action == "create":
                    raise _illegal(
                        "index request with op_type=create targeting backing indices is disallowed, target "
                        f"corresponding data stream [{index.data_stream}] instead"
                    )
                if op.if_seq_no is None:
                    raise _illegal(
                        "index request with op_type=index and no if_primary_term and if_seq_no set "
                        "targeting backing indices is disallowed, target corresponding data stream "
                        f"[{index.data_stream}] instead"
                    )
            return index
        if op.require_alias:
            raise EsError(
                404,
                "index_not_found_exception",
                f"no such index [{name}] and [require_alias] request flag is [true] and [{name}] is not an "
                "alias",
                extra={"index_uuid": "_na_", "index": name},
            )
        # Deletes never create an index (unless externally versioned), as in Elasticsearch.
        if op.action == "delete" and op.version_type == "internal":
            raise _index_not_found(name)
        _validate_index_name(name)
        template = self.match_template(name)
        if template is not None and template.data_stream is not None:
            stream = self.create_data_stream(name)
            if op.action != "create":
                raise _illegal("only write ops with an op_type of create are allowed in data streams")
            return stream.write_index
        return self.create_index(name, None, template)

    def execute(self, op: _Op, now: float) -> dict[str, Any]:
        """One write; returns the item body or raises the item's error."""
        if op.pipeline is not None and op.pipeline != "_none":
            raise _illegal(f"pipeline with id [{op.pipeline}] does not exist")
        index = self.write_target(op)
        if op.action == "delete":
            return self._delete(index, op, now)
        if op.action == "update":
            return self._update(index, op, now)
        return self._index(index, op, now)

    def _parse_document(self, index: _Index, doc_id: str, source: Any, raw: bytes | None) -> _DocParse:
        if type(source) is _BadSource:
            raise EsError(
                400,
                "document_parsing_exception",
                f"[1:{source.col}] failed to parse: {source.message}",
                caused_by={"type": "json_parse_exception", "reason": source.message},
            )
        if type(source) is not dict:
            raise EsError(
                400,
                "document_parsing_exception",
                "[1:1] failed to parse: Malformed content, must start with an object",
            )
        if (
            index.data_stream is not None
            and "@timestamp" not in source
            and index.settings.get("index.default_pipeline") == "logs@default-pipeline"
        ):
            # logs@default-pipeline sets a missing @timestamp from the ingest time
            source["@timestamp"] = _now_iso()
            raw = None
        parse = _DocParse(index, doc_id, raw, source)
        parse.run()
        return parse

    def _check_cas(self, index: _Index, op: _Op, doc_id: str, doc: _Doc | None) -> None:
        if op.if_seq_no is None:
            return
        required = f"required seqNo [{op.if_seq_no}], primary term [{op.if_primary_term}]"
        if doc is None:
            raise _conflict(index, f"[{doc_id}]: version conflict, {required}. but no document was found")
        if doc.seq_no != op.if_seq_no or op.if_primary_term != 1:
            raise _conflict(
                index,
                f"[{doc_id}]: version conflict, {required}. current document has seqNo [{doc.seq_no}] and "
                "primary term [1]",
            )

    def _next_version(self, index: _Index, op: _Op, doc_id: str, current: int | None) -> int:
        if op.version_type == "internal":
            return 1 if current is None else current + 1
        version = cast(int, op.version)
        if current is not None:
            if op.version_type == "external" and version <= current:
                raise _conflict(
                    index,
                    f"[{doc_id}]: version conflict, current version [{current}] is higher or equal to the "
                    f"one provided [{version}]",
                )
            if op.version_type == "external_gte" and version < current:
                raise _conflict(
                    index,
                    f"[{doc_id}]: version conflict, current version [{current}] is higher than the one "
                    f"provided [{version}]",
                )
        return version

    def _index(self, index: _Index, op: _Op, now: float) -> dict[str, Any]:
        given_id = op.id is not None
        if op.id is None:
            # Generated before parsing, so a refused document's item still names its id.
            op.id = self.new_id()
        doc_id = op.id
        source = op.source
        parse = self._parse_document(index, doc_id, source, op.raw)
        # Elasticsearch applies the mapping update before the engine checks versions.
        parse.commit()
        docs = index.docs
        doc = docs.get(doc_id) if given_id else None
        if doc is not None:
            current: int | None = doc.version
        elif given_id:
            tomb = index.tombstone(doc_id, now)
            current = tomb[0] if tomb else None
        else:
            current = None
        self._check_cas(index, op, doc_id, doc)
        if op.action == "create" and doc is not None:
            raise _conflict(
                index,
                f"[{doc_id}]: version conflict, document already exists (current version [{doc.version}])",
            )
        version = self._next_version(index, op, doc_id, current)
        seq_no = index.next_seq()
        if doc is None:
            docs[doc_id] = _Doc(version, seq_no, source, parse.ignored)
            if current is not None:
                index.tombstones.pop(doc_id, None)
            result, status = "created", 201
        else:
            doc.version, doc.seq_no, doc.source, doc.ignored = version, seq_no, source, parse.ignored
            result, status = "updated", 200
        return _write_result(index, doc_id, version, result, seq_no, status)

    def _delete(self, index: _Index, op: _Op, now: float) -> dict[str, Any]:
        doc_id = cast(str, op.id)
        doc = index.docs.get(doc_id)
        if doc is not None:
            current: int | None = doc.version
        else:
            tomb = index.tombstone(doc_id, now)
            current = tomb[0] if tomb else None
        self._check_cas(index, op, doc_id, doc)
        version = self._next_version(index, op, doc_id, current)
        seq_no = index.next_seq()
        index.tombstones[doc_id] = (version, seq_no, now)
        if doc is None:
            return _write_result(index, doc_id, version, "not_found", seq_no, 404)
        del index.docs[doc_id]
        return _write_result(index, doc_id, version, "deleted", seq_no, 200)

    def _update(self, index: _Index, op: _Op, now: float) -> dict[str, Any]:
        doc_id = cast(str, op.id)
        body = cast(dict[str, Any], op.source)
        doc = index.docs.get(doc_id)
        self._check_cas(index, op, doc_id, doc)
        if "script" in body:
            raise _illegal("scripted updates are not supported by the Elasticsearch contract server")
        partial = body.get("doc")
        if doc is None:
            if partial is not None and _bool_param(body.get("doc_as_upsert", False), "doc_as_upsert"):
                source = partial
            elif "upsert" in body:
                source = body["upsert"]
            else:
                raise EsError(
                    404,
                    "document_missing_exception",
                    f"[{doc_id}]: document missing",
                    extra=_shard_extra(index),
                )
            source = dict(source)
            parse = self._parse_document(index, doc_id, source, None)
            parse.commit()
            tomb = index.tombstone(doc_id, now)
            version = tomb[0] + 1 if tomb else 1
            seq_no = index.next_seq()
            index.docs[doc_id] = _Doc(version, seq_no, source, parse.ignored)
            index.tombstones.pop(doc_id, None)
            result, status = "created", 201
        else:
            merged, changed = _merge_source(doc.source, partial or {})
            if not changed and _bool_param(body.get("detect_noop", True), "detect_noop"):
                return _write_result(index, doc_id, doc.version, "noop", doc.seq_no, 200, shards=_NOOP_SHARDS)
            parse = self._parse_document(index, doc_id, merged, None)
            parse.commit()
            version = doc.version + 1
            seq_no = index.next_seq()
            doc.version, doc.seq_no, doc.source, doc.ignored = version, seq_no, merged, parse.ignored
            result, status = "updated", 200
        return _write_result(index, doc_id, version, result, seq_no, status)

    # -- reads

    def get_doc(self, name: str, doc_id: str) -> tuple[int, dict[str, Any]]:
        index = self.single_index(name)
        doc = index.docs.get(doc_id)
        if doc is None:
            return 404, {"_index": index.name, "_id": doc_id, "found": False}
        out: dict[str, Any] = {
            "_index": index.name,
            "_id": doc_id,
            "_version": doc.version,
            "_seq_no": doc.seq_no,
            "_primary_term": 1,
        }
        if doc.ignored:
            out["_ignored"] = list(doc.ignored)
        out["found"] = True
        out["_source"] = doc.source
        return 200, out

    def matching(self, expression: str, query: Any) -> list[tuple[_Index, str, _Doc]]:
        indices = self.resolve(expression)
        hits: list[tuple[_Index, str, _Doc]] = []
        for index in indices:
            try:
                pred = _QueryCompiler(index).compile(query if query is not None else {"match_all": {}})
            except EsError as exc:
                if exc.type == "search_phase_execution_exception":
                    raise
                raise _search_failure(index.name, exc) if exc.type != "parsing_exception" else exc from None
            hits.extend(
                (index, doc_id, doc) for doc_id, doc in index.docs.items() if pred(doc_id, doc.source)
            )
        return hits

    def count(self, expression: str, body: Any) -> dict[str, Any]:
        query = None
        if body:
            for key in body:
                if key != "query":
                    raise EsError(400, "parsing_exception", f"request does not support [{key}]")
            query = body.get("query")
        hits = self.matching(expression, query)
        return {"count": len(hits), "_shards": _SEARCH_SHARDS}

    def search(self, expression: str, body: dict[str, Any], params: dict[str, str]) -> dict[str, Any]:
        started = time.perf_counter()
        if "aggs" in body or "aggregations" in body:
            raise _illegal("aggregations are not supported by the Elasticsearch contract server")
        size = int(params.get("size", body.get("size", 10)))
        start = int(params.get("from", body.get("from", 0)))
        if size < 0 or start < 0:
            raise _illegal(f"[{'size' if size < 0 else 'from'}] parameter cannot be negative")
        if start + size > _MAX_RESULT_WINDOW:
            cause = _illegal(
                "Result window is too large, from + size must be less than or equal to: "
                f"[{_MAX_RESULT_WINDOW}] but was [{start + size}]. See the scroll api for a more efficient "
                "way to request large data sets. This limit can be set by changing the "
                "[index.max_result_window] index level setting."
            )
            raise _search_failure(expression, cause)
        hits = self.matching(expression, body.get("query"))
        sort_spec = body.get("sort")
        if "sort" in params:
            sort_spec = [{f: o or "asc"} for f, _, o in (s.partition(":") for s in params["sort"].split(","))]
        sort_values: list[list[Any]] | None = None
        if sort_spec is not None:
            hits, sort_values = _sort_hits(hits, sort_spec, expression)
        total = len(hits)
        tracked = body.get("track_total_hits", _MAX_RESULT_WINDOW)
        window = hits[start : start + size]
        source_wanted = body.get("_source", True) is not False
        out_hits: list[dict[str, Any]] = []
        for n, (index, doc_id, doc) in enumerate(window):
            hit: dict[str, Any] = {"_index": index.name, "_id": doc_id}
            if body.get("version"):
                hit["_version"] = doc.version
            if body.get("seq_no_primary_term"):
                hit["_seq_no"] = doc.seq_no
                hit["_primary_term"] = 1
            hit["_score"] = None if sort_values is not None else 1.0
            if doc.ignored:
                hit["_ignored"] = list(doc.ignored)
            if source_wanted:
                hit["_source"] = doc.source
            if sort_values is not None:
                hit["sort"] = sort_values[start + n]
            out_hits.append(hit)
        hits_section: dict[str, Any] = {}
        if tracked is True or (tracked is not False and isinstance(tracked, int)):
            cap = total if tracked is True else int(tracked)
            hits_section["total"] = {"value": min(total, cap), "relation": "eq" if total <= cap else "gte"}
        hits_section["max_score"] = None if sort_values is not None or not total else 1.0
        hits_section["hits"] = out_hits
        return {
            "took": int((time.perf_counter() - started) * 1000),
            "timed_out": False,
            "_shards": _SEARCH_SHARDS,
            "hits": hits_section,
        }


_NUMERIC_SORT_TYPES: Final = frozenset(
    set(_INT_RANGES) | set(_FLOAT_LIMITS) | {"date", "date_nanos", "boolean"}
)


def _write_result(
    index: _Index,
    doc_id: str,
    version: int,
    result: str,
    seq_no: int,
    status: int,
    shards: Mapping[str, int] = _SHARDS,
) -> dict[str, Any]:
    """A write's answer, as Elasticsearch gives it for a bulk item or a single write."""
    return {
        "_index": index.name,
        "_id": doc_id,
        "_version": version,
        "result": result,
        "_shards": shards,
        "_seq_no": seq_no,
        "_primary_term": 1,
        "status": status,
    }


def _sort_hits(
    hits: list[tuple[_Index, str, _Doc]], spec: Any, expression: str
) -> tuple[list[tuple[_Index, str, _Doc]], list[list[Any]]]:
    keys: list[tuple[str, str, Any]] = []
    for entry in _as_list(spec):
        if isinstance(entry, str):
            keys.append((entry, "desc" if entry == "_score" else "asc", None))
        elif isinstance(entry, dict) and len(entry) == 1:
            ((name, how),) = entry.items()
            if isinstance(how, dict):
                keys.append((name, str(how.get("order", "asc")), how.get("unmapped_type")))
            else:
                keys.append((name, str(how), None))
        else:
            raise EsError(
                400,
                "parsing_exception",
                "malformed sort format, within the sort array, an object, or an actual string are allowed",
            )
    rows: list[list[Any]] = [[] for _ in hits]
    for name, order, unmapped in keys:
        if order not in ("asc", "desc"):
            raise _illegal(f"Unknown SortOrder [{order}]")
        if name in ("_doc", "_score"):
            for n, row in enumerate(rows):
                row.append(n if name == "_doc" else 1.0)
            continue
        if name == "_id":
            raise _search_failure(
                expression,
                _illegal(
                    "Fielddata access on the _id field is disallowed, you can re-enable it by updating the "
                    "dynamic cluster setting: indices.id_field_data.enabled"
                ),
            )
        fields: dict[str, _Field | None] = {}
        for index, _doc_id, _doc in hits:
            if index.name not in fields:
                mapper, _ = index.mapping.lookup(name)
                fields[index.name] = mapper if isinstance(mapper, _Field) else None
        mapped = [f for f in fields.values() if f is not None]
        if hits and not mapped and unmapped is None:
            raise _search_failure(
                expression,
                EsError(400, "query_shard_exception", f"No mapping found for [{name}] in order to sort on"),
            )
        for candidate in mapped:
            if candidate.type in _TEXTS:
                raise _search_failure(
                    expression,
                    _illegal(
                        f"Fielddata is disabled on [{name}] in [{expression}]. Text fields are not optimised "
                        "for operations that require per-document field data like aggregations and sorting, "
                        "so these operations are disabled by default. Please use a keyword field instead. "
                        f"Alternatively, set fielddata=true on [{name}] in order to load field data by "
                        "uninverting the inverted index. Note that this can use significant memory."
                    ),
                )
        _, source_path = hits[0][0].mapping.lookup(name) if hits else (None, name)
        parts = source_path.split(".")
        for (index, _doc_id, doc), row in zip(hits, rows, strict=True):
            field = fields.get(index.name)
            values = []
            if field is not None:
                values = [
                    v
                    for v in (_normalize(field, x) for x in _source_values(doc.source, parts))
                    if v is not None
                ]
            if not values:
                numeric = field is not None and field.type in _NUMERIC_SORT_TYPES
                row.append((2**63 - 1 if order == "asc" else -(2**63)) if numeric else None)
                continue
            best = min(values) if order == "asc" else max(values)
            row.append(int(best) if isinstance(best, bool) else best)
    order_of = list(range(len(hits)))
    for position in range(len(keys) - 1, -1, -1):
        name, order, _ = keys[position]
        reverse = order == "desc"

        def key(n: int, position: int = position, reverse: bool = reverse) -> tuple[int, Any]:
            value = rows[n][position]
            missing = value is None
            # Missing values sort last in both directions.
            return (1 if missing else 0) if not reverse else (
                0 if missing else 1
            ), value if not missing else 0

        order_of.sort(key=key, reverse=reverse)
    return [hits[n] for n in order_of], [rows[n] for n in order_of]
