"""The offset-sync writer's decisions are Kafka's OffsetSyncWriter.PartitionState rules:
a sync at once for the first record, a lag of offset.lag.max, an upstream gap or a
downstream rewind; otherwise the newest pair waits for commit()."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from connectors.mirror.formats import OffsetSync
from connectors.mirror.offset_syncs import OffsetSyncTracker


def test_first_record_is_synced_at_once() -> None:
    t = OffsetSyncTracker(max_lag=100)
    assert t.acked("t", 0, 5, 0) == OffsetSync("t", 0, 5, 0)
    assert t.acked("t", 1, 0, 0) == OffsetSync("t", 1, 0, 0)  # per partition
    assert t.acked("u", 0, 0, 0) == OffsetSync("u", 0, 0, 0)  # per topic
    assert t.delayed() == []


def test_consecutive_records_wait_for_commit_newest_per_partition() -> None:
    t = OffsetSyncTracker(max_lag=100)
    t.acked("t", 0, 0, 0)
    assert t.acked("t", 0, 1, 1) is None
    assert t.acked("t", 0, 2, 2) is None
    t.acked("t", 1, 0, 10)
    assert t.acked("t", 1, 1, 11) is None
    assert t.delayed() == [OffsetSync("t", 0, 2, 2), OffsetSync("t", 1, 1, 11)]
    assert t.delayed() == []  # cleared
    assert t.acked("t", 0, 3, 3) is None
    assert t.delayed() == [OffsetSync("t", 0, 3, 3)]


def test_lag_of_offset_lag_max_syncs_at_once() -> None:
    t = OffsetSyncTracker(max_lag=3)
    t.acked("t", 0, 0, 0)  # last synced downstream 0: translation reaches 1
    assert t.acked("t", 0, 1, 1) is None  # 1 - 1 = 0
    assert t.acked("t", 0, 2, 2) is None  # 1
    assert t.acked("t", 0, 3, 3) is None  # 2
    assert t.acked("t", 0, 4, 4) == OffsetSync("t", 0, 4, 4)  # 3 >= 3
    # The immediate sync superseded the delayed one of the partition.
    assert t.delayed() == []
    assert t.acked("t", 0, 5, 5) is None
    assert t.acked("t", 0, 8, 8) == OffsetSync("t", 0, 8, 8)  # upstream gap


def test_zero_lag_syncs_every_record() -> None:
    t = OffsetSyncTracker(max_lag=0)
    for i in range(5):
        assert t.acked("t", 0, i, i) == OffsetSync("t", 0, i, i)


def test_upstream_gap_syncs_at_once() -> None:
    t = OffsetSyncTracker(max_lag=100)
    t.acked("t", 0, 10, 0)
    assert t.acked("t", 0, 12, 1) == OffsetSync("t", 0, 12, 1)
    # Going back upstream is a gap too (a restarted source consumer).
    assert t.acked("t", 0, 11, 2) == OffsetSync("t", 0, 11, 2)


def test_downstream_rewind_syncs_at_once() -> None:
    t = OffsetSyncTracker(max_lag=100)
    t.acked("t", 0, 0, 50)
    assert t.acked("t", 0, 1, 51) is None
    assert t.acked("t", 0, 2, 0) == OffsetSync("t", 0, 2, 0)  # target topic recreated


def test_downstream_gap_alone_counts_only_towards_the_lag() -> None:
    t = OffsetSyncTracker(max_lag=10)
    t.acked("t", 0, 0, 0)
    assert t.acked("t", 0, 1, 5) is None  # transaction markers on the target
    assert t.acked("t", 0, 2, 11) == OffsetSync("t", 0, 2, 11)  # 11 - 1 >= 10


def test_forget_makes_the_next_record_a_first() -> None:
    t = OffsetSyncTracker(max_lag=100)
    t.acked("t", 0, 0, 0)
    assert t.acked("t", 0, 1, 1) is None
    t.forget("t", 0)
    assert t.delayed() == []
    assert t.acked("t", 0, 2, 2) == OffsetSync("t", 0, 2, 2)


@given(
    st.integers(0, 20),
    st.lists(st.tuples(st.integers(1, 3), st.integers(1, 3), st.booleans()), max_size=200),
)
def test_every_record_is_covered_and_lag_is_bounded(max_lag: int, steps: list[tuple[int, int, bool]]) -> None:
    """Over a replication with gaps on both sides and commits at random points: the newest
    pair always reaches the sync stream by the next commit, and between two immediate
    syncs the downstream distance stays below offset.lag.max + 1 plus the last step."""
    t = OffsetSyncTracker(max_lag)
    up, down = 0, 0
    first = t.acked("t", 0, up, down)
    assert first is not None
    last_immediate = first
    sent: list[OffsetSync] = [first]
    for up_step, down_step, commit in steps:
        previous_down = down
        up, down = up + up_step, down + down_step
        now = t.acked("t", 0, up, down)
        if now is not None:
            sent.append(now)
            forced = up_step != 1 or down - (last_immediate.downstream_offset + 1) >= max_lag
            assert forced
            last_immediate = now
        else:
            assert up_step == 1
            assert down - (last_immediate.downstream_offset + 1) < max_lag
            assert previous_down - (last_immediate.downstream_offset + 1) < max_lag
        if commit:
            sent += t.delayed()
            assert sent[-1] == OffsetSync("t", 0, up, down)
    sent += t.delayed()
    assert sent[-1] == OffsetSync("t", 0, up, down)
    # Syncs of one partition go out in upstream order.
    assert [s.upstream_offset for s in sent] == sorted(s.upstream_offset for s in sent)


# -- acked_many: the batch form, pair for pair the same answers -----------------------------


def _runs(draw: st.DrawFn) -> list[list[tuple[int, int]]]:
    """Chunks of (upstream, downstream) pairs: mostly consecutive runs (a copy of a partition),
    with gaps, rewinds and interleaved writers on either side."""
    up, down = draw(st.integers(0, 50)), draw(st.integers(0, 50))
    chunks: list[list[tuple[int, int]]] = []
    for _ in range(draw(st.integers(1, 8))):
        chunk = []
        for _ in range(draw(st.integers(0, 40))):
            chunk.append((up, down))
            step = draw(st.sampled_from([1, 1, 1, 1, 2, 0, -3]))
            up += step
            down += draw(st.sampled_from([1, 1, 1, 1, 3, -5])) if step == 1 else draw(st.integers(-4, 4))
            up, down = max(up, 0), max(down, 0)
        chunks.append(chunk)
    return chunks


@given(st.composite(_runs)(), st.integers(-1, 12))
def test_acked_many_answers_as_acked_pair_by_pair(chunks: list[list[tuple[int, int]]], max_lag: int) -> None:
    one, many = OffsetSyncTracker(max_lag), OffsetSyncTracker(max_lag)
    for i, chunk in enumerate(chunks):
        expected = [s for u, d in chunk if (s := one.acked("t", 0, u, d)) is not None]
        got = many.acked_many("t", 0, [u for u, _ in chunk], [d for _, d in chunk])
        assert got == expected
        if i % 3 == 2:  # a commit now and then
            assert many.delayed() == one.delayed()
    assert many.delayed() == one.delayed()


def test_acked_many_syncs_a_consecutive_run_every_lag_plus_one() -> None:
    t = OffsetSyncTracker(max_lag=3)
    got = t.acked_many("t", 0, list(range(10, 20)), list(range(100, 110)))
    # The first (a first), then each 3 + 1 downstream offsets past the last sync.
    assert got == [OffsetSync("t", 0, 10, 100), OffsetSync("t", 0, 14, 104), OffsetSync("t", 0, 18, 108)]
    assert t.delayed() == [OffsetSync("t", 0, 19, 109)]
    assert t.acked_many("t", 0, [], []) == []
