"""Policy's signature over each decision, so memory applies only what policy actually decided.

Policy signs with its Ed25519 private key; memory holds only the public key and verifies every
decision in ApplyLearning. The signed message binds everything that would change the effect of a
decision: the tenant and user it is for, the event it came from, a hash of the candidate (key,
type, origin, sensitivity, confidence, intent, text, trace, version), the outcome, the reason
codes and the policy version. A client that can reach memory (even one holding the loop's token)
cannot forge a STORE, replay a signature onto another candidate, event, user or tenant, or flip an
outcome, without policy's private key. Ed25519 rather than HMAC: memory never holds a key that
could sign. A batch of decisions shares one signature over a hash tree of these same messages
(`services/common/decision_batch.py`, where the argument that this is as strong is made).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

from services.common import decision_batch
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

    def sign_many(self, decisions: Sequence[tuple[Decision, str, str, str]]) -> list[bytes]:
        """Each (decision, tenant, user, event id)'s signature, with ONE Ed25519 signature for the
        lot: a batch proof each (`decision_batch`); a batch of one gets its single signature."""
        if len(decisions) == 1:
            decision, tenant, user, event_id = decisions[0]
            return [self.sign(decision, tenant=tenant, user=user, event_id=event_id)]
        if not decisions:
            return []
        leaves = [
            decision_batch.leaf_hash(signed_message(d, tenant=tenant, user=user, event_id=event_id))
            for d, tenant, user, event_id in decisions
        ]
        root, paths = decision_batch.tree(leaves)
        signature = self.private_key.sign(decision_batch.root_message(root))
        return [decision_batch.encode_proof(signature, path) for path in paths]

    def verifier(self) -> DecisionVerifier:
        return DecisionVerifier(self.private_key.public_key())


@dataclass(frozen=True)
class DecisionVerifier:
    """Verifies decisions with policy's public key; held by memory."""

    public_key: Ed25519PublicKey
    _roots: decision_batch.VerifiedRoots = field(default_factory=decision_batch.VerifiedRoots, compare=False)

    def verify(self, decision: Decision, *, tenant: str, user: str, event_id: str) -> bool:
        """True only for a signature policy made over exactly this decision, tenant, user and event:
        its single signature, or a batch proof leading from this decision to a root policy signed."""
        message = signed_message(decision, tenant=tenant, user=user, event_id=event_id)
        if len(decision.signature) == decision_batch.SIGNATURE_BYTES:
            return self._valid(decision.signature, message)
        proof = decision_batch.decode_proof(decision.signature)
        if proof is None:
            return False
        signature, path = proof
        root = decision_batch.root_of(message, path)
        if (root, signature) in self._roots:
            return True
        if not self._valid(signature, decision_batch.root_message(root)):
            return False
        self._roots.add((root, signature))
        return True

    def _valid(self, signature: bytes, message: bytes) -> bool:
        try:
            self.public_key.verify(signature, message)
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
