"""The value stated for a credential word: where it starts, where it ends, and whether it is one.

`credentials` finds the words ("password", "api key", "PIN", "mot de passe"...); this module reads
what follows them. A value is linked ("password: X", "the PIN is 4471", "<pwd>X</pwd>"), bare with
digits ("passcode 7731"), below a form's label, or a few words on in the same sentence when it is
shaped like a password ("the password I use everywhere is Summer2024"). Words about a credential
("the password is required", "token: expired", ``${DB_PASSWORD}``) are not values.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from services.common.pii.credential_words import COMMON_PASSWORDS, DIGIT_NAMES
from services.common.pii.model import FindingKind, Hit, character_classes, hit, is_placeholder_at


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


# Between the key and its value: closing quotes/brackets, "for the guest wifi", "(prod)", then the link.
# A dash links only before a space ("pw- X", "pin - 7316"); glued to both sides it joins a word ("pass-through").
LINK = re.compile(
    r"[\"'`\]\)*]*\s*(?:\([^)\n]{0,30}\)\s*)?"
    r"(?:(?:for|of|to|on|at|de|du|des|fur|del|da|di|do|dos|das|der|vom|zum|zur|van|voor|pour|para|per)\s+"
    r"(?:[\w.@'\-]+(?:\s+|(?=\s*[:=]))){0,3}?)?"
    r"(?:(?:number|no\.?|code|nummer|numero|word)\s+)?"
    r"(?:(?P<strong>(?:(?::=|=>|->|==|=|:|>|[\u2192\u21d2\u27f6\u279c\u27a1\U0001f449]|[\-\u2013\u2014]{1,2}(?=\s))"
    r"\**"  # "**Password:** X": Markdown's bold closes after the colon
    # "<td>Password</td><td>X</td>", "<b>Password</b>: X", "<dt>Password</dt><dd>X</dd>": an element's end
    r"|(?:</(?:td|th|dt|b|strong|label|span|em|i)>\s*)+:?\s*(?:<(?:td|dd|span|b|strong|em|i|code)\b[^>\n]{0,80}>\s*)*"
    r")\s*"
    r"(?:(?:it['\u2019]?s|it is|that['\u2019]?s|that is)\s+)?"  # "the password: it's X"
    r"|['\u2019]s\s+|\?\s+(?:it['\u2019]?s|it is|that['\u2019]?s)\s+)"
    r"|(?P<prose>(?:ist jetzt|ist nun|ist noch|lautet jetzt|est maintenant|est toujours|es ahora|e ora|is nu"
    r"|is currently|is temporarily|is now|is still|is|was|will be|has been changed to|changed to|set to|reset to"
    r"|are|est|etait"
    r"|sera|ist|lautet|war|wird|es|era|e|sono|jest|je|ar|er|wordt|reads|remains)\s+))"
)

# "Password (case-sensitive) BlueMoon!88": a remark in brackets may stand between a word and its value.
BARE = re.compile(r"[ \t]+(?:\([^)\n]{0,30}\)[ \t]+)?")

_QUOTES = {'"': '"', "'": "'", "`": "`", "\u201c": "\u201d", "\u2018": "\u2019", "\u00ab": "\u00bb", "\u201e": "\u201c"}

TRAILING = ".,;:)]}\"'\u201d\u2019\u00bb>"


def value_of(text: str, m: re.Match[str], group: str = "value") -> tuple[int, str]:
    """Where a match's value starts, and the value without the marks that close its sentence."""
    start = m.start(group)
    return start, text[start : m.end(group)].rstrip(TRAILING)


def password_at(text: str, start: int, value: str, detector: str) -> Iterator[Hit]:
    """The value as a password, unless redaction's own placeholder stands there."""
    if not is_placeholder_at(text, start):
        yield hit(start, start + len(value), FindingKind.PASSWORD, detector)


# More values after a plural word's first: "backup codes 1234 5678, 9012 3456".
_LIST_ITEM = re.compile(r"[,;]?\s+(?:and\s+)?(?P<item>[A-Za-z0-9\-]{4,40})(?![\w\-])")

