"""Serving's loop-only process (MEMLOOP_SERVING_ROLE=loop): its setting, and who calls it.

The worker's content reads and memory's deletions go to that process when the stack has one
(MEMLOOP_SERVING_LOOP_TARGET), and to the one serving process otherwise, so a deployment that
never starts a loop process keeps working unchanged.
"""

from __future__ import annotations

import pytest

from services.common.auth_keys import SigningKey
from services.memory.settings import DeletionSettings
from services.serving.bootstrap import ServingSettings
from services.worker.bootstrap import WorkerSettings

_KEYS = SigningKey.generate().public_pem()
_SERVING = {"MEMLOOP_DATABASE_URL": "postgresql+psycopg://u@127.0.0.1:1/db", "MEMLOOP_AUTH_PUBLIC_KEYS": _KEYS}


def test_serving_serves_everyone_unless_told_to_serve_the_loop_only() -> None:
    assert ServingSettings.from_env(_SERVING).role == "all"
    assert ServingSettings.from_env({**_SERVING, "MEMLOOP_SERVING_ROLE": "LOOP"}).role == "loop"


def test_an_unknown_role_is_refused_by_name() -> None:
    with pytest.raises(SystemExit, match="MEMLOOP_SERVING_ROLE"):
        ServingSettings.from_env({**_SERVING, "MEMLOOP_SERVING_ROLE": "agents"})


def _worker(**env: str) -> WorkerSettings:
    required = {f"MEMLOOP_{name}_TARGET": f"{name.lower()}:1" for name in ("SERVING", "POLICY", "MEMORY")}
    return WorkerSettings.from_env({**required, "MEMLOOP_SERVICE_TOKEN": "t", "MEMLOOP_AUTH_PUBLIC_KEYS": _KEYS, **env})


def test_the_worker_reads_from_the_loop_process_when_there_is_one() -> None:
    assert _worker().serving_target == "serving:1"
    assert _worker(MEMLOOP_SERVING_LOOP_TARGET="serving-loop:1").serving_target == "serving-loop:1"


def test_memory_deletes_through_the_loop_process_when_there_is_one() -> None:
    assert DeletionSettings.from_env({"MEMLOOP_SERVING_TARGET": "serving:1"}).serving_target == "serving:1"
    both = {"MEMLOOP_SERVING_TARGET": "serving:1", "MEMLOOP_SERVING_LOOP_TARGET": "serving-loop:1"}
    assert DeletionSettings.from_env(both).serving_target == "serving-loop:1"
