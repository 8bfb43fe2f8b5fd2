"""One real local Spark session for the whole test run (a JVM takes seconds to start).

It is the same session a Spark sink task running in this process would use
(``spark_sink.session.shared_session``), so in-process workers and the tests share it.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from pyspark.sql import SparkSession

from spark_sink.session import shared_session

TEST_MASTER = "local[2]"
TEST_CONF = {
    # Small tests: two shuffle partitions instead of 200 keeps each query quick.
    "spark.sql.shuffle.partitions": "2",
    "spark.default.parallelism": "2",
}


@pytest.fixture(scope="session")
def spark() -> Iterator[SparkSession]:
    session = shared_session(TEST_MASTER, "sluiceway-tests", TEST_CONF)
    session.sparkContext.setLogLevel("ERROR")
    yield session
