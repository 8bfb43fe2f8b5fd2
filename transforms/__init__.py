"""Kafka Connect's single message transforms and predicates, with Kafka's class names as aliases.

Imports only ``connect.api``. The package registers through the ``sluiceway.plugins``
entry point: every transformation and predicate imported here is a plugin.
"""

from transforms.cast import CastKey, CastValue
from transforms.drop_headers import DropHeaders
from transforms.extract_field import ExtractFieldKey, ExtractFieldValue
from transforms.extract_new_record_state import ExtractNewRecordState
from transforms.filter import Filter
from transforms.flatten import FlattenKey, FlattenValue
from transforms.header_from import HeaderFromKey, HeaderFromValue
from transforms.hoist_field import HoistFieldKey, HoistFieldValue
from transforms.insert_field import InsertFieldKey, InsertFieldValue
from transforms.insert_header import InsertHeader
from transforms.mask_field import MaskFieldKey, MaskFieldValue
from transforms.predicates import HasHeaderKey, RecordIsTombstone, TopicNameMatches
from transforms.regex_router import RegexRouter
from transforms.replace_field import ReplaceFieldKey, ReplaceFieldValue
from transforms.set_schema_metadata import SetSchemaMetadataKey, SetSchemaMetadataValue
from transforms.timestamp_converter import TimestampConverterKey, TimestampConverterValue
from transforms.timestamp_router import TimestampRouter
from transforms.value_to_key import ValueToKey

__all__ = [
    "CastKey",
    "CastValue",
    "DropHeaders",
    "ExtractFieldKey",
    "ExtractFieldValue",
    "ExtractNewRecordState",
    "Filter",
    "FlattenKey",
    "FlattenValue",
    "HasHeaderKey",
    "HeaderFromKey",
    "HeaderFromValue",
    "HoistFieldKey",
    "HoistFieldValue",
    "InsertFieldKey",
    "InsertFieldValue",
    "InsertHeader",
    "MaskFieldKey",
    "MaskFieldValue",
    "RecordIsTombstone",
    "RegexRouter",
    "ReplaceFieldKey",
    "ReplaceFieldValue",
    "SetSchemaMetadataKey",
    "SetSchemaMetadataValue",
    "TimestampConverterKey",
    "TimestampConverterValue",
    "TimestampRouter",
    "TopicNameMatches",
    "ValueToKey",
]
