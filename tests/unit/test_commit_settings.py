"""How the loop's writes commit beside serving's: serving's NOTIFY off its requests' path, the relay's
statements without waiting for their WAL flush (issue 15: serving's p99 at 50 req/s), both
settings with defaults and a refusal by name for anything else."""

from __future__ import annotations

import pytest

from services.common.auth_keys import SigningKey
from services.relay.bootstrap import RelaySettings
from services.serving.bootstrap import ServingSettings

_KEYS = SigningKey.generate().public_pem()
_SERVING = {"MEMLOOP_DATABASE_URL": "postgresql+psycopg://u@127.0.0.1:1/db", "MEMLOOP_AUTH_PUBLIC_KEYS": _KEYS}
_RELAY = {"MEMLOOP_SERVING_DATABASE_URL": "postgresql+psycopg://u@db:5432/serving", "MEMLOOP_AUTH_PUBLIC_KEYS": _KEYS}


def test_serving_wakes_the_relays_from_its_waker_unless_told_to_after_each_commit_or_inside_it() -> None:
    assert ServingSettings.from_env(_SERVING).notify == "coalesce"
    assert ServingSettings.from_env(_SERVING).notify_interval_ms == 5
    assert ServingSettings.from_env({**_SERVING, "MEMLOOP_SERVING_NOTIFY": "after"}).notify == "after"
    assert ServingSettings.from_env({**_SERVING, "MEMLOOP_SERVING_NOTIFY": "COMMIT"}).notify == "commit"


def test_an_unknown_notify_mode_is_refused_by_name() -> None:
    with pytest.raises(SystemExit, match="MEMLOOP_SERVING_NOTIFY"):
        ServingSettings.from_env({**_SERVING, "MEMLOOP_SERVING_NOTIFY": "never"})


def test_the_relay_commits_without_waiting_for_its_flush_unless_told_to_wait() -> None:
    assert RelaySettings.from_env(_RELAY).synchronous_commit is False
    assert RelaySettings.from_env({**_RELAY, "MEMLOOP_RELAY_SYNCHRONOUS_COMMIT": "on"}).synchronous_commit is True


def test_an_unknown_relay_commit_mode_is_refused_by_name() -> None:
    with pytest.raises(SystemExit, match="MEMLOOP_RELAY_SYNCHRONOUS_COMMIT"):
        RelaySettings.from_env({**_RELAY, "MEMLOOP_RELAY_SYNCHRONOUS_COMMIT": "local"})


def test_a_relay_claims_half_its_window_at_a_time_by_default() -> None:
    config = RelaySettings.from_env(_RELAY).config
    assert (config.batch_size, config.max_in_flight) == (512, 1024)
    assert RelaySettings.from_env({**_RELAY, "MEMLOOP_RELAY_BATCH_SIZE": "64"}).config.batch_size == 64
