"""The memory process's settings: one frozen object, built from the environment by bootstrap."""

from __future__ import annotations

import os
import socket
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from services.common.settings import CommonSettings, database_url_for, env_float, env_int, env_str
from services.memory.consolidation_settings import ConsolidationSettings
from services.memory.deletion_settings import DeletionSettings

EMBEDDERS = ("minilm", "hashing")


@dataclass(frozen=True)
class MemorySettings:
    common: CommonSettings
    admin_database_url: str
    app_role: str
    nats_url: str
    subject_prefix: str
    replica_id: str
    index_dir: Path
    embedder: str
    poll_seconds: float
    persist_seconds: float
    cache_size: int
    conflict_similarity: float
    apply_attempts: int
    db_pool_size: int
    policy_verify_key: str  # PEM or a path to one: policy's Ed25519 public key
    consolidation: ConsolidationSettings = field(default_factory=ConsolidationSettings)  # issue 8
    deletion: DeletionSettings = field(default_factory=DeletionSettings)  # issue 6

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> MemorySettings:
        env = os.environ if env is None else env
        common = CommonSettings.from_env("memory", env)
        replica_id = env_str(env, "MEMLOOP_REPLICA_ID") or f"{socket.gethostname()}-{common.grpc_port}"
        data_dir = Path(env_str(env, "MEMLOOP_DATA_DIR", ".memloop"))
        index_dir = env_str(env, "MEMLOOP_MEMORY_INDEX_DIR") or str(data_dir / "memory-index" / replica_id)
        embedder = env_str(env, "MEMLOOP_EMBEDDER", "minilm").lower()
        if embedder not in EMBEDDERS:
            raise SystemExit(f"MEMLOOP_EMBEDDER={embedder!r}: choose one of {', '.join(EMBEDDERS)}")
        verify_key = env_str(env, "MEMLOOP_POLICY_VERIFY_KEY")
        if not verify_key:
            raise SystemExit("MEMLOOP_POLICY_VERIFY_KEY is required: memory applies only decisions policy signed")
        return cls(
            common=common,
            policy_verify_key=verify_key,
            admin_database_url=database_url_for(env, "memory"),
            app_role=env_str(env, "MEMLOOP_MEMORY_DB_ROLE", "memloop_memory_app"),
            nats_url=env_str(env, "MEMLOOP_NATS_URL", "nats://127.0.0.1:4222"),
            subject_prefix=env_str(env, "MEMLOOP_SUBJECT_PREFIX", "memloop"),
            replica_id=replica_id,
            index_dir=Path(index_dir),
            embedder=embedder,
            poll_seconds=env_float(env, "MEMLOOP_INDEX_POLL_SECONDS", 2.0),
            persist_seconds=env_float(env, "MEMLOOP_INDEX_PERSIST_SECONDS", 30.0),
            cache_size=env_int(env, "MEMLOOP_RETRIEVAL_CACHE_SIZE", 512),
            conflict_similarity=env_float(env, "MEMLOOP_CONFLICT_SIMILARITY", 0.75),
            apply_attempts=env_int(env, "MEMLOOP_APPLY_ATTEMPTS", 6),
            db_pool_size=env_int(env, "MEMLOOP_MEMORY_DB_POOL", 10),
            consolidation=ConsolidationSettings.from_env(env),
            deletion=DeletionSettings.from_env(env),
        )
