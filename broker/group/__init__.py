"""Classic group coordination (JoinGroup/SyncGroup/Heartbeat/LeaveGroup) and committed offsets.

Agnostic of the protocol type: consumer groups and Kafka Connect worker groups
(``protocol_type="connect"``) run through the same state machine, whose member
metadata and assignments are opaque bytes here.
"""
