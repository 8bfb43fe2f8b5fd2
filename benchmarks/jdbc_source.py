"""JDBC sources against raw SQLAlchemy and psycopg loops, on the same broker and database.

    python benchmarks/jdbc_source.py [--rows 1000000] [--rounds 3] [--cdc-rate 1000]

A throwaway PostgreSQL (wal_level=logical, tests/databases.py) holds a table of
``--rows`` rows (id, account, amount numeric(12,2), note, created_at timestamptz).

- query: JdbcSourceConnector (incrementing mode, a standalone worker process) reads the
  table into a topic; the baseline runs the same ``WHERE id > ? ORDER BY id LIMIT n``
  loop with SQLAlchemy and produces each row as JSON with confluent-kafka. Both are
  timed from the first record in the topic to the last; JSON without schemas both ways.
- cdc throughput: PostgresCdcSourceConnector streams ``--cdc-rows`` inserted in one
  statement; timed from the commit until the last change is in the topic. ``--rounds``
  interleaved rounds, each in databases, slots and topics of its own; medians.
  The baseline reads the same pgoutput stream with psycopg2's replication cursor, decodes
  each insert's columns and produces a JSON change event with confluent-kafka.
- cdc latency: rows inserted at ``--cdc-rate`` per second (transactions of 10), each
  timed from its commit returning to the consumer receiving its change event: p50/p99.

Targets: query >= 0.7x raw and >= 50,000 rows/s; CDC >= 30,000 changes/s and >= 0.5x the raw
pgoutput loop; CDC p99 <= 100 ms.
"""

from __future__ import annotations

import argparse
import select
import statistics
import struct
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import httpx
import orjson
import psycopg
import sqlalchemy as sa
from confluent_kafka import OFFSET_BEGINNING, Consumer, Producer, TopicPartition

from benchmarks._common import broker_process
from benchmarks._worker import Worker, close_watermarks, create_topic, end_offset, timed, wait_for
from tests.databases import PostgresServer

JSON_NO_SCHEMA = {
    "key.converter": "org.apache.kafka.connect.json.JsonConverter",
    "key.converter.schemas.enable": "false",
    "value.converter": "org.apache.kafka.connect.json.JsonConverter",
    "value.converter.schemas.enable": "false",
}


# PostgreSQL's own defaults, not the test servers' speed-ups: with synchronous_commit=off
# a commit's WAL reaches the replication stream only at the WAL writer's next round (200 ms).
PRODUCTION = {"fsync": "on", "synchronous_commit": "on", "full_page_writes": "on"}


def rate(rows: float, seconds: float) -> str:
    return f"{rows / seconds:>10,.0f} rows/s ({seconds:.2f} s)"


def load_table(pg: PostgresServer, db: str, rows: int) -> None:
    pg.execute(f"CREATE DATABASE {db}")
    pg.execute(
        "CREATE TABLE bench_rows (id bigserial PRIMARY KEY, account text NOT NULL, "
        "amount numeric(12,2) NOT NULL, note text, created_at timestamptz NOT NULL DEFAULT now())",
        db,
    )
    pg.execute(
        "INSERT INTO bench_rows (account, amount, note) SELECT 'acct-' || (g % 1000), "
        f"(g % 100000) / 100.0, 'payment number ' || g FROM generate_series(1, {rows}) g",
        db,
    )
    pg.execute("VACUUM ANALYZE bench_rows", db)


def raw_query(pg: PostgresServer, db: str, bootstrap: str, topic: str, rows: int, batch: int) -> float:
    """SQLAlchemy select loop + confluent-kafka produce: what the connector does, minus Connect."""
    engine = sa.create_engine(pg.url(db))
    p = Producer({"bootstrap.servers": bootstrap, "acks": "all", "enable.idempotence": True, "linger.ms": 5})
    p.list_topics(topic, timeout=10)
    dumps, produce = orjson.dumps, p.produce
    stmt = sa.text(
        "SELECT id, account, amount, note, created_at FROM bench_rows WHERE id > :last ORDER BY id LIMIT :n"
    )
    last = 0
    start = time.perf_counter()  # the first record reaches the topic a moment after this
    with engine.connect() as conn:
        while True:
            result = conn.execute(stmt, {"last": last, "n": batch}).fetchall()
            if not result:
                break
            for r in result:
                value = dumps(
                    {
                        "id": r[0],
                        "account": r[1],
                        "amount": float(r[2]),
                        "note": r[3],
                        "created_at": int(r[4].timestamp() * 1000),
                    }
                )
                while True:
                    try:
                        # The key by position: as a keyword it costs confluent-kafka ~1 us
                        # more a call, and the worker passes none.
                        produce(topic, value, dumps(r[0]))
                        break
                    except BufferError:
                        p.poll(0.01)
            last = result[-1][0]
    p.flush(120)
    wait_for(lambda: end_offset(bootstrap, topic) >= rows, 600, interval=0.02)
    seconds = time.perf_counter() - start
    engine.dispose()
    return seconds


