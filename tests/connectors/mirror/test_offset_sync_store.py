"""The offset-sync store translates as Kafka's OffsetSyncStore: a consumer group's
translated offset never skips a record, a caught-up group re-reads at most the records
since the last sync (fewer than offset.lag.max), older groups translate less precisely
but within a bound of their age, and the 64 slots keep Kafka's invariants."""

from __future__ import annotations

import random
from dataclasses import dataclass, field

from hypothesis import given, settings
from hypothesis import strategies as st

from connectors.mirror.formats import OffsetSync
from connectors.mirror.offset_sync_store import SYNCS_PER_PARTITION, OffsetSyncStore
from connectors.mirror.offset_syncs import OffsetSyncTracker

TP = ("orders", 0)


def store_with(*pairs: tuple[int, int], must_read_to_end: bool = False) -> OffsetSyncStore:
    store = OffsetSyncStore(must_read_to_end=must_read_to_end)
    store.read_to_end_done()
    for up, down in pairs:
        store.add(OffsetSync(*TP, up, down))
    return store


def translate(store: OffsetSyncStore, upstream: int) -> int | None:
    return store.translate_downstream("g", *TP, upstream)


def test_nothing_before_the_first_read_to_end_or_without_syncs() -> None:
    store = OffsetSyncStore()
    store.add(OffsetSync(*TP, 100, 200))
    assert translate(store, 150) is None
    store.read_to_end_done()
    assert translate(store, 150) == 201
    assert store.translate_downstream("g", "orders", 1, 150) is None
    assert store.translate_downstream("g", "other", 0, 150) is None


def test_translation_around_one_sync() -> None:
    store = store_with((100, 200))
    assert translate(store, 99) is None  # older than every sync: Kafka's -1
    assert translate(store, 100) == 200
    assert translate(store, 101) == 201  # at most one past the sync
    assert translate(store, 10_000) == 201


def test_translation_picks_the_newest_sync_at_or_below() -> None:
    store = store_with((100, 200), (150, 251), (200, 300))
    assert translate(store, 100) == 200
    assert translate(store, 149) == 201
    assert translate(store, 150) == 251
    assert translate(store, 199) == 252
    assert translate(store, 200) == 300
    assert translate(store, 201) == 301


def test_upstream_rewind_resets_the_partition() -> None:
    store = store_with((100, 200), (150, 251), (10, 400))
    assert store.syncs(*TP) == [OffsetSync(*TP, 10, 400)] * SYNCS_PER_PARTITION
    assert translate(store, 9) is None
    assert translate(store, 10) == 400
    assert translate(store, 150) == 401  # the old syncs are gone


def test_before_the_read_to_end_only_the_newest_sync_is_kept() -> None:
    store = OffsetSyncStore(must_read_to_end=True)
    for up in range(0, 1000, 10):
        store.add(OffsetSync(*TP, up, up))
    assert {s.upstream_offset for s in store.syncs(*TP)} == {990}
    store.read_to_end_done()
    assert translate(store, 500) is None  # older history was not kept
    store.add(OffsetSync(*TP, 1000, 1000))
    assert translate(store, 995) == 991
    assert translate(store, 1000) == 1000


def test_with_checkpoints_loaded_the_whole_history_is_kept() -> None:
    store = OffsetSyncStore(must_read_to_end=False)
    for up in range(0, 1000, 10):
        store.add(OffsetSync(*TP, up, up))
    store.read_to_end_done()
    assert translate(store, 0) == 0
    assert translate(store, 995) == 991


def test_partitions_are_independent() -> None:
    store = store_with((5, 50))
    store.add(OffsetSync("orders", 1, 7, 70))
    store.add(OffsetSync("orders", 1, 3, 30))  # rewinds partition 1 only
    assert translate(store, 6) == 51
    assert store.translate_downstream("g", "orders", 1, 3) == 30


def test_equal_syncs_are_distinct_as_in_kafka() -> None:
    a, b = OffsetSync(*TP, 5, 5), OffsetSync(*TP, 5, 5)
    store = OffsetSyncStore(must_read_to_end=False)
    store.add(a)
    store.add(b)
    slots = store.syncs(*TP)
    assert slots[0] is b
    assert slots[-1] is a


