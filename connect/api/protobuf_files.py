"""The protobuf files a Connect schema's descriptor may import, built in so that every
descriptor pool (``new_pool``) knows them without a registry: protobuf's own
``google/protobuf/timestamp.proto`` and ``wrappers.proto``, and ``google/type/date.proto``,
``google/type/timeofday.proto``, ``confluent/type/decimal.proto`` and ``confluent/meta.proto``
written here with their fields as published (so ``connect.api`` needs neither googleapis'
protos nor confluent-kafka). ``confluent/meta.proto`` is its message only: the mapping
reads Confluent's ``field_meta`` option as the raw bytes of its extension.
"""

from __future__ import annotations

from google.protobuf import descriptor_pb2, timestamp_pb2, wrappers_pb2
from google.protobuf.descriptor_pool import DescriptorPool

__all__ = ["BUILTIN_FILES", "is_builtin", "new_pool"]

_F = descriptor_pb2.FieldDescriptorProto


def _file(name: str, package: str, messages: list[tuple[str, list[tuple[str, int, int]]]]) -> bytes:
    """A small descriptor file built in code: (message, [(field, number, type)]) pairs."""
    proto = descriptor_pb2.FileDescriptorProto(name=name, package=package, syntax="proto3")
    for message_name, fields in messages:
        message = proto.message_type.add(name=message_name)
        for field_name, number, field_type in fields:
            message.field.add(name=field_name, number=number, type=field_type, label=_F.LABEL_OPTIONAL)
    return proto.SerializeToString()


def _meta_file() -> bytes:
    proto = descriptor_pb2.FileDescriptorProto(
        name="confluent/meta.proto", package="confluent", syntax="proto3"
    )
    meta = proto.message_type.add(name="Meta")
    meta.field.add(name="doc", number=1, type=_F.TYPE_STRING, label=_F.LABEL_OPTIONAL)
    meta.field.add(
        name="params",
        number=2,
        type=_F.TYPE_MESSAGE,
        label=_F.LABEL_REPEATED,
        type_name=".confluent.Meta.ParamsEntry",
    )
    entry = meta.nested_type.add(name="ParamsEntry")
    entry.field.add(name="key", number=1, type=_F.TYPE_STRING, label=_F.LABEL_OPTIONAL)
    entry.field.add(name="value", number=2, type=_F.TYPE_STRING, label=_F.LABEL_OPTIONAL)
    entry.options.map_entry = True
    return proto.SerializeToString()


# The files a Connect schema may depend on, by file name: google/protobuf/* ship with
# protobuf; google/type/* and confluent/* are written here (their fields as published).
BUILTIN_FILES: dict[str, bytes] = {
    "google/protobuf/timestamp.proto": timestamp_pb2.DESCRIPTOR.serialized_pb,
    "google/protobuf/wrappers.proto": wrappers_pb2.DESCRIPTOR.serialized_pb,
    "google/type/date.proto": _file(
        "google/type/date.proto",
        "google.type",
        [("Date", [("year", 1, _F.TYPE_INT32), ("month", 2, _F.TYPE_INT32), ("day", 3, _F.TYPE_INT32)])],
    ),
    "google/type/timeofday.proto": _file(
        "google/type/timeofday.proto",
        "google.type",
        [
            (
                "TimeOfDay",
                [
                    ("hours", 1, _F.TYPE_INT32),
                    ("minutes", 2, _F.TYPE_INT32),
                    ("seconds", 3, _F.TYPE_INT32),
                    ("nanos", 4, _F.TYPE_INT32),
                ],
            )
        ],
    ),
    "confluent/type/decimal.proto": _file(
        "confluent/type/decimal.proto",
        "confluent.type",
        [
            (
                "Decimal",
                [("value", 1, _F.TYPE_BYTES), ("precision", 2, _F.TYPE_UINT32), ("scale", 3, _F.TYPE_INT32)],
            )
        ],
    ),
    "confluent/meta.proto": _meta_file(),
}


def is_builtin(file_name: str) -> bool:
    """Files every reader knows without the registry (Confluent's serializers skip them as
    references: ``skip.known.types``)."""
    return file_name.startswith(("google/protobuf/", "google/type/", "confluent/"))


def new_pool(builtins: bool = True) -> DescriptorPool:
    """A fresh pool holding the built-in files (in dependency order)."""
    pool = DescriptorPool()
    if builtins:
        pool.AddSerializedFile(descriptor_pb2.DESCRIPTOR.serialized_pb)  # type: ignore[no-untyped-call]
        for data in BUILTIN_FILES.values():
            pool.AddSerializedFile(data)  # type: ignore[no-untyped-call]
    return pool
