"""One-time verification codes as services send them, in the shapes the credential reader misses.

The credential reader finds "verification code: 551903" (a qualifier, the word "code", a link, a
value). Services also write the code first ("482913 is your verification code", "G-482913 is your
Google verification code", "Use 774120 to sign in"), glue the words into one German compound
("Bestätigungscode lautet 661204"), or put the qualifier after the word in Romance languages
("código de verificación es 551903", "codice di verifica è 551903"), give it to its holder with no
qualifier ("Your code: 884213", "enter the code 5512"), or name what it does after it ("Enter 5512
to verify", "Use 604118 to confirm your new device"). A code is short-lived, but
anyone holding it while it lives holds the account, so it is a secret like any other.

Matched on folded, lower-cased text (accents gone), behind substring gates so that mail without
the word "code" (or "sign in") pays only for the gates.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from services.common.pii.model import FindingKind, Hit, hit
from services.common.text_folding import fold_words

# What a name before a code holds ("cod" finds code, codigo and codice); the other gates name it after it, or
# name a bank's TAN.
_OTHER_SCRIPT_GATES = (
    "码",
    "碼",
    "コード",
    "번호",
    "코드",
    "код",
    "κωδικ",
    "קוד",
    "رمز",
    "کد",
    "ओटीपी",
    "कोड",
    "รหัส",
    "mã",
)
_NAME_GATES = ("cod", "kod", "puk", "koodi", "otp", *(fold_words(w) for w in _OTHER_SCRIPT_GATES))
_GATES = ("sign", "log in", "verif", "confirm", "tan", "transaktion", "one-time", "one time", *_NAME_GATES)
# A code: 4 to 8 digits, maybe split in two groups, maybe after a one-letter prefix ("G-482913").
# Found first (a character class lets the engine skip ahead); the words are then looked for only
# in a short window on either side, as `financial.bank_accounts` does.
_VALUE = re.compile(r"[0-9]{3,8}(?:[ \-][0-9]{3,4})?")  # one simple pattern: an alternation scans 3x slower
_PREFIX = re.compile(r"(?<![\w\-])[a-z]-$")
_WINDOW = 80
_NAMED = (
    r"(?:verification|confirmation|security|login|sign-?in|one-time|access|authentication|auth|2fa|otp|pairing"
    r"|reset|recovery|unlock|activation)"
    r" code"
    r"|bestatigungscode|sicherheitscode|verifizierungscode|einmalcode|prufcode|anmeldecode|zugangscode|freigabecode"
    r"|code de (?:verification|confirmation|securite|connexion)"
    r"|codigo de (?:verificacion|confirmacion|seguridad|acceso|acesso|verificacao|confirmacao|seguranca)"
    r"|codice di (?:verifica|conferma|sicurezza|accesso)"
    r"|verificatiecode|bevestigingscode|beveiligingscode|kod (?:weryfikacyjny|potwierdzajacy|dostepu)"
    # a SIM's unblocking key, and a code in Chinese, Japanese and Korean ("验证码是849460", "認証コード: 4471")
    r"|\bpuk2?(?: code)?|"
    + "|".join(
        fold_words(w)
        for w in (
            "验证码",
            "驗證碼",
            "校验码",
            "认证码",
            "認証コード",
            "確認コード",
            "인증번호",
            "인증 코드",
            "인증코드",
            # and in more languages, as their services write it
            "код подтверждения",
            "код верификации",
            "код из смс",
            "код підтвердження",
            "одноразовий код",
            "doğrulama kodunuz",
            "doğrulama kodu",
            "onay kodunuz",
            "onay kodu",
            "verifieringskod",
            "engångskod",
            "bekreftelseskode",
            "bekræftelseskode",
            "vahvistuskoodi",
            "cod de verificare",
            "ověřovací kód",
            "ellenőrző kód",
            "κωδικός επαλήθευσης",
            "קוד אימות",
            "رمز التحقق",
            "کد تایید",
            "सत्यापन कोड",
            "ओटीपी",
            "kode verifikasi",
            "kode otp",
            "mã xác nhận",
            "mã xác thực",
            "mã otp",
            "รหัสยืนยัน",
            "รหัส otp",
        )
    )
    # A code given to its holder, or to be typed: "Your code: 884213", "enter the code 5512".
    + r"|\b(?:your|ihr|dein|votre|ton|tu|su|seu|sua|uw|je|twoj) code"
    r"|\b(?:enter|use|type|input) (?:the |this |your )?code"
)
_IS_IN_CJK = "|".join(fold_words(w) for w in ("是", "为", "は", "는", "은"))
# Before the code: its name and what services put between: "is", a colon, "lautet", "est", "es"...
# (Between them, what the code is for: "código de verificación de WhatsApp es", "código de acesso ao Nubank é";
# around the code, brackets: "인증번호 [220249]", "【認証コード】183385".)
_NAME_BEFORE = re.compile(
    rf"(?:{_NAMED})(?:\s+(?:de|do|da|del|ao|al|for|fur|pour|per|para|von|cua)(?:\s+[\w\-]+){{1,2}}?)?"
    rf"(?:\s+(?:is|was|lautet|ist|est|es|e|is now|la|adalah)\b|\s*[:=]|\s*(?:{_IS_IN_CJK})"
    r"|\s*[\[\](\u3010\u3011\u300c\u300d\"'])*\s*$"
)
# A bank's transaction number (German online banking's TAN, mTAN, pushTAN): one word, so it needs a link.
_TAN_BEFORE = re.compile(
    r"(?<![\w\-])(?:(?:sms|push|photo|chip|app|m|i)-?)?(?P<word>tan|transaktionsnummer)"
    r"(?:-nummer|-code| nummer| number)?(?:\s*[:=]|\s+(?:is|lautet|ist))\s*$"
)
# After the code: "482913 is your (Google) verification code".
_NAME_AFTER = re.compile(rf" is your\b[^.\n]{{0,40}}?\b(?:(?:{_NAMED})\b|code(?=\s*(?:[.,;:!)]|$)))")
# "Use 774120 to sign in" (a code to use or enter: "call 4471 to sign in guests" is an extension).
# "Use 8629 as your one-time password for the transaction of INR 4,999.00".
_AS_YOUR_AFTER = re.compile(
    r"\s+as (?:your|the) (?:one[ \-]?time (?:password|passcode|code|pin)|otp|(?:verification|security|login) code)\b"
)
_USE_BEFORE = re.compile(r"\b(?:use|enter|type|utilisez|saisissez|usa|inserisci|introduce|gib)\s+$")
_SIGN_IN_AFTER = re.compile(
    r"\s+(?:to|pour|para|per|um)\s+(?:(?:sign|log)\s*-?\s*(?:in|on)\b|verify|confirm|validate|activate|complete|reset"
    r"|verifier|confirmer|verificar|confirmar|verificare|confermare|bestatigen|verifizieren)"
)


def _code_span(m: re.Match[str]) -> tuple[int, int]:
    """4 to 8 digits, or two groups of 3-4 ("381 204"); a longer first run alone is no code."""
    first = m.group().split(" ")[0].split("-")[0]
    if len(first) == len(m.group()):
        return (m.start(), m.end()) if 4 <= len(first) <= 8 else (0, 0)
    if len(first) in (3, 4):
        return m.start(), m.end()
    return (m.start(), m.start() + len(first)) if len(first) <= 8 else (0, 0)


def _names_a_tan(text: str, lo: int, before: str) -> bool:
    """ "TAN: 482913" is a bank's code; "a tan: 1200" is a colour: the short word counts in capitals."""
    m = _TAN_BEFORE.search(before)
    return m is not None and (m.group("word") != "tan" or text.startswith("TAN", lo + m.start("word")))


