"""MirrorMaker's dedicated mode end to end on two in-process brokers: both flows replicate
(keys, values, headers), the replication policy prevents cycles, heartbeats flow."""

from __future__ import annotations

from pathlib import Path

from tests.mirror_maker.support import CLASSES, RunningMirrorMaker, consume, mm2_values, produce, topics
from tests.support import embedded_broker, unique


def test_both_flows_replicate_without_cycles_and_heartbeats_flow(tmp_path: Path) -> None:
    with embedded_broker(tmp_path / "a") as a, embedded_broker(tmp_path / "b") as b:
        orders, payments, marker = unique("orders"), unique("payments"), unique("marker")
        values = mm2_values(a.bootstrap, b.bootstrap, **{"A->B.enabled": "true", "B->A.enabled": "true"})
        produce(a.bootstrap, orders, [(b"k1", b"v1", [("h", b"1")]), (b"k2", b"v2", []), (b"k3", b"v3", [])])
        produce(b.bootstrap, payments, [(b"p1", b"q1", [("h", b"2")])])
        with RunningMirrorMaker(values, classes=CLASSES):
            copied = consume(b.bootstrap, f"A.{orders}", 3)
            assert [(m.key(), m.value()) for m in copied] == [(b"k1", b"v1"), (b"k2", b"v2"), (b"k3", b"v3")]
            assert copied[0].headers() == [("h", b"1")]
            back = consume(a.bootstrap, f"B.{payments}", 1)
            assert (back[0].key(), back[0].value(), back[0].headers()) == (b"p1", b"q1", [("h", b"2")])
            # Heartbeats: each herder emits into its target; each flow replicates the other's.
            consume(a.bootstrap, "heartbeats", 1)
            consume(b.bootstrap, "heartbeats", 1)
            consume(a.bootstrap, "B.heartbeats", 1)
            consume(b.bootstrap, "A.heartbeats", 1)
            # A topic created on B after A.<orders> is replicated to A by the refresh that also
            # lists A.<orders>: once it is on A, A.<orders> would be there too if it cycled.
            produce(b.bootstrap, marker, [(b"m", b"m", [])])
            consume(a.bootstrap, f"B.{marker}", 1)
            on_a = topics(a.bootstrap)
            assert f"B.A.{orders}" not in on_a
            assert not any(t.startswith("B.A.") for t in on_a)
            assert not any(t.startswith("A.B.") for t in topics(b.bootstrap))
