"""Per-tenant FAISS indexes over active memories, persisted with the cursor they reflect.

Where a forget ends (the fourth of its four files, after `core/service/index_sync.py`): `apply`
removes the vector of every change that is no longer active, by id.

Index type: `IndexIDMap2` over `IndexFlatIP` on L2-normalised vectors (inner product = cosine).
- It removes by id (`remove_ids`), which supersession and deletion need; HNSW cannot remove.
- It is exact, so retrieval quality is the embedder's alone, with nothing to train or tune; one
  tenant's memories fit (1e5 vectors of dimension 384 are ~150 MB and search in milliseconds).
  The cost is a linear scan and an O(n) compaction per removal batch; a tenant far past that
  size would move to `IndexIVFFlat` with a hashtable direct map (removable, approximate; see
  bench/bench_retrieval.py for the trade-off measured at 1e6).
- Users are separated with an `IDSelectorBatch` of the caller's ids, so one user's query never
  scores another's vectors; the database re-check after search is the second guard.

Persistence writes a fresh generation directory and then atomically replaces `manifest.json`,
which names it; a crash mid-write leaves the previous generation in force. Applying a row's state
is idempotent, so replaying the feed from an older cursor over a newer index is harmless.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import shutil
import threading
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import faiss
import numpy as np

from services.common.vocabulary import MemoryType
from services.memory.core.service.ports import FeedCursor, IndexedChange, IndexManifest, Vector

_log = logging.getLogger(__name__)
_MANIFEST = "manifest.json"


@dataclass
class _TenantIndex:
    index: faiss.IndexIDMap2
    owners: dict[int, tuple[str, MemoryType]] = field(default_factory=dict)
    by_user: dict[str, set[int]] = field(default_factory=dict)

    @classmethod
    def empty(cls, dim: int) -> _TenantIndex:
        return cls(faiss.IndexIDMap2(faiss.IndexFlatIP(dim)))

    def apply(self, changes: Sequence[IndexedChange]) -> None:
        present = [c.row_id for c in changes if c.row_id in self.owners]
        if present:
            self.index.remove_ids(faiss.IDSelectorBatch(np.asarray(present, dtype=np.int64)))
            for row_id in present:
                user, _ = self.owners.pop(row_id)
                self.by_user.get(user, set()).discard(row_id)
        adds = {c.row_id: c for c in changes if c.active and c.vector is not None}
        if not adds:
            return
        ids = np.fromiter(adds, dtype=np.int64, count=len(adds))
        vectors = np.stack([np.asarray(c.vector, dtype=np.float32) for c in adds.values()])
        self.index.add_with_ids(vectors, ids)
        for change in adds.values():
            self.owners[change.row_id] = (change.user, change.type)
            self.by_user.setdefault(change.user, set()).add(change.row_id)

    def search(self, user: str, query: Vector, k: int, types: frozenset[MemoryType]) -> list[tuple[int, float]]:
        ids = [i for i in self.by_user.get(user, ()) if not types or self.owners[i][1] in types]
        if not ids:
            return []
        params = faiss.SearchParameters()
        params.sel = faiss.IDSelectorBatch(np.asarray(ids, dtype=np.int64))
        scores, found = self.index.search(query.reshape(1, -1).astype(np.float32), min(k, len(ids)), params=params)
        return [(int(i), float(s)) for i, s in zip(found[0], scores[0], strict=True) if i >= 0]


class FaissVectorIndex:
    """Thread-safe: one lock guards all tenants (searches are short; writers are the feed)."""

    def __init__(self, directory: Path, dim: int) -> None:
        self._dir = directory
        self._dim = dim
        self._lock = threading.Lock()
        self._tenants: dict[str, _TenantIndex] = {}

    def apply(self, changes: Sequence[IndexedChange]) -> None:
        by_tenant: dict[str, list[IndexedChange]] = {}
        for change in changes:
            by_tenant.setdefault(change.tenant, []).append(change)
        with self._lock:
            for tenant, batch in by_tenant.items():
                self._tenants.setdefault(tenant, _TenantIndex.empty(self._dim)).apply(batch)

    def reset(self) -> None:
        with self._lock:
            self._tenants = {}

    def search(
        self, tenant: str, user: str, query: Vector, k: int, types: frozenset[MemoryType]
    ) -> list[tuple[int, float]]:
        with self._lock:
            index = self._tenants.get(tenant)
            return [] if index is None or k <= 0 else index.search(user, query, k, types)

    def size(self) -> int:
        with self._lock:
            return sum(t.index.ntotal for t in self._tenants.values())

    def holds(self, tenant: str, row_ids: Sequence[int]) -> list[int]:
        with self._lock:
            index = self._tenants.get(tenant)
            return [] if index is None else [r for r in row_ids if r in index.owners]

    def save(self, manifest: IndexManifest) -> None:
        """Write a new generation, switch the manifest to it atomically, drop older generations."""
        generation = f"gen-{uuid.uuid4().hex[:12]}"
        target = self._dir / generation
        target.mkdir(parents=True, exist_ok=True)
        with self._lock:
            files = {}
            for tenant, index in self._tenants.items():
                stem = hashlib.sha256(tenant.encode()).hexdigest()[:24]
                faiss.write_index(index.index, str(target / f"{stem}.faiss"))
                owners = [[row_id, user, kind.value] for row_id, (user, kind) in index.owners.items()]
                (target / f"{stem}.owners.json").write_text(json.dumps(owners))
                files[tenant] = stem
        body = {
            "database_id": manifest.database_id,
            "embedder": manifest.embedder,
            "dim": manifest.dim,
            "seq": manifest.cursor.seq,
            "xmin": manifest.cursor.xmin,
            "vectors": manifest.vectors,
            "generation": generation,
            "tenants": files,
        }
        temporary = self._dir / f"{_MANIFEST}.{generation}.tmp"
        temporary.write_text(json.dumps(body))
        os.replace(temporary, self._dir / _MANIFEST)
        for old in self._dir.glob("gen-*"):
            if old.name != generation:
                shutil.rmtree(old, ignore_errors=True)

    def load(self, *, database_id: str, embedder: str, dim: int) -> IndexManifest | None:
        """The persisted indexes, if present, intact and built from this database and embedder."""
        try:
            body = json.loads((self._dir / _MANIFEST).read_text())
            if (body["database_id"], body["embedder"], int(body["dim"])) != (database_id, embedder, dim):
                _log.info("persisted index was built from another database or embedder; rebuilding")
                return None
            tenants = {
                tenant: self._read_tenant(self._dir / body["generation"], stem)
                for tenant, stem in body["tenants"].items()
            }
        except FileNotFoundError:
            _log.info("no persisted index under %s; rebuilding", self._dir)
            return None
        except (OSError, ValueError, KeyError, TypeError, RuntimeError) as exc:
            _log.warning("persisted index under %s is unreadable (%s); rebuilding", self._dir, exc)
            return None
        with self._lock:
            self._tenants = tenants
        return IndexManifest(
            database_id=database_id,
            embedder=embedder,
            dim=dim,
            cursor=FeedCursor(seq=int(body["seq"]), xmin=int(body["xmin"])),
            vectors=int(body.get("vectors", 0)),
        )

    def _read_tenant(self, directory: Path, stem: str) -> _TenantIndex:
        faiss_path = directory / f"{stem}.faiss"
        if not faiss_path.exists():
            raise FileNotFoundError(faiss_path)
        index = faiss.read_index(str(faiss_path))
        if not isinstance(index, faiss.IndexIDMap2) or index.d != self._dim:
            raise ValueError(f"{faiss_path} is not an IndexIDMap2 of dimension {self._dim}")
        loaded = _TenantIndex(index)
        for row_id, user, kind in json.loads((directory / f"{stem}.owners.json").read_text()):
            loaded.owners[int(row_id)] = (str(user), MemoryType(kind))
            loaded.by_user.setdefault(str(user), set()).add(int(row_id))
        if len(loaded.owners) != index.ntotal:
            raise ValueError(f"{faiss_path} holds {index.ntotal} vectors but {len(loaded.owners)} owners")
        return loaded

    def clear_files(self) -> None:
        """Remove every persisted generation (operators and tests: forces a rebuild on next start)."""
        with contextlib.suppress(FileNotFoundError):
            shutil.rmtree(self._dir)
