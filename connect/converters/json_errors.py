"""What goes wrong converting between Connect data and JSON, and where it went wrong: a
``JsonProblem`` collects the path (``.address.city``) while it propagates out of nested
writers and readers, and the converter turns it into Kafka's ``DataException`` message."""

from __future__ import annotations

import decimal
from collections.abc import Callable, Iterable
from typing import Any


class JsonProblem(Exception):
    """Internal: a conversion problem; containers add path segments while it propagates."""

    def __init__(self, problem: str) -> None:
        super().__init__(problem)
        self.problem = problem
        self.segments: list[str] = []

    def message(self) -> str:
        path = "".join(reversed(self.segments)).lstrip(".")
        return f'{self.problem} (at "{path}")' if path else self.problem


class NeedExactNumbers(Exception):
    """Internal: a Decimal payload was parsed as a binary float; re-parse with exact decimals."""


def json_type(v: Any) -> str:
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "boolean"
    if isinstance(v, (int, float, decimal.Decimal)):
        return "number"
    if isinstance(v, str):
        return "string"
    if isinstance(v, list):
        return "array"
    if isinstance(v, dict):
        return "object"
    return type(v).__name__


def convert_items(convert: Callable[[Any], Any], items: Iterable[Any]) -> list[Any]:
    """``convert`` of each item; a problem with one says which (``[3]``) in its path."""
    out = []
    i = 0
    try:
        for i, x in enumerate(items):  # noqa: B007 - i is read in the handler
            out.append(convert(x))
    except JsonProblem as e:
        e.segments.append(f"[{i}]")
        raise
    return out
