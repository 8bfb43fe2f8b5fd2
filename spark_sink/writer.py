"""Writing conformed batches to the table: one Spark job per flush, then the commit.

``TableWriter.prepare`` (on the task's thread) conforms a batch to the table schema;
``TableWriter.write`` (on the task's writer thread) turns it into a DataFrame through
Arrow, has Spark write it into a staging directory, and commits and publishes it per
topic partition through the ``TableLog`` (see there for the protocol).

When a batch holds several topic partitions, Spark writes it partitioned by a hidden
column (``__sluiceway_tp``) as well, so each partition's rows land in files of their
own and every file name can carry one partition's offset range; the column itself is
in the directory names only and is gone once the files are published.
"""

from __future__ import annotations

import logging
import uuid
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from connect.api import ConnectException, SinkRecord
from connect.api.arrow import Batch, conform_rows, merge_schemas
from connect.api.records import TopicPartition
from spark_sink.config import SparkSinkConfig
from spark_sink.hadoop_fs import HadoopFs
from spark_sink.schema_store import SchemaStore
from spark_sink.table_log import STAGING, Manifest, TableLog, data_file_name, is_data_file, spark_extension

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

log = logging.getLogger(__name__)

HIDDEN_TP = "__sluiceway_tp"


@dataclass
class Prepared:
    """A batch conformed to the table: what one flush writes and commits."""

    table: pa.Table
    tps: list[TopicPartition]
    ranges: dict[TopicPartition, tuple[int, int]]
    evolved: bool = False
    id: str = field(default_factory=lambda: uuid.uuid4().hex)
    # Progress of the write, so that a retry resumes where the failed attempt stopped.
    files: dict[int, list[str]] | None = None
    manifests: dict[TopicPartition, Manifest] = field(default_factory=dict)
    committed: dict[TopicPartition, int] = field(default_factory=dict)

    @property
    def rows(self) -> int:
        return int(self.table.num_rows)


def arrow_schema(struct: Any) -> pa.Schema:
    """A Spark ``StructType`` as the Arrow schema batches are conformed to."""
    from pyspark.sql.pandas.types import to_arrow_schema

    # Timestamps are instants; the session's time zone is UTC (spark_sink.session).
    return to_arrow_schema(struct, timezone="UTC")


