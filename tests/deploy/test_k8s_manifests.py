"""The Kubernetes manifests, rendered by kustomize and validated offline: built-in kinds against
the Kubernetes OpenAPI schemas (kubernetes-validate, strict), CloudNativePG's Cluster against the
schema in deploy/k8s/schemas, and the properties the design asks of each workload."""

from __future__ import annotations

import json
import re
from typing import Any

import jsonschema
import kubernetes_validate
import pytest

from tests.deploy.manifests import (
    GRPC_PORTS,
    K8S,
    MEMORY_INGEST_PORT,
    OVERLAYS,
    REPO_ROOT,
    SERVICES,
    by_kind,
    containers,
    env_entries,
    load_yaml,
    main_container,
    render,
    workloads,
)

KUBERNETES_VERSION = "1.33"  # the oldest minor still supported upstream when this was written
CRD_SCHEMAS = {("postgresql.cnpg.io/v1", "Cluster"): K8S / "schemas" / "cnpg-cluster.schema.json"}
LEARNING = {"relay", "worker", "policy", "serving-loop"}
REQUEST_PATH = {"serving", "memory"}
SECRET_NAME = re.compile(r"SECRET|TOKEN|PASSWORD|DATABASE_URL|API_KEY")


@pytest.fixture(scope="module", params=OVERLAYS)
def objects(request: pytest.FixtureRequest) -> list[dict[str, Any]]:
    return render(request.param)


def test_every_built_in_object_is_valid_against_the_kubernetes_schema(objects: list[dict[str, Any]]) -> None:
    checked = 0
    for obj in objects:
        if (obj["apiVersion"], obj["kind"]) in CRD_SCHEMAS:
            continue  # custom resources: no OpenAPI schema in kubernetes-validate, checked below
        kubernetes_validate.validate(obj, KUBERNETES_VERSION, strict=True)
        checked += 1
    assert checked >= 30


def test_every_custom_resource_is_valid_against_its_schema(objects: list[dict[str, Any]]) -> None:
    custom = [o for o in objects if (o["apiVersion"], o["kind"]) in CRD_SCHEMAS]
    assert {o["metadata"]["name"] for o in custom} == {"memloop-serving-db", "memloop-memory-db"}
    for obj in custom:
        schema = json.loads(CRD_SCHEMAS[(obj["apiVersion"], obj["kind"])].read_text(encoding="utf-8"))
        jsonschema.validate(obj, schema)
        sync = obj["spec"].get("postgresql", {}).get("synchronous")
        if sync:  # a synchronous standby needs one to exist besides the primary
            assert sync["number"] < obj["spec"]["instances"]


def test_the_cluster_schema_refuses_a_misspelled_field() -> None:
    # Given a valid Cluster with one field misspelled, as an operator would silently ignore it
    cluster = by_kind(render("base"), "Cluster")["memloop-serving-db"]
    cluster["spec"]["instance"] = cluster["spec"].pop("instances")
    schema = json.loads(CRD_SCHEMAS[("postgresql.cnpg.io/v1", "Cluster")].read_text(encoding="utf-8"))
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(cluster, schema)


def test_each_service_has_a_workload_with_probes_on_its_own_port(objects: list[dict[str, Any]]) -> None:
    found = workloads(objects)
    assert set(found) == set(SERVICES)
    for component, port in GRPC_PORTS.items():
        names = [c["name"] for c in containers(found[component])]
        assert names == (["memory", "memory-ingest"] if component == "memory" else [component])
        checked = [(main_container(found[component], component), port)]
        if component == "memory":
            checked.append((main_container(found["memory"], "memory-ingest"), MEMORY_INGEST_PORT))
        for container, container_port in checked:
            env = {e["name"]: e.get("value") for e in container.get("env", [])}
            assert env["MEMLOOP_GRPC_PORT"] == str(container_port), component
            assert container_port in {p["containerPort"] for p in container["ports"]}, component
            for probe in ("startupProbe", "readinessProbe", "livenessProbe"):
                assert container[probe]["grpc"]["port"] == container_port, (component, probe)
    console = main_container(found["console"], "console")
    assert {console[p]["tcpSocket"]["port"] for p in ("startupProbe", "readinessProbe", "livenessProbe")} == {"http"}