def connector_query(
    worker: Worker, pg: PostgresServer, db: str, bootstrap: str, name: str, rows: int, batch: int
) -> float:
    prefix = f"{name}-"
    topic = prefix + "bench_rows"
    create_topic(bootstrap, topic)
    worker.create(
        name,
        {
            "connector.class": "io.confluent.connect.jdbc.JdbcSourceConnector",
            "connection.url": f"jdbc:postgresql://127.0.0.1:{pg.port}/{db}",
            "connection.user": "postgres",
            "mode": "incrementing",
            "incrementing.column.name": "id",
            "table.whitelist": "bench_rows",
            "topic.prefix": prefix,
            "batch.max.rows": str(batch),
            "poll.interval.ms": "100",
            "numeric.mapping": "best_fit",
            **JSON_NO_SCHEMA,
        },
    )
    _, seconds = timed(
        lambda: end_offset(bootstrap, topic) > 0, lambda: end_offset(bootstrap, topic) >= rows, 600
    )
    worker.delete(name)
    return seconds


# -- CDC ------------------------------------------------------------------------------------


def cdc_connector(worker: Worker, pg: PostgresServer, db: str, name: str) -> None:
    worker.create(
        name,
        {
            "connector.class": "io.debezium.connector.postgresql.PostgresConnector",
            "database.hostname": "127.0.0.1",
            "database.port": str(pg.port),
            "database.user": "postgres",
            "database.dbname": db,
            "topic.prefix": name,
            "slot.name": name.replace("-", "_"),
            "publication.name": name.replace("-", "_") + "_pub",
            "table.include.list": "public.cdc_rows",
            "snapshot.mode": "never",
            **JSON_NO_SCHEMA,
        },
    )


def warm_up(
    worker: Worker, name: str, pg: PostgresServer, db: str, insert: str, bootstrap: str, topic: str
) -> int:
    """Insert a row a second until one arrives (rows committed before the connector made its
    slot are, rightly, not streamed); returns the topic's end offset then."""
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        pg.execute(insert, db)
        try:
            wait_for(lambda: end_offset(bootstrap, topic) >= 1, 1.0)
            time.sleep(1.0)  # the last warm-up rows land too
            return end_offset(bootstrap, topic)
        except TimeoutError:
            continue
    status = httpx.get(f"{worker.url}/connectors/{name}/status", timeout=10).text
    raise TimeoutError(f"no change event from {name}: {status}")


def cdc_throughput(worker: Worker, pg: PostgresServer, bootstrap: str, rows: int, round_: int = 0) -> float:
    db, name = f"cdc_throughput_{round_}", f"cdc-tp-{round_}"
    pg.execute(f"CREATE DATABASE {db}")
    pg.execute("CREATE TABLE cdc_rows (id bigserial PRIMARY KEY, account text, amount numeric(12,2))", db)
    cdc_connector(worker, pg, db, name)
    topic = f"{name}.public.cdc_rows"
    # The slot exists once the connector runs: a first row proves the stream is live.
    base = warm_up(
        worker, name, pg, db, "INSERT INTO cdc_rows (account, amount) VALUES ('warm-up', 1)", bootstrap, topic
    )
    committed = time.perf_counter()
    pg.execute(
        "INSERT INTO cdc_rows (account, amount) "
        f"SELECT 'acct-' || g, g / 100.0 FROM generate_series(1, {rows}) g",
        db,
    )
    wait_for(lambda: end_offset(bootstrap, topic) >= base + rows, 600, interval=0.02)
    seconds = time.perf_counter() - committed
    worker.delete(name)
    return seconds


