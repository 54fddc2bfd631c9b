"""Whether a sentence tries to tell the assistant what to do: the rules both extractors share.

The owner's instructions become procedures (a person reviews them); an outsider's become external
procedures, which policy refuses with a reason the audit keeps. Outsiders' sentences are also read
with steering shapes the owner's are not ("From today I work at Acme" is the owner's fact); those
live in `services.common.steering`, since policy reads tool outcomes and outsiders' text with them too.
"""

from __future__ import annotations

import re

from services.common.steering import steers

INSTRUCTION = re.compile(
    r"\b(?:remember|from now on|going forward|henceforth|in (?:the )?future|always|never|whenever|every time"
    r"|each time|ignore (?:all |any |the )?(?:previous|prior|above|earlier|other)|disregard"
    r"|forget (?:all|everything|previous)"
    r"|new instructions?|system prompt|you (?:must|should|are to)|make sure (?:to|you)|note (?:for|to) (?:your|the)"
    r"|assistant\s*[:,]|without (?:asking|confirmation|review|checking))\b",
    re.I,
)
# Actions with side effects: an instruction to do one is a procedure, never a mere preference.
ACTION = (
    r"forward|accept|decline|reject|ignore|send|reply|respond|cc|bcc|archive|delete|approve|pay|wire|transfer"
    r"|share|cancel|unsubscribe|click|open|download|grant|disable|enable|skip|waive|suppress|escalate|route"
    r"|auto[- ]?(?:accept|reply|approve|forward)|mark|flag|whitelist|allowlist|add"
)
IMPERATIVE = re.compile(rf"^(?:(?:please|kindly|also|and|then|just)\s+)*(?:{ACTION})\b", re.I)
ACTION_ANYWHERE = re.compile(rf"\b(?:always|never|automatically|auto)\s+(?:{ACTION})\b", re.I)


def is_instruction(folded: str) -> bool:
    """Whether a sentence tells the assistant what to do (folded text): a marker, an imperative, a standing action."""
    return bool(INSTRUCTION.search(folded) or IMPERATIVE.match(folded) or ACTION_ANYWHERE.search(folded))


def is_outside_instruction(folded: str) -> bool:
    """Whether an outsider's sentence reads as an instruction (then it is proposed, for policy to refuse)."""
    return is_instruction(folded) or steers(folded)
