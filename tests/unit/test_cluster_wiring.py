"""The small pieces that let one service reach a cluster: several NATS URLs, several gRPC replicas, LSNs,
and the cluster's security defaults."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from services.cli.cluster import ClusterStack
from services.cli.stack import Stack
from services.cli.stack_spec import StackSpec
from services.common.grpc_client import channel_options, replicas_target
from services.common.nats_urls import nats_servers, one_shot_options
from services.memory.core.adapters.standby_reads import lsn_value


def test_a_comma_separated_nats_url_becomes_every_server_in_order() -> None:
    assert nats_servers("nats://a:1, nats://b:2,,nats://c:3") == ["nats://a:1", "nats://b:2", "nats://c:3"]
    assert nats_servers("nats://a:1") == ["nats://a:1"]


def test_a_short_lived_client_may_skip_a_dead_node_only_when_there_are_several() -> None:
    assert one_shot_options("nats://a:1") == {"servers": ["nats://a:1"], "allow_reconnect": False}
    several = one_shot_options("nats://a:1,nats://b:2")
    assert several["servers"] == ["nats://a:1", "nats://b:2"]
    assert several["allow_reconnect"] is True and several["max_reconnect_attempts"] == 1


def test_several_replicas_are_one_round_robin_target() -> None:
    target = replicas_target(["127.0.0.1:5001", "127.0.0.1:5002"])
    assert target == "ipv4:127.0.0.1:5001,127.0.0.1:5002"
    config = dict(channel_options(target))["grpc.service_config"]
    assert json.loads(config) == {"loadBalancingConfig": [{"round_robin": {}}]}
    assert replicas_target(["127.0.0.1:5001"]) == "127.0.0.1:5001"
    assert "grpc.service_config" not in dict(channel_options("127.0.0.1:5001"))


def test_a_replica_list_is_verified_under_its_first_address_not_the_list() -> None:
    # gRPC's default authority for an ipv4: list is the whole list, which no certificate names
    options = dict(channel_options("ipv4:127.0.0.1:5001,127.0.0.1:5002"))
    assert options["grpc.default_authority"] == "127.0.0.1:5001"
    assert "grpc.default_authority" not in dict(channel_options("127.0.0.1:5001"))


def test_the_cluster_turns_tls_on_unless_told_otherwise_and_one_of_each_does_not(tmp_path: Path) -> None:
    assert ClusterStack(StackSpec(data_dir=tmp_path)).spec.tls is True
    assert ClusterStack(StackSpec(data_dir=tmp_path, tls=False)).spec.tls is False
    assert Stack(StackSpec(data_dir=tmp_path)).spec.tls is False
    assert Stack(StackSpec(data_dir=tmp_path, tls=True)).spec.tls is True
    # the cluster starts its own NATS (so makes its users) unless given one by URL
    assert ClusterStack(StackSpec(data_dir=tmp_path)).owns_nats
    assert not ClusterStack(StackSpec(data_dir=tmp_path, nats_url="nats://127.0.0.1:1")).owns_nats


@pytest.mark.parametrize(
    ("lsn", "value"),
    [("0/0", 0), ("0/16B3748", 0x16B3748), ("1/0", 1 << 32), ("16/B374D848", (0x16 << 32) | 0xB374D848)],
)
def test_lsns_compare_as_integers(lsn: str, value: int) -> None:
    assert lsn_value(lsn) == value
