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
from services.common.text_folding import fold_words


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


# Words (folded, lower case) that name a password-like secret, in the languages we meet.
_PASSWORD_WORDS = (
    _words(
        "password passwords passwd pwd pw pass passcode passcodes passphrase pin pins pincode cvv cvc cvv2 "
        "otp otps totp 2fa mfa "
        "passwort passworter kennwort mdp contrasena contrasenas clave senha wachtwoord parola haslo heslo "
        "haslo hasło jelszo losenord losenordet adgangskode passord passordet salasana sifre lozinka geslo "
    )
) | {fold_words("пароль"), fold_words("пароли")}
# Words that name any other secret on their own.
_SECRET_WORDS = _words(
    "secret secrets token tokens apikey apikeys credential credentials creds privatekey secretkey "
    "accesskey authkey authtoken accesstoken refreshtoken clientsecret appsecret geheimnis "
)
# Words that make a following "key"/"code"/"token" a secret: "api key", "signing key", "recovery code".
_QUALIFIERS = _words(
    "api access secret private signing master encryption license licence auth client app consumer session "
    "bearer refresh recovery backup deploy service webhook shared ssh gpg pgp admin root "
    "otp totp 2fa mfa sms login signin authentication auth "
    "alarm door safe gate lock entry garage locker building keypad unlock verification security "
    "wifi wlan porte portail alarme coffre accesso acceso acces zugang tur "
)
_CODE_WORDS = (["code"], ["codes"], ["codice"], ["codigo"])
_QUALIFIED = frozenset({"key", "keys", "code", "codes", "token", "tokens", "secret", "phrase"})
_MULTIWORD = re.compile(
    r"p[\s._\-]a[\s._\-]s[\s._\-]s[\s._\-]w[\s._\-]o[\s._\-]r[\s._\-]d"
    r"|mot de passe|mots de passe|palavra[ \-]passe|parola d.ordine|codigo de acceso|code d.acces|zugangscode"
    r"|security code|card verification"
)
# Rarer phrases, matched only when one of a few substrings is in the text: each new first letter in
# the regexes above would slow them on every e-mail, whether it holds a credential or not.
_RARE_PHRASE_GATES = ("answer", "maiden", "memorable", "one-time", "one time", "onetime", "otp", "2fa", "mfa")
_RARE_PHRASES = re.compile(
    r"security answer|security question answer|answer to (?:my |the |your )?security question|secret answer"
    r"|maiden name|memorable word|memorable answer|memorable information"
    r"|one.?time (?:code|password|passcode|pin)|\b(?:t?otp|2fa|mfa)s?\b"
)
# "p4ssw0rd", "pa$$word": a password word spelt with look-alike digits and symbols (folding keeps those).
_LEET_PASSWORD = re.compile(r"p[a4@][s5$]{2}(?:w[o0]rd|phr[a4@][s5$]e)")
# Scripts written without spaces between words: the word, a particle or a colon, then the value.
# Matched on folded text, where the Japanese voicing marks are gone (パスワード is seen as ハスワート).
_CJK_WORDS = "|".join(map(fold_words, ("パスワード", "暗証番号", "密码", "密碼", "口令", "비밀번호", "암호")))
_CJK_LINKS = "|".join(map(fold_words, ("は", "が", "是", "为", "為", "는", "은", "를", ":", "=")))
_CJK_PASSWORD = re.compile(rf"(?:{_CJK_WORDS})\s*(?:{_CJK_LINKS})?\s*(?P<value>[!-~]{{3,}})")
_STEMS = re.compile(
    r"pass|pwd|pw\b|secret|token|key|cred|pin|cvv|cvc|kennwort|mdp|contrase|clave|senha|wachtwoord|parola"
    r"|codice|codigo|login|signin|account|anmeldung|connexion|acceso|accesso|has[l\u0142]o|heslo|jelsz|losenord|adgangskode|salasana|sifre|lozinka|geslo|geheim|code|phrase|"
    + fold_words("пароль")
)
_IDENT_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-")


def _ident_char(ch: str) -> bool:
    return ch in _IDENT_CHARS or (not ch.isascii() and ch.isalpha())


