"""A password given for signing in, where no key names it: written beside a user or an address, on a
command line, or in the sentence that hands it over.

* An e-mail address and its password as a pair: "alice@example.com:Hunter2!!", "gmail -
  alice@gmail.com - Hunter2!!" (how dumps, notes and spreadsheets keep a login). The token after
  the address, one separator away and shaped like a password, is the half that opens the account;
  an address followed by another address, a URL, a date or a word is not a pair.
* A user and a password: "u: alice p: Summer2024!", "admin / Cobalt8124!", "log in as admin with
  Adm1n!Pass".
* Command lines: "curl -u user:pass", "mysql -pSecret", "sshpass -p X".
* Sentences: "Use "Orchid#2026" to log in", "I've reset your password. Your new one is: X".

`credentials` reads values stated for a credential's name; this module reads the rest of a sign-in.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from services.common.pii.contact import emails
from services.common.pii.model import FindingKind, Hit, hit, is_placeholder_at
from services.common.pii.stated_values import TRAILING, password_shaped, plausible

# After the address: a glued ":" or ";", a spaced "/", "|", ":", hyphen, en or em dash, "->", "=>", or tabs.
_SEPARATOR_THEN_VALUE = re.compile(
    r"(?:[:;]|[ \t]+(?:[/|:\-\u2013\u2014]|->|=>)[ \t]+|\t+)(?P<value>[^\s\"'<>]{6,64})(?=\s|$|[\"'<>)\]])"
)

# A user name, a slash and a password: "admin / Cobalt8124!", "root | toor99".
_USER_SLASH_PASSWORD = re.compile(
    r"\b(?:admin|administrator|root|user|username|login|benutzer|utilisateur|usuario|utente)\s+[/|]\s+(?P<value>\S+)"
)
# "u: alice p: Summer2024!": the one-letter shorthand of a user name and a password.
_SHORT_PAIR = re.compile(
    r"(?<![\w@.\-])(?:u|usr|user|username|login)\s*[:=]\s*\S+[\s,;|/]+(?:p|pw|pwd)\s*[:=]\s*(?P<value>\S+)"
)
# "Log in as admin with Adm1n!Pass", "sign in with alice@acme.example / Acme!2026".
_LOGIN_AS = re.compile(
    r"\b(?:log(?:ging)? ?in|sign(?:ing)? ?in|login|signin|connect|authenticate)\s+(?:as|with|using)\s+[\w.@+\-]+"
    r"(?:\s*[/|,]\s*|\s+(?:with|using|and)\s+(?:(?:the\s+)?(?:password|pw|pwd|pass)\s+)?)(?P<value>\S+)"
)
# Command lines: "curl -u user:pass", "mysql -pSecret".
_COMMAND_LINE = re.compile(
    r"(?:^|\s)(?:-u|--user)[ =]['\"]?[^\s:'\"]+:(?P<value>[^\s'\"]+)"
    r"|\b(?:mysql|mysqldump|mysqladmin)\b[^\n]*?\s-p(?P<mysql>[^\s'\"]{3,})"
    # the tools whose password flag is a short one: redis-cli -a, sshpass -p, docker/podman/helm login -p
    r"|\b(?:redis-cli\b[^\n]*?\s-a|sshpass\b[^\n]*?\s-p|(?:docker|podman|nerdctl|helm|oras)\s+(?:registry\s+)?login\b"
    r"[^\n]*?\s(?:-p|--password))[ =]?['\"]?(?P<flag>[^\s'\"]{3,})"
)
# "Use "Orchid#2026" to log in": a value given for signing in, with no word naming it.
_USE_TO_SIGN_IN = re.compile(  # led by its literal, without \b, so the engine skips ahead to each "use"
    r"use[^\S\n]+[\"'\u201c\u2018]?(?P<value>[^\s\"'\u201d\u2019]{6,64})[\"'\u201d\u2019]?[^\S\n]+(?:to|for)"
    r"[^\S\n]+(?:log(?:ging)?[ -]?in|sign(?:ing)?[ -]?in|login|signin|unlock|get in)"
)
# "I've reset your password. Your new one is: Orchid#2026": the value a sentence after the word.
_NEW_ONE = re.compile(r" one(?:[^\S\n]+is|['\u2019]s)?[^\S\n]*:?[^\S\n]*(?P<value>\S+)")
_NEW_ONE_WORDS = frozenset(["new", "temporary", "temp", "current", "updated", "old"])
_NAMED_BEFORE = re.compile(r"pass|pwd|\bpin\b|\bcode\b|kennwort|mot de passe|contrasena|senha")


def email_password_pairs(text: str) -> Iterator[Hit]:
    if "@" not in text:
        return
    for _, end, _, _, _ in emails(text):
        m = _SEPARATOR_THEN_VALUE.match(text, end)
        if m is None or is_placeholder_at(text, m.start("value")):
            continue
        value = m.group("value").rstrip(TRAILING)
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
        value = _value(text, m)
        named = _NAMED_BEFORE.search(lower, max(0, m.start() - 150), m.start())
        if named and (password_shaped(value) or (value.isdigit() and len(value) >= 4)):
            yield hit(m.start("value"), m.start("value") + len(value), FindingKind.PASSWORD, "context:new-one")
    for m in _COMMAND_LINE.finditer(text):
        group = next(name for name in ("value", "mysql", "flag") if m.group(name))
        yield hit(m.start(group), m.end(group), FindingKind.PASSWORD, "context:command-line")
    for m in _USER_SLASH_PASSWORD.finditer(lower):
        value = _value(text, m)
        if plausible(value, False, FindingKind.PASSWORD, False) and any(c.isdigit() for c in value):
            yield hit(m.start("value"), m.start("value") + len(value), FindingKind.PASSWORD, "context:user-password")


def _value(text: str, m: re.Match[str]) -> str:
    return text[m.start("value") : m.end("value")].rstrip(TRAILING)


def _may_hold_short_pair(lower: str) -> bool:
    """A "p:" or "p=" that is not a URL's "http:": scanning for the shorthand itself costs a fifth of
    this module on ordinary mail, and a count of two substrings about a fortieth."""
    return lower.count("p:") > lower.count("tp:") or lower.count("p=") > lower.count("tp=")
