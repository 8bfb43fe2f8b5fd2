"""Keep the garbage collector off the long-lived start-up heap.

A worker imports a lot (FastAPI, pydantic, confluent-kafka, every plugin) and then
makes a record object or two per message. CPython's full collections walk every
tracked object, so with a big start-up heap they cost a large share of a task's
time: freezing what exists once start-up is over (``gc.freeze``) leaves collections
to walk only what was made since, which lifts file source throughput by about a
fifth (benchmarks/file_pipeline.py).
"""

from __future__ import annotations

import gc

#: Allocations between young-generation collections. CPython's 700 suits programs whose
#: objects die young in small numbers; a task holds batches of thousands of records, which
#: survive many 700-allocation collections each and so get walked again and again, and
#: promoted into the generations whose collections walk everything. Collecting less often
#: still collects every cycle.
YOUNG_THRESHOLD = 50_000


def freeze_startup_heap() -> None:
    """Collect start-up garbage, move every surviving object out of the collector's view, and
    collect the young generation per batch rather than per few hundred records."""
    gc.collect()
    gc.freeze()
    _, middle, old = gc.get_threshold()
    gc.set_threshold(max(YOUNG_THRESHOLD, gc.get_threshold()[0]), middle, old)
