"""The agent's context read: what it should know before it acts, in one call, and its version.

It is composed from the two reads that already define what an agent may see, not a copy of them:
`search_memories` (active records of the caller's tenant and user only, confirmed against the
database after the index) and `list_applicable` (active learned procedures whose scope matches).
The version fingerprints exactly what was returned (`services.common.context_version`), so the
agent can hand it back to serving with its result and learning knows what the agent saw.
Reads only; writes nothing.
"""

from __future__ import annotations

from dataclasses import dataclass

from services.common.context_version import CONTEXT_VERSION_KEY, context_version
from services.memory.domain.procedures import LearnedProcedure
from services.memory.service.deps import MemoryPorts
from services.memory.service.pagination import PageRequest
from services.memory.service.procedures import ProcedurePorts, list_applicable
from services.memory.service.retrieval import ScoredMemory, SearchMemories, search_memories

MAX_PROCEDURES = 50
"""Procedures returned at most: with the context entry they must fit serving's 64 procedure_versions."""


@dataclass(frozen=True)
class GetContext:
    """Search the user's memories for `search.query`; list the tenant's procedures for `procedure_scope`."""

    search: SearchMemories
    procedure_scope: str


@dataclass(frozen=True)
class AgentContext:
    memories: list[ScoredMemory]
    procedures: list[LearnedProcedure]
    version: str

    @property
    def procedure_versions(self) -> dict[str, str]:
        """What the agent passes back as HandleRequest.procedure_versions."""
        versions = {p.intent_key: str(p.version) for p in self.procedures}
        versions[CONTEXT_VERSION_KEY] = self.version
        return versions


def get_context(cmd: GetContext, ports: MemoryPorts) -> AgentContext:
    """The top-k active memories with their provenance, the applicable procedures, and the version."""
    memories = search_memories(cmd.search, ports)
    first_page = PageRequest(size=MAX_PROCEDURES, after=0, fingerprint="")
    procedures = list_applicable(cmd.search.tenant, cmd.procedure_scope, first_page, ProcedurePorts.from_memory(ports))
    version = context_version(
        [hit.memory.memory_id for hit in memories], [(p.intent_key, p.version) for p in procedures.items]
    )
    return AgentContext(memories=memories, procedures=procedures.items, version=version)
