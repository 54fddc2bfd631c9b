"""Ed25519 keys for bearer tokens: the issuer's private key, and the public key set services verify with.

Why asymmetric: with one shared HS256 secret, every process that verifies tokens could also mint
one, for any tenant. Now only the issuer (the launcher, `memloop token`, an operator's identity
service) holds a private key; serving, memory, policy, relay, worker and console hold only public
keys, so a compromised service cannot forge a token. Each token names its key (`kid`, a
fingerprint of the public key) so a key set can hold the old and the new key during a rotation.
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

ALGORITHM = "EdDSA"
_PEM_BLOCK = re.compile(r"-----BEGIN PUBLIC KEY-----.*?-----END PUBLIC KEY-----", re.S)


class InvalidKey(ValueError):
    """A key or key set that cannot be used (not PEM, not Ed25519, empty)."""


def key_id(public: Ed25519PublicKey) -> str:
    """A stable fingerprint of a public key: 16 hex digits of SHA-256 over its raw bytes."""
    raw = public.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    return hashlib.sha256(raw).hexdigest()[:16]


def _public_pem(public: Ed25519PublicKey) -> str:
    pem = public.public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
    return pem.decode("ascii")


@dataclass(frozen=True)
class SigningKey:
    """The issuer's private key. Never given to a service."""

    private: Ed25519PrivateKey

    @classmethod
    def generate(cls) -> SigningKey:
        return cls(Ed25519PrivateKey.generate())

    @classmethod
    def from_pem(cls, pem: str) -> SigningKey:
        try:
            key = serialization.load_pem_private_key(pem.encode("ascii"), password=None)
        except (ValueError, TypeError, UnicodeEncodeError) as exc:
            raise InvalidKey(f"not a PEM private key: {exc}") from exc
        if not isinstance(key, Ed25519PrivateKey):
            raise InvalidKey(f"the issuer key must be Ed25519, not {type(key).__name__}")
        return cls(key)

    @classmethod
    def from_file(cls, path: Path) -> SigningKey:
        return cls.from_pem(path.read_text(encoding="ascii"))

    @property
    def kid(self) -> str:
        return key_id(self.private.public_key())

    def private_pem(self) -> str:
        pem = self.private.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
        )
        return pem.decode("ascii")

    def public_pem(self) -> str:
        return _public_pem(self.private.public_key())

    def public_key_set(self) -> PublicKeySet:
        return PublicKeySet.from_pem_bundle(self.public_pem())


@dataclass(frozen=True)
class PublicKeySet:
    """The public keys tokens may be signed with, by key id (several during a rotation)."""

    keys: Mapping[str, Ed25519PublicKey]

    @classmethod
    def from_pem_bundle(cls, text: str) -> PublicKeySet:
        """One or more concatenated `PUBLIC KEY` PEM blocks; each must be Ed25519."""
        keys: dict[str, Ed25519PublicKey] = {}
        for block in _PEM_BLOCK.findall(text):
            try:
                key = serialization.load_pem_public_key(block.encode("ascii"))
            except (ValueError, UnicodeEncodeError) as exc:
                raise InvalidKey(f"not a PEM public key: {exc}") from exc
            if not isinstance(key, Ed25519PublicKey):
                raise InvalidKey(f"token keys must be Ed25519, not {type(key).__name__}")
            keys[key_id(key)] = key
        if not keys:
            raise InvalidKey("no PEM public key found")
        return cls(keys)

    def get(self, kid: str) -> Ed25519PublicKey | None:
        return self.keys.get(kid)

    def pem_bundle(self) -> str:
        return "".join(_public_pem(key) for key in self.keys.values())


def write_keypair(directory: Path, *, private_name: str, public_name: str) -> tuple[Path, Path]:
    """Create (once) an issuer key pair in `directory`; the private key file is readable by its owner only."""
    directory.mkdir(parents=True, exist_ok=True)
    private_path, public_path = directory / private_name, directory / public_name
    if not private_path.exists():
        key = SigningKey.generate()
        fd = os.open(private_path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w", encoding="ascii") as handle:
            handle.write(key.private_pem())
    if not public_path.exists():
        public_path.write_text(SigningKey.from_file(private_path).public_pem(), encoding="ascii")
    return private_path, public_path