def raw_cdc(pg: PostgresServer, bootstrap: str, rows: int, round_: int = 0) -> float:
    """psycopg2's replication cursor reading pgoutput, each insert decoded and produced as a
    JSON change event with confluent-kafka: what the connector does, minus Connect."""
    import psycopg2
    import psycopg2.extras

    db, topic = f"cdc_raw_{round_}", f"raw-cdc-{round_}"
    pg.execute(f"CREATE DATABASE {db}")
    pg.execute("CREATE TABLE cdc_rows (id bigserial PRIMARY KEY, account text, amount numeric(12,2))", db)
    pg.execute("CREATE PUBLICATION raw_pub FOR TABLE cdc_rows", db)
    create_topic(bootstrap, topic)
    conn = psycopg2.connect(
        host="127.0.0.1",
        port=pg.port,
        user="postgres",
        dbname=db,
        connection_factory=psycopg2.extras.LogicalReplicationConnection,
    )
    cur = conn.cursor()
    cur.create_replication_slot(f"raw_slot_{round_}", output_plugin="pgoutput")
    cur.start_replication(
        slot_name=f"raw_slot_{round_}",
        decode=False,
        options={"proto_version": "1", "publication_names": "raw_pub"},
    )
    p = Producer({"bootstrap.servers": bootstrap, "acks": "all", "enable.idempotence": True, "linger.ms": 5})
    p.list_topics(topic, timeout=10)
    committed = time.perf_counter()
    pg.execute(
        "INSERT INTO cdc_rows (account, amount) "
        f"SELECT 'acct-' || g, g / 100.0 FROM generate_series(1, {rows}) g",
        db,
    )
    dumps, produce, unpack_from = orjson.dumps, p.produce, struct.unpack_from
    seen = 0
    while seen < rows:
        msg = cur.read_message()
        if msg is None:
            select.select([conn], [], [], 0.1)
            continue
        data = msg.payload
        if data[:1] != b"I":
            continue
        # Insert: 'I', relation id, 'N', column count, then per column 't' + length + text.
        values: list[str | None] = []
        pos = 8
        for _ in range(unpack_from(">h", data, 6)[0]):
            kind = data[pos : pos + 1]
            pos += 1
            if kind == b"t":
                (size,) = unpack_from(">i", data, pos)
                values.append(data[pos + 4 : pos + 4 + size].decode())
                pos += 4 + size
            else:
                values.append(None)
        row_id, account, amount = values
        event = {
            "before": None,
            "after": {"id": int(row_id or 0), "account": account, "amount": float(amount or 0)},
            "source": {"db": db, "schema": "public", "table": "cdc_rows", "lsn": msg.data_start},
            "op": "c",
            "ts_ms": int(time.time() * 1000),
        }
        while True:
            try:
                produce(topic, dumps(event), dumps({"id": event["after"]["id"]}))  # no keyword: ~1 us
                break
            except BufferError:
                p.poll(0.01)
        seen += 1
        if seen % 10_000 == 0:
            cur.send_feedback(flush_lsn=msg.data_start)
    p.flush(120)
    wait_for(lambda: end_offset(bootstrap, topic) >= rows, 600, interval=0.02)
    seconds = time.perf_counter() - committed
    conn.close()
    return seconds


