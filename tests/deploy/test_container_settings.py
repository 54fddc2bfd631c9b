"""Settings a container platform needs: secrets from mounted files, and stream replicas for R3."""

from __future__ import annotations

from pathlib import Path

import pytest

from services.common.auth import issue_token
from services.common.auth_keys import SigningKey
from services.common.db import url_for_role
from services.common.settings import CommonSettings, app_role_password, database_url_for, env_secret, stream_replicas
from services.relay.adapters.jetstream import StreamSpec
from services.relay.bootstrap import RelaySettings
from services.worker.bootstrap import WorkerSettings

PUBLIC_KEYS = SigningKey.generate().public_pem()


def test_a_setting_is_read_from_the_file_its_FILE_variable_names(tmp_path: Path) -> None:
    secret = tmp_path / "service_token"
    secret.write_text("token-from-a-mounted-file\n", encoding="utf-8")
    assert (
        env_secret({"MEMLOOP_SERVICE_TOKEN_FILE": str(secret)}, "MEMLOOP_SERVICE_TOKEN") == "token-from-a-mounted-file"
    )


def test_the_issuer_public_keys_come_from_a_mounted_file(tmp_path: Path) -> None:
    issuer = SigningKey.generate()
    keys = tmp_path / "public-keys.pem"
    keys.write_text(issuer.public_pem(), encoding="ascii")
    common = CommonSettings.from_env("serving", {"MEMLOOP_AUTH_PUBLIC_KEYS_FILE": str(keys)})
    token = issue_token(issuer, subject="a", tenant="acme", roles=["reader"])
    assert common.auth.verify(token).tenant == "acme"


def test_the_direct_variable_still_works() -> None:
    assert env_secret({"MEMLOOP_AUTH_SECRET": "direct"}, "MEMLOOP_AUTH_SECRET") == "direct"


def test_both_forms_at_once_are_refused(tmp_path: Path) -> None:
    secret = tmp_path / "s"
    secret.write_text("a", encoding="utf-8")
    with pytest.raises(SystemExit, match="not both"):
        env_secret({"X": "b", "X_FILE": str(secret)}, "X")


def test_an_unreadable_secret_file_names_the_setting(tmp_path: Path) -> None:
    with pytest.raises(SystemExit, match="MEMLOOP_AUTH_PUBLIC_KEYS_FILE"):
        CommonSettings.from_env("serving", {"MEMLOOP_AUTH_PUBLIC_KEYS_FILE": str(tmp_path / "missing")})


def test_the_worker_reads_its_service_token_from_a_file(tmp_path: Path) -> None:
    token = tmp_path / "token"
    token.write_text("tok\n", encoding="utf-8")
    env = {
        "MEMLOOP_AUTH_PUBLIC_KEYS": PUBLIC_KEYS,
        "MEMLOOP_SERVICE_TOKEN_FILE": str(token),
        "MEMLOOP_SERVING_TARGET": "serving:50051",
        "MEMLOOP_POLICY_TARGET": "policy:50052",
        "MEMLOOP_MEMORY_TARGET": "memory:50053",
        "MEMLOOP_STREAM_REPLICAS": "3",
    }
    settings = WorkerSettings.from_env(env)
    assert settings.service_token == "tok"
    assert settings.streams.replicas == 3


def test_stream_replicas_default_to_one_and_accept_a_cluster_count() -> None:
    assert stream_replicas({}) == 1
    assert stream_replicas({"MEMLOOP_STREAM_REPLICAS": "3"}) == 3


@pytest.mark.parametrize("value", ["0", "6", "three"])
def test_stream_replicas_outside_what_jetstream_allows_are_refused(value: str) -> None:
    with pytest.raises(SystemExit, match="MEMLOOP_STREAM_REPLICAS"):
        stream_replicas({"MEMLOOP_STREAM_REPLICAS": value})


def test_the_relay_creates_the_learning_stream_with_the_configured_replicas() -> None:
    env = {
        "MEMLOOP_AUTH_PUBLIC_KEYS": PUBLIC_KEYS,
        "MEMLOOP_SERVING_DATABASE_URL": "postgresql+psycopg://owner@db:5432/memloop_serving",
        "MEMLOOP_STREAM_REPLICAS": "3",
    }
    settings = RelaySettings.from_env(env)
    spec = StreamSpec(settings.stream_name, settings.subject_prefix, 3600.0, settings.stream_replicas)
    assert spec.config().num_replicas == 3


def test_an_operator_written_libpq_url_is_read_with_the_psycopg_driver(tmp_path: Path) -> None:
    # Given the URL as CloudNativePG writes it into its `<cluster>-app` Secret, mounted as a file
    url_file = tmp_path / "uri"
    url_file.write_text("postgresql://memloop_owner:pw@memloop-serving-db-rw:5432/memloop_serving\n", encoding="utf-8")
    env = {"MEMLOOP_SERVING_DATABASE_URL_FILE": str(url_file)}
    # Then SQLAlchemy gets the psycopg form of the same URL
    assert database_url_for(env, "serving") == (
        "postgresql+psycopg://memloop_owner:pw@memloop-serving-db-rw:5432/memloop_serving"
    )
    assert database_url_for({"MEMLOOP_DATABASE_URL": "postgres://o@h/d"}, "memory") == "postgresql+psycopg://o@h/d"


def test_the_app_role_connects_with_its_own_password_never_the_owner_one() -> None:
    owner = "postgresql+psycopg://memloop_owner:owner-pw@db:5432/memloop_serving"
    assert url_for_role(owner, "memloop_serving_app", "app-pw") == (
        "postgresql+psycopg://memloop_serving_app:app-pw@db:5432/memloop_serving"
    )
    assert (
        url_for_role(owner, "memloop_serving_app") == "postgresql+psycopg://memloop_serving_app@db:5432/memloop_serving"
    )


def test_each_service_reads_the_password_of_its_own_role(tmp_path: Path) -> None:
    relay_pw = tmp_path / "relay"
    relay_pw.write_text("relay-pw", encoding="utf-8")
    env = {
        "MEMLOOP_AUTH_PUBLIC_KEYS": PUBLIC_KEYS,
        "MEMLOOP_SERVING_DATABASE_URL": "postgresql://memloop_owner:owner-pw@db:5432/memloop_serving",
        "MEMLOOP_SERVING_DB_PASSWORD": "serving-pw",
        "MEMLOOP_RELAY_DB_PASSWORD_FILE": str(relay_pw),
    }
    assert app_role_password(env, "serving") == "serving-pw"
    assert RelaySettings.from_env(env).conninfo == "postgresql://memloop_relay_app:relay-pw@db:5432/memloop_serving"