# Values that say something about a credential rather than being one.
NON_VALUES = _words(
    "a an the this that these those it its my your our their his her is are was be been being not no none "
    "null nil true false yes on off n/a na tbd todo unknown empty blank same below above attached "
    "enclosed here there required needed mandatory optional wrong invalid incorrect correct valid expired "
    "weak strong secure insecure long short new old different fine ok okay good bad simple easy hard safe "
    "unsafe temporary case too very still now also only just stored kept saved written in at for from "
    "with by to of about and or but if when what which who please see ask check use send sent shared set reset "
    "changed rotated revoked hidden masked redacted encrypted hashed protected missing pending available "
    "included inside outside ready coming needs must should will can le la les un une der die das ein "
    "eine el los las nicht pas nao niet geen non sera ist est es open closed locked unlocked "
    "abgelaufen falsch richtig geandert ungultig gultig neu erforderlich notwendig gesperrt vergessen "
    "expire requis obligatoire change oublie bloque caducado caducada incorrecta obligatorio olvidada "
    "verlopen onjuist verplicht vergeten scaduta errata obbligatoria expirada incorreta obrigatoria "
)

# A sentence about a password, not one made of words, holds one of these: "Password: sent to you by SMS",
# "the password is taped under the router". Adjectives a passphrase may hold ("correct horse") are left out.
NOT_IN_A_PASSPHRASE = (
    NON_VALUES - _words("correct strong long short new old different fine good bad simple easy hard safe")
) | _words(
    "about across after against along among around as because before behind beneath beside between beyond "
    "during except into like near onto out over past since than through till toward towards under until up upon "
    "via within without i me we us you he him she they them one ones all any each every some more most less few "
    "many much do does did done has have had get gets got go goes went let make made need know want try contact "
    "click call expires follow following update updated provided given printed taped stuck listed shown "
    "displayed emailed texted posted noted managed handled generated random auto automatically where how why "
    "yet so then again already soon later today tomorrow yesterday same usual always never"
)

# A value is one run of non-space characters. Bounded: a run of "password=password=..." is read once per
# stem, so an unbounded run made 32 KB of it cost 1.3 s (a 4 KB password is none, and random_tokens reads
# a long token whole).
VALUE = re.compile(r"\S{1,4096}")

_FRACTION = re.compile(r"\d+/\d+")
# Digits read out as words, four to eight of them.
_DIGIT_NAME = "(?:" + "|".join(DIGIT_NAMES) + ")"
_SPOKEN_DIGITS = re.compile(rf"(?:{_DIGIT_NAME}[ ,\-]+){{3,7}}{_DIGIT_NAME}\b")
# Inline elements around a value in HTML mail: "<b>", "<span style=...>", "<code>".
_INLINE_TAGS = re.compile(r"(?:<(?:b|strong|i|em|u|code|tt|kbd|samp|span|font|mark)\b[^<>\n]{0,200}>[ \t]*){1,4}", re.I)
# A key written in groups of four, as authenticator set-up pages and licence cards print it.
_KEY_GROUPS = re.compile(r"[A-Za-z0-9]{4}(?: [A-Za-z0-9]{4}){2,15}(?![\w\-])")
# "2FA: 118 224", "PIN 1234 5678": a short run of digits continues in groups.
_APP_PASSWORD = re.compile(r"[a-z]{4}(?: [a-z]{4}){3}(?![\w\-])")
_DIGIT_GROUPS = re.compile(r"(?:[ \-]\d{2,4}){1,3}(?!\w)")
# "The PIN is 4 4 7 1": a code read out digit by digit.
_SPELT_DIGITS = re.compile(r"(?: \d){3,7}(?!\w)")

# Links a few words after a password word can still make: "... I use everywhere is X", "changed my password to X".
# "is" in the languages whose password words `credentials` reads: "kata sandi adalah X", "mật khẩu là X".
_CLAUSE_LINK = re.compile(
    r"(?:\b(?:is|was|to|as|be|are|remains|reads|adalah|ialah|la|este|jest|ist|est|es|e|er|ar|on|je)\b|:|=|->|=>"
    r"|\b(?:it|that)['\u2019]s\b"
    r"|(?<=\s)(?:--|\u2013|\u2014)(?=\s))"
    r"[^\S\n]*['\"`\u201c\u2018]?"
)

_SENTENCE_END = re.compile(r"[.!?](?:\s|$)|\n")