def test_offsets_near_the_long_limit_do_not_break_invariants() -> None:
    top = 2**63 - 1
    store = store_with((top - 1000, 0), (top - 10, 990), (top, 1000))
    assert translate(store, top) == 1000
    assert translate(store, top - 5) == 991
    assert_invariants(store.syncs(*TP))


def assert_sparse_sync(store: OffsetSyncStore, sync: int, previous: int | None) -> None:
    """A sync at ``sync`` is stored and the one before it at ``previous`` (None: none)."""
    assert translate(store, sync - 1) == (None if previous is None else previous + 1)
    assert translate(store, sync) == sync
    assert translate(store, sync + 1) == sync + 1
    assert translate(store, sync + 2) == sync + 1


def test_which_past_syncs_are_kept_after_a_read_to_end() -> None:
    """The syncs Kafka's store keeps for syncs every 10 offsets (the numbers of Kafka's
    OffsetSyncStoreTest): only the newest of the initial read, then exponentially
    thinned history, and an upstream rewind clears it."""
    store = OffsetSyncStore(must_read_to_end=True)
    for offset in range(0, 1001, 10):
        store.add(OffsetSync(*TP, offset, offset))
        assert_invariants(store.syncs(*TP))
    store.read_to_end_done()
    assert_sparse_sync(store, 1000, None)
    for offset in range(1010, 10001, 10):
        store.add(OffsetSync(*TP, offset, offset))
        if offset % 1000 == 0:
            assert_invariants(store.syncs(*TP))
    assert_sparse_sync(store, 1000, None)  # the oldest kept: the initial read's newest
    for sync, previous in [
        (4840, 1000),
        (6760, 4840),
        (8680, 6760),
        (9160, 8680),
        (9640, 9160),
        (9880, 9640),
        (9940, 9880),
        (9970, 9940),
        (9990, 9970),
        (10000, 9990),
    ]:
        assert_sparse_sync(store, sync, previous)
    store.add(OffsetSync(*TP, 1500, 11000))
    assert_invariants(store.syncs(*TP))
    assert translate(store, 1499) is None
    assert translate(store, 1500) == 11000
    assert translate(store, 2000) == 11001


def test_which_past_syncs_are_kept_with_the_whole_history() -> None:
    """As above with the checkpoints loaded (no read to the end required)."""
    store = OffsetSyncStore(must_read_to_end=False)
    for offset in range(0, 1001, 10):
        store.add(OffsetSync(*TP, offset, offset))
        assert_invariants(store.syncs(*TP))
    store.read_to_end_done()
    assert_sparse_sync(store, 480, 0)
    assert_sparse_sync(store, 720, 480)
    assert_sparse_sync(store, 1000, 990)
    for offset in range(1000, 10001, 10):
        store.add(OffsetSync(*TP, offset, offset))
        if offset % 1000 == 0:
            assert_invariants(store.syncs(*TP))
    for sync, previous in [
        (3840, 0),
        (7680, 3840),
        (8640, 7680),
        (9120, 8640),
        (9600, 9120),
        (9840, 9600),
        (9900, 9840),
        (9960, 9900),
        (9990, 9960),
        (10000, 9990),
    ]:
        assert_sparse_sync(store, sync, previous)
    store.add(OffsetSync(*TP, 1500, 11000))
    assert translate(store, 1499) is None
    assert translate(store, 1500) == 11000
    assert translate(store, 2000) == 11001


def distinct(slots: list[OffsetSync]) -> int:
    return 1 + sum(1 for i in range(1, len(slots)) if slots[i] is not slots[i - 1])


def assert_invariants(slots: list[OffsetSync]) -> None:
    """Kafka's invariants B and C between every pair of distinct slots."""
    assert len(slots) == SYNCS_PER_PARTITION
    for j in range(SYNCS_PER_PARTITION):
        for i in range(j):
            ju, iu = slots[j].upstream_offset, slots[i].upstream_offset
            if ju == iu:
                continue
            lower = ju + (1 << max(i - 2, 0))
            if lower < 2**63:
                assert iu >= lower, f"invariant C({i},{j}): {iu} < {lower}"
            upper = ju + (1 << j) - (1 << i)
            if upper < 2**63:
                assert iu <= upper, f"invariant B({i},{j}): {iu} > {upper}"


