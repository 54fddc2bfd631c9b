"""One Ed25519 signature for a whole batch of policy decisions: a Merkle tree over their messages.

Why: signing each decision of a BatchEvaluate was ~40 % of policy's CPU, and verifying each one
~11 % of memory's ingestion CPU, per event. Policy now signs only the root of a hash tree whose
leaves are the decisions' signed messages (`decision_signing.signed_message`: tenant, user, event,
candidate hash, outcome, reasons, version), and each decision carries its proof: the root's
signature and its path of sibling hashes. Memory verifies a decision alone, as before (an
ApplyLearning of one event, a batch split by the worker, a replay), by hashing its own message up
its path to the root and checking the root's signature; a root already verified is not verified
again (`VerifiedRoots`).

Why a client still cannot write past the policy gate: accepting a decision needs a path from the
hash of that decision's exact message to a root policy signed. Without policy's private key the
only way is a SHA-256 second preimage. Leaves and inner nodes hash under different prefixes (no
inner node passes for a leaf), and the root is signed under its own context string, so a root
signature is never a valid signature of a single decision's JSON message (which starts with `{`)
nor the reverse. A decision taken out of its batch binds the same tenant, user, event and
candidate as its single signature would, so replaying it is exactly what replaying a single
signature was (and the event's idempotency makes that a no-op).

The proof, in `Decision.signature` (bytes; a 64-byte value is still a single signature):
version byte 0x01, the 64-byte root signature, then per level from the leaf up one byte (0: the
sibling is on the left, 1: on the right) and the 32-byte sibling. At most `MAX_DEPTH` levels.
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Sequence

PROOF_VERSION = 1
SIGNATURE_BYTES = 64
MAX_DEPTH = 32
_STEP = 33
_LEAF = b"\x00"
_NODE = b"\x01"
_ROOT_CONTEXT = b"memloop.decision-batch.v1\x00"

Path = list[tuple[int, bytes]]
"""From the leaf up: (side of the sibling, 0 left / 1 right, the sibling's hash)."""


def leaf_hash(message: bytes) -> bytes:
    return hashlib.sha256(_LEAF + message).digest()


def _node(left: bytes, right: bytes) -> bytes:
    return hashlib.sha256(_NODE + left + right).digest()


def root_message(root: bytes) -> bytes:
    """The exact bytes policy signs for a batch: never a single decision's message (that is JSON)."""
    return _ROOT_CONTEXT + root


def tree(leaves: Sequence[bytes]) -> tuple[bytes, list[Path]]:
    """The root over `leaves` (at least one) and each leaf's path; a lone last node moves up unchanged."""
    if not leaves:
        raise ValueError("a batch tree needs at least one leaf")
    paths: list[Path] = [[] for _ in leaves]
    level = list(leaves)
    members = [[i] for i in range(len(leaves))]
    while len(level) > 1:
        up: list[bytes] = []
        up_members: list[list[int]] = []
        for j in range(0, len(level), 2):
            if j + 1 == len(level):
                up.append(level[j])
                up_members.append(members[j])
                continue
            left, right = level[j], level[j + 1]
            for i in members[j]:
                paths[i].append((1, right))
            for i in members[j + 1]:
                paths[i].append((0, left))
            up.append(_node(left, right))
            up_members.append(members[j] + members[j + 1])
        level, members = up, up_members
    return level[0], paths


def encode_proof(signature: bytes, path: Path) -> bytes:
    return bytes([PROOF_VERSION]) + signature + b"".join(bytes([side]) + sibling for side, sibling in path)


def decode_proof(proof: bytes) -> tuple[bytes, Path] | None:
    """(root signature, path), or None for anything that is not a well-formed proof."""
    if len(proof) < 1 + SIGNATURE_BYTES or proof[0] != PROOF_VERSION:
        return None
    rest = proof[1 + SIGNATURE_BYTES :]
    if len(rest) % _STEP or len(rest) // _STEP > MAX_DEPTH:
        return None
    path: Path = []
    for start in range(0, len(rest), _STEP):
        side = rest[start]
        if side not in (0, 1):
            return None
        path.append((side, rest[start + 1 : start + _STEP]))
    return proof[1 : 1 + SIGNATURE_BYTES], path


def root_of(message: bytes, path: Path) -> bytes:
    node = leaf_hash(message)
    for side, sibling in path:
        node = _node(sibling, node) if side == 0 else _node(node, sibling)
    return node


class VerifiedRoots:
    """Roots whose signature already verified (a valid signature stays valid): the decisions of one
    batch, and of the same batch applied again, cost one Ed25519 verify. Bounded; thread-safe."""

    def __init__(self, capacity: int = 4096) -> None:
        self._capacity = capacity
        self._seen: set[tuple[bytes, bytes]] = set()
        self._lock = threading.Lock()

    def __contains__(self, item: tuple[bytes, bytes]) -> bool:
        with self._lock:
            return item in self._seen

    def add(self, item: tuple[bytes, bytes]) -> None:
        with self._lock:
            if len(self._seen) >= self._capacity:
                self._seen.clear()
            self._seen.add(item)
