"""The dedicated-mode runner on two in-process brokers: the herders' group leader writes the
connector configs (a restart with an edited file updates them, a follower leaves them
alone, a new leader writes its own), ``--clusters`` picks the herders by target."""

from __future__ import annotations

from contextlib import ExitStack
from pathlib import Path

from tests.mirror_maker.support import CLASSES, RunningMirrorMaker, mm2_values
from tests.support import embedded_broker, wait_until

# The runner's lifecycle needs any one connector; the heartbeat connector is the lightest.
HEARTBEATS = (CLASSES[1],)


def test_the_leader_writes_the_configs_and_a_restart_updates_them(tmp_path: Path) -> None:
    with embedded_broker(tmp_path / "a") as a, embedded_broker(tmp_path / "b") as b:
        values = mm2_values(a.bootstrap, b.bootstrap, **{"A->B.enabled": "true", "A->B.topics": "first.*"})
        with RunningMirrorMaker(values, targets=["B"], classes=HEARTBEATS) as node:
            assert [str(h.flow) for h in node.mm.herders] == ["A->B"]
            desired = node.mm.herders[0].connectors["MirrorHeartbeatConnector"]
            wait_until(
                lambda: node.stored_config("A->B", "MirrorHeartbeatConnector") == desired,
                message="the connector config in mm2-configs.A.internal",
            )
            wait_until(lambda: node.connector_state("A->B", "MirrorHeartbeatConnector") == "RUNNING")
        values["A->B.topics"] = "second.*"
        with RunningMirrorMaker(values, targets=["B"], classes=HEARTBEATS) as node:
            wait_until(
                lambda: (
                    (node.stored_config("A->B", "MirrorHeartbeatConnector") or {}).get("topics") == "second.*"
                ),
                message="the edited topics in the stored config",
            )


def test_only_the_leader_writes_and_a_new_leader_writes_its_own(tmp_path: Path) -> None:
    with embedded_broker(tmp_path / "a") as a, embedded_broker(tmp_path / "b") as b, ExitStack() as stack:
        # A departed node's work moves at once (Kafka's default delay is 5 minutes).
        values = mm2_values(
            a.bootstrap, b.bootstrap, **{"B.scheduled.rebalance.max.delay.ms": "0", "A->B.topics": "first"}
        )
        first = RunningMirrorMaker(values, targets=["B"], classes=HEARTBEATS).__enter__()
        stop_first = stack.enter_context(ExitStack())
        stop_first.push(first)
        wait_until(lambda: first.stored_config("A->B", "MirrorHeartbeatConnector") is not None)
        # A second node with an edited file joins as a follower: it leaves the configs alone.
        second = stack.enter_context(
            RunningMirrorMaker({**values, "A->B.topics": "second"}, targets=["B"], classes=HEARTBEATS)
        )
        leader, follower = first.mm.runtimes[0].herder, second.mm.runtimes[0].herder
        wait_until(
            lambda: follower.assignment is not None and not follower.rebalance_pending,
            message="the second node to join the group",
        )
        assert leader.is_leader and not follower.is_leader
        assert (second.stored_config("A->B", "MirrorHeartbeatConnector") or {})["topics"] == "first"
        # The first node leaves: the second leads, and writes its file's config.
        stop_first.close()
        wait_until(
            lambda: (
                (second.stored_config("A->B", "MirrorHeartbeatConnector") or {}).get("topics") == "second"
            ),
            message="the new leader's config",
        )
        assert follower.is_leader
        wait_until(lambda: second.connector_state("A->B", "MirrorHeartbeatConnector") == "RUNNING")


def test_a_connector_config_the_worker_refuses_fails_mirror_maker(tmp_path: Path) -> None:
    with embedded_broker(tmp_path / "a") as a, embedded_broker(tmp_path / "b") as b:
        values = mm2_values(a.bootstrap, b.bootstrap, **{"A->B.tasks.max": "0"})
        with RunningMirrorMaker(values, targets=["B"], classes=HEARTBEATS) as node:
            failed = node.mm.failed
            assert failed is not None
            wait_until(failed.done, message="MirrorMaker to give up on the config")
            message = str(failed.result())
            assert message.startswith("A->B: cannot configure MirrorHeartbeatConnector:")
            assert "tasks.max" in message
            assert node.stored_config("A->B", "MirrorHeartbeatConnector") is None
