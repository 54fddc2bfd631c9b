"""Memory's own wall behind policy: the rules no decision, signed or not, may break.

Policy decides; memory verifies policy's signature. These rules hold even when both failed (a
policy bug, a leaked key): an external procedural candidate never becomes active or reviewable,
secret or restricted content is never stored (not even in a review item), text a reader cannot
see (tag characters, a direction override, a terminal escape) is neither stored nor held for
review, nothing that would reduce scrutiny (never-suppress) becomes active — stored directly,
or approved from review — and personal data of a special category (health, belief, sexuality...)
becomes active only through a reviewer's approval, never by a STORE. A REJECT breaks none of them:
it writes no memory.
"""

from __future__ import annotations

from services.common.hidden_text import hidden_text
from services.common.never_suppress import find_suppression
from services.common.special_categories import special_category
from services.common.vocabulary import Candidate, MemoryType, Origin, Outcome, Sensitivity

_UNSTORABLE = frozenset({Sensitivity.SECRET, Sensitivity.RESTRICTED})


def broken_rule(candidate: Candidate, outcome: Outcome, *, approved_by_reviewer: bool = False) -> str | None:
    """The UPPER_SNAKE name of the hard rule a STORE or REVIEW of `candidate` would break, if any.

    ``approved_by_reviewer``: the STORE is a person's approval of a review item, which is how a
    special category may become active.
    """
    if outcome is Outcome.REJECT:
        return None
    if candidate.type is MemoryType.PROCEDURAL and candidate.origin is Origin.EXTERNAL_EMAIL:
        return "EXTERNAL_PROCEDURAL"
    if candidate.sensitivity in _UNSTORABLE:
        return "SENSITIVE_CONTENT"
    if hidden_text(candidate.text) is not None:
        return "HIDDEN_TEXT"
    if outcome is Outcome.STORE and candidate.type is not MemoryType.EPISODE and find_suppression(candidate.text):
        # A REVIEW of such a text may be held (approving it is refused, naming the guard's rule).
        return "NEVER_SUPPRESS"
    if outcome is Outcome.STORE and not approved_by_reviewer and special_category(candidate.text) is not None:
        return "SPECIAL_CATEGORY"
    return None


def keeps_text(candidate: Candidate) -> bool:
    """False for secret or restricted content: not even a rejected candidate's row may hold it."""
    return candidate.sensitivity not in _UNSTORABLE
