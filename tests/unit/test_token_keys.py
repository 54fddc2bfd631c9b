"""Asymmetric tokens: only the issuer's private key signs, services verify with public keys, and
nothing else is accepted by default (another Ed25519 key, a shared HS256 secret, `alg: none`)."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import stat
import time
from pathlib import Path

import jwt
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa

from services.common.auth import Principal, TokenVerifier, issue_token, verify_token
from services.common.auth_keys import InvalidKey, PublicKeySet, SigningKey, write_keypair
from services.common.errors import Unauthenticated
from services.common.settings import token_verifier

ISSUER = SigningKey.generate()
SERVICES_KEYS = ISSUER.public_key_set()


def _refused(verifier: TokenVerifier, token: str) -> Unauthenticated:
    with pytest.raises(Unauthenticated) as caught:
        verifier.verify(token)
    return caught.value


def test_an_issuer_token_round_trips_and_names_its_key() -> None:
    token = issue_token(ISSUER, subject="alice", tenant="acme", roles=["reader", "writer"])
    header = jwt.get_unverified_header(token)
    assert header["alg"] == "EdDSA" and header["kid"] == ISSUER.kid
    principal = TokenVerifier(SERVICES_KEYS).verify(token)
    assert principal == Principal(subject="alice", tenant="acme", roles=frozenset({"reader", "writer"}))


def test_a_token_signed_with_a_non_issuer_key_is_refused() -> None:
    # Given a service (or anyone) holding its own Ed25519 key, not the issuer's
    other = SigningKey.generate()
    token = issue_token(other, subject="svc", tenant="*", roles=["service"])
    error = _refused(TokenVerifier(SERVICES_KEYS), token)
    assert error.reason == "TOKEN_INVALID" and "not in the issuer key set" in str(error)


def test_a_non_issuer_key_claiming_the_issuer_key_id_fails_the_signature() -> None:
    other = SigningKey.generate()
    now = int(time.time())
    claims = {"sub": "svc", "tenant": "*", "roles": ["service"], "iat": now, "exp": now + 60}
    token = jwt.encode(claims, other.private, algorithm="EdDSA", headers={"kid": ISSUER.kid})
    assert _refused(TokenVerifier(SERVICES_KEYS), token).reason == "TOKEN_INVALID"


def test_a_shared_secret_token_is_refused_unless_the_verifier_was_given_that_secret() -> None:
    legacy = issue_token("a-shared-secret-that-is-long-enough-for-hs256", subject="a", tenant="acme", roles=[])
    assert "not accepted" in str(_refused(TokenVerifier(SERVICES_KEYS), legacy))
    # the migration window: the same verifier, built with the secret, takes both kinds
    both = TokenVerifier(SERVICES_KEYS, hs256_secret="a-shared-secret-that-is-long-enough-for-hs256")
    assert both.verify(legacy).tenant == "acme"
    assert both.verify(issue_token(ISSUER, subject="a", tenant="acme", roles=[])).tenant == "acme"


def test_the_public_key_used_as_an_hmac_secret_is_refused() -> None:
    # algorithm confusion: HS256 keyed with the public key every service holds, naming the issuer's kid
    def b64(data: bytes) -> str:
        return base64.urlsafe_b64encode(data).rstrip(b"=").decode()

    header = b64(json.dumps({"alg": "HS256", "typ": "JWT", "kid": ISSUER.kid}).encode())
    claims = b64(json.dumps({"sub": "m", "tenant": "*", "roles": ["service"], "exp": int(time.time()) + 60}).encode())
    mac = hmac.new(ISSUER.public_pem().encode(), f"{header}.{claims}".encode(), hashlib.sha256).digest()
    forged = f"{header}.{claims}.{b64(mac)}"
    assert _refused(TokenVerifier(SERVICES_KEYS), forged).reason == "TOKEN_INVALID"


def test_an_unsigned_token_is_refused() -> None:
    unsigned = jwt.encode({"sub": "m", "tenant": "acme", "roles": [], "exp": int(time.time()) + 60}, "", "none")
    assert _refused(TokenVerifier(SERVICES_KEYS), unsigned).reason == "TOKEN_INVALID"


def test_an_expired_issuer_token_is_refused_with_its_reason() -> None:
    token = issue_token(ISSUER, subject="a", tenant="acme", roles=[], ttl_seconds=-5)
    assert _refused(TokenVerifier(SERVICES_KEYS), token).reason == "TOKEN_EXPIRED"


def test_a_key_set_holds_old_and_new_keys_during_a_rotation() -> None:
    new = SigningKey.generate()
    rotating = PublicKeySet.from_pem_bundle(ISSUER.public_pem() + new.public_pem())
    verifier = TokenVerifier(rotating)
    for key in (ISSUER, new):
        assert verifier.verify(issue_token(key, subject="a", tenant="acme", roles=[])).subject == "a"


def test_only_ed25519_public_keys_are_accepted_in_a_key_set() -> None:
    rsa_pem = (
        rsa.generate_private_key(public_exponent=65537, key_size=2048)
        .public_key()
        .public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
        .decode()
    )
    with pytest.raises(InvalidKey, match="Ed25519"):
        PublicKeySet.from_pem_bundle(rsa_pem)
    with pytest.raises(InvalidKey):
        PublicKeySet.from_pem_bundle("not a key")


def test_services_refuse_a_shared_secret_by_default_and_say_what_to_set() -> None:
    with pytest.raises(SystemExit, match="MEMLOOP_AUTH_PUBLIC_KEYS"):
        token_verifier({"MEMLOOP_AUTH_SECRET": "a-shared-secret-that-is-long-enough-for-hs256"})
    with pytest.raises(SystemExit, match="MEMLOOP_AUTH_PUBLIC_KEYS"):
        token_verifier({})
    with pytest.raises(SystemExit, match="MEMLOOP_AUTH_PUBLIC_KEYS"):
        token_verifier({"MEMLOOP_AUTH_PUBLIC_KEYS": "garbage"})


def test_the_migration_flag_accepts_the_shared_secret_alongside_the_keys() -> None:
    secret = "a-shared-secret-that-is-long-enough-for-hs256"
    verifier = token_verifier(
        {
            "MEMLOOP_AUTH_PUBLIC_KEYS": ISSUER.public_pem(),
            "MEMLOOP_AUTH_SECRET": secret,
            "MEMLOOP_AUTH_ALLOW_HS256": "on",
        }
    )
    assert verify_token(verifier, issue_token(secret, subject="a", tenant="acme", roles=[])).tenant == "acme"
    only_keys = token_verifier({"MEMLOOP_AUTH_PUBLIC_KEYS": ISSUER.public_pem()})
    with pytest.raises(Unauthenticated):
        only_keys.verify(issue_token(secret, subject="a", tenant="acme", roles=[]))


def test_the_issuer_key_pair_is_written_once_with_a_private_file(tmp_path: Path) -> None:
    private, public = write_keypair(tmp_path, private_name="issuer.pem", public_name="public.pem")
    assert stat.S_IMODE(private.stat().st_mode) == 0o600
    assert "PRIVATE KEY" not in public.read_text()
    first = SigningKey.from_file(private).kid
    write_keypair(tmp_path, private_name="issuer.pem", public_name="public.pem")  # kept, not rotated
    assert SigningKey.from_file(private).kid == first
    token = issue_token(SigningKey.from_file(private), subject="a", tenant="acme", roles=[])
    assert TokenVerifier(PublicKeySet.from_pem_bundle(public.read_text())).verify(token).subject == "a"


def test_the_cli_writes_an_issuer_pair_and_signs_tokens_the_services_accept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from services.cli.main import main

    assert main(["issuer-key", "--out-dir", str(tmp_path / "issuer")]) == 0
    monkeypatch.setenv("MEMLOOP_AUTH_ISSUER_KEY_FILE", str(tmp_path / "issuer" / "auth_issuer_key.pem"))
    capsys.readouterr()
    assert main(["token", "--tenant", "*", "--roles", "service", "--ttl-seconds", "86400"]) == 0
    token = capsys.readouterr().out.strip()
    services = token_verifier({"MEMLOOP_AUTH_PUBLIC_KEYS_FILE": str(tmp_path / "issuer" / "auth_public_keys.pem")})
    principal = services.verify(token)
    assert principal.tenant == "*" and principal.roles == frozenset({"service"})
    assert jwt.decode(token, options={"verify_signature": False})["exp"] - time.time() > 80000


def test_the_cli_refuses_to_sign_without_an_issuer_key(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from services.cli.main import main

    monkeypatch.delenv("MEMLOOP_AUTH_ISSUER_KEY", raising=False)
    monkeypatch.delenv("MEMLOOP_AUTH_ISSUER_KEY_FILE", raising=False)
    assert main(["token", "--tenant", "acme", "--data-dir", str(tmp_path)]) == 2


def test_a_verified_token_is_not_checked_again_until_it_expires_and_then_it_is_refused(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Given a verifier with a clock, and a count of the signature checks it makes
    now = [time.time()]
    verifier = TokenVerifier(SERVICES_KEYS, clock=lambda: now[0])
    checks: list[str] = []
    decode = jwt.decode

    def counted(token: str, *args: object, **kwargs: object) -> object:
        checks.append(token)
        return decode(token, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(jwt, "decode", counted)
    token = issue_token(ISSUER, subject="svc", tenant="*", roles=["service"], ttl_seconds=60)

    # When the same token comes with every call of a peer
    principals = {verifier.verify(token) for _ in range(5)}

    # Then its signature was checked once, and every call got the same principal
    assert len(checks) == 1 and principals == {Principal("svc", "*", frozenset({"service"}))}

    # And once its expiry has passed it is refused, although it was verified before
    now[0] += 61
    assert _refused(verifier, token).reason == "TOKEN_EXPIRED"


def test_a_token_differing_from_a_verified_one_in_any_byte_is_verified_afresh() -> None:
    verifier = TokenVerifier(SERVICES_KEYS)
    token = issue_token(ISSUER, subject="alice", tenant="acme", roles=["reader"])
    verifier.verify(token)
    header, payload, signature = token.split(".")
    claims = json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
    forged = base64.urlsafe_b64encode(json.dumps({**claims, "tenant": "*"}).encode()).rstrip(b"=").decode()
    assert _refused(verifier, f"{header}.{forged}.{signature}").reason == "TOKEN_INVALID"
