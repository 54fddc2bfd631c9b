"""Passwords kept beside the name of the account they open, with no credential word at all.

A note of one's logins names the service and gives the value: "bank: Kestrel77", "Netflix =
Kestrel77", "the bank one is Kestrel77", "Kestrel77 for gmail", "I used Kestrel77 on the bank
site", "Portal -> alice.w / Kestrel77", "the portal wants alice.w + Kestrel77". The service's name
is the only label, and it is also a word of every other kind of note ("Amazon: order 4411
shipped", "we use Office365 for email"), so the value must look like what a password rule asks for
(eight characters or more from three of upper case, lower case, digits and symbols), must not
name an order, a ticket or a product's version ("Order#4411", "Windows11"), and a value written
before the service is read only for an account, not for a device or for mail in general.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from services.common.pii.model import Hit
from services.common.pii.password_rules import rule_shaped
from services.common.pii.stated_values import password_at, value_of

_SP = r"[^\S\n]+"
_OPEN_QUOTE = "[\"'`\u201c\u2018]?"
_VALUE = rf"{_OPEN_QUOTE}(?P<value>[^\s\"'`\u201d\u2019]+)"


def _names(words: str, *phrases: str) -> tuple[str, ...]:
    return (*words.split(), *phrases)


# Accounts a person signs in to; a value written after them as their label, or before them.
_ACCOUNT_LIST = _names(
    "bank banking gmail outlook hotmail yahoo icloud netflix amazon paypal venmo ebay facebook fb instagram insta "
    "twitter linkedin spotify dropbox github gitlab slack zoom portal intranet vpn steam xbox playstation psn "
    "nintendo uber airbnb hulu disney+ hbo adobe okta jira salesforce workday tiktok snapchat discord reddit "
    "pinterest coinbase binance revolut monzo etsy shopify wordpress godaddy namecheap cloudflare appleid",
    "online banking",
    "apple id",
)
# Devices and mail in general are labels too ("laptop: X"), but "Windows11 on my laptop" and "Office365
# for email" are how people say what they run: a value before them is not read.
# ("mac" is left out: "printer MAC 00-1A-2B-3C-4D-5E" names an address.)
_LABEL_ONLY_LIST = _names(
    "email mail laptop phone ipad iphone computer pc macbook tablet", "work account", "school account"
)


def _alternation(names: tuple[str, ...]) -> str:
    return "|".join(re.escape(n).replace("\\ ", "[ \\-]?") for n in sorted(names, key=len, reverse=True))


_ACCOUNTS, _LABELS_ONLY = _alternation(_ACCOUNT_LIST), _alternation(_LABEL_ONLY_LIST)
_FIRST_WORDS = frozenset(name.split()[0].rstrip("+") for name in (*_ACCOUNT_LIST, *_LABEL_ONLY_LIST))

# Each pattern is matched at an account's name found by a word lookup: as one alternation searched
# through every text, the names cost 34 us a paragraph.
_LABELLED = re.compile(
    rf"(?<![\w\-/.:@$])(?:{_ACCOUNTS}|{_LABELS_ONLY})"
    rf"(?:{_SP}(?:account|acct|login|site|app|one))?(?:{_SP}\([^)\n]{{0,60}}\))?"
    rf"(?:[^\S\n]*(?:[:=\u2192](?!:)|->|(?:-{{1,2}}|\u2013|\u2014)(?=\s))|{_SP}(?:one{_SP})?is|{_SP}wants"
    rf"|{_SP}uses?|(?P<bare>(?=[^\S\n])))[^\S\n]*"
    rf"(?:(?P<user>[\w.@+\-]+)(?:[^\S\n]*[/|+,][^\S\n]*|{_SP}(?:and|with|plus){_SP}))?{_VALUE}"
)
# Before the account, the value is a note's own ("Kestrel77 for gmail" opening its line) or what one
# uses ("I used Kestrel77 on the bank site", "Kestrel77 is what I use on Amazon"): "Reported by
# Thomas1664 on GitHub" names a person by the handle they use there. Searched in the words just
# before an account's name, up to it.
_BEFORE = re.compile(
    r"(?:^|(?<=\n)|(?<=\buse )|(?<=\bused )|(?<=\busing )|(?<=\buses ))"
    rf"[^\S\n]*(?:[\-*\u2022][^\S\n]*)?(?P<value>[^\s\"'`(\[]{{8,64}})[\"'`\u201d\u2019]?"
    rf"(?:{_SP}is{_SP}what{_SP}i{_SP}use)?{_SP}(?P<preposition>for|on|at|=){_SP}(?:(?:the|my|our){_SP})?\Z"
)
_BEFORE_WINDOW = 100
# Words apart: every mark a space (translate and split are C loops; a regex's findall cost twice as much).
_MARKS_TO_SPACES = str.maketrans({chr(c): " " for c in range(128) if not chr(c).isalnum()})
_ACCOUNT_NAMES = re.compile(rf"(?:{_ACCOUNTS})(?![\w\-])")

# After a labelled value, its clause ends ("bank: Kestrel77", "…Kestrel77 (shared)", "…Kestrel77, and"):
# "Spotify: Premium2024 plan renewed" goes on about the value, so it names a thing.
_CLAUSE_ENDS = re.compile(r"[^\S\n]*(?:$|\r?\n|[,;!?)(\]/|]|\.(?:\s|$)|[\-\u2013\u2014]{1,2}\s|(?:and|but)\b)")


def _occurrences(lower: str, word: str) -> list[int]:
    found, at = [], lower.find(word)
    while at != -1:
        if not at or not (lower[at - 1].isalnum() or lower[at - 1] in "_-/.:@$"):
            found.append(at)
        at = lower.find(word, at + 1)
    return found


def account_values(text: str, lower: str) -> Iterator[Hit]:
    """Values after an account's name as their label, or before the account they are used for."""
    present = _FIRST_WORDS.intersection(lower.translate(_MARKS_TO_SPACES).split())
    for word in present:
        for at in _occurrences(lower, word):
            if (labelled := _LABELLED.match(lower, at)) is not None:
                yield from _labelled_value(text, labelled)
            if _ACCOUNT_NAMES.match(lower, at) and (before := _BEFORE.search(lower, max(0, at - _BEFORE_WINDOW), at)):
                yield from _value_before(text, lower, before)


def _labelled_value(text: str, m: re.Match[str]) -> Iterator[Hit]:
    if m.group("bare") is not None and m.group("user") is not None:
        return  # "netflix Mango!Tree22" is a note; "iPhone 4S, Cortex-A9" a list of devices
    start, value = value_of(text, m)
    if _CLAUSE_ENDS.match(text, start + len(value)) and rule_shaped(value):
        yield from password_at(text, start, value, "context:account-value")


def _value_before(text: str, lower: str, m: re.Match[str]) -> Iterator[Hit]:
    start, value = value_of(text, m)
    used = lower.endswith(("use ", "used ", "using ", "uses "), 0, start) or " what i use " in m.group()
    if not used and m.group("preposition") not in ("for", "="):
        return  # "Thomas1664 on github" opening a line is a handle
    if rule_shaped(value):
        yield from password_at(text, start, value, "context:account-value")
