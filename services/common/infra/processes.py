"""Child processes memloop starts itself: service processes, and the bookkeeping that leaves no orphans.

Every child runs in its own process group (so a Ctrl-C in the terminal reaches the launcher only,
which then stops children in order) and is tracked until it is reaped; an atexit hook kills whatever
is still alive, so a crashed launcher or test session does not leave servers holding ports and locks.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import random
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc

from services.common.infra.errors import InfraError
from services.common.tls import channel_credentials, tls_from_env

_LOOPBACK = "127.0.0.1"
_LOG_TAIL_LINES = 30
_handed_out: set[int] = set()


def free_port(host: str = _LOOPBACK) -> int:
    """A TCP port nothing listens on right now, and never one this process was given before.

    Chosen below the kernel's ephemeral range when possible: a port from that range can be taken
    as the source port of some outgoing connection while a server is down (tests stop NATS for
    30 s and restart it on the same port), which would then fail to bind. A stack names its
    services' ports before it starts them (a peer's target is in the environment of a service
    that starts first), so a port handed out is not yet bound: without remembering it, a later
    call could hand out the same port again and one of the two would fail to bind.
    """
    low, high = _port_range()
    candidates = random.sample(range(low, high), k=min(50, max(0, high - low)))
    for port in candidates:
        if port not in _handed_out and port_is_free(port, host):
            _handed_out.add(port)
            return port
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((host, 0))
        return int(sock.getsockname()[1])


def port_is_free(port: int, host: str = _LOOPBACK) -> bool:
    """Whether a server could bind `host:port` now (SO_REUSEADDR, as servers set it)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((host, port))
        except OSError:
            return False
    return True


def ensure_port_free(port: int, what: str, host: str = _LOOPBACK) -> None:
    """Raise the one-line InfraError for a port already taken, before starting a server on it."""
    if not port_is_free(port, host):
        raise InfraError(f"{what} cannot start: port {port} on {host} is already in use")


def log_tail(path: Path, lines: int = _LOG_TAIL_LINES) -> str:
    """The last `lines` lines of a log file ('' when it does not exist), for error messages."""
    try:
        with path.open("rb") as log:
            log.seek(0, os.SEEK_END)
            size = log.tell()
            log.seek(max(0, size - 64 * 1024))
            text = log.read().decode("utf-8", errors="replace")
    except FileNotFoundError:
        return ""
    return "\n".join(text.splitlines()[-lines:])


PORT_RANGE_ENV = "MEMLOOP_PORT_RANGE"


def _port_range() -> tuple[int, int]:
    """Where `free_port` looks: `MEMLOOP_PORT_RANGE` ("20000-25000", end excluded) when set.

    `_handed_out` protects one process only. Launchers that run side by side (test sessions split
    across workers, two stacks on one host) and each hand out ports before binding them need disjoint
    ranges, or both may hand out the same port in that window; each gets its own range this way.
    """
    spec = os.environ.get(PORT_RANGE_ENV, "").strip()
    if not spec:
        return 10_000, _ephemeral_range_start()
    try:
        low, high = (int(part) for part in spec.split("-"))
    except ValueError:
        raise InfraError(f'{PORT_RANGE_ENV}="{spec}" is not a port range such as "20000-25000"') from None
    if not 1024 <= low < high <= 65536:
        raise InfraError(f'{PORT_RANGE_ENV}="{spec}" must satisfy 1024 <= low < high <= 65536')
    return low, high


def _ephemeral_range_start() -> int:
    try:
        return int(Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return 32768


# --- children that must not outlive this process -------------------------------------------------


@dataclass
class _TrackedChild:
    process: subprocess.Popen[bytes]
    polite_signal: int | None
    """Sent first at exit (e.g. SIGINT for PostgreSQL's fast shutdown); None means SIGKILL at once."""


_children: dict[int, _TrackedChild] = {}
_children_lock = threading.Lock()


def track_child(process: subprocess.Popen[bytes], *, polite_signal: int | None = None) -> None:
    """Have the atexit hook stop `process` (and its process group) if it is still alive at exit."""
    with _children_lock:
        _children[process.pid] = _TrackedChild(process, polite_signal)


def forget_child(process: subprocess.Popen[bytes]) -> None:
    """The child has been reaped by its owner; nothing to do for it at exit."""
    with _children_lock:
        _children.pop(process.pid, None)


def signal_group(process: subprocess.Popen[bytes], signum: int) -> None:
    """Signal the child's whole process group (it leads one); a group already gone is fine.

    Only call it before the leader is reaped: until then its pid, hence the group id, cannot be
    reused by an unrelated process.
    """
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signum)


