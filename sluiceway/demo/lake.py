"""The demo's Spark table: read cheaply while waiting, queried with Spark SQL at the end."""

from __future__ import annotations

from pathlib import Path

from rich.table import Table

# The latest state of every transaction (the table holds every change, in offset order),
# totalled per account.
TOTALS_SQL = """
WITH latest AS (
    SELECT *, row_number() OVER (PARTITION BY id ORDER BY _offset DESC) AS newest FROM bank_lake
)
SELECT account_id,
       count(*) AS transactions,
       round(sum(CASE WHEN status = 'settled' THEN amount ELSE 0 END), 2) AS settled,
       round(sum(CASE WHEN status = 'pending' THEN amount ELSE 0 END), 2) AS pending
FROM latest WHERE newest = 1
GROUP BY account_id ORDER BY account_id
"""


def lake_rows(lake: Path) -> tuple[tuple[int, str, int], ...]:
    """(id, status, _offset) of every row the Spark sink has published.

    Read with pyarrow rather than a Spark job: it is polled every second while the sink's
    own Spark jobs share the machine's cores. The sink stages files under ``_sluiceway``
    and publishes them by rename, and dataset discovery skips ``_``/``.`` names, so only
    whole, committed files are read."""
    import pyarrow.parquet as pq

    if not any(lake.glob("*.parquet")):
        return ()
    try:
        table = pq.read_table(lake, columns=["id", "status", "_offset"])
    except (OSError, ValueError):  # a file published between listing and reading: next time
        return ()
    return tuple(
        (int(i), str(s), int(o))
        for i, s, o in zip(
            table.column("id").to_pylist(),
            table.column("status").to_pylist(),
            table.column("_offset").to_pylist(),
            strict=True,
        )
    )


def totals(lake: Path) -> Table:
    """Spark SQL over the table, through the worker's SparkSession (the sink's)."""
    from pyspark.sql import SparkSession

    spark = SparkSession.getActiveSession() or SparkSession.builder.getOrCreate()
    spark.read.parquet(str(lake)).createOrReplaceTempView("bank_lake")
    t = Table(title=f"Spark SQL over {lake.name}: totals per account", title_justify="left")
    for column in ("account", "transactions", "settled", "pending"):
        t.add_column(column, justify="right")
    for row in spark.sql(TOTALS_SQL).collect():
        t.add_row(*(str(v) for v in row))
    return t