def _quantity(value: str | int) -> float:
    text = str(value)
    units = {"m": 1e-3, "Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "k": 1e3, "M": 1e6, "G": 1e9}
    for suffix, factor in sorted(units.items(), key=lambda kv: -len(kv[0])):
        if text.endswith(suffix):
            return float(text[: -len(suffix)]) * factor
    return float(text)


def test_every_container_has_requests_within_limits_and_runs_unprivileged(objects: list[dict[str, Any]]) -> None:
    for component, workload in workloads(objects).items():
        pod = workload["spec"]["template"]["spec"]
        assert pod["securityContext"]["runAsNonRoot"] is True
        assert pod["automountServiceAccountToken"] is False
        for container in containers(workload):
            resources = container["resources"]
            for resource in ("cpu", "memory"):
                request, limit = resources["requests"][resource], resources["limits"][resource]
                assert _quantity(request) <= _quantity(limit), (component, resource)
            security = container["securityContext"]
            assert security["allowPrivilegeEscalation"] is False
            assert security["readOnlyRootFilesystem"] is True
            assert security["capabilities"]["drop"] == ["ALL"]


def test_learning_workloads_run_below_serving_and_never_preempt(objects: list[dict[str, Any]]) -> None:
    classes = by_kind(objects, "PriorityClass")
    found = workloads(objects)

    def value(component: str) -> int:
        return int(classes[found[component]["spec"]["template"]["spec"]["priorityClassName"]]["value"])

    assert min(value(c) for c in REQUEST_PATH) > max(value(c) for c in LEARNING | {"console"})
    for component in LEARNING:
        name = found[component]["spec"]["template"]["spec"]["priorityClassName"]
        assert classes[name]["preemptionPolicy"] == "Never"
    # Under CPU contention cgroups share CPU by request: learning asks for a fraction of serving's.
    cpu = {c: _quantity(containers(w)[0]["resources"]["requests"]["cpu"]) for c, w in found.items()}
    assert max(cpu[c] for c in ("relay", "worker", "serving-loop")) <= cpu["serving"] / 4


def test_memorys_pods_run_retrieval_and_an_idle_ingestion_process_the_worker_calls(
    objects: list[dict[str, Any]],
) -> None:
    """Issue 15: no retrieval thread shares a process with idle-priority ingestion."""
    found = workloads(objects)

    def env(container: dict[str, Any]) -> dict[str, Any]:
        return {e["name"]: e.get("value") for e in container.get("env", [])}

    retrieval, ingestion = (main_container(found["memory"], name) for name in ("memory", "memory-ingest"))
    assert env(retrieval)["MEMLOOP_MEMORY_ROLE"] == "retrieval"
    assert env(ingestion)["MEMLOOP_MEMORY_ROLE"] == "ingest"
    assert env(ingestion)["MEMLOOP_REPLICA_ID"] == "$(POD_NAME)-ingest"  # a replica id of its own
    assert env(ingestion)["MEMLOOP_METRICS_PORT"] != "9464"  # the pod's network is shared
    mounts = {m["mountPath"]: m["name"] for m in ingestion["volumeMounts"]}
    assert (
        mounts["/var/lib/memloop/index"]
        != {m["mountPath"]: m["name"] for m in retrieval["volumeMounts"]}["/var/lib/memloop/index"]
    )
    claims = {c["metadata"]["name"] for c in found["memory"]["spec"]["volumeClaimTemplates"]}
    assert mounts["/var/lib/memloop/index"] in claims
    # it asks learning's share of the CPU, not retrieval's
    cpu = {c["name"]: _quantity(c["resources"]["requests"]["cpu"]) for c in containers(found["memory"])}
    assert cpu["memory-ingest"] * 4 <= cpu["memory"]
    # the worker calls the ingestion processes; every other client the retrieval ones
    worker = env(main_container(found["worker"], "worker"))
    host, port = worker["MEMLOOP_MEMORY_TARGET"].rsplit(":", 1)
    service = by_kind(objects, "Service")[host]
    assert {p["port"]: p["targetPort"] for p in service["spec"]["ports"]} == {int(port): "ingest-grpc"}
    assert {p["name"]: p["containerPort"] for p in ingestion["ports"]}["ingest-grpc"] == MEMORY_INGEST_PORT


def test_every_workload_has_a_disruption_budget_that_still_allows_a_drain(objects: list[dict[str, Any]]) -> None:
    budgets = list(by_kind(objects, "PodDisruptionBudget").values())
    for component, workload in workloads(objects).items():
        labels = workload["spec"]["template"]["metadata"]["labels"]
        matching = [b for b in budgets if b["spec"]["selector"]["matchLabels"].items() <= labels.items()]
        assert len(matching) == 1, component
        spec, replicas = matching[0]["spec"], workload["spec"]["replicas"]
        if "minAvailable" in spec:
            assert 1 <= spec["minAvailable"] < replicas, component
        else:
            assert spec["maxUnavailable"] >= 1, component


def test_secrets_come_only_from_secret_objects(objects: list[dict[str, Any]]) -> None:
    assert by_kind(objects, "Secret") == {}  # created out of band, never committed
    for component, entry in env_entries(objects):
        if SECRET_NAME.search(entry["name"]):
            assert "value" not in entry, (component, entry["name"])
            assert "secretKeyRef" in entry["valueFrom"], (component, entry["name"])
    for config in by_kind(objects, "ConfigMap").values():
        assert not [k for k in config["data"] if SECRET_NAME.search(k)]


def test_database_secrets_are_the_ones_the_postgres_clusters_own(objects: list[dict[str, Any]]) -> None:
    clusters = by_kind(objects, "Cluster")
    generated = {f"{name}-app" for name in clusters}  # CloudNativePG writes the owner's `uri` there
    role_secrets = {
        role["passwordSecret"]["name"] for cluster in clusters.values() for role in cluster["spec"]["managed"]["roles"]
    }
    for component, entry in env_entries(objects):
        ref = entry.get("valueFrom", {}).get("secretKeyRef")
        if ref is None:
            continue
        if entry["name"].endswith("_DATABASE_URL"):
            assert (ref["name"], ref["key"]) in {(g, "uri") for g in generated}, component
        elif entry["name"].endswith("_DB_PASSWORD"):
            assert (ref["name"], ref["key"]) in {(s, "password") for s in role_secrets}, component
        else:
            assert ref["name"] == "memloop-auth", component


def test_services_get_the_issuer_public_keys_and_never_a_private_key(objects: list[dict[str, Any]]) -> None:
    found = workloads(objects)
    for component in found:
        entries = {e["name"]: e for c, e in env_entries(objects) if c == component}
        keys = entries["MEMLOOP_AUTH_PUBLIC_KEYS"]["valueFrom"]["configMapKeyRef"]
        assert (keys["name"], keys["key"]) == ("memloop-auth-keys", "public-keys.pem"), component
        assert not [n for n in entries if "ISSUER_KEY" in n or n.startswith("MEMLOOP_AUTH_SECRET")], component


def _setting_names_in_code() -> set[str]:
    names: set[str] = set()
    for path in (REPO_ROOT / "services").rglob("*.py"):
        names |= set(re.findall(r"MEMLOOP_[A-Z0-9_]+", path.read_text(encoding="utf-8")))
    return names


def test_every_setting_the_manifests_set_is_one_the_services_read(objects: list[dict[str, Any]]) -> None:
    known = _setting_names_in_code()
    # The console lands with its own issue; its settings are checked once its package exists.
    console_present = (REPO_ROOT / "services" / "console").is_dir()
    used = {(c, e["name"]) for c, e in env_entries(objects) if e["name"].startswith("MEMLOOP_")}
    for config in by_kind(objects, "ConfigMap").values():
        used |= {("*", k) for k in config["data"] if k.startswith("MEMLOOP_")}
    unknown = {
        name for component, name in used if name not in known and not (component == "console" and not console_present)
    }
    assert unknown == set()


def test_the_peer_targets_name_services_and_ports_that_exist(objects: list[dict[str, Any]]) -> None:
    config = by_kind(objects, "ConfigMap")["memloop-config"]["data"]
    services = by_kind(objects, "Service")
    for key in (
        "MEMLOOP_SERVING_TARGET",
        "MEMLOOP_SERVING_LOOP_TARGET",
        "MEMLOOP_POLICY_TARGET",
        "MEMLOOP_MEMORY_TARGET",
    ):
        host, port = config[key].rsplit(":", 1)
        assert int(port) in {p["port"] for p in services[host]["spec"]["ports"]}, key
    assert config["MEMLOOP_SERVING_LOOP_TARGET"] == f"memloop-serving-loop:{GRPC_PORTS['serving-loop']}"


def test_serving_loop_runs_servings_code_in_the_loop_role_on_servings_database(objects: list[dict[str, Any]]) -> None:
    found = workloads(objects)
    (loop,), (serving,) = containers(found["serving-loop"]), containers(found["serving"])
    assert loop["command"] == serving["command"] == ["python", "-m", "services.serving.entrypoints.main"]
    loop_env = {e["name"]: e for e in loop["env"]}
    serving_env = {e["name"]: e for e in serving["env"]}
    assert loop_env["MEMLOOP_SERVING_ROLE"]["value"] == "loop"
    assert serving_env.get("MEMLOOP_SERVING_ROLE", {"value": "all"})["value"] == "all"
    # serving's owner URL (migrations) and serving's app role password: the same Secrets as serving
    for name in ("MEMLOOP_SERVING_DATABASE_URL", "MEMLOOP_SERVING_DB_PASSWORD"):
        assert loop_env[name]["valueFrom"] == serving_env[name]["valueFrom"], name
    assert found["serving-loop"]["spec"]["template"]["spec"]["priorityClassName"] == "memloop-learning"


def test_production_runs_the_streams_at_r3_on_three_jetstream_nodes() -> None:
    config = by_kind(render("production"), "ConfigMap")["memloop-config"]["data"]
    values = load_yaml(K8S / "nats-values.yaml")
    assert values["config"]["cluster"]["enabled"] is True
    assert values["config"]["jetstream"]["enabled"] is True
    assert values["config"]["jetstream"]["fileStore"]["enabled"] is True
    assert int(config["MEMLOOP_STREAM_REPLICAS"]) == values["config"]["cluster"]["replicas"] == 3
    clusters = by_kind(render("production"), "Cluster")
    assert {c["spec"]["instances"] for c in clusters.values()} == {3}


def test_the_scrape_config_keeps_every_metrics_port_and_only_those(objects: list[dict[str, Any]]) -> None:
    """One annotation names one port per pod; memory's pod exports two (retrieval and ingestion),
    so deploy/monitoring/prometheus-scrape.yaml keeps container ports by name. Every port a process
    serves MEMLOOP_METRICS_PORT on must match its regex, and no gRPC port may."""
    scrape = load_yaml(REPO_ROOT / "deploy" / "monitoring" / "prometheus-scrape.yaml")
    (job,) = scrape["scrape_configs"]
    (keep,) = [r for r in job["relabel_configs"] if r["source_labels"] == ["__meta_kubernetes_pod_container_port_name"]]
    assert keep["action"] == "keep"
    named = re.compile(f"^(?:{keep['regex']})$")  # Prometheus anchors relabel regexes
    metrics_ports = 0
    for name, workload in workloads(objects).items():
        for container in containers(workload):
            env = {e["name"]: e.get("value") for e in container.get("env", [])}
            port_of_metrics = env.get("MEMLOOP_METRICS_PORT", "9464")
            for port in container.get("ports", []):
                if str(port["containerPort"]) == port_of_metrics and name != "postgres":
                    metrics_ports += 1
                    assert named.match(port["name"]), f"{name}/{container['name']} metrics port {port['name']}"
                else:
                    assert not named.match(port["name"]), f"{name}/{container['name']} port {port['name']} kept"
    assert metrics_ports >= len(SERVICES) + 1  # memory's ingestion process too
