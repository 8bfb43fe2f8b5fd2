""".proto text of a ``FileDescriptorProto``: the registry's canonical text of a PROTOBUF
schema, whether it was registered as .proto text or as a base64 serialized descriptor
(the form confluent-kafka's ``ProtobufSerializer`` registers).

The layout follows Confluent's ``ProtobufSchemaUtils.toString``: syntax, package,
imports, file options, then messages and enums (messages first, each in declaration
order, since a record's message indexes count them), extensions, services; inside a
message its reserved ranges, options, fields, nested messages and enums. Type
names are fully qualified with a leading dot, as Confluent prints a schema that came as
a descriptor. Unlike Confluent's rendering of a descriptor, map fields print as
``map<K, V>`` (and their synthetic entry messages not at all) and groups as ``group``
blocks: the text must compile again with protoc, which refuses an explicit
``map_entry`` option; and a oneof stands where its first field is declared rather than
after the other fields, so that the text compiles to the fields in the descriptor's order.

``normalize`` is Confluent's normalized form where order carries no meaning: imports,
options, fields by number, oneofs by their first number, enum values by number,
reserved and extension ranges one per line in order. Pure.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass, field

from google.protobuf import descriptor_pb2, message_factory, text_format
from google.protobuf.descriptor import FieldDescriptor
from google.protobuf.descriptor_pool import DescriptorPool
from google.protobuf.message import Message
from google.protobuf.unknown_fields import UnknownFieldSet  # type: ignore[import-not-found]

__all__ = ["SCALAR_NAMES", "OptionsDecoder", "to_text"]

_FDP = descriptor_pb2.FieldDescriptorProto
# The .proto spelling of each scalar field type.
SCALAR_NAMES: dict[int, str] = {
    _FDP.TYPE_DOUBLE: "double",
    _FDP.TYPE_FLOAT: "float",
    _FDP.TYPE_INT64: "int64",
    _FDP.TYPE_UINT64: "uint64",
    _FDP.TYPE_INT32: "int32",
    _FDP.TYPE_FIXED64: "fixed64",
    _FDP.TYPE_FIXED32: "fixed32",
    _FDP.TYPE_BOOL: "bool",
    _FDP.TYPE_STRING: "string",
    _FDP.TYPE_BYTES: "bytes",
    _FDP.TYPE_UINT32: "uint32",
    _FDP.TYPE_SFIXED32: "sfixed32",
    _FDP.TYPE_SFIXED64: "sfixed64",
    _FDP.TYPE_SINT32: "sint32",
    _FDP.TYPE_SINT64: "sint64",
}
_LABELS = {_FDP.LABEL_OPTIONAL: "optional", _FDP.LABEL_REQUIRED: "required", _FDP.LABEL_REPEATED: "repeated"}
_MAX_FIELD = 536870911  # the largest field number: "max" in a range
_MAX_ENUM = 2147483647
_ESCAPES = {
    "\a": "\\a",
    "\b": "\\b",
    "\f": "\\f",
    "\n": "\\n",
    "\r": "\\r",
    "\t": "\\t",
    "\v": "\\v",
    "\\": "\\\\",
    "'": "\\'",
    '"': '\\"',
}


def _quote(text: str) -> str:
    out = []
    for ch in text:
        esc = _ESCAPES.get(ch)
        if esc is None and ord(ch) < 0x20:
            esc = f"\\{ord(ch):03o}"
        out.append(esc or ch)
    return '"' + "".join(out) + '"'


def _bytes_literal(data: bytes) -> str:
    # protoc reads octal escapes in a bytes literal; printable ASCII stays as it is.
    out = []
    for b in data:
        ch = chr(b)
        if ch in _ESCAPES:
            out.append(_ESCAPES[ch])
        elif 0x20 <= b < 0x7F:
            out.append(ch)
        else:
            out.append(f"\\{b:03o}")
    return '"' + "".join(out) + '"'


class OptionsDecoder:
    """Reads options messages with the custom options (extensions) of the schema's own
    files known: parsed by ``descriptor_pb2`` alone those are unknown fields, so the
    options are parsed again by classes of a pool holding every file of the schema."""

    def __init__(self, files: Iterable[descriptor_pb2.FileDescriptorProto] = ()) -> None:
        self._files = list(files)
        self._pool: DescriptorPool | None = None
        self._classes: dict[str, type[Message]] = {}

    def decode(self, options: Message) -> Message:
        if not self._files or not len(UnknownFieldSet(options)):
            return options
        name = options.DESCRIPTOR.full_name
        cls = self._classes.get(name)
        if cls is None:
            if self._pool is None:
                pool = DescriptorPool()
                added: set[str] = set()
                by_name = {f.name: f for f in self._files}

                def add(f: descriptor_pb2.FileDescriptorProto) -> None:
                    if f.name in added:
                        return
                    added.add(f.name)
                    for dep in f.dependency:
                        if dep in by_name:
                            add(by_name[dep])
                    pool.Add(f)  # type: ignore[no-untyped-call]

                try:
                    if "google/protobuf/descriptor.proto" not in by_name:
                        add(_descriptor_file())
                    for f in self._files:
                        add(f)
                except TypeError:
                    # A file whose imports were not given: its custom options stay unread.
                    self._files = []
                    return options
                self._pool = pool
            try:
                desc = self._pool.FindMessageTypeByName(name)  # type: ignore[no-untyped-call]
            except KeyError:
                return options
            cls = self._classes[name] = message_factory.GetMessageClass(desc)
        return cls.FromString(options.SerializeToString())


def _descriptor_file() -> descriptor_pb2.FileDescriptorProto:
    return descriptor_pb2.FileDescriptorProto.FromString(descriptor_pb2.DESCRIPTOR.serialized_pb)


@dataclass
class _Printer:
    normalize: bool
    ignore_extensions: bool
    options: OptionsDecoder = field(default_factory=OptionsDecoder)

    # -- options ------------------------------------------------------------------------------
    def _value(self, fd: FieldDescriptor, value: object) -> str:
        if fd.type == FieldDescriptor.TYPE_MESSAGE or fd.type == FieldDescriptor.TYPE_GROUP:
            assert isinstance(value, Message)
            body = text_format.MessageToString(value, as_one_line=True)
            return "{ " + body + " }" if body else "{}"
        if fd.type == FieldDescriptor.TYPE_ENUM:
            assert fd.enum_type is not None and isinstance(value, int)
            known = fd.enum_type.values_by_number.get(value)
            return known.name if known is not None else str(value)
        if fd.type == FieldDescriptor.TYPE_BOOL:
            return "true" if value else "false"
        if fd.type == FieldDescriptor.TYPE_STRING:
            assert isinstance(value, str)
            return _quote(value)
        if fd.type == FieldDescriptor.TYPE_BYTES:
            assert isinstance(value, bytes)
            return _bytes_literal(value)
        if isinstance(value, float):
            if math.isnan(value):
                return "nan"
            if math.isinf(value):
                return "inf" if value > 0 else "-inf"
            return repr(value)
        return str(value)

    def _options(self, options: Message) -> list[str]:
        """Each option as ``name = value`` (a repeated one once per value)."""
        decoded = self.options.decode(options)
        out: list[str] = []
        for fd, value in decoded.ListFields():
            if fd.is_extension:
                if self.ignore_extensions:
                    continue
                name = f"({fd.full_name})"
            else:
                name = fd.name
            values = list(value) if fd.is_repeated else [value]
            out += [f"{name} = {self._value(fd, v)}" for v in values]
        return sorted(out) if self.normalize else out

    @staticmethod
    def _bracketed(items: list[str]) -> str:
        if not items:
            return ""
        if len(items) == 1:
            return f" [{items[0]}]"
        return " [\n" + ",\n".join("  " + i for i in items) + "\n]"

    # -- ranges -------------------------------------------------------------------------------
    def _ranges(self, keyword: str, ranges: list[tuple[int, int]], names: list[str], top: int) -> list[str]:
        """``reserved``/``extensions`` lines from inclusive (start, end) ranges."""

        def one(start: int, end: int) -> str:
            if start == end:
                return str(start)
            return f"{start} to {'max' if end >= top else end}"

        if self.normalize:
            lines = [f"{keyword} {one(s, e)};\n" for s, e in sorted(ranges)]
            return lines + [f"{keyword} {_quote(n)};\n" for n in sorted(names)]
        out = []
        if ranges:
            out.append(f"{keyword} {', '.join(one(s, e) for s, e in ranges)};\n")
        if names:
            out.append(f"{keyword} {', '.join(_quote(n) for n in names)};\n")
        return out

    # -- fields -------------------------------------------------------------------------------
    def _type_name(self, f: descriptor_pb2.FieldDescriptorProto) -> str:
        return SCALAR_NAMES.get(f.type) or f.type_name

    def _field(
        self,
        f: descriptor_pb2.FieldDescriptorProto,
        syntax: str,
        maps: dict[str, descriptor_pb2.DescriptorProto],
        groups: dict[str, descriptor_pb2.DescriptorProto],
        in_oneof: bool,
    ) -> str:
        entry = maps.get(f.type_name) if f.label == _FDP.LABEL_REPEATED else None
        extras: list[str] = []
        if entry is not None:
            key, val = entry.field[0], entry.field[1]
            head = f"map<{self._type_name(key)}, {self._type_name(val)}> {f.name} = {f.number}"
        else:
            label = ""
            if not in_oneof:
                if f.proto3_optional or (syntax == "proto2" and f.label != _FDP.LABEL_REPEATED):
                    label = _LABELS[f.label] + " "
                elif f.label == _FDP.LABEL_REPEATED:
                    label = "repeated "
            if f.type == _FDP.TYPE_GROUP:
                group = groups[f.type_name]
                body = self._message_body(group, syntax, f.type_name, maps, groups)
                head = f"{label}group {group.name} = {f.number}"
                return head + self._bracketed(self._options(f.options)) + " {" + body + "}\n"
            head = f"{label}{self._type_name(f)} {f.name} = {f.number}"
            if f.HasField("default_value"):
                extras.append(f"default = {self._default(f)}")
        if f.HasField("json_name"):
            extras.append(f"json_name = {_quote(f.json_name)}")
        opts = self._options(f.options) + extras
        if self.normalize:
            opts = sorted(opts)
        return head + self._bracketed(opts) + ";\n"

    @staticmethod
    def _default(f: descriptor_pb2.FieldDescriptorProto) -> str:
        if f.type == _FDP.TYPE_STRING:
            return _quote(f.default_value)
        if f.type == _FDP.TYPE_BYTES:
            return '"' + f.default_value + '"'  # already C-escaped in the descriptor
        return f.default_value

    # -- messages and enums -------------------------------------------------------------------
    def _enum(self, e: descriptor_pb2.EnumDescriptorProto) -> str:
        lines = self._ranges(
            "reserved", [(r.start, r.end) for r in e.reserved_range], list(e.reserved_name), _MAX_ENUM
        )
        lines += [f"option {o};\n" for o in self._options(e.options)]
        values = list(e.value)
        if self.normalize:
            values.sort(key=lambda v: (v.number, v.name))
        for v in values:
            lines.append(f"{v.name} = {v.number}{self._bracketed(self._options(v.options))};\n")
        return f"enum {e.name} {{" + ("\n" + _indent("".join(lines)) if lines else "") + "}\n"

    def _message(
        self,
        m: descriptor_pb2.DescriptorProto,
        syntax: str,
        scope: str,
        maps: dict[str, descriptor_pb2.DescriptorProto],
        groups: dict[str, descriptor_pb2.DescriptorProto],
    ) -> str:
        body = self._message_body(m, syntax, f"{scope}.{m.name}", maps, groups)
        return f"message {m.name} {{{body}}}\n"

    def _message_body(
        self,
        m: descriptor_pb2.DescriptorProto,
        syntax: str,
        full: str,
        maps: dict[str, descriptor_pb2.DescriptorProto],
        groups: dict[str, descriptor_pb2.DescriptorProto],
    ) -> str:
        sections: list[str] = []
        # Confluent's order of sections; a section starts with a newline when present.
        reserved = self._ranges(
            "reserved", [(r.start, r.end - 1) for r in m.reserved_range], list(m.reserved_name), _MAX_FIELD
        )
        if reserved:
            sections.append("".join(reserved))
        options = [f"option {o};\n" for o in self._options(m.options)]
        if options:
            sections.append("".join(options))
        real_oneofs = {f.oneof_index for f in m.field if f.HasField("oneof_index") and not f.proto3_optional}
        # Fields in declaration order, a oneof where its first member is: the order of the
        # fields in the descriptor, which a record's readers (Connect's struct fields) follow.
        entries: list[tuple[int, str]] = []
        done: set[int] = set()
        for f in m.field:
            index = f.oneof_index if f.HasField("oneof_index") and f.oneof_index in real_oneofs else None
            if index is None:
                entries.append((f.number, self._field(f, syntax, maps, groups, False)))
                continue
            if index in done:
                continue
            done.add(index)
            members = [g for g in m.field if g.HasField("oneof_index") and g.oneof_index == index]
            if self.normalize:
                members.sort(key=lambda g: g.number)
            decl = m.oneof_decl[index]
            inner = "".join(f"option {o};\n" for o in self._options(decl.options))
            inner += "".join(self._field(g, syntax, maps, groups, True) for g in members)
            entries.append((members[0].number, f"oneof {decl.name} {{\n" + _indent(inner) + "}\n"))
        if self.normalize:
            entries.sort(key=lambda e: e[0])
        if entries:
            sections.append("".join(text for _, text in entries))
        if not self.ignore_extensions:
            ranges = self._ranges(
                "extensions", [(r.start, r.end - 1) for r in m.extension_range], [], _MAX_FIELD
            )
            if ranges:
                sections.append("".join(ranges))
            extends = self._extends(list(m.extension), syntax, maps, groups)
            if extends:
                sections.append(extends)
        nested = self._types(list(m.nested_type), list(m.enum_type), syntax, full, maps, groups)
        if nested:
            sections.append(nested)
        return "".join("\n" + _indent(s) for s in sections)

    def _types(
        self,
        messages: list[descriptor_pb2.DescriptorProto],
        enums: list[descriptor_pb2.EnumDescriptorProto],
        syntax: str,
        scope: str,
        maps: dict[str, descriptor_pb2.DescriptorProto],
        groups: dict[str, descriptor_pb2.DescriptorProto],
    ) -> str:
        out = []
        for m in messages:
            name = f"{scope}.{m.name}"
            if name in maps or name in groups:
                continue  # written as the map field or group that declares it
            out.append(self._message(m, syntax, scope, maps, groups))
        out += [self._enum(e) for e in enums]
        return "".join(out)

    def _extends(
        self,
        fields: list[descriptor_pb2.FieldDescriptorProto],
        syntax: str,
        maps: dict[str, descriptor_pb2.DescriptorProto],
        groups: dict[str, descriptor_pb2.DescriptorProto],
    ) -> str:
        by_extendee: dict[str, list[descriptor_pb2.FieldDescriptorProto]] = {}
        for f in fields:
            by_extendee.setdefault(f.extendee, []).append(f)
        out = []
        for extendee, members in by_extendee.items():
            if self.normalize:
                members.sort(key=lambda f: f.number)
            inner = "".join(self._field(f, syntax, maps, groups, False) for f in members)
            out.append(f"extend {extendee} {{\n" + _indent(inner) + "}\n")
        return "".join(out)

    def _service(self, s: descriptor_pb2.ServiceDescriptorProto) -> str:
        lines = [f"option {o};\n" for o in self._options(s.options)]
        text = f"service {s.name} {{"
        if lines:
            text += "\n" + _indent("".join(lines))
        rpcs = []
        for r in s.method:
            req = ("stream " if r.client_streaming else "") + r.input_type
            resp = ("stream " if r.server_streaming else "") + r.output_type
            opts = self._options(r.options)
            tail = " {\n" + _indent("".join(f"option {o};\n" for o in opts)) + "}" if opts else ""
            rpcs.append(f"rpc {r.name} ({req}) returns ({resp}){tail};\n")
        if rpcs:
            text += "\n" + _indent("".join(rpcs))
        return text + "}\n"

    # -- the file -----------------------------------------------------------------------------
    def file(self, fdp: descriptor_pb2.FileDescriptorProto) -> str:
        syntax = fdp.syntax or "proto2"
        maps: dict[str, descriptor_pb2.DescriptorProto] = {}
        groups: dict[str, descriptor_pb2.DescriptorProto] = {}
        _collect(fdp.message_type, f".{fdp.package}" if fdp.package else "", maps, groups)
        out = []
        if syntax == "editions":
            edition = descriptor_pb2.Edition.Name(fdp.edition).removeprefix("EDITION_")
            out.append(f'edition = "{edition}";\n')
        else:
            out.append(f'syntax = "{syntax}";\n')
        if fdp.package:
            out.append(f"package {fdp.package};\n")
        public, weak = set(fdp.public_dependency), set(fdp.weak_dependency)
        plain = [d for i, d in enumerate(fdp.dependency) if i not in public and i not in weak]
        pub = [fdp.dependency[i] for i in fdp.public_dependency]
        wk = [fdp.dependency[i] for i in fdp.weak_dependency]
        if self.normalize:
            plain, pub, wk = (sorted(set(x)) for x in (plain, pub, wk))
        imports = [f'import "{d}";\n' for d in plain]
        imports += [f'import public "{d}";\n' for d in pub]
        imports += [f'import weak "{d}";\n' for d in wk]
        if imports:
            out.append("\n" + "".join(imports))
        options = [f"option {o};\n" for o in self._options(fdp.options)]
        if options:
            out.append("\n" + "".join(options))
        scope = f".{fdp.package}" if fdp.package else ""
        types = self._types(list(fdp.message_type), list(fdp.enum_type), syntax, scope, maps, groups)
        if types:
            out.append("\n" + types)
        if not self.ignore_extensions:
            extends = self._extends(list(fdp.extension), syntax, maps, groups)
            if extends:
                out.append("\n" + extends)
        if fdp.service:
            out.append("\n" + "".join(self._service(s) for s in fdp.service))
        return "".join(out)


def _collect(
    messages: Iterable[descriptor_pb2.DescriptorProto],
    scope: str,
    maps: dict[str, descriptor_pb2.DescriptorProto],
    groups: dict[str, descriptor_pb2.DescriptorProto],
) -> None:
    """The map entry and group messages by full name (with the leading dot)."""
    for m in messages:
        full = f"{scope}.{m.name}"
        if m.options.map_entry:
            maps[full] = m
        group_types = {f.type_name for f in m.field if f.type == _FDP.TYPE_GROUP}
        for nested in m.nested_type:
            if f"{full}.{nested.name}" in group_types:
                groups[f"{full}.{nested.name}"] = nested
        _collect(m.nested_type, full, maps, groups)


def _indent(text: str) -> str:
    return "".join(("  " + line if line else line) + "\n" for line in text.split("\n")[:-1]) + (
        "" if text.endswith("\n") else "  " + text.split("\n")[-1]
    )


def to_text(
    fdp: descriptor_pb2.FileDescriptorProto,
    normalize: bool = False,
    *,
    ignore_extensions: bool = False,
    files: Iterable[descriptor_pb2.FileDescriptorProto] = (),
) -> str:
    """``fdp`` as .proto text; ``files`` (the files it imports, transitively) make its
    custom options readable by name."""
    return _Printer(normalize, ignore_extensions, OptionsDecoder([*files, fdp])).file(fdp)
