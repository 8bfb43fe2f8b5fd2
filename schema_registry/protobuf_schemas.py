"""PROTOBUF schemas (schemaType ``PROTOBUF``): ``.proto`` text (proto2, proto3, editions)
or, as confluent-kafka's ``ProtobufSerializer`` registers it, a base64 serialized
``FileDescriptorProto`` (Confluent's ``ProtobufSchema`` accepts both).

The text is compiled by protoc itself (``grpcio-tools`` runs it in process): the schema
and its references are written to a scratch directory, a reference's name being the
path its importer imports (``other.proto``); the well-known types
(``google/protobuf/*.proto``, ``google/type/*.proto`` where googleapis' protos are
installed, ``confluent/meta.proto`` and ``confluent/type/decimal.proto``) resolve without
being given, as Confluent's do. protoc's own messages, with
file, line and column, are the 42201's. A descriptor is first printed as .proto text
(``proto_text``) and compiled the same way, so both forms give one canonical text: the
compiled descriptor printed (Confluent serves a registered descriptor as .proto text
too). ``normalize`` is Confluent's normalized rendering.

Compatibility is Confluent's ``SchemaDiff`` (``protobuf_diff``). ``formatted`` is the
``format`` query parameter: ``serialized`` gives the descriptor base64-encoded (what
the Python deserializer asks for), ``ignore_extensions`` the text without custom
options and extensions.
"""

from __future__ import annotations

import ast
import atexit
import base64
import binascii
import re
import shutil
import tempfile
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from google.protobuf import descriptor_pb2
from google.protobuf.message import DecodeError

from schema_registry.proto_text import to_text
from schema_registry.protobuf_diff import DescriptorSet, incompatible
from schema_registry.schema_kind import SchemaKind, SchemaProblem

__all__ = ["PROTOBUF", "ProtobufParsed", "formatted", "parse_protobuf", "protobuf_reads"]

_BASE64 = re.compile(r"[A-Za-z0-9+/]+={0,2}")
_MAIN = "default"  # the schema's own file name, as Confluent's ProtobufSchema.DEFAULT_NAME
_LOCK = threading.Lock()  # protoc's in-process compiler, one compilation at a time


@dataclass(frozen=True)
class ProtobufParsed:
    """A compiled schema: its file and the files it imports, transitively."""

    descriptors: DescriptorSet

    @property
    def file(self) -> descriptor_pb2.FileDescriptorProto:
        return self.descriptors.file


def _include_paths() -> list[str]:
    """Where the well-known types' .proto files are: grpc_tools' copy of protobuf's,
    googleapis' (google/type/*) when that package is installed, and Confluent's own
    (confluent/meta.proto, confluent/type/decimal.proto), which Confluent's registry
    resolves as it resolves protobuf's: printed from the descriptors confluent-kafka ships."""
    import grpc_tools  # type: ignore[import-untyped]

    paths = [str(Path(grpc_tools.__file__).parent / "_proto")]
    try:
        import google.type.date_pb2 as date_pb2  # type: ignore[import-untyped]

        root = Path(date_pb2.__file__).parent.parent.parent
        if (root / "google" / "type" / "date.proto").exists():
            paths.append(str(root))
    except ImportError:
        pass
    confluent = _confluent_files()
    if confluent is not None:
        paths.append(confluent)
    return paths


def _confluent_files() -> str | None:
    try:
        from confluent_kafka.schema_registry.confluent import meta_pb2
        from confluent_kafka.schema_registry.confluent.type import decimal_pb2
    except ImportError:
        return None
    descriptor = descriptor_pb2.FileDescriptorProto.FromString(descriptor_pb2.DESCRIPTOR.serialized_pb)
    where = tempfile.mkdtemp(prefix="sluiceway-proto-builtin-")
    atexit.register(shutil.rmtree, where, True)
    for module in (meta_pb2, decimal_pb2):
        fdp = descriptor_pb2.FileDescriptorProto.FromString(module.DESCRIPTOR.serialized_pb)
        path = Path(where, fdp.name)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(to_text(fdp, files=[descriptor]), encoding="utf-8")
    return where


_INCLUDES: list[str] | None = None


def _descriptor_of(text: str) -> descriptor_pb2.FileDescriptorProto | None:
    """``text`` as a base64 serialized FileDescriptorProto, or None when it is not one."""
    compact = "".join(text.split())
    if not compact or not _BASE64.fullmatch(compact):
        return None
    try:
        data = base64.b64decode(compact, validate=True)
        fdp = descriptor_pb2.FileDescriptorProto.FromString(data)
    except (binascii.Error, DecodeError, ValueError):
        return None
    return fdp


def _safe_name(name: str) -> str:
    """A reference name as a relative path inside the scratch directory."""
    parts = name.split("/")
    if not name or name.startswith("/") or "\\" in name or any(p in ("", ".", "..") for p in parts):
        raise SchemaProblem(f"reference {name!r}: not a relative .proto import path")
    return name


