"""One module per Kafka API; ``HANDLERS`` maps API keys to their coroutine."""

from __future__ import annotations

from broker.broker import Handler
from broker.handlers import (
    api_versions,
    configs,
    create_partitions,
    create_topics,
    delete_groups,
    delete_records,
    delete_topics,
    describe_cluster,
    describe_groups,
    fetch,
    find_coordinator,
    heartbeat,
    init_producer_id,
    join_group,
    leave_group,
    list_groups,
    list_offsets,
    metadata,
    offset_commit,
    offset_fetch,
    offset_for_leader_epoch,
    produce,
    sync_group,
)
from broker.protocol.versions import ApiKey

HANDLERS: dict[int, Handler] = {
    ApiKey.PRODUCE: produce.handle,
    ApiKey.FETCH: fetch.handle,
    ApiKey.LIST_OFFSETS: list_offsets.handle,
    ApiKey.METADATA: metadata.handle,
    ApiKey.OFFSET_COMMIT: offset_commit.handle,
    ApiKey.OFFSET_FETCH: offset_fetch.handle,
    ApiKey.FIND_COORDINATOR: find_coordinator.handle,
    ApiKey.JOIN_GROUP: join_group.handle,
    ApiKey.HEARTBEAT: heartbeat.handle,
    ApiKey.LEAVE_GROUP: leave_group.handle,
    ApiKey.SYNC_GROUP: sync_group.handle,
    ApiKey.DESCRIBE_GROUPS: describe_groups.handle,
    ApiKey.LIST_GROUPS: list_groups.handle,
    ApiKey.API_VERSIONS: api_versions.handle,
    ApiKey.CREATE_TOPICS: create_topics.handle,
    ApiKey.DELETE_TOPICS: delete_topics.handle,
    ApiKey.DELETE_RECORDS: delete_records.handle,
    ApiKey.INIT_PRODUCER_ID: init_producer_id.handle,
    ApiKey.OFFSET_FOR_LEADER_EPOCH: offset_for_leader_epoch.handle,
    ApiKey.DESCRIBE_CONFIGS: configs.describe,
    ApiKey.ALTER_CONFIGS: configs.alter,
    ApiKey.CREATE_PARTITIONS: create_partitions.handle,
    ApiKey.DELETE_GROUPS: delete_groups.handle,
    ApiKey.INCREMENTAL_ALTER_CONFIGS: configs.incremental_alter,
    ApiKey.DESCRIBE_CLUSTER: describe_cluster.handle,
}

__all__ = ["HANDLERS"]
