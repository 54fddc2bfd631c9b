"""The worker process yields to serving (issue 15): idle CPU priority, and back-pressure.

A real worker process on the session's NATS reads "serving's" Prometheus page from a stand-in
HTTP endpoint the test controls (driving a real serving to a chosen p99 on a loaded machine is not
repeatable). The worker's in-flight limit is read from its own metrics endpoint, and its threads'
scheduling from /proc.
"""

from __future__ import annotations

import os
import threading
import urllib.request
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from services.common.auth import issue_token
from services.common.auth_keys import SigningKey
from services.common.infra.processes import ServiceProcess, free_port
from tests.helpers import SpawnService, TestInfra
from tests.integration.worker_support import metric_value, wait_until

CONCURRENCY = 16


class _ServingPage:
    """Serving's histogram as the worker scrapes it: each scrape adds 50 requests of `seconds`."""

    def __init__(self) -> None:
        self.seconds = 0.004
        self.counts = {0.01: 0.0, 0.1: 0.0, 1.0: 0.0, float("inf"): 0.0}
        self.lock = threading.Lock()

    def render(self) -> bytes:
        with self.lock:
            for upper in self.counts:
                if self.seconds <= upper:
                    self.counts[upper] += 50
            labels = 'service="serving",method="HandleRequest"'
            rows = [
                f'memloop_rpc_seconds_bucket{{{labels},le="{"+Inf" if u == float("inf") else u}"}} {c}'
                for u, c in self.counts.items()
            ]
        return ("# TYPE memloop_rpc_seconds histogram\n" + "\n".join(rows) + "\n").encode()


@pytest.fixture
def serving_page() -> Iterator[tuple[_ServingPage, str]]:
    page = _ServingPage()

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            body = page.render()
            self.send_response(200)
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *_: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield page, f"http://127.0.0.1:{server.server_address[1]}/metrics"
    server.shutdown()
    server.server_close()


def _start_worker(spawn: SpawnService, infra: TestInfra, prefix: str, pressure_url: str) -> tuple[ServiceProcess, int]:
    key, port, metrics = SigningKey.generate(), free_port(), free_port()
    env = {
        "MEMLOOP_AUTH_PUBLIC_KEYS": key.public_pem(),
        "MEMLOOP_SERVICE_TOKEN": issue_token(key, subject="worker", tenant="*", roles=("service",)),
        "MEMLOOP_GRPC_PORT": str(port),
        "MEMLOOP_METRICS_PORT": str(metrics),
        "MEMLOOP_NATS_URL": infra.nats_url,
        "MEMLOOP_SUBJECT_PREFIX": prefix,
        "MEMLOOP_LEARNING_STREAM": f"{prefix}_LEARNING".upper(),
        "MEMLOOP_SERVING_TARGET": f"127.0.0.1:{free_port()}",  # peers are never called: no events
        "MEMLOOP_POLICY_TARGET": f"127.0.0.1:{free_port()}",
        "MEMLOOP_MEMORY_TARGET": f"127.0.0.1:{free_port()}",
        "MEMLOOP_WORKER_CONCURRENCY": str(CONCURRENCY),
        "MEMLOOP_WORKER_PRESSURE_URLS": pressure_url,
        "MEMLOOP_WORKER_PRESSURE_P99_MS": "50",
        "MEMLOOP_WORKER_PRESSURE_INTERVAL_SECONDS": "0.2",
        "MEMLOOP_DRAIN_SECONDS": "2",
    }
    return spawn("services.worker.entrypoints.main", env, port, "worker"), metrics


def _limit(metrics_port: int) -> float:
    with urllib.request.urlopen(f"http://127.0.0.1:{metrics_port}/metrics", timeout=5) as page:
        return metric_value(page.read().decode(), "memloop_worker_concurrency_limit", default=None)


def _lowered(tid_dir: Path) -> bool | None:
    """Whether the thread runs at idle priority; None when it ended between the listing and the read."""
    tid = int(tid_dir.name)
    try:
        nice = int((tid_dir / "stat").read_text().rsplit(")", 1)[1].split()[16])
        policy = os.sched_getscheduler(tid)
    except OSError:
        return None
    return policy == os.SCHED_IDLE or nice == 19


def test_the_worker_halves_its_in_flight_limit_while_serving_is_slow_and_recovers_after(
    spawn: SpawnService, infra: TestInfra, nats_prefix: str, serving_page: tuple[_ServingPage, str]
) -> None:
    page, url = serving_page
    worker, metrics = _start_worker(spawn, infra, nats_prefix, url)

    wait_until(lambda: _limit(metrics) == CONCURRENCY, 30, "the full limit while serving is fast")
    page.seconds = 0.5  # serving's p99 goes far above the 50 ms target
    wait_until(lambda: _limit(metrics) == 1, 30, "the limit to fall to one event in flight")
    page.seconds = 0.004
    wait_until(lambda: _limit(metrics) >= 4, 30, "the limit to climb back once serving is fast")

    # and every thread of the worker runs at idle CPU priority (the default setting)
    verdicts = [v for v in (_lowered(t) for t in Path(f"/proc/{worker.pid}/task").iterdir()) if v is not None]
    assert verdicts and all(verdicts)