_CLAUSE_WINDOW = 80
_NUMERIC_VALUE = re.compile(r"\d{4,12}")
# The links after which digits are a number's new value: "changed the PIN to 4471", not "expires on 2027".
_NUMERIC_LINKS = _words("is was to : = -> =>")

# Nouns that make "password X" a thing about passwords, whose own value the clause would be:
# "the password manager is 1Password", "the password reset ticket is INC-20391".
ABOUT_PASSWORDS = _words(
    "manager managers policy policies reset resets field fields expiry expiration length strength hint hints "
    "rotation change changes requirement requirements rule rules form forms page link prompt box history "
    "protection hash hashes file files vault ticket tickets request requests email mail app tool generator "
)

# Symbols people put in passwords (a hyphen or an apostrophe alone makes an ordinary word).
PASSWORD_SYMBOLS = frozenset("!@#$%^&*+=?~_|\\")

#: A value that is a reference to a secret in code, not the secret: os.environ["X"], getenv("X").
CODE_REFERENCE = re.compile(
    r"(?:os|process|env|config|settings|self|this|secrets|vault|System|ENV|Environment|var|local|data|module)[.\[]"
    r"|[A-Za-z_][\w.]*\("
)


#: A documentation's blank where a value goes: "YOUR_API_KEY", "your-token-here", "sk_test_...", "xxxx".
# (And a key's format filled with one character, as documentation shows it: "ghp_xxxx…", "AKIAXXXX…".)
TEMPLATE_BLANK = re.compile(
    r"^(?:your|my)[_\-]|[_\-]here$|(?:\.\.\.|\u2026)`?$|^x{4,}$|([x0*.\u2022])\1{11,}", re.IGNORECASE
)


_A_PATH = re.compile(r"(?:/|~/|\./)[\w.\-]+(?:/[\w.\-]+)+/?")
#: A parameter's type, where code names a credential: "def check(password: str)".
TYPE_NAMES = frozenset({"str", "string", "bytes", "int", "bool", "secretstr", "optional[str]", "str | none"})
# A host after a user's blank: "https://<user>:<token>@git.example.com/…".
_A_HOST = re.compile(r"@[\w\-]+(?:\.[\w\-]+)+(?:[/:]\S*)?")


def plausible(value: str, strong: bool, kind: FindingKind, quoted: bool) -> bool:
    """Whether `value` is a credential rather than words about one."""
    lowered = value.lower().strip(TRAILING)
    if not lowered or lowered in NON_VALUES or value.startswith(("$", "%", "{{", "<", "[", "(", "*", "//", "-----")):
        return False
    if CODE_REFERENCE.match(value):  # os.environ["DB_PASSWORD"], getenv("X"), process.env.TOKEN
        return False
    if _A_PATH.fullmatch(value) or lowered in TYPE_NAMES or _A_HOST.fullmatch(value):
        return False  # "/run/secrets/db_password": where a secret is kept; "password: str": a parameter's type
    if TEMPLATE_BLANK.search(value):  # "YOUR_API_KEY", "sk_test_...", "<token>": a blank to fill in
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


_CLOSING_TAG = re.compile(r"</[A-Za-z]")


