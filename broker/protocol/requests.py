"""The request entity types each API handler receives: the union of the kio classes of the
versions this broker supports (``SUPPORTED_VERSIONS``), so mypy checks that a handler reads
only fields every version has (``getattr`` with a default for the rest).

Handlers import these under ``TYPE_CHECKING``: the broker never loads this module, and
``tests/broker/test_request_types.py`` keeps it equal to ``SUPPORTED_VERSIONS``.
"""

from __future__ import annotations

from typing import TypeAlias

import kio.schema.add_offsets_to_txn.v0.request
import kio.schema.add_offsets_to_txn.v1.request
import kio.schema.add_offsets_to_txn.v2.request
import kio.schema.add_offsets_to_txn.v3.request
import kio.schema.add_offsets_to_txn.v4.request
import kio.schema.add_partitions_to_txn.v0.request
import kio.schema.add_partitions_to_txn.v1.request
import kio.schema.add_partitions_to_txn.v2.request
import kio.schema.add_partitions_to_txn.v3.request
import kio.schema.add_partitions_to_txn.v4.request
import kio.schema.add_partitions_to_txn.v5.request
import kio.schema.alter_configs.v0.request
import kio.schema.alter_configs.v1.request
import kio.schema.alter_configs.v2.request
import kio.schema.alter_user_scram_credentials.v0.request
import kio.schema.api_versions.v0.request
import kio.schema.api_versions.v1.request
import kio.schema.api_versions.v2.request
import kio.schema.api_versions.v3.request
import kio.schema.api_versions.v4.request
import kio.schema.create_acls.v1.request
import kio.schema.create_acls.v2.request
import kio.schema.create_acls.v3.request
import kio.schema.create_partitions.v0.request
import kio.schema.create_partitions.v1.request
import kio.schema.create_partitions.v2.request
import kio.schema.create_partitions.v3.request
import kio.schema.create_topics.v2.request
import kio.schema.create_topics.v3.request
import kio.schema.create_topics.v4.request
import kio.schema.create_topics.v5.request
import kio.schema.create_topics.v6.request
import kio.schema.create_topics.v7.request
import kio.schema.delete_acls.v1.request
import kio.schema.delete_acls.v2.request
import kio.schema.delete_acls.v3.request
import kio.schema.delete_groups.v0.request
import kio.schema.delete_groups.v1.request
import kio.schema.delete_groups.v2.request
import kio.schema.delete_records.v0.request
import kio.schema.delete_records.v1.request
import kio.schema.delete_records.v2.request
import kio.schema.delete_topics.v1.request
import kio.schema.delete_topics.v2.request
import kio.schema.delete_topics.v3.request
import kio.schema.delete_topics.v4.request
import kio.schema.delete_topics.v5.request
import kio.schema.delete_topics.v6.request
import kio.schema.describe_acls.v1.request
import kio.schema.describe_acls.v2.request
import kio.schema.describe_acls.v3.request
import kio.schema.describe_cluster.v0.request
import kio.schema.describe_cluster.v1.request
import kio.schema.describe_configs.v1.request
import kio.schema.describe_configs.v2.request
import kio.schema.describe_configs.v3.request
import kio.schema.describe_configs.v4.request
import kio.schema.describe_groups.v0.request
import kio.schema.describe_groups.v1.request
import kio.schema.describe_groups.v2.request
import kio.schema.describe_groups.v3.request
import kio.schema.describe_groups.v4.request
import kio.schema.describe_groups.v5.request
import kio.schema.describe_producers.v0.request
import kio.schema.describe_transactions.v0.request
import kio.schema.describe_user_scram_credentials.v0.request
import kio.schema.end_txn.v0.request
import kio.schema.end_txn.v1.request
import kio.schema.end_txn.v2.request
import kio.schema.end_txn.v3.request
import kio.schema.end_txn.v4.request
import kio.schema.fetch.v4.request
import kio.schema.fetch.v5.request
import kio.schema.fetch.v6.request
import kio.schema.fetch.v7.request
import kio.schema.fetch.v8.request
import kio.schema.fetch.v9.request
import kio.schema.fetch.v10.request
import kio.schema.fetch.v11.request
import kio.schema.fetch.v12.request
import kio.schema.find_coordinator.v0.request
import kio.schema.find_coordinator.v1.request
import kio.schema.find_coordinator.v2.request
import kio.schema.find_coordinator.v3.request
import kio.schema.heartbeat.v0.request
import kio.schema.heartbeat.v1.request
import kio.schema.heartbeat.v2.request
import kio.schema.heartbeat.v3.request
import kio.schema.heartbeat.v4.request
import kio.schema.incremental_alter_configs.v0.request
import kio.schema.incremental_alter_configs.v1.request
import kio.schema.init_producer_id.v0.request
import kio.schema.init_producer_id.v1.request
import kio.schema.init_producer_id.v2.request
import kio.schema.init_producer_id.v3.request
import kio.schema.init_producer_id.v4.request
import kio.schema.init_producer_id.v5.request
import kio.schema.join_group.v0.request
import kio.schema.join_group.v1.request
import kio.schema.join_group.v2.request
import kio.schema.join_group.v3.request
import kio.schema.join_group.v4.request
import kio.schema.join_group.v5.request
import kio.schema.join_group.v6.request
import kio.schema.join_group.v7.request
import kio.schema.leave_group.v0.request
import kio.schema.leave_group.v1.request
import kio.schema.leave_group.v2.request
import kio.schema.leave_group.v3.request
import kio.schema.leave_group.v4.request
import kio.schema.leave_group.v5.request
import kio.schema.list_groups.v0.request
import kio.schema.list_groups.v1.request
import kio.schema.list_groups.v2.request
import kio.schema.list_groups.v3.request
import kio.schema.list_groups.v4.request
import kio.schema.list_offsets.v1.request
import kio.schema.list_offsets.v2.request
import kio.schema.list_offsets.v3.request
import kio.schema.list_offsets.v4.request
import kio.schema.list_offsets.v5.request
import kio.schema.list_offsets.v6.request
import kio.schema.list_offsets.v7.request
import kio.schema.list_transactions.v0.request
import kio.schema.list_transactions.v1.request
import kio.schema.metadata.v0.request
import kio.schema.metadata.v1.request
import kio.schema.metadata.v2.request
import kio.schema.metadata.v3.request
import kio.schema.metadata.v4.request
import kio.schema.metadata.v5.request
import kio.schema.metadata.v6.request
import kio.schema.metadata.v7.request
import kio.schema.metadata.v8.request
import kio.schema.metadata.v9.request
import kio.schema.metadata.v10.request
import kio.schema.metadata.v11.request
import kio.schema.metadata.v12.request
import kio.schema.offset_commit.v2.request
import kio.schema.offset_commit.v3.request
import kio.schema.offset_commit.v4.request
import kio.schema.offset_commit.v5.request
import kio.schema.offset_commit.v6.request
import kio.schema.offset_commit.v7.request
import kio.schema.offset_commit.v8.request
import kio.schema.offset_commit.v9.request
import kio.schema.offset_fetch.v1.request
import kio.schema.offset_fetch.v2.request
import kio.schema.offset_fetch.v3.request
import kio.schema.offset_fetch.v4.request
import kio.schema.offset_fetch.v5.request
import kio.schema.offset_fetch.v6.request
import kio.schema.offset_fetch.v7.request
import kio.schema.offset_fetch.v8.request
import kio.schema.offset_fetch.v9.request
import kio.schema.offset_for_leader_epoch.v2.request
import kio.schema.offset_for_leader_epoch.v3.request
import kio.schema.offset_for_leader_epoch.v4.request
import kio.schema.produce.v3.request
import kio.schema.produce.v4.request
import kio.schema.produce.v5.request
import kio.schema.produce.v6.request
import kio.schema.produce.v7.request
import kio.schema.produce.v8.request
import kio.schema.produce.v9.request
import kio.schema.produce.v10.request
import kio.schema.sasl_authenticate.v0.request
import kio.schema.sasl_authenticate.v1.request
import kio.schema.sasl_authenticate.v2.request
import kio.schema.sasl_handshake.v1.request
import kio.schema.sync_group.v0.request
import kio.schema.sync_group.v1.request
import kio.schema.sync_group.v2.request
import kio.schema.sync_group.v3.request
import kio.schema.sync_group.v4.request
import kio.schema.sync_group.v5.request
import kio.schema.txn_offset_commit.v0.request
import kio.schema.txn_offset_commit.v1.request
import kio.schema.txn_offset_commit.v2.request
import kio.schema.txn_offset_commit.v3.request
import kio.schema.txn_offset_commit.v4.request
import kio.schema.write_txn_markers.v1.request

