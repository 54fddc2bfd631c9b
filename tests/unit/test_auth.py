from __future__ import annotations

import time

import jwt
import pytest

from services.common.auth import ALL_TENANTS, SERVICE_ROLE, Principal, issue_token, verify_token
from services.common.errors import Unauthenticated

SECRET = "unit-test-secret-with-enough-length-for-hs256"


def test_a_signed_token_round_trips_subject_tenant_and_roles() -> None:
    token = issue_token(SECRET, subject="alice", tenant="acme", roles=["reader", "writer"])
    principal = verify_token(SECRET, token)
    assert principal == Principal(subject="alice", tenant="acme", roles=frozenset({"reader", "writer"}))


def test_a_token_signed_with_another_secret_is_rejected() -> None:
    token = issue_token("another-secret-that-is-also-long-enough!!", subject="mallory", tenant="acme", roles=[])
    with pytest.raises(Unauthenticated) as caught:
        verify_token(SECRET, token)
    assert caught.value.reason == "TOKEN_INVALID"


def test_an_expired_token_is_rejected_with_its_reason() -> None:
    token = jwt.encode({"sub": "a", "tenant": "acme", "roles": [], "exp": int(time.time()) - 5}, SECRET)
    with pytest.raises(Unauthenticated) as caught:
        verify_token(SECRET, token)
    assert caught.value.reason == "TOKEN_EXPIRED"


def test_a_token_without_a_tenant_is_rejected() -> None:
    token = jwt.encode({"sub": "a", "roles": [], "exp": int(time.time()) + 60}, SECRET)
    with pytest.raises(Unauthenticated):
        verify_token(SECRET, token)


def test_only_a_service_token_may_act_for_every_tenant() -> None:
    service = Principal(subject="worker", tenant=ALL_TENANTS, roles=frozenset({SERVICE_ROLE}))
    impostor = Principal(subject="x", tenant=ALL_TENANTS, roles=frozenset({"reader"}))
    tenant_user = Principal(subject="alice", tenant="acme", roles=frozenset({"reader"}))
    assert service.can_act_for("acme") and service.can_act_for("northwind")
    assert not impostor.can_act_for("acme")
    assert tenant_user.can_act_for("acme") and not tenant_user.can_act_for("northwind")
