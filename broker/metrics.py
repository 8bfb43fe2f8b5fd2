"""The broker's metrics in Prometheus' exposition format (served on ``metrics.listener``).

Names follow the rules the Prometheus JMX exporter is usually given for Kafka brokers
(``kafka_server_brokertopicmetrics_bytesin_total{topic}``, ...) and kafka_exporter's
for consumer groups (``kafka_consumergroup_lag{consumergroup,topic,partition}``), so
Kafka dashboards work against this broker. Records out per topic has no Kafka MBean;
it is named like its siblings.

Handlers bump plain counters on the event loop; everything about logs and groups is
read at scrape time, which also runs on the event loop (the ASGI app is served there),
so nothing here needs a lock.
"""

from __future__ import annotations

import time
from collections import defaultdict
from collections.abc import Iterator
from typing import TYPE_CHECKING

from prometheus_client import Histogram
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector, CollectorRegistry

from broker.protocol.versions import ApiKey

if TYPE_CHECKING:
    from broker.broker import Broker

# Kafka's request latencies run from well under a millisecond (metadata) to the
# fetch.max.wait.ms of a long poll (500 ms by default), and beyond for a slow disk.
_LATENCY_BUCKETS = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)


class BrokerMetrics:
    """Counters the request path updates; one per broker (several may share a process)."""

    def __init__(self) -> None:
        self.registry = CollectorRegistry(auto_describe=False)
        self.bytes_in: defaultdict[str, int] = defaultdict(int)
        self.messages_in: defaultdict[str, int] = defaultdict(int)
        self.bytes_out: defaultdict[str, int] = defaultdict(int)
        self.messages_out: defaultdict[str, int] = defaultdict(int)
        self.request_time = Histogram(
            "kafka_network_requestmetrics_totaltime_seconds",
            "Time from a request's arrival to its response, per API (long polls included).",
            ["request"],
            buckets=_LATENCY_BUCKETS,
            registry=self.registry,
        )
        self._api_names = {int(k): _request_name(k) for k in ApiKey}
        # Each API's histogram child, looked up once: ``labels()`` takes a lock and builds
        # a key on every call, and this runs for every request.
        self._request_children: dict[int, Histogram] = {}

    def produced(self, topic: str, size: int, records: int) -> None:
        self.bytes_in[topic] += size
        self.messages_in[topic] += records

    def fetched(self, topic: str, size: int, records: int) -> None:
        self.bytes_out[topic] += size
        self.messages_out[topic] += records

    def request_done(self, api_key: int, started: float) -> None:
        child = self._request_children.get(api_key)
        if child is None:
            name = self._api_names.get(api_key, str(api_key))
            child = self._request_children[api_key] = self.request_time.labels(name)
        child.observe(time.perf_counter() - started)

    def attach(self, broker: Broker) -> None:
        self.registry.register(_BrokerCollector(self, broker))


def _request_name(key: ApiKey) -> str:
    # Kafka's request label spells APIs in CamelCase: Produce, FetchConsumer..., ApiVersions.
    return "".join(part.title() for part in key.name.split("_"))


class _BrokerCollector(Collector):
    def __init__(self, metrics: BrokerMetrics, broker: Broker) -> None:
        self.metrics = metrics
        self.broker = broker

    def collect(self) -> Iterator[Metric]:
        m = self.metrics
        for name, doc, values in (
            ("kafka_server_brokertopicmetrics_bytesin", "Bytes produced to the topic.", m.bytes_in),
            ("kafka_server_brokertopicmetrics_messagesin", "Records produced to the topic.", m.messages_in),
            ("kafka_server_brokertopicmetrics_bytesout", "Bytes fetched from the topic.", m.bytes_out),
            (
                "kafka_server_brokertopicmetrics_messagesout",
                "Records fetched from the topic.",
                m.messages_out,
            ),
        ):
            family = CounterMetricFamily(name, doc, labels=["topic"])
            for topic, value in sorted(values.items()):
                family.add_metric([topic], value)
            yield family
        yield from self._partitions_and_groups()
        if self.broker.authorizer is not None:
            yield from self.broker.authorizer.collect()

    def _partitions_and_groups(self) -> Iterator[Metric]:
        logs = self.broker.logs.logs
        end = GaugeMetricFamily(
            "kafka_topic_partition_current_offset",
            "The partition's log end offset.",
            labels=["topic", "partition"],
        )
        start = GaugeMetricFamily(
            "kafka_topic_partition_oldest_offset",
            "The partition's log start offset.",
            labels=["topic", "partition"],
        )
        for (topic, partition), plog in sorted(logs.items()):
            end.add_metric([topic, str(partition)], plog.next_offset)
            start.add_metric([topic, str(partition)], plog.log_start_offset)
        yield end
        yield start
        labels = ["consumergroup", "topic", "partition"]
        current = GaugeMetricFamily(
            "kafka_consumergroup_current_offset", "The group's committed offset.", labels=labels
        )
        lag = GaugeMetricFamily(
            "kafka_consumergroup_lag", "Records between the committed offset and the log end.", labels=labels
        )
        total = GaugeMetricFamily(
            "kafka_consumergroup_lag_sum",
            "The group's lag over all its partitions.",
            labels=["consumergroup"],
        )
        members = GaugeMetricFamily(
            "kafka_consumergroup_members", "The group's members.", labels=["consumergroup"]
        )
        for group_id, group in sorted(self.broker.groups.groups.items()):
            group_lag = 0
            for (topic, partition), entry in sorted(group.offsets.items()):
                committed_log = logs.get((topic, partition))
                if committed_log is None:
                    continue  # committed for a partition that no longer exists
                behind = max(committed_log.next_offset - entry.offset, 0)
                group_lag += behind
                current.add_metric([group_id, topic, str(partition)], entry.offset)
                lag.add_metric([group_id, topic, str(partition)], behind)
            total.add_metric([group_id], group_lag)
            members.add_metric([group_id], len(group.members))
        yield from (current, lag, total, members)
