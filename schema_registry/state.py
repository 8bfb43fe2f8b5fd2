"""What the ``_schemas`` topic says: subjects and their versions, schema ids, configs and
modes. ``apply`` takes the topic's records in order, as every instance reads them, so
all instances hold the same state; the queries answer the REST API. Pure: no I/O.

Ids are global: the same schema (type, canonical text and references) carries one id
in every subject it is registered under, and ids only grow (the next is one more than
the largest ever seen, deleted or not), as Confluent's ``IncrementalIdGenerator``.
"""

from __future__ import annotations

from dataclasses import dataclass

from schema_registry.records import (
    ClearSubjectKey,
    ConfigKey,
    ConfigValue,
    DeleteSubjectKey,
    DeleteSubjectValue,
    Key,
    ModeKey,
    ModeValue,
    NoopKey,
    Reference,
    SchemaKey,
    SchemaValue,
    Value,
)

__all__ = ["Content", "Registered", "RegistryState"]

Content = tuple[str, str, tuple[Reference, ...]]  # (schema type, canonical schema, references)


@dataclass(frozen=True, slots=True)
class Registered:
    """One version of a subject."""

    subject: str
    version: int
    id: int
    schema_type: str
    schema: str
    references: tuple[Reference, ...]
    deleted: bool

    @property
    def content(self) -> Content:
        return (self.schema_type, self.schema, self.references)

    @classmethod
    def of(cls, value: SchemaValue) -> Registered:
        return cls(
            value.subject,
            value.version,
            value.id,
            value.schema_type,
            value.schema,
            value.references,
            value.deleted,
        )


class RegistryState:
    def __init__(self) -> None:
        self._subjects: dict[str, dict[int, Registered]] = {}
        self._ids: dict[int, Content] = {}
        self._content_ids: dict[Content, int] = {}
        self.max_id = 0
        self.configs: dict[str | None, str] = {}  # None: global
        self.modes: dict[str | None, str] = {}

    # -- the topic's records ------------------------------------------------------------------------

    def apply(self, key: Key, value: Value | None) -> None:
        match key:
            case SchemaKey(subject, version):
                versions = self._subjects.setdefault(subject, {})
                if value is None:
                    gone = versions.pop(version, None)
                    if not versions:
                        del self._subjects[subject]
                    if gone is not None and not self.with_id(gone.id, deleted=True):
                        # No version carries the id any more: it no longer resolves.
                        self._ids.pop(gone.id, None)
                        self._content_ids.pop(gone.content, None)
                    return
                assert isinstance(value, SchemaValue)
                entry = Registered.of(value)
                versions[version] = entry
                self._ids.setdefault(entry.id, entry.content)
                self._content_ids.setdefault(entry.content, entry.id)
                self.max_id = max(self.max_id, entry.id)
            case ConfigKey(subject):
                if value is None:
                    self.configs.pop(subject, None)
                else:
                    assert isinstance(value, ConfigValue)
                    self.configs[subject] = value.compatibility_level.upper()
            case ModeKey(subject):
                if value is None:
                    self.modes.pop(subject, None)
                else:
                    assert isinstance(value, ModeValue)
                    self.modes[subject] = value.mode.upper()
            case DeleteSubjectKey(subject):
                if isinstance(value, DeleteSubjectValue):
                    versions = self._subjects.get(subject, {})
                    for v, entry in list(versions.items()):
                        if v <= value.version and not entry.deleted:
                            versions[v] = Registered(
                                entry.subject,
                                entry.version,
                                entry.id,
                                entry.schema_type,
                                entry.schema,
                                entry.references,
                                True,
                            )
            case ClearSubjectKey() | NoopKey():
                pass  # CLEAR_SUBJECT only drops a Java instance's caches; NOOP marks the end

    # -- queries ------------------------------------------------------------------------------------

    def subjects(self, deleted: bool = False, deleted_only: bool = False) -> list[str]:
        """Subjects with a live version (or with any version, ``deleted``; only soft-deleted
        ones, ``deleted_only``), sorted."""
        out = []
        for subject, versions in self._subjects.items():
            live = any(not e.deleted for e in versions.values())
            if (deleted_only and not live and versions) or (not deleted_only and (live or deleted)):
                out.append(subject)
        return sorted(out)

    def versions(self, subject: str, deleted: bool = False, deleted_only: bool = False) -> list[Registered]:
        entries = sorted(self._subjects.get(subject, {}).values(), key=lambda e: e.version)
        if deleted_only:
            return [e for e in entries if e.deleted]
        return entries if deleted else [e for e in entries if not e.deleted]

    def version(self, subject: str, version: int) -> Registered | None:
        return self._subjects.get(subject, {}).get(version)

    def latest(self, subject: str, deleted: bool = False) -> Registered | None:
        entries = self.versions(subject, deleted)
        return entries[-1] if entries else None

    def has_subject(self, subject: str) -> bool:
        """Whether the subject has any version, soft-deleted ones included."""
        return bool(self._subjects.get(subject))

    def max_version(self, subject: str) -> int:
        """The highest version the subject ever had that is still in the topic (0 for none)."""
        return max(self._subjects.get(subject, {}), default=0)

    def schema(self, schema_id: int) -> Content | None:
        return self._ids.get(schema_id)

    def id_of(self, content: Content) -> int | None:
        """The id this schema already has, in any subject."""
        return self._content_ids.get(content)

    def find(self, subject: str, content: Content, deleted: bool = False) -> Registered | None:
        """The subject's newest version holding exactly this schema."""
        for entry in reversed(self.versions(subject, deleted)):
            if entry.content == content:
                return entry
        return None

    def with_id(self, schema_id: int, deleted: bool = False) -> list[Registered]:
        """Every subject version carrying this id, by subject then version."""
        out = [
            e
            for versions in self._subjects.values()
            for e in versions.values()
            if e.id == schema_id and (deleted or not e.deleted)
        ]
        return sorted(out, key=lambda e: (e.subject, e.version))

    def referenced_by(self, subject: str, version: int) -> list[int]:
        """Ids of live schemas that refer to this subject version."""
        ids = {
            e.id
            for versions in self._subjects.values()
            for e in versions.values()
            if not e.deleted and any(r.subject == subject and r.version == version for r in e.references)
        }
        return sorted(ids)
