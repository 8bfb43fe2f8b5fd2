"""Backoff between retries, for connectors that retry requests themselves."""

from __future__ import annotations

import random


def backoff_seconds(attempt: int, base_ms: int, rng: random.Random | None = None) -> float:
    """The wait before retry ``attempt`` (0 for the first): jittered, between half and all of
    ``base_ms * 2^attempt``, so tasks that failed together do not retry together."""
    if base_ms <= 0:
        return 0.0
    ceiling = base_ms * 2 ** min(attempt, 24) / 1000
    return (rng or random).uniform(ceiling / 2, ceiling)