__all__ = [
    "BY_API_KEY",
    "AddOffsetsToTxnRequest",
    "AddPartitionsToTxnRequest",
    "AlterConfigsRequest",
    "AlterUserScramCredentialsRequest",
    "ApiVersionsRequest",
    "CreateAclsRequest",
    "CreatePartitionsRequest",
    "CreateTopicsRequest",
    "DeleteAclsRequest",
    "DeleteGroupsRequest",
    "DeleteRecordsRequest",
    "DeleteTopicsRequest",
    "DescribeAclsRequest",
    "DescribeClusterRequest",
    "DescribeConfigsRequest",
    "DescribeGroupsRequest",
    "DescribeProducersRequest",
    "DescribeTransactionsRequest",
    "DescribeUserScramCredentialsRequest",
    "EndTxnRequest",
    "FetchRequest",
    "FindCoordinatorRequest",
    "HeartbeatRequest",
    "IncrementalAlterConfigsRequest",
    "InitProducerIdRequest",
    "JoinGroupRequest",
    "LeaveGroupRequest",
    "ListGroupsRequest",
    "ListOffsetsRequest",
    "ListTransactionsRequest",
    "MetadataRequest",
    "OffsetCommitRequest",
    "OffsetFetchRequest",
    "OffsetForLeaderEpochRequest",
    "ProduceRequest",
    "SaslAuthenticateRequest",
    "SaslHandshakeRequest",
    "SyncGroupRequest",
    "TxnOffsetCommitRequest",
    "WriteTxnMarkersRequest",
]