def value_after(text: str, lower: str, pos: int, kind: FindingKind) -> tuple[int, int] | None:
    """The value that follows a credential key at `pos`, if the link and the value make a statement."""
    link = LINK.match(lower, pos)
    strong = link is not None and link.group("strong") is not None
    if link is None:
        bare = BARE.match(lower, pos)  # "the passcode 7731 opens the door", "--password x"
        if bare is None:
            return None
        start = bare.end()
        bare_value = VALUE.match(text, start)
        if bare_value is None:
            return None
        if not any(c.isdigit() for c in bare_value.group()):
            if kind is not FindingKind.PASSWORD or bare_value.group().rstrip(TRAILING).lower() not in COMMON_PASSWORDS:
                return None  # "password manager", "password reset"; but "password qwerty"
            return start, start + len(bare_value.group().rstrip(TRAILING))
        if _FRACTION.fullmatch(bare_value.group().rstrip(TRAILING)):
            return None  # "we pass 3/4 of the tests"
        if bare_value.group().rstrip(TRAILING).isdigit() and len(bare_value.group().rstrip(TRAILING)) < 3:
            return None  # "pin 13 of the Arduino", "pass 2 of 3": no code is that short (a card's is three)
        kept = bare_value.group()
        kept = (kept.split("</")[0] or kept) if _CLOSING_TAG.search(kept) else kept
        kept = kept.rstrip(TRAILING)
        if "(" in bare.group() and not (password_shaped(kept) or _NUMERIC_VALUE.fullmatch(kept)):
            return None  # "Password (optional) 12 chars": after a remark, only what looks like one
        return start, _digit_groups_end(text, start + len(kept), kept)
    start = link.end()
    if "=" in lower[pos:start] and "\n" in lower[pos:start]:
        return None  # "DB_PASSWORD=\nREDIS_PASSWORD=": an empty assignment; the next line is its own
    if start < len(text) and text[start] in _QUOTES:
        close = text.find(_QUOTES[text[start]], start + 1)
        line_end = text.find("\n", start)
        if close != -1 and (line_end == -1 or close < line_end) and close > start + 1:
            quoted = text[start + 1 : close]
            return (start + 1, close) if plausible(quoted, True, kind, True) else None
        start += 1
    if (groups := _KEY_GROUPS.match(text, start)) and any(c.isdigit() for c in groups.group()):
        return start, groups.end()  # "secret key: JBSW Y3DP EHPK 3PXP", as authenticator apps show it
    if kind is FindingKind.PASSWORD and (app := _APP_PASSWORD.match(text, start)):
        return start, app.end()  # "xmvb vfce ttie eold": an app password, as Google prints it
    if spoken := _SPOKEN_DIGITS.match(lower, start):
        return start, spoken.end()  # "PIN: one two three four"
    if tags := _INLINE_TAGS.match(text, start):
        start = tags.end()  # "Password: <b>X</b>": the value is the element's text (serving keeps HTML)
    match = VALUE.match(text, start)
    if match is None or is_placeholder_at(text, start):
        return None
    value = match.group()
    if re.search(r"&\w+=", value):  # a URL query: the value ends at the next parameter
        value = value.split("&")[0]
    if _CLOSING_TAG.search(value):
        value = value.split("</")[0] or value  # <password>X</password>, "<p>API key: X</p>": it ends at the tag
    kept = value.rstrip(TRAILING) or value
    kept = text[start : _digit_groups_end(text, start + len(kept), kept)]
    # "est incorrect</p>" says something about the password; a value glued to a tag is judged without
    # the tag, and redacted with it (detect-secrets reads the tag as part of the value too).
    if not plausible(kept.split("</")[0] or kept, strong, kind, False):
        return None
    return start, start + len(kept)


def _digit_groups_end(text: str, end: int, value: str) -> int:
    if value.isdigit() and len(value) == 1 and (digits := _SPELT_DIGITS.match(text, end)):
        return digits.end()
    if value.isdigit() and len(value) <= 4 and (groups := _DIGIT_GROUPS.match(text, end)):
        return groups.end()
    return end


def value_below(text: str, start: int, end: int) -> tuple[int, int] | None:
    """A form's label alone on its line ("PASSWORD", "Password:") and the value alone on the next."""
    line_start = text.rfind("\n", 0, start) + 1
    line_end = text.find("\n", end)
    if line_end == -1 or text[line_start:start].strip() or text[end:line_end].strip() not in ("", ":"):
        return None
    if text.startswith("\n", line_end + 1) or text.startswith("\r\n", line_end + 1):
        line_end = text.find("\n", line_end + 1)  # one blank line between the label and its value
    next_end = text.find("\n", line_end + 1)
    below = text[line_end + 1 : next_end if next_end != -1 else len(text)]
    value = below.strip()
    if not value or " " in value or is_placeholder_at(text, line_end + 1 + below.index(value)):
        return None
    kept = value.rstrip(TRAILING) or value
    if not (password_shaped(kept) or (kept.isdigit() and len(kept) >= 4)):
        return None  # a bare word under a label is as often the form's next label
    value_start = line_end + 1 + below.index(value)
    return value_start, value_start + len(kept)


def list_end(text: str, end: int) -> int:
    """The end of a list of values like the first: each further item has a digit."""
    for _ in range(12):
        item = _LIST_ITEM.match(text, end)
        if item is None or not any(c.isdigit() for c in item.group("item")):
            break
        end = item.end()
    return end


