"""The NetworkPolicies allow exactly the calls the design allows, and nothing else.

The graph is derived from the rendered objects: a call A → B on port P is open only when A's
egress admits B:P and B's ingress admits A:P (both sides, as a CNI enforces them), after a
namespace-wide default deny. The expected graph is DESIGN.md's table of who calls whom.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.deploy.manifests import OVERLAYS, by_kind, render

PODS = {
    "serving": {"app.kubernetes.io/name": "memloop", "app.kubernetes.io/component": "serving"},
    "serving-loop": {"app.kubernetes.io/name": "memloop", "app.kubernetes.io/component": "serving-loop"},
    "policy": {"app.kubernetes.io/name": "memloop", "app.kubernetes.io/component": "policy"},
    "memory": {"app.kubernetes.io/name": "memloop", "app.kubernetes.io/component": "memory"},
    "relay": {"app.kubernetes.io/name": "memloop", "app.kubernetes.io/component": "relay"},
    "worker": {"app.kubernetes.io/name": "memloop", "app.kubernetes.io/component": "worker"},
    "console": {"app.kubernetes.io/name": "memloop", "app.kubernetes.io/component": "console"},
    "nats": {"app.kubernetes.io/name": "nats", "app.kubernetes.io/instance": "nats"},
    "serving-db": {"cnpg.io/cluster": "memloop-serving-db"},
    "memory-db": {"cnpg.io/cluster": "memloop-memory-db"},
}

# Who calls whom (DESIGN.md): serving never calls memory, policy calls nothing. The worker and
# memory call serving only through its loop-only process (MEMLOOP_SERVING_LOOP_TARGET).
EXPECTED_CALLS = {
    ("serving", "serving-db", 5432),
    ("serving-loop", "serving-db", 5432),
    ("relay", "serving-db", 5432),
    ("relay", "nats", 4222),
    ("worker", "serving-loop", 50056),
    ("worker", "policy", 50052),
    ("worker", "memory", 50056),  # memory's ingestion process (issue 15)
    ("worker", "nats", 4222),
    ("memory", "serving-loop", 50056),
    ("memory", "nats", 4222),
    ("memory", "memory-db", 5432),
    ("console", "serving", 50051),
    ("console", "memory", 50053),
    # infrastructure inside the namespace: NATS routes, PostgreSQL streaming replication
    ("nats", "nats", 6222),
    ("serving-db", "serving-db", 5432),
    ("memory-db", "memory-db", 5432),
}
# From outside the namespace: agents (namespaces labelled memloop.io/agents) and the ingress.
EXPECTED_FROM_OUTSIDE = {
    ("memloop.io/agents=true", "serving", 50051),
    ("memloop.io/agents=true", "memory", 50053),
    ("kubernetes.io/metadata.name=ingress-nginx", "console", 8080),
}


def _selects(selector: dict[str, Any], labels: dict[str, str]) -> bool:
    wanted = selector.get("matchLabels", {})
    assert "matchExpressions" not in selector, "extend the test before using matchExpressions"
    return all(labels.get(k) == v for k, v in wanted.items())


def _ports(rule: dict[str, Any]) -> set[int]:
    return {int(p["port"]) for p in rule.get("ports", [])}


def _peers(rule: dict[str, Any], key: str) -> tuple[set[str], set[str]]:
    """(pods in the namespace, outside namespaces) a rule's `from`/`to` admits."""
    pods: set[str] = set()
    outside: set[str] = set()
    for peer in rule.get(key, []):
        if "namespaceSelector" in peer:
            labels = peer["namespaceSelector"]["matchLabels"]
            outside |= {f"{k}={v}" for k, v in labels.items()}
        elif "podSelector" in peer:
            pods |= {name for name, labels in PODS.items() if _selects(peer["podSelector"], labels)}
        else:
            raise AssertionError(f"unsupported peer {peer}")
    return pods, outside