ProduceRequest: TypeAlias = (
    kio.schema.produce.v3.request.ProduceRequest
    | kio.schema.produce.v4.request.ProduceRequest
    | kio.schema.produce.v5.request.ProduceRequest
    | kio.schema.produce.v6.request.ProduceRequest
    | kio.schema.produce.v7.request.ProduceRequest
    | kio.schema.produce.v8.request.ProduceRequest
    | kio.schema.produce.v9.request.ProduceRequest
    | kio.schema.produce.v10.request.ProduceRequest
)

FetchRequest: TypeAlias = (
    kio.schema.fetch.v4.request.FetchRequest
    | kio.schema.fetch.v5.request.FetchRequest
    | kio.schema.fetch.v6.request.FetchRequest
    | kio.schema.fetch.v7.request.FetchRequest
    | kio.schema.fetch.v8.request.FetchRequest
    | kio.schema.fetch.v9.request.FetchRequest
    | kio.schema.fetch.v10.request.FetchRequest
    | kio.schema.fetch.v11.request.FetchRequest
    | kio.schema.fetch.v12.request.FetchRequest
)

ListOffsetsRequest: TypeAlias = (
    kio.schema.list_offsets.v1.request.ListOffsetsRequest
    | kio.schema.list_offsets.v2.request.ListOffsetsRequest
    | kio.schema.list_offsets.v3.request.ListOffsetsRequest
    | kio.schema.list_offsets.v4.request.ListOffsetsRequest
    | kio.schema.list_offsets.v5.request.ListOffsetsRequest
    | kio.schema.list_offsets.v6.request.ListOffsetsRequest
    | kio.schema.list_offsets.v7.request.ListOffsetsRequest
)

MetadataRequest: TypeAlias = (
    kio.schema.metadata.v0.request.MetadataRequest
    | kio.schema.metadata.v1.request.MetadataRequest
    | kio.schema.metadata.v2.request.MetadataRequest
    | kio.schema.metadata.v3.request.MetadataRequest
    | kio.schema.metadata.v4.request.MetadataRequest
    | kio.schema.metadata.v5.request.MetadataRequest
    | kio.schema.metadata.v6.request.MetadataRequest
    | kio.schema.metadata.v7.request.MetadataRequest
    | kio.schema.metadata.v8.request.MetadataRequest
    | kio.schema.metadata.v9.request.MetadataRequest
    | kio.schema.metadata.v10.request.MetadataRequest
    | kio.schema.metadata.v11.request.MetadataRequest
    | kio.schema.metadata.v12.request.MetadataRequest
)

