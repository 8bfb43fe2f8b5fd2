"""``sluiceway demo``: bad input gets one clear line and exit status 2, before anything starts;
the rule that says when the demo is done (``sluiceway.demo.checks``), the judgement of its
Avro topic against the bank, and the transform that writes the Avro Structs as JSON lines."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from decimal import Decimal
from pathlib import Path

import orjson
from hypothesis import given
from hypothesis import strategies as st

from connect.api import Schema, SchemaBuilder, SinkRecord, Struct
from sluiceway.demo.bank import large_transactions
from sluiceway.demo.checks import Cutoff, Outputs, TopicRead, cents, judge, shortfalls, topic_shortfalls
from tests.support import ROOT


def _demo(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "sluiceway.cli", "demo", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
    )


def _one_line(done: subprocess.CompletedProcess[str]) -> str:
    assert done.returncode == 2, done.stdout + done.stderr
    assert done.stdout == ""
    lines = done.stderr.splitlines()
    assert len(lines) == 1, done.stderr
    return lines[0]


def test_a_data_dir_that_cannot_be_written(tmp_path: Path) -> None:
    # A path under a regular file: not writable even for root, which CI is.
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    line = _one_line(_demo("--data-dir", str(blocker / "demo")))
    assert line.startswith("sluiceway demo: cannot write to the data dir ")
    assert str(blocker / "demo") in line and "--data-dir" in line


def test_a_port_that_is_taken(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        for flag, what in (("--rest-port", "REST API"), ("--broker-port", "embedded broker")):
            line = _one_line(_demo("--data-dir", str(tmp_path), flag, str(port)))
            assert f"port {port} for the {what} is taken on 127.0.0.1" in line
            assert flag in line
    assert not (tmp_path / "broker").exists(), "nothing started"


def test_java_missing_for_spark_says_how_to_install_it(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "JAVA_HOME"}
    env["PATH"] = str(tmp_path / "no-java-here")
    line = _one_line(_demo("--data-dir", str(tmp_path), env=env))
    assert "no java on PATH" in line
    assert "apt-get install openjdk-17-jre-headless" in line and "JAVA_HOME" in line
    env["JAVA_HOME"] = str(tmp_path / "jdk")
    line = _one_line(_demo("--data-dir", str(tmp_path), env=env))
    assert f"JAVA_HOME={tmp_path / 'jdk'} has no bin/java" in line


STATUSES = st.sampled_from(["pending", "settled"])
CHANGES = st.frozensets(st.tuples(st.integers(1, 30), STATUSES), max_size=30)


def _outputs(delivered: frozenset[tuple[int, str]], lake: frozenset[tuple[int, str]]) -> Outputs:
    rows = tuple((tid, status, offset) for offset, (tid, status) in enumerate(sorted(lake)))
    return Outputs(lines_written=500, delivered=delivered, flagged=frozenset(), lake=rows)


@given(CHANGES, CHANGES)
def test_a_cut_off_state_has_arrived_when_it_or_a_later_state_of_its_row_did(
    cut: frozenset[tuple[int, str]], seen: frozenset[tuple[int, str]]
) -> None:
    cutoff = Cutoff(cut, frozenset())
    arrived = cutoff.arrived(seen)
    for tid, status in cut:
        expected = (tid, status) in seen or (tid, "settled") in seen
        assert ((tid, status) in arrived) == expected
    assert cutoff.missing(seen) == cut - arrived


@given(CHANGES, CHANGES)
def test_later_changes_never_undo_done(
    cut: frozenset[tuple[int, str]], later: frozenset[tuple[int, str]]
) -> None:
    """The writer keeps writing after the cut-off: outputs that got more never stop being done."""
    cutoff = Cutoff(cut, frozenset())
    assert judge(cutoff, 500, _outputs(cut, cut)).done
    assert judge(cutoff, 500, _outputs(cut | later, cut | later)).done


def test_what_is_missing_is_said_per_output() -> None:
    cutoff = Cutoff(frozenset({(1, "settled"), (2, "pending"), (3, "pending")}), frozenset({3}))
    out = Outputs(
        lines_written=499,
        delivered=frozenset({(1, "settled"), (2, "settled")}),
        flagged=frozenset(),
        lake=((1, "settled", 0), (1, "settled", 0)),
    )
    verdict = judge(cutoff, 500, out)
    assert not verdict.done
    said = shortfalls(cutoff, 500, out)
    assert said == [
        "only 499 of 500 order lines reached the output file",
        "1 of 3 transaction changes never reached transactions-out.jsonl (e.g. #3 pending)",
        "1 large transactions are not in large-transactions.jsonl (ids [3])",
        "2 of 3 transaction changes are not in the Spark table (e.g. #2 pending, #3 pending)",
        "the Spark table holds some topic offsets twice",
    ]


@given(st.decimals(min_value=0, max_value=10**10, places=2))
def test_an_amount_in_cents_whatever_type_it_came_as(amount: Decimal) -> None:
    """bank.db and Avro give floats, JSON gives numbers: the same amount is the same cents."""
    exact = int(amount * 100)
    assert cents(amount) == cents(float(amount)) == cents(str(amount)) == exact


def test_the_topic_is_judged_against_the_cut_off_and_the_sink() -> None:
    # Two transactions of account 1 (12.50 and 1,000.00), one of account 2 (3.20).
    cutoff = Cutoff(
        frozenset({(1, "settled"), (2, "pending"), (3, "pending")}),
        frozenset({2}),
        {1: (1, 1250), 2: (1, 100000), 3: (2, 320)},
    )
    rows = (
        (1, "pending", 1, 1250),
        (2, "pending", 1, 100000),
        (3, "pending", 2, 320),
        (1, "settled", 1, 1250),
    )
    assert topic_shortfalls(cutoff, TopicRead(rows, 0), rows, final=True) == []
    assert topic_shortfalls(cutoff, TopicRead(rows, 0), rows[:2], final=False) == []
    short = TopicRead((*rows[:3], (1, "settled", 1, 1249)), 1)
    assert topic_shortfalls(cutoff, short, (*rows[:3], (9, "pending", 2, 5)), final=True) == [
        "1 values of the topic are not Avro in Confluent's wire format",
        "account 1 totals 1012.49 in the topic, 1012.50 in bank.db",
        "transactions-out.jsonl has 1 records the topic does not",
    ]
    assert topic_shortfalls(cutoff, TopicRead(rows[:3], 0), rows[:3], final=True) == [
        "1 of 3 transaction changes are not in the topic"
    ]
    assert topic_shortfalls(cutoff, TopicRead(rows, 0), rows[:3], final=True) == [
        "transactions-out.jsonl has 3 records, the topic 4"
    ]


def test_large_transactions_keeps_the_large_structs_as_json_lines() -> None:
    """What the AvroConverter hands the sink (a Struct, here of the evolved schema) becomes
    the JSON line Kafka's JsonConverter writes, null fields included; small ones are dropped."""
    schema = (
        SchemaBuilder.struct()
        .name("transactions")
        .field("id", Schema.INT64_SCHEMA)
        .field("amount", Schema.FLOAT64_SCHEMA)
        .field("channel", Schema.OPTIONAL_STRING_SCHEMA)
        .build()
    )

    def record(tid: int, amount: float) -> SinkRecord:
        return SinkRecord("t", 0, None, None, schema, Struct(schema).put("id", tid).put("amount", amount))

    assert large_transactions(record(1, 999.99)) is None
    kept = large_transactions(record(2, 1000.0))
    assert kept is not None and kept.value_schema is None
    assert orjson.loads(kept.value) == {"id": 2, "amount": 1000.0, "channel": None}
