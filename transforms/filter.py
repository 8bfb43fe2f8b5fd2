"""Filter: drop records (Kafka's ``Filter``, KIP-585).

On its own it drops every record. Its use is with a predicate, which the runtime
evaluates before applying the transformation::

    transforms=dropTombstones
    transforms.dropTombstones.type=org.apache.kafka.connect.transforms.Filter
    transforms.dropTombstones.predicate=isTombstone
    predicates=isTombstone
    predicates.isTombstone.type=org.apache.kafka.connect.transforms.predicates.RecordIsTombstone

drops tombstones only; ``transforms.<name>.negate=true`` keeps the records the
predicate matches and drops the rest. Filter itself has no settings.
"""

from __future__ import annotations

from connect.api import ConfigModel, ConnectRecord, RecordColumns, Transformation


class FilterConfig(ConfigModel):
    """No settings (unknown keys are ignored, as Kafka ignores them)."""


class Filter(Transformation[ConnectRecord]):
    Config = FilterConfig
    aliases = ("org.apache.kafka.connect.transforms.Filter",)

    def apply(self, record: ConnectRecord) -> None:
        return None

    def apply_columns(self, batch: RecordColumns[ConnectRecord]) -> None:
        batch.dropped = list(range(len(batch)))