OffsetCommitRequest: TypeAlias = (
    kio.schema.offset_commit.v2.request.OffsetCommitRequest
    | kio.schema.offset_commit.v3.request.OffsetCommitRequest
    | kio.schema.offset_commit.v4.request.OffsetCommitRequest
    | kio.schema.offset_commit.v5.request.OffsetCommitRequest
    | kio.schema.offset_commit.v6.request.OffsetCommitRequest
    | kio.schema.offset_commit.v7.request.OffsetCommitRequest
    | kio.schema.offset_commit.v8.request.OffsetCommitRequest
    | kio.schema.offset_commit.v9.request.OffsetCommitRequest
)

OffsetFetchRequest: TypeAlias = (
    kio.schema.offset_fetch.v1.request.OffsetFetchRequest
    | kio.schema.offset_fetch.v2.request.OffsetFetchRequest
    | kio.schema.offset_fetch.v3.request.OffsetFetchRequest
    | kio.schema.offset_fetch.v4.request.OffsetFetchRequest
    | kio.schema.offset_fetch.v5.request.OffsetFetchRequest
    | kio.schema.offset_fetch.v6.request.OffsetFetchRequest
    | kio.schema.offset_fetch.v7.request.OffsetFetchRequest
    | kio.schema.offset_fetch.v8.request.OffsetFetchRequest
    | kio.schema.offset_fetch.v9.request.OffsetFetchRequest
)

FindCoordinatorRequest: TypeAlias = (
    kio.schema.find_coordinator.v0.request.FindCoordinatorRequest
    | kio.schema.find_coordinator.v1.request.FindCoordinatorRequest
    | kio.schema.find_coordinator.v2.request.FindCoordinatorRequest
    | kio.schema.find_coordinator.v3.request.FindCoordinatorRequest
)

JoinGroupRequest: TypeAlias = (
    kio.schema.join_group.v0.request.JoinGroupRequest
    | kio.schema.join_group.v1.request.JoinGroupRequest
    | kio.schema.join_group.v2.request.JoinGroupRequest
    | kio.schema.join_group.v3.request.JoinGroupRequest
    | kio.schema.join_group.v4.request.JoinGroupRequest
    | kio.schema.join_group.v5.request.JoinGroupRequest
    | kio.schema.join_group.v6.request.JoinGroupRequest
    | kio.schema.join_group.v7.request.JoinGroupRequest
)

HeartbeatRequest: TypeAlias = (
    kio.schema.heartbeat.v0.request.HeartbeatRequest
    | kio.schema.heartbeat.v1.request.HeartbeatRequest
    | kio.schema.heartbeat.v2.request.HeartbeatRequest
    | kio.schema.heartbeat.v3.request.HeartbeatRequest
    | kio.schema.heartbeat.v4.request.HeartbeatRequest
)

LeaveGroupRequest: TypeAlias = (
    kio.schema.leave_group.v0.request.LeaveGroupRequest
    | kio.schema.leave_group.v1.request.LeaveGroupRequest
    | kio.schema.leave_group.v2.request.LeaveGroupRequest
    | kio.schema.leave_group.v3.request.LeaveGroupRequest
    | kio.schema.leave_group.v4.request.LeaveGroupRequest
    | kio.schema.leave_group.v5.request.LeaveGroupRequest
)

SyncGroupRequest: TypeAlias = (
    kio.schema.sync_group.v0.request.SyncGroupRequest
    | kio.schema.sync_group.v1.request.SyncGroupRequest
    | kio.schema.sync_group.v2.request.SyncGroupRequest
    | kio.schema.sync_group.v3.request.SyncGroupRequest
    | kio.schema.sync_group.v4.request.SyncGroupRequest
    | kio.schema.sync_group.v5.request.SyncGroupRequest
)

