"""A card's security code and expiry, named in the words of the card's country, and lists of recovery codes.

The card number is found by its own shape (`financial.cards`, Luhn's check); what stands beside it on
the card is not, and with it anyone can pay: "CID: 4184" (American Express), "código de segurança 076",
"セキュリティコード 528", "the CVV on the back of my card is 186", "Valid thru 11/2031", "有効期限 06/26",
"card[exp]=0626". A security code is three or four digits a few words after its name; an expiry is a
month and a year after its name, read only where the text is about a card.

A service's recovery (backup) codes come as a list under their name, one per line or comma-separated,
numbered or not, maybe a line of advice between: "BACKUP VERIFICATION CODES / Keep them somewhere safe /
1. 6853 4108 / 2. 2787 9565 …", "Códigos de recuperação: LGPESLGRF4, T5KBILP86Z, …". Each is a password
for the account, so every code of the list goes.

Matched on folded, lower-cased text behind substring gates: a mail that names no card code, no expiry and no
recovery codes pays for the gates only.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from services.common.pii.model import FindingKind, Hit, hit
from services.common.text_folding import fold_words


def _alternatives(words: tuple[str, ...]) -> str:
    return "|".join(re.escape(fold_words(word)) for word in sorted(words, key=len, reverse=True))


_SECURITY_CODE_NAMES = (
    "cvv", "cvv2", "cvc", "cvc2", "cvn2", "cvn", "cid", "csc", "cav2", "card security code", "security code",
    "card verification",
    "código de segurança", "codigo de seguranca", "código de seguridad", "code de sécurité", "cryptogramme",
    "codice di sicurezza", "kartenprüfnummer", "prüfnummer", "prüfziffer", "sicherheitscode", "beveiligingscode",
    "kod cvv", "kod bezpieczeństwa", "код безопасности", "cvv код", "セキュリティコード", "セキュリティーコード",
    "安全码", "安全碼", "보안코드", "보안 코드", "three digits on the back", "3 digits on the back",
    "four digits on the front", "numbers on the back",
)  # fmt: skip
_EXPIRY_NAMES = (
    "exp", "exp date", "expiry", "expiry date", "expires", "expiration", "expiration date", "valid thru",
    "valid through", "valid until", "good thru", "validade", "vencimiento", "caducidad", "fecha de vencimiento",
    "gültig bis", "ablaufdatum", "date d'expiration", "expire le", "scadenza", "geldig tot", "ważna do",
    "срок действия", "有効期限", "有效期", "有效期至", "유효기간", "son kullanma",
)  # fmt: skip
_CARD_WORDS = (
    "card", "karte", "tarjeta", "cartão", "cartao", "carte", "carta", "kaart", "karta", "карта", "カード", "卡",
    "카드", "visa", "mastercard", "amex", "american express", "discover", "pan",
)  # fmt: skip
_SECURITY_CODE = re.compile(
    rf"(?<![\w])(?:{_alternatives(_SECURITY_CODE_NAMES)})(?![a-z])"
    # a few words between ("on the back of my card is"), a link, maybe a bracket or a quote
    r"(?:[^\S\n]+[a-z]{1,10}){0,7}?[^\S\n]*(?:[:=#]|\bis\b|\bes\b|\be\b|\bist\b|\bwas\b|は|是|为|는|은)?"
    r"[^\S\n]*[\[\"'(]?[^\S\n]*"
    r"(?P<value>\d{3,4})(?!\d)"
)
_EXPIRY = re.compile(
    rf"(?<![a-z])(?:{_alternatives(_EXPIRY_NAMES)})(?![a-z])[^\S\n]*(?:\]|\"|')?[^\S\n]*(?:[:=]|\bis\b|\bon\b|\bin\b)?"
    r"[^\S\n]*[\"'\[]?[^\S\n]*(?P<value>(?:0[1-9]|1[0-2])[^\S\n]?[/\-.][^\S\n]?(?:20)?\d\d|(?:0[1-9]|1[0-2])\d\d)(?![\d/])"
)
_CARD = re.compile(rf"(?<![a-z])(?:{_alternatives(_CARD_WORDS)})(?![a-z])|\d{{4}}[ \-]?\d{{4}}[ \-]?\d{{4}}")

_RECOVERY_NAMES = (
    "recovery codes", "recovery code", "recovery-codes", "backup codes", "backup verification codes", "backup code",
    "códigos de recuperação", "códigos de recuperación", "códigos de respaldo", "codes de récupération",
    "codes de secours", "codici di recupero", "codici di backup", "wiederherstellungscodes", "backup-codes",
    "notfallcodes", "herstelcodes", "kody zapasowe", "kody odzyskiwania", "коды восстановления",
    "резервные коды", "リカバリーコード", "バックアップコード", "恢复码", "备用码", "복구 코드", "백업 코드",
    "yedek kodlar", "kurtarma kodları", "reservkoder", "återställningskoder", "varakoodit",  # noqa: RUF001
)  # fmt: skip
_RECOVERY = re.compile(rf"(?:{_alternatives(_RECOVERY_NAMES)})")
# One code: letters and digits with a digit in it, 6 to 12 of them, maybe in two groups ("a1c67-5135b",
# "6853 4108"), maybe after its number in the list ("1. ", "2) ").
_CODE = re.compile(
    r"(?:^|(?<=[\s,;:]))(?:\d{1,2}[.)][^\S\n]+)?(?P<code>(?=[a-z0-9\- ]{0,12}\d)[a-z0-9]{3,12}(?:[ \-][a-z0-9]{3,6})?)"
    r"(?=[\s,;.]|$)"
)
_LIST_LINES = 14
_ADVICE_LINES = 2


def _named(lower: str, gates: tuple[str, ...], other_scripts: tuple[str, ...]) -> bool:
    return any(gate in lower for gate in gates) or (
        not lower.isascii() and any(gate in lower for gate in other_scripts)
    )


def card_codes(text: str, lower: str) -> Iterator[Hit]:
    """A card's security code after its name, and its expiry after its name where the text is about a card.

    Each is looked for only where its value's shape is in the text (three or four digits alone; a month
    and a year), then its names (one `in` each), then the pattern: prose has "exp" in every "expect".
    """
    if _named(lower, _GATES_SECURITY, _GATES_SECURITY_ELSEWHERE) and _CODE_SHAPE.search(lower):
        for m in _SECURITY_CODE.finditer(lower):
            if _A_YEAR.fullmatch(m.group("value")) and _WORDS_BETWEEN.search(m.group()):
                continue  # "the security code from 2021": a year, not a code
            yield hit(m.start("value"), m.end("value"), FindingKind.PASSWORD, "context:card-security-code")
    if _named(lower, _GATES_EXPIRY, _GATES_EXPIRY_ELSEWHERE) and _EXPIRY_SHAPE.search(lower) and _CARD.search(lower):
        for m in _EXPIRY.finditer(lower):
            yield hit(m.start("value"), m.end("value"), FindingKind.CARD, "context:card-expiry")


# What every name holds, one `in` each (a few stems for sixty names; "thr" or "val" would be in every text), and
# the other scripts' names, looked for only in text that is not all ASCII.
_GATES_SECURITY = ("cv", "cid", "csc", "cav2", "secur", "segur", "sicher", "sicur", "pruf", "crypto", "the back",
                   "the front", "veilig", "bezpiecz")  # fmt: skip
_GATES_SECURITY_ELSEWHERE = tuple(fold_words(stem) for stem in ("безопасн", "セキュリティ", "安全", "보안"))
_GATES_EXPIRY = ("exp", "valid", "thru", "vencim", "caducid", "gultig", "ablauf", "scaden", "geldig", "wazna",
                 "son kullanma")  # fmt: skip
_GATES_EXPIRY_ELSEWHERE = tuple(fold_words(stem) for stem in ("срок", "有効期限", "有效期", "유효기간"))
# (Without look-arounds, so the engine skips to the digits: one with a look-behind cost 37 µs per 2 KB.)
_CODE_SHAPE = re.compile(r"\d\d\d")
_EXPIRY_SHAPE = re.compile(r"[01]\d[^\S\n]?[/\-.]|[01]\d\d\d")
_A_YEAR = re.compile(r"(?:19|20)\d\d")
_WORDS_BETWEEN = re.compile(r"[a-z\u3040-\u30ff\u4e00-\u9fff\uac00-\ud7af][^\S\n]+[a-z]{1,10}[^\S\n]")


def recovery_codes(text: str, lower: str) -> Iterator[Hit]:
    """Every code of a list under a name for recovery codes: on its line, then the lines below it."""
    if not any(gate in lower for gate in ("code", "codi", "kod", "код", "コード", "码", "코드", "kood")):
        return
    read_to = 0
    for name in _RECOVERY.finditer(lower):
        if name.start() < read_to:
            continue  # in a list already read: "backup codes" said on every line is read once, not once per line
        line_end = lower.find("\n", name.end())
        line_end = len(lower) if line_end == -1 else line_end
        found = list(_CODE.finditer(lower, name.end(), line_end))
        yield from _codes(found)
        position, advice = line_end + 1, 0
        for _ in range(_LIST_LINES):
            if position >= len(lower):
                break
            end = lower.find("\n", position)
            end = len(lower) if end == -1 else end
            codes = list(_CODE.finditer(lower, position, end))
            if codes:
                yield from _codes(codes)
            elif lower[position:end].strip():
                advice += 1  # "Keep them somewhere safe": a line of advice, not the end of the list
                if advice > _ADVICE_LINES:
                    break
            position = end + 1
        read_to = max(line_end, position)


def _codes(found: list[re.Match[str]]) -> Iterator[Hit]:
    for m in found:
        groups = re.split(r"[ \-]", m.group("code"))
        if not all(any(c.isdigit() for c in group) for group in groups) or len(m.group("code")) < 6:
            continue  # "see page 12": words before a number, not a code
        yield hit(m.start("code"), m.end("code"), FindingKind.SECRET, "context:recovery-code")
