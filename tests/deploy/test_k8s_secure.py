"""The `secure` overlay (production plus transport security), rendered by kustomize and checked
offline: every service mounts the certificate cert-manager issues for it and turns TLS on, probes
speak mTLS through the healthcheck module, and the services that use NATS log in as themselves."""

from __future__ import annotations

from typing import Any

import kubernetes_validate
import pytest

from tests.deploy.manifests import (
    GRPC_PORTS,
    MEMORY_INGEST_PORT,
    SERVICES,
    by_kind,
    containers,
    render,
    workloads,
)

KUBERNETES_VERSION = "1.33"
CUSTOM_KINDS = {
    ("postgresql.cnpg.io/v1", "Cluster"),
    ("cert-manager.io/v1", "Certificate"),
    ("cert-manager.io/v1", "Issuer"),
}
NATS_USERS = {"relay", "worker", "memory", "console"}
MOUNT = "/etc/memloop/tls"


@pytest.fixture(scope="module")
def objects() -> list[dict[str, Any]]:
    return render("secure")


def _env(container: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {entry["name"]: entry for entry in container.get("env", [])}


def test_every_built_in_object_is_still_valid(objects: list[dict[str, Any]]) -> None:
    checked = 0
    for obj in objects:
        if (obj["apiVersion"], obj["kind"]) not in CUSTOM_KINDS:
            kubernetes_validate.validate(obj, KUBERNETES_VERSION, strict=True)
            checked += 1
    assert checked >= 30


def test_each_service_mounts_its_own_certificate_and_turns_tls_on(objects: list[dict[str, Any]]) -> None:
    found = workloads(objects)
    assert set(found) == set(SERVICES)
    for component, workload in found.items():
        for container in containers(workload):  # memory's pods: its retrieval and ingestion containers
            env = _env(container)
            assert env["MEMLOOP_TLS"]["value"] == "on", component
            for name in ("MEMLOOP_TLS_CERT_FILE", "MEMLOOP_TLS_KEY_FILE", "MEMLOOP_TLS_CA_FILE"):
                assert env[name]["value"].startswith(f"{MOUNT}/"), (component, name)
            mount = next(m for m in container["volumeMounts"] if m["mountPath"] == MOUNT)
            volume = next(v for v in workload["spec"]["template"]["spec"]["volumes"] if v["name"] == mount["name"])
            assert mount.get("readOnly") is True
            assert volume["secret"]["secretName"] == f"memloop-{component}-tls", component


def test_grpc_probes_become_exec_probes_of_the_healthcheck_module(objects: list[dict[str, Any]]) -> None:
    # A kubelet's gRPC probe cannot present a client certificate, so with mTLS it would always fail.
    for component, workload in workloads(objects).items():
        if component not in GRPC_PORTS:
            continue
        for container in containers(workload):
            port = GRPC_PORTS[component] if container["name"] == component else MEMORY_INGEST_PORT
            assert _env(container)["MEMLOOP_GRPC_PORT"]["value"] == str(port)  # what the module checks
            for probe in ("startupProbe", "readinessProbe", "livenessProbe"):
                assert "grpc" not in container[probe], (component, probe)
                assert container[probe]["exec"]["command"] == ["python", "-m", "services.common.healthcheck"]


def test_each_certificate_names_its_service_and_loopback_for_both_ends(objects: list[dict[str, Any]]) -> None:
    certificates = by_kind(objects, "Certificate")
    assert set(certificates) == {f"memloop-{s}-tls" for s in SERVICES}
    assert set(by_kind(objects, "Issuer")) == {"memloop-ca"}
    for name, certificate in certificates.items():
        spec = certificate["spec"]
        service = name.removesuffix("-tls")
        assert spec["secretName"] == name
        assert service in spec["dnsNames"] and f"{service}.memloop.svc" in spec["dnsNames"]
        assert "127.0.0.1" in spec["ipAddresses"]  # the exec probe dials 127.0.0.1
        assert {"server auth", "client auth"} <= set(spec["usages"])
        assert spec["issuerRef"] == {"name": "memloop-ca", "kind": "Issuer"}


def test_the_services_that_use_nats_log_in_as_themselves_with_a_password_from_a_secret(
    objects: list[dict[str, Any]],
) -> None:
    for component, workload in workloads(objects).items():
        for container in containers(workload):  # memory's ingestion process logs in as memory too
            env = _env(container)
            if component not in NATS_USERS:
                assert "MEMLOOP_NATS_USER" not in env, component
                continue
            assert env["MEMLOOP_NATS_USER"]["value"] == component
            assert env["MEMLOOP_NATS_PASSWORD"]["valueFrom"]["secretKeyRef"] == {
                "name": "memloop-nats-users",
                "key": component,
            }
