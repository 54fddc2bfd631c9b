"""The stack across hosts: mTLS on every gRPC port and a NATS that knows each service by name.

One stack, started as `memloop up --tls` starts it (a local CA, a certificate per service, its own
embedded nats-server with a user per service and TLS), on the session's PostgreSQL. The loop runs
end to end through it (so every permission the services need is granted), and each way in that
the design closes is tried with a real client and refused: plaintext, no certificate, another
CA's certificate, a token signed with a service's key, and NATS users publishing or reading the
learning stream without being the relay or the worker.

Token refusal by key is covered in depth by tests/unit/test_token_keys.py (a non-issuer key, a
forged key id, HS256, `alg: none`); here it is checked once over the wire, with a key a real
service holds.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any, TypedDict

import grpc
import pytest
from grpc_health.v1 import health_pb2

from memloop_client import Client, RetryPolicy, Unavailable, tls_credentials
from services.cli.alice import run_alice
from services.cli.stack import Stack
from services.cli.stack_spec import StackSpec
from services.common.auth import issue_token
from services.common.auth_keys import SigningKey
from services.common.gen.memloop.v1 import serving_service_pb2, serving_service_pb2_grpc
from services.common.nats_access import NatsAccess
from services.common.tls import TlsFiles, channel_credentials, generate_local_pki
from services.console.adapters.dead_letters import NatsDeadLetters
from services.console.adapters.grpc_services import GrpcServices
from services.console.ports import ServiceError
from services.worker.adapters.jetstream import StreamNames
from tests.e2e.security_support import (
    connect,
    forge_learning_event,
    health,
    learning_subject,
    operator_tls,
    refused,
    subject_count,
    violation,
    wait_for_errors,
)
from tests.e2e.support import eventually, fresh_tenant
from tests.helpers import TestInfra, random_ref

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(300)]


@pytest.fixture(scope="module")
def secure(infra: TestInfra, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    run = random_ref("sec").replace("-", "_")
    spec = StackSpec(
        data_dir=tmp_path_factory.mktemp("secure"),
        database_admin_url=infra.admin_db_url,
        nats_url="",  # the stack's own embedded nats-server: users, permissions, TLS
        database_prefix=run,
        subject_prefix=run,
        learning_stream=f"{run.upper()}_LEARNING",
        embedder="hashing",
        console=False,
        tls=True,
    )
    stack = Stack(spec).start()
    try:
        yield stack
    finally:
        stack.stop()


# --- the loop works, with every part authenticated ---------------------------------------------


def test_the_alice_loop_runs_end_to_end_over_mtls_with_per_service_nats_users(secure: Stack) -> None:
    # Given the stack with TLS on and a NATS that knows each service by name
    tenant = fresh_tenant()
    # When Alice's requests go through serving, the relay, the worker and memory, and she forgets
    run = run_alice(
        secure.services["serving"].target,
        secure.services["memory"].target,
        secure.token(tenant, ("reader", "writer")),
        tenant=tenant,
        tls=operator_tls(secure),
    )
    # Then every claim holds: the relay published, the worker consumed and applied, memory's
    # notices and its erasure of the stream all worked under their own NATS permissions
    failed = {item.name: item.detail for item in run.items if not item.ok}
    assert not failed
    assert {"episode_active", "forget_reaches_every_location"} <= {item.name for item in run.items}


def test_a_certificate_of_the_stack_ca_gets_through(secure: Stack) -> None:
    # The control for the refusals below: same server, same call, a certificate of the right CA.
    for name in ("serving", "memory", "policy", "relay", "worker"):
        channel = grpc.secure_channel(secure.services[name].target, channel_credentials(operator_tls(secure)))
        assert health(channel) == health_pb2.HealthCheckResponse.SERVING


# --- gRPC: who is refused -----------------------------------------------------------------------


def test_a_plaintext_client_is_refused_when_tls_is_on(secure: Stack) -> None:
    for name in ("serving", "memory", "policy"):
        assert refused(grpc.insecure_channel(secure.services[name].target)) == grpc.StatusCode.UNAVAILABLE


def test_a_tls_client_without_a_certificate_is_refused(secure: Stack) -> None:
    ca = Path(operator_tls(secure).ca_file).read_bytes()
    channel = grpc.secure_channel(secure.services["serving"].target, grpc.ssl_channel_credentials(ca))
    assert refused(channel) == grpc.StatusCode.UNAVAILABLE


def test_a_client_certificate_from_another_ca_is_refused(secure: Stack, tmp_path: Path) -> None:
    # Given a certificate for "serving" itself, correct in every way but signed by another CA
    other = generate_local_pki(tmp_path / "other-ca", ["serving"]).files("serving")
    cert, key, _ = other.read()
    trusted = Path(operator_tls(secure).ca_file).read_bytes()  # the client trusts the real server
    credentials = grpc.ssl_channel_credentials(trusted, private_key=key, certificate_chain=cert)
    # Then the server refuses the handshake
    assert refused(grpc.secure_channel(secure.services["memory"].target, credentials)) == grpc.StatusCode.UNAVAILABLE


def test_a_token_signed_with_a_service_key_is_refused_over_mtls(secure: Stack) -> None:
    # Given policy's own Ed25519 private key (a real service key, not the issuer's)
    policy_key = SigningKey.from_file(secure.policy_signing_key_file)
    forged = issue_token(policy_key, subject="memloop-loop", tenant="*", roles=["service"])
    channel = grpc.secure_channel(secure.services["serving"].target, channel_credentials(operator_tls(secure)))
    request = serving_service_pb2.GetOutboxEventRequest(
        tenant=fresh_tenant(), event_id="00000000-0000-0000-0000-0000000000a1"
    )
    with channel, pytest.raises(grpc.RpcError) as caught:
        serving_service_pb2_grpc.ServingServiceStub(channel).GetOutboxEvent(
            request, metadata=(("authorization", f"Bearer {forged}"),), timeout=5
        )
    # Then the mTLS handshake passes, and the token is refused by key
    assert caught.value.code() == grpc.StatusCode.UNAUTHENTICATED


class Targets(TypedDict):
    serving: str
    memory: str


def test_the_python_client_connects_with_a_certificate_and_is_refused_without(secure: Stack) -> None:
    files = operator_tls(secure)
    targets = Targets(serving=secure.services["serving"].target, memory=secure.services["memory"].target)
    tenant = fresh_tenant()
    token = secure.token(tenant, ("reader",))
    # With the CA and a certificate of it, a read goes through
    credentials = tls_credentials(files.ca_file, cert_file=files.cert_file, key_file=files.key_file)
    with Client(**targets, tenant=tenant, token=token, credentials=credentials) as client:
        assert client.context("alice", "when can we meet?").memories == ()
    # Without a client certificate (or in plaintext) it never reaches the servicer
    no_retry = RetryPolicy(max_attempts=1)
    for lacking in (tls_credentials(files.ca_file), None):
        with (
            Client(**targets, tenant=tenant, token=token, credentials=lacking, retry=no_retry) as client,
            pytest.raises(Unavailable),
        ):
            client.context("alice", "when can we meet?", timeout=5)


def test_the_consoles_channel_to_memory_speaks_mtls_with_the_consoles_certificate(secure: Stack) -> None:
    tenant = fresh_tenant()
    memory, serving = secure.services["memory"].target, secure.services["serving"].target

    async def review_items(tls: TlsFiles | None) -> list[Any]:
        services = GrpcServices(memory, serving, "", 5.0, tls)
        try:
            return await services.for_token(secure.token(tenant, ("reviewer",))).review_items(tenant, 0)
        finally:
            await services.close()

    assert asyncio.run(review_items(secure.tls_files("console"))) == []
    with pytest.raises(ServiceError) as refused:  # the same console without its certificate
        asyncio.run(review_items(None))
    assert refused.value.code == "UNAVAILABLE"


# --- NATS: who may publish and consume learning events -----------------------------------------


@pytest.mark.parametrize("user", ["worker", "memory", "no-user"])
def test_a_nats_client_without_the_relays_credentials_cannot_publish_a_learning_event(secure: Stack, user: str) -> None:
    # Given the worker's or memory's credentials (or TLS with no user at all)
    access = secure.nats_access(user) if user != "no-user" else NatsAccess(tls=operator_tls(secure))
    subject = learning_subject(secure, fresh_tenant())
    # When it publishes a learning event
    errors = forge_learning_event(secure, access, subject)
    # Then the server refuses it and the stream never holds it
    assert violation(errors), errors
    assert asyncio.run(subject_count(secure, subject)) == 0


def test_the_relay_publishes_the_worker_dead_letters_and_the_console_replays_under_their_own_users(
    secure: Stack,
) -> None:
    # The control for the refusals above, and the rest of the permission table at work.
    tenant = fresh_tenant()
    subject = learning_subject(secure, tenant)
    console = NatsDeadLetters(
        secure.nats_server_url,
        StreamNames(prefix=secure.spec.subject_prefix, learning_stream=secure.spec.learning_stream),
        secure.nats_access("console"),
    )

    async def publish() -> None:
        client = await connect(secure, secure.nats_access("relay"), [])
        try:
            js = client.jetstream(timeout=5)
            await js.publish(subject, b"not a LearningEvent", stream=secure.spec.learning_stream)
        finally:
            await client.close()

    # Given the relay's user publishing a malformed event: the stream keeps it
    asyncio.run(publish())
    assert asyncio.run(subject_count(secure, subject)) == 1
    # Then the worker's user consumes it and writes the dead letter, which the console's user lists
    letters = eventually(lambda: asyncio.run(console.list(tenant)) or None, what="the worker dead-lettered it")
    assert [letter.event_id for letter in letters] == [""]
    # And the console's user replays it onto the learning stream (the operator's one way in)
    assert asyncio.run(console.replay(tenant, letters[0].sequence)).startswith("replayed")
    assert asyncio.run(subject_count(secure, subject)) == 2


@pytest.mark.parametrize("user", ["relay", "memory", "console"])
def test_a_nats_client_without_the_workers_credentials_cannot_consume_the_learning_stream(
    secure: Stack, user: str
) -> None:
    async def try_to_read() -> tuple[str, list[str]]:
        errors: list[str] = []
        client = await connect(secure, secure.nats_access(user), errors)
        try:
            js = client.jetstream(timeout=3)
            outcome = "consumed"
            try:  # a consumer of its own on the learning stream
                sub = await js.pull_subscribe(
                    f"{secure.spec.subject_prefix}.learning.>",
                    durable=f"thief-{user}",
                    stream=secure.spec.learning_stream,
                )
                await sub.fetch(1, timeout=2)
            except Exception as exc:  # a timeout: the server never answers a request it refused
                outcome = f"refused: {type(exc).__name__}"
            # and a plain subscription to the learning subjects, and to the worker's inbox
            await client.subscribe(f"{secure.spec.subject_prefix}.learning.>")
            await client.subscribe("_INBOX_worker.>")
            await client.flush(timeout=3)
            await wait_for_errors(errors, _both_subscriptions_refused)
            return outcome, errors
        finally:
            await client.close()

    outcome, errors = asyncio.run(try_to_read())
    assert outcome.startswith("refused"), outcome
    assert _both_subscriptions_refused(errors), errors


def _both_subscriptions_refused(errors: list[str]) -> bool:
    """The server refused the subscription to the learning subjects and the one to the worker's inbox."""
    violations = [e.lower() for e in errors if "permissions violation for subscription" in e.lower()]
    learning = any(e.endswith('.learning.>"') for e in violations)
    return learning and any('"_inbox_worker.>"' in e for e in violations)  # nats-py lower-cases the message


def test_a_plaintext_or_userless_nats_client_is_refused(secure: Stack) -> None:
    async def attempt(access: NatsAccess) -> str:
        try:
            client = await connect(secure, access, [])
        except Exception as exc:
            return f"refused: {type(exc).__name__}"
        await client.close()
        return "connected"

    # No TLS at all (the server requires it), then TLS with the CA's certificate but no user
    assert asyncio.run(attempt(NatsAccess())).startswith("refused")
    assert asyncio.run(attempt(NatsAccess(tls=operator_tls(secure)))).startswith("refused")
    # And the admin, as the control
    assert asyncio.run(attempt(secure.nats_access("admin"))) == "connected"