_CAMEL = re.compile(r"[A-Z]?[a-z0-9]+|[A-Z]+(?![a-z])")
# Between the key and its value: closing quotes/brackets, "for the guest wifi", "(prod)", then the link.
_LINK = re.compile(
    r"[\"'`\]\)]*\s*(?:\([^)\n]{0,30}\)\s*)?"
    r"(?:(?:for|of|to|on|at|de|du|des|fur|del|da|di|do|dos|das|der|vom|zum|zur|van|voor|pour|para|per)\s+"
    r"(?:[\w.@'\-]+(?:\s+|(?=\s*[:=]))){0,3}?)?"
    r"(?:(?:number|no\.?|code|nummer|numero|word)\s+)?"
    r"(?:(?P<strong>(?::=|=>|->|==|=|:|>|(?<=\s)[\-\u2013\u2014]{1,2}(?=\s))\s*|['\u2019]s\s+)"
    r"|(?P<prose>(?:is now|is still|is|was|will be|has been changed to|changed to|set to|reset to|are|est|etait"
    r"|sera|ist|lautet|war|wird|es|era|e|sono|jest|je|ar|er|wordt|reads|remains)\s+))"
)
_BARE = re.compile(r"[ \t]+")
# "boarding pass: 14A" is not a password.
_NOT_A_PASSWORD_PASS = _words(
    "boarding bus day season hall ski museum travel rail train free visitor guest press backstage annual "
)
_QUOTES = {'"': '"', "'": "'", "`": "`", "\u201c": "\u201d", "\u2018": "\u2019", "\u00ab": "\u00bb", "\u201e": "\u201c"}
_TRAILING = ".,;:)]}\"'\u201d\u2019\u00bb>"
# Values that say something about a credential rather than being one.
# A user name, a slash and a password: "admin / Cobalt8124!", "root | toor99".
_USER_SLASH_PASSWORD = re.compile(
    r"\b(?:admin|administrator|root|user|username|login|benutzer|utilisateur|usuario|utente)\s+[/|]\s+(?P<value>\S+)"
)
# "credentials: bob / S3cure!pass": a user name and a password after a credential word.
_USER_AND_PASSWORD = re.compile(r"[\w.@\-]+\s*[/|]\s*\S*[\d\W]\S*")
# The same with no link before it: the user name must have a letter ("pass 3/4 of the tests" is no pair).
_NAMED_USER_AND_PASSWORD = re.compile(r"[\w.@\-]*[A-Za-z][\w.@\-]*\s*[/|]\s*\S*[\d\W]\S*")
# Words after which only a user-and-password pair is a credential ("login: alice / Xy7!qq").
_PAIR_ONLY_WORDS = _words("login logins signin account anmeldung connexion acceso accesso")
NON_VALUES = _words(
    "a an the this that these those it its my your our their his her is are was be been being not no none "
    "null nil true false yes on off n/a na tbd todo unknown empty blank same below above attached "
    "enclosed here there required needed mandatory optional wrong invalid incorrect correct valid expired "
    "weak strong secure insecure long short new old different fine ok okay good bad simple easy hard safe "
    "unsafe temporary case too very still now also only just stored kept saved written in at for from "
    "with by to of and or but if when what which who please see ask check use send sent shared set reset "
    "changed rotated revoked hidden masked redacted encrypted hashed protected missing pending available "
    "included inside outside ready coming needs must should will can le la les un une der die das ein "
    "eine el los las nicht pas nao niet geen non sera ist est es "
    "abgelaufen falsch richtig geandert ungultig gultig neu erforderlich notwendig gesperrt vergessen "
    "expire requis obligatoire change oublie bloque caducado caducada incorrecta obligatorio olvidada "
    "verlopen onjuist verplicht vergeten scaduta errata obbligatoria expirada incorreta obrigatoria "
)
_VALUE = re.compile(r"\S+")
# "2FA: 118 224", "PIN 1234 5678": a short run of digits continues in groups.
_FRACTION = re.compile(r"\d+/\d+")
_DIGIT_GROUPS = re.compile(r"(?:[ \-]\d{2,4}){1,3}(?!\w)")
# Links a few words after a password word can still make: "... I use everywhere is X", "changed my password to X".
_CLAUSE_LINK = re.compile(r"(?:\b(?:is|was|to|as|be|are|remains|reads)\b|:|=|->|=>)[^\S\n]*['\"`\u201c\u2018]?")
_SENTENCE_END = re.compile(r"[.!?](?:\s|$)|\n")
_CLAUSE_WINDOW = 80
# Nouns that make "password X" a thing about passwords, whose own value the clause would be:
# "the password manager is 1Password", "the password reset ticket is INC-20391".
_ABOUT_PASSWORDS = _words(
    "manager managers policy policies reset resets field fields expiry expiration length strength hint hints "
    "rotation change changes requirement requirements rule rules form forms page link prompt box history "
    "protection hash hashes file files vault ticket tickets request requests email mail app tool generator "
)
# Symbols people put in passwords (a hyphen or an apostrophe alone makes an ordinary word).
_PASSWORD_SYMBOLS = frozenset("!@#$%^&*+=?~_|\\")
#: A value that is a reference to a secret in code, not the secret: os.environ["X"], getenv("X").
CODE_REFERENCE = re.compile(
    r"(?:os|process|env|config|settings|self|this|secrets|vault|System|ENV|Environment)[.\[]|[A-Za-z_][\w.]*\("
)
# Command lines: "curl -u user:pass", "mysql -pSecret".
_COMMAND_LINE = re.compile(
    r"(?:^|\s)(?:-u|--user)[ =]['\"]?[^\s:'\"]+:(?P<value>[^\s'\"]+)"
    r"|\b(?:mysql|mysqldump|mysqladmin)\b[^\n]*?\s-p(?P<mysql>[^\s'\"]{3,})"
)
_ENTROPY_TOKEN = re.compile(r"[A-Za-z0-9+/_\-.~]{16,}={0,2}")
_LONG_TOKEN = re.compile(r"[A-Za-z0-9+/=_\-]{20,}")
_HEX_TOKEN = re.compile(r"[0-9a-fA-F]{32,}")
_CODE_CONTEXT = re.compile(
    r"commit|sha|hash|revision|\brev\b|merge|cherry|rebase|checksum|digest|md5|build|fingerprint|\bref\b|diff"
    r"|blob|tree|tag|release|image|docker|\bpr\b|pull request",
)
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
    m = re.search(r"([a-z0-9]+)[\s_\-]*$", lower[max(0, start - 24) : start])
    return m.group(1) if m else ""


