"""Text a person writes into memory is redacted as the learning path's text is.

Learned memories hold only what serving's thorough redaction left, so a secret or raw personal
data never reaches memory's tables, index or audit that way. An operator's correction
(SupersedeMemory), a reason given for a change, or a learned procedure typed in by an officer
arrives by another door; without this, "the new code is 4471, my password is Quokka#2031" would be
kept verbatim. The same redactor runs here, so what is kept is the same class of text whichever
door it came through, and the response shows the caller exactly what was kept.
"""

from __future__ import annotations

from typing import Any

from services.common.redaction import RedactionMode, Redactor

_REDACTOR = Redactor(RedactionMode.THOROUGH)


def kept(text: str) -> str:
    """What memory keeps of a caller's free text: the text with every finding replaced by its placeholder."""
    return _REDACTOR.redact(text).text if text.strip() else text


def kept_values(value: Any) -> Any:
    """The same for every string inside a JSON-like value (a procedure's details), keys left as they are."""
    if isinstance(value, str):
        return kept(value)
    if isinstance(value, dict):
        return {key: kept_values(item) for key, item in value.items()}
    if isinstance(value, list):
        return [kept_values(item) for item in value]
    return value
