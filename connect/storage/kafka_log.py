"""A compacted Kafka topic read to its end, then tailed: the log behind the distributed stores.

``KafkaBasedLog`` is Kafka Connect's class of the same name. It reads every
partition of one topic from the beginning and keeps tailing it on its own
reader thread, handing each record to ``on_record`` in order per partition; it
writes through its own producer. The config, offset and status stores keep
their state in memory, built from what ``on_record`` sees, and use
``read_to_end`` to wait until they have seen everything written before a point
in time (their own writes included).

Threads: the reader thread calls ``on_record``; a delivery thread resolves the
futures ``send`` returns. ``send``, ``flush`` and ``read_to_end`` may be called
from any thread but those two: ``on_record`` and future callbacks must not
wait for the log (they would wait for themselves).

End offsets are asked for on a second consumer connection of the log's own:
a broker answers requests on one connection in order, so on the reader's
connection a ListOffsets request would wait behind the long-polling Fetch.

Only the Kafka protocol through confluent-kafka is used (manual ``assign``;
librdkafka wants a group id, but no group is joined and nothing is committed),
so the log works the same against Apache Kafka. While Kafka is unreachable the
clients keep retrying; the log says so once per outage, and once when it is back.

``encode_value``/``decode_value`` are the value format of all internal topics:
Kafka's JsonConverter with ``schemas.enable=false``.
"""

from __future__ import annotations

import logging
import re
import threading
import time
from collections.abc import Callable, Mapping
from concurrent.futures import Future
from typing import Any, TypeVar

import orjson
from confluent_kafka import Consumer, KafkaError, KafkaException, Message, Producer
from confluent_kafka import TopicPartition as KafkaTopicPartition

from connect.api.errors import ConnectException
from connect.converters.json import JsonConverter
from connect.runtime import clients

log = logging.getLogger(__name__)

_Client = TypeVar("_Client")

RecordCallback = Callable[[bytes | None, bytes | None, int, int], None]  # key, value, partition, offset

# librdkafka errors that mean "Kafka is not reachable right now"; the clients keep retrying.
_OUTAGE_ERRORS = frozenset(
    {KafkaError._ALL_BROKERS_DOWN, KafkaError._TRANSPORT, KafkaError._RESOLVE, KafkaError._TIMED_OUT}
)
# Failed writes that may succeed if sent again.
_RETRIABLE_WRITE_ERRORS = frozenset({KafkaError._MSG_TIMED_OUT, KafkaError._TRANSPORT, KafkaError._TIMED_OUT})

_POLL_S = 0.1  # how long the reader and delivery threads block; bounds how long stop() waits for them
_BATCH = 500
_RETRY_S = 0.1

# Defaults that suit a control-plane log; the caller's settings may change them.
_PRODUCER_DEFAULTS: dict[str, Any] = {
    "linger.ms": 1,  # writes are few and someone waits for each of them
    "reconnect.backoff.max.ms": 1000,  # come back within a second once the broker is back
}
_CONSUMER_DEFAULTS: dict[str, Any] = {
    "reconnect.backoff.max.ms": 1000,
    # The broker holds a fetch this long when there is nothing new. librdkafka adds assigned
    # partitions to its fetches one long poll at a time, so this also bounds how long start() takes
    # until every partition is tailed; the cost is a few empty fetches a second while idle.
    "fetch.wait.max.ms": 200,
}


def _internal_converter() -> JsonConverter:
    converter = JsonConverter()
    converter.configure({"schemas.enable": False}, is_key=False)
    return converter


_VALUES = _internal_converter()


def encode_value(doc: Mapping[str, Any]) -> bytes:
    """An internal topic's value: what Kafka's JsonConverter (schemas.enable=false) writes for ``doc``.

    Fields keep ``doc``'s order (Kafka writes its schema's field order)."""
    out = _VALUES.from_connect_data("", None, dict(doc))
    assert out is not None
    return out


def decode_value(value: bytes) -> Any:
    """The JSON document of an internal topic's value; ValueError if it is not JSON."""
    return orjson.loads(value)


_NO_SUCH_PROPERTY = re.compile(r'No such configuration property: "([^"]+)"')
_dropped: set[str] = set()


