"""The durable ACL set: one JSON file in the broker's metadata directory, replaced atomically.

ACLs change rarely (an admin runs kafka-acls), so each change rewrites the whole
file with write-to-temp, fsync, rename, fsync of the directory, like the topic
metadata snapshot: a crash leaves either the old or the new set, never a mix.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from typing import Any, Final

import orjson

from broker.authorizer.acl import (
    AccessControlEntry,
    AclBinding,
    Operation,
    PatternType,
    Permission,
    ResourcePattern,
    ResourceType,
)
from broker.storage.durable_file import replace_durably


class AclStoreError(Exception):
    """The ACL file cannot be read; the message names the file and the problem."""


class AclStore:
    FILE: Final = "__acls.json"

    def __init__(self, data_dir: str) -> None:
        self.path = os.path.join(data_dir, self.FILE)

    def load(self) -> set[AclBinding]:
        try:
            with open(self.path, "rb") as f:
                data = orjson.loads(f.read())
        except FileNotFoundError:
            return set()
        except (OSError, orjson.JSONDecodeError) as exc:
            raise AclStoreError(f"cannot read the ACL file {self.path}: {exc}") from None
        out = set()
        for i, item in enumerate(data.get("acls", [])):
            try:
                out.add(_from_json(item))
            except (KeyError, TypeError) as exc:
                raise AclStoreError(f"{self.path}: ACL #{i} is malformed: {exc!r}") from None
        return out

    def save(self, acls: Iterable[AclBinding]) -> None:
        payload = orjson.dumps(
            {"version": 1, "acls": sorted((_to_json(a) for a in acls), key=_sort_key)},
            option=orjson.OPT_INDENT_2,
        )
        replace_durably(self.path, payload)


def _to_json(a: AclBinding) -> dict[str, str]:
    return {
        "resource_type": a.pattern.resource_type.name,
        "name": a.pattern.name,
        "pattern_type": a.pattern.pattern_type.name,
        "principal": a.entry.principal,
        "host": a.entry.host,
        "operation": a.entry.operation.name,
        "permission": a.entry.permission.name,
    }


def _sort_key(d: dict[str, str]) -> tuple[str, ...]:
    return tuple(d.values())


def _from_json(d: dict[str, Any]) -> AclBinding:
    return AclBinding(
        ResourcePattern(ResourceType[d["resource_type"]], str(d["name"]), PatternType[d["pattern_type"]]),
        AccessControlEntry(
            str(d["principal"]), str(d["host"]), Operation[d["operation"]], Permission[d["permission"]]
        ),
    )
