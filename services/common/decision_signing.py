"""Policy's signature over each decision, so memory applies only what policy actually decided.

Policy signs with its Ed25519 private key; memory holds only the public key and verifies every
decision in ApplyLearning. The signed message binds everything that would change the effect of a
decision: the tenant and user it is for, the event it came from, a hash of the candidate (key,
type, origin, sensitivity, confidence, intent, text, trace, version), the outcome, the reason
codes and the policy version. A client that can reach memory (even one holding the loop's token)
cannot forge a STORE, replay a signature onto another candidate, event, user or tenant, or flip an
outcome, without policy's private key. Ed25519 rather than HMAC: memory never holds a key that
could sign.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

from services.common.vocabulary import Candidate, Decision

_CONTEXT = "memloop.decision.v1"


def candidate_hash(candidate: Candidate) -> str:
    """A hex SHA-256 of the candidate's canonical form (every field that decides its effect)."""
    material = {
        "candidate_key": candidate.candidate_key,
        "type": candidate.type.value,
        "origin": candidate.origin.value,
        "sensitivity": candidate.sensitivity.value,
        "confidence": repr(float(candidate.confidence)),
        "intent_key": candidate.intent_key,
        "text": candidate.text,
        "event_id": candidate.event_id,
        "trace_id": candidate.trace_id,
        "version": candidate.version,
    }
    return hashlib.sha256(json.dumps(material, sort_keys=True, ensure_ascii=True).encode()).hexdigest()


def signed_message(decision: Decision, *, tenant: str, user: str, event_id: str) -> bytes:
    """The exact bytes policy signs and memory verifies for one decision."""
    material = {
        "context": _CONTEXT,
        "tenant": tenant,
        "user": user,
        "event_id": event_id,
        "candidate": candidate_hash(decision.candidate),
        "outcome": decision.outcome.value,
        "reasons": [reason.code for reason in decision.reasons],
        "policy_version": decision.policy_version,
    }
    return json.dumps(material, sort_keys=True, ensure_ascii=True).encode()


@dataclass(frozen=True)
class DecisionSigner:
    """Signs decisions; held by policy only."""

    private_key: Ed25519PrivateKey

    def sign(self, decision: Decision, *, tenant: str, user: str, event_id: str) -> bytes:
        return self.private_key.sign(signed_message(decision, tenant=tenant, user=user, event_id=event_id))

    def verifier(self) -> DecisionVerifier:
        return DecisionVerifier(self.private_key.public_key())


@dataclass(frozen=True)
class DecisionVerifier:
    """Verifies decisions with policy's public key; held by memory."""

    public_key: Ed25519PublicKey

    def verify(self, decision: Decision, *, tenant: str, user: str, event_id: str) -> bool:
        """True only for a signature policy made over exactly this decision, tenant, user and event."""
        if len(decision.signature) != 64:
            return False
        try:
            self.public_key.verify(
                decision.signature, signed_message(decision, tenant=tenant, user=user, event_id=event_id)
            )
        except InvalidSignature:
            return False
        return True


def generate_private_key_pem() -> bytes:
    """A fresh Ed25519 private key as PKCS#8 PEM (the launcher writes one per data folder)."""
    key = Ed25519PrivateKey.generate()
    pem = serialization.Encoding.PEM
    return key.private_bytes(pem, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())


def public_key_pem(private_pem: bytes) -> bytes:
    key = _private(private_pem)
    return key.public_key().public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)


def load_signer(value: str) -> DecisionSigner:
    """A signer from PEM text or a path to a PEM file (MEMLOOP_POLICY_SIGNING_KEY)."""
    return DecisionSigner(_private(_pem(value)))


def load_verifier(value: str) -> DecisionVerifier:
    """A verifier from PEM text or a path to a PEM file (MEMLOOP_POLICY_VERIFY_KEY)."""
    key = serialization.load_pem_public_key(_pem(value))
    if not isinstance(key, Ed25519PublicKey):
        raise ValueError("the policy verify key must be an Ed25519 public key")
    return DecisionVerifier(key)


def _private(pem: bytes) -> Ed25519PrivateKey:
    key = serialization.load_pem_private_key(pem, password=None)
    if not isinstance(key, Ed25519PrivateKey):
        raise ValueError("the policy signing key must be an Ed25519 private key")
    return key


def _pem(value: str) -> bytes:
    text = value.strip()
    if text.startswith("-----BEGIN"):
        return text.encode()
    return Path(text).read_bytes()