def _source(name: str, text: str) -> str:
    fdp = _descriptor_of(text)
    if fdp is None:
        return text
    fdp.name = name
    return to_text(fdp)


def _descriptor_source(fdp: descriptor_pb2.FileDescriptorProto, references: Sequence[tuple[str, str]]) -> str:
    """A descriptor as .proto text. Its custom options are extensions declared in the files
    it imports, unreadable without them: those are compiled first (a file importing each)."""
    if not fdp.dependency:
        return to_text(fdp)
    imports = "".join(f'import "{d}";\n' for d in fdp.dependency)
    _, imported, _ = _compile(f'syntax = "proto3";\n{imports}', references)
    return to_text(fdp, files=imported)


def _compile(
    main_text: str, references: Sequence[tuple[str, str]]
) -> tuple[descriptor_pb2.FileDescriptorProto, list[descriptor_pb2.FileDescriptorProto], str]:
    """The compiled schema, the compiled files it imports, and its file's name."""
    from grpc_tools import _protoc_compiler

    global _INCLUDES
    if _INCLUDES is None:
        _INCLUDES = _include_paths()
    names = {_safe_name(n) for n, _ in references}
    main = _MAIN
    while main in names:
        main = "_" + main
    with tempfile.TemporaryDirectory(prefix="sluiceway-proto-") as tmp:
        for name, text in references:
            path = Path(tmp, name)
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(_source(name, text), encoding="utf-8")
        Path(tmp, main).write_text(main_text, encoding="utf-8")
        includes = [tmp.encode(), *(p.encode() for p in _INCLUDES)]
        try:
            with _LOCK:
                generated = _protoc_compiler.get_protos(main.encode(), includes)
        except _protoc_compiler.ProtocErrors as exc:
            raise SchemaProblem(_protoc_message(exc.errors(), main)) from None
    files: dict[str, descriptor_pb2.FileDescriptorProto] = {}
    for _module, code in generated:
        fdp = _serialized_file(code)
        files[fdp.name] = fdp
    own = files.pop(main)
    return own, list(files.values()), main


def _protoc_message(errors: Sequence[object], main: str) -> str:
    lines = []
    for e in errors:
        filename = getattr(e, "filename", b"").decode(errors="replace")
        message = getattr(e, "message", b"").decode(errors="replace")
        line, column = getattr(e, "line", -1), getattr(e, "column", -1)
        where = "the schema" if filename == main else filename
        # protoc counts lines and columns from 0; -1 when the error is the file's own
        lines.append(f"{where}:{line + 1}:{column + 1}: {message}" if line >= 0 else f"{where}: {message}")
    return "Could not parse Protobuf - " + "; ".join(lines)


def _serialized_file(code: bytes) -> descriptor_pb2.FileDescriptorProto:
    """The FileDescriptorProto protoc's Python generator embeds in a module it generates."""
    for node in ast.walk(ast.parse(code)):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "AddSerializedFile"
            and node.args
            and isinstance(node.args[0], ast.Constant)
            and isinstance(node.args[0].value, bytes)
        ):
            return descriptor_pb2.FileDescriptorProto.FromString(node.args[0].value)
    raise SchemaProblem("protoc generated no descriptor")  # not expected of protoc


def parse_protobuf(
    text: str, references: Sequence[tuple[str, str]], normalize: bool
) -> tuple[str, ProtobufParsed]:
    """The canonical text and the compiled schema."""
    fdp = _descriptor_of(text)
    if fdp is not None:
        fdp.name = _MAIN
        text = _descriptor_source(fdp, references)
    own, imported, main = _compile(text, references)
    canonical = to_text(own, normalize, files=imported)
    if main != _MAIN:
        own.name = _MAIN
    return canonical, ProtobufParsed(DescriptorSet(own, tuple(imported)))


def protobuf_reads(reader: ProtobufParsed, writer: ProtobufParsed) -> list[str]:
    """Why ``reader`` cannot read data written with ``writer`` (empty: it can): the
    incompatible differences of Confluent's rules from ``writer`` (the original) to
    ``reader`` (the update), each as ``TYPE at #/path``."""
    return [f"{kind} at {path}" for kind, path in incompatible(writer.descriptors, reader.descriptors)]


def formatted(parsed: ProtobufParsed, fmt: str) -> str | None:
    """The schema in the ``format`` asked for, or None for its canonical text (an unknown
    format is not an error: Confluent's ``formattedString`` falls back the same way)."""
    fmt = fmt.strip().lower()
    if fmt == "serialized":
        return base64.b64encode(parsed.file.SerializeToString()).decode("ascii")
    if fmt == "ignore_extensions":
        return to_text(parsed.file, ignore_extensions=True, files=parsed.descriptors.imports)
    return None


PROTOBUF = SchemaKind(parse_protobuf, protobuf_reads)
