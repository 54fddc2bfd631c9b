"""Secrets recognised by their context: a credential word, a key id beside them, or their randomness.

The class of problem is "a value someone would have to keep secret, written next to something that
says so", in any of the shapes people and programs write it:

* ``k=v``, ``k: v``, ``"k": "v"``, ``k => v``, ``<k>v</k>``, ``?k=v&``, ``--k v`` with a credential key,
  including identifiers that merely contain one (``aws_secret_access_key``, ``DB_PASSWORD``, ``apiKey``);
* prose in several languages ("my password is …", "le mot de passe est …", "das Passwort lautet …");
* a high-entropy token near a credential word without any separator ("the staging token — 9f8e…");
* unlabelled key material next to a key id (AWS ``AKIA…`` and its 40-character secret, and the like);
* long random tokens anywhere, except hex digests in a code-review context (commit SHAs).

Values that are not credentials survive: "the password is required", "token: expired",
``password = ${DB_PASSWORD}``, ``secret: null``.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterator

from services.common.pii.credential_words import (
    CODE_WORDS,
    GLUED_PASSWORD_ENDINGS,
    KEY_ONLY_QUALIFIERS,
    KEY_WORDS,
    NOT_A_PASSWORD_PASS,
    NUMBER_WORDS,
    NUMERIC_SECRET_WORDS,
    PAIR_ONLY_WORDS,
    PAIR_WORDS,
    PASSWORD_WORDS,
    PLURALS,
    QUALIFIED,
    QUALIFIERS,
    SECRET_WORDS,
    SOFTWARE_QUALIFIERS,
    STEM_WORDS,
)
from services.common.pii.model import (
    FindingKind,
    Hit,
    character_classes,
    hit,
    inside_placeholder,
    is_placeholder_at,
    shannon_entropy,
)
from services.common.pii.secret_formats import key_ids
from services.common.pii.security_questions import short_answer
from services.common.pii.stated_values import (
    BARE,
    LINK,
    TRAILING,
    list_end,
    password_before,
    password_in_clause,
    password_shaped,
    plausible,
    value_after,
    value_below,
)
from services.common.pii.tables import column_values
from services.common.text_folding import fold_words

# "Türcode", "deurcode", "Alarmcode": the thing and its code written as one word (folded, lower case).
_GLUED_CODE = re.compile(r"(?P<thing>[a-z]{2,12})(?:code|kode|kod|codice|codigo)")
_MULTIWORD = re.compile(
    r"p[\s._\-]a[\s._\-]s[\s._\-]s[\s._\-]w[\s._\-]o[\s._\-]r[\s._\-]d"
    r"|mot de passe|mots de passe|palavra[ \-]passe|parola d.ordine|codigo de acceso|code d.acces|zugangscode"
    r"|mat khau|kata sandi|kata laluan"
    r"|cle (?:wifi|wi-fi|wlan|wpa2?|wep|(?:du |de )?reseau|de securite|du wifi|d.activation|de licence|de produit)"
    r"|security code|card verification|cryptogramme visuel|safe ?word|code ?word|secret word"
)
# Rarer phrases, matched only when one of a few substrings is in the text: each new first letter in
# the regexes above would slow them on every e-mail, whether it holds a credential or not.
_RARE_PHRASE_GATES = ("answer", "maiden", "memorable", "one-time", "one time", "onetime", "otp", "2fa", "mfa", "pet")
_RARE_PHRASES = re.compile(
    r"security answer|security question answer|answer to (?:my |the |your )?security question|secret answer"
    r"|security question\b[^\n]{0,80}?\banswer\b"
    r"|mother'?s maiden(?: name)?|maiden name|memorable (?:word|answer|info(?:rmation)?|data)"
    r"|(?:first|childhood|favou?rite) pet(?:'s name)?|pet'?s name"
    r"|one.?time (?:code|password|passcode|pin)|\b(?:t?otp|2fa|mfa)s?\b"
)
# "p/w": looked for only where the text holds it (an alternative with a look-behind in `_MULTIWORD` doubled
# its cost on every mail).
_P_SLASH_W = re.compile(r"(?<![\w/])p/w(?![\w/])")
# "p4ssw0rd", "pa$$word": a password word spelt with look-alike digits and symbols (folding keeps those).
_LEET_PASSWORD = re.compile(r"p[a4@][s5$]{2}(?:w[o0]rd|phr[a4@][s5$]e)")
# Scripts written without spaces between words: the word, a particle or a colon, then the value.
# Matched on folded text, where the Japanese voicing marks are gone (パスワード is seen as ハスワート).
_CJK_PASSWORD_WORDS = ("パスワード", "暗証番号", "暗证号码", "暗證號碼", "密码", "密碼", "口令", "PIN码", "PIN碼")
_CJK_WORDS = "|".join(map(fold_words, (*_CJK_PASSWORD_WORDS, "비밀번호", "비번", "암호")))
_CJK_LINKS = "|".join(map(fold_words, ("は", "が", "是", "为", "為", "는", "은", "를", ":", "=")))
_CJK_PASSWORD = re.compile(rf"(?:{_CJK_WORDS})\s*(?:{_CJK_LINKS})?\s*[「『\"]?(?P<value>[!-~]{{3,}})")


def _first_letter_alternation(stems: list[str]) -> str:
    """One group per first letter ("p(?:ass|wd|in)|s(?:ecret|enha)"): at each position the engine
    tries one group instead of every stem, which halves the scan of an ordinary e-mail."""
    groups: dict[str, list[str]] = {}
    for stem in stems:
        groups.setdefault(stem[0], []).append(stem[1:])
    return "|".join(
        first + (f"(?:{'|'.join(sorted(rests, key=len, reverse=True))})" if len(rests) > 1 else rests[0])
        for first, rests in groups.items()
    )


STEMS = re.compile(_first_letter_alternation(STEM_WORDS.split()))
# No credential's key name is longer ("AZURE_STORAGE_ACCOUNT_PRIMARY_ACCESS_KEY" is 40).
_LONGEST_KEY = 128
# Hits this long hold whatever stems lie inside them.
_LONG_VALUE = 256
_IDENT_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-")


def _ident_char(ch: str) -> bool:
    return ch in _IDENT_CHARS or (not ch.isascii() and ch.isalpha())


_CAMEL = re.compile(r"[A-Z]?[a-z0-9]+|[A-Z]+(?![a-z])")
# "credentials: bob / S3cure!pass": a user name and a password after a credential word.
_USER_AND_PASSWORD = re.compile(r"[\w.@\-]+[ \t]*[/|][ \t]*\S*(?:\d|[^\w\s])\S*")
# The same with no link before it: the user name must have a letter ("pass 3/4 of the tests" is no pair).
_NAMED_USER_AND_PASSWORD = re.compile(r"[\w.@\-]*[A-Za-z][\w.@\-]*[ \t]*[/|][ \t]*\S*(?:\d|[^\w\s])\S*")
_LOCK_WORD = re.compile(r"[ \t]+(?:lock|padlock|code|number|for the (?:lock|safe|padlock))\b")
# The password after a user name already read as the value: " : B4ckup!Now", " / Xy7!qq".
_BRACKETED_PAIR = re.compile(
    r"[ \t]*[(\[][ \t]*(?P<pair>[\w.@\-]*[A-Za-z][\w.@\-]*[ \t]*[/|][ \t]*[^\s)\]]*(?:\d|[^\w\s)\]])[^\s)\]]*)"
    r"[ \t]*[)\]]"
)
_PAIR_TAIL = re.compile(r"[ \t]*[/|:][ \t]*\S*(?:\d|[^\w\s])\S*")
_COMMA_TAIL = re.compile(r",[ \t]*(?P<value>\S+)")
_USER_COMMA_PASSWORD = re.compile(r"[\w.@\-]+[ \t]*,[ \t]*(?P<value>\S+)")
_ENTROPY_TOKEN = re.compile(r"[A-Za-z0-9+/_\-.~]{16,}={0,2}")
_PAIR_WINDOW = 200


def _identifier_at(text: str, start: int, end: int) -> tuple[int, int]:
    while start > 0 and _ident_char(text[start - 1]):
        start -= 1
    while end < len(text) and _ident_char(text[end]):
        end += 1
    while end > start and text[end - 1] in ".-":
        end -= 1
    return start, end


def _parts(identifier: str) -> list[str]:
    chunks = [c for c in re.split(r"[_.\-]+", identifier) if c]
    return [p.lower() for chunk in chunks for p in (_CAMEL.findall(chunk) if chunk.isascii() else [chunk])]


def _previous_word(lower: str, start: int) -> str:
    m = re.search(r"([a-z0-9]+(?:-[a-z0-9]+)*)[\s_\-]*$", lower[max(0, start - 24) : start])
    return m.group(1).replace("-", "") if m else ""  # "wi-fi key" is a wifi key


def _credential_kind(parts: list[str], previous: str) -> FindingKind | None:
    """PASSWORD or SECRET when the identifier names a credential; None for "passport", "keyboard", "pin it"."""
    joined = "".join(parts)
    if "public" in parts or joined in ("pubkey", "publickey", "pubkeys"):
        return None  # WireGuard's "PublicKey = …", "public_key": published on purpose
    if any(p in PASSWORD_WORDS for p in parts) or joined in PASSWORD_WORDS:
        return FindingKind.PASSWORD
    if joined.endswith(GLUED_PASSWORD_ENDINGS):  # PGPASSWORD, MYSQLPWD, adminpassword: a prefix glued on
        return FindingKind.PASSWORD
    if any(p in SECRET_WORDS for p in parts) or joined in SECRET_WORDS:
        return FindingKind.SECRET
    chain = [previous, *parts]
    if any(q in QUALIFIERS and n in QUALIFIED for q, n in itertools.pairwise(chain)):
        return FindingKind.SECRET
    if any(q in KEY_ONLY_QUALIFIERS and n in ("key", "keys") for q, n in itertools.pairwise(chain)):
        return FindingKind.SECRET
    if _glued_code(parts):
        return FindingKind.PASSWORD
    return None


def _glued_code(parts: list[str]) -> bool:
    """ "Türcode", "deurcode", "alarmcode": one word naming what a code opens, then "code"."""
    glued = _GLUED_CODE.fullmatch(parts[-1]) if len(parts) == 1 else None
    return glued is not None and glued.group("thing") in QUALIFIERS


def _entropy_near(text: str, start: int, end: int) -> Iterator[Hit]:
    """A random-looking token near a credential word, with no separator between them."""
    for m in _ENTROPY_TOKEN.finditer(text, max(0, start - 60), min(len(text), end + 80)):
        token = m.group().strip(".-")
        if _random_looking(token) and not inside_placeholder(text, m.start()):
            yield hit(m.start(), m.start() + len(token), FindingKind.SECRET, "context:entropy")


def _random_looking(token: str, minimum: int = 16) -> bool:
    if len(token) < minimum or token.startswith("/") or ("/" in token and "." in token) or token.count(".") > 2:
        return False
    hexish = re.fullmatch(r"[0-9a-fA-F]+", token) is not None
    if hexish:
        return len(token) >= minimum and any(c.isalpha() for c in token) and shannon_entropy(token) >= 3.0
    return (
        any(c.isdigit() for c in token)
        and character_classes(token) >= 3
        and shannon_entropy(token) >= min(3.5, 0.18 * len(token))
    )


# "code for the alarm", "código de la puerta", "code d'entrée", "Code für die Haustür", "kod do domofonu".
_QUALIFIER_AFTER = re.compile(
    r"\s+(?:(?:for|to|of|on|di|de|del|dell'|da|du|do|dos|das|della|fur|van|voor|zur|zum|vom|der)(?:\s+|(?<=')))?"
    r"(?:(?:the|my|our|la|le|il|el|los|las|les|lo|die|der|das|het|de)\s+|(?:l'|d')\s*)?"
    r"([a-z]+)"
    # and what the door or the alarm belongs to: "code de la porte d'entree", "code for the alarm of the shop"
    r"(?:[^\S\n]*d'[a-z]{2,20}|[^\S\n]+(?:de la|du|des|of the|of my|der|des|del|di)[^\S\n]+[a-z]{2,20})?"
)


def _qualified_after(lower: str, end: int) -> tuple[int, str] | None:
    """ "code for the alarm", "code wifi", "codice di accesso": where a qualifier in the few words after
    the key ends, and the qualifier."""
    after = _QUALIFIER_AFTER.match(lower[end : end + 40])
    return (end + after.end(), after.group(1)) if after is not None and after.group(1) in QUALIFIERS else None


# A dial's turns after a combination: "left 12, right 34, left 56", "R 10 L 22 R 5".
_DIAL_TURNS = re.compile(
    r"[^\S\n]*(?:[:=\-]|is)?[^\S\n]*(?P<value>(?:left|right|l|r)[^\S\n]*\d{1,2}"
    r"(?:[,;]?[^\S\n]*(?:then[^\S\n]+)?(?:left|right|l|r)[^\S\n]*\d{1,2}){2,4})(?![\w])"
)


def _dial_turns(lower: str, end: int) -> tuple[int, int] | None:
    turns = _DIAL_TURNS.match(lower, end)
    return (turns.start("value"), turns.end("value")) if turns else None


# "password|Winter#2025", as exports and logs separate fields; a header row's next field is a word.
_PIPED = re.compile(r"[ \t]*\|[ \t]*(?P<value>[^\s|]+)")
_SNAKE_CASE = re.compile(r"[a-z][a-z0-9]*(?:_[a-z0-9]+)+")


def _piped_value(text: str, end: int) -> tuple[int, int] | None:
    piped = _PIPED.match(text, end)
    if piped is None or is_placeholder_at(text, piped.start("value")):
        return None
    value = piped.group("value").rstrip(TRAILING)
    snake_case = _SNAKE_CASE.fullmatch(value) is not None  # "user|password|last_login_2024": a header
    shaped = password_shaped(value) and any(c.isdigit() for c in value) and not snake_case
    return (piped.start("value"), piped.start("value") + len(value)) if shaped else None


def _pair_after(text: str, lower: str, end: int) -> tuple[int, int] | None:
    """A "user / password" pair after a credential word and its link (or none: "creds bob / X1!"), as one
    span; or in brackets after the word ("credentials (bob / X1!)"), where `LINK` would take it for a remark."""
    if bracketed := _BRACKETED_PAIR.match(text, end):
        return bracketed.start("pair"), bracketed.end("pair")
    link = LINK.match(lower, end)
    if link is not None:
        pair = _USER_AND_PASSWORD.match(text, link.end())
    else:
        bare = BARE.match(lower, end)
        pair = _NAMED_USER_AND_PASSWORD.match(text, bare.end()) if bare else None
    return (pair.start(), pair.end()) if pair else None


def _comma_pair(text: str, lower: str, end: int) -> tuple[int, int] | None:
    """ "creds: root, T00r!Pass": a user name, a comma, and a password-shaped value."""
    link = LINK.match(lower, end)
    pair = _USER_COMMA_PASSWORD.match(text, link.end()) if link is not None else None
    if pair is None:
        return None
    value = pair.group("value").rstrip(TRAILING)
    return (pair.start(), pair.start("value") + len(value)) if password_shaped(value) else None


def _password_statement(text: str, lower: str, end: int) -> Iterator[Hit]:
    """The value after a word that can only name a password, linked or a few words on."""
    span = value_after(text, lower, end, FindingKind.PASSWORD)
    if span is None:
        span = password_in_clause(text, lower, end)
    if span:
        yield hit(*span, FindingKind.PASSWORD, "context:credential")


_SHORT_NUMBER = re.compile(r"[ \t]+\d{1,3}(?![\w.,/:])")


# Parts of an identifier that make it a setting about a credential, not one: "token_ttl_seconds = 3600",
# "max_new_tokens=256", "api_key_header = "X-API-Key"", "password_file: /run/secrets/db_password".
_SETTING_PARTS = frozenset(
    [
        "ttl",
        "seconds",
        "secs",
        "minutes",
        "hours",
        "days",
        "length",
        "len",
        "header",
        "size",
        "count",
        "limit",
        "timeout",
        "expiry",
        "lifetime",
        "rounds",
        "bits",
        "max",
        "min",
        "num",
        "file",
        "path",
        "dir",
    ]
)


def _key_statement(text: str, lower: str, start: int, end: int, rows_read: list[int]) -> Iterator[Hit]:
    """What is stated for the identifier text[start:end] that holds a credential stem, if it names one."""
    parts, previous = _parts(text[start:end]), _previous_word(lower, start)
    if len(parts) > 1 and not _SETTING_PARTS.isdisjoint(parts):
        return
    kind = _credential_kind(parts, previous)
    named_thing = parts[-1:] in CODE_WORDS or (len(parts) == 1 and parts[0] in KEY_WORDS)
    if kind is None and named_thing and (qualified := _qualified_after(lower, end)):
        # "the code for the alarm is 4471", "code wifi: x"; "Schlüssel für die API: x" is a software key
        kind = FindingKind.SECRET if qualified[1] in SOFTWARE_QUALIFIERS else FindingKind.PASSWORD
        end = qualified[0]
    if kind is None and PAIR_ONLY_WORDS.intersection(parts):
        if pair := _pair_after(text, lower, end):
            yield hit(pair[0], pair[1], FindingKind.PASSWORD, "context:credential-pair")
        return
    if kind is None and NUMERIC_SECRET_WORDS.intersection(parts):
        if thing := _LOCK_WORD.match(lower, end):  # "combination lock: 12-07-33"
            end = thing.end()
        span = value_after(text, lower, end, FindingKind.PASSWORD)
        if span and not any(c.isdigit() for c in text[span[0] : span[1]]):
            span = _dial_turns(lower, end)  # "left 12, right 34, left 56": the value is the turns
        if span and any(c.isdigit() for c in text[span[0] : span[1]]):
            yield hit(*span, FindingKind.PASSWORD, "context:credential")
        return
    if kind is None or (parts == ["pass"] and previous in NOT_A_PASSWORD_PASS):
        return
    if parts == ["pass"] and _SHORT_NUMBER.match(text, end):
        return  # "Pass 0 to read_header", "in pass 2": the verb or a stage, with a number no code is
    numeric = parts[-1:] in CODE_WORDS or not NUMBER_WORDS.isdisjoint(parts) or _glued_code(parts)
    for column_start, column_end in column_values(text, start, end, rows_read):
        value = text[column_start:column_end]
        if plausible(value.strip("\"'`"), True, kind, False) and not inside_placeholder(text, column_start):
            yield hit(column_start, column_end, kind, "context:credential-column")
    span = value_after(text, lower, end, kind) or value_below(text, start, end)
    if span:
        if parts[-1] in PLURALS:
            span = (span[0], list_end(text, span[1]))
        elif PAIR_WORDS.intersection(parts) and (tail := _PAIR_TAIL.match(text, span[1])):
            span = (span[0], tail.end())  # the user name was read as the value; the password follows
        elif (
            PAIR_WORDS.intersection(parts)
            and (comma := _COMMA_TAIL.match(text, span[1]))
            and password_shaped(comma.group("value").rstrip(TRAILING))
        ):  # "creds: root, T00r!Pass"
            span = (span[0], comma.start("value") + len(comma.group("value").rstrip(TRAILING)))
        yield hit(*span, kind, "context:credential")
    elif (pair := _pair_after(text, lower, end)) or (
        PAIR_WORDS.intersection(parts) and (pair := _comma_pair(text, lower, end))
    ):
        yield hit(pair[0], pair[1], FindingKind.PASSWORD, "context:credential-pair")
    elif (kind is FindingKind.PASSWORD or numeric) and (clause := password_in_clause(text, lower, end, numeric)):
        yield hit(*clause, FindingKind.PASSWORD, "context:credential-clause")
    elif kind is FindingKind.PASSWORD and (piped := _piped_value(text, end)):
        yield hit(*piped, FindingKind.PASSWORD, "context:credential-piped")
    yield from _entropy_near(text, start, end)


# The words a value can be named by after it is written; `password_before` reads what precedes them.
_PASSWORD_WORD_GATES = ("pass", "pw", "kennwort", "contrasena", "senha", "wachtwoord")
_PASSWORD_WORD = re.compile(
    r"(?<![\w])(?:password|passwort|passcode|passphrase|pwd|pw|kennwort|mot de passe|contrasena|senha|wachtwoord)"
    r"(?![\w\-])"
)


def credential_statements(text: str) -> Iterator[Hit]:
    """Values stated for a credential key, in any format; random tokens near a credential word."""
    lower = text.lower()
    if len(lower) != len(text):  # a character whose lower case is longer would shift every offset
        lower = "".join(c if len(c.lower()) != 1 else c.lower() for c in text)
    seen: set[int] = set()
    rare = _RARE_PHRASES.finditer(lower) if any(w in lower for w in _RARE_PHRASE_GATES) else ()
    slashed = _P_SLASH_W.finditer(lower) if "p/w" in lower else ()
    for m in itertools.chain(_MULTIWORD.finditer(lower), rare, slashed, _LEET_PASSWORD.finditer(lower)):
        if m.group() == "password":
            continue  # the plain word is the identifier path's, below
        seen.add(m.end())
        stated = list(_password_statement(text, lower, m.end()))
        yield from stated or short_answer(text, lower, m)
    for m in () if lower.isascii() else _CJK_PASSWORD.finditer(lower):
        value = text[m.start("value") : m.end("value")].rstrip(TRAILING)
        if plausible(value, True, FindingKind.PASSWORD, False):
            yield hit(m.start("value"), m.start("value") + len(value), FindingKind.PASSWORD, "context:credential")
    read_until = 0
    rows_read: list[int] = []  # where a table's rows begin and end, for each credential column read
    for m in STEMS.finditer(lower):
        if m.start() < read_until:
            continue  # inside an identifier already read: "passpass..." is one identifier, read once
        if rows_read and rows_read[-2] <= m.start() < rows_read[-1]:
            continue  # a cell of a table whose credential column was read: no row is a header
        start, end = _identifier_at(text, m.start(), m.end())
        read_until = end
        if end in seen or inside_placeholder(text, m.start()) or text.endswith("</", 0, start):
            continue  # a closing tag names the element it closes, not a new value
        seen.add(end)
        if end - start > _LONGEST_KEY:
            continue
        for found in _key_statement(text, lower, start, end, rows_read):
            yield found
            if found[1] - found[0] >= _LONG_VALUE:  # read once: its stems ("token:token:..." x 40,000) are its own
                read_until = max(read_until, found[1])
    for m in _PASSWORD_WORD.finditer(lower) if any(w in lower for w in _PASSWORD_WORD_GATES) else ():
        if (before := password_before(text, lower, m.start(), m.end())) is not None:
            yield hit(*before, FindingKind.PASSWORD, "context:value-before-password")


# A credential named in one field and held in the next: .NET's <add key="ApiSecret" value="...">,
# Kubernetes' "- name: DB_PASS / value: ...", JSON's {"name": "token", "value": "..."}.
_NAME_THEN_VALUE = re.compile(
    r"\b(?:key|name|id)[\"']?\s*[:=]\s*[\"']?(?P<name>[\w.\-]{2,64})[\"']?[\s,]*(?:-\s*)?"
    r"[\"']?value[\"']?\s*[:=]\s*(?P<quote>[\"']?)(?P<value>[^\"'\s<>]+)",
    re.IGNORECASE,
)


def named_values(text: str) -> Iterator[Hit]:
    """The value field after a name field that names a credential."""
    if "value" not in text.lower():
        return
    for m in _NAME_THEN_VALUE.finditer(text):
        kind = _credential_kind(_parts(m.group("name")), "")
        value = m.group("value") if m.group("quote") else m.group("value").rstrip(TRAILING)
        if kind is not None and plausible(value, True, kind, bool(m.group("quote"))):
            yield hit(m.start("value"), m.start("value") + len(value), kind, "context:named-value")


def key_pairs(text: str) -> Iterator[Hit]:
    """The unlabelled secret half written next to a key id: AWS, Alibaba, Tencent, GCS HMAC, Twilio."""
    for id_start, id_end in key_ids(text):
        lo, hi = max(0, id_start - _PAIR_WINDOW // 2), min(len(text), id_end + _PAIR_WINDOW)
        for m in _ENTROPY_TOKEN.finditer(text, lo, hi):
            token = m.group().rstrip(".-")
            if m.start() < id_end and m.end() > id_start:
                continue
            if len(token) >= 20 and _random_looking(token, 20) and not inside_placeholder(text, m.start()):
                yield hit(m.start(), m.start() + len(token), FindingKind.SECRET, "context:key-pair")