def run_spacing(first: int, steps: list[int], max_expired: int) -> None:
    """Feed syncs ``steps`` apart; after each the newest is in slot 0, the first in slot
    63, the invariants hold and at most ``max_expired`` distinct syncs were dropped."""
    store = store_with((first, first))
    offset, count = first, 1
    for step in steps:
        offset += step
        store.add(OffsetSync(*TP, offset, offset))
        slots = store.syncs(*TP)
        assert slots[0].upstream_offset == offset
        assert slots[-1].upstream_offset == first
        now = distinct(slots)
        assert count - now + 1 <= max_expired, f"{count - now + 1} syncs expired at {offset}"
        count = now
    assert_invariants(store.syncs(*TP))


def test_regular_spacing_expires_at_most_one_sync_per_update() -> None:
    step = 1
    while step < 2**56:
        for first in (0, 1, 7, 29):
            run_spacing(first, [step] * 100, 1)
        step = step * 2 + 1


def test_random_spacing_expires_a_bounded_number_of_syncs() -> None:
    rnd = random.Random(0)
    for bits in range(1, 54, 4):
        run_spacing(0, [rnd.randrange(1 << bits) for _ in range(300)], bits + 2)
        lag = 1 << 16
        run_spacing(0, [lag + rnd.randrange(1 << bits) for _ in range(300)], bits + 2)


def test_a_dropped_sync_expires_at_most_two() -> None:
    rnd = random.Random(0)
    run_spacing(0, [100 * rnd.choice((1, 2)) for _ in range(3000)], 2)


