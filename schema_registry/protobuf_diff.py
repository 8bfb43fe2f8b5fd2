"""Confluent's Protobuf compatibility rules (``protobuf-provider``'s
``io.confluent.kafka.schemaregistry.protobuf.diff``: ``SchemaDiff``, ``MessageSchemaDiff``,
``FieldSchemaDiff``, ``EnumSchemaDiff``) over compiled descriptors.

``differences(original, update)`` lists every change from the original schema to the
update as (``Difference.Type`` name, path): the path is Confluent's, ``#/`` then message
names, a oneof's name and field numbers (``#/Order/2``, ``#/Order/choice/5``). A field
whose message type comes from another file (a reference or a well-known type) has that
type compared too, its differences reported under the type's own name.
``incompatible`` keeps those outside ``COMPATIBLE_CHANGES``: BACKWARD of new against old
is ``incompatible(old, new)``.

Where Confluent compares ``.proto`` syntax trees these rules see descriptors, so what
protoc adds is left out the way Confluent's parser never sees it: map entry messages
(a map field is of kind MAP), synthetic oneofs of proto3 ``optional`` fields. Pure.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from google.protobuf import descriptor_pb2

from schema_registry.proto_text import SCALAR_NAMES

__all__ = ["COMPATIBLE_CHANGES", "DescriptorSet", "Difference", "differences", "incompatible"]

Difference = tuple[str, str]  # (Confluent's Difference.Type, path)

COMPATIBLE_CHANGES: frozenset[str] = frozenset(
    [
        "MESSAGE_ADDED",
        "MESSAGE_MOVED",
        "ENUM_ADDED",
        "ENUM_REMOVED",
        "ENUM_CONST_ADDED",
        "ENUM_CONST_CHANGED",
        "ENUM_CONST_REMOVED",
        "FIELD_ADDED",
        "FIELD_REMOVED",
        "FIELD_NAME_CHANGED",
        "FIELD_STRING_OR_BYTES_LABEL_CHANGED",
        "ONEOF_ADDED",
        "ONEOF_REMOVED",
        "ONEOF_FIELD_ADDED",
        "ONEOF_FIELD_MOVED_TO_TOP_LEVEL",
    ]
)

_FDP = descriptor_pb2.FieldDescriptorProto
# Wire-compatible groups of scalars (FieldSchemaDiff.scalarKind); an enum counts as a
# general number.
_SCALAR_KIND: dict[str, str] = {
    "int32": "GENERAL_NUMBER",
    "int64": "GENERAL_NUMBER",
    "uint32": "GENERAL_NUMBER",
    "uint64": "GENERAL_NUMBER",
    "bool": "GENERAL_NUMBER",
    "sint32": "SIGNED_NUMBER",
    "sint64": "SIGNED_NUMBER",
    "string": "STRING_OR_BYTES",
    "bytes": "STRING_OR_BYTES",
    "fixed32": "FIXED32",
    "sfixed32": "FIXED32",
    "fixed64": "FIXED64",
    "sfixed64": "FIXED64",
    "float": "FLOAT",
    "double": "DOUBLE",
}
_NUMERIC = frozenset(["GENERAL_NUMBER", "SIGNED_NUMBER", "FIXED32", "FIXED64", "FLOAT", "DOUBLE"])


@dataclass(frozen=True, slots=True)
class _Type:
    package: str
    local: bool  # declared in the schema's own file, not in a file it imports
    message: descriptor_pb2.DescriptorProto | None
    enum: descriptor_pb2.EnumDescriptorProto | None
    syntax: str

    @property
    def is_map(self) -> bool:
        return self.message is not None and self.message.options.map_entry


@dataclass(frozen=True)
class DescriptorSet:
    """A schema's file and the files it imports (transitively), compiled."""

    file: descriptor_pb2.FileDescriptorProto
    imports: Sequence[descriptor_pb2.FileDescriptorProto] = ()
    types: dict[str, _Type] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        types: dict[str, _Type] = {}
        for f in [*self.imports, self.file]:
            local = f is self.file
            syntax = f.syntax or "proto2"
            prefix = f.package + "." if f.package else ""
            _index(types, f.message_type, f.enum_type, prefix, f.package, local, syntax)
        object.__setattr__(self, "types", types)