def cdc_latency(worker: Worker, pg: PostgresServer, bootstrap: str, rate: int, seconds: float) -> list[float]:
    db, name = "cdc_latency", "cdc-lat"
    pg.execute(f"CREATE DATABASE {db}")
    pg.execute("CREATE TABLE cdc_rows (id bigint PRIMARY KEY, account text, amount numeric(12,2))", db)
    cdc_connector(worker, pg, db, name)
    topic = f"{name}.public.cdc_rows"
    pg.execute("CREATE SEQUENCE warm_up_ids MINVALUE -1000000 MAXVALUE 0 START 0 INCREMENT -1", db)
    warmed = warm_up(
        worker,
        name,
        pg,
        db,
        "INSERT INTO cdc_rows VALUES (nextval('warm_up_ids'), 'warm-up', 1)",
        bootstrap,
        topic,
    )

    committed_at: dict[int, float] = {}
    arrived: dict[int, float] = {}
    total = int(rate * seconds)
    done, ready = threading.Event(), threading.Event()

    def consume() -> None:
        c = Consumer(
            {"bootstrap.servers": bootstrap, "group.id": "bench-cdc-latency", "fetch.wait.max.ms": 5}
        )
        c.assign([TopicPartition(topic, 0, OFFSET_BEGINNING)])
        seen = 0
        while seen < total and not done.is_set():
            # poll(), not consume(n, t): a batch consume waits for n messages or t seconds.
            m = c.poll(0.1)
            if m is None or m.error() is not None or m.value() is None:
                continue
            if m.offset() >= warmed - 1:
                ready.set()  # connected and caught up: the clock may start
            now = time.perf_counter()
            row_id = orjson.loads(m.value())["after"]["id"]
            if row_id > 0:
                arrived[row_id] = now  # matched with commit times at the end: no race with the writer
                seen += 1
        c.close()

    reader = threading.Thread(target=consume, daemon=True)
    reader.start()
    if not ready.wait(60):
        raise TimeoutError("the latency consumer did not catch up with the warm-up rows")
    per_tx = 10
    interval = per_tx / rate
    with psycopg.connect(pg.dsn(db), autocommit=False) as conn:
        next_at = time.perf_counter()
        for start in range(1, total + 1, per_tx):
            ids = list(range(start, min(start + per_tx, total + 1)))
            with conn.cursor() as cur:
                cur.executemany(
                    "INSERT INTO cdc_rows VALUES (%s, %s, %s)",
                    [(i, f"acct-{i % 1000}", i / 100) for i in ids],
                )
            conn.commit()
            now = time.perf_counter()
            for i in ids:
                committed_at[i] = now
            next_at += interval
            delay = next_at - time.perf_counter()
            if delay > 0:
                time.sleep(delay)
    reader.join(120)
    done.set()
    worker.delete(name)
    missing = len(committed_at) - len(arrived)
    if missing:
        print(f"  {missing} committed rows never arrived")
    return [(arrived[i] - t) * 1000 for i, t in committed_at.items() if i in arrived]


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--batch", type=int, default=10_000, help="batch.max.rows, and the raw loop's LIMIT")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--cdc-rows", type=int, default=200_000)
    ap.add_argument("--cdc-rate", type=int, default=1000)
    ap.add_argument("--cdc-seconds", type=float, default=10.0)
    ap.add_argument("--keep-log", help="copy the worker's log here")
    ap.add_argument("--parts", default="query,cdc", help="which parts to run (query, cdc)")
    args = ap.parse_args()
    parts = set(args.parts.split(","))
    lat: list[float] = []
    n = args.rows
    with tempfile.TemporaryDirectory(prefix="sluiceway-jdbc-bench-") as tmp, PostgresServer(PRODUCTION) as pg:
        work = Path(tmp)
        if "query" in parts:  # (CDC streams tables of its own)
            print(f"loading {n:,} rows into PostgreSQL on port {pg.port} ...")
            load_table(pg, "bench", n)
        with broker_process() as (bootstrap, _broker):
            worker = Worker(work, bootstrap)
            try:
                raw, conn = [], []
                # Interleaved rounds: on two cores single runs swing.
                for r in range(args.rounds if "query" in parts else 0):
                    topic = f"raw-query-{r}"
                    create_topic(bootstrap, topic)
                    raw.append(raw_query(pg, "bench", bootstrap, topic, n, args.batch))
                    conn.append(connector_query(worker, pg, "bench", bootstrap, f"jdbc-{r}", n, args.batch))
                    print(f"  round {r}: raw {rate(n, raw[-1])}, connector {rate(n, conn[-1])}")
                # Interleaved rounds for CDC too: the raw loop alone moves by a third run to run.
                cdc_raw, cdc_conn = [], []
                for r in range(args.rounds if "cdc" in parts else 0):
                    cdc_conn.append(cdc_throughput(worker, pg, bootstrap, args.cdc_rows, r))
                    cdc_raw.append(raw_cdc(pg, bootstrap, args.cdc_rows, r))
                    print(
                        f"  cdc round {r}: raw {rate(args.cdc_rows, cdc_raw[-1])}, "
                        f"connector {rate(args.cdc_rows, cdc_conn[-1])}, "
                        f"ratio {cdc_raw[-1] / cdc_conn[-1]:.2f}x"
                    )
                if "cdc" in parts or "cdc-latency" in parts:
                    lat = cdc_latency(worker, pg, bootstrap, args.cdc_rate, args.cdc_seconds)
            finally:
                worker.stop()
                close_watermarks()
                if args.keep_log:
                    (Path(args.keep_log)).write_bytes((work / "worker.log").read_bytes())
    print()
    if raw:
        raw_s, conn_s = statistics.median(raw), statistics.median(conn)
        print(f"query source, {n:,} rows, batch.max.rows={args.batch} (medians of {args.rounds} rounds)")
        print(f"  raw SQLAlchemy + produce   {rate(n, raw_s)}")
        print(f"  JdbcSourceConnector        {rate(n, conn_s)}")
        print(f"  ratio                      {raw_s / conn_s:.2f}x (target >= 0.7x, and >= 50,000 rows/s)")
    if "cdc" in parts:
        tp, raw_tp = statistics.median(cdc_conn), statistics.median(cdc_raw)
        print(
            f"cdc throughput, {args.cdc_rows:,} rows in one statement, commit -> last in the topic "
            f"(medians of {args.rounds} rounds)"
        )
        print(f"  raw pgoutput read + produce {rate(args.cdc_rows, raw_tp)}")
        print(f"  PostgresConnector           {rate(args.cdc_rows, tp)}")
        print(f"  ratio                       {raw_tp / tp:.2f}x (target >= 0.5x, and >= 30,000 changes/s)")
    if lat:
        q = statistics.quantiles(lat, n=100)
        print(
            f"cdc latency at {args.cdc_rate} rows/s ({len(lat)} changes): commit -> consumer "
            f"p50 {q[49]:.1f} ms, p99 {q[98]:.1f} ms (target p99 <= 100 ms)"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