def _credential_kind(parts: list[str], previous: str) -> FindingKind | None:
    """PASSWORD or SECRET when the identifier names a credential; None for "passport", "keyboard", "pin it"."""
    joined = "".join(parts)
    if any(p in _PASSWORD_WORDS for p in parts) or joined in _PASSWORD_WORDS:
        return FindingKind.PASSWORD
    if any(p in _SECRET_WORDS for p in parts) or joined in _SECRET_WORDS:
        return FindingKind.SECRET
    chain = [previous, *parts]
    if any(q in _QUALIFIERS and n in _QUALIFIED for q, n in itertools.pairwise(chain)):
        return FindingKind.SECRET
    return None


def _plausible(value: str, strong: bool, kind: FindingKind, quoted: bool) -> bool:
    """Whether `value` is a credential rather than words about one."""
    lowered = value.lower().strip(_TRAILING)
    if not lowered or lowered in NON_VALUES or value.startswith(("$", "%", "{{", "<", "[", "(", "*", "//")):
        return False
    if CODE_REFERENCE.match(value):  # os.environ["DB_PASSWORD"], getenv("X"), process.env.TOKEN
        return False
    if set(lowered) <= set("*x\u2022.-_#"):
        return False
    if quoted:
        return len(value) >= 3
    if not value.isalpha():
        return len(value) >= 3 and any(c.isalnum() for c in value)
    # A bare word: a password (a pass-word!) if stated as one; never a "secret" or a "token".
    word_like = re.fullmatch(r"[a-z]+(?:ed|ing|ly|ion|ment|ness|able|ible)", lowered) is not None
    if kind is FindingKind.PASSWORD and not word_like:
        return len(value) >= 4
    return strong and len(value) >= 12 and character_classes(value) >= 2


def _value_after(text: str, lower: str, pos: int, kind: FindingKind) -> tuple[int, int] | None:
    """The value that follows a credential key at `pos`, if the link and the value make a statement."""
    link = _LINK.match(lower, pos)
    strong = link is not None and link.group("strong") is not None
    if link is None:
        bare = _BARE.match(lower, pos)  # "the passcode 7731 opens the door", "--password x"
        if bare is None:
            return None
        start = bare.end()
        bare_value = _VALUE.match(text, start)
        if bare_value is None or not any(c.isdigit() for c in bare_value.group()):
            return None
        if _FRACTION.fullmatch(bare_value.group().rstrip(_TRAILING)):
            return None  # "we pass 3/4 of the tests"
        kept = bare_value.group().rstrip(_TRAILING)
        return start, _digit_groups_end(text, start + len(kept), kept)
    start = link.end()
    if start < len(text) and text[start] in _QUOTES:
        close = text.find(_QUOTES[text[start]], start + 1)
        line_end = text.find("\n", start)
        if close != -1 and (line_end == -1 or close < line_end) and close > start + 1:
            quoted = text[start + 1 : close]
            return (start + 1, close) if _plausible(quoted, True, kind, True) else None
        start += 1
    match = _VALUE.match(text, start)
    if match is None or is_placeholder_at(text, start):
        return None
    value = match.group()
    if re.search(r"&\w+=", value):  # a URL query: the value ends at the next parameter
        value = value.split("&")[0]
    if link.group("strong") and link.group("strong").strip() == ">":
        value = value.split("</")[0] or value  # <password>X</password>: the value ends at the closing tag
    kept = value.rstrip(_TRAILING) or value
    kept = text[start : _digit_groups_end(text, start + len(kept), kept)]
    if not _plausible(kept, strong, kind, False):
        return None
    return start, start + len(kept)


