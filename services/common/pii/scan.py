"""Every framework-free detector, run over folded text, with spans mapped back to the original.

`find` is what the `Redactor` builds on; `contains_secret_pattern` is policy's and the extractor's
last line ("does a secret survive in this candidate?"), importable from any domain package.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable

from services.common.pii import (
    account_values,
    addresses,
    card_details,
    code_arguments,
    contact,
    credentials,
    financial,
    handed_over,
    id_columns,
    identity,
    location,
    login_pairs,
    network,
    one_time_codes,
    other_scripts,
    random_values,
    recovery_phrases,
    secret_formats,
    security_questions,
    spoken_values,
    unnamed_values,
)
from services.common.pii.model import LAST_LINE_KINDS, SECRET_KINDS, SECRET_PLACEHOLDER, Finding, Hit, merge
from services.common.text_folding import fold_for_matching, fold_with_map

_Plain = Callable[[str], Iterable[Hit]]
_WithLower = Callable[[str, str], Iterable[Hit]]

_PLAIN: tuple[_Plain, ...] = (
    secret_formats.provider_tokens,
    credentials.credential_statements,
    credentials.named_values,
    credentials.key_pairs,
    random_values.random_tokens,
    random_values.passphrases,
    financial.cards,
    identity.national_ids,
    contact.emails,
    login_pairs.email_password_pairs,
)
_WITH_LOWER: tuple[_WithLower, ...] = (
    identity.labelled_ids,
    identity.dates_of_birth,
    addresses.addresses,
    financial.bank_accounts,
    financial.ibans,
    contact.spelt_out_emails,
    contact.letter_spaced_emails,
    one_time_codes.one_time_codes,
    other_scripts.password_words,
    network.ip_addresses,
    network.mac_addresses,
    location.coordinates,
    login_pairs.sign_in_values,
    code_arguments.passwords_as_arguments,
    handed_over.handed_over_values,
    spoken_values.spoken_values,
    security_questions.security_answers,
    unnamed_values.unnamed_values,
    unnamed_values.corrected_values,
    unnamed_values.opened_by,
    unnamed_values.asked_and_answered,
    unnamed_values.described_values,
    recovery_phrases.recovery_phrases,
    random_values.spaced_keys,
    account_values.account_values,
    card_details.card_codes,
    card_details.recovery_codes,
    financial.payment_handles,
    id_columns.id_columns,
)


def find_folded(folded: str) -> list[Hit]:
    """Every detector's hits on already-folded text (unmerged, folded coordinates)."""
    lower = folded.lower()
    if len(lower) != len(folded):
        lower = "".join(c if len(c.lower()) != 1 else c.lower() for c in folded)
    hits = [h for detector in _PLAIN for h in detector(folded)]
    hits += [h for detector in _WITH_LOWER for h in detector(folded, lower)]
    return [h for h in hits if h[1] > h[0]]


def find(text: str, extra: Iterable[Callable[[str], Iterable[Hit]]] = ()) -> list[Hit]:
    """Merged hits in the coordinates of the original `text`; `extra` detectors see the folded text too."""
    extra = tuple(extra)
    hits = _unmerged(text, extra)
    if "\u202e" in text or "\u202d" in text:
        hits += _as_shown(text, extra)
    return merge(hits)


def _unmerged(text: str, extra: tuple[Callable[[str], Iterable[Hit]], ...]) -> list[Hit]:
    folded, origin = fold_with_map(text)
    raw = find_folded(folded) + [h for detector in extra for h in detector(folded) if h[1] > h[0]]
    return [(origin[s], origin[e - 1] + 1, kind, name, rep) for s, e, kind, name, rep in raw]


# A direction override (U+202E right-to-left, U+202D left-to-right) to the pop (U+202C) or the line's end.
_OVERRIDE_RUN = re.compile("[\u202d\u202e][^\u202c\n]*")


def _as_shown(text: str, extra: tuple[Callable[[str], Iterable[Hit]], ...]) -> list[Hit]:
    """Hits in each override's run read as a screen shows it: "\u202e!!2retnuH si drowssap ym" is
    stored backwards and shown as "my password is Hunter2!!". Each run is scanned reversed once (the
    override characters inside it are invisible to the detectors), and its hits mapped back."""
    hits: list[Hit] = []
    for m in _OVERRIDE_RUN.finditer(text):
        first, last = m.start() + 1, m.end()
        for start, end, kind, name, rep in _unmerged(text[first:last][::-1], extra):
            hits.append((last - end, last - start, kind, name, rep))
    return hits


def scan(text: str) -> tuple[Finding, ...]:
    """What would be redacted, without phone numbers (those need phonenumbers, see `Redactor`)."""
    return tuple(Finding(kind, start, end, name) for start, end, kind, name, _ in find(text))


def contains_secret_pattern(text: str) -> bool:
    """Policy's last line: does a secret, password, card, bank detail, national id or birth date survive?

    Look-alike and zero-width tricks are folded first. Placeholders do not count.
    """
    return any(f.kind in LAST_LINE_KINDS for f in scan(text))


def states_a_secret(text: str) -> bool:
    """Whether `text` states a credential by its context or its format, randomness alone aside.

    For identifier fields, which are kept as sent: an id may look random ("evt_01HF3K9Q2Z7X..."),
    so a long random token does not count there, nor a token after an address unless it has a
    password's symbol; a stated password, a provider key's format or a URL's password do.
    """
    folded = fold_for_matching(text)
    return any(
        kind in SECRET_KINDS and not name.startswith("entropy:") and _stated_in_an_identifier(folded[start:end], name)
        for start, end, kind, name, _ in find_folded(folded)
    )


# An id may glue an address to a token ("msg:alice@example.com:a1b2c3"); a password has a symbol ids don't use.
_PASSWORD_ONLY_SYMBOLS = frozenset("!#$%^&*?~|\\")


def _stated_in_an_identifier(value: str, detector: str) -> bool:
    return detector != "context:email-password" or not _PASSWORD_ONLY_SYMBOLS.isdisjoint(value)


def contains_secret_placeholder(text: str) -> bool:
    """Whether `text` sits where a secret was: the context of a secret is not to be remembered."""
    return SECRET_PLACEHOLDER.search(fold_for_matching(text)) is not None
