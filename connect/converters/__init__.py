"""Built-in converters, compatible with Kafka Connect's (Java class names are accepted as aliases)."""

from connect.converters.avro import AvroConverter
from connect.converters.bytes import ByteArrayConverter
from connect.converters.header import SimpleHeaderConverter
from connect.converters.json import JsonConverter
from connect.converters.json_schema import JsonSchemaConverter
from connect.converters.numbers import (
    DoubleConverter,
    FloatConverter,
    IntegerConverter,
    LongConverter,
    NumberConverter,
    ShortConverter,
)
from connect.converters.protobuf import ProtobufConverter
from connect.converters.string import StringConverter

__all__ = [
    "AvroConverter",
    "ByteArrayConverter",
    "DoubleConverter",
    "FloatConverter",
    "IntegerConverter",
    "JsonConverter",
    "JsonSchemaConverter",
    "LongConverter",
    "NumberConverter",
    "ProtobufConverter",
    "ShortConverter",
    "SimpleHeaderConverter",
    "StringConverter",
]
