"""Back-pressure from the request path: the worker takes fewer events at once when serving suffers.

Idle CPU priority (services/common/priority.py) keeps the worker off a core serving wants *now*;
this keeps the loop's total demand down while serving is slow or its outbox is backing up (the
relay cannot publish because the machine is busy). The signal is read from serving's and the
relay's own metrics; the reaction is AIMD on the number of events in flight, the rule TCP uses for
a shared link: halve the window when the signal says "overloaded", grow it by one per quiet tick.
A missing signal (peer down, scrape failed) is treated as quiet, so back-pressure can only slow
learning, never stop it: the floor is one event in flight.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol


@dataclass(frozen=True)
class Pressure:
    """What the request path looks like over the last interval; None = not known."""

    serving_p99_seconds: float | None = None
    outbox_age_seconds: float | None = None


@dataclass(frozen=True)
class PressureLimits:
    """Above either target the request path counts as overloaded."""

    serving_p99_seconds: float = 0.05
    outbox_age_seconds: float = 5.0

    def overloaded(self, pressure: Pressure) -> bool:
        slow = pressure.serving_p99_seconds is not None and pressure.serving_p99_seconds > self.serving_p99_seconds
        late = pressure.outbox_age_seconds is not None and pressure.outbox_age_seconds > self.outbox_age_seconds
        return slow or late


class PressureSignal(Protocol):
    async def read(self) -> Pressure: ...


class AimdLimit:
    """The number of events the worker may have in flight: within [floor, ceiling], starting at
    the ceiling (no pressure known yet means full speed)."""

    def __init__(self, ceiling: int, *, floor: int = 1, limits: PressureLimits | None = None) -> None:
        if not 1 <= floor <= ceiling:
            raise ValueError("need 1 <= floor <= ceiling")
        self.floor, self.ceiling = floor, ceiling
        self._limits = limits or PressureLimits()
        self._value = ceiling

    @property
    def value(self) -> int:
        return self._value

    def __call__(self) -> int:
        return self._value

    def observe(self, pressure: Pressure) -> int:
        """One control step: multiplicative decrease when overloaded, additive increase otherwise."""
        if self._limits.overloaded(pressure):
            self._value = max(self.floor, self._value // 2)
        else:
            self._value = min(self.ceiling, self._value + 1)
        return self._value
