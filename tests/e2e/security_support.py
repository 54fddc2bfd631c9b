"""Tries at a running stack's closed doors, shared by the single stack's security test and the cluster's.

`tests/e2e/test_security.py` runs them against `memloop up --tls`, `tests/e2e/test_cluster.py`
against `memloop up --cluster`: the same clients, so both stacks are held to the same refusals.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Any

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc
from nats.js.errors import NotFoundError

from services.cli.stack import Stack
from services.common.nats_access import NatsAccess
from services.common.nats_connect import connect_nats
from services.common.nats_urls import nats_servers
from services.common.tls import TlsFiles


def operator_tls(stack: Stack) -> TlsFiles:
    """The operator's certificate of the stack's CA (the stack must run TLS)."""
    files = stack.tls_files("operator")
    assert files is not None
    return files


def health(channel: grpc.Channel) -> int:
    with channel:
        reply = health_pb2_grpc.HealthStub(channel).Check(health_pb2.HealthCheckRequest(), timeout=5)
        return int(reply.status)


def refused(channel: grpc.Channel) -> grpc.StatusCode:
    """The status a health check on `channel` fails with (the test fails if it succeeds)."""
    with pytest.raises(grpc.RpcError) as caught:
        health(channel)
    code: grpc.StatusCode = caught.value.code()
    return code


async def connect(stack: Stack, access: NatsAccess, errors: list[str]) -> Any:
    """A NATS client of the stack's server(s) (every node of a cluster) as `access`; async errors go to `errors`."""

    async def on_error(exc: Exception) -> None:
        errors.append(str(exc))

    return await connect_nats(
        nats_servers(stack.nats_server_url),
        connect_timeout=3,
        allow_reconnect=False,
        max_reconnect_attempts=0,
        error_cb=on_error,
        **access.connect_options(),
    )


async def subject_count(stack: Stack, subject: str) -> int:
    """Messages the learning stream holds on `subject` (read as admin)."""
    client = await connect(stack, stack.nats_access("admin"), [])
    try:
        js = client.jetstream(timeout=5)
        try:
            info = await js.stream_info(stack.spec.learning_stream, subjects_filter=subject)
        except NotFoundError:
            return 0
        return int((info.state.subjects or {}).get(subject, 0))
    finally:
        await client.close()


def learning_subject(stack: Stack, tenant: str) -> str:
    return f"{stack.spec.subject_prefix}.learning.{tenant}"


async def wait_for_errors(errors: list[str], done: Callable[[list[str]], bool], timeout: float = 5.0) -> None:
    """Until `done(errors)` holds or `timeout` passes: the server's -ERR reaches nats-py's error
    callback asynchronously, after the flush that carried the refused operation returned."""
    deadline = time.monotonic() + timeout
    while not done(errors) and time.monotonic() < deadline:
        await asyncio.sleep(0.02)


def forge_learning_event(stack: Stack, access: NatsAccess, subject: str) -> list[str]:
    """Publish a forged learning event on `subject` as `access`: the errors the server answered with
    (returned as soon as a violation arrives, or after a few seconds without one)."""

    async def forge() -> list[str]:
        errors: list[str] = []
        try:
            client = await connect(stack, access, errors)
        except Exception as exc:  # no user: the server refuses the connection itself
            return [str(exc)]
        try:
            await client.publish(subject, b"forged learning event")
            await client.flush(timeout=5)
            await wait_for_errors(errors, violation)
        finally:
            await client.close()
        return errors

    return asyncio.run(forge())


def violation(errors: list[str]) -> bool:
    """Whether the server answered with a permissions or authorization violation."""
    return any("permissions violation" in e.lower() or "authorization violation" in e.lower() for e in errors)
