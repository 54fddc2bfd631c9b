"""The memory process's settings: one frozen object, built from the environment by bootstrap.

`MemorySettings` holds core's settings and one part per capability that has any: consolidation's
sleep-time triggers and deletion's workflow (the table below). Nothing else in memory reads the
environment.

Embedding (`core/adapters/embedders.py`):

| variable | default | meaning |
|---|---|---|
| MEMLOOP_EMBEDDER | minilm | `minilm` (all-MiniLM-L6-v2, offline) or `hashing` (lexical, no model) |
| MEMLOOP_MEMORY_ENCODER_PRECISION | fp32 | MiniLM: `fp32` (as shipped), `int8` or `bf16` (linear layers) |
| MEMLOOP_CONFLICT_SIMILARITY | 0.75 | FindConflicts: a same-type memory this similar to a candidate is a conflict |

int8 costs 0.55 of fp32's CPU per query embedded alone and 0.67 per stored text in calls of 64, but
its search agrees with fp32's on only 0.73-0.85 of the top 10 on the project's texts and moves
fixture pairs across the conflict threshold, against a goal of 0.95 and none
(`bench/bench_memory_encoder.py`): hence fp32. Vectors are stored per embedder name, and int8's
name differs (`all-MiniLM-L6-v2+int8`): a process started at the other precision finds no index
persisted under that name and rebuilds, embedding every active memory that has no vector of that
name before it reports SERVING (about 6-8 ms of CPU per memory; a peer starting after it finds the
vectors stored). Searches never run on an empty index, but a one-replica deployment is down for the
rebuild; roll replicas one at a time. Switching back finds the old vectors still stored. Run both
processes of a replica at the same precision, or each embeds what the other stores.

Deletion (issue 6):

| variable | default | meaning |
|---|---|---|
| MEMLOOP_SERVING_TARGET | — | serving's host:port (content blobs, request ids) |
| MEMLOOP_SERVING_LOOP_TARGET | — | serving's loop-only process, preferred when set (MEMLOOP_SERVING_ROLE=loop) |
| MEMLOOP_SERVICE_TOKEN (or _FILE) | — | the loop's service token, to call serving |
| MEMLOOP_LEARNING_STREAM | MEMLOOP_LEARNING | the learning stream (its dead letters: `<name>_DLQ`) |
| MEMLOOP_DELETION_POLL_SECONDS | 5 | how often the workflow looks for work when nothing wakes it |
| MEMLOOP_REPLICA_HEARTBEAT_SECONDS | 5 | how often a replica refreshes its registry row |
| MEMLOOP_REPLICA_LIVENESS_SECONDS | 30 | a replica silent this long is not waited for by new deletions |
| MEMLOOP_DELETION_LEASE_SECONDS | 60 | how long a runner holds a deletion before another may take it over |
| MEMLOOP_DELETION_PARALLELISM | 16 | concurrent calls to serving while deleting content |
| MEMLOOP_DELETION_RPC_TIMEOUT_SECONDS | 10 | deadline of each call to serving and NATS |
| MEMLOOP_FAULT_DELETION_CRASH_AFTER_STEP | off | TEST ONLY: SIGKILL self right after that location is done |

Clustered mode (issue 19; `core/adapters/standby_reads.py`): GetMemory, ListMemories and GetLineage
may read a standby (SearchMemories confirms its hits on the primary).

| variable | default | meaning |
|---|---|---|
| MEMLOOP_MEMORY_STANDBY_DATABASE_URL | — | a streaming standby of the memory database (URL form as the primary's) |
| MEMLOOP_MEMORY_STANDBY_MAX_LAG_SECONDS | 1 | the standby is read only while within this lag |

Learning yields to serving (issue 15; `services/common/priority.py`):

| variable | default | meaning |
|---|---|---|
| MEMLOOP_LEARNING_PRIORITY | idle | `idle`: ingestion threads run at SCHED_IDLE (else nice 19); `normal`: no change |
| MEMLOOP_LEARNING_THREADS | 1 | torch/OpenMP/BLAS threads for embedding |
| MEMLOOP_LEARNING_BACKENDS | nice | lowered threads' PostgreSQL backends: `nice` (nice 19) or `idle` (SCHED_IDLE) |
| MEMLOOP_INGEST_WORKERS | 4 | threads of the ingestion executor (ApplyLearning, FindConflicts) |
| MEMLOOP_MEMORY_ROLE | all | `all`: one process (ingestion on idle threads); `retrieval`, `ingest`: see below |

A split replica (issue 15; what `memloop up`, the cluster and the deploy files run) is two OS
processes, because a SCHED_IDLE thread the kernel parks while it holds the GIL stalls every other
thread of its process: separate executors in one process do not keep retrieval's threads free.

- `retrieval`: the front process, every thread at normal priority, none at idle. It serves every
  RPC (SearchMemories, GetContext, reads, review, Forget, procedures, consolidation) and no
  scheduled consolidation job; it keeps its FAISS index in step from the change feed on the ingestion
  process's change notices (and the poll). Ingestion RPCs sent to it directly run inline at normal
  priority (a fallback for direct clients; the loop's worker calls the ingestion process).
- `ingest`: the whole process at idle priority (`lower_process`, as the worker). It serves the
  worker's RPCs only (FindConflicts, BatchGetProcessedEvents, GetProcessedEvent, ApplyLearning,
  BatchApplyLearning), keeps its own FAISS index for FindConflicts, registers as a replica of
  its own, so a deletion waits for its index and files like any other copy, and runs the
  sleep-time consolidation scheduler (`bootstrap.schedules_consolidation`).
"""