def _digit_groups_end(text: str, end: int, value: str) -> int:
    if value.isdigit() and len(value) <= 4 and (groups := _DIGIT_GROUPS.match(text, end)):
        return groups.end()
    return end


def _password_shaped(token: str) -> bool:
    """Letters with digits or password symbols: what a password looks like when no link vouches for it."""
    if not 6 <= len(token) <= 64 or "/" in token or token.startswith(("$", "%", "{", "<", "[", "(", "#", "http")):
        return False
    if "@" in token and "." in token.rsplit("@", 1)[1]:
        return False  # an e-mail address
    has_letter = any(c.isalpha() for c in token)
    has_mark = any(c.isdigit() or c in _PASSWORD_SYMBOLS for c in token)
    return has_letter and has_mark and CODE_REFERENCE.match(token) is None


def _password_in_clause(text: str, lower: str, end: int) -> tuple[int, int] | None:
    """A value a few words after the password word, in the same sentence, when it is shaped like one.

    "the password I use everywhere is Summer2024", "I changed my password to Autumn#77", "my password
    is the same as before: Summer2024". Words alone never count here ("the password policy is strict").
    """
    following = re.match(r"[^\S\n]+([a-z]+)", lower[end : end + 24])
    if following is not None and following.group(1) in _ABOUT_PASSWORDS:
        return None
    stop = _SENTENCE_END.search(text, end, end + _CLAUSE_WINDOW)
    limit = stop.start() if stop else min(len(text), end + _CLAUSE_WINDOW)
    for link in _CLAUSE_LINK.finditer(lower, end, limit):
        value = _VALUE.match(text, link.end())
        if value is None or value.start() >= limit or is_placeholder_at(text, value.start()):
            continue
        token = value.group().rstrip(_TRAILING)
        if _password_shaped(token):
            return value.start(), value.start() + len(token)
    return None


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


def _qualified_after(lower: str, end: int) -> int | None:
    """ "code for the alarm", "code wifi", "codice di accesso": a qualifier in the few words after the key."""
    after = re.match(
        r"\s+(?:(?:for|to|of|on|di|de|del|da|du|do)\s+)?(?:(?:the|my|our|la|le|il|el|l')\s*)?([a-z]+)",
        lower[end : end + 40],
    )
    return end + after.end() if after is not None and after.group(1) in _QUALIFIERS else None


def _pair_after(text: str, lower: str, end: int) -> tuple[int, int] | None:
    """A "user / password" pair after a credential word and its link (or none: "creds bob / X1!"), as one span."""
    link = _LINK.match(lower, end)
    if link is not None:
        pair = _USER_AND_PASSWORD.match(text, link.end())
    else:
        bare = _BARE.match(lower, end)
        pair = _NAMED_USER_AND_PASSWORD.match(text, bare.end()) if bare else None
    return (pair.start(), pair.end()) if pair else None


def _password_statement(text: str, lower: str, end: int) -> Iterator[Hit]:
    """The value after a word that can only name a password, linked or a few words on."""
    span = _value_after(text, lower, end, FindingKind.PASSWORD)
    if span is None:
        span = _password_in_clause(text, lower, end)
    if span:
        yield hit(*span, FindingKind.PASSWORD, "context:credential")


