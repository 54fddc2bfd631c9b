"""Passwords a sentence hands over by what they open, or by how they stand to another value, with no
credential word before them:

* what a value gets you into: "unlock with Hunter-Orbit-19", "you'll need Falcon&Ridge7 for the admin
  panel", "the key for the shared drive is plum-velvet-31";
* a wireless network named alone, then its key: "the wifi at the cabin is 'pinecone-lake-88'";
* a user name stated, then its password as "it": "the login is priya.k and it's Sunflower#12";
* a credential replaced or kept, named by neither word: "set the new one to Blueberry2026!",
  "it's Kestrel77, same as always", or kept for every login: "I use Kestrel77 for all my accounts";
* a key's emoji as the label: "🔑 Tulip!2027".

None of these phrases says "password", so the value must look like one: letters with digits or a
password's symbol (`password_shaped`), and where the phrase is common in ordinary mail ("log in
with", "need … for the portal", "the login is … and it's") also mixed case or a symbol
(`strongly_password_shaped`): "sign in with Google", "you need Node for the dashboard" are no secrets.
Each phrase is read only after the word that starts it (`after_words`), so mail without those
words pays a few `str.find` calls.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable, Iterator

from services.common.pii.model import Hit, after_words
from services.common.pii.password_rules import rule_shaped
from services.common.pii.stated_values import (
    ABOUT_PASSWORDS,
    PASSWORD_SYMBOLS,
    password_at,
    password_shaped,
    strongly_password_shaped,
    value_of,
)

_OPEN_QUOTE = "[\"'`\u201c\u2018]?"
_VALUE = rf"{_OPEN_QUOTE}(?P<value>[^\s\"'`\u201d\u2019]+)"
_SP = r"[^\S\n]+"

# "unlock with X", "unlocks it using X", "log in with X", "get in with X".
_IN_WITH = re.compile(
    rf"(?:s|ed)?(?:{_SP}(?:it|them|(?:the|my|your|our){_SP}[a-z\-]+))?{_SP}(?:with|using){_SP}{_VALUE}"
)
_IN_WITH_WORDS = ("unlock", "log in", "log-in", "sign in", "sign-in", "get in")

# What a value is needed for when it opens something: "… for the admin panel", "… to log in".
_ACCESS_NOUNS = (
    r"admin|login|log[ \-]?in|sign[ \-]?in|access|get[^\S\n]+in(?:to)?|unlock|portal|panel|vpn|wi-?fi"
    r"|account|console|dashboard|router|nas|door|gate|safe|laptop|shared[^\S\n]+drive|vault|alarm"
)
# "… for the new laptop image": the noun names a thing made for it, not what the value opens.
_NOT_ACCESS = r"images?|models?|versions?|builds?|updates?|upgrades?|setup|installs?|installers?|drivers?|apps?|themes?"
_NEED_FOR = re.compile(
    rf"{_SP}{_VALUE}[\"'`\u201d\u2019]?{_SP}(?:for|to){_SP}(?:(?:the|my|your|our){_SP})?(?:[a-z\-]+{_SP})?"
    rf"(?:{_ACCESS_NOUNS})\b(?!{_SP}(?:{_NOT_ACCESS}))"
)
_NEED_WORDS = ("need", "needs", "require", "requires")

# "the key for the shared drive is X", "key to the lockbox: X" (the English "key" alone is a word of
# every kind of mail: "the key to success is …"; only a password-shaped value makes it a secret).
_KEY_FOR = re.compile(
    rf"{_SP}(?:for|to){_SP}(?:the|my|our|your){_SP}(?:[\w\-]+{_SP}){{0,2}}?[\w\-]+"
    rf"(?:[^\S\n]*[:=]|{_SP}is|['\u2019]s){_SP}?{_VALUE}"
)

# "the wifi at the cabin is X", "wifi: X", "the hotspot's X": a network named alone, then its key.
_NETWORK_ALONE = re.compile(
    rf"(?:{_SP}(?:upstairs|downstairs|here|there))?(?:{_SP}(?:at|in|for|on|of){_SP}[^\n:=.,;!?]{{1,30}}?)?"
    rf"(?:[^\S\n]*[:=]|{_SP}is(?:{_SP}now)?|['\u2019]s){_SP}?{_VALUE}"
)
_NETWORK_WORDS = ("wifi", "wi-fi", "wlan", "hotspot")
# A network's speed, band or standard, or a name that the same line then gives a key for.
_NETWORK_FACT = re.compile(
    r"\d+(?:[.,]\d+)?(?:g|ghz|mhz|mbps|gbps|kbps|mbit|gbit|mb|gb)(?:/s)?|802\.11\w*|wpa\d?|wep|2\.4|5g\w*",
    re.IGNORECASE,
)
_NAMES_THE_NETWORK = re.compile(r"\b(?:name|ssid|called|named|network)\b")
_KEY_LATER = re.compile(r"\b(?:key|psk|pass(?:word|phrase|code)?|pw|pwd)\b")

# "the login is priya.k and it's X", "username: bob, it's X", "my bank login is my email and X".
_IT_IS = rf"(?:it['\u2019]s|it{_SP}is|the{_SP}other(?:{_SP}one)?{_SP}is|the{_SP}pass(?:word)?{_SP}is)[^\S\n]*:?{_SP}?"
_LOGIN_THEN_IT = re.compile(
    rf"(?:{_SP}(?:name|id))?(?:[^\S\n]*[:=]|{_SP}is){_SP}?(?:my{_SP}(?:e-?mail|email{_SP}address|phone{_SP}number)"
    rf"|[\w.@+\-]+)[,;]?{_SP}(?:(?:and|with|plus|/){_SP}(?:{_IT_IS})?|{_IT_IS})"
    rf"{_VALUE}"
)
_LOGIN_WORDS = ("login", "log-in", "username", "user name", "user", "user id", "apple", "account", "email", "e-mail")

# "set the new one to X", "changed mine to X".
_REPLACED_TO = re.compile(rf"{_SP}(?:the{_SP}new{_SP}one|mine|the{_SP}new{_SP}code){_SP}to[^\S\n]*:?{_SP}?{_VALUE}")
_REPLACED_WORDS = ("set", "changed", "change", "reset", "updated", "update", "switched")

# "it's Kestrel77, same as always", "still X - same as before".
_SAME_AS_ALWAYS = re.compile(
    rf"(?:['\u2019]s|{_SP}is|{_SP}was|(?<=still))(?:{_SP}still)?{_SP}{_OPEN_QUOTE}(?P<value>[^\s\"'`\u201d\u2019,;]+)[\"'`\u201d\u2019]?"
    rf"[^\S\n]*(?:[,;(]|[\-\u2013\u2014]{{1,2}})?[^\S\n]*(?:the{_SP})?same{_SP}as{_SP}"
    rf"(?:always|ever|before|usual|last{_SP}time|the{_SP}old{_SP}one)\b"
)
_SAME_WORDS = ("it", "that", "still")

# "use X for all my accounts", "I use Tulip!27 for everything": one password kept for every login.
_FOR_EVERY_LOGIN = (
    rf"(?:all{_SP}(?:my{_SP}|of{_SP}my{_SP})?|every{_SP})(?:accounts?|logins?|sites?|services?|apps?|passwords?)"
)
_USED_FOR_ALL = re.compile(
    rf"{_SP}{_VALUE}[\"'`\u201d\u2019]?{_SP}(?:for|on|as){_SP}"
    rf"(?P<scope>everything|{_FOR_EVERY_LOGIN}|all{_SP}of{_SP}them)\b"
)
_USE_WORDS = ("use", "uses", "used", "using", "reuse", "reused")


def _used_for_all(value: str, _lower: str, m: re.Match[str]) -> bool:
    """For every login, any password's shape; for "everything", a password's symbol and a digit too, or
    what a password rule asks for ("I use Python3 for everything" and "Office365" name tools, "use
    @samp{-s} for everything" an option; "I always use Sunshine88 for everything" a password)."""
    if m.group("scope") == "everything":
        symbol, digit = any(c in PASSWORD_SYMBOLS for c in value), any(c.isdigit() for c in value)
        return (password_shaped(value) and symbol and digit) or rule_shaped(value)
    return password_shaped(value)


def _with_digit(value: str) -> bool:
    return password_shaped(value) and any(c.isdigit() for c in value)


def _network_key(value: str, lower: str, m: re.Match[str]) -> bool:
    if not password_shaped(value) or _NETWORK_FACT.fullmatch(value) is not None:
        return False
    line_end = lower.find("\n", m.end())
    rest_of_line = lower[m.end() : line_end if line_end != -1 else len(lower)]
    # "the wifi network is Cabin_5G, key X": the first value is the network's name
    return _NAMES_THE_NETWORK.search(m.group()) is None and _KEY_LATER.search(rest_of_line) is None


# "set it to Qwerty!123 for now", "changed it to X": "it" is any setting ("set it to UTC+2"), so the value
# must look like what a password rule asks for (`rule_shaped`).
_IT_TO = re.compile(rf"{_SP}it{_SP}to[^\S\n]*:?{_SP}?{_VALUE}")

# "Remember: X opens everything", "X unlocks all the doors": a value named by what it opens, before it.
_OPENED = (
    rf"everything|every(?:thing|{_SP}(?:door|lock|account))|all{_SP}(?:of{_SP})?(?:the|my|our|them)\b"
    rf"|(?:the|my|our|your){_SP}(?:[a-z]+{_SP})?(?:doors?|safe|vault|locks?|locker|gate|garage|house|office|laptop"
    r"|phone|accounts?|wallet|box|cabinet|drive|building)\b"
)
_VALUE_THEN_OPENS = re.compile(
    rf"(?<![^\s\"'`(:])(?P<value>[^\s\"'`(\[]{{6,64}})[\"'`\u201d\u2019]?{_SP}"
    rf"(?:opens|unlocks|will{_SP}(?:open|unlock)|gets{_SP}you{_SP}into|works{_SP}(?:for|on)){_SP}(?:{_OPENED})"
)


# "it's Hunter3 not Hunter2", "changed it from Kestrel76 to Kestrel77": a value corrected or replaced by a
# near copy of itself, which is how passwords change; both are the secret's. A version moves on the same
# way ("from node18 to node20"), so a replacement is read only after a verb that changes a credential.
_CORRECTION_WORDS = ("it's", "it\u2019s", "it is", "it was", "should be", "meant", "is actually")
_CORRECTED = re.compile(
    rf"{_SP}{_VALUE}[\"'`\u201d\u2019]?,?"
    rf"{_SP}(?:not|instead{_SP}of|rather{_SP}than){_SP}{_OPEN_QUOTE}(?P<other>[^\s\"'`\u201d\u2019]+)"
)
_REPLACING_WORDS = ("changed", "change", "changing", "reset", "switched", "updated", "rotated")
_REPLACED_FROM = re.compile(
    rf"(?:{_SP}(?:it|mine|that|the{_SP}one|ours))?"
    rf"{_SP}from{_SP}{_VALUE}[\"'`\u201d\u2019]?{_SP}to{_SP}{_OPEN_QUOTE}(?P<other>[^\s\"'`\u201d\u2019]+)"
)


def _near_copies(first: str, second: str) -> bool:
    """Two password-shaped values, neither a version number, one an edit of the other."""
    if first == second or not (password_shaped(first) and password_shaped(second)) or "." in first + second:
        return False
    shared = next(
        (i for i, (a, b) in enumerate(zip(first, second, strict=False)) if a != b), min(len(first), len(second))
    )
    return shared >= 4 and abs(len(first) - len(second)) <= 2


# A correction is a secret's only when the writer owns up to a slip, or names a credential: "it's
# iPhone15 not iPhone14" corrects a product, "sorry, typo, it's Hunter3 not Hunter2" a password.
_SLIP = re.compile(
    r"\b(?:typo|sorry|oops|whoops|my bad|my mistake|mistyped|misspelt|misspelled|correction|i meant|wrong one"
    r"|pass\w*|pw|pwd|pin|login|log-in|code|key|wi-?fi|creds?|credentials?)\b"
)


def corrected_values(text: str, lower: str) -> Iterator[Hit]:
    """Both values of a correction (owned up to) or a replacement whose values are near copies of each other."""
    owned_up = (" not " in lower or " than " in lower) and _SLIP.search(lower) is not None  # once, not per match
    corrections = after_words(lower, _CORRECTION_WORDS, _CORRECTED) if owned_up else ()
    replacements = after_words(lower, _REPLACING_WORDS, _REPLACED_FROM) if " from " in lower else ()
    for m in itertools.chain(corrections, replacements):
        (start, value), (other_start, other) = value_of(text, m), value_of(text, m, "other")
        if _near_copies(value, other):
            yield from password_at(text, start, value, "context:corrected")
            yield from password_at(text, other_start, other, "context:corrected")


def opened_by(text: str, lower: str) -> Iterator[Hit]:
    """A password-shaped value written before what it opens."""
    if not any(verb in lower for verb in (" opens ", " unlocks ", " open ", " unlock ", " gets you ", " works ")):
        return
    for m in _VALUE_THEN_OPENS.finditer(lower):
        start, value = value_of(text, m)
        if strongly_password_shaped(value):
            yield from password_at(text, start, value, "context:opens-what")


# "pw? Gr8Scott!", "my card's PIN? 3391": the writer asks the question and answers it.
# The answer may be the next line's, after its speaker ("Bob: what's the wifi pw?\nAlice: Hunter2", "Q: the
# login for the shared account?\nA: alice / X"), and a user name may come first.
# "can you log into my Netflix? It's X": a sign-in asked for, the answer after "it's".
_SIGN_IN_WORDS = ("login", "log in", "log into", "sign in", "sign into")
_ASKED_WORDS = ("password", "passwort", "passphrase", "passcode", "pwd", "pw", "pin", *_SIGN_IN_WORDS)
_ASKED_TAIL = re.compile(
    rf"(?![\w\-])(?:{_SP}[\w'\u2019\-]+){{0,5}}"
    rf"[^\S\n]*\?(?:{_SP}|[^\S\n]*\r?\n[^\S\n]*(?:[A-Za-z][\w.'\-]{{0,20}}[^\S\n]*:[^\S\n]*)?)"
    rf"(?:(?:it['\u2019]?s|it{_SP}is){_SP})?(?:[\w.@+\-]+[^\S\n]*[/|][^\S\n]*)?{_VALUE}"
)


def asked_and_answered(text: str, lower: str) -> Iterator[Hit]:
    """The value after a credential's word and a question mark: shaped like a password, or digits for a PIN."""
    if "?" not in lower:
        return
    for word in _ASKED_WORDS:
        for m in after_words(lower, (word,), _ASKED_TAIL):
            yield from _answer(text, m, word)


def _answer(text: str, m: re.Match[str], word: str) -> Iterator[Hit]:
    start, value = value_of(text, m)
    numeric = word in ("pin", "passcode") and value.isdigit() and 4 <= len(value) <= 12
    signing_in = word in _SIGN_IN_WORDS  # "login?" asks about much: only a strong password answers it
    shaped = strongly_password_shaped(value) if signing_in else password_shaped(value)
    if numeric or shaped:
        yield from password_at(text, start, value, "context:asked-and-answered")


# "it's hunter2 all lowercase", "Tr0ub4dor (case-sensitive)": a value described as only a password is.
_DESCRIBED = re.compile(
    rf"(?<![^\s\"'`(:])(?P<value>[^\s\"'`(\[]{{6,64}})[\"'`\u201d\u2019]?[^\S\n]*[,(\-\u2013\u2014]?[^\S\n]*"
    rf"(?:all{_SP}(?:lower|upper|small|capital)[ \-]?(?:case|letters|caps)|all{_SP}caps|case[ \-]sensitive"
    rf"|no{_SP}spaces|with{_SP}(?:a|the){_SP}capital{_SP}[a-z]\b)"
)
_DESCRIPTIONS = ("lowercase", "lower case", "lower-case", "uppercase", "upper case", "upper-case", "caps", "sensitive",
                 "no spaces", "capital")  # fmt: skip


def described_values(text: str, lower: str) -> Iterator[Hit]:
    """A password-shaped value before what only a password is described by."""
    if not any(word in lower for word in _DESCRIPTIONS):
        return
    for m in _DESCRIBED.finditer(lower):
        start, value = value_of(text, m)
        if password_shaped(value):
            yield from password_at(text, start, value, "context:described")


# "Vault: River.Stone.Cloud.88", "safe = Orchid#2026": what a value opens, as its label.
_OPENS_AS_LABEL = re.compile(rf"s?[^\S\n]*[:=]{_SP}?{_VALUE}")
_OPENS_AS_LABEL_WORDS = ("vault", "safe", "locker", "padlock", "router", "laptop", "keypad", "lockbox")

# "🔑 Tulip!2027", "🗝️: Tulip!2027", "🔒 wifi → Tulip!2027": a key's or a lock's emoji as the label.
_KEY_EMOJI = ("\U0001f511", "\U0001f5dd", "\U0001f510", "\U0001f512", "\U0001f513")  # keys, locks
_AFTER_KEY_EMOJI = re.compile(
    rf"\ufe0f?[^\S\n]*(?:[\w\-]{{1,20}}[^\S\n]*(?:[:=\u2192]|->|-)[^\S\n]*|[\w\-]{{1,20}}[^\S\n]+)?"
    rf"(?:[:=\-\u2192]|->|\U0001f449)?[^\S\n]*{_VALUE}"
)

# "U/P alice.w Kestrel77", "user/pass: alice X": both parts named at once, the user's first.
_BOTH_NAMED = ("u/p", "user/pass", "user/pw", "user/pwd", "usr/pwd", "login/pw", "login/pass", "id/pw", "id/pass")
_AFTER_BOTH_NAMED = re.compile(rf"(?:word)?[^\S\n]*[:=\-]?[^\S\n]*[\w.@+\-]+(?:[^\S\n]*[/|,][^\S\n]*|{_SP}){_VALUE}")

# "PW for the shared drive hasn't changed (Winter2025!)": the value in brackets later in the credential's
# sentence. "password manager (Bitwarden2)" speaks of passwords, so no word about them may stand between.
_IN_BRACKETS_WORDS = ("pw", "password", "passwort", "passcode")
_IN_BRACKETS_AFTER = re.compile(r"[^.\n()]{0,60}?\((?P<value>[^\s()]{8,64})\)")


def _bracketed(value: str, _lower: str, m: re.Match[str]) -> bool:
    return rule_shaped(value) and ABOUT_PASSWORDS.isdisjoint(m.group().split())


_Check = Callable[[str, str, re.Match[str]], bool]
# Each phrase: the words that start it, substrings it cannot do without (looked for first: "it",
# "use" and "set" are in most mails), its tail, what its value must look like, its detector's name.
_PHRASES: tuple[tuple[tuple[str, ...], tuple[str, ...], re.Pattern[str], _Check, str], ...] = (
    (_IN_WITH_WORDS, (), _IN_WITH, lambda v, _l, _m: strongly_password_shaped(v), "context:opens-with"),
    (_NEED_WORDS, (), _NEED_FOR, lambda v, _l, _m: strongly_password_shaped(v), "context:needed-for"),
    (("key",), (), _KEY_FOR, lambda v, _l, _m: password_shaped(v), "context:key-for"),
    (_NETWORK_WORDS, (), _NETWORK_ALONE, _network_key, "context:network-alone"),
    (_LOGIN_WORDS, (), _LOGIN_THEN_IT, lambda v, _l, _m: strongly_password_shaped(v), "context:login-then-it"),
    (
        _REPLACED_WORDS,
        (" one to", "mine to", " code to"),
        _REPLACED_TO,
        lambda v, _l, _m: strongly_password_shaped(v),
        "context:replaced",
    ),
    (_SAME_WORDS, ("same as",), _SAME_AS_ALWAYS, lambda v, _l, _m: _with_digit(v), "context:same-as-always"),
    (_USE_WORDS, ("everything", "all ", "every "), _USED_FOR_ALL, _used_for_all, "context:used-for-all"),
    (_KEY_EMOJI, (), _AFTER_KEY_EMOJI, lambda v, _l, _m: password_shaped(v), "context:key-emoji"),
    (("set", "changed", "reset"), (" it to",), _IT_TO, lambda v, _l, _m: rule_shaped(v), "context:set-it-to"),
    (
        _OPENS_AS_LABEL_WORDS,
        (":", "="),
        _OPENS_AS_LABEL,
        lambda v, _l, _m: strongly_password_shaped(v),
        "context:opens-label",
    ),
    (_BOTH_NAMED, ("/",), _AFTER_BOTH_NAMED, lambda v, _l, _m: password_shaped(v), "context:both-named"),
    (_IN_BRACKETS_WORDS, ("(",), _IN_BRACKETS_AFTER, _bracketed, "context:in-brackets"),
)


def unnamed_values(text: str, lower: str) -> Iterator[Hit]:
    """Passwords given by what they open or how they relate to another value, no credential word near."""
    for words, gates, tail, shaped, detector in _PHRASES:
        if gates and not any(gate in lower for gate in gates):
            continue
        for m in after_words(lower, words, tail):
            start, value = value_of(text, m)
            if shaped(value, lower, m):
                yield from password_at(text, start, value, detector)
