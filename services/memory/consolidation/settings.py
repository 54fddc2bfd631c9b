"""Consolidation's settings, read by memory's settings (`services/memory/settings.py`, its table of
variables): the capability owns them so that its wiring (`wiring.py`) needs nothing above it."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from services.common.settings import env_float, env_int, env_str


@dataclass(frozen=True)
class ConsolidationSettings:
    """`after_memories` / `idle_seconds`: the sleep-time triggers (0 disables each).

    `fault_pause_dir` is TEST-ONLY (MEMLOOP_FAULT_CONSOLIDATION_PAUSE_DIR): when set, jobs can be
    held at named phases by files in that folder (`adapters/fault_pause.py`). Unset in production.
    """

    after_memories: int = 20
    idle_seconds: float = 300.0
    poll_seconds: float = 5.0
    wait_seconds: float = 300.0
    fault_pause_dir: Path | None = None

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> ConsolidationSettings:
        pause_dir = env_str(env, "MEMLOOP_FAULT_CONSOLIDATION_PAUSE_DIR")
        settings = cls(
            after_memories=env_int(env, "MEMLOOP_CONSOLIDATE_AFTER_MEMORIES", 20),
            idle_seconds=env_float(env, "MEMLOOP_CONSOLIDATE_IDLE_SECONDS", 300.0),
            poll_seconds=env_float(env, "MEMLOOP_CONSOLIDATE_POLL_SECONDS", 5.0),
            wait_seconds=env_float(env, "MEMLOOP_CONSOLIDATE_WAIT_SECONDS", 300.0),
            fault_pause_dir=Path(pause_dir) if pause_dir else None,
        )
        if settings.after_memories < 0 or settings.idle_seconds < 0 or settings.poll_seconds <= 0:
            raise SystemExit("MEMLOOP_CONSOLIDATE_*: counts and seconds must be >= 0 (poll > 0)")
        return settings

    @property
    def scheduling(self) -> bool:
        return self.after_memories > 0 or self.idle_seconds > 0