DescribeGroupsRequest: TypeAlias = (
    kio.schema.describe_groups.v0.request.DescribeGroupsRequest
    | kio.schema.describe_groups.v1.request.DescribeGroupsRequest
    | kio.schema.describe_groups.v2.request.DescribeGroupsRequest
    | kio.schema.describe_groups.v3.request.DescribeGroupsRequest
    | kio.schema.describe_groups.v4.request.DescribeGroupsRequest
    | kio.schema.describe_groups.v5.request.DescribeGroupsRequest
)

ListGroupsRequest: TypeAlias = (
    kio.schema.list_groups.v0.request.ListGroupsRequest
    | kio.schema.list_groups.v1.request.ListGroupsRequest
    | kio.schema.list_groups.v2.request.ListGroupsRequest
    | kio.schema.list_groups.v3.request.ListGroupsRequest
    | kio.schema.list_groups.v4.request.ListGroupsRequest
)

SaslHandshakeRequest: TypeAlias = kio.schema.sasl_handshake.v1.request.SaslHandshakeRequest

ApiVersionsRequest: TypeAlias = (
    kio.schema.api_versions.v0.request.ApiVersionsRequest
    | kio.schema.api_versions.v1.request.ApiVersionsRequest
    | kio.schema.api_versions.v2.request.ApiVersionsRequest
    | kio.schema.api_versions.v3.request.ApiVersionsRequest
    | kio.schema.api_versions.v4.request.ApiVersionsRequest
)

CreateTopicsRequest: TypeAlias = (
    kio.schema.create_topics.v2.request.CreateTopicsRequest
    | kio.schema.create_topics.v3.request.CreateTopicsRequest
    | kio.schema.create_topics.v4.request.CreateTopicsRequest
    | kio.schema.create_topics.v5.request.CreateTopicsRequest
    | kio.schema.create_topics.v6.request.CreateTopicsRequest
    | kio.schema.create_topics.v7.request.CreateTopicsRequest
)

DeleteTopicsRequest: TypeAlias = (
    kio.schema.delete_topics.v1.request.DeleteTopicsRequest
    | kio.schema.delete_topics.v2.request.DeleteTopicsRequest
    | kio.schema.delete_topics.v3.request.DeleteTopicsRequest
    | kio.schema.delete_topics.v4.request.DeleteTopicsRequest
    | kio.schema.delete_topics.v5.request.DeleteTopicsRequest
    | kio.schema.delete_topics.v6.request.DeleteTopicsRequest
)

DeleteRecordsRequest: TypeAlias = (
    kio.schema.delete_records.v0.request.DeleteRecordsRequest
    | kio.schema.delete_records.v1.request.DeleteRecordsRequest
    | kio.schema.delete_records.v2.request.DeleteRecordsRequest
)

InitProducerIdRequest: TypeAlias = (
    kio.schema.init_producer_id.v0.request.InitProducerIdRequest
    | kio.schema.init_producer_id.v1.request.InitProducerIdRequest
    | kio.schema.init_producer_id.v2.request.InitProducerIdRequest
    | kio.schema.init_producer_id.v3.request.InitProducerIdRequest
    | kio.schema.init_producer_id.v4.request.InitProducerIdRequest
    | kio.schema.init_producer_id.v5.request.InitProducerIdRequest
)

OffsetForLeaderEpochRequest: TypeAlias = (
    kio.schema.offset_for_leader_epoch.v2.request.OffsetForLeaderEpochRequest
    | kio.schema.offset_for_leader_epoch.v3.request.OffsetForLeaderEpochRequest
    | kio.schema.offset_for_leader_epoch.v4.request.OffsetForLeaderEpochRequest
)

DescribeAclsRequest: TypeAlias = (
    kio.schema.describe_acls.v1.request.DescribeAclsRequest
    | kio.schema.describe_acls.v2.request.DescribeAclsRequest
    | kio.schema.describe_acls.v3.request.DescribeAclsRequest
)

CreateAclsRequest: TypeAlias = (
    kio.schema.create_acls.v1.request.CreateAclsRequest
    | kio.schema.create_acls.v2.request.CreateAclsRequest
    | kio.schema.create_acls.v3.request.CreateAclsRequest
)

