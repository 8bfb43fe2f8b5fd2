"""Converter settings read as Kafka's ``ConfigDef`` reads them: booleans, integers with a
minimum and choices, case-insensitive where Kafka is, each refusal naming its key."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from connect.api.errors import ConnectException


def config_bool(configs: Mapping[str, Any], key: str, default: bool) -> bool:
    value = configs.get(key, default)
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in ("true", "false"):
        return value.strip().lower() == "true"
    raise ConnectException(
        f"Invalid value {value} for configuration {key}: Expected value to be either true or false"
    )


def config_int(configs: Mapping[str, Any], key: str, default: int, minimum: int = 0) -> int:
    value = configs.get(key, default)
    try:
        result = value if isinstance(value, int) and not isinstance(value, bool) else int(str(value).strip())
    except ValueError:
        raise ConnectException(
            f"Invalid value {value} for configuration {key}: Not a number of type INT"
        ) from None
    if result < minimum:
        raise ConnectException(
            f"Invalid value {value} for configuration {key}: Value must be at least {minimum}"
        )
    return result


def config_choice(configs: Mapping[str, Any], key: str, default: str, choices: tuple[str, ...]) -> str:
    value = str(configs.get(key, default)).strip()
    for choice in choices:
        if value.lower() == choice.lower():
            return choice
    raise ConnectException(
        f"Invalid value {value} for configuration {key}: String must be one of (case insensitive): "
        + ", ".join(choices)
    )
