"""Whether a sentence tries to tell the assistant what to do: the rules both extractors share.

The owner's instructions become procedures (a person reviews them); an outsider's become external
procedures, which policy refuses with a reason the audit keeps. Outsiders' sentences are also read
with steering shapes the owner's are not ("From today I work at Acme" is the owner's fact).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from services.common.text_folding import fold_for_matching

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


# "From now on" and "remember", written as folded text is (look-alike Cyrillic letters become Latin,
# Hangul syllables their letters), so a pattern matches what it is run on.
_RUSSIAN = ("впредь", "отныне", "с этого момента", "с сегодняшнего дня", "запомни", "запомните", "запомнить")  # noqa: RUF001
_UNSPACED = (
    "今後",
    "今后",
    "これからは",
    "覚えて",
    "从现在开始",
    "从现在起",
    "以后",
    "記住",
    "记住",
    "앞으로",
    "기억해",
    "기억하",
)


def _folded(words: Iterable[str]) -> str:
    """Each word folded as it may be written: lower case, capitalised, upper case (folding keeps
    case, and a capital look-alike may fold to another letter than its small one: capital Ze to "3")."""
    forms = {fold_for_matching(form) for word in words for form in (word, word.capitalize(), word.upper())}
    return "|".join(re.escape(form) for form in sorted(forms, key=len, reverse=True))


# From someone other than the owner, these also try to steer the assistant: a role prefix, a claim
# that its instructions changed, a start date for new behaviour, a memory to update, a grant of
# automatic action, and "from now on"/"remember" in the languages outsiders write in. Only outsiders'
# sentences are read with them: the owner's "From today I work at Acme" stays a fact.
_STEERING = re.compile(
    r"^\W*(?:system|admin(?:istrator)?|developer|operator|root)\s*[:\]>]"
    r"|\binstructions? (?:have|has) (?:changed|been updated)|\byour (?:new |updated )?instructions\b"
    r"|\bfrom (?:today|tomorrow|this (?:day|moment|point)|(?:next|this) (?:week|month))\b"
    r"|\bupdate (?:your |the |her |his |their |[a-z]+'s )?(?:memory|memories|notes|records?|profile|knowledge)\b"
    r"|\btreat (?:our|my|these|this|their|his|her|all|any) (?:messages?|mails?|e-?mails?|requests?|invoices?)\b"
    r"|\b(?:authori[sz]ed|approved|pre-?approved|enabled|agreed to)\b.{0,30}\b(?:automatic\w*|auto\w*|forwarding"
    r"|payments?|transfers?|wires?)\b"
    r"|\b(?:dear|hi|hello|hey|attention|attn) (?:ai|assistant|bot|agent|model)\b|\bpre-?approved\b"
    r"|\bauto-?(?:accept|approv|forward|pay|reply|confirm)\w*|\bstop (?:asking|checking|confirming|verifying)\b"
    r"|\bfuture (?:invoices|payments|transfers|mails?|e-?mails?|messages|requests|meetings|invites)\b"
    r"|\b(?:send|share|forward|give)\b.{0,40}(?:password|passcode|credentials|login details|\[password\])"
    r"|\b(?:desormais|dorenavant|a l'avenir|ab sofort|kunftig|zukunftig|in zukunft|de ahora en adelante"
    r"|a partir de ahora|en adelante|d'ora in poi|da ora in poi|voortaan|van nu af aan|a partir de agora"
    r"|daqui em diante|merken sie sich|bitte merken|merke dir|retenez|souvenez-vous|recuerde|recuerda|ricorda"
    r"|ricordati|onthoud|lembre-se)\b"
    # chat-template and prompt markers pasted into mail, and requests to keep something for later
    r"|\[/?inst\]|<\|?im_(?:start|end)\|?>|<<\s*/?sys\s*>>|^\W*#+\s*(?:instruction|system)\b"
    r"|\b(?:memori[sz]e|keep in mind|bear in mind|take note)\b|\bstanding (?:order|instruction|rule)s?\b"
    r"|\b(?:store|save|record|log|add|keep)\b.{0,30}\b(?:as (?:a |an )?)?(?:preference|instruction|rule)s?\b"
    r"|\b(?:preference|wish|instruction)s? (?:is|are|that)\b"
    # words addressed to a model, whatever it is called, and the roles of a chat transcript
    r"|\b(?:note|message|memo|instructions?)\b.{0,12}\b(?:to|for) (?:the |any |your )?(?:automated |virtual )?"
    r"(?:ai|assistant|bot|agent|model|copilot|llm|gpt)\b|\b(?:hey|hi|hello|dear|ok|okay) (?:copilot|gpt|chatgpt"
    r"|claude|gemini|siri|alexa|cortana)(?=\s*[,:!.])|\b(?:ai|assistant|agent|bot|copilot)\b(?: reading this)?\s*[:,]"
    r"|\"role\"\s*:\s*\"(?:system|developer|assistant)\"|<!--.{0,40}\b(?:assistant|ai|agent|system)\b"
    r"|\binstructions? update\b|\bupdated? instructions\b|^\W*override\s*[:!-]"
    # a third party speaking for the owner, or asking for trust it has not been given
    r"|\b(?:your|the) (?:owner|user|principal|boss)\b(?! of).{0,20}\b(?:has |have )?"
    r"(?:authori[sz]ed|approved|asked|instructed|agreed|wants|told)\b"
    r"|\bas per (?:her|his|their|the owner's|[a-z]+'s) (?:request|instructions?|wishes)\b"
    r"|\btrusted (?:senders?|contacts?|list|domains?)\b|\b(?:trust|whitelist|allowlist) (?:us|our|this|these"
    r"|mails?|messages?|senders?|domains?|[a-z0-9.-]+\.[a-z]{2,})\b"
    r"|\b(?:treat|mark|consider|classify|flag|list)\b.{0,30}\bas (?:internal|verified|trusted|safe|legitimate|approved"
    r"|the owner)\b|\b(?:skip|bypass|override|disable|waive)\b.{0,20}\b(?:approvals?|reviews?|verifications?|checks?"
    r"|confirmations?|steps?|2fa|mfa)\b(?! meeting)"
    # "remember", "save", "note" in the other languages outsiders write in (folded: no accents)
    r"|\b(?:speichern sie|bitte speichern|notieren sie|merken|ricordare|memorizzare|memorizza|guarde|guardar como"
    r"|tenga en cuenta|tengan en cuenta|notez que|veuillez noter|memoriser|enregistrez|retenir|lembre|memorize"
    r"|sla op|zapamietaj|zapamietajcie|pamietaj|pamietajcie|zapamatujte|pamatujte|unutmayin|hatirla)\b"
    # the same in Russian, and in scripts without spaces between words, where \b finds no word's edge
    rf"|\b(?:{_folded(_RUSSIAN)})\b|{_folded(_UNSPACED)}",
    re.I,
)


def is_outside_instruction(folded: str) -> bool:
    """Whether an outsider's sentence reads as an instruction (then it is proposed, for policy to refuse)."""
    return is_instruction(folded) or _STEERING.search(folded) is not None