class TableWriter:
    """The table of one task: its location, schema, commit log and writes."""

    def __init__(self, spark: SparkSession, config: SparkSinkConfig, owner: str) -> None:
        self.spark = spark
        self.config = config
        self.owner = owner
        self.format = config.normalized_format
        self.partition_by = list(config.partition_by)
        self.table_name = config.table_name
        self._catalog_table_exists = False
        location = config.table_path or self._catalog_location(config.table_name or "")
        self.fs = HadoopFs(spark, location)
        self.location = self.fs.root
        self.log = TableLog(self.fs)
        self.schemas = SchemaStore(self.fs)
        if self.schemas.load() is None:
            existing = self._existing_schema()
            if existing is not None:
                self.schemas.evolve(lambda _: existing)

    # -- where the table is --------------------------------------------------------------

    def _catalog_location(self, name: str) -> str:
        if self.spark.catalog.tableExists(name):
            info = {
                str(r[0]).strip(): str(r[1]).strip()
                for r in self.spark.sql(f"DESCRIBE TABLE EXTENDED {name}").collect()
            }
            provider = info.get("Provider", "").lower()
            if provider and provider != self.format:
                raise ConnectException(
                    f"Table {name} is a {provider} table; the connector's format is {self.format}"
                )
            location = info.get("Location")
            if not location:
                raise ConnectException(f"Table {name} has no location Spark reports (a view?)")
            self._catalog_table_exists = True
            return location
        warehouse = str(self.spark.conf.get("spark.sql.warehouse.dir"))
        parts = name.split(".")
        if len(parts) == 1:
            return f"{warehouse}/{parts[0]}"
        return f"{warehouse}/{parts[-2]}.db/{parts[-1]}"

    def _existing_schema(self) -> pa.Schema | None:
        """The schema of data already in the table we did not write (a table we adopt)."""
        if not any(is_data_file(e.name) or "=" in e.name for e in self.fs.list("")):
            return None
        try:
            from pyspark.sql.types import StructType

            if self._catalog_table_exists and self.table_name:
                struct = self.spark.table(self.table_name).schema
            else:
                struct = self.spark.read.format(self.format).load(self.location).schema
            return arrow_schema(StructType([f for f in struct.fields if f.name not in self.partition_by]))
        except Exception as exc:
            raise ConnectException(
                f"Cannot read the schema of the existing table at {self.location}: {exc}"
            ) from exc

    # -- recovery ------------------------------------------------------------------------

    def clean_staging(self) -> None:
        self.log.clean_staging(self.owner)

    def recover(self, tp: TopicPartition) -> int | None:
        return self.log.recover(tp)

    # -- a flush -------------------------------------------------------------------------

    def prepare(self, batch: Batch) -> tuple[Prepared, list[tuple[SinkRecord, str]]]:
        """Conform ``batch`` to the table schema (evolving it when allowed). Returns the
        prepared batch and the records whose values do not fit, with the reason."""
        evolve = self.config.schema_evolution
        incoming = batch.table.schema
        before = self.schemas.schema
        if batch.table.num_columns:
            # Stores a new version only when the batch changes the schema.
            self.schemas.evolve(
                lambda current: merge_schemas(current, incoming, allow_new=evolve or current is None)[0]
            )
        target = self.schemas.schema
        refused: list[tuple[SinkRecord, str]] = []
        if target is None or batch.table.num_rows == 0:
            table = pa.table({})
        else:
            missing = [c for c in self.partition_by if c not in target.names]
            if missing:
                raise ConnectException(
                    f"partition.by names {', '.join(missing)}, which the table does not have "
                    f"(columns: {', '.join(target.names)})"
                )
            table, bad_rows = conform_rows(batch.table, target)
            row_tps = batch.row_tps
            if bad_rows:
                bad = {i for i, _ in bad_rows}
                refused = [(batch.accepted[i], reason) for i, reason in bad_rows]
                row_tps = [t for i, t in enumerate(row_tps) if i not in bad]
            if len(batch.tps) > 1 and table.num_rows:
                table = table.append_column(HIDDEN_TP, pa.array(row_tps, type=pa.int32()))
        evolved = (
            before is not None and self.schemas.schema is not None and not self.schemas.schema.equals(before)
        )
        return Prepared(table, list(batch.tps), dict(batch.ranges), evolved), refused

    def write(self, prepared: Prepared) -> dict[TopicPartition, int]:
        """Write, commit and publish ``prepared``; the last offset committed per partition.

        Safe to call again after it raised: the Spark job is rerun only if it had not
        finished (its partial output discarded), and partitions whose manifest is already
        committed are only published again."""
        if not self.config.is_file_format:
            return self._write_table_format(prepared)
        staging = f"{STAGING}/{self.owner}/{prepared.id}"
        multi = HIDDEN_TP in prepared.table.column_names
        if prepared.files is None:
            try:
                prepared.files = self._stage(prepared, staging, multi) if prepared.rows else {}
            except Exception:
                self.fs.delete(staging, recursive=True)
                raise
        for index, tp in enumerate(prepared.tps):
            if tp in prepared.committed:
                continue
            start, end = prepared.ranges[tp]
            manifest = prepared.manifests.get(tp)
            if manifest is None:
                tp_staging = f"{staging}/{HIDDEN_TP}={index}" if multi else staging
                moves = []
                for seq, rel in enumerate(sorted(prepared.files.get(index, []))):
                    directory, _, name = rel.rpartition("/")
                    final = data_file_name(tp, start, end, seq, spark_extension(name))
                    moves.append((f"{tp_staging}/{rel}", f"{directory}/{final}" if directory else final))
                manifest = Manifest(tp, start, end, tuple(moves), tp_staging if multi else "")
                self.log.commit(manifest)
                prepared.manifests[tp] = manifest
            self.log.publish(manifest)
            self.log.published(manifest)
            prepared.committed[tp] = end
        self.fs.delete(staging, recursive=True)
        if prepared.rows:
            self._refresh_catalog(prepared)
        return dict(prepared.committed)

    def _stage(self, prepared: Prepared, staging: str, multi: bool) -> dict[int, list[str]]:
        """The Spark job: the batch into ``staging``. Returns the data files it wrote
        (relative to the partition's staging directory) by topic partition index."""
        self._ensure_catalog_table(prepared)
        frame = self.spark.createDataFrame(prepared.table)
        parts = ([HIDDEN_TP] if multi else []) + self.partition_by
        writer = frame.write.format(self.format).mode("errorifexists")
        if parts:
            writer = writer.partitionBy(*parts)
        writer.save(f"{self.location}/{staging}")
        files: dict[int, list[str]] = {}
        for entry in self.fs.walk_files(staging):
            if not is_data_file(entry.name):
                continue
            rel = entry.path[len(staging) + 1 :]
            index = 0
            if multi:
                first, _, rel = rel.partition("/")
                index = int(first.split("=", 1)[1])
            files.setdefault(index, []).append(rel)
        return files

    # -- catalog tables ------------------------------------------------------------------

    def _ensure_catalog_table(self, prepared: Prepared) -> None:
        if not self.table_name:
            return
        if not self._catalog_table_exists and not self.spark.catalog.tableExists(self.table_name):
            schema = self._spark_schema()
            partitioned = f" PARTITIONED BY ({', '.join(self.partition_by)})" if self.partition_by else ""
            self.spark.sql(
                f"CREATE TABLE IF NOT EXISTS {self.table_name} ({schema.toDDL()}) USING {self.format}"
                f"{partitioned} LOCATION '{self.location}'"
            )
            self._catalog_table_exists = True
        elif prepared.evolved:
            have = set(self.spark.table(self.table_name).columns)
            new = [f for f in self._spark_schema().fields if f.name not in have]
            if new:
                from pyspark.sql.types import StructType

                self.spark.sql(f"ALTER TABLE {self.table_name} ADD COLUMNS ({StructType(new).toDDL()})")
        self._catalog_table_exists = True

    def _spark_schema(self) -> Any:
        assert self.schemas.schema is not None
        struct = self.spark.createDataFrame(self.schemas.schema.empty_table()).schema
        # Spark lists partition columns last in a partitioned table's schema.
        from pyspark.sql.types import StructType

        rest = [f for f in struct.fields if f.name not in self.partition_by]
        parts = [next(f for f in struct.fields if f.name == p) for p in self.partition_by]
        return StructType(rest + parts)

    def _refresh_catalog(self, prepared: Prepared) -> None:
        if not self.table_name:
            return
        if self.partition_by:
            try:
                self.spark.sql(f"ALTER TABLE {self.table_name} RECOVER PARTITIONS")
            except Exception as exc:  # catalogs that discover partitions by listing refuse this
                log.debug("RECOVER PARTITIONS on %s: %s", self.table_name, exc)
        self.spark.catalog.refreshTable(self.table_name)

    # -- table formats (delta, iceberg, hudi) -------------------------------------------

    def _write_table_format(self, prepared: Prepared) -> dict[TopicPartition, int]:
        """Through the format's own writer, which keeps its own transaction log: at least
        once (a crash between its commit and the consumer offset commit repeats a batch)."""
        if prepared.rows:
            frame = self.spark.createDataFrame(
                prepared.table.drop_columns([HIDDEN_TP])
                if HIDDEN_TP in prepared.table.column_names
                else prepared.table
            )
            writer = frame.write.format(self.format).mode("append")
            if self.partition_by:
                writer = writer.partitionBy(*self.partition_by)
            if self.table_name:
                writer.saveAsTable(self.table_name)
            else:
                writer.save(self.location)
        return {tp: end for tp, (_, end) in prepared.ranges.items()}
