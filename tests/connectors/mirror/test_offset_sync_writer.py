"""The offset-sync writer against a real broker: syncs due at once are written at once,
delayed ones at commit (the newest per partition), all to partition 0, none after close."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from connectors.mirror.formats import OffsetSync
from connectors.mirror.offset_sync_writer import MAX_OUTSTANDING, OffsetSyncWriter
from tests.connectors.mirror.source_support import create_topic, read_all, wait_until
from tests.support import embedded_broker, unique


@pytest.fixture(scope="module")
def bootstrap(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with embedded_broker(tmp_path_factory.mktemp("syncs")) as broker:
        yield broker.bootstrap


def written(bootstrap: str, topic: str) -> list[OffsetSync]:
    return [OffsetSync.decode(m.key() or b"", m.value() or b"") for m in read_all(bootstrap, topic)]


def test_syncs_now_and_at_commit(bootstrap: str) -> None:
    topic = unique("mm2-offset-syncs.B") + ".internal"
    create_topic(bootstrap, topic, 1)
    writer = OffsetSyncWriter({"bootstrap.servers": bootstrap}, topic, max_lag=100)
    writer.acked("t", 0, 0, 5)  # first of the partition: now
    writer.acked("t", 0, 1, 6)  # consecutive: delayed
    writer.acked("t", 0, 2, 7)  # delayed, replaces the last
    writer.acked("t", 1, 10, 0)  # another partition's first: now
    writer.acked("t", 1, 12, 1)  # a gap upstream: now
    assert wait_until(lambda: len(written(bootstrap, topic)) == 3, "three syncs")
    assert written(bootstrap, topic) == [
        OffsetSync("t", 0, 0, 5),
        OffsetSync("t", 1, 10, 0),
        OffsetSync("t", 1, 12, 1),
    ]
    writer.commit()
    assert wait_until(lambda: len(written(bootstrap, topic)) == 4, "the delayed sync")
    assert written(bootstrap, topic)[-1] == OffsetSync("t", 0, 2, 7)
    writer.commit()  # nothing delayed any more: nothing sent
    writer.close()
    writer.acked("t", 2, 0, 0)  # after close: dropped
    writer.commit()
    assert len(written(bootstrap, topic)) == 4
    assert writer.sent == 4 and writer.failed == 0  # close waited for the acknowledgements


def test_many_due_syncs_are_all_written_in_order_a_few_at_a_time(bootstrap: str) -> None:
    topic = unique("mm2-offset-syncs.B") + ".internal"
    create_topic(bootstrap, topic, 1)
    writer = OffsetSyncWriter({"bootstrap.servers": bootstrap}, topic, max_lag=100)
    n = MAX_OUTSTANDING * 5
    for p in range(n):
        writer.acked("t", p, 0, p)  # each partition's first sync: due at once
        assert writer.in_flight <= MAX_OUTSTANDING

    # What did not fit in flight waits; commits send it as acknowledgements free room.
    def all_sent() -> bool:
        writer.commit()  # serves acknowledgements, sends what waited
        return writer.sent == n

    wait_until(all_sent, "every sync acknowledged")
    writer.close()
    assert written(bootstrap, topic) == [OffsetSync("t", p, 0, p) for p in range(n)]


def test_acked_many_writes_what_acked_writes_record_by_record(bootstrap: str) -> None:
    one_topic, many_topic = (unique(f"mm2-offset-syncs.{w}") + ".internal" for w in ("one", "many"))
    create_topic(bootstrap, one_topic, 1)
    create_topic(bootstrap, many_topic, 1)
    one = OffsetSyncWriter({"bootstrap.servers": bootstrap}, one_topic, max_lag=10)
    many = OffsetSyncWriter({"bootstrap.servers": bootstrap}, many_topic, max_lag=10)
    # A consecutive run, one with a record that has no metadata (-1), one after a gap.
    runs = [
        (list(range(0, 50)), list(range(100, 150))),
        ([50, 51, 52, 53], [150, -1, 151, 152]),
        (list(range(60, 90)), list(range(153, 183))),
    ]
    for ups, downs in runs:
        for u, d in zip(ups, downs, strict=True):
            if d >= 0:
                one.acked("t", 0, u, d)
        many.acked_many("t", 0, ups, downs)
    one.commit()
    many.commit()
    one.close()
    many.close()
    expected = written(bootstrap, one_topic)
    assert len(expected) == one.sent > 5
    assert written(bootstrap, many_topic) == expected
