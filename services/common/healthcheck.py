"""`python -m services.common.healthcheck [host:port] [service]`: exit 0 when the gRPC health service says SERVING.

Why a module and not grpc_health_probe: the image already holds Python and grpcio, so a container
health check (Docker's HEALTHCHECK, compose) costs no extra binary to download. Kubernetes uses
its native gRPC probe against the same health service; both ask the same question the launcher
and the tests ask, so "healthy" means one thing everywhere: the process finished its start-up
(migrations, stream and consumer set-up) and has not begun draining.

Without an address it checks 127.0.0.1 on MEMLOOP_GRPC_PORT, the port the process itself binds.
With MEMLOOP_TLS=on it presents the process's own certificate (the server requires one), so the
certificate must name 127.0.0.1 or the address given.
Exit codes: 0 SERVING, 1 anything else (NOT_SERVING, unknown service, unreachable, timeout),
2 bad usage.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping, Sequence

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc

from services.common.tls import TlsFiles, channel_credentials, tls_from_env

DEFAULT_TIMEOUT_SECONDS = 3.0


class UsageError(ValueError):
    """The arguments or environment do not name a port to check."""


def target_from(args: Sequence[str], env: Mapping[str, str]) -> tuple[str, str]:
    """(host:port, service name) from the arguments, falling back to MEMLOOP_GRPC_PORT on loopback."""
    if len(args) > 2:
        raise UsageError("usage: python -m services.common.healthcheck [host:port] [service]")
    service = args[1] if len(args) == 2 else ""
    if args:
        target = args[0]
    else:
        port = env.get("MEMLOOP_GRPC_PORT", "").strip()
        if not port.isdigit() or int(port) == 0:
            raise UsageError("no address given and MEMLOOP_GRPC_PORT is not a fixed port")
        target = f"127.0.0.1:{port}"
    host, sep, port_text = target.rpartition(":")
    if not sep or not host or not port_text.isdigit():
        raise UsageError(f"address {target!r} is not host:port")
    return target, service


def check(
    target: str, service: str = "", *, timeout: float = DEFAULT_TIMEOUT_SECONDS, tls: TlsFiles | None = None
) -> str:
    """The serving status name the server reports for `service` ("" is the whole process).

    With `tls` (the container's own MEMLOOP_TLS files) the check speaks mTLS, as the server requires:
    a kubelet's built-in gRPC probe cannot, so with TLS on the probes run this module (exec).
    """
    channel = grpc.insecure_channel(target) if tls is None else grpc.secure_channel(target, channel_credentials(tls))
    with channel:
        stub = health_pb2_grpc.HealthStub(channel)
        try:
            reply = stub.Check(health_pb2.HealthCheckRequest(service=service), timeout=timeout)
        except grpc.RpcError as exc:
            code = exc.code() if isinstance(exc, grpc.Call) else None
            return f"ERROR ({code.name if code else type(exc).__name__})"
    return str(health_pb2.HealthCheckResponse.ServingStatus.Name(reply.status))


def main(argv: Sequence[str] | None = None, env: Mapping[str, str] | None = None) -> int:
    try:
        target, service = target_from(list(sys.argv[1:] if argv is None else argv), os.environ if env is None else env)
    except UsageError as exc:
        print(exc, file=sys.stderr)
        return 2
    environment = os.environ if env is None else env
    try:
        tls = tls_from_env(environment)
    except SystemExit as exc:
        print(exc, file=sys.stderr)
        return 2
    status = check(target, service, tls=tls)
    print(f"{target} {service or '(process)'}: {status}")
    return 0 if status == "SERVING" else 1


if __name__ == "__main__":
    sys.exit(main())