def make_client(factory: Callable[[dict[str, Any]], _Client], config: Mapping[str, Any]) -> _Client:
    """A librdkafka client from ``config``, without the settings librdkafka does not know.

    Workers pass their top-level settings (security and the like) to the internal
    clients, as Kafka Connect passes its originals; Java clients ignore keys they
    do not know, with a warning, and so does this. Bad values still fail.
    """
    settings = dict(config)
    while True:
        try:
            return factory(settings)
        except KafkaException as exc:
            found = _NO_SUCH_PROPERTY.search(str(exc.args[0].str()))
            if found is None or found.group(1) not in settings:
                raise ConnectException(f"invalid Kafka client settings: {exc.args[0].str()}") from exc
            key = found.group(1)
            del settings[key]
            if key not in _dropped:
                _dropped.add(key)
                log.warning(
                    "the setting %s is not a Kafka client setting; the internal topics' clients ignore it",
                    key,
                )


class KafkaLogWriteError(ConnectException):
    """A record the log could not write; ``retriable`` says whether sending it again may work."""

    def __init__(self, topic: str, error: KafkaError) -> None:
        super().__init__(f"could not write to topic {topic}: {error.str()}")
        self.error = error
        self.retriable = bool(error.retriable()) or error.code() in _RETRIABLE_WRITE_ERRORS