DeleteAclsRequest: TypeAlias = (
    kio.schema.delete_acls.v1.request.DeleteAclsRequest
    | kio.schema.delete_acls.v2.request.DeleteAclsRequest
    | kio.schema.delete_acls.v3.request.DeleteAclsRequest
)

DescribeConfigsRequest: TypeAlias = (
    kio.schema.describe_configs.v1.request.DescribeConfigsRequest
    | kio.schema.describe_configs.v2.request.DescribeConfigsRequest
    | kio.schema.describe_configs.v3.request.DescribeConfigsRequest
    | kio.schema.describe_configs.v4.request.DescribeConfigsRequest
)

AlterConfigsRequest: TypeAlias = (
    kio.schema.alter_configs.v0.request.AlterConfigsRequest
    | kio.schema.alter_configs.v1.request.AlterConfigsRequest
    | kio.schema.alter_configs.v2.request.AlterConfigsRequest
)

SaslAuthenticateRequest: TypeAlias = (
    kio.schema.sasl_authenticate.v0.request.SaslAuthenticateRequest
    | kio.schema.sasl_authenticate.v1.request.SaslAuthenticateRequest
    | kio.schema.sasl_authenticate.v2.request.SaslAuthenticateRequest
)

CreatePartitionsRequest: TypeAlias = (
    kio.schema.create_partitions.v0.request.CreatePartitionsRequest
    | kio.schema.create_partitions.v1.request.CreatePartitionsRequest
    | kio.schema.create_partitions.v2.request.CreatePartitionsRequest
    | kio.schema.create_partitions.v3.request.CreatePartitionsRequest
)

DeleteGroupsRequest: TypeAlias = (
    kio.schema.delete_groups.v0.request.DeleteGroupsRequest
    | kio.schema.delete_groups.v1.request.DeleteGroupsRequest
    | kio.schema.delete_groups.v2.request.DeleteGroupsRequest
)

IncrementalAlterConfigsRequest: TypeAlias = (
    kio.schema.incremental_alter_configs.v0.request.IncrementalAlterConfigsRequest
    | kio.schema.incremental_alter_configs.v1.request.IncrementalAlterConfigsRequest
)

DescribeUserScramCredentialsRequest: TypeAlias = (
    kio.schema.describe_user_scram_credentials.v0.request.DescribeUserScramCredentialsRequest
)

AlterUserScramCredentialsRequest: TypeAlias = (
    kio.schema.alter_user_scram_credentials.v0.request.AlterUserScramCredentialsRequest
)

DescribeClusterRequest: TypeAlias = (
    kio.schema.describe_cluster.v0.request.DescribeClusterRequest
    | kio.schema.describe_cluster.v1.request.DescribeClusterRequest
)

AddPartitionsToTxnRequest: TypeAlias = (
    kio.schema.add_partitions_to_txn.v0.request.AddPartitionsToTxnRequest
    | kio.schema.add_partitions_to_txn.v1.request.AddPartitionsToTxnRequest
    | kio.schema.add_partitions_to_txn.v2.request.AddPartitionsToTxnRequest
    | kio.schema.add_partitions_to_txn.v3.request.AddPartitionsToTxnRequest
    | kio.schema.add_partitions_to_txn.v4.request.AddPartitionsToTxnRequest
    | kio.schema.add_partitions_to_txn.v5.request.AddPartitionsToTxnRequest
)

AddOffsetsToTxnRequest: TypeAlias = (
    kio.schema.add_offsets_to_txn.v0.request.AddOffsetsToTxnRequest
    | kio.schema.add_offsets_to_txn.v1.request.AddOffsetsToTxnRequest
    | kio.schema.add_offsets_to_txn.v2.request.AddOffsetsToTxnRequest
    | kio.schema.add_offsets_to_txn.v3.request.AddOffsetsToTxnRequest
    | kio.schema.add_offsets_to_txn.v4.request.AddOffsetsToTxnRequest
)

EndTxnRequest: TypeAlias = (
    kio.schema.end_txn.v0.request.EndTxnRequest
    | kio.schema.end_txn.v1.request.EndTxnRequest
    | kio.schema.end_txn.v2.request.EndTxnRequest
    | kio.schema.end_txn.v3.request.EndTxnRequest
    | kio.schema.end_txn.v4.request.EndTxnRequest
)