@atexit.register
def _stop_children_at_exit() -> None:
    with _children_lock:
        children = [child for child in _children.values() if child.process.poll() is None]
        _children.clear()
    for child in children:
        if child.polite_signal is not None:
            with contextlib.suppress(ProcessLookupError):
                child.process.send_signal(child.polite_signal)
    deadline = time.monotonic() + 5.0
    for child in children:
        if child.polite_signal is not None:
            with contextlib.suppress(subprocess.TimeoutExpired):
                child.process.wait(timeout=max(0.0, deadline - time.monotonic()))
        if child.process.poll() is None:
            signal_group(child.process, signal.SIGKILL)
            with contextlib.suppress(subprocess.TimeoutExpired):
                child.process.wait(timeout=5.0)


def spawn(
    argv: list[str],
    *,
    env: Mapping[str, str],
    log_path: Path,
    polite_signal: int | None = None,
    user: int | None = None,
    group: int | None = None,
    own_session: bool = False,
) -> subprocess.Popen[bytes]:
    """Start `argv` in its own process group, stdout and stderr appended to `log_path`, tracked.

    The parent's copy of the log file is closed at once (the child keeps its own descriptor), so no
    file handle leaks however the child ends. `user`/`group` drop privileges in the child.

    The child stays in the launcher's session unless `own_session`: on a kernel with autogroups a
    session is a scheduling group, and groups share the cores by weight before any thread's policy
    counts. In one session a learning thread's SCHED_IDLE yields to serving's threads at once;
    in a session each (stop 23) it only ranked them inside its own process, and a group at nice 19
    still took its slice before a waking request thread ran. Its own process group still lets
    `signal_group` reach its children, and keeps a terminal's Ctrl-C (sent to the foreground group)
    away from it.
    """
    log_path.parent.mkdir(parents=True, exist_ok=True)
    with log_path.open("ab") as log:
        process = subprocess.Popen(
            argv,
            env=dict(env),
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=own_session,
            process_group=None if own_session else 0,
            close_fds=True,
            user=user,
            group=group,
            extra_groups=[] if user is not None else None,
        )
    track_child(process, polite_signal=polite_signal)
    return process


# --- service processes ---------------------------------------------------------------------------


