"""Where a worker keeps connector configs, source offsets and statuses: in memory, in a
file (standalone offsets) or, in distributed mode, in compacted Kafka topics."""
