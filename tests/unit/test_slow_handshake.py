"""A peer slow to finish its connection handshake is waited for, up to the call's own deadline.

memloop runs learning's processes at idle priority; on a busy host such a process can take most of
a second to answer a new connection. gRPC reads "grpc.min_reconnect_backoff_ms" as the time one
connection attempt may take, so with it at 100 to 200 ms every channel gave up on such a peer and the
call failed at once with UNAVAILABLE (a Forget, whose memory called serving's loop process, did so
under a parallel test run). Here a real gRPC server sits behind a proxy that holds each new
connection for 0.6 s before passing its bytes on; every kind of channel memloop makes must still
get its answer.
"""

from __future__ import annotations

import contextlib
import socket
import threading
import time
from collections.abc import Callable, Iterator
from concurrent import futures
from pathlib import Path

import grpc
import pytest
from grpc_health.v1 import health, health_pb2, health_pb2_grpc

from memloop_client._transport import CHANNEL_OPTIONS as CLIENT_CHANNEL_OPTIONS
from services.common.grpc_client import sync_channel
from services.common.infra.processes import ServiceProcess

HANDSHAKE_DELAY = 0.6


class _SlowToAnswer:
    """Accepts at once (the kernel does), then answers nothing for `delay` before piping both ways."""

    def __init__(self, upstream_port: int, delay: float) -> None:
        self._upstream = ("127.0.0.1", upstream_port)
        self._delay = delay
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port = self._listener.getsockname()[1]
        threading.Thread(target=self._accept, daemon=True).start()

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self._listener.close()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            threading.Thread(target=self._serve, args=(client,), daemon=True).start()

    def _serve(self, client: socket.socket) -> None:
        time.sleep(self._delay)
        # The caller may have given up by now, and the server gone: nothing to pass on then.
        with client, contextlib.suppress(OSError), socket.create_connection(self._upstream) as upstream:
            back = threading.Thread(target=self._pump, args=(upstream, client), daemon=True)
            back.start()
            self._pump(client, upstream)
            back.join()

    @staticmethod
    def _pump(source: socket.socket, sink: socket.socket) -> None:
        with contextlib.suppress(OSError):
            while data := source.recv(65536):
                sink.sendall(data)
        for end in (source, sink):
            with contextlib.suppress(OSError):
                end.shutdown(socket.SHUT_RDWR)


@pytest.fixture
def slow_target() -> Iterator[str]:
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=4))
    health_pb2_grpc.add_HealthServicer_to_server(health.HealthServicer(), server)
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    proxy = _SlowToAnswer(port, HANDSHAKE_DELAY)
    try:
        yield f"127.0.0.1:{proxy.port}"
    finally:
        proxy.close()
        server.stop(grace=None)


def _check(channel: grpc.Channel) -> int:
    request = health_pb2.HealthCheckRequest()
    return int(health_pb2_grpc.HealthStub(channel).Check(request, timeout=10).status)


_CHANNELS: dict[str, Callable[[str], grpc.Channel]] = {
    "service-to-service": lambda target: sync_channel(target, token="unused-by-health"),
    "agent-client": lambda target: grpc.insecure_channel(target, options=CLIENT_CHANNEL_OPTIONS),
}


@pytest.mark.parametrize("kind", sorted(_CHANNELS))
def test_a_call_waits_out_a_slow_handshake_instead_of_failing_unavailable(slow_target: str, kind: str) -> None:
    with _CHANNELS[kind](slow_target) as channel:
        started = time.monotonic()
        assert _check(channel) == health_pb2.HealthCheckResponse.SERVING
        assert time.monotonic() - started >= HANDSHAKE_DELAY  # the proxy did hold the connection


def test_waiting_for_a_service_to_report_serving_survives_a_slow_handshake(slow_target: str, tmp_path: Path) -> None:
    # wait_healthy needs a live process beside the port it asks; this one only sleeps.
    (tmp_path / "idle_forever.py").write_text("import time\ntime.sleep(600)\n")
    env = {"PYTHONPATH": str(tmp_path)}
    waiting = ServiceProcess("idle_forever", env, log_path=tmp_path / "idle.log").start()
    try:
        waiting.wait_healthy(int(slow_target.rsplit(":", 1)[1]), timeout=10.0)
    finally:
        waiting.kill()
