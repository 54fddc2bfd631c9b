"""The servers and processes memloop runs for itself: embedded PostgreSQL and NATS, service processes.

Used by the launcher (`memloop up`) and by the test fixtures, so both start things the same way and
fail with the same one-line `InfraError`.
"""

from __future__ import annotations

from services.common.infra.errors import InfraError

__all__ = ["InfraError"]