from __future__ import annotations

import os
import socket
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from services.common.encoder_precision import precision_setting
from services.common.priority import LearningPriority
from services.common.settings import (
    CommonSettings,
    app_role_password,
    database_url_for,
    env_float,
    env_int,
    env_str,
)
from services.memory.consolidation.settings import ConsolidationSettings
from services.memory.deletion.settings import DeletionSettings

__all__ = ["ConsolidationSettings", "DeletionSettings", "MemorySettings"]

EMBEDDERS = ("minilm", "hashing")
ROLES = ("all", "retrieval", "ingest")
DEFAULT_ENCODER_PRECISION = "fp32"


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
    app_password: str = ""  # MEMLOOP_MEMORY_DB_PASSWORD(_FILE); empty: libpq's own sources
    # issue 15: ingestion (ApplyLearning, FindConflicts, index catch-up) on its own low-priority threads
    learning: LearningPriority = field(default_factory=LearningPriority)
    ingest_workers: int = 4
    # clustered mode: a streaming standby some read-only RPCs may read, within a lag bound
    # (core/adapters/standby_reads.py); empty: every read goes to the primary
    standby_database_url: str = ""
    standby_max_lag_seconds: float = 1.0
    # issue 15: `all` (one process), or one half of a split replica: `retrieval` or `ingest`
    role: str = "all"
    # MiniLM's precision (MEMLOOP_MEMORY_ENCODER_PRECISION; the minilm embedder only): `fp32`, `int8` or `bf16`
    encoder_precision: str = DEFAULT_ENCODER_PRECISION

    @property
    def serves_retrieval(self) -> bool:
        return self.role != "ingest"

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
        role = env_str(env, "MEMLOOP_MEMORY_ROLE", "all").lower()
        if role not in ROLES:
            raise SystemExit(f"MEMLOOP_MEMORY_ROLE={role!r}: choose one of {', '.join(ROLES)}")
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
            app_password=app_role_password(env, "memory"),
            learning=LearningPriority.from_env(env),
            ingest_workers=env_int(env, "MEMLOOP_INGEST_WORKERS", 4),
            standby_database_url=env_str(env, "MEMLOOP_MEMORY_STANDBY_DATABASE_URL"),
            standby_max_lag_seconds=env_float(env, "MEMLOOP_MEMORY_STANDBY_MAX_LAG_SECONDS", 1.0),
            role=role,
            encoder_precision=precision_setting(env, "MEMLOOP_MEMORY_ENCODER_PRECISION", DEFAULT_ENCODER_PRECISION),
        )
