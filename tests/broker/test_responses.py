"""A connection's answers (``broker.responses.ResponseQueue``) over a real socket pair: what
waits for an answer (EndTxn's markers, ``RequestContext.after_answer``) runs only once the
answer is in the socket, also when the connection is closing, and one that fails does not
stop the others."""

from __future__ import annotations

import asyncio
import logging
import socket
from collections.abc import Awaitable, Callable

import pytest

from broker.responses import COALESCE_BYTES, ResponseQueue


def _with_queue(
    body: Callable[[ResponseQueue, asyncio.StreamWriter, socket.socket], Awaitable[None]],
) -> None:
    async def main() -> None:
        ours, peer = socket.socketpair()
        for end in (ours, peer):  # room for a coalesced write of COALESCE_BYTES in one send
            end.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 1 << 18)
            end.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 18)
        peer.setblocking(False)
        _, writer = await asyncio.open_connection(sock=ours)
        try:
            await body(ResponseQueue(writer), writer, peer)
        finally:
            writer.close()
            peer.close()

    asyncio.run(main())


def _readable(peer: socket.socket) -> bytes:
    try:
        return peer.recv(1 << 20)
    except BlockingIOError:
        return b""


def test_what_waits_for_an_answer_runs_once_it_is_in_the_socket() -> None:
    async def body(queue: ResponseQueue, _: asyncio.StreamWriter, peer: socket.socket) -> None:
        seen: list[bytes] = []
        # The order EndTxn's handler and the server use: the handler asks first, the answer
        # is queued after it returns.
        queue.after(lambda: seen.append(_readable(peer)))
        queue.put(b"answer")
        assert seen == []  # nothing runs inside the request's own turn
        await asyncio.sleep(0)
        assert seen == [b"answer"]

    _with_queue(body)


def test_answers_past_the_coalescing_bound_go_at_once_and_what_waits_runs_after_them() -> None:
    async def body(queue: ResponseQueue, _: asyncio.StreamWriter, peer: socket.socket) -> None:
        seen: list[int] = []
        queue.after(lambda: seen.append(len(_readable(peer))))
        queue.put(b"x" * COALESCE_BYTES)  # written here, not at the end of the turn
        assert seen == [COALESCE_BYTES]

    _with_queue(body)


def test_what_waits_still_runs_when_the_connection_is_closing() -> None:
    # EndTxn's markers must be written even if the client hung up before its answer.
    async def body(queue: ResponseQueue, writer: asyncio.StreamWriter, _: socket.socket) -> None:
        ran: list[str] = []
        queue.after(ran.append, "markers")
        queue.put(b"answer")
        writer.close()
        queue.flush()
        assert ran == ["markers"]

    _with_queue(body)


def test_one_failing_callback_does_not_stop_the_next(caplog: pytest.LogCaptureFixture) -> None:
    def fail() -> None:
        raise RuntimeError("disk on fire")

    async def body(queue: ResponseQueue, _: asyncio.StreamWriter, peer: socket.socket) -> None:
        ran: list[str] = []
        queue.after(fail)
        queue.after(ran.append, "second")
        queue.put(b"answer")
        with caplog.at_level(logging.ERROR, logger="broker.responses"):
            await asyncio.sleep(0)
        assert ran == ["second"]
        assert _readable(peer) == b"answer"
        assert "callback after an answer failed" in caplog.text and "disk on fire" in caplog.text

    _with_queue(body)
