"""The one process main loop every service runs (`services.common.app.run`): start hooks in order,
then the server and the tasks until a stop, then the stop hooks; a failed task stops the process."""

from __future__ import annotations

import asyncio

import pytest

from services.common.app import App, _serve
from services.common.auth import TokenVerifier
from services.common.auth_keys import SigningKey
from services.common.settings import CommonSettings


def _settings() -> CommonSettings:
    return CommonSettings(
        service_name="runner-test",
        grpc_host="127.0.0.1",
        grpc_port=0,
        metrics_port=0,
        auth=TokenVerifier(SigningKey.generate().public_key_set()),
        log_level="INFO",
        otlp_endpoint="",
        span_file="",
        drain_seconds=0.1,
    )


def test_start_hooks_run_in_order_before_the_tasks_and_stop_hooks_after_them() -> None:
    # Given: two start hooks (one plain, one async), a task that stops the process, two stop hooks
    steps: list[str] = []
    stopping = asyncio.Event()

    async def start_async() -> None:
        steps.append("start-async")

    async def task() -> None:
        steps.append("task")
        stopping.set()
        await stopping.wait()
        steps.append("task-drained")

    app = App(
        _settings(),
        tasks=[task],
        on_start=[lambda: steps.append("start-plain"), start_async],
        on_stop=[lambda: steps.append("stop-1"), lambda: steps.append("stop-2")],
        stopping=stopping,
    )
    # When: the process runs
    asyncio.run(_serve(app))
    # Then: everything happened once, in that order
    assert steps == ["start-plain", "start-async", "task", "task-drained", "stop-1", "stop-2"]


def test_a_failed_task_stops_the_others_and_its_error_surfaces_after_the_stop_hooks() -> None:
    # Given: one task that waits for the stop and one that fails
    steps: list[str] = []
    stopping = asyncio.Event()

    async def patient() -> None:
        await stopping.wait()
        steps.append("patient-stopped")

    async def failing() -> None:
        raise RuntimeError("lost the stream")

    app = App(_settings(), tasks=[patient, failing], on_stop=[lambda: steps.append("stopped")], stopping=stopping)
    # When / Then: the process ends with the task's error, after the other task stopped and the hooks ran
    with pytest.raises(RuntimeError, match="lost the stream"):
        asyncio.run(_serve(app))
    assert steps == ["patient-stopped", "stopped"]


def test_a_stop_requested_during_start_up_skips_serving_but_still_runs_the_stop_hooks() -> None:
    # Given: a start hook that sees SIGTERM arrive (it sets the stop, as a retrying connect would)
    steps: list[str] = []
    stopping = asyncio.Event()

    async def never() -> None:
        steps.append("task ran")

    async def sigterm_while_connecting() -> None:
        stopping.set()

    app = App(
        _settings(),
        tasks=[never],
        on_start=[sigterm_while_connecting, lambda: steps.append("second start hook ran")],
        on_stop=[lambda: steps.append("stopped")],
        stopping=stopping,
    )
    # When: the process runs
    asyncio.run(_serve(app))
    # Then: no further start hook and no task ran, but the stop hooks did
    assert steps == ["stopped"]
