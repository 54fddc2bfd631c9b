"""Transport security settings: the one TLS switch, the local CA, NATS users and their permissions,
and PostgreSQL's `sslmode=verify-full` surviving every rewrite of a database URL."""

from __future__ import annotations

import os
import stat
import subprocess
from pathlib import Path

import psycopg.conninfo
import pytest
from cryptography import x509
from cryptography.x509.oid import ExtendedKeyUsageOID

from services.common.db import url_for_role
from services.common.infra.nats import nats_server_binary
from services.common.infra.nats_auth import (
    LOOP_USERS,
    authorization_block,
    loop_permissions,
    loop_users,
    password_variable,
    tls_block,
)
from services.common.nats_access import NatsAccess, redact_url
from services.common.settings import database_url_for, nats_access
from services.common.tls import TlsFiles, generate_local_pki, tls_from_env
from services.relay.bootstrap import libpq_url


@pytest.fixture(scope="module")
def pki_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    directory = tmp_path_factory.mktemp("pki")
    generate_local_pki(directory, ["memory", "serving"])
    return directory


def _env(pki_dir: Path, name: str = "memory", prefix: str = "MEMLOOP_TLS") -> dict[str, str]:
    return generate_local_pki(pki_dir, []).files(name).as_env(prefix)


# --- the switch ----------------------------------------------------------------------------------


def test_tls_is_off_by_default() -> None:
    assert tls_from_env({}) is None


def test_tls_on_names_every_missing_file() -> None:
    with pytest.raises(SystemExit, match="MEMLOOP_TLS_KEY_FILE, MEMLOOP_TLS_CA_FILE"):
        tls_from_env({"MEMLOOP_TLS": "on", "MEMLOOP_TLS_CERT_FILE": "/x.pem"})


def test_files_given_while_tls_is_off_are_refused_rather_than_ignored() -> None:
    with pytest.raises(SystemExit, match="MEMLOOP_TLS is off"):
        tls_from_env({"MEMLOOP_TLS_CERT_FILE": "/x.pem"})


def test_an_unreadable_tls_file_stops_the_process_at_start(tmp_path: Path) -> None:
    env = {
        "MEMLOOP_TLS": "on",
        "MEMLOOP_TLS_CERT_FILE": str(tmp_path / "missing.pem"),
        "MEMLOOP_TLS_KEY_FILE": str(tmp_path / "k"),
        "MEMLOOP_TLS_CA_FILE": str(tmp_path / "ca"),
    }
    with pytest.raises(SystemExit, match=r"missing\.pem"):
        tls_from_env(env)


def test_tls_on_with_readable_files_returns_them(pki_dir: Path) -> None:
    files = tls_from_env(_env(pki_dir))
    assert files == TlsFiles(str(pki_dir / "memory.pem"), str(pki_dir / "memory-key.pem"), str(pki_dir / "ca.pem"))


# --- the local CA --------------------------------------------------------------------------------


def test_each_certificate_is_signed_by_the_ca_for_both_ends_and_names_its_service_and_loopback(pki_dir: Path) -> None:
    ca = x509.load_pem_x509_certificate((pki_dir / "ca.pem").read_bytes())
    cert = x509.load_pem_x509_certificate((pki_dir / "serving.pem").read_bytes())
    cert.verify_directly_issued_by(ca)
    names = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    assert "serving" in names.get_values_for_type(x509.DNSName)
    assert "localhost" in names.get_values_for_type(x509.DNSName)
    assert "127.0.0.1" in [str(ip) for ip in names.get_values_for_type(x509.IPAddress)]
    usages = cert.extensions.get_extension_for_class(x509.ExtendedKeyUsage).value
    assert {ExtendedKeyUsageOID.SERVER_AUTH, ExtendedKeyUsageOID.CLIENT_AUTH} <= set(usages)


def test_the_ca_is_kept_across_runs_and_private_keys_are_owner_only(tmp_path: Path) -> None:
    first = generate_local_pki(tmp_path, ["relay"])
    ca_before = first.ca_file.read_bytes()
    again = generate_local_pki(tmp_path, ["relay", "worker"])
    assert again.ca_file.read_bytes() == ca_before
    ca = x509.load_pem_x509_certificate(ca_before)
    x509.load_pem_x509_certificate(Path(again.files("worker").cert_file).read_bytes()).verify_directly_issued_by(ca)
    for key in (tmp_path / "ca-key.pem", Path(again.files("worker").key_file)):
        assert stat.S_IMODE(key.stat().st_mode) == 0o600


# --- NATS access ---------------------------------------------------------------------------------


def test_nats_access_is_optional_for_servers_without_users() -> None:
    access = nats_access({})
    assert access == NatsAccess() and access.connect_options() == {}


def test_a_nats_user_needs_its_password_read_from_a_file(tmp_path: Path) -> None:
    with pytest.raises(SystemExit, match="together"):
        nats_access({"MEMLOOP_NATS_USER": "relay"})
    (tmp_path / "pw").write_text("s3cret\n")
    access = nats_access({"MEMLOOP_NATS_USER": "relay", "MEMLOOP_NATS_PASSWORD_FILE": str(tmp_path / "pw")})
    options = access.connect_options()
    assert (options["user"], options["password"], options["inbox_prefix"]) == ("relay", "s3cret", "_INBOX_relay")
    assert "s3cret" not in repr(access)


