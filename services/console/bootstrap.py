"""The one place that wires the console: settings → adapters → the ASGI app."""

from __future__ import annotations

import secrets

from starlette.types import ASGIApp

from services.console.adapters.dead_letters import NatsDeadLetters
from services.console.adapters.grpc_services import GrpcServices
from services.console.adapters.metrics import HttpMetricsReader
from services.console.settings import ConsoleSettings
from services.console.web.app import create_app
from services.console.web.common import Console, templates
from services.console.web.session import CsrfSigner, VerifierAuthenticator
from services.worker.adapters.jetstream import StreamNames


def build(settings: ConsoleSettings) -> ASGIApp:
    console = Console(
        services=GrpcServices(
            settings.memory_target, settings.serving_target, settings.span_file, settings.rpc_timeout, settings.tls
        ),
        dead_letters=NatsDeadLetters(
            settings.nats_url,
            StreamNames(prefix=settings.subject_prefix, learning_stream=settings.learning_stream),
            settings.nats,
        ),
        metrics=HttpMetricsReader(settings.metrics_targets),
        authenticator=VerifierAuthenticator(settings.verifier),
        signer=CsrfSigner(settings.csrf_secret or secrets.token_hex(32)),
        secure_cookies=settings.secure_cookies,
        templates=templates(),
    )
    return create_app(console)
