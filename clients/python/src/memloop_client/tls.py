"""TLS credentials for `Client(credentials=...)` from PEM files, as memloop's own services read them.

    from memloop_client import Client, tls_credentials
    Client(..., credentials=tls_credentials("ca.pem", cert_file="agent.pem", key_file="agent-key.pem"))

A memloop deployment with TLS on (MEMLOOP_TLS=on) requires a client certificate from its CA on
every port (mTLS), so an agent passes its own certificate and key; the CA file alone verifies the
server but is refused by a server that requires a client certificate.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

import grpc


def tls_credentials(ca_file: str, *, cert_file: str = "", key_file: str = "") -> grpc.ChannelCredentials:
    """Verify the server against `ca_file`; present `cert_file` + `key_file` when given (both or neither)."""
    if bool(cert_file) != bool(key_file):
        raise ValueError("give cert_file and key_file together, or neither")
    ca = Path(ca_file).read_bytes()
    if not cert_file:
        return grpc.ssl_channel_credentials(root_certificates=ca)
    return grpc.ssl_channel_credentials(
        root_certificates=ca, private_key=Path(key_file).read_bytes(), certificate_chain=Path(cert_file).read_bytes()
    )


def tls_credentials_from_env(env: Mapping[str, str] | None = None) -> grpc.ChannelCredentials | None:
    """MEMLOOP_TLS_CA_FILE (and MEMLOOP_TLS_CERT_FILE / MEMLOOP_TLS_KEY_FILE): TLS credentials, else None."""
    env = os.environ if env is None else env
    ca = env.get("MEMLOOP_TLS_CA_FILE", "").strip()
    if not ca:
        return None
    return tls_credentials(
        ca,
        cert_file=env.get("MEMLOOP_TLS_CERT_FILE", "").strip(),
        key_file=env.get("MEMLOOP_TLS_KEY_FILE", "").strip(),
    )
