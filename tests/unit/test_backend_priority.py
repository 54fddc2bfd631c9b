"""The backend-priority hook alone: how a local backend is recognised from its process title,
and that a refusal by the OS turns the hook off instead of failing the caller. (With a real
PostgreSQL backend: tests/integration/test_backend_priority.py.)"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from services.common import backend_priority
from services.common.backend_priority import BackendPriority


def test_a_title_that_is_not_a_postgres_backend_is_not_recognised(tmp_path: Path) -> None:
    for pid, title in ((10, b"nats-server\0-p\0(4222)"), (11, b"postgres: app db 127.0.0.1(4222) idle")):
        (tmp_path / str(pid)).mkdir()
        (tmp_path / str(pid) / "cmdline").write_bytes(title)
    assert not backend_priority.is_local_backend(10, "(4222)", tmp_path)
    assert backend_priority.is_local_backend(11, "(4222)", tmp_path)
    assert not backend_priority.is_local_backend(11, "(42)", tmp_path)
    assert not backend_priority.is_local_backend(12, "(4222)", tmp_path)
    assert not backend_priority.is_local_backend(11, None, tmp_path)


def test_a_refused_change_turns_the_hook_off_and_raises_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[int] = []

    def refuse(pid: int, *_: object) -> None:
        calls.append(pid)
        raise PermissionError(1, "Operation not permitted")

    monkeypatch.setattr(os, "sched_setscheduler", refuse)
    monkeypatch.setattr(backend_priority, "thread_priority", lambda: (os.SCHED_IDLE, 19))
    backend = BackendPriority(pid=4242)
    backend.follow()
    backend.follow()
    assert backend.enabled is False and backend.applied is None
    assert calls == [4242], "a disabled hook tried again"


def test_the_same_priority_is_not_applied_twice(monkeypatch: pytest.MonkeyPatch) -> None:
    applied: list[tuple[int, int]] = []
    monkeypatch.setattr(os, "sched_setscheduler", lambda pid, policy, _: applied.append((pid, policy)))
    monkeypatch.setattr(os, "setpriority", lambda *_: None)
    wanted = [(os.SCHED_IDLE, 19), (os.SCHED_IDLE, 19), (os.SCHED_OTHER, 0)]
    monkeypatch.setattr(backend_priority, "thread_priority", lambda: wanted.pop(0))
    backend = BackendPriority(pid=7)
    for _ in range(3):
        backend.follow()
    assert applied == [(7, os.SCHED_IDLE), (7, os.SCHED_OTHER)]
