"""The running stack's address book (`.memloop/stack.json`): what `memloop up` writes so other
`memloop` commands (`dlq`, `token`, the tests' helpers) can reach the stack it started."""

from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path

from services.cli.stack import Stack
from services.cli.stack_spec import ISSUER_KEY_FILE


def write_stack_file(stack: Stack, path: Path) -> None:
    """Record where a running stack listens, so other `memloop` commands can reach it.

    The file holds the NATS admin's credentials and the operator's certificate paths: owner only.
    """
    operator_tls = stack.tls_files("operator")
    payload = {
        "nats_url": stack.nats_url,
        "subject_prefix": stack.spec.subject_prefix,
        "learning_stream": stack.spec.learning_stream,
        "span_file": str(stack.span_file),
        "auth_issuer_key_file": str(stack.spec.data_dir / ISSUER_KEY_FILE),
        "services": {name: handle.target for name, handle in stack.services.items()},
        "metrics": {name: handle.metrics_port for name, handle in stack.services.items()},
        "console_url": stack.console_url,
        "tls": asdict(operator_tls) if operator_tls is not None else None,
    }
    path.touch(mode=0o600, exist_ok=True)
    path.chmod(0o600)
    path.write_text(json.dumps(payload, indent=2))