def _index(
    types: dict[str, _Type],
    messages: Iterable[descriptor_pb2.DescriptorProto],
    enums: Iterable[descriptor_pb2.EnumDescriptorProto],
    prefix: str,
    package: str,
    local: bool,
    syntax: str,
) -> None:
    for m in messages:
        types[prefix + m.name] = _Type(package, local, m, None, syntax)
        _index(types, m.nested_type, m.enum_type, f"{prefix}{m.name}.", package, local, syntax)
    for e in enums:
        types[prefix + e.name] = _Type(package, local, None, e, syntax)


# A field's type as Confluent's ProtoType: ("scalar", name), ("named", full name) or
# ("map", key, value).
_ProtoType = tuple[object, ...]


@dataclass
class _Ctx:
    original: DescriptorSet
    update: DescriptorSet
    path: list[str]
    # original messages being compared (Context.SchemaScope): a recursive type stops here
    in_progress: set[str]
    diffs: list[Difference] = field(default_factory=list)

    def add(self, kind: str, *more: str) -> None:
        self.diffs.append((kind, "#/" + "/".join([*self.path, *more])))

    def sub(self, local_name: str) -> _Ctx:
        return _Ctx(self.original, self.update, local_name.split("."), set(self.in_progress))


def differences(original: DescriptorSet, update: DescriptorSet) -> list[Difference]:
    """Every change from ``original`` to ``update`` (SchemaDiff.compare)."""
    ctx = _Ctx(original, update, [], set())
    if original.file.package != update.file.package:
        ctx.add("PACKAGE_CHANGED")
    _compare_types(
        ctx,
        list(original.file.message_type),
        list(original.file.enum_type),
        list(update.file.message_type),
        list(update.file.enum_type),
        _prefix(original.file.package),
        _prefix(update.file.package),
    )
    return ctx.diffs


def incompatible(original: DescriptorSet, update: DescriptorSet) -> list[Difference]:
    """The changes that keep ``update`` from reading data written with ``original``."""
    return [d for d in differences(original, update) if d[0] not in COMPATIBLE_CHANGES]


def _prefix(package: str) -> str:
    return package + "." if package else ""


def _compare_types(
    ctx: _Ctx,
    original_messages: list[descriptor_pb2.DescriptorProto],
    original_enums: list[descriptor_pb2.EnumDescriptorProto],
    update_messages: list[descriptor_pb2.DescriptorProto],
    update_enums: list[descriptor_pb2.EnumDescriptorProto],
    original_prefix: str,
    update_prefix: str,
) -> None:
    """SchemaDiff.compareTypeElements: messages and enums of one scope, by name."""
    # Map entries are no messages in Confluent's syntax tree: neither compared nor counted.
    originals = [m for m in original_messages if not m.options.map_entry]
    updates = [m for m in update_messages if not m.options.map_entry]
    by_name_o = {m.name: (i, m) for i, m in enumerate(originals)}
    by_name_u = {m.name: (i, m) for i, m in enumerate(updates)}
    for name in _union(by_name_o, by_name_u):
        ctx.path.append(name)
        if name not in by_name_u:
            ctx.add("MESSAGE_REMOVED")
        elif name not in by_name_o:
            ctx.add("MESSAGE_ADDED")
        else:
            index_o, message_o = by_name_o[name]
            index_u, message_u = by_name_u[name]
            _compare_messages(ctx, message_o, message_u, original_prefix + name, update_prefix + name)
            if index_o != index_u:
                ctx.add("MESSAGE_MOVED")
        ctx.path.pop()
    enums_o = {e.name: e for e in original_enums}
    enums_u = {e.name: e for e in update_enums}
    for name in _union(enums_o, enums_u):
        ctx.path.append(name)
        if name not in enums_u:
            ctx.add("ENUM_REMOVED")
        elif name not in enums_o:
            ctx.add("ENUM_ADDED")
        else:
            _compare_enums(ctx, enums_o[name], enums_u[name])
        ctx.path.pop()


def _union(a: Mapping[str, object], b: Mapping[str, object]) -> list[str]:
    return [*a, *(n for n in b if n not in a)]


def _compare_enums(
    ctx: _Ctx, original: descriptor_pb2.EnumDescriptorProto, update: descriptor_pb2.EnumDescriptorProto
) -> None:
    by_number_o = {v.number: v.name for v in original.value}
    by_number_u = {v.number: v.name for v in update.value}
    for number in sorted(by_number_o.keys() | by_number_u.keys()):
        if number not in by_number_u:
            ctx.add("ENUM_CONST_REMOVED", str(number))
        elif number not in by_number_o:
            ctx.add("ENUM_CONST_ADDED", str(number))
        elif by_number_o[number] != by_number_u[number]:
            ctx.add("ENUM_CONST_CHANGED", str(number))