def password_shaped(token: str) -> bool:
    """Letters with digits or password symbols: what a password looks like when no link vouches for it."""
    if not 6 <= len(token) <= 64 or "/" in token or token.startswith(("$", "%", "{", "<", "[", "(", "#", "http")):
        return False
    if "@" in token and "." in token.rsplit("@", 1)[1]:
        return False  # an e-mail address
    has_letter = any(c.isalpha() for c in token)
    has_mark = any(c.isdigit() or c in PASSWORD_SYMBOLS for c in token)
    return has_letter and has_mark and CODE_REFERENCE.match(token) is None


# A generated passphrase: three or more words joined by a dash, dot or underscore, with a number at
# either end ("purple-otter-violin-42"); a product's or a library's name has one or two ("vue3-beta").
_JOINED_WORDS = re.compile(r"(?:\d{1,4}[\-._])?[^\W\d_]{3,}(?:[\-._][^\W\d_]{3,}){2,}(?:[\-._]?\d{1,4})?")


def strongly_password_shaped(token: str) -> bool:
    """Shaped like a password with a password's symbol, with upper case, lower case and digits, or as a
    generated passphrase: what a value must look like when no word about secrets is near it ("use React /
    Vue3-beta" is no password)."""
    if not password_shaped(token):
        return False
    if any(c in PASSWORD_SYMBOLS for c in token):
        return True
    if _JOINED_WORDS.fullmatch(token) and token[0].isdigit() != token[-1].isdigit():
        return True
    return any(c.isupper() for c in token) and any(c.islower() for c in token) and any(c.isdigit() for c in token)


#: A word for a secret that is a number, named before a value: "PIN", "passcode", "door code", "combination".
NAMED_NUMBER = re.compile(r"\bpin\b|passcode|\bcode\b|\bcombination\b")


def password_or_number(token: str, numeric: bool) -> bool:
    """Shaped like a password, or (``numeric``: a word for a number named it) four to twelve digits."""
    if TEMPLATE_BLANK.search(token):
        return False
    return password_shaped(token) or (numeric and _NUMERIC_VALUE.fullmatch(token) is not None)


def password_in_clause(text: str, lower: str, end: int, numeric: bool = False) -> tuple[int, int] | None:
    """A value a few words after the password word, in the same sentence, when it is shaped like one.

    "the password I use everywhere is Summer2024", "I changed my password to Autumn#77", "my password
    is the same as before: Summer2024". Words alone never count here ("the password policy is strict").
    After a word for a number ("PIN", "passcode", "door code"), four to twelve digits are shaped like
    one: "I set the new passcode to 246810".
    """
    following = re.match(r"[^\S\n]+([a-z]+)", lower[end : end + 24])
    stop = _SENTENCE_END.search(text, end, end + _CLAUSE_WINDOW)
    limit = stop.start() if stop else min(len(text), end + _CLAUSE_WINDOW)
    if following is not None and following.group(1) in _HINTS:
        return _shaped_in(text, end, limit)  # "password hint: my dog's name + year (Rex2019)": the hint gives it away
    if following is not None and following.group(1) in ABOUT_PASSWORDS:
        return None
    if (set_off := _set_off(text, end, limit, numeric)) is not None:
        return set_off
    for link in _CLAUSE_LINK.finditer(lower, end, limit):
        value = VALUE.match(text, link.end())
        if value is not None and value.group().lower() in _STILL:
            value = VALUE.match(text, value.end() + 1)  # "hasn't changed: still Netgear-4421"
        if value is None or value.start() >= limit or is_placeholder_at(text, value.start()):
            continue
        token = value.group().split("</")[0].rstrip(TRAILING)  # "X</p>": the value ends at a closing tag
        numeric_value = numeric and link.group().strip(" \t'\"`\u201c\u2018") in _NUMERIC_LINKS
        if password_or_number(token, numeric_value):
            return value.start(), value.start() + len(token)
        if link.group().strip(" \t'\"`\u201c\u2018").isalpha() and (  # "is the same as the wifi, Bluebird77"
            apposition := _APPOSITION.search(text, value.end(), limit)
        ):
            token = apposition.group("value").rstrip(TRAILING)
            if password_shaped(token):
                return apposition.start("value"), apposition.start("value") + len(token)
    return None


