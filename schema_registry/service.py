"""The registry's operations, as Confluent's ``KafkaSchemaRegistry`` performs them: reads
from the state the topic built, writes as records to the topic (applied before the call
returns). Errors are ``RegistryError``s with Confluent's codes.

Registration (``register``): the topic read to its end; the same schema already live in
the subject returns its id and writes nothing; otherwise the schema is checked against
the subject's live versions at the subject's compatibility level (the global one when
it has none), takes the id it already has in another subject or the next id, and the
next version number (one past every version the subject has had, soft-deleted ones
too).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Mapping
from typing import Any, Protocol

from schema_registry.compatibility import LEVELS, incompatibilities
from schema_registry.errors import RegistryError
from schema_registry.protobuf_schemas import formatted as protobuf_formatted
from schema_registry.records import (
    ConfigKey,
    ConfigValue,
    DeleteSubjectKey,
    DeleteSubjectValue,
    Key,
    ModeKey,
    ModeValue,
    Reference,
    SchemaKey,
    SchemaValue,
    Value,
)
from schema_registry.schemas import ParsedSchema, SchemaProblem, parse, supported_types
from schema_registry.state import Registered, RegistryState

__all__ = ["MODES", "Registry", "SchemaRequest"]

MODES: tuple[str, ...] = ("READWRITE", "READONLY", "READONLY_OVERRIDE", "IMPORT")
_MAX_VERSION = 2**31 - 1


class Store(Protocol):
    """What the service needs of the topic (``store.SchemaTopic``)."""

    def read_to_end(self, timeout_s: float | None = None) -> None: ...

    def write(self, key: Key, value: Value | None) -> None: ...


class SchemaRequest:
    """The body of a registration, lookup or compatibility check."""

    def __init__(self, body: Any) -> None:
        if not isinstance(body, Mapping):
            raise RegistryError.unprocessable("the request body must be a JSON object")
        schema = body.get("schema")
        if not isinstance(schema, str):
            raise RegistryError.invalid_schema('null: the request has no "schema" string')
        self.schema = schema
        schema_type = body.get("schemaType") or "AVRO"
        if not isinstance(schema_type, str):
            raise RegistryError.unprocessable(f"schemaType must be a string, not {schema_type!r}")
        self.schema_type = schema_type.upper()
        references = body.get("references") or []
        if not isinstance(references, list):
            raise RegistryError.unprocessable("references must be a list")
        refs = []
        for r in references:
            if (
                not isinstance(r, Mapping)
                or not isinstance(r.get("name"), str)
                or not isinstance(r.get("subject"), str)
                or not isinstance(r.get("version"), int)
            ):
                raise RegistryError.unprocessable(f"a reference needs a name, a subject and a version: {r!r}")
            refs.append(Reference(r["name"], r["subject"], r["version"]))
        self.references = tuple(refs)
        self.id = body.get("id") if isinstance(body.get("id"), int) else None
        self.version = body.get("version") if isinstance(body.get("version"), int) else None


def _referenced(subject: str, version: int) -> RegistryError:
    return RegistryError.reference_exists(
        "One or more references exist to the schema "
        f"{{magic=1,keytype=SCHEMA,subject={subject},version={version}}}."
    )


def schema_json(entry: Registered, with_subject: bool = True) -> dict[str, Any]:
    """A registered version as the REST API shows it."""
    out: dict[str, Any] = {}
    if with_subject:
        out.update(subject=entry.subject, version=entry.version)
    out["id"] = entry.id
    if entry.schema_type != "AVRO":
        out["schemaType"] = entry.schema_type
    if entry.references:
        out["references"] = [r.to_json() for r in entry.references]
    out["schema"] = entry.schema
    return out


class Registry:
    def __init__(self, store: Store, state: RegistryState, lock: threading.Lock, default_level: str) -> None:
        self.store = store
        self.state = state
        self.lock = lock  # guards the state against the reader thread
        self._writes = threading.Lock()  # one write operation at a time (read, decide, write)
        level = default_level.upper()
        if level not in LEVELS:
            raise ValueError(
                f"schema.compatibility.level={default_level}: not one of {', '.join(LEVELS).lower()}"
            )
        self.default_level = level
        # Registered versions parsed, for compatibility checks (one parse per schema, not per request).
        self._parsed_cache: OrderedDict[tuple[Any, ...], ParsedSchema] = OrderedDict()

    # -- helpers --------------------------------------------------------------------------------

    def _level(self, subject: str | None) -> str:
        configs = self.state.configs
        return configs.get(subject) or configs.get(None) or self.default_level

    def _mode(self, subject: str | None) -> str:
        modes = self.state.modes
        return modes.get(subject) or modes.get(None) or "READWRITE"

    def _writable(self, subject: str) -> None:
        mode = self._mode(subject)
        if mode in ("READONLY", "READONLY_OVERRIDE"):
            raise RegistryError.not_permitted(f"Subject {subject} is in read-only mode")

    @staticmethod
    def parse_version(spec: str | int) -> int | None:
        """A version in a path: a number in [1, 2^31-1], or latest/-1 (None)."""
        text = str(spec)
        if text.lower() == "latest" or text == "-1":
            return None
        try:
            version = int(text)
        except ValueError:
            raise RegistryError.invalid_version(text) from None
        if not 1 <= version <= _MAX_VERSION:
            raise RegistryError.invalid_version(text)
        return version

    def _entry(self, subject: str, spec: str | int, deleted: bool = False) -> Registered:
        version = self.parse_version(spec)
        if not self.state.has_subject(subject) or (not deleted and not self.state.versions(subject)):
            raise RegistryError.subject_not_found(subject)
        entry = (
            self.state.latest(subject, deleted) if version is None else self.state.version(subject, version)
        )
        if entry is None or (entry.deleted and not deleted):
            raise RegistryError.version_not_found(spec)
        return entry

    def _resolve(
        self, references: tuple[Reference, ...], seen: frozenset[tuple[str, int]] = frozenset()
    ) -> list[tuple[str, str]]:
        """The referenced schemas as (reference name, text), each after those it refers
        to itself."""
        texts: list[tuple[str, str]] = []
        for ref in references:
            if (ref.subject, ref.version) in seen:
                raise RegistryError.invalid_schema(
                    f"references form a cycle at {ref.subject} version {ref.version}"
                )
            entry = self.state.version(ref.subject, ref.version)
            if entry is None:
                raise RegistryError.invalid_schema(
                    f"reference {ref.name}: subject {ref.subject} version {ref.version} not found"
                )
            texts += self._resolve(entry.references, seen | {(ref.subject, ref.version)})
            texts.append((ref.name, entry.schema))
        return texts

    def _parse(
        self, schema_type: str, text: str, references: tuple[Reference, ...], normalize: bool
    ) -> ParsedSchema:
        try:
            return parse(schema_type, text, self._resolve(references), normalize)
        except SchemaProblem as exc:
            raise RegistryError.invalid_schema(str(exc)) from None

    def _parsed(self, entry: Registered) -> ParsedSchema:
        return self._parsed_content(entry.content)

    def _parsed_content(self, content: tuple[str, str, tuple[Reference, ...]]) -> ParsedSchema:
        parsed = self._parsed_cache.get(content)
        if parsed is None:
            schema_type, schema, references = content
            parsed = self._parsed_cache[content] = self._parse(schema_type, schema, references, False)
            if len(self._parsed_cache) > 1000:
                self._parsed_cache.popitem(last=False)
        return parsed

    def _formatted(self, content: tuple[str, str, tuple[Reference, ...]], fmt: str) -> str:
        """The ``format`` query parameter (Confluent's ``formattedString``): PROTOBUF's
        ``serialized`` and ``ignore_extensions``; the stored text for every other type and
        format, as Confluent's AVRO and JSON schemas answer formats they do not know."""
        schema_type, schema, _references = content
        if not fmt.strip() or schema_type != "PROTOBUF":
            return schema
        return protobuf_formatted(self._parsed_content(content).parsed, fmt) or schema

    # -- schemas by id ----------------------------------------------------------------------------

    def schema_types(self) -> list[str]:
        return supported_types()

    def schema_by_id(self, schema_id: int, subject: str | None = None, fmt: str = "") -> dict[str, Any]:
        with self.lock:
            content = self.state.schema(schema_id)
            if content is None:
                raise RegistryError.schema_not_found(schema_id)
            schema_type, _schema, references = content
            out: dict[str, Any] = {}
            if schema_type != "AVRO":
                out["schemaType"] = schema_type
            if references:
                out["references"] = [r.to_json() for r in references]
            out["schema"] = self._formatted(content, fmt)
            return out

    def subjects_of_id(self, schema_id: int, deleted: bool) -> list[str]:
        with self.lock:
            entries = self.state.with_id(schema_id, deleted)
            if not entries:
                raise RegistryError.schema_not_found(schema_id)
            return sorted({e.subject for e in entries})

    def versions_of_id(self, schema_id: int, deleted: bool) -> list[dict[str, Any]]:
        with self.lock:
            entries = self.state.with_id(schema_id, deleted)
            if not entries:
                raise RegistryError.schema_not_found(schema_id)
            return [{"subject": e.subject, "version": e.version} for e in entries]

    # -- subjects and versions -------------------------------------------------------------------

    def subjects(self, prefix: str, deleted: bool, deleted_only: bool) -> list[str]:
        with self.lock:
            return [s for s in self.state.subjects(deleted, deleted_only) if s.startswith(prefix)]

    def versions(self, subject: str, deleted: bool, deleted_only: bool) -> list[int]:
        with self.lock:
            entries = self.state.versions(subject, deleted, deleted_only)
            if not self.state.has_subject(subject) or (not entries and not deleted_only):
                raise RegistryError.subject_not_found(subject)
            return [e.version for e in entries]

    def version(self, subject: str, spec: str, deleted: bool, fmt: str = "") -> dict[str, Any]:
        with self.lock:
            entry = self._entry(subject, spec, deleted)
            return {**schema_json(entry), "schema": self._formatted(entry.content, fmt)}

    def referenced_by(self, subject: str, spec: str) -> list[int]:
        with self.lock:
            entry = self._entry(subject, spec)
            return self.state.referenced_by(entry.subject, entry.version)

    def lookup(
        self, subject: str, request: SchemaRequest, normalize: bool, deleted: bool, fmt: str = ""
    ) -> dict[str, Any]:
        self.store.read_to_end()
        with self.lock:
            if not self.state.has_subject(subject) or (not deleted and not self.state.versions(subject)):
                raise RegistryError.subject_not_found(subject)
            parsed = self._parse(request.schema_type, request.schema, request.references, normalize)
            entry = self.state.find(
                subject, (parsed.schema_type, parsed.canonical, request.references), deleted
            )
            if entry is None and not normalize:
                # A schema registered normalized is found by its normalized text too.
                again = self._parse(request.schema_type, request.schema, request.references, True)
                entry = self.state.find(
                    subject, (again.schema_type, again.canonical, request.references), deleted
                )
            if entry is None:
                raise RegistryError.schema_not_found()
            return {**schema_json(entry), "schema": self._formatted(entry.content, fmt)}

    def register(self, subject: str, request: SchemaRequest, normalize: bool) -> dict[str, Any]:
        with self._writes:
            self.store.read_to_end()
            with self.lock:
                mode = self._mode(subject)
                self._writable(subject)
                parsed = self._parse(request.schema_type, request.schema, request.references, normalize)
                content = (parsed.schema_type, parsed.canonical, request.references)
                existing = self.state.find(subject, content)
                if existing is not None and (request.id is None or request.id == existing.id):
                    return {"id": existing.id}
                if mode == "IMPORT":
                    if request.id is None:
                        raise RegistryError.not_permitted(
                            "Subject is in IMPORT mode: a schema id is required"
                        )
                    taken = self.state.schema(request.id)
                    if taken is not None and taken != content:
                        raise RegistryError(
                            422, 42207, f"Overwrite new schema with id {request.id} is not permitted."
                        )
                    schema_id = request.id
                    version = request.version or self.state.max_version(subject) + 1
                else:
                    if request.id is not None:
                        raise RegistryError.not_permitted(
                            f"Subject {subject} is not in import mode: a schema id cannot be given"
                        )
                    live = self.state.versions(subject)
                    problems = incompatibilities(
                        self._level(subject), parsed, [(e.version, self._parsed(e)) for e in live]
                    )
                    if problems:
                        raise RegistryError.incompatible(subject, problems)
                    known = self.state.id_of(content)
                    schema_id = known if known is not None else self.state.max_id + 1
                    version = self.state.max_version(subject) + 1
            value = SchemaValue(
                subject, version, schema_id, parsed.schema_type, parsed.canonical, request.references
            )
            self.store.write(SchemaKey(subject, version), value)
            return {"id": schema_id}

    def check(
        self, subject: str, spec: str | None, request: SchemaRequest, normalize: bool, verbose: bool
    ) -> dict[str, Any]:
        """``POST /compatibility/subjects/{s}/versions[/{v}]``: against one version, or (no
        ``spec``) against the versions the subject's level names."""
        with self.lock:
            parsed = self._parse(request.schema_type, request.schema, request.references, normalize)
            level = self._level(subject)
            if spec is None:
                against = [(e.version, self._parsed(e)) for e in self.state.versions(subject)]
            else:
                entry = self._entry(subject, spec)
                against = [(entry.version, self._parsed(entry))]
                level = level.removesuffix("_TRANSITIVE")
            problems = incompatibilities(level, parsed, against)
        out: dict[str, Any] = {"is_compatible": not problems}
        if verbose:
            out["messages"] = problems
        return out

    # -- deletes --------------------------------------------------------------------------------

    def delete_version(self, subject: str, spec: str, permanent: bool) -> int:
        with self._writes:
            self.store.read_to_end()
            with self.lock:
                self._writable(subject)
                entry = self._entry(subject, spec, deleted=permanent)
                if permanent and not entry.deleted:
                    raise RegistryError.version_not_soft_deleted(subject, entry.version)
                if self.state.referenced_by(subject, entry.version) and not entry.deleted:
                    raise _referenced(subject, entry.version)
            key = SchemaKey(subject, entry.version)
            if permanent:
                self.store.write(key, None)
            else:
                self.store.write(
                    key,
                    SchemaValue(
                        subject,
                        entry.version,
                        entry.id,
                        entry.schema_type,
                        entry.schema,
                        entry.references,
                        True,
                    ),
                )
            return entry.version

    def delete_subject(self, subject: str, permanent: bool) -> list[int]:
        with self._writes:
            self.store.read_to_end()
            with self.lock:
                self._writable(subject)
                if not self.state.has_subject(subject):
                    raise RegistryError.subject_not_found(subject)
                live = self.state.versions(subject)
                every = self.state.versions(subject, deleted=True)
                if permanent and live:
                    raise RegistryError.subject_not_soft_deleted(subject)
                if not permanent and not live:
                    raise RegistryError.subject_soft_deleted(subject)
                for e in live:
                    if self.state.referenced_by(subject, e.version):
                        raise _referenced(subject, e.version)
                has_config = subject in self.state.configs
                has_mode = subject in self.state.modes
            if not permanent:
                self.store.write(DeleteSubjectKey(subject), DeleteSubjectValue(subject, live[-1].version))
                return [e.version for e in live]
            for e in reversed(every):
                self.store.write(SchemaKey(subject, e.version), None)
            if has_config:
                self.store.write(ConfigKey(subject), None)
            if has_mode:
                self.store.write(ModeKey(subject), None)
            return [e.version for e in every]

    # -- config and mode ------------------------------------------------------------------------

    def get_config(self, subject: str | None, default_to_global: bool) -> dict[str, Any]:
        with self.lock:
            if subject is None:
                return {"compatibilityLevel": self._level(None)}
            level = self.state.configs.get(subject)
            if level is None:
                if not default_to_global:
                    raise RegistryError.compatibility_not_configured(subject)
                level = self._level(None)
            return {"compatibilityLevel": level}

    def put_config(self, subject: str | None, body: Any) -> dict[str, Any]:
        level = body.get("compatibility") if isinstance(body, Mapping) else None
        if not isinstance(level, str) or level.upper() not in LEVELS:
            raise RegistryError.invalid_compatibility_level(level)
        with self._writes:
            if subject is not None:
                with self.lock:
                    self._writable(subject)
            self.store.write(ConfigKey(subject), ConfigValue(level.upper()))
        return {"compatibility": level.upper()}

    def delete_config(self, subject: str | None) -> dict[str, Any]:
        with self._writes:
            with self.lock:
                old = self.state.configs.get(subject)
                if subject is not None and old is None:
                    raise RegistryError.subject_not_found(subject)
                shown = old or self._level(None)
            self.store.write(ConfigKey(subject), None)
        return {"compatibilityLevel": shown}

    def get_mode(self, subject: str | None, default_to_global: bool) -> dict[str, Any]:
        with self.lock:
            if subject is None:
                return {"mode": self._mode(None)}
            mode = self.state.modes.get(subject)
            if mode is None:
                if not default_to_global:
                    raise RegistryError.mode_not_configured(subject)
                mode = self._mode(None)
            return {"mode": mode}

    def put_mode(self, subject: str | None, body: Any, force: bool) -> dict[str, Any]:
        mode = body.get("mode") if isinstance(body, Mapping) else None
        if not isinstance(mode, str) or mode.upper() not in MODES:
            raise RegistryError.invalid_mode(mode)
        mode = mode.upper()
        with self._writes:
            self.store.read_to_end()
            with self.lock:
                if mode == "IMPORT" and not force:
                    taken = self.state.subjects() if subject is None else self.state.versions(subject)
                    if taken:
                        raise RegistryError.not_permitted(
                            "Cannot import since found existing subjects"
                            if subject is None
                            else f"Cannot import since subject {subject} has existing versions"
                        )
            self.store.write(ModeKey(subject), ModeValue(mode))
        return {"mode": mode}

    def delete_mode(self, subject: str) -> dict[str, Any]:
        with self._writes:
            with self.lock:
                old = self.state.modes.get(subject)
                if old is None:
                    raise RegistryError.subject_not_found(subject)
            self.store.write(ModeKey(subject), None)
        return {"mode": old}