def _oneof_members(
    m: descriptor_pb2.DescriptorProto,
) -> tuple[dict[int, descriptor_pb2.FieldDescriptorProto], dict[int, str], dict[str, list[int]]]:
    """Fields by number, the oneof of each member, each oneof's member numbers (synthetic
    oneofs of proto3 ``optional`` fields left out, as Confluent's parser has none)."""
    by_number = {f.number: f for f in m.field}
    oneof_of: dict[int, str] = {}
    oneofs: dict[str, list[int]] = {}
    for f in m.field:
        if f.HasField("oneof_index") and not f.proto3_optional:
            name = m.oneof_decl[f.oneof_index].name
            oneof_of[f.number] = name
            oneofs.setdefault(name, []).append(f.number)
    return by_number, oneof_of, oneofs


def _compare_messages(
    ctx: _Ctx,
    original: descriptor_pb2.DescriptorProto,
    update: descriptor_pb2.DescriptorProto,
    original_name: str,
    update_name: str,
) -> None:
    """MessageSchemaDiff.compare."""
    if original_name in ctx.in_progress:
        return
    ctx.in_progress.add(original_name)
    try:
        fields_o, oneof_of_o, oneofs_o = _oneof_members(original)
        fields_u, oneof_of_u, oneofs_u = _oneof_members(update)
        # A oneof gone by name with none of its members left anywhere is deleted whole.
        deleted = {
            name
            for name, members in oneofs_o.items()
            if name not in oneofs_u and not any(n in fields_u for n in members)
        }
        # Fields from more than one original group now mutually exclusive.
        for name, members in oneofs_u.items():
            groups: set[str] = set()
            moved_in = 0
            for number in members:
                if number in oneof_of_o:
                    groups.add("oneof:" + oneof_of_o[number])
                elif number in fields_o:
                    groups.add(f"field:{number}")
                    moved_in += 1
            if len(groups) > 1:
                several = moved_in > 1
                ctx.add(
                    "MULTIPLE_FIELDS_MOVED_TO_ONEOF" if several else "FIELD_MOVED_TO_EXISTING_ONEOF", name
                )
        for name in sorted(oneofs_o.keys() | oneofs_u.keys()):
            if name not in oneofs_u:
                ctx.add("ONEOF_REMOVED", name)
            elif name not in oneofs_o:
                ctx.add("ONEOF_ADDED", name)
        syntax_o = ctx.original.types[original_name].syntax
        syntax_u = ctx.update.types[update_name].syntax
        for number in sorted(fields_o.keys() | fields_u.keys()):
            field_o, field_u = fields_o.get(number), fields_u.get(number)
            oneof_o, oneof_u = oneof_of_o.get(number), oneof_of_u.get(number)
            if field_u is None:
                assert field_o is not None
                if oneof_o is not None:
                    if oneof_o not in deleted:
                        ctx.add("ONEOF_FIELD_REMOVED", oneof_o, str(number))
                else:
                    required = field_o.label == _FDP.LABEL_REQUIRED and syntax_o == "proto2"
                    ctx.add("REQUIRED_FIELD_REMOVED" if required else "FIELD_REMOVED", str(number))
            elif field_o is None:
                if oneof_u is not None:
                    ctx.add("ONEOF_FIELD_ADDED", oneof_u, str(number))
                else:
                    required = field_u.label == _FDP.LABEL_REQUIRED and syntax_u == "proto2"
                    ctx.add("REQUIRED_FIELD_ADDED" if required else "FIELD_ADDED", str(number))
            else:
                if oneof_o is not None and oneof_u is None:
                    ctx.add("ONEOF_FIELD_MOVED_TO_TOP_LEVEL", str(number))
                where = [oneof_u, str(number)] if oneof_u is not None else [str(number)]
                ctx.path.extend(where)
                _compare_fields(
                    ctx,
                    field_o,
                    field_u,
                    _label(field_o, syntax_o, oneof_o is not None),
                    _label(field_u, syntax_u, oneof_u is not None),
                )
                del ctx.path[-len(where) :]
        _compare_types(
            ctx,
            list(original.nested_type),
            list(original.enum_type),
            list(update.nested_type),
            list(update.enum_type),
            original_name + ".",
            update_name + ".",
        )
    finally:
        ctx.in_progress.discard(original_name)


