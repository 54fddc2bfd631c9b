"""A password given for signing in, where no key names it: written beside a user or an address, on a
command line, or in the sentence that hands it over.

* An e-mail address and its password as a pair: "alice@example.com:Hunter2!!", "gmail -
  alice@gmail.com - Hunter2!!", "Spotify alice@example.com Sunshine1" at a line's end (how dumps,
  notes and spreadsheets keep a login). The token after
  the address, one separator away and shaped like a password, is the half that opens the account;
  an address followed by another address, a URL, a date or a word is not a pair.
* A user and a password: "u: alice p: Summer2024!", "admin / Cobalt8124!", "log in as admin with
  Adm1n!Pass".
* Command lines: "curl -u user:pass", "mysql -pSecret", "sshpass -p X".
* Sentences: "Use "Orchid#2026" to log in", "I've reset your password. Your new one is: X", and a
  credential referred to after it was named: "My PIN was 1234 but now it is 5678", "I changed
  the wifi password; it's now Tulip!2027", "I set it to X", or corrected: "PIN: ****, no wait,
  it's 7316".
* A pair given to use or after a login named a few words earlier: "for the vpn use alice / X",
  "Login for the portal - alice.b, X", and a remote login's password: "ssh root@host with X",
  "vpn alice X" (three bare words, the password ending the line); a wireless network's name and
  its key: "SSID HomeNet key X"; a password named by what it repeats: "the same one as my email, X".

`credentials` reads values stated for a credential's name; this module reads the rest of a sign-in.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from services.common.pii.contact import emails
from services.common.pii.model import FindingKind, Hit, after_words, hit, is_placeholder_at
from services.common.pii.password_rules import character_classes, rule_shaped
from services.common.pii.stated_values import (
    NAMED_NUMBER,
    TRAILING,
    password_or_number,
    password_shaped,
    plausible,
    strongly_password_shaped,
)

# After the address: a glued ":" or ";", a spaced "/", "|", ":", hyphen, en or em dash, "->", "=>", or tabs.
_SEPARATOR_THEN_VALUE = re.compile(
    r"(?:[:;]|[ \t]+(?:[/|:\-\u2013\u2014]|->|=>)[ \t]+|\t+)(?P<value>[^\s\"'<>]{6,64})(?=\s|$|[\"'<>)\]])"
)

# A service, an address and a password with only a space between them, ending the line, as password
# lists keep them: "Spotify alice@example.com Sunshine1". Only a short label may stand before the address.
_SPACE_THEN_LAST_VALUE = re.compile(r"[ \t]+(?P<value>[^\s\"'<>]{6,64})[ \t]*(?=\r?\n|$)")
_LABEL_BEFORE_ADDRESS = 40
# A wireless network's name, then its key: "SSID HomeNet key Lighthouse88", "wifi: Cafe5G, psk X".
_NETWORKS = ("ssid", "wifi", "wi-fi", "wlan")
# "WiFi: HomeNet / BlueKettle2024": a network's name, then its key after a slash.
_NETWORK_SLASH = re.compile(
    r"[^\S\n]{0,4}[:=][^\S\n]{0,4}[\w.\-]{1,64}[^\S\n]{0,4}/[^\S\n]{0,4}(?P<value>[^\s/]{1,64})"
)
_NETWORK_KEY = re.compile(
    r"\b[^\S\n]*[:=]?[^\S\n]*[\"'\u201c]?[\w.\-]+[\"'\u201d]?[,;]?[^\S\n]+"
    r"(?:(?:wpa2?|network|wifi)[^\S\n]+)?(?:key|psk|passkey)\b[^\S\n]*[:=]?[^\S\n]*(?P<value>\S+)"
)

# A user name, a slash and a password: "admin / Cobalt8124!", "root | toor99".
_USER_SLASH_PASSWORD = re.compile(
    r"\b(?:admin|administrator|root|user|username|login|benutzer|utilisateur|usuario|utente)\s+[/|]\s+(?P<value>\S+)"
)
# "jdoe:Gr8Scott!", "admin:Password123!": a user name and its password joined by a colon, with no host after them.
# "Note:Important!", "Fwd:Invoice#4411" and "python:3.12-slim" share the shape, so the value must be what a password
# rule asks for, and the pair must name a usual account, have all four classes, or follow a word of logging in.
_COLON_VALUE = re.compile(r":(?P<value>[^\s:@/\\]{8,64})(?!\S)")
_USER_BEFORE = re.compile(r"(?:^|(?<=[^\w@/.:\-#]))[A-Za-z][\w.\-]{1,30}\Z")
_USUAL_ACCOUNTS = frozenset(
    ["admin", "administrator", "root", "user", "guest", "test", "sa", "postgres", "oracle", "pi", "ubuntu", "ftp"]
)
# (And a digest's name before its value: "SHA256:wsmY7B…", an SSH key's fingerprint.)
_NOT_A_USER = frozenset(
    ["re", "fwd", "fw", "aw", "wg", "tr", "sv", "rv", "ref", "note", "subject", "tel", "fax", "sha256", "sha1", "md5"]
)
_LOGGING_IN = re.compile(
    r"\b(?:log(?:ging)? ?in|sign(?:ing)? ?in|creds|credentials|account|login|use|ssh|ftp|sftp|rdp|vpn|connect)\b"
)
# "u: alice p: Summer2024!": the one-letter shorthand of a user name and a password.
_SHORT_PAIR = re.compile(
    r"(?<![\w@.\-])(?:u|usr|user|username|login)\s*[:=]\s*\S+[\s,;|/]+(?:p|pw|pwd)\s*[:=]\s*(?P<value>\S+)"
)
# "Log in as admin with Adm1n!Pass", "sign in with alice@acme.example / Acme!2026", "Login to the NAS
# with admin and Qwerty!23".
_LOGIN_AS = re.compile(
    r"\b(?:log(?:ging)? ?in|sign(?:ing)? ?in|login|signin|connect|authenticate)"
    r"(?:\s+(?:to|into|on|at)\s+(?:the\s+|my\s+|our\s+)?[\w.\-]+)?\s+(?:as|with|using)\s+[\w.@+\-]+"
    r"(?:\s*[/|,]\s*|\s+(?:with|using|and)\s+(?:(?:the\s+)?(?:password|pw|pwd|pass)\s+)?)(?P<value>\S+)"
)
# Command lines: "curl -u user:pass", "mysql -pSecret" (every run bounded: 256 KB of "mysql " cost 65 s).
_COMMAND_LINE = re.compile(
    r"(?:^|\s)(?:-u|--user)[ =]['\"]?[^\s:'\"]{1,128}:(?P<value>[^\s'\"]{1,128})"
    r"|\b(?:mysql|mysqldump|mysqladmin)\b[^\n]{0,300}?\s-p(?P<mysql>[^\s'\"]{3,128})"
    # the tools whose password flag is a short one: redis-cli -a, sshpass -p, docker/podman/helm login -p
    r"|\b(?:redis-cli\b[^\n]{0,300}?\s-a|sshpass\b[^\n]{0,300}?\s-p|(?:docker|podman|nerdctl|helm|oras)\s+(?:registry\s+)?login\b"
    r"[^\n]{0,300}?\s(?:-p|--password))[ =]?['\"]?(?P<flag>[^\s'\"]{3,128})"
)
# More command lines: any flag named for a password with its value after a space ("keytool -storepass X",
# "--db-password X"; a value that opens with "$" or "<" is a variable's or a placeholder's), Samba's
# "-U user%password", Windows' "net user admin X", and a password piped into the tool that reads it. Each
# opens with its literal, so the engine skips ahead to it, and runs only where its gate is in the text.
_MORE_COMMAND_LINES = (  # every run bounded: 256 KB of "PuTTY-User-Key-File-2" cost 17 s with "-U" and a "+"
    ("pass", re.compile(
        r"--?(?!by|com|sur)[a-z]{0,12}-?pass(?:word|wd|phrase)?[ =]['\"]?(?P<value>[^\s'\"\-$%<{][^\s'\"]{2,63})"
        r"(?![^\s'\"])",
        re.I,
    )),
    ("-u", re.compile(r"-U[^\S\n]{0,4}['\"]?[^\s%'\"]{1,64}%(?P<value>[^\s'\"]{3,64})(?![^\s'\"])")),
    ("net user", re.compile(
        r"net[^\S\n]{1,4}user[^\S\n]{1,4}[^\s/*]{1,64}[^\S\n]{1,4}(?P<value>[^\s/*]\S{2,63})(?!\S)", re.I
    )),
    ("echo", re.compile(
        r"echo[^\S\n]{1,4}(?:-n[^\S\n]{1,4})?['\"]?(?P<value>(?!\$)[^\s'\"|]{3,64})['\"]?[^\S\n]{0,4}\|[^\S\n]{0,4}"
        r"(?:sudo\b[^\n|]{0,80}?\s-S\b|[\w.\-]{1,64}\b[^\n|]{0,80}?--password-stdin|passwd\b[^\n|]{0,80}?--stdin"
        r"|chpasswd\b|kinit\b)",
        re.I,
    )),
)  # fmt: skip
# "Use "Orchid#2026" to log in": a value given for signing in, with no word naming it.
_USE_TO_SIGN_IN = re.compile(  # led by its literal, without \b, so the engine skips ahead to each "use"
    r"use[^\S\n]+[\"'\u201c\u2018]?(?P<value>[^\s\"'\u201d\u2019]{6,64})[\"'\u201d\u2019]?[^\S\n]+(?:to|for)"
    r"[^\S\n]+(?:log(?:ging)?[ -]?in|sign(?:ing)?[ -]?in|login|signin|unlock|get in)"
)
# "I've reset your password. Your new one is: Orchid#2026": the value a sentence after the word.
_NEW_ONE = re.compile(r" one(?:[^\S\n]+is|['\u2019]s)?[^\S\n]*:?[^\S\n]*(?P<value>\S+)")
_NEW_ONE_WORDS = frozenset(["new", "temporary", "temp", "current", "updated", "old"])
# A credential named before a value a sentence refers back to ("the new one", "it's now").
_NAMED_BEFORE = re.compile(
    r"\bpass(?:word|code|phrase|wort|wd)?s?\b|\bpwd\b|\bpin\b|\bcode\b|\bcombination\b|kennwort|mot de passe"
    r"|contrase|senha|wachtwoord"
)
_NAMED_WINDOW = 160
# A credential named earlier, then referred to: "... but now it is 5678", "; it's now Tulip!2027",
# "Code's changed btw, it's 6613 now": each read in a window around a "now" (led by "it" or "that",
# a pass over the whole text cost a twentieth of redaction).
_REFERRED_NOW = tuple(
    re.compile(pattern)
    for pattern in (
        r"\bnow[^\S\n]+(?:it|that)(?:['\u2019]s|[^\S\n]+is)[^\S\n]*:?[^\S\n]*[\"'`\u201c\u2018]?(?P<value>\S+)",
        r"\b(?:it|that)(?:['\u2019]s|[^\S\n]+is|[^\S\n]+was)[^\S\n]+now[^\S\n]*:?[^\S\n]*[\"'`\u201c\u2018]?(?P<value>\S+)",
        r"\b(?:it|that)(?:['\u2019]s|[^\S\n]+is)[^\S\n]+(?P<value>\S+)[^\S\n]+now\b",
    )
)
_NOW = re.compile(r"now\b")
_NOW_BEFORE, _NOW_AFTER = 24, 80  # "that is " before it; a value of up to 64 characters after
# "it has been changed to X", "I set it to X" (read only where one of the gates is in the text).
_REFERRED_CHANGED = re.compile(
    r"\b(?:(?:it|that)(?:['\u2019]s|[^\S\n]+is|[^\S\n]+was|[^\S\n]+has been)[^\S\n]+(?:changed|reset|set|updated)"
    r"|(?:changed|reset|set|updated)[^\S\n]+(?:it|that))[^\S\n]+to[^\S\n]*:?[^\S\n]*[\"'`\u201c\u2018]?(?P<value>\S+)"
)
_CHANGED_GATES = ("changed to", "reset to", "set to", "updated to", "it to", "that to")
# A value corrected right after it was given: "PIN: ****, no wait, it's 7316", "1234, sorry I mean 5678".
_CORRECTIONS = (
    "wait", "sorry", "actually", "i mean", "i meant", "correction", "oops", "typo", "scratch that", "my bad",
)  # fmt: skip
_CORRECTED = re.compile(
    r"(?![\w])[,:;!.\-\u2013\u2014\s]*"
    r"(?:(?:it['\u2019]?s|it is|it should be|should be|make (?:it|that)|i mean|i meant|actually|rather"
    r"|the (?:right|real|correct|actual|new) one(?:['\u2019]s| is))[,:\s]*)*"
    r"[\"'`\u201c\u2018]?(?P<value>\S+)"
)
# A user and a password to use: "for the vpn use alice / Orchid#2026".
_USE_PAIR = re.compile(r"[^\S\n]+(?=[\w.@+\-]*[a-z])[\w.@+\-]+[^\S\n]+[/|][^\S\n]+(?P<value>\S+)")
# A login named a few words before a user, a comma and a password: "Login for the portal - alice.b, X".
_LOGINS = ("login", "log-in", "sign-in", "account", "credentials", "creds", "details")
_LOGIN_COMMA_PAIR = re.compile(
    r"\b[^\n,]{0,40}?(?:[:=]|[\-\u2013\u2014]{1,2})[^\S\n]*"
    r"(?=[\w.@+\-]*[a-z])[\w.@+\-]+[^\S\n]*,[^\S\n]*(?P<value>\S+)"
)
# "ssh root@10.0.0.5 with X", "sftp deploy@host using X": a remote login and the password it takes.
_REMOTE_LOGIN = re.compile(
    r"[^\S\n]+(?:-\S+[^\S\n]+)*[\w.\-]+@[\w.\-:\[\]]+[^\S\n]+"
    r"(?:with|using|pw|pwd|password|pass)(?:[^\S\n]+(?:password|pw|pwd|pass))?[^\S\n]*:?[^\S\n]*(?P<value>\S+)"
)
# A service, a user and a password in three bare words, the password ending the line: "vpn alice
# Orchid#2026", "router admin Xk9!mesh". The password must also hold a digit (a name and a word are not).
# Each word costs a str.find over the text (about 1.8 µs per 2 KB here), so only the services people
# keep such lines for, and not words every mail holds ("mail", "server").
_SERVICES = ("vpn", "ssh", "sftp", "ftp", "rdp", "router", "nas", "portal")
_USER_THEN_PASSWORD = re.compile(
    r"\b[^\S\n]*[:\-]?[^\S\n]+(?=[\w.@+\-]*[a-z])[\w.@+\-]{2,40}[^\S\n]+(?P<value>\S*\d\S*)[^\S\n]*(?=\r?\n|$)"
)

# A password named by what it repeats: "I use the same one as my email, Kestrel77". "The same one" is
# anything, so it counts only for what is one's own ("as my email", "as at work"; "as the staging cluster,
# Postgres16" names a version).
_SAME_AS = re.compile(
    r"[^\S\n]+(?:(?:password|pin|pass|login|combo)[^\S\n]+as[^\S\n]+(?:my|the|for|on|in|our|at)\b"
    r"|(?:one|thing)[^\S\n]+as[^\S\n]+(?:(?:(?:for|on|at|in)[^\S\n]+)?(?:my|our)\b|at work\b))"
    r"[^\n,:;]{0,30}?(?:[,:;]|[^\S\n][\-\u2013\u2014]{1,2})[^\S\n]*[\"'`\u201c\u2018]?(?P<value>\S+)"
)
# Where no word about secrets is near, the pairs above take only a value with a password's symbol, or
# with upper case, lower case and digits: "use React / Vue3-beta" and "Account - Acme, Q3-2026" are no pairs.
# Each pattern is read after the words that start it (`after_words`): as one alternation over the whole
# text, the logins' cost 27 µs per 2 KB mail that said "account".
_PAIRS_WITHOUT_A_WORD = (
    (("use",), _USE_PAIR),
    (("same",), _SAME_AS),
    (_LOGINS, _LOGIN_COMMA_PAIR),
    (("ssh", "sftp", "scp", "ftp"), _REMOTE_LOGIN),
    (_SERVICES, _USER_THEN_PASSWORD),
)


def email_password_pairs(text: str) -> Iterator[Hit]:
    if "@" not in text:
        return
    for start, end, _, _, _ in emails(text):
        m = _SEPARATOR_THEN_VALUE.match(text, end)
        strong = False
        if m is None and start - (text.rfind("\n", 0, start) + 1) <= _LABEL_BEFORE_ADDRESS:
            m, strong = _SPACE_THEN_LAST_VALUE.match(text, end), True
        if m is None or is_placeholder_at(text, m.start("value")):
            continue
        value = m.group("value").rstrip(TRAILING)
        if strong and not strongly_password_shaped(value):
            continue
        if password_shaped(value) and "@" not in value and "://" not in value:
            yield hit(m.start("value"), m.start("value") + len(value), FindingKind.PASSWORD, "context:email-password")


def sign_in_values(text: str, lower: str) -> Iterator[Hit]:
    """Passwords given for signing in beside a user name, on a command line, or in a sentence."""
    for m in _SHORT_PAIR.finditer(lower) if _may_hold_short_pair(lower) else ():
        value = _value(text, m)
        if plausible(value, True, FindingKind.PASSWORD, False):
            yield hit(m.start("value"), m.start("value") + len(value), FindingKind.PASSWORD, "context:user-password")
    for m in _LOGIN_AS.finditer(lower) if ("log" in lower or "sign" in lower or "conn" in lower) else ():
        value = _value(text, m)
        if password_shaped(value):
            yield hit(m.start("value"), m.start("value") + len(value), FindingKind.PASSWORD, "context:login-as")
    for m in _USE_TO_SIGN_IN.finditer(lower) if "use" in lower else ():
        if m.start() and lower[m.start() - 1].isalnum():
            continue  # "because", "reuse"
        value = _value(text, m)
        if password_shaped(value):
            yield hit(m.start("value"), m.start("value") + len(value), FindingKind.PASSWORD, "context:use-to-sign-in")
    for m in _NEW_ONE.finditer(lower) if " one" in lower else ():
        preceding = lower[max(0, m.start() - 12) : m.start()].split()
        if not preceding or preceding[-1] not in _NEW_ONE_WORDS:
            continue  # "the new one", not "no one", "any one"
        if (found := _referred(text, lower, m, any_digits=True)) is not None:
            yield hit(*found, FindingKind.PASSWORD, "context:new-one")
    yield from _referred_values(text, lower)
    for words, pattern in _PAIRS_WITHOUT_A_WORD:
        for m in after_words(lower, words, pattern):
            value = _value(text, m)
            if strongly_password_shaped(value) and not is_placeholder_at(text, m.start("value")):
                yield hit(m.start("value"), m.start("value") + len(value), FindingKind.PASSWORD, "context:pair")
    for m in after_words(lower, _NETWORKS, _NETWORK_SLASH) if "/" in lower else ():
        value = _value(text, m)
        if strongly_password_shaped(value) and not is_placeholder_at(text, m.start("value")):
            yield hit(m.start("value"), m.start("value") + len(value), FindingKind.PASSWORD, "context:network-key")
    for m in after_words(lower, _NETWORKS, _NETWORK_KEY) if ("key" in lower or "psk" in lower) else ():
        value = _value(text, m)
        if password_shaped(value) and not is_placeholder_at(text, m.start("value")):
            yield hit(m.start("value"), m.start("value") + len(value), FindingKind.PASSWORD, "context:network-key")
    for m in _COMMAND_LINE.finditer(text):
        group = next(name for name in ("value", "mysql", "flag") if m.group(name))
        yield hit(m.start(group), m.end(group), FindingKind.PASSWORD, "context:command-line")
    yield from _more_command_lines(text, lower)
    yield from _colon_pairs(text, lower)
    for m in _USER_SLASH_PASSWORD.finditer(lower):
        value = _value(text, m)
        if plausible(value, False, FindingKind.PASSWORD, False) and any(c.isdigit() for c in value):
            yield hit(m.start("value"), m.start("value") + len(value), FindingKind.PASSWORD, "context:user-password")


def _password_flag_value(value: str) -> bool:
    return password_shaped(value) and _WORDS_AND_DASHES.fullmatch(value) is None


_WORDS_AND_DASHES = re.compile(r"[a-z\-_.()]+")


def _more_command_lines(text: str, lower: str) -> Iterator[Hit]:
    for gate, pattern in _MORE_COMMAND_LINES:
        for m in pattern.finditer(text) if gate in lower else ():
            if m.start() and not text[m.start() - 1].isspace():
                continue  # "ab-pass x", "magnet user": the flag or the command must start its word
            if gate == "pass" and not _password_flag_value(m.group("value")):
                continue  # "--password for --key-info", "-onepass (for djpeg)", "--change-passphrase your-user-id"
            if not is_placeholder_at(text, m.start("value")):
                yield hit(m.start("value"), m.end("value"), FindingKind.PASSWORD, "context:command-line")


def _colon_pairs(text: str, lower: str) -> Iterator[Hit]:
    for m in _COLON_VALUE.finditer(text):
        before = _USER_BEFORE.search(text, max(0, m.start() - 31), m.start())
        if before is None:
            continue
        value, user = m.group("value").rstrip(".,;"), before.group().lower()
        if user in _NOT_A_USER or "=" in value or "," in value or not rule_shaped(value):
            continue  # "LISTEN:temp,accept-timeout=0.1": options, not a password
        if is_placeholder_at(text, m.start("value")):
            continue
        all_classes = character_classes(value) == 4
        logging_in = _LOGGING_IN.search(lower, max(0, before.start() - 40), before.start()) is not None
        if user in _USUAL_ACCOUNTS or all_classes or logging_in:
            yield hit(m.start("value"), m.start("value") + len(value), FindingKind.PASSWORD, "context:colon-pair")


def _referred_values(text: str, lower: str) -> Iterator[Hit]:
    """A value after "now it's", "it's now" or "changed it to", with a credential named just before it."""
    matches: dict[int, re.Match[str]] = {}
    for now in _NOW.finditer(lower):
        if now.start() and lower[now.start() - 1].isalnum():
            continue  # "know", "snow"
        lo, hi = max(0, now.start() - _NOW_BEFORE), min(len(lower), now.end() + _NOW_AFTER)
        for pattern in _REFERRED_NOW:
            matches.update((m.start("value"), m) for m in pattern.finditer(lower, lo, hi))
    if any(gate in lower for gate in _CHANGED_GATES):
        matches.update((m.start("value"), m) for m in _REFERRED_CHANGED.finditer(lower))
    matches.update((m.start("value"), m) for m in after_words(lower, _CORRECTIONS, _CORRECTED))
    for m in matches.values():
        if (found := _referred(text, lower, m)) is not None:
            yield hit(*found, FindingKind.PASSWORD, "context:referred")


def _referred(text: str, lower: str, m: re.Match[str], any_digits: bool = False) -> tuple[int, int] | None:
    """The span of the value in ``m``'s group ``value`` when a credential was named just before ``m``
    and the value is shaped like one: digits count where a word for a number named it, or with
    ``any_digits`` ("your new one is 482913" after a password reset: a temporary password)."""
    window = max(0, m.start() - _NAMED_WINDOW)
    if _NAMED_BEFORE.search(lower, window, m.start()) is None or is_placeholder_at(text, m.start("value")):
        return None
    value = _value(text, m)
    numeric = any_digits or NAMED_NUMBER.search(lower, window, m.start()) is not None
    return (m.start("value"), m.start("value") + len(value)) if password_or_number(value, numeric) else None


def _value(text: str, m: re.Match[str]) -> str:
    return text[m.start("value") : m.end("value")].rstrip(TRAILING)


def _may_hold_short_pair(lower: str) -> bool:
    """A "p:" or "p=" that is not a URL's "http:": scanning for the shorthand itself costs a fifth of
    this module on ordinary mail, and a count of two substrings about a fortieth."""
    return lower.count("p:") > lower.count("tp:") or lower.count("p=") > lower.count("tp=")