def test_nats_tls_follows_the_one_switch_unless_nats_names_its_own(pki_dir: Path) -> None:
    grpc_env = _env(pki_dir)
    assert nats_access(grpc_env).tls == tls_from_env(grpc_env)
    assert nats_access({**grpc_env, "MEMLOOP_NATS_TLS": "off"}).tls is None
    own = {**grpc_env, "MEMLOOP_NATS_TLS_CA_FILE": str(pki_dir / "serving.pem")}
    tls = nats_access(own).tls
    assert tls is not None and tls.ca_file == str(pki_dir / "serving.pem") and tls.cert_file.endswith("memory.pem")


def test_credentials_never_reach_a_message() -> None:
    assert redact_url("nats://admin:pw@127.0.0.1:4222") == "nats://127.0.0.1:4222"


# --- NATS permissions ----------------------------------------------------------------------------


def test_only_the_relay_and_the_console_replay_may_publish_learning_events() -> None:
    permissions = loop_permissions("memloop", "MEMLOOP_LEARNING")
    publishers = {user for user, (publish, _) in permissions.items() if "memloop.learning.>" in publish}
    assert publishers == {"relay", "console"}
    assert not any("learning" in subject for subject in permissions["worker"][0] if subject.startswith("memloop."))


def test_only_the_worker_may_create_or_pull_a_consumer_of_the_learning_stream() -> None:
    permissions = loop_permissions("memloop", "MEMLOOP_LEARNING")
    assert permissions.pop("admin") == ((">",), (">",))  # the operator's own user: everything
    for user, (publish, subscribe) in permissions.items():
        consumes = any(s.startswith(("$JS.API.CONSUMER.", "$JS.ACK.")) for s in publish)
        assert consumes == (user == "worker"), user
        assert not any(s.startswith("memloop.learning") for s in subscribe), user
        assert "_INBOX.>" not in subscribe, user  # replies only on the user's own inbox prefix


def test_memory_gets_its_notice_subjects_and_single_message_erasure_only() -> None:
    publish, subscribe = loop_permissions("p", "S")["memory"]
    assert set(subscribe) == {
        "p.memory.changes",
        "p.review.*",
        "p.deletion.requests",
        "p.deletion.acks",
        "_INBOX_memory.>",
    }
    assert {s for s in publish if s.startswith("$JS")} == {
        "$JS.API.STREAM.MSG.GET.S",
        "$JS.API.STREAM.MSG.DELETE.S",
        "$JS.API.STREAM.MSG.GET.S_DLQ",
        "$JS.API.STREAM.MSG.DELETE.S_DLQ",
    }


def test_the_server_config_blocks_name_every_user_and_require_client_certificates(pki_dir: Path) -> None:
    users = loop_users("memloop", "MEMLOOP_LEARNING", passwords={"relay": "fixed"})
    block = authorization_block(users.values())
    assert block.count('"user": ') == 5 and '"password": "fixed"' in block
    assert len({u.password for u in users.values()}) == 5  # the others got fresh random ones
    files = generate_local_pki(pki_dir, []).files("memory")
    assert "verify: true" in tls_block(files) and files.ca_file in tls_block(files)


# --- PostgreSQL's verify-full --------------------------------------------------------------------


def test_sslmode_verify_full_survives_every_rewrite_of_the_database_url() -> None:
    given = "postgresql://owner:pw@db.example:5432/memloop?sslmode=verify-full&sslrootcert=/etc/memloop/pg/ca.crt"
    url = database_url_for({"MEMLOOP_DATABASE_URL": given}, "serving")
    assert url.startswith("postgresql+psycopg://") and url.endswith(
        "?sslmode=verify-full&sslrootcert=/etc/memloop/pg/ca.crt"
    )
    as_app = libpq_url(url_for_role(url, "memloop_relay_app", "app-pw"))
    parsed = psycopg.conninfo.conninfo_to_dict(as_app)
    assert parsed["sslmode"] == "verify-full" and parsed["sslrootcert"] == "/etc/memloop/pg/ca.crt"
    assert (parsed["user"], parsed["host"], parsed["dbname"]) == ("memloop_relay_app", "db.example", "memloop")


def test_the_printed_block_for_an_external_server_is_a_config_nats_server_accepts(tmp_path: Path) -> None:
    users = loop_users("memloop", "MEMLOOP_LEARNING")
    config = tmp_path / "auth.conf"
    config.write_text(authorization_block(users.values(), password_variables=True) + "\n")
    assert all(u.password not in config.read_text() for u in users.values())  # references, not secrets
    env = {**os.environ, **{password_variable(name): f"pw-{name}" for name in LOOP_USERS}}
    checked = subprocess.run(
        [str(nats_server_binary()), "-t", "-c", str(config)], env=env, capture_output=True, timeout=30
    )
    assert checked.returncode == 0, checked.stderr
