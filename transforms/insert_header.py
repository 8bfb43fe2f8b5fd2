"""InsertHeader: add a header with a fixed value to every record.

``header=source`` and ``value.literal=ingest`` append the header ``source: "ingest"``;
headers already called ``source`` stay (Kafka's headers are a multi-map). The literal
is read once, at configure, as Kafka's ``Values.parseString`` reads it
(``transforms.literals``): ``42`` is an INT8 header, ``true`` a BOOLEAN, ``3.14`` a
FLOAT32, ``2024-05-01`` a Date, ``[1,2]`` an ARRAY, ``null`` a header with no schema
and no value, and other text a STRING. Like every Kafka STRING setting the literal is
trimmed. Tombstones get the header too; key and value are untouched.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from connect.api import (
    ConfigIssue,
    ConfigModel,
    ConnectRecord,
    Field,
    Header,
    Headers,
    RecordColumns,
    Schema,
    Transformation,
    importance,
)
from transforms.literals import parse_literal


class InsertHeaderConfig(ConfigModel):
    # Typed "str | None" so that an explicit null reaches ``problems`` and gets Kafka's message.
    header: str | None = Field(
        alias="header", description="The name of the header.", json_schema_extra=importance("HIGH")
    )
    value_literal: str | None = Field(
        alias="value.literal",
        description="The literal value that is to be set as the header value on all records.",
        json_schema_extra=importance("HIGH"),
    )

    @classmethod
    def problems(cls, props: Mapping[str, Any]) -> list[ConfigIssue]:
        return [
            ConfigIssue(key, f"Invalid value null for configuration {key}: entry must be non null")
            for key in ("header", "value.literal")
            if key in props and props[key] is None
        ]


class InsertHeader(Transformation[ConnectRecord]):
    Config = InsertHeaderConfig
    aliases = ("org.apache.kafka.connect.transforms.InsertHeader",)

    def configure(self, configs: Mapping[str, Any]) -> None:
        config = self.config = InsertHeaderConfig.parse(configs)
        assert config.header is not None and config.value_literal is not None  # refused by problems()
        self.header = config.header
        parsed = parse_literal(config.value_literal)
        self.schema: Schema | None = None if parsed is None else parsed.schema
        self.value: Any = None if parsed is None else parsed.value
        # An immutable header is shared by every record; a list or map literal is copied for
        # each, so that what one record's consumer changes is not seen by the next record.
        mutable = isinstance(self.value, (list, dict))
        self._header: Header | None = None if mutable else Header(self.header, self.value, self.schema)

    def apply(self, record: ConnectRecord) -> ConnectRecord:
        # A copy of the headers, so adding leaves the input record alone.
        headers = record.headers.copy() if record.has_headers else Headers()
        shared = self._header
        if shared is not None:
            headers.add_header(shared)
        else:
            headers.add(self.header, copy.deepcopy(self.value), self.schema)
        return record.new_record(headers=headers)

    def apply_columns(self, batch: RecordColumns[ConnectRecord]) -> None:
        shared = self._header
        if shared is not None:
            # Rows without headers all get one Headers object holding the header: a batch's
            # Headers are never changed in place, and one object is converted once.
            alone = Headers()
            alone.add_header(shared)
            batch.headers = [_with(own, shared) if own else alone for own in batch.headers]
            return
        out: list[Headers | None] = []
        for own in batch.headers:
            headers = own.copy() if own else Headers()
            headers.add(self.header, copy.deepcopy(self.value), self.schema)
            out.append(headers)
        batch.headers = out


def _with(headers: Headers, header: Header) -> Headers:
    out = headers.copy()
    out.add_header(header)
    return out
