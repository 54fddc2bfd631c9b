"""Back-pressure (issue 15): the AIMD in-flight limit and the reading of serving's metrics."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from services.worker.adapters.pressure import MetricsPressure, control
from services.worker.service.backpressure import AimdLimit, Pressure, PressureLimits

SLOW = Pressure(serving_p99_seconds=0.4)
QUIET = Pressure(serving_p99_seconds=0.004, outbox_age_seconds=0.1)


def test_the_limit_halves_under_pressure_down_to_one_and_climbs_back_by_one() -> None:
    limit = AimdLimit(16, limits=PressureLimits(serving_p99_seconds=0.05, outbox_age_seconds=5))
    assert limit() == 16
    assert [limit.observe(SLOW) for _ in range(6)] == [8, 4, 2, 1, 1, 1]
    assert [limit.observe(QUIET) for _ in range(3)] == [2, 3, 4]
    assert limit.observe(Pressure(outbox_age_seconds=9.0)) == 2  # an ageing outbox counts too


def test_an_unknown_signal_is_quiet_and_the_limit_never_passes_the_ceiling() -> None:
    limit = AimdLimit(4)
    assert [limit.observe(Pressure()) for _ in range(3)] == [4, 4, 4]


class _Endpoint:
    """A Prometheus text page whose serving histogram grows by `per_scrape` requests of `seconds`."""

    def __init__(self) -> None:
        self.seconds, self.per_scrape, self.outbox_age = 0.005, 100, 0.5
        self.counts = {0.01: 0.0, 0.1: 0.0, 1.0: 0.0, float("inf"): 0.0}

    def page(self) -> str:
        for upper in self.counts:
            if self.seconds <= upper:
                self.counts[upper] += self.per_scrape
        lines = []
        for method in ("HandleRequest", "ReadContent"):
            for upper, count in self.counts.items():
                le = "+Inf" if upper == float("inf") else str(upper)
                value = count if method == "HandleRequest" else 0.0
                lines.append(f'memloop_rpc_seconds_bucket{{service="serving",method="{method}",le="{le}"}} {value}')
        lines.append(f"memloop_outbox_oldest_age_seconds {self.outbox_age}")
        return "# TYPE memloop_rpc_seconds histogram\n" + "\n".join(lines) + "\n"


@pytest.fixture
def endpoint() -> Iterator[tuple[_Endpoint, str]]:
    state = _Endpoint()

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            body = state.page().encode()
            self.send_response(200)
            self.send_header("Content-Type", "text/plain")
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *_: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield state, f"http://127.0.0.1:{server.server_address[1]}/metrics"
    server.shutdown()
    server.server_close()


def test_the_window_p99_follows_what_serving_did_since_the_last_scrape(endpoint: tuple[_Endpoint, str]) -> None:
    state, url = endpoint
    reader = MetricsPressure([url])
    quiet = asyncio.run(reader.read())
    state.seconds = 0.5  # serving turns slow: only this window's requests count
    slow = asyncio.run(reader.read())
    assert quiet.serving_p99_seconds is not None and quiet.serving_p99_seconds <= 0.01
    assert slow.serving_p99_seconds is not None and slow.serving_p99_seconds > 0.1
    assert slow.outbox_age_seconds == pytest.approx(0.5)


def test_an_unreachable_endpoint_reads_as_unknown() -> None:
    assert asyncio.run(MetricsPressure(["http://127.0.0.1:9/metrics"], timeout=0.2).read()) == Pressure()


def test_the_control_loop_lowers_the_limit_while_the_signal_says_overloaded() -> None:
    class Signal:
        async def read(self) -> Pressure:
            return SLOW

    async def scenario() -> int:
        limit, stop = AimdLimit(8), asyncio.Event()
        task = asyncio.create_task(control(limit, Signal(), 0.01, stop))
        while limit.value > 1:
            await asyncio.sleep(0.01)
        stop.set()
        await task
        return limit.value

    assert asyncio.run(asyncio.wait_for(scenario(), timeout=10)) == 1
