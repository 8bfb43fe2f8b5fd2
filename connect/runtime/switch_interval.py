"""The interpreter's thread switch interval in a worker process.

A task thread is busy Python most of the time (converting, transforming, encoding
records) while other threads do I/O on its behalf: the S3 sink's uploads, the Spark
sink's calls into the JVM, clients' callbacks. Each time such a thread comes back from
I/O it needs the GIL again, and CPython lets the busy thread keep it for up to the
switch interval before handing it over: 5 ms by default. An S3 upload (botocore signs
and sends its body in many small steps) pays that wait at every step; in
``benchmarks/s3_sink.py`` one 7.5 MB upload took 125 to 170 ms beside a busy task thread
against ~50 ms alone, the task then waited for it, and the sink ran at ~300,000
records/s. With 0.5 ms the same upload takes ~80 ms and the sink runs ~25% faster.
A shorter interval costs a busy thread only more frequent checks for waiters.
"""

from __future__ import annotations

import sys

WORKER_SWITCH_INTERVAL_S = 0.0005


def use_worker_switch_interval() -> None:
    """Shorten the interval to ``WORKER_SWITCH_INTERVAL_S`` unless it is already shorter."""
    if sys.getswitchinterval() > WORKER_SWITCH_INTERVAL_S:
        sys.setswitchinterval(WORKER_SWITCH_INTERVAL_S)
