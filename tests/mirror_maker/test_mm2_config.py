"""mm2.properties -> herders: Kafka's MirrorMakerConfig mapping (clusterPairs, workerConfig,
connectorBaseConfig), and the errors for a file that cannot run, naming file, line and key."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from connect.runtime.properties import load
from sluiceway.mirror_maker.config import (
    BYTE_ARRAY_CONVERTER,
    CHECKPOINT_CONNECTOR,
    CONNECTOR_CLASSES,
    HEARTBEAT_CONNECTOR,
    LOCAL_LISTENER,
    SOURCE_CONNECTOR,
    Flow,
    MirrorMakerConfig,
    MirrorMakerConfigError,
    flow_key,
    parse,
)
from sluiceway.mirror_maker.runner import herder_worker_config

BASE = {"clusters": "A, B", "A.bootstrap.servers": "a:9092", "B.bootstrap.servers": "b:9092"}


def config(**extra: str) -> MirrorMakerConfig:
    return parse({**BASE, **extra})


def mm2(values: dict[str, str]) -> MirrorMakerConfig:
    return parse({**BASE, **values})


def herder(c: MirrorMakerConfig, source: str, target: str):  # type: ignore[no-untyped-def]
    return next(h for h in c.herders() if h.flow == Flow(source, target))


# -- flows --------------------------------------------------------------------------------


def test_every_pair_gets_a_herder_by_default_for_heartbeats() -> None:
    c = mm2({})
    assert c.flows() == [Flow("A", "B"), Flow("B", "A")]
    assert [h.enabled for h in c.herders()] == [False, False]


def test_three_clusters_make_six_ordered_pairs() -> None:
    c = parse({"clusters": "A, B, C", **{f"{x}.bootstrap.servers": f"{x}:1" for x in "ABC"}})
    assert len(c.flows()) == 6
    assert Flow("C", "A") in c.flows() and Flow("A", "A") not in c.flows()


def test_heartbeats_off_leaves_only_the_enabled_flows() -> None:
    c = mm2({"emit.heartbeats.enabled": "false", "A->B.enabled": "true"})
    assert c.flows() == [Flow("A", "B")]
    assert c.herders()[0].enabled


def test_heartbeats_per_pair_override_the_top_level() -> None:
    c = mm2({"emit.heartbeats.enabled": "false", "B->A.emit.heartbeats.enabled": "true"})
    assert c.flows() == [Flow("B", "A")]
    c = mm2({"A->B.emit.heartbeats.enabled": "false"})
    assert c.flows() == [Flow("B", "A")]


def test_flags_are_case_insensitive_and_trimmed() -> None:
    c = mm2({"A->B.enabled": " TRUE ", "emit.heartbeats.enabled": "False"})
    assert c.flows() == [Flow("A", "B")]


def test_no_flow_at_all_is_an_error() -> None:
    with pytest.raises(MirrorMakerConfigError, match="no source->target replication flows"):
        mm2({"emit.heartbeats.enabled": "false"}).herders()


def test_targets_select_the_herders_this_node_runs() -> None:
    c = parse({"clusters": "A, B, C", **{f"{x}.bootstrap.servers": f"{x}:1" for x in "ABC"}})
    assert {h.flow for h in c.herders(["B"])} == {Flow("A", "B"), Flow("C", "B")}
    assert len(c.herders([])) == 6
    with pytest.raises(MirrorMakerConfigError, match=r"--clusters D: not among the clusters"):
        c.herders(["D"])


def test_targets_with_no_flow_into_them_is_an_error() -> None:
    c = mm2({"emit.heartbeats.enabled": "false", "A->B.enabled": "true"})
    with pytest.raises(MirrorMakerConfigError, match="no source->target replication flows into A"):
        c.herders(["A"])


def test_duplicate_aliases_count_once() -> None:
    assert mm2({"clusters": "A, B, A"}).clusters == ("A", "B")


# -- the worker ---------------------------------------------------------------------------


def test_worker_defaults_per_flow() -> None:
    w = herder(config(), "A", "B").worker
    assert w["bootstrap.servers"] == "b:9092"
    assert w["group.id"] == "A-mm2"
    assert w["client.id"] == "A->B"
    assert w["config.storage.topic"] == "mm2-configs.A.internal"
    assert w["offset.storage.topic"] == "mm2-offsets.A.internal"
    assert w["status.storage.topic"] == "mm2-status.A.internal"
    for converter in ("key.converter", "value.converter", "header.converter"):
        assert w[converter] == BYTE_ARRAY_CONVERTER
    assert w["listeners"] == LOCAL_LISTENER
    assert herder(config(), "B", "A").worker["group.id"] == "B-mm2"


def test_worker_takes_the_target_clusters_settings_and_client_roles() -> None:
    w = herder(
        mm2({"B.producer.acks": "all", "B.offset.flush.interval.ms": "500", "A.x": "1"}), "A", "B"
    ).worker
    assert w["producer.acks"] == "all"
    assert w["offset.flush.interval.ms"] == "500"
    assert w["producer.bootstrap.servers"] == w["consumer.bootstrap.servers"] == "b:9092"
    assert w["admin.bootstrap.servers"] == "b:9092"
    assert "x" not in w


def test_worker_passes_through_the_top_level_worker_keys() -> None:
    top = {
        "config.storage.replication.factor": "1",
        "offset.storage.replication.factor": "1",
        "status.storage.replication.factor": "1",
        "offset.storage.partitions": "5",
        "key.converter": "org.apache.kafka.connect.storage.StringConverter",
        "value.converter.schemas.enable": "false",
        "header.converter": "h",
        "task.shutdown.graceful.timeout.ms": "1000",
        "tasks.max": "2",
        "worker.sync.timeout.ms": "100",
        "replication.policy.separator": "_",
        "config.providers": "file",
        "config.providers.file.class": "F",
    }
    w = herder(mm2(top), "A", "B").worker
    for key, value in top.items():
        assert w[key] == value, key


def test_worker_ignores_other_top_level_keys() -> None:
    w = herder(mm2({"offset.flush.interval.ms": "1", "topics": "x", "group.id": "g"}), "A", "B").worker
    assert "offset.flush.interval.ms" not in w and "topics" not in w
    assert w["group.id"] == "A-mm2"


def test_worker_group_and_topics_can_be_set_for_the_target() -> None:
    w = herder(mm2({"B.group.id": "mine", "B.config.storage.topic": "cfg"}), "A", "B").worker
    assert w["group.id"] == "mine" and w["config.storage.topic"] == "cfg"


def test_top_level_security_reaches_every_role_unless_the_cluster_sets_its_own() -> None:
    c = mm2({"security.protocol": "SSL", "ssl.truststore.location": "/t", "B.security.protocol": "SASL_SSL"})
    w = herder(c, "A", "B").worker
    assert w["security.protocol"] == "SASL_SSL"
    assert w["producer.security.protocol"] == "SASL_SSL"
    assert w["ssl.truststore.location"] == w["admin.ssl.truststore.location"] == "/t"
    assert herder(c, "B", "A").worker["consumer.security.protocol"] == "SSL"


def test_a_role_setting_of_the_cluster_wins_over_its_common_one() -> None:
    w = herder(mm2({"B.producer.bootstrap.servers": "p:1"}), "A", "B").worker
    assert w["producer.bootstrap.servers"] == "p:1"
    assert w["consumer.bootstrap.servers"] == "b:9092"


def test_top_level_bootstrap_servers_serves_a_cluster_without_its_own() -> None:
    c = parse({"clusters": "A, B", "bootstrap.servers": "x:1", "A.bootstrap.servers": "a:1"})
    assert herder(c, "B", "A").worker["bootstrap.servers"] == "a:1"
    assert herder(c, "A", "B").worker["bootstrap.servers"] == "x:1"
    source = herder(c, "B", "A").connectors["MirrorSourceConnector"]
    assert source["source.cluster.bootstrap.servers"] == "x:1"
    assert source["target.cluster.bootstrap.servers"] == "a:1"
    assert "bootstrap.servers" not in source


def test_internal_rest_listens_on_the_listeners_host_with_an_ephemeral_port() -> None:
    c = mm2({"dedicated.mode.enable.internal.rest": "true", "listeners": "https://node1:8083,http://x:1"})
    w = herder(c, "A", "B").worker
    assert w["listeners"] == "https://node1:0"
    c = mm2({"dedicated.mode.enable.internal.rest": "true", "rest.advertised.host.name": "n1"})
    assert herder(c, "A", "B").worker["listeners"] == "http://:0"
    assert herder(c, "A", "B").worker["rest.advertised.host.name"] == "n1"
    assert herder(mm2({"listeners": "http://h:1"}), "A", "B").worker["listeners"] == LOCAL_LISTENER


# -- the connectors -----------------------------------------------------------------------


def test_three_connectors_under_kafkas_class_and_simple_names() -> None:
    h = herder(mm2({"A->B.enabled": "true"}), "A", "B")
    assert list(h.connectors) == [
        "MirrorSourceConnector",
        "MirrorHeartbeatConnector",
        "MirrorCheckpointConnector",
    ]
    assert [c["connector.class"] for c in h.connectors.values()] == [
        SOURCE_CONNECTOR,
        HEARTBEAT_CONNECTOR,
        CHECKPOINT_CONNECTOR,
    ]
    assert all(c["name"] == name for name, c in h.connectors.items())
    assert CONNECTOR_CLASSES[0] == "org.apache.kafka.connect.mirror.MirrorSourceConnector"


def test_connector_aliases_and_cluster_settings() -> None:
    c = mm2(
        {"A->B.enabled": "true", "A.consumer.fetch.min.bytes": "1", "B.producer.acks": "all", "A.x.y": "z"}
    )
    s = herder(c, "A", "B").connectors["MirrorSourceConnector"]
    assert s["source.cluster.alias"] == "A" and s["target.cluster.alias"] == "B"
    assert s["source.cluster.bootstrap.servers"] == "a:9092"
    assert s["target.cluster.bootstrap.servers"] == "b:9092"
    assert s["source.consumer.fetch.min.bytes"] == "1"
    assert s["source.consumer.bootstrap.servers"] == "a:9092"
    assert s["target.producer.acks"] == "all"
    assert s["target.admin.bootstrap.servers"] == "b:9092"
    assert s["source.cluster.x.y"] == "z"
    assert "bootstrap.servers" not in s
    assert s["enabled"] == "true"


def test_top_level_connector_keys_reach_every_flow_and_others_do_not() -> None:
    c = mm2(
        {
            "replication.factor": "1",
            "offset-syncs.topic.replication.factor": "1",
            "checkpoints.topic.replication.factor": "1",
            "heartbeats.topic.replication.factor": "1",
            "topics": "orders.*",
            "groups.exclude": "g",
            "emit.heartbeats.interval.seconds": "1",
            "sync.group.offsets.enabled": "true",
            "replication.policy.class": "org.apache.kafka.connect.mirror.IdentityReplicationPolicy",
            "security.protocol": "PLAINTEXT",
            "sasl.mechanism": "PLAIN",
            "offset.storage.replication.factor": "1",
            "A->B.enabled": "true",
            "unknown.key": "x",
        }
    )
    for h in c.herders():
        for conn in h.connectors.values():
            assert conn["replication.factor"] == "1"
            assert conn["heartbeats.topic.replication.factor"] == "1"
            assert conn["checkpoints.topic.replication.factor"] == "1"
            assert conn["offset-syncs.topic.replication.factor"] == "1"
            assert conn["topics"] == "orders.*" and conn["groups.exclude"] == "g"
            assert conn["emit.heartbeats.interval.seconds"] == "1"
            assert conn["sync.group.offsets.enabled"] == "true"
            assert conn["replication.policy.class"].endswith("IdentityReplicationPolicy")
            assert conn["security.protocol"] == "PLAINTEXT" and conn["sasl.mechanism"] == "PLAIN"
            assert "offset.storage.replication.factor" not in conn
            assert "unknown.key" not in conn
            assert "clusters" not in conn


def test_per_flow_overrides_win_and_stay_in_their_flow() -> None:
    c = mm2(
        {
            "topics": ".*",
            "A->B.enabled": "true",
            "A->B.topics": "orders.*, payments",
            "A->B.emit.checkpoints.interval.seconds": "10",
            "A->B.source.cluster.alias": "primary",
            "A->B.target.producer.acks": "1",
            "A->B.name": "ignored-by-nobody",
            "B.producer.acks": "all",
        }
    )
    s = herder(c, "A", "B").connectors["MirrorSourceConnector"]
    assert s["topics"] == "orders.*, payments"
    assert s["emit.checkpoints.interval.seconds"] == "10"
    assert s["source.cluster.alias"] == "primary"
    assert s["target.producer.acks"] == "1"
    assert s["name"] == "ignored-by-nobody"  # Kafka's order: the flow's keys come last
    r = herder(c, "B", "A").connectors["MirrorSourceConnector"]
    assert r["topics"] == ".*" and "emit.checkpoints.interval.seconds" not in r


def test_a_disabled_flow_disables_its_connectors_and_keeps_heartbeats() -> None:
    c = mm2({"A->B.enabled": "true"})
    assert all(conn["enabled"] == "true" for conn in herder(c, "A", "B").connectors.values())
    back = herder(c, "B", "A")
    assert not back.enabled
    assert all(conn["enabled"] == "false" for conn in back.connectors.values())
    assert back.connectors["MirrorHeartbeatConnector"]["connector.class"] == HEARTBEAT_CONNECTOR
    assert (
        herder(mm2({"B->A.enabled": "false"}), "B", "A").connectors["MirrorSourceConnector"]["enabled"]
        == "false"
    )


def test_top_level_enabled_is_a_connector_key_too() -> None:
    # Kafka keeps a top-level "enabled" among the connector keys: every flow's connectors
    # take it (the herders are still chosen by the pairs' own keys).
    c = mm2({"enabled": "true"})
    assert herder(c, "A", "B").connectors["MirrorSourceConnector"]["enabled"] == "true"
    assert not herder(c, "A", "B").enabled


def test_other_connector_classes_keep_the_mapping() -> None:
    h = config().herders(classes=["connectors.mirror.source_connector.MirrorSourceConnector"])[0]
    assert list(h.connectors) == ["MirrorSourceConnector"]
    assert h.connectors["MirrorSourceConnector"]["connector.class"].startswith("connectors.mirror")


def test_dotted_aliases() -> None:
    c = parse(
        {
            "clusters": "us.east, eu",
            "us.east.bootstrap.servers": "u:1",
            "eu.bootstrap.servers": "e:1",
            "us.east->eu.enabled": "true",
            "eu->us.east.topics": "t",
        }
    )
    assert herder(c, "us.east", "eu").enabled
    assert herder(c, "eu", "us.east").connectors["MirrorSourceConnector"]["topics"] == "t"
    assert herder(c, "eu", "us.east").worker["bootstrap.servers"] == "u:1"


def test_flow_key_parts() -> None:
    assert flow_key("A->B.enabled", ["A", "B"]) == ("A", "B", "enabled")
    assert flow_key("A->B.c.enabled", ["A", "B", "B.c"]) == ("A", "B.c", "enabled")
    assert flow_key("A->C.x", ["A", "B"]) == ("A", "C", "x")
    assert flow_key("A.b", ["A"]) is None


@given(
    st.lists(st.from_regex(r"[a-z][a-z0-9_-]{0,6}", fullmatch=True), min_size=2, max_size=4, unique=True),
    st.data(),
)
def test_any_clusters_and_enabled_pairs(aliases: list[str], data: st.DataObject) -> None:
    pairs = [(s, t) for s in aliases for t in aliases if s != t]
    enabled = data.draw(st.sets(st.sampled_from(pairs)))
    heartbeats = data.draw(st.booleans())
    values = {
        "clusters": ",".join(aliases),
        "emit.heartbeats.enabled": str(heartbeats).lower(),
        **{f"{a}.bootstrap.servers": f"{a}:9092" for a in aliases},
        **{f"{s}->{t}.enabled": "true" for s, t in enabled},
    }
    c = parse(values)
    expected = pairs if heartbeats else [p for p in pairs if p in enabled]
    assert [(f.source, f.target) for f in c.flows()] == expected
    if not expected:
        return
    for h in c.herders():
        src, tgt = h.flow.source, h.flow.target
        assert h.enabled == ((src, tgt) in enabled)
        assert h.worker["bootstrap.servers"] == f"{tgt}:9092"
        assert h.worker["group.id"] == f"{src}-mm2"
        for conn in h.connectors.values():
            assert conn["source.cluster.bootstrap.servers"] == f"{src}:9092"
            assert conn["target.cluster.bootstrap.servers"] == f"{tgt}:9092"
            assert conn["enabled"] == str(h.enabled).lower()


# -- errors -------------------------------------------------------------------------------


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "mm2.properties"
    path.write_text(text)
    return path


def parse_file(path: Path) -> MirrorMakerConfig:
    props = load(path)
    return parse(props.values, props.where)


def test_missing_bootstrap_servers_names_file_line_and_key(tmp_path: Path) -> None:
    path = write(tmp_path, "# mm2\nclusters = A, B\nA.bootstrap.servers = a:1\n")
    with pytest.raises(MirrorMakerConfigError) as e:
        parse_file(path)
    assert str(e.value).startswith(f"{path}:2: B.bootstrap.servers: missing")


def test_a_cluster_no_herder_uses_needs_no_bootstrap_servers() -> None:
    c = parse(
        {
            "clusters": "A, B, C",
            "A.bootstrap.servers": "a:1",
            "B.bootstrap.servers": "b:1",
            "emit.heartbeats.enabled": "false",
            "A->B.enabled": "true",
        }
    )
    assert c.flows() == [Flow("A", "B")]


def test_a_flow_naming_an_unknown_cluster(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "clusters = A, B\nA.bootstrap.servers = a:1\nB.bootstrap.servers = b:1\nA->C.enabled = true\n",
    )
    with pytest.raises(MirrorMakerConfigError) as e:
        parse_file(path)
    assert str(e.value) == f"{path}:4: A->C.enabled: cluster 'C' is not one of the clusters (A, B)"


def test_unknown_source_and_self_flows(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "clusters = A, B\nA.bootstrap.servers = a:1\nB.bootstrap.servers = b:1\n"
        "X->B.topics=t\nA->A.enabled=true\n",
    )
    with pytest.raises(MirrorMakerConfigError) as e:
        parse_file(path)
    assert f"{path}:4: X->B.topics: cluster 'X' is not one of the clusters (A, B)" in str(e.value)
    assert f"{path}:5: A->A.enabled: a flow needs two different clusters" in str(e.value)


def test_a_flow_key_without_a_key(tmp_path: Path) -> None:
    with pytest.raises(MirrorMakerConfigError, match=r"A->B: a flow key is written SOURCE->TARGET.key"):
        mm2({"A->B": "x"})


def test_missing_clusters(tmp_path: Path) -> None:
    path = write(tmp_path, "A.bootstrap.servers = a:1\n")
    with pytest.raises(MirrorMakerConfigError, match=rf"^{path}: clusters: missing"):
        parse_file(path)
    with pytest.raises(MirrorMakerConfigError, match="clusters: missing"):
        parse({"clusters": "  "})


def test_bad_aliases() -> None:
    with pytest.raises(MirrorMakerConfigError, match="an empty alias"):
        mm2({"clusters": "A,,B"})
    with pytest.raises(MirrorMakerConfigError, match="cannot contain '->'"):
        mm2({"clusters": "A->B"})


def test_flags_that_are_neither_true_nor_false(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "clusters = A, B\nA.bootstrap.servers = a:1\nB.bootstrap.servers = b:1\n"
        "A->B.enabled = yes\nemit.heartbeats.enabled = 1\n",
    )
    with pytest.raises(MirrorMakerConfigError) as e:
        parse_file(path)
    assert f"{path}:4: A->B.enabled: 'yes' is neither true nor false" in str(e.value)
    assert f"{path}:5: emit.heartbeats.enabled: '1' is neither true nor false" in str(e.value)


def test_every_problem_is_reported_at_once(tmp_path: Path) -> None:
    path = write(tmp_path, "clusters = A, B\nA->C.enabled = true\nB->D.enabled = true\n")
    with pytest.raises(MirrorMakerConfigError) as e:
        parse_file(path)
    assert len(str(e.value).splitlines()) == 2


def test_the_sample_config_runs_both_flows() -> None:
    c = parse_file(Path(__file__).resolve().parents[2] / "config" / "connect-mirror-maker.properties")
    herders = c.herders()
    assert [(str(h.flow), h.enabled) for h in herders] == [("A->B", True), ("B->A", True)]
    assert all(h.worker["config.storage.replication.factor"] == "1" for h in herders)
    assert all(h.connectors["MirrorSourceConnector"]["replication.factor"] == "1" for h in herders)


def test_worker_placeholders_are_resolved_with_the_files_config_providers(tmp_path: Path) -> None:
    secrets = tmp_path / "secrets.properties"
    secrets.write_text("group = from-a-file\n")
    c = mm2(
        {
            "config.providers": "file",
            "config.providers.file.class": "org.apache.kafka.common.config.provider.FileConfigProvider",
            "B.group.id": f"${{file:{secrets}:group}}",
            "A->B.topics": f"${{file:{secrets}:group}}",
        }
    )
    h = herder(c, "A", "B")
    worker = herder_worker_config(c, h)
    assert worker.group_id == "from-a-file"
    # The connectors' placeholders are left to the worker, which has the providers too.
    assert h.connectors["MirrorSourceConnector"]["topics"].startswith("${file:")
    assert h.worker["config.providers.file.class"].endswith("FileConfigProvider")


def test_a_config_provider_without_a_class(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "clusters = A, B\nA.bootstrap.servers = a:1\nB.bootstrap.servers = b:1\nconfig.providers = file\n",
    )
    c = parse_file(path)
    with pytest.raises(MirrorMakerConfigError, match=rf"^{path}:4: config.providers.file.class: missing"):
        herder_worker_config(c, c.herders()[0])