def test_regular_spacing_translates_within_twice_age_plus_step() -> None:
    """A busy partition (a sync every ``step`` offsets): a group ``age`` offsets behind
    the newest sync lands fewer than ``2 * (age + step)`` offsets before its position."""
    for step in (1, 3, 100):
        store = store_with((0, 0))
        newest = 0
        for n in range(1, 2000):
            newest = n * step
            store.add(OffsetSync(*TP, newest, newest))
            if n % 250 == 0 or n == 1999:
                for group in range(0, newest + 1, max(1, newest // 300)):
                    t = translate(store, group)
                    assert t is not None
                    chosen = t if t == group else t - 1
                    assert group - chosen < 2 * (newest - group + step)


def test_writer_and_store_together_reread_less_than_offset_lag_max() -> None:
    """offset.lag.max=5 over 21 consecutive records without a commit: syncs at 0, 6, 12
    and 18 (the store thins 6 out, as Kafka's does); a group at 17 re-reads 13..16
    (4 records), one at 21 re-reads 19 and 20."""
    tracker, store = OffsetSyncTracker(5), store_with()
    for offset in range(21):
        sync = tracker.acked(*TP, offset, offset)
        if sync is not None:
            store.add(sync)
    assert {s.upstream_offset for s in store.syncs(*TP)} == {0, 12, 18}
    assert translate(store, 11) == 1
    assert translate(store, 17) == 13
    assert translate(store, 18) == 18
    assert translate(store, 21) == 19
    for sync in tracker.delayed():
        store.add(sync)
    assert translate(store, 21) == 21  # the commit's sync is exact


# -- the property: a random replication, the writer's syncs, the store's translations --------


@dataclass
class Replication:
    """One source partition replicated to a target partition, with the real task's
    offset-sync writer logic, restarts (re-sending from an earlier record, as at-least-once
    replication does after a crash) and a store reading the syncs as they are written."""

    max_lag: int
    store: OffsetSyncStore
    tracker: OffsetSyncTracker = field(init=False)
    upstream: list[int] = field(default_factory=list)  # offsets of the source's records
    copies: dict[int, list[int]] = field(default_factory=dict)  # upstream -> downstream offsets
    next_index: int = 0  # the next source record to replicate
    downstream_end: int = 0  # the target partition's end offset
    sent: list[OffsetSync] = field(default_factory=list)
    last_immediate_down: int = -1

    def __post_init__(self) -> None:
        self.tracker = OffsetSyncTracker(self.max_lag)

    def send(self, sync: OffsetSync) -> None:
        self.sent.append(sync)
        self.store.add(sync)

    def replicate(self, down_gap: int) -> None:
        up = self.upstream[self.next_index]
        self.next_index += 1
        down = self.downstream_end + down_gap  # transaction markers on the target
        self.downstream_end = down + 1
        self.copies.setdefault(up, []).append(down)
        now = self.tracker.acked(*TP, up, down)
        if now is not None:
            self.send(now)
            self.last_immediate_down = down

    def commit(self) -> None:
        for sync in self.tracker.delayed():
            self.send(sync)

    def restart(self, back: int, flush: bool) -> None:
        if flush:
            self.commit()
        self.next_index = max(0, self.next_index - back)
        self.tracker = OffsetSyncTracker(self.max_lag)
        self.last_immediate_down = -1

    def check(self, group: int) -> None:
        t = self.store.translate_downstream("g", *TP, group)
        if t is None:
            return
        # Never skips: every record at or after the group's offset has a copy at or after
        # the translated offset, or is still to be (re)replicated, landing after it.
        pending = set(self.upstream[self.next_index :])
        for up, downs in self.copies.items():
            if up >= group and up not in pending:
                assert max(downs) >= t, f"record {up} (at {downs}) skipped by {group} -> {t}"
        assert t <= self.downstream_end
        newest = self.sent[-1]
        if group >= newest.upstream_offset:
            # A caught-up group re-reads only records written after the newest sync, and
            # the writer syncs before offset.lag.max of them pile up.
            reread = sum(1 for up, downs in self.copies.items() for d in downs if up < group and d >= t)
            assert reread <= self.max_lag, f"{reread} records re-read, offset.lag.max {self.max_lag}"


STEP = st.tuples(st.just("step"), st.integers(1, 3), st.integers(0, 2))  # upstream gap, downstream gap
EVENTS = st.lists(
    st.one_of(
        STEP,
        STEP,
        STEP,
        st.tuples(st.just("record"), st.integers(1, 4), st.just(0)),  # the source gets ahead
        st.tuples(st.just("replicate"), st.integers(0, 2), st.just(0)),
        st.tuples(st.just("commit"), st.just(0), st.just(0)),
        st.tuples(st.just("restart"), st.integers(0, 6), st.booleans().map(int)),
        st.tuples(st.just("check"), st.integers(0, 80), st.just(0)),
    ),
    max_size=120,
)


@settings(max_examples=300, deadline=None)
@given(st.integers(0, 8), st.booleans(), st.integers(0, 60), EVENTS)
def test_translation_never_skips_and_rereads_at_most_the_sync_spacing(
    max_lag: int, must_read_to_end: bool, read_to_end_at: int, events: list[tuple[str, int, int]]
) -> None:
    r = Replication(max_lag, OffsetSyncStore(must_read_to_end=must_read_to_end))
    for index, (kind, n, m) in enumerate(events):
        if index == read_to_end_at:
            r.store.read_to_end_done()
        if kind in ("step", "record"):
            r.upstream.append((r.upstream[-1] if r.upstream else -1) + n)
        if kind == "step" and r.next_index < len(r.upstream):
            r.replicate(m)
        elif kind == "replicate" and r.next_index < len(r.upstream):
            r.replicate(n)
        elif kind == "commit":
            r.commit()
        elif kind == "restart":
            r.restart(n, flush=bool(m))
        elif kind == "check" and r.sent:
            # Groups anywhere from before the first record to past the last one.
            top = (r.upstream[-1] + 2) if r.upstream else 2
            r.check(n * top // 80)
        if r.sent:
            slots = r.store.syncs(*TP)
            assert slots[0] is r.sent[-1]  # invariant A: the newest sync is in slot 0
            assert_invariants(slots)
    r.store.read_to_end_done()
    for _ in ("before the last commit", "after it"):
        for up in [*r.copies, -1, 0]:
            r.check(up)
            r.check(up + 1)
        r.commit()


@settings(max_examples=200, deadline=None, derandomize=True)
@given(st.lists(st.integers(1, 2**12), min_size=1, max_size=400), st.data())
def test_older_groups_translate_within_a_bound_of_their_age(gaps: list[int], data: st.DataObject) -> None:
    """However irregular the syncs, a group ``age`` offsets behind the newest sync lands
    at most ``8 * (age + largest gap)`` offsets before its position (measured: under 4x)."""
    store = store_with((0, 0))
    offset = 0
    for gap in gaps:
        offset += gap
        store.add(OffsetSync(*TP, offset, offset))
    widest = max(gaps)
    for group in data.draw(st.lists(st.integers(0, offset), min_size=1, max_size=30)):
        t = translate(store, group)
        assert t is not None
        chosen = t if t == group else t - 1
        assert group - chosen <= 8 * (offset - group + widest)