# Words that say a value stands, before the value: "… hasn't changed: still Netgear-4421".
_STILL = _words("still again")
# A value set off between commas right after its word: "his banking PIN, 4 4 2 1, is on a post-it".
_BETWEEN_COMMAS = re.compile(r",[^\S\n]*(?P<value>[^,\n]{1,40}?)[^\S\n]*,")


# The words a value may be set off after: a plain credential word, not an identifier that holds one
# ("formatted_passphrase, formatted_passphrase_label," is a list of fields).
_SET_OFF_AFTER = re.compile(r"(?<![\w\-])(?:pin|password|passcode|passphrase|pwd|pw|code|combination|combo)\Z")


def _set_off(text: str, end: int, limit: int, numeric: bool) -> tuple[int, int] | None:
    if _SET_OFF_AFTER.search(text[max(0, end - 12) : end].lower()) is None:
        return None
    commas = _BETWEEN_COMMAS.match(text, end, limit)
    if commas is None or is_placeholder_at(text, commas.start("value")):
        return None
    value = commas.group("value")
    # "4 4 2 1": a digit, then the digits spelt after it as `value_after` reads them
    spelt = numeric and value[:1].isdigit() and _SPELT_DIGITS.fullmatch(value, 1) is not None
    one_token = not any(c.isspace() for c in value) and any(c.isdigit() for c in value)
    if spelt or (one_token and (password_or_number(value, numeric) or strongly_password_shaped(value))):
        return commas.start("value"), commas.end("value")
    return None


# A value set off after the words about it: "the same as the wifi, Bluebird77", "as before: Summer2024".
_APPOSITION = re.compile(r"[,:;(][^\S\n]*[\"'`\u201c\u2018]?(?P<value>[^\s\"'`\u201d\u2019]+)")
_HINTS = _words("hint hints reminder")


def _shaped_in(text: str, start: int, limit: int) -> tuple[int, int] | None:
    """The first token between start and limit shaped like a password."""
    for token in re.finditer(r"[^\s()\[\]\"'`]+", text[start:limit]):
        kept = token.group().rstrip(TRAILING)
        if password_shaped(kept):
            return start + token.start(), start + token.start() + len(kept)
    return None


# "Use Pineapple$42 as the password", "Summer2024! is my password", "Orchid#2026 - router password": the
# value written before the word.
_VALUE_THEN_PASSWORD_WORD = re.compile(
    r"(?<![^\s\"'`(])(?P<value>[^\s\"'`(\[]{6,64})[\"'`\u201d\u2019]?[^\S\n]+"
    r"(?:(?:is|was|as|will be|becomes|is still|is now|=|ist|est|es|e|sera|[\-\u2013\u2014]{1,2}|<-{1,2}|\u2190)[^\S\n]+"
    r"(?:(?:that['\u2019]?s|this is|it['\u2019]?s)[^\S\n]+)?"  # "Gr8Scott! <- that's the pw"
    # "Orchid#2026 (that's the new wifi password)", "Tiger#2020 yesterday (the VPN password)"
    r"|(?:[a-z]+[^\S\n]+)?\((?:(?:that['\u2019]?s|that is|this is|which is|it['\u2019]?s|aka)[^\S\n]+)?)"
    r"(?:(?:the|my|our|your|his|her|their|a|an|new|current|temporary|default|mein|meine|unser|unsere|das|le|la"
    r"|mon|ma|notre|mi|el|nuestra|il|mio|mia)[^\S\n]+){0,3}(?:[\w\-]+[^\S\n]+){0,2}$"
)


def password_before(text: str, lower: str, start: int, end: int) -> tuple[int, int] | None:
    """A password-shaped value just before the password word that names it, in the same line."""
    following = re.match(r"[^\S\n]+([a-z]+)", lower[end : end + 24])
    if following is not None and following.group(1) in ABOUT_PASSWORDS:
        return None  # "Summer2024 is the password policy's example"
    window = max(0, start - _CLAUSE_WINDOW)
    m = _VALUE_THEN_PASSWORD_WORD.search(lower, window, start)
    if m is None:
        return None
    token = text[m.start("value") : m.end("value")].rstrip(TRAILING)
    if not password_shaped(token):
        return None
    return m.start("value"), m.start("value") + len(token)
