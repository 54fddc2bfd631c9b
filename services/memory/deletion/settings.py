"""The deletion workflow's settings, read by memory's settings (`services/memory/settings.py`, its
table of variables): the capability owns them so that its wiring (`wiring.py`) needs nothing above it."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass

from services.common.settings import env_float, env_int, env_secret, env_str


@dataclass(frozen=True)
class DeletionSettings:
    serving_target: str = ""
    service_token: str = ""
    learning_stream: str = "MEMLOOP_LEARNING"
    poll_seconds: float = 5.0
    heartbeat_seconds: float = 5.0
    liveness_seconds: float = 30.0
    lease_seconds: float = 60.0
    parallelism: int = 16
    rpc_timeout_seconds: float = 10.0
    fault_crash_after_step: str = ""

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> DeletionSettings:
        env = os.environ if env is None else env
        settings = cls(
            serving_target=env_str(env, "MEMLOOP_SERVING_LOOP_TARGET") or env_str(env, "MEMLOOP_SERVING_TARGET"),
            service_token=env_secret(env, "MEMLOOP_SERVICE_TOKEN"),
            learning_stream=env_str(env, "MEMLOOP_LEARNING_STREAM", "MEMLOOP_LEARNING"),
            poll_seconds=env_float(env, "MEMLOOP_DELETION_POLL_SECONDS", 5.0),
            heartbeat_seconds=env_float(env, "MEMLOOP_REPLICA_HEARTBEAT_SECONDS", 5.0),
            liveness_seconds=env_float(env, "MEMLOOP_REPLICA_LIVENESS_SECONDS", 30.0),
            lease_seconds=env_float(env, "MEMLOOP_DELETION_LEASE_SECONDS", 60.0),
            parallelism=env_int(env, "MEMLOOP_DELETION_PARALLELISM", 16),
            rpc_timeout_seconds=env_float(env, "MEMLOOP_DELETION_RPC_TIMEOUT_SECONDS", 10.0),
            fault_crash_after_step=env_str(env, "MEMLOOP_FAULT_DELETION_CRASH_AFTER_STEP"),
        )
        if settings.liveness_seconds <= settings.heartbeat_seconds:
            raise SystemExit("MEMLOOP_REPLICA_LIVENESS_SECONDS must be longer than MEMLOOP_REPLICA_HEARTBEAT_SECONDS")
        return settings