def one_time_codes(text: str, lower: str) -> Iterator[Hit]:
    """Spans of one-time codes stated beside the words that name them, either side."""
    if not any(gate in lower for gate in _GATES):
        return
    for m in _VALUE.finditer(lower):
        start, end = _code_span(m)
        if end - start < 4:
            continue
        glued_before = start and (
            (lower[start - 1].isascii() and lower[start - 1].isalnum()) or lower[start - 1] == "_"
        )
        if glued_before or (lower[end : end + 1].isascii() and lower[end : end + 1].isalnum()):
            continue  # "A12345", "12345b"; CJK writes the code against its words: "验证码是849460"
        prefix = _PREFIX.search(lower, max(0, start - 2), start)
        first = prefix.start() if prefix else start
        lo = max(0, first - _WINDOW)
        before = lower[lo:first]
        if (
            (any(gate in before for gate in _NAME_GATES) and _NAME_BEFORE.search(before))
            or (lower.startswith(" is your", end) and _NAME_AFTER.match(lower, end, end + _WINDOW))
            or (_SIGN_IN_AFTER.match(lower, end, end + _WINDOW) and _USE_BEFORE.search(before))
            or (_AS_YOUR_AFTER.match(lower, end, end + _WINDOW) and _USE_BEFORE.search(before))
            or (("tan" in before or "transaktion" in before) and _names_a_tan(text, lo, before))
        ):
            yield hit(first, end, FindingKind.SECRET, "context:one-time-code")
