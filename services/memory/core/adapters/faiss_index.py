"""FAISS indexes over active memories, one per (tenant, user), persisted with the cursor they reflect.

Where a forget ends (the fourth of its four files, after `core/service/index_sync.py`): `apply`
removes the vector of every change that is no longer active, by id.

Partitioned by (tenant, user): every query memory serves is one user's, so a search scans that
user's vectors only (before issue 15 one index per tenant was scanned whole under an id selector,
22.7 ms at 1e5 and 201 ms at 1e6). A partition is exact (`IndexIDMap2(IndexFlatIP)`, inner product
on L2-normalised vectors = cosine) while small and IVF past a measured size (4-bit PQ codes,
re-ranked exactly from the partition's float vectors); both remove by id, which supersession and
deletion need (`faiss_partition.py`). The database re-check after search stays the second guard.

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
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import faiss
import numpy as np

from services.common.vocabulary import MemoryType
from services.memory.core.adapters.faiss_calibration import Probes
from services.memory.core.adapters.faiss_partition import Partition, readable_partition
from services.memory.core.adapters.faiss_quantised import FloatStore
from services.memory.core.adapters.shared_lock import SharedLock
from services.memory.core.service.ports import FeedCursor, IndexedChange, IndexManifest, Vector

_log = logging.getLogger(__name__)
_MANIFEST = "manifest.json"


@dataclass
class _TenantIndex:
    dim: int
    partitions: dict[str, Partition] = field(default_factory=dict)
    owners: dict[int, str] = field(default_factory=dict)
    """row id → user: routes a removal to its partition."""

    @property
    def ntotal(self) -> int:
        return sum(p.index.ntotal for p in self.partitions.values())

    def apply(self, changes: Sequence[IndexedChange]) -> None:
        gone: dict[str, list[int]] = {}
        for change in changes:
            if change.row_id in self.owners:
                gone.setdefault(self.owners.pop(change.row_id), []).append(change.row_id)
        for user, row_ids in gone.items():
            if len(row_ids) == self.partitions[user].index.ntotal:
                del self.partitions[user]  # a forgotten user: the whole partition goes, no per-id removal
            else:
                self.partitions[user].remove(row_ids)
        adds: dict[str, dict[int, IndexedChange]] = {}
        for change in changes:
            if change.active and change.vector is not None:
                adds.setdefault(change.user, {})[change.row_id] = change
        for user, rows in adds.items():
            ids = np.fromiter(rows, dtype=np.int64, count=len(rows))
            vectors = np.stack([np.asarray(c.vector, dtype=np.float32) for c in rows.values()])
            self.partitions.setdefault(user, Partition.empty(self.dim)).add(
                ids, vectors, [c.type for c in rows.values()]
            )
            self.owners.update((row_id, user) for row_id in rows)
        for user in gone:
            if user in self.partitions and self.partitions[user].index.ntotal == 0:
                del self.partitions[user]

    def search(self, user: str, query: Vector, k: int, types: frozenset[MemoryType]) -> list[tuple[int, float]]:
        partition = self.partitions.get(user)
        if partition is None:
            return []
        return partition.search(query.reshape(1, -1).astype(np.float32), k, types)


@dataclass(frozen=True)
class _Written:
    """A partition as persisted: the next save links its files while the partition is unchanged.

    Its listing entry is kept as the JSON text written, not as the parsed dict: the entry lists
    every vector's [row id, type], and at 1e6 vectors those million small lists were objects the
    cyclic garbage collector walked on every full collection (108 ms pauses in a search's path).
    """

    partition: Partition
    version: int
    at: Path
    entry_json: str
    files: tuple[str, ...]

    @classmethod
    def of(cls, partition: Partition, version: int, at: Path, entry: Mapping[str, Any]) -> _Written:
        files = tuple(str(entry[key]) for key in ("file", "floats") if key in entry)
        return cls(partition, version, at, json.dumps(entry), files)

    def holds(self, partition: Partition) -> bool:
        return partition is self.partition and partition.version == self.version


def _link(names: Sequence[str], source: Path, target: Path) -> bool:
    """Hard-link the files `names` from generation `source` into `target`; False (and the caller
    writes them) where a file is gone or the file system cannot link."""
    try:
        for name in names:
            os.link(source / name, target / name)
    except OSError as exc:
        _log.debug("index files not linked from %s (%s); writing them", source, exc)
        for name in names:  # a link left behind would be written through, into the live generation
            with contextlib.suppress(FileNotFoundError):
                (target / name).unlink()
        return False
    return True


def _listing_json(entries: Mapping[str, str]) -> str:
    """A tenant's partition list — a JSON object of user → entry — from entries already in JSON."""
    return "{" + ",".join(f"{json.dumps(user)}:{entry}" for user, entry in entries.items()) + "}"


class FaissVectorIndex:
    """Thread-safe: searches share the lock (they only read), writers (the feed) hold it alone."""

    def __init__(self, directory: Path, dim: int) -> None:
        self._dir = directory
        self._dim = dim
        self._lock = SharedLock()
        self._tenants: dict[str, _TenantIndex] = {}
        self._written: dict[tuple[str, str], _Written] = {}
        """(tenant, user) → where and as what its partition was last persisted."""
        self._listed: dict[str, tuple[frozenset[str], Path]] = {}
        """tenant → its users and the generation holding its partition list, as last persisted."""

    def apply(self, changes: Sequence[IndexedChange]) -> None:
        by_tenant: dict[str, list[IndexedChange]] = {}
        for change in changes:
            by_tenant.setdefault(change.tenant, []).append(change)
        with self._lock.exclusive():
            for tenant, batch in by_tenant.items():
                self._tenants.setdefault(tenant, _TenantIndex(self._dim)).apply(batch)
            due = [
                (partition, *partition.snapshot())
                for tenant in by_tenant
                for partition in self._tenants[tenant].partitions.values()
                if partition.needs_rebuild
            ]
        # Training an IVF takes seconds: build it off the lock (searches go on against the old
        # index), install it only if the partition did not change meanwhile.
        for partition, version, ids, vectors in due:
            rebuilt = Partition.build(ids, vectors)
            with self._lock.exclusive():
                if partition.install(version, rebuilt, len(ids)):
                    _log.info("index partition of %d vectors rebuilt as IVF codes", len(ids))

    def reset(self) -> None:
        with self._lock.exclusive():
            self._tenants = {}

    def search(
        self, tenant: str, user: str, query: Vector, k: int, types: frozenset[MemoryType]
    ) -> list[tuple[int, float]]:
        with self._lock.shared():
            index = self._tenants.get(tenant)
            return [] if index is None or k <= 0 else index.search(user, query, k, types)

    def size(self) -> int:
        with self._lock.shared():
            return sum(t.ntotal for t in self._tenants.values())

    def holds(self, tenant: str, row_ids: Sequence[int]) -> list[int]:
        with self._lock.shared():
            index = self._tenants.get(tenant)
            return [] if index is None else [r for r in row_ids if r in index.owners]

    def save(self, manifest: IndexManifest) -> None:
        """Write a new generation, switch the manifest to it atomically, drop older generations.

        A partition unchanged since the last save (same object, same version) is hard-linked from
        the generation that holds it, not serialised again: learning touches a few users between
        saves, and rewriting every partition of a large index each time cost the retrieval process
        seconds of CPU and the disk its whole size. So is a tenant's partition list when none of its
        partitions changed.
        """
        generation = f"gen-{uuid.uuid4().hex[:12]}"
        target = self._dir / generation
        target.mkdir(parents=True, exist_ok=True)
        # The lock is held per partition (a copy in memory), not for the whole write: searches go
        # on between partitions. The caller (the synchroniser, holding its own lock) applies no
        # change meanwhile, so every file reflects the manifest's cursor.
        with self._lock.shared():
            tenants = {tenant: list(index.partitions.items()) for tenant, index in self._tenants.items()}
        files = {}
        written: dict[tuple[str, str], _Written] = {}
        listed: dict[str, tuple[frozenset[str], Path]] = {}
        for tenant, owned in tenants.items():
            stem = hashlib.sha256(tenant.encode()).hexdigest()[:24]
            partitions: dict[str, str] = {}
            """user → its listing entry, as JSON text."""
            linked = 0
            for user, partition in owned:
                key = (tenant, user)
                previous = self._written.get(key)
                if previous is not None and previous.holds(partition) and _link(previous.files, previous.at, target):
                    written[key] = replace(previous, at=target)
                    linked += 1
                else:
                    name = f"{stem}-{hashlib.sha256(user.encode()).hexdigest()[:24]}"
                    written[key] = self._write_partition(partition, target, name)
                partitions[user] = written[key].entry_json
            listing = f"{stem}.partitions.json"
            before = self._listed.get(tenant)
            unchanged = linked == len(owned) and before is not None and before[0] == frozenset(partitions)
            if not (unchanged and before is not None and _link([listing], before[1], target)):
                (target / listing).write_text(_listing_json(partitions))
            files[tenant] = stem
            listed[tenant] = (frozenset(partitions), target)
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
        self._written, self._listed = written, listed
        for old in self._dir.glob("gen-*"):
            if old.name != generation:
                shutil.rmtree(old, ignore_errors=True)

    def _write_partition(self, partition: Partition, target: Path, name: str) -> _Written:
        with self._lock.shared():
            version = partition.version
            data = faiss.serialize_index(partition.index)
            kinds = [[row_id, kind.value] for row_id, kind in partition.types.items()]
            trained = partition.trained_size
            probes = partition.probes
            floats = None if partition.floats is None else partition.floats.get(partition.types)
        (target / f"{name}.faiss").write_bytes(data.tobytes())
        entry: dict[str, Any] = {"file": f"{name}.faiss", "types": kinds, "trained": trained}
        if probes is not None:
            entry["probes"] = [probes.narrow, probes.wide, probes.gate]
        if floats is not None:  # a codes partition's exact vectors, in the order of "types"
            np.save(target / f"{name}.floats.npy", floats, allow_pickle=False)
            entry["floats"] = f"{name}.floats.npy"
        return _Written.of(partition, version, target, entry)

    def load(self, *, database_id: str, embedder: str, dim: int) -> IndexManifest | None:
        """The persisted indexes, if present, intact and built from this database and embedder."""
        try:
            body = json.loads((self._dir / _MANIFEST).read_text())
            if (body["database_id"], body["embedder"], int(body["dim"])) != (database_id, embedder, dim):
                _log.info("persisted index was built from another database or embedder; rebuilding")
                return None
            loaded = {
                tenant: self._read_tenant(self._dir / body["generation"], stem)
                for tenant, stem in body["tenants"].items()
            }
            tenants = {tenant: index for tenant, (index, _) in loaded.items()}
            entries = {tenant: listing for tenant, (_, listing) in loaded.items()}
        except FileNotFoundError:
            _log.info("no persisted index under %s; rebuilding", self._dir)
            return None
        except (OSError, ValueError, KeyError, TypeError, RuntimeError) as exc:
            _log.warning("persisted index under %s is unreadable (%s); rebuilding", self._dir, exc)
            return None
        with self._lock.exclusive():
            self._tenants = tenants
        directory = self._dir / body["generation"]
        self._written = {
            (tenant, user): _Written.of(partition, partition.version, directory, entries[tenant][user])
            for tenant, (index, _) in loaded.items()
            for user, partition in index.partitions.items()
        }
        self._listed = {tenant: (frozenset(index.partitions), directory) for tenant, (index, _) in loaded.items()}
        return IndexManifest(
            database_id=database_id,
            embedder=embedder,
            dim=dim,
            cursor=FeedCursor(seq=int(body["seq"]), xmin=int(body["xmin"])),
            vectors=int(body.get("vectors", 0)),
        )

    def _read_tenant(self, directory: Path, stem: str) -> tuple[_TenantIndex, dict[str, dict[str, Any]]]:
        loaded = _TenantIndex(self._dim)
        listing: dict[str, dict[str, Any]] = json.loads((directory / f"{stem}.partitions.json").read_text())
        for user, entry in listing.items():
            path = directory / str(entry["file"])
            if not path.exists():
                raise FileNotFoundError(path)
            index = faiss.read_index(str(path))
            floats_file = entry.get("floats")  # absent: an exact or a legacy IVFFlat partition
            if not readable_partition(index, self._dim, with_floats=floats_file is not None):
                raise ValueError(f"{path} is not a partition index of dimension {self._dim}")
            types = {int(row_id): MemoryType(kind) for row_id, kind in entry["types"]}
            if len(types) != index.ntotal:
                raise ValueError(f"{path} holds {index.ntotal} vectors but {len(types)} owners")
            floats = None
            if floats_file is not None:
                vectors = np.load(directory / str(floats_file), allow_pickle=False)
                if vectors.shape != (len(types), self._dim) or vectors.dtype != np.float32:
                    raise ValueError(f"{floats_file} does not hold the {len(types)} vectors of {path}")
                floats = FloatStore.of(np.fromiter(types, dtype=np.int64, count=len(types)), vectors)
            probes = entry.get("probes")  # absent: written before the gate, searched at the index's nprobe
            loaded.partitions[str(user)] = Partition(
                index,
                types,
                int(entry.get("trained", 0)),
                probes=None if probes is None else Probes(int(probes[0]), int(probes[1]), float(probes[2])),
                floats=floats,
            )
            loaded.owners.update((row_id, str(user)) for row_id in types)
        return loaded, listing

    def clear_files(self) -> None:
        """Remove every persisted generation (operators and tests: forces a rebuild on next start)."""
        with contextlib.suppress(FileNotFoundError):
            shutil.rmtree(self._dir)
