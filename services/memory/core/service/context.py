"""The agent's context read: what it should know before it acts, in one call, and its version.

It is composed from the reads that already define what an agent may see, not a copy of them:
`search_memories` (active records of the caller's tenant and user only, confirmed against the
database after the index) and the procedures capability's applicable-procedures read, which core
does not import: it is handed in as a port (`ApplicableProcedures`) by the one module that joins
capabilities. The version fingerprints exactly what was returned (`services.common.context_version`),
so the agent can hand it back to serving with its result and learning knows what the agent saw.
Reads only; writes nothing.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Generic, Protocol, TypeVar

from services.common.context_version import CONTEXT_VERSION_KEY, context_version
from services.memory.core.service.deps import MemoryPorts
from services.memory.core.service.retrieval import ScoredMemory, SearchMemories, search_memories

MAX_PROCEDURES = 50
"""Procedures returned at most: with the context entry they must fit serving's 64 procedure_versions."""


class VersionedProcedure(Protocol):
    """What the context needs of a procedure: the intent it governs and the version that applies."""

    @property
    def intent_key(self) -> str: ...

    @property
    def version(self) -> int: ...


P = TypeVar("P", bound=VersionedProcedure)

ApplicableProcedures = Callable[[str, str, int], Sequence[P]]
"""(tenant, case scope, at most) → the active procedures that apply, in a stable order."""


@dataclass(frozen=True)
class GetContext:
    """Search the user's memories for `search.query`; list the tenant's procedures for `procedure_scope`."""

    search: SearchMemories
    procedure_scope: str


@dataclass(frozen=True)
class AgentContext(Generic[P]):
    memories: list[ScoredMemory]
    procedures: list[P]
    version: str

    @property
    def procedure_versions(self) -> dict[str, str]:
        """What the agent passes back as HandleRequest.procedure_versions."""
        versions = {p.intent_key: str(p.version) for p in self.procedures}
        versions[CONTEXT_VERSION_KEY] = self.version
        return versions


def get_context(cmd: GetContext, ports: MemoryPorts, applicable: ApplicableProcedures[P]) -> AgentContext[P]:
    """The top-k active memories with their provenance, the applicable procedures, and the version."""
    memories = search_memories(cmd.search, ports)
    procedures = list(applicable(cmd.search.tenant, cmd.procedure_scope, MAX_PROCEDURES))
    version = context_version(
        [hit.memory.memory_id for hit in memories], [(p.intent_key, p.version) for p in procedures]
    )
    return AgentContext(memories=memories, procedures=procedures, version=version)
