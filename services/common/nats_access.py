"""How a memloop process authenticates to NATS: its own user and password, and TLS when it is on.

Every `nats.connect` of the services takes `**access.connect_options()`. Both parts are optional:
a NATS server configured without users (a developer's own server, the machine's server in CI)
accepts a client that sends none. The embedded stack gives each service its own user, whose
permissions the server enforces (`services/common/infra/nats_auth.py`): only the relay may
publish learning events, only the worker may consume them. Read from the environment by
`services.common.settings.nats_access`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from services.common.tls import TlsFiles, client_ssl_context


def redact_url(url: str) -> str:
    """`url` without the credentials it may carry (`nats://user:password@host` → `nats://host`), for messages."""
    return re.sub(r"//[^@/]*@", "//", url)


def inbox_prefix(user: str) -> str:
    """A user's private reply subjects: `_INBOX_<user>`, which only that user may subscribe to.

    With the default shared `_INBOX.>` any client allowed replies could subscribe to every inbox
    and read the messages JetStream delivers to the worker's pull requests.
    """
    return f"_INBOX_{user}"


@dataclass(frozen=True)
class NatsAccess:
    """A NATS user (empty: none) and the TLS files to verify the server and present a certificate."""

    user: str = ""
    password: str = ""
    tls: TlsFiles | None = None

    def __repr__(self) -> str:  # the password never reaches a log line through a settings dump
        return f"NatsAccess(user={self.user!r}, tls={self.tls is not None})"

    def connect_options(self) -> dict[str, Any]:
        """Keyword arguments for `nats.connect`: credentials, private inbox, TLS context."""
        options: dict[str, Any] = {}
        if self.user:
            options.update(user=self.user, password=self.password, inbox_prefix=inbox_prefix(self.user))
        if self.tls is not None:
            options["tls"] = client_ssl_context(self.tls)
        return options