WriteTxnMarkersRequest: TypeAlias = kio.schema.write_txn_markers.v1.request.WriteTxnMarkersRequest

TxnOffsetCommitRequest: TypeAlias = (
    kio.schema.txn_offset_commit.v0.request.TxnOffsetCommitRequest
    | kio.schema.txn_offset_commit.v1.request.TxnOffsetCommitRequest
    | kio.schema.txn_offset_commit.v2.request.TxnOffsetCommitRequest
    | kio.schema.txn_offset_commit.v3.request.TxnOffsetCommitRequest
    | kio.schema.txn_offset_commit.v4.request.TxnOffsetCommitRequest
)

DescribeTransactionsRequest: TypeAlias = (
    kio.schema.describe_transactions.v0.request.DescribeTransactionsRequest
)

ListTransactionsRequest: TypeAlias = (
    kio.schema.list_transactions.v0.request.ListTransactionsRequest
    | kio.schema.list_transactions.v1.request.ListTransactionsRequest
)

DescribeProducersRequest: TypeAlias = kio.schema.describe_producers.v0.request.DescribeProducersRequest

BY_API_KEY: dict[int, object] = {
    0: ProduceRequest,  # PRODUCE
    1: FetchRequest,  # FETCH
    2: ListOffsetsRequest,  # LIST_OFFSETS
    3: MetadataRequest,  # METADATA
    8: OffsetCommitRequest,  # OFFSET_COMMIT
    9: OffsetFetchRequest,  # OFFSET_FETCH
    10: FindCoordinatorRequest,  # FIND_COORDINATOR
    11: JoinGroupRequest,  # JOIN_GROUP
    12: HeartbeatRequest,  # HEARTBEAT
    13: LeaveGroupRequest,  # LEAVE_GROUP
    14: SyncGroupRequest,  # SYNC_GROUP
    15: DescribeGroupsRequest,  # DESCRIBE_GROUPS
    16: ListGroupsRequest,  # LIST_GROUPS
    17: SaslHandshakeRequest,  # SASL_HANDSHAKE
    18: ApiVersionsRequest,  # API_VERSIONS
    19: CreateTopicsRequest,  # CREATE_TOPICS
    20: DeleteTopicsRequest,  # DELETE_TOPICS
    21: DeleteRecordsRequest,  # DELETE_RECORDS
    22: InitProducerIdRequest,  # INIT_PRODUCER_ID
    23: OffsetForLeaderEpochRequest,  # OFFSET_FOR_LEADER_EPOCH
    29: DescribeAclsRequest,  # DESCRIBE_ACLS
    30: CreateAclsRequest,  # CREATE_ACLS
    31: DeleteAclsRequest,  # DELETE_ACLS
    32: DescribeConfigsRequest,  # DESCRIBE_CONFIGS
    33: AlterConfigsRequest,  # ALTER_CONFIGS
    36: SaslAuthenticateRequest,  # SASL_AUTHENTICATE
    37: CreatePartitionsRequest,  # CREATE_PARTITIONS
    42: DeleteGroupsRequest,  # DELETE_GROUPS
    44: IncrementalAlterConfigsRequest,  # INCREMENTAL_ALTER_CONFIGS
    50: DescribeUserScramCredentialsRequest,  # DESCRIBE_USER_SCRAM_CREDENTIALS
    51: AlterUserScramCredentialsRequest,  # ALTER_USER_SCRAM_CREDENTIALS
    60: DescribeClusterRequest,  # DESCRIBE_CLUSTER
    24: AddPartitionsToTxnRequest,  # ADD_PARTITIONS_TO_TXN
    25: AddOffsetsToTxnRequest,  # ADD_OFFSETS_TO_TXN
    26: EndTxnRequest,  # END_TXN
    27: WriteTxnMarkersRequest,  # WRITE_TXN_MARKERS
    65: DescribeTransactionsRequest,  # DESCRIBE_TRANSACTIONS
    66: ListTransactionsRequest,  # LIST_TRANSACTIONS
    28: TxnOffsetCommitRequest,  # TXN_OFFSET_COMMIT
    61: DescribeProducersRequest,  # DESCRIBE_PRODUCERS
}
