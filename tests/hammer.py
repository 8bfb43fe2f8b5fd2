"""Requests sent over and over from threads while a test breaks something underneath (the
broker killed and restarted): which answers came back, and whether the process asked
stopped answering at all. Shared by the broker-restart tests of the worker's group offset
endpoints and of the Schema Registry's election.
"""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Callable, Sequence

import httpx

# One request: given a client on the target's base URL and how many this thread has sent.
Request = Callable[[httpx.Client, int], httpx.Response]


class RequestHammer:
    """One thread per ``(base_url, request)`` sending that request until the ``with`` block
    ends. Counts the answers by (base URL, status); a refused connection is noted in
    ``refused`` (the process is gone) and retried after 0.2 s; an error answer whose body
    ``error_body`` does not accept is kept in ``odd_bodies``."""

    def __init__(
        self, targets: Sequence[tuple[str, Request]], error_body: Callable[[httpx.Response], bool]
    ) -> None:
        self.answers: Counter[tuple[str, int]] = Counter()
        self.refused: list[str] = []
        self.odd_bodies: list[str] = []
        self._error_body = error_body
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._threads = [threading.Thread(target=self._run, args=t, daemon=True) for t in targets]

    def __enter__(self) -> RequestHammer:
        for t in self._threads:
            t.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._stop.set()
        for t in self._threads:
            t.join(120)

    def total(self) -> int:
        with self._lock:
            return sum(self.answers.values())

    def taken(self, url: str) -> int:
        """Requests to ``url`` answered 200."""
        with self._lock:
            return self.answers[(url, 200)]

    def statuses(self) -> Counter[int]:
        with self._lock:
            counts: Counter[int] = Counter()
            for (_, status), n in self.answers.items():
                counts[status] += n
            return counts

    def _run(self, url: str, request: Request) -> None:
        n = 0
        # Longer than any wait the processes under test make a request sit through.
        with httpx.Client(base_url=url, timeout=120) as http:
            while not self._stop.is_set():
                try:
                    r = request(http, n)
                except httpx.TransportError as exc:
                    with self._lock:
                        self.refused.append(f"{url}: {exc!r}")
                    self._stop.wait(0.2)
                    continue
                n += 1
                with self._lock:
                    if r.status_code != 200 and not self._error_body(r):
                        self.odd_bodies.append(f"{url} {r.status_code} {r.text[:300]}")
                    self.answers[(url, r.status_code)] += 1
