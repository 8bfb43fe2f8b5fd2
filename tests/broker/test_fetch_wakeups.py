"""Fetch long polls on real logs: a read_uncommitted poll wakes on every append, a
read_committed one only when the partition's last stable offset may have moved, so a
transactional append behind an open transaction leaves it asleep until the marker."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

from broker.config import load_config
from broker.logs import LogManager
from broker.storage.batch import TRANSACTIONAL, validate_produced
from broker.storage.records import Record, build_batch

TP = ("t", 0)
PID = 7


def _txn_batch(seq: int) -> bytes:
    return build_batch(
        0,
        [Record(0, 0, b"k", b"v")],
        base_timestamp=int(time.time() * 1000),
        attributes=TRANSACTIONAL,
        producer_id=PID,
        producer_epoch=0,
        base_sequence=seq,
    )


def test_read_committed_poll_sleeps_through_transactional_appends(tmp_path: Path) -> None:
    cfg = load_config({"log.dirs": str(tmp_path / "logs")})

    async def main() -> None:
        logs = LogManager(cfg)
        logs.open()
        try:
            logs.create_topic("t", 1)
            plog = logs.get(*TP)
            assert plog is not None
            committed = asyncio.ensure_future(logs.wait_for_data([TP], 30, committed=True))
            uncommitted = asyncio.ensure_future(logs.wait_for_data([TP], 30))
            await asyncio.sleep(0)
            for seq in range(2):
                stable = plog.last_stable_offset
                raw = _txn_batch(seq)
                plog.append(raw, validate_produced(raw, 1 << 20))
                assert plog.last_stable_offset == stable == 0  # as the produce handler decides
                logs.notify(TP, plog.last_stable_offset != stable)
                await asyncio.wait_for(uncommitted, 5)  # woken by the append
                for _ in range(5):  # as many loop turns as the woken poll took, and more
                    await asyncio.sleep(0)
                assert not committed.done()
                uncommitted = asyncio.ensure_future(logs.wait_for_data([TP], 30))
                await asyncio.sleep(0)
            plog.append_marker(PID, 0, True, 0)
            assert plog.last_stable_offset == 3
            logs.notify(TP)  # as the coordinator does after a marker
            await asyncio.wait_for(asyncio.gather(committed, uncommitted), 5)
        finally:
            logs.close()

    asyncio.run(main())
