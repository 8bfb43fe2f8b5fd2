"""Kafka's command-line tools for people without Kafka's Java scripts.

``sluiceway topics``, ``console-producer``, ``console-consumer``, ``consumer-groups`` and
``configs`` take the flags of ``kafka-topics.sh``, ``kafka-console-producer.sh``,
``kafka-console-consumer.sh``, ``kafka-consumer-groups.sh`` and ``kafka-configs.sh`` and
print what they print. They speak only the Kafka protocol (librdkafka through
confluent-kafka), so they work the same against Sluiceway's broker and Apache Kafka.

Each command module exposes ``main(argv, prog) -> int``; the pure pieces (offset-reset
planning, time formats, line parsing and record formatting, output layouts) live in
their own modules without I/O.
"""
