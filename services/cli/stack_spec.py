"""What a stack starts and where (`StackSpec`), the handle of each started service, and the names
the launcher, the CLI and the tests share (services/cli/stack.py starts them)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from services.common.infra.processes import ServiceProcess

_MODULES = {
    "policy": "services.policy.entrypoints.main",
    "memory": "services.memory.entrypoints.main",
    "serving": "services.serving.entrypoints.main",
    "relay": "services.relay.entrypoints.main",
    "worker": "services.worker.entrypoints.main",
}
START_ORDER = ("policy", "memory", "serving", "relay", "worker")
# Serving's second process: the loop's own calls (the worker's content reads, memory's deletions),
# all at idle priority, so they share neither the GIL nor a scheduling group with HandleRequest.
SERVING_LOOP = "serving-loop"
# The token issuer's key pair in the data folder: the launcher and `memloop token` sign with the
# private key; the services get only the public one (MEMLOOP_AUTH_PUBLIC_KEYS_FILE).
ISSUER_KEY_FILE = "auth_issuer_key.pem"
PUBLIC_KEYS_FILE = "auth_public_keys.pem"
# With TLS: the local CA and one certificate per service kind, plus "nats" (the server) and
# "operator" (the launcher's own client: readiness checks, tests, `memloop` commands).
TLS_DIR = "tls"
TLS_NAMES = ("policy", "memory", "serving", "relay", "worker", "console", "nats", "operator")
NATS_USERS_DIR = "nats-users"


@dataclass(frozen=True)
class StackSpec:
    """What to start and where; built from the environment by the CLI, or directly by tests."""

    data_dir: Path
    database_admin_url: str = ""
    memory_database_admin_url: str = ""
    """Memory's database on a server of its own (its own WAL: learning's commits then never share
    a flush with serving's); empty: beside serving's, on `database_admin_url` or the embedded one."""
    nats_url: str = ""
    database_prefix: str = "memloop"
    subject_prefix: str = "memloop"
    learning_stream: str = "MEMLOOP_LEARNING"
    embedder: str = "minilm"
    memory_replicas: int = 1
    console: bool = True
    console_port: int = 0
    extra_env: Mapping[str, str] = field(default_factory=dict)
    # mTLS on every gRPC server and channel, TLS with client certificates on the stack's NATS;
    # None: the stack's default (`Stack.DEFAULT_TLS`: off for one of each, on for the cluster).
    tls: bool | None = None
    # The stack's own NATS with a user per service and per-service permissions (ignored for a NATS
    # given by URL, whose users memloop does not manage).
    nats_auth: bool = True
    # issue 15: each memory replica as two processes, retrieval (`memory`, normal priority) and
    # ingestion (`memory-ingest`, idle priority; the worker's target). False: one process each.
    memory_split: bool = True
    # Every process in a session of its own (stop 23's arrangement: one scheduling group each on a
    # kernel with autogroups); by default they share the launcher's (services/common/infra/processes.py).
    own_sessions: bool = False


@dataclass
class ServiceHandle:
    """A started service process and the ports it listens on."""

    name: str
    process: ServiceProcess
    grpc_port: int
    metrics_port: int
    env: dict[str, str] = field(default_factory=dict)

    @property
    def target(self) -> str:
        return f"127.0.0.1:{self.grpc_port}"