def _label(f: descriptor_pb2.FieldDescriptorProto, syntax: str, in_oneof: bool) -> str | None:
    """The label Confluent's parser gives the field (none in a oneof, none for a proto3
    singular field without ``optional``)."""
    if in_oneof:
        return None
    if f.proto3_optional:
        return "optional"
    if f.label == _FDP.LABEL_REPEATED:
        return "repeated"
    if syntax != "proto2":
        return None
    return "required" if f.label == _FDP.LABEL_REQUIRED else "optional"


def _proto_type(f: descriptor_pb2.FieldDescriptorProto, types: dict[str, _Type]) -> _ProtoType:
    scalar = SCALAR_NAMES.get(f.type)
    if scalar is not None:
        return ("scalar", scalar)
    name = f.type_name.lstrip(".")
    info = types.get(name)
    if info is not None and info.is_map and info.message is not None:
        key, value = info.message.field[0], info.message.field[1]
        return ("map", _proto_type(key, types), _proto_type(value, types))
    return ("named", name)


def _kind(t: _ProtoType, types: dict[str, _Type]) -> str:
    if t[0] == "scalar":
        return "SCALAR"
    if t[0] == "map":
        return "MAP"
    info = types.get(str(t[1]))
    return "SCALAR" if info is not None and info.enum is not None else "MESSAGE"


def _scalar_kind(t: _ProtoType, types: dict[str, _Type]) -> str:
    if t[0] == "named":
        return "GENERAL_NUMBER"  # an enum
    return _SCALAR_KIND[str(t[1])]


def _compare_fields(
    ctx: _Ctx,
    original: descriptor_pb2.FieldDescriptorProto,
    update: descriptor_pb2.FieldDescriptorProto,
    label_o: str | None,
    label_u: str | None,
) -> None:
    """FieldSchemaDiff.compare."""
    if original.name != update.name:
        ctx.add("FIELD_NAME_CHANGED")
    _compare_labels_and_types(
        ctx,
        label_o,
        label_u,
        _proto_type(original, ctx.original.types),
        _proto_type(update, ctx.update.types),
    )


def _compare_labels_and_types(
    ctx: _Ctx, label_o: str | None, label_u: str | None, type_o: _ProtoType, type_u: _ProtoType
) -> None:
    kind_o = _kind(type_o, ctx.original.types)
    kind_u = _kind(type_u, ctx.update.types)
    if kind_o != kind_u:
        ctx.add("FIELD_KIND_CHANGED")
    elif kind_o == "SCALAR":
        scalar_o = _scalar_kind(type_o, ctx.original.types)
        scalar_u = _scalar_kind(type_u, ctx.update.types)
        if scalar_o != scalar_u:
            ctx.add("FIELD_SCALAR_KIND_CHANGED")
        elif label_o is not None and label_u is not None and label_o != label_u:
            if scalar_o in _NUMERIC:
                ctx.add("FIELD_NUMERIC_LABEL_CHANGED")
            elif scalar_o == "STRING_OR_BYTES":
                ctx.add("FIELD_STRING_OR_BYTES_LABEL_CHANGED")
    elif kind_o == "MESSAGE":
        _compare_message_types(ctx, str(type_o[1]), str(type_u[1]))
    else:  # MAP
        assert isinstance(type_o[1], tuple) and isinstance(type_u[1], tuple)
        assert isinstance(type_o[2], tuple) and isinstance(type_u[2], tuple)
        _compare_labels_and_types(ctx, None, None, type_o[1], type_u[1])
        _compare_labels_and_types(ctx, None, None, type_o[2], type_u[2])


def _compare_message_types(ctx: _Ctx, name_o: str, name_u: str) -> None:
    """FieldSchemaDiff.compareMessageTypes: the same name within its package, and a type
    from an imported file also compared field by field."""
    info_o, info_u = ctx.original.types.get(name_o), ctx.update.types.get(name_u)
    if info_o is None or info_u is None or info_o.message is None or info_u.message is None:
        if name_o != name_u:
            ctx.add("FIELD_NAMED_TYPE_CHANGED")
        return
    local_o = name_o.removeprefix(_prefix(info_o.package))
    local_u = name_u.removeprefix(_prefix(info_u.package))
    if local_o != local_u:
        ctx.add("FIELD_NAMED_TYPE_CHANGED")
        return
    if info_o.local and info_u.local:
        return  # compared where the schema declares it
    sub = ctx.sub(local_o)
    _compare_messages(sub, info_o.message, info_u.message, name_o, name_u)
    ctx.diffs.extend(sub.diffs)
    if any(kind not in COMPATIBLE_CHANGES for kind, _ in sub.diffs):
        ctx.add("FIELD_NAMED_TYPE_CHANGED")