def credential_statements(text: str) -> Iterator[Hit]:
    """Values stated for a credential key, in any format; random tokens near a credential word."""
    lower = text.lower()
    if len(lower) != len(text):  # a character whose lower case is longer would shift every offset
        lower = "".join(c if len(c.lower()) != 1 else c.lower() for c in text)
    seen: set[int] = set()
    rare = _RARE_PHRASES.finditer(lower) if any(w in lower for w in _RARE_PHRASE_GATES) else ()
    for m in itertools.chain(_MULTIWORD.finditer(lower), rare, _LEET_PASSWORD.finditer(lower)):
        if m.group() == "password":
            continue  # the plain word is the identifier path's, below
        seen.add(m.end())
        yield from _password_statement(text, lower, m.end())
    for m in () if lower.isascii() else _CJK_PASSWORD.finditer(lower):
        value = text[m.start("value") : m.end("value")].rstrip(_TRAILING)
        if _plausible(value, True, FindingKind.PASSWORD, False):
            yield hit(m.start("value"), m.start("value") + len(value), FindingKind.PASSWORD, "context:credential")
    for m in _STEMS.finditer(lower):
        start, end = _identifier_at(text, m.start(), m.end())
        if end in seen or inside_placeholder(text, m.start()) or text.endswith("</", 0, start):
            continue  # a closing tag names the element it closes, not a new value
        seen.add(end)
        parts, previous = _parts(text[start:end]), _previous_word(lower, start)
        kind = _credential_kind(parts, previous)
        if kind is None and parts[-1:] in _CODE_WORDS and (qualified_end := _qualified_after(lower, end)):
            kind, end = FindingKind.PASSWORD, qualified_end  # "the code for the alarm is 4471", "code wifi: x"
        if kind is None and _PAIR_ONLY_WORDS.intersection(parts):
            if pair := _pair_after(text, lower, end):
                yield hit(pair[0], pair[1], FindingKind.PASSWORD, "context:credential-pair")
            continue
        if kind is None or (parts == ["pass"] and previous in _NOT_A_PASSWORD_PASS):
            continue
        span = _value_after(text, lower, end, kind)
        if span:
            yield hit(*span, kind, "context:credential")
        elif pair := _pair_after(text, lower, end):
            yield hit(pair[0], pair[1], FindingKind.PASSWORD, "context:credential-pair")
        elif kind is FindingKind.PASSWORD and (clause := _password_in_clause(text, lower, end)):
            yield hit(*clause, FindingKind.PASSWORD, "context:credential-clause")
        yield from _entropy_near(text, start, end)
    for m in _COMMAND_LINE.finditer(text):
        group = "value" if m.group("value") else "mysql"
        yield hit(m.start(group), m.end(group), FindingKind.PASSWORD, "context:command-line")
    for m in _USER_SLASH_PASSWORD.finditer(lower):
        value = text[m.start("value") : m.end("value")].rstrip(_TRAILING)
        if _plausible(value, False, FindingKind.PASSWORD, False) and any(c.isdigit() for c in value):
            yield hit(m.start("value"), m.start("value") + len(value), FindingKind.PASSWORD, "context:user-password")


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


def random_tokens(text: str) -> Iterator[Hit]:
    """Long random tokens anywhere; hex digests survive where the text is about code (commit SHAs)."""
    for m in _LONG_TOKEN.finditer(text):
        token = m.group()
        if m.start() and (text[m.start() - 1].isalnum() or text[m.start() - 1] in "+/=_-"):
            continue
        if re.fullmatch(r"[0-9a-fA-F]+", token):
            continue  # judged below, with its context
        varied = any(c.isdigit() for c in token) and any(c.isalpha() for c in token)
        if varied and shannon_entropy(token) > 4.0:
            yield hit(m.start(), m.end(), FindingKind.SECRET, "entropy:token")
    for m in _HEX_TOKEN.finditer(text):
        token = m.group()
        if (m.start() and text[m.start() - 1].isalnum()) or (m.end() < len(text) and text[m.end()].isalnum()):
            continue
        if shannon_entropy(token) <= 3.0:
            continue
        context = text[max(0, m.start() - 50) : m.start()].lower()
        if len(token) in (40, 64) and _CODE_CONTEXT.search(context) and not _STEMS.search(context):
            continue
        yield hit(m.start(), m.end(), FindingKind.SECRET, "entropy:hex")


_PASSPHRASE = re.compile(
    r"(?:pass ?phrase|recovery phrase|seed phrase|mnemonic|secret phrase)s?\s*(?:is|was|=|:)\s*(?P<value>[^.\n]+)"
)


def passphrases(text: str) -> Iterator[Hit]:
    """A passphrase has spaces: it runs to the end of the sentence."""
    lower = text.lower()
    if "phrase" in lower or "mnemonic" in lower:
        for m in _PASSPHRASE.finditer(lower):
            if not is_placeholder_at(text, m.start("value")):
                yield hit(m.start("value"), m.end("value"), FindingKind.PASSWORD, "context:passphrase")