def _graph(objects: list[dict[str, Any]]) -> tuple[set[tuple[str, str, int]], set[tuple[str, str, int]]]:
    policies = list(by_kind(objects, "NetworkPolicy").values())
    egress: set[tuple[str, str, int]] = set()
    ingress: set[tuple[str, str, int]] = set()
    outside_in: set[tuple[str, str, int]] = set()
    for policy in policies:
        spec = policy["spec"]
        selected = [name for name, labels in PODS.items() if _selects(spec["podSelector"], labels)]
        for rule in spec.get("egress", []):
            if "to" not in rule:
                continue  # destination "anywhere" on given ports: only the databases' API access
            targets, _ = _peers(rule, "to")
            egress |= {(src, dst, port) for src in selected for dst in targets for port in _ports(rule)}
        for rule in spec.get("ingress", []):
            sources, outside = _peers(rule, "from")
            ingress |= {(src, dst, port) for dst in selected for src in sources for port in _ports(rule)}
            outside_in |= {(ns, dst, port) for dst in selected for ns in outside for port in _ports(rule)}
    return egress & ingress, outside_in


@pytest.fixture(scope="module", params=OVERLAYS)
def objects(request: pytest.FixtureRequest) -> list[dict[str, Any]]:
    return render(request.param)


def test_everything_in_the_namespace_is_denied_first(objects: list[dict[str, Any]]) -> None:
    deny = by_kind(objects, "NetworkPolicy")["default-deny"]["spec"]
    assert deny["podSelector"] == {}
    assert sorted(deny["policyTypes"]) == ["Egress", "Ingress"]
    assert "ingress" not in deny and "egress" not in deny


def test_the_open_calls_are_exactly_the_design_ones(objects: list[dict[str, Any]]) -> None:
    calls, _ = _graph(objects)
    assert calls == EXPECTED_CALLS


def test_serving_never_calls_memory_and_policy_calls_nothing(objects: list[dict[str, Any]]) -> None:
    calls, _ = _graph(objects)
    assert not [c for c in calls if c[0] == "serving" and c[1] == "memory"]
    assert not [c for c in calls if c[0] == "policy"]
    policy = by_kind(objects, "NetworkPolicy")["memloop-policy"]["spec"]
    assert policy["egress"] == []


def test_only_agents_and_the_ingress_reach_in_from_outside(objects: list[dict[str, Any]]) -> None:
    _, outside = _graph(objects)
    infrastructure = {"kubernetes.io/metadata.name=monitoring", "kubernetes.io/metadata.name=cnpg-system"}
    assert {c for c in outside if c[0] not in infrastructure} == EXPECTED_FROM_OUTSIDE
    # Prometheus scrapes only the metrics port of memloop's processes
    scraped = {(dst, port) for ns, dst, port in outside if ns.endswith("=monitoring") and dst in PODS}
    memloop_pods = {n for n, labels in PODS.items() if labels.get("app.kubernetes.io/name") == "memloop"}
    assert {port for dst, port in scraped if dst in memloop_pods} == {9464}


def test_a_policy_that_let_serving_reach_memory_would_be_caught() -> None:
    # Given the rendered base with one extra egress rule from serving to memory, and memory's
    # ingress widened to serving: the derived graph must show the forbidden call
    objects = render("base")
    policies = by_kind(objects, "NetworkPolicy")
    memory = {"podSelector": {"matchLabels": PODS["memory"]}}
    policies["memloop-serving"]["spec"]["egress"].append({"to": [memory], "ports": [{"port": 50053}]})
    policies["memloop-memory"]["spec"]["ingress"][0]["from"].append({"podSelector": {"matchLabels": PODS["serving"]}})
    calls, _ = _graph(objects)
    assert ("serving", "memory", 50053) in calls - EXPECTED_CALLS


def test_only_the_worker_and_memory_reach_serving_loop_and_agents_never_do(objects: list[dict[str, Any]]) -> None:
    calls, outside = _graph(objects)
    assert {(src, port) for src, dst, port in calls if dst == "serving-loop"} == {("worker", 50056), ("memory", 50056)}
    assert not [c for c in outside if c[1] == "serving-loop" and c[2] != 9464]  # only Prometheus, on metrics
    # the loop's callers have no edge to the agent-facing process
    assert not [c for c in calls if c[1] == "serving" and c[0] in {"worker", "memory"}]


def test_a_policy_that_let_agents_reach_serving_loop_would_be_caught() -> None:
    # Given the rendered base with serving-loop's ingress widened to the agents' namespaces
    objects = render("base")
    policy = by_kind(objects, "NetworkPolicy")["memloop-serving-loop"]["spec"]
    policy["ingress"][0]["from"].append({"namespaceSelector": {"matchLabels": {"memloop.io/agents": "true"}}})
    _, outside = _graph(objects)
    assert ("memloop.io/agents=true", "serving-loop", 50056) in outside - EXPECTED_FROM_OUTSIDE