class ServiceProcess:
    """One memloop service run as `python -m <module>`, as the launcher and the e2e tests run it.

    `start()` may be called again after the process ended (a test kills a service and restarts it);
    the log file is appended to, so one file tells the whole story.
    """

    def __init__(
        self,
        module: str,
        env: Mapping[str, str],
        *,
        log_path: Path,
        name: str | None = None,
        own_session: bool = False,
    ) -> None:
        self.module = module
        self.name = name or module
        self.log_path = log_path
        self.own_session = own_session
        self._env = {**os.environ, "PYTHONUNBUFFERED": "1", **env}
        self._process: subprocess.Popen[bytes] | None = None

    def start(self) -> ServiceProcess:
        """Spawn the process; a no-op while it is still running."""
        if self.is_running:
            return self
        self._process = spawn(
            [sys.executable, "-m", self.module], env=self._env, log_path=self.log_path, own_session=self.own_session
        )
        return self

    @property
    def pid(self) -> int:
        return self._running_process().pid

    @property
    def is_running(self) -> bool:
        return self._process is not None and self._process.poll() is None

    @property
    def returncode(self) -> int | None:
        """The exit status once ended (negative: killed by that signal); None while running."""
        return None if self._process is None else self._process.poll()

    def wait_healthy(self, port: int, service_name: str = "", timeout: float = 30.0) -> None:
        """Block until grpc.health.v1 `Check(service_name)` on 127.0.0.1:`port` answers SERVING.

        The empty service name is the server as a whole. Raises InfraError, with the tail of the
        log, as soon as the process exits, or when `timeout` passes without SERVING.
        """
        process = self._running_process()
        target = f"{_LOOPBACK}:{port}"
        options = [
            ("grpc.initial_reconnect_backoff_ms", 100),
            ("grpc.max_reconnect_backoff_ms", 500),  # no min_reconnect_backoff: see grpc_client
        ]
        deadline = time.monotonic() + timeout
        last = "no answer"
        # A service run with MEMLOOP_TLS=on answers only mTLS: ask with its own certificate.
        tls = tls_from_env(self._env)
        channel = (
            grpc.insecure_channel(target, options=options)
            if tls is None
            else grpc.secure_channel(target, channel_credentials(tls), options=options)
        )
        with channel:
            stub = health_pb2_grpc.HealthStub(channel)
            while True:
                if process.poll() is not None:
                    raise self._error(f"exited with status {process.returncode} before reporting SERVING")
                try:
                    response = stub.Check(health_pb2.HealthCheckRequest(service=service_name), timeout=1.0)
                except grpc.RpcError as exc:
                    last = f"{exc.code().name}"
                else:
                    if response.status == health_pb2.HealthCheckResponse.SERVING:
                        return
                    last = health_pb2.HealthCheckResponse.ServingStatus.Name(response.status)
                if time.monotonic() >= deadline:
                    raise self._error(f"did not report SERVING on {target} within {timeout:g} s (last: {last})")
                time.sleep(0.1)

    def wait_http_ok(self, url: str, timeout: float = 30.0) -> None:
        """Block until GET `url` answers 200 (for an HTTP service such as the console); InfraError otherwise."""
        import urllib.error
        import urllib.request

        process = self._running_process()
        deadline = time.monotonic() + timeout
        last = "no answer"
        while True:
            if process.poll() is not None:
                raise self._error(f"exited with status {process.returncode} before answering {url}")
            try:
                with urllib.request.urlopen(url, timeout=1.0) as response:
                    if response.status == 200:
                        return
                    last = f"HTTP {response.status}"
            except (urllib.error.URLError, OSError) as exc:
                last = type(exc).__name__
            if time.monotonic() >= deadline:
                raise self._error(f"did not answer {url} within {timeout:g} s (last: {last})")
            time.sleep(0.1)

    def ask_to_stop(self) -> None:
        """SIGTERM without waiting: the first half of `terminate`, so a caller can stop many at once."""
        process = self._process
        if process is not None and process.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                process.send_signal(signal.SIGTERM)

    def terminate(self, timeout: float = 10.0) -> int | None:
        """SIGTERM (the service drains in-flight calls), then SIGKILL after `timeout`; reaps it.

        Returns the exit status (None if it was never started). Idempotent.
        """
        process = self._process
        if process is None:
            return None
        if process.poll() is None:
            self.ask_to_stop()
            try:
                process.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                signal_group(process, signal.SIGKILL)
                process.wait()
        forget_child(process)
        return process.returncode

    def kill(self) -> None:
        """SIGKILL the process group at once (a crash, for failure tests) and reap it."""
        process = self._process
        if process is None:
            return
        signal_group(process, signal.SIGKILL)
        process.wait()
        forget_child(process)

    def log_text(self) -> str:
        """Everything the process wrote to stdout and stderr so far."""
        try:
            return self.log_path.read_text(encoding="utf-8", errors="replace")
        except FileNotFoundError:
            return ""

    def _running_process(self) -> subprocess.Popen[bytes]:
        if self._process is None:
            raise InfraError(f"service {self.name} ({self.module}) was never started")
        return self._process

    def _error(self, why: str) -> InfraError:
        return InfraError(
            f"service {self.name} ({self.module}) {why}",
            log_path=self.log_path,
            log_tail=log_tail(self.log_path),
        )


def terminate_all(processes: list[ServiceProcess], timeout: float = 10.0) -> None:
    """Stop several services together: each drains in parallel, so stopping a stack costs the
    slowest drain, not their sum. Stragglers are killed once `timeout` has passed for all."""
    for process in processes:
        process.ask_to_stop()
    deadline = time.monotonic() + timeout
    for process in processes:
        process.terminate(timeout=max(0.0, deadline - time.monotonic()))