class KafkaBasedLog:
    """Every record of ``topic``, read from the beginning and then tailed; writes through a producer.

    ``producer_config``/``consumer_config`` are librdkafka (or Java client) settings
    layered over ``connect.runtime.clients``' defaults; the log forces what its
    guarantees need: ``acks=all``, one request in flight (writes land in the
    order they were sent), Java's murmur2 partitioner (a key lands in the same
    partition as when a Java worker writes it, which compaction relies on),
    reading from the beginning and never committing.
    """

    def __init__(
        self,
        topic: str,
        bootstrap_servers: str,
        *,
        producer_config: Mapping[str, Any],
        consumer_config: Mapping[str, Any],
        on_record: RecordCallback,
        client_id: str,
        start_timeout: float = 30.0,
    ) -> None:
        self.topic = topic
        self.bootstrap_servers = bootstrap_servers
        self.client_id = client_id
        self.start_timeout = start_timeout
        self._on_record = on_record
        self._producer_config = clients.producer_config(
            bootstrap_servers,
            client_id,
            {**_PRODUCER_DEFAULTS, **producer_config},
            {
                "acks": "all",
                "max.in.flight.requests.per.connection": 1,
                "partitioner": "murmur2_random",
                "error_cb": self._on_client_error,
            },
        )
        forced_consumer = {
            "enable.auto.commit": False,
            "enable.auto.offset.store": False,
            "auto.offset.reset": "earliest",
            "enable.partition.eof": True,  # how the reader learns where a partition ends (gaps included)
            "error_cb": self._on_client_error,
        }
        # librdkafka's consumer insists on a group id; the log never joins or commits to it.
        self._consumer_config = clients.consumer_config(
            bootstrap_servers,
            client_id,
            client_id,
            {**_CONSUMER_DEFAULTS, **consumer_config},
            forced_consumer,
        )
        self._end_config = {**self._consumer_config, "client.id": f"{client_id}-end-offsets"}

        self._producer: Producer | None = None
        self._consumer: Consumer | None = None
        self._end_consumer: Consumer | None = None
        self._end_lock = threading.Lock()
        self._partitions: list[int] = []

        self._cond = threading.Condition()
        self._positions: dict[int, int] = {}  # partition -> next offset whose record was handed over
        self._fetching: set[int] = set()  # partitions the reader has heard from
        self._pending = 0  # sends not yet acknowledged or failed
        self._stopping = threading.Event()
        self._started = False
        self._reader: threading.Thread | None = None
        self._deliverer: threading.Thread | None = None
        self._outage_lock = threading.Lock()
        self._in_outage = False

    # -- lifecycle ------------------------------------------------------------------------

    @property
    def partitions(self) -> list[int]:
        """The topic's partitions, as found when the log started."""
        return list(self._partitions)

    def start(self) -> None:
        """Assign every partition from the beginning, start tailing, and read to the end.

        Raises ConnectException naming the topic if the topic cannot be found or
        read to its end within ``start_timeout`` seconds.
        """
        if self._started:
            return
        log.info("starting the log of topic %s", self.topic)
        deadline = time.monotonic() + self.start_timeout
        self._stopping.clear()
        self._producer = make_client(Producer, self._producer_config)
        self._consumer = make_client(Consumer, self._consumer_config)
        self._end_consumer = make_client(Consumer, self._end_config)
        self._started = True
        try:
            self._partitions = self._find_partitions(deadline)
            starts = self._start_offsets(deadline)
            with self._cond:
                # Nothing below a partition's log start exists: an empty partition is read to its end.
                self._positions = dict(starts)
                self._fetching = set()
            self._consumer.assign([KafkaTopicPartition(self.topic, p, o) for p, o in starts.items()])
            self._reader = threading.Thread(
                target=self._read_loop, name=f"kafka-log-{self.topic}", daemon=True
            )
            self._deliverer = threading.Thread(
                target=self._delivery_loop, name=f"kafka-log-{self.topic}-deliveries", daemon=True
            )
            self._reader.start()
            self._deliverer.start()
            if not self.read_to_end(max(deadline - time.monotonic(), 0.0)) or not self._wait_fetching(
                deadline
            ):
                raise ConnectException(
                    f"could not read topic {self.topic} to its end within {self.start_timeout:g} s "
                    f"(Kafka at {self.bootstrap_servers})"
                )
        except BaseException:
            self.stop()
            raise
        log.info("read topic %s to its end (%d partitions); tailing it", self.topic, len(self._partitions))

    def _find_partitions(self, deadline: float) -> list[int]:
        # Asked on the reader's client: with the topic in its metadata cache, assign() starts fetching
        # at once instead of at librdkafka's next periodic metadata check (up to a second later).
        assert self._consumer is not None
        problem = "no answer"
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise ConnectException(
                    f"could not look up the partitions of topic {self.topic} at {self.bootstrap_servers} "
                    f"within {self.start_timeout:g} s ({problem}). This could indicate a connectivity issue, "
                    "unavailable topic partitions, or a topic that does not exist."
                )
            try:
                metadata = self._consumer.list_topics(self.topic, timeout=min(remaining, 5.0))
                found = metadata.topics.get(self.topic)
                if found is not None and found.error is None and found.partitions:
                    return sorted(found.partitions)
                problem = (
                    str(found.error) if found is not None and found.error is not None else "no partitions"
                )
            except KafkaException as exc:
                problem = str(exc.args[0])
            time.sleep(min(_RETRY_S * 5, max(deadline - time.monotonic(), 0.0)))

    def stop(self, timeout: float = 5.0) -> None:
        """Send what is queued (for up to ``timeout`` s), then stop both threads and close the clients.

        Writes still unacknowledged after that fail with KafkaLogWriteError.
        """
        if not self._started:
            return
        self._started = False
        producer = self._producer
        delivering = producer is not None and self._deliverer is not None and self._deliverer.is_alive()
        if producer is not None and delivering and not self._wait_pending(timeout):
            log.warning("stopping the log of topic %s with unacknowledged writes; they fail", self.topic)
            producer.purge()
            self._wait_pending(1.0)
        self._stopping.set()
        with self._cond:
            self._cond.notify_all()  # read_to_end callers give up
        for thread in (self._reader, self._deliverer):
            if thread is not None and thread is not threading.current_thread():
                thread.join(10.0)
        if producer is not None:
            producer.purge()
            producer.poll(0)  # fail whatever is left, if the delivery thread never ran
        locked = self._end_lock.acquire(timeout=5.0)  # a watermark query in progress ends first
        try:
            for consumer in (self._consumer, self._end_consumer):
                if consumer is not None:
                    try:
                        consumer.close()
                    except (KafkaException, RuntimeError) as exc:
                        log.debug("closing a consumer of topic %s: %s", self.topic, exc)
            self._end_consumer = None
        finally:
            if locked:
                self._end_lock.release()
        self._reader = self._deliverer = None
        self._producer = self._consumer = self._end_consumer = None
        log.info("stopped the log of topic %s", self.topic)

    # -- writing --------------------------------------------------------------------------

    def send(self, key: bytes | None, value: bytes | None) -> Future[tuple[int, int]]:
        """Queue one record (``value`` None is a tombstone); the future holds (partition, offset) once
        acknowledged by all in-sync replicas, or a KafkaLogWriteError."""
        future: Future[tuple[int, int]] = Future()
        producer = self._producer
        if producer is None or not self._started:
            future.set_exception(ConnectException(f"the log of topic {self.topic} is not running"))
            return future

        def delivered(err: KafkaError | None, msg: Message) -> None:
            if err is None:
                self._connected()
                future.set_result((msg.partition() or 0, msg.offset() or 0))
            else:
                future.set_exception(KafkaLogWriteError(self.topic, err))
            with self._cond:
                self._pending -= 1
                self._cond.notify_all()

        with self._cond:
            self._pending += 1
        while True:
            try:
                producer.produce(self.topic, value=value, key=key, on_delivery=delivered)
                return future
            except BufferError:
                # The local queue is full: the delivery thread drains it as the broker acknowledges.
                if self._stopping.is_set():
                    error = ConnectException(f"the log of topic {self.topic} stopped")
                    break
                time.sleep(0.005)
            except KafkaException as exc:
                error = KafkaLogWriteError(self.topic, exc.args[0])
                break
        with self._cond:
            self._pending -= 1
            self._cond.notify_all()
        future.set_exception(error)
        return future

    def flush(self, timeout: float) -> None:
        """Wait until every record sent so far is acknowledged or failed.

        Raises ConnectException if that takes longer than ``timeout`` seconds."""
        if not self._wait_pending(timeout):
            raise ConnectException(
                f"writes to topic {self.topic} were not acknowledged within {timeout:g} s "
                f"(Kafka at {self.bootstrap_servers})"
            )

    def _wait_pending(self, timeout: float) -> bool:
        deadline = time.monotonic() + timeout
        with self._cond:
            while self._pending > 0:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    return False
                self._cond.wait(remaining)
        return True

    def _delivery_loop(self) -> None:
        producer = self._producer
        assert producer is not None
        while not self._stopping.is_set():
            try:
                producer.poll(_POLL_S)
            except Exception:  # a callback raised: keep delivering the others
                log.exception("delivery callback for topic %s failed", self.topic)
            self._serve_end_consumer()

    def _serve_end_consumer(self) -> None:
        """The end-offsets client never fetches, but its errors and log lines wait in its queue until
        someone polls it: do so now unless a watermark query is using it (that one polls afterwards)."""
        if self._end_lock.acquire(blocking=False):
            try:
                if self._end_consumer is not None:
                    self._end_consumer.poll(0)
            finally:
                self._end_lock.release()

    # -- reading --------------------------------------------------------------------------

    def read_to_end(self, timeout: float) -> bool:
        """Block until every record below the end offsets at call time has been passed to ``on_record``.

        Waits for this log's own unacknowledged writes first (as Kafka's
        ``readToEnd`` flushes), so they are included. False if that did not
        happen within ``timeout`` seconds (Kafka unreachable, or the log
        stopped). Records written after the call may or may not have been
        passed on too.
        """
        if not self._started:
            raise ConnectException(f"the log of topic {self.topic} is not running")
        deadline = time.monotonic() + timeout
        if not self._wait_pending(timeout):
            return False
        ends = self._end_offsets(deadline)
        if ends is None:
            return False
        with self._cond:
            while not all(self._positions.get(p, 0) >= end for p, end in ends.items()):
                remaining = deadline - time.monotonic()
                if remaining <= 0 or self._stopping.is_set():
                    return False
                self._cond.wait(remaining)
        return True

    def _wait_fetching(self, deadline: float) -> bool:
        """Wait until the reader has heard from every partition (a record or its end), so that new
        records in any of them are tailed within milliseconds from now on."""
        with self._cond:
            while not self._fetching.issuperset(self._partitions):
                remaining = deadline - time.monotonic()
                if remaining <= 0 or self._stopping.is_set():
                    return False
                self._cond.wait(remaining)
        return True

    def _start_offsets(self, deadline: float) -> dict[int, int]:
        offsets = self._watermarks(deadline, 0)
        if offsets is None:
            raise ConnectException(
                f"could not look up the offsets of topic {self.topic} at {self.bootstrap_servers} "
                f"within {self.start_timeout:g} s"
            )
        return offsets

    def _end_offsets(self, deadline: float) -> dict[int, int] | None:
        """partition -> high watermark, or None if Kafka did not answer before ``deadline``."""
        return self._watermarks(deadline, 1)

    def _watermarks(self, deadline: float, which: int) -> dict[int, int] | None:
        """partition -> low (``which`` 0) or high (1) watermark; None if Kafka did not answer in time."""
        found: dict[int, int] = {}
        with self._end_lock:
            consumer = self._end_consumer
            if consumer is None:
                return None
            for partition in self._partitions:
                while True:
                    remaining = deadline - time.monotonic()
                    if remaining <= 0 or self._stopping.is_set():
                        return None
                    try:
                        # In short steps, so that stop() does not wait for a query to a broker that is away.
                        watermarks = consumer.get_watermark_offsets(
                            KafkaTopicPartition(self.topic, partition),
                            timeout=min(remaining, 1.0),
                            cached=False,
                        )
                        if watermarks is None:
                            raise KafkaException(KafkaError(KafkaError._TIMED_OUT))
                        found[partition] = watermarks[which]
                        break
                    except KafkaException as exc:
                        if exc.args[0].code() != KafkaError._TIMED_OUT:  # not just a short deadline
                            self._lost(exc.args[0])
                        time.sleep(min(_RETRY_S, max(deadline - time.monotonic(), 0.0)))
                    finally:
                        consumer.poll(0)
        self._connected()
        return found

    def _read_loop(self) -> None:
        consumer = self._consumer
        assert consumer is not None
        while not self._stopping.is_set():
            try:
                first = consumer.poll(_POLL_S)
                if first is None:
                    continue
                # Whatever else is already fetched, without waiting for more.
                batch = [first, *consumer.consume(num_messages=_BATCH, timeout=0)]
            except KafkaException as exc:
                log.warning("reading topic %s failed: %s; retrying", self.topic, exc)
                time.sleep(_RETRY_S)
                continue
            self._handle(batch)

    def _handle(self, batch: list[Message]) -> None:
        progress: dict[int, int] = {}
        for msg in batch:
            partition = msg.partition()
            offset = msg.offset()
            err = msg.error()
            if err is not None:
                if err.code() == KafkaError._PARTITION_EOF and partition is not None and offset is not None:
                    # The end of the partition, past any offsets without records (compacted away, markers).
                    self._connected()
                    progress[partition] = max(progress.get(partition, 0), offset)
                else:
                    self._on_client_error(err)
                continue
            if partition is None or offset is None:
                continue
            self._connected()
            try:
                self._on_record(msg.key(), msg.value(), partition, offset)
            except Exception:
                log.exception("handling record %d of %s-%d failed; skipped", offset, self.topic, partition)
            progress[partition] = max(progress.get(partition, 0), offset + 1)
        if progress:
            with self._cond:
                self._fetching.update(progress)
                for partition, offset in progress.items():
                    if offset > self._positions.get(partition, 0):
                        self._positions[partition] = offset
                self._cond.notify_all()

    # -- outages --------------------------------------------------------------------------

    def _on_client_error(self, err: KafkaError) -> None:
        if self._stopping.is_set():
            log.debug("client of topic %s while stopping: %s", self.topic, err.str())
            return
        if err.code() in _OUTAGE_ERRORS:
            self._lost(err)
        elif err.fatal():
            log.error("client of topic %s failed: %s", self.topic, err.str())
        else:
            log.warning("client of topic %s: %s", self.topic, err.str())

    def _lost(self, err: KafkaError) -> None:
        with self._outage_lock:
            if self._in_outage:
                return
            self._in_outage = True
        log.warning(
            "lost Kafka at %s for topic %s (%s); retrying until it is back",
            self.bootstrap_servers,
            self.topic,
            err.str(),
        )

    def _connected(self) -> None:
        if not self._in_outage:
            return
        with self._outage_lock:
            if not self._in_outage:
                return
            self._in_outage = False
        log.info("reached Kafka at %s again for topic %s", self.bootstrap_servers, self.topic)
