"""Durable storage: partition logs made of segments, their indexes, recovery and cleanup.

Kafka's on-disk model: ``<log.dirs>/<topic>-<partition>/`` holds segments named by
their base offset (``00000000000000000000.log``) with a sparse offset index and a
time index beside each. Record batches are stored exactly as producers sent them
(magic v2), with only the base offset and partition leader epoch rewritten.
"""
