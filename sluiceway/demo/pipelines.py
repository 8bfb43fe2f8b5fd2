"""The demo's two pipelines as connector configs, written as ``.properties`` files in the
data dir so a user can read (and rerun) exactly what the demo runs.

The file pipeline moves text lines (the worker's StringConverter). The bank pipeline is
Avro throughout: the JDBC source writes keys and values with Confluent's AvroConverter,
which registers their schemas in the worker's embedded Schema Registry
(``embedded.schema.registry.listeners``), and every bank sink reads them back through the
AvroConverter. The two file sinks render the Structs they get as JSON lines (a plain-Python
transform through Kafka's JsonConverter), because FileStreamSink itself would write
``Struct{...}`` text that nothing can check."""

from __future__ import annotations

from pathlib import Path

from connect.runtime.properties import PropertiesFile

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "config" / "demo" / "orders.txt"
TOPIC = "demo-orders"
BANK_TOPIC = "demo-bank-transactions"
CONNECTORS = (
    "demo-file-source",
    "demo-file-sink",
    "demo-bank-source",
    "demo-bank-sink",
    "demo-large-transactions",
    "demo-bank-lake",
)
KEY_SUBJECT = f"{BANK_TOPIC}-key"  # TopicNameStrategy's subjects
VALUE_SUBJECT = f"{BANK_TOPIC}-value"


def avro(registry_url: str) -> dict[str, str]:
    """Confluent's AvroConverter for keys and values, on the embedded registry."""
    converter = "io.confluent.connect.avro.AvroConverter"
    return {
        "key.converter": converter,
        "key.converter.schema.registry.url": registry_url,
        "value.converter": converter,
        "value.converter.schema.registry.url": registry_url,
    }


def write_props(path: Path, values: dict[str, str]) -> PropertiesFile:
    path.write_text("".join(f"{k}={v}\n" for k, v in values.items()), encoding="utf-8")
    return PropertiesFile(path, values, {k: i + 1 for i, k in enumerate(values)})


def connectors(data_dir: Path, output: Path, bank: Path, registry_url: str) -> list[PropertiesFile]:
    _avro = avro(registry_url)
    return [
        write_props(
            data_dir / "file-source.properties",
            {
                "name": "demo-file-source",
                "connector.class": "org.apache.kafka.connect.file.FileStreamSourceConnector",
                "tasks.max": "1",
                "file": str(SAMPLE),
                "topic": TOPIC,
            },
        ),
        write_props(
            data_dir / "file-sink.properties",
            {
                "name": "demo-file-sink",
                "connector.class": "org.apache.kafka.connect.file.FileStreamSinkConnector",
                "tasks.max": "1",
                "file": str(output),
                "topics": TOPIC,
            },
        ),
        write_props(
            data_dir / "bank-source.properties",
            {
                "name": "demo-bank-source",
                "connector.class": "io.confluent.connect.jdbc.JdbcSourceConnector",
                "connection.url": f"jdbc:sqlite:{bank}",
                "mode": "timestamp+incrementing",
                "timestamp.column.name": "updated_at",
                "incrementing.column.name": "id",
                "table.whitelist": "transactions",
                "topic.prefix": "demo-bank-",
                "numeric.mapping": "best_fit",
                "poll.interval.ms": "300",
                **_avro,
            },
        ),
        write_props(
            data_dir / "bank-sink.properties",
            {
                "name": "demo-bank-sink",
                "connector.class": "FileStreamSink",
                "file": str(data_dir / "transactions-out.jsonl"),
                "topics": BANK_TOPIC,
                "transforms": "json",
                "transforms.json.type": "sluiceway.demo.bank:as_json_line",
                **_avro,
            },
        ),
        write_props(
            data_dir / "large-transactions.properties",
            {
                "name": "demo-large-transactions",
                "connector.class": "FileStreamSink",
                "file": str(data_dir / "large-transactions.jsonl"),
                "topics": BANK_TOPIC,
                "transforms": "large",
                "transforms.large.type": "sluiceway.demo.bank:large_transactions",
                **_avro,
            },
        ),
        write_props(
            data_dir / "bank-lake.properties",
            {
                "name": "demo-bank-lake",
                "connector.class": "SparkSinkConnector",
                "topics": BANK_TOPIC,
                "table.path": str(data_dir / "bank-lake"),
                "include.kafka.coordinates": "true",
                "flush.interval.ms": "1000",
                "spark.master": "local[2]",
                "spark.conf.spark.log.level": "ERROR",
                "spark.conf.spark.sql.shuffle.partitions": "2",
                **_avro,
            },
        ),
    ]


def worker(data_dir: Path, broker_port: int, rest_port: int, registry_port: int) -> PropertiesFile:
    return write_props(
        data_dir / "worker.properties",
        {
            "bootstrap.servers": f"127.0.0.1:{broker_port}",
            "key.converter": "org.apache.kafka.connect.storage.StringConverter",
            "value.converter": "org.apache.kafka.connect.storage.StringConverter",
            "offset.storage.file.filename": str(data_dir / "offsets.json"),
            "offset.flush.interval.ms": "1000",
            "listeners": f"http://127.0.0.1:{rest_port}",
            "embedded.broker.enable": "true",
            "embedded.broker.log.dirs": str(data_dir / "broker"),
            "embedded.schema.registry.listeners": f"http://127.0.0.1:{registry_port}",
        },
    )
