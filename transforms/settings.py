"""Config pieces the transformations share: Kafka's ``replace.null.with.default`` key and
its list checks, with Kafka's messages.

Every check lives in the transformation's config model (a field validator or
``problems``), so ``PUT /connector-plugins/{p}/config/validate`` and connector
creation refuse a bad setting with its key named, before any record is seen.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BeforeValidator

from connect.api import Field, importance

REPLACE_NULL_WITH_DEFAULT = "replace.null.with.default"


def replace_null_with_default() -> Any:
    """The ``replace.null.with.default`` field (KIP-1040), for the models that have it.

    One difference from Kafka: with ``false``, a null in a *required* field that has a
    default is kept (our data API accepts it, the default standing in); Kafka's Struct
    refuses it, so there the record fails."""
    return Field(
        True,
        alias=REPLACE_NULL_WITH_DEFAULT,
        description="Whether to replace fields that have a default value and that are null to the default "
        "value. When set to true, the default value is used, otherwise null is used.",
        json_schema_extra=importance("MEDIUM", kafka_type="BOOLEAN"),
    )


def check_names(key: str, values: list[str], *, allow_empty: bool = False) -> list[str]:
    """Kafka 4's list rule for field and header names: no duplicates, no empty names, and
    (unless ``allow_empty``) at least one. Raises ValueError with Kafka's message."""
    if not values and not allow_empty:
        raise ValueError(
            f"Configuration '{key}' must not be empty. Valid values include: any non-empty value"
        )
    if any(not v for v in values):
        raise ValueError(f"Configuration '{key}' values must not be empty.")
    if len(set(values)) != len(values):
        raise ValueError(f"Configuration '{key}' values must not be duplicated.")
    return values


def split_list(value: Any) -> Any:
    """Kafka's LIST parsing: a string splits on commas with the items trimmed, keeping empty
    items (``a,,b`` has an empty middle item) so that the checks can refuse them."""
    if isinstance(value, str):
        text = value.strip()
        return [] if not text else [item.strip() for item in text.split(",")]
    return value


NameList = Annotated[list[str], BeforeValidator(split_list)]
"""A LIST of names read as Kafka reads it (empty items kept, for ``check_names`` to refuse)."""
