"""Secrets a sentence hands over where no credential word stands right before the value.

People rarely write "password: X" when they talk. They write what the value opens, or what to do
with it, and the value comes a few words on:

* the thing a keypad opens, with no "code": "the alarm: 4471", "the padlock is 4421", "the garage
  opens with 7731", "punch in 9931#", "use 4471 for the alarm", "2580 disarms it", or with a bare
  "code" later in its sentence ("safe deposit box 42, code 7781"); a combination lock's numbers
  ("the safe opens with 4-19-27");
* a second code in the same list: "the alarm is 2468 and the side gate 1357";
* the handing over itself: "Keep this safe: Orchid#2026", "don't share this - Orchid#2026", or a
  note to oneself that ends its line with a value: "Remember: Gr33nT3a!";
* a password on the line after "new password below:";
* a product or licence key in its printed shape, with or without a label: five groups of five
  ("W269N-WFGWX-YVC9B-4J6C9-T83GX") or four of four ("4F2A-99KD-1LLQ-ZP03").

A credential referred to after it was named ("…but now it is 5678") and a password given beside a
user name are sign-ins, which `login_pairs` reads.

What keeps ordinary text out: keypad values are four to eight digits (an alarm clock's "0630" and
a measurement with its unit are not); a handed-over value must be shaped like a password; a
product key's groups have one length, and at least half of them (two or more) mix letters with
digits, as random keys do.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from services.common.pii.model import FindingKind, Hit, after_words, hit, is_placeholder_at
from services.common.pii.stated_values import (
    ABOUT_PASSWORDS,
    NAMED_NUMBER,
    TRAILING,
    password_or_number,
    password_shaped,
    strongly_password_shaped,
)

# What a keypad code opens. "door" and "gate" need the code's shape (four or more digits) and a link.
_LOCK_THING = (
    r"(?:burglar |house |home |security )?alarm|padlock|lockbox|key ?box|keypad|(?:the )?safe|gate|garage(?: door)?"
    r"|(?:front |back |side |main |building |street )?door|bike lock|lock|intercom|buzzer"
    r"|vault|locker|strongbox|(?:safe )?deposit box|atm|cash ?machine|cashpoint"
)
# Four to eight digits, as typed on a keypad: "9931#", "*4471", "12-07-33" is a combination's.
# Or one digit at a time, as a keypad is read out: "7-3-1-9", "4 4 7 1".
_KEYPAD_DIGITS = r"(?P<value>[*#]?(?:\d{4,8}|\d(?:[\-. ]\d){3,7})[#*]?)"
# After the digits: the sentence goes on, or it ends; never a unit ("the garage is 2400 mm wide").
_NOT_A_MEASURE = (
    r"(?![\w\-:.,]\d)(?![^\S\n]*(?:mm|cm|m|km|ft|feet|foot|inch|inches|sq|square|meters?|metres?|kg|lbs?|"
    r"pounds?|euros?|dollars?|usd|eur|gbp|years?|hours?|h|am|pm|wide|tall|high|long|deep|lbs|mph|kph|psi|w|kw|v)\b)"
)
_THINGS_DIGITS = rf"{_KEYPAD_DIGITS}{_NOT_A_MEASURE}"
# "safe deposit box 42, code 7781", "the locker is on floor 2 and the code 3391": a bare "code" in a
# sentence about a thing it opens (an error's, a zip's or a promotion's code is no key). A code, so a SECRET.
_CODE_IN_SENTENCE = re.compile(
    rf"\b(?:{_LOCK_THING}|box)\b[^.\n]{{0,40}}?(?<![\w\-])(?<!error )(?<!status )(?<!exit )(?<!return )"
    rf"(?<!promo )(?<!coupon )(?<!discount )(?<!zip )(?<!area )(?<!postal )(?<!product )(?<!tracking )"
    rf"code(?:[^\S\n]*[:=]|[^\S\n]+(?:is|was))?[^\S\n]*{_THINGS_DIGITS}"
)
_KEYPAD_OPENERS = tuple(
    re.compile(pattern)
    for pattern in (
        # "the alarm: 4471", "the padlock is 4421", "garage = 7731", "the alarm's 4471", "alarm panel: 90210#"
        rf"\b(?:{_LOCK_THING})(?: (?:pin|number|combo|combination|panel|system|pad|keypad|opener|remote|fob|disarm))?"
        rf"(?:[^\S\n]*[:=]"
        rf"|[^\S\n]+(?:is|was|is now|is still)|['\u2019]s)[^\S\n]*{_THINGS_DIGITS}",
        # "padlock 3356", "keypad 7741", "front door 1122": things that are only ever opened by a code take it
        # bare (a door or a gate named by its side; "door 1122" alone may be a room's number)
        rf"\b(?:padlock|lockbox|key ?box|keypad|key ?pad|combination lock|bike lock"
        rf"|(?:front|back|side|main|building|street|garage|entrance|garden|yard|rear) (?:door|gate))"
        rf"[^\S\n]+{_THINGS_DIGITS}",
        # "keycode for the office: 7782", "key code is 4471" (a keyboard's keycode has one to three digits)
        rf"\bkey ?code(?:[^\S\n]+(?:for|to|of)[^\S\n]+(?:the[^\S\n]+|my[^\S\n]+|our[^\S\n]+)?[a-z]+)?"
        rf"(?:[^\S\n]*[:=]|[^\S\n]+is)[^\S\n]*{_THINGS_DIGITS}",
        # "the keypad by the side entrance takes 5829", "the lockbox wants 3141"
        rf"\b(?:{_LOCK_THING})\b[^.\n]{{0,40}}?[^\S\n](?:takes|wants|needs|accepts|uses)[^\S\n]+(?:the code[^\S\n]+)?"
        rf"{_THINGS_DIGITS}",
        # "to disarm the alarm, type 8080", "to open the gate enter 7731"
        rf"\bto (?:disarm|unlock|open|get into|get in|arm)\b[^.\n]{{0,40}}?[^\S\n](?:type|enter|punch in|key in|tap"
        rf"|dial|use|press)[^\S\n]+{_THINGS_DIGITS}",
        # "the garage opens with 7731", "the alarm disarms with 4471"
        rf"\b(?:{_LOCK_THING})[^\S\n]+(?:opens|unlocks|disarms|arms|releases)[^\S\n]+(?:with|using|on)[^\S\n]+"
        rf"{_THINGS_DIGITS}",
        # "punch in 9931#", "key in 4471", "tap in 4471"
        rf"\b(?:punch|key|tap|dial)(?:ed)?[^\S\n]+in[^\S\n]+{_THINGS_DIGITS}",
        # "use 4471 for the alarm", "enter 4471 at the gate"
        rf"\b(?:use|enter|type|press|punch|key in)[^\S\n]+{_KEYPAD_DIGITS}[^\S\n]+(?:for|on|at|into|to open"
        rf"|to unlock|to disarm|to get into)[^\S\n]+(?:the |your |my |our )?(?:{_LOCK_THING})\b",
        # "4471 opens the door", "2580 disarms it"
        rf"(?<![\w\-]){_KEYPAD_DIGITS}[^\S\n]+(?:opens|unlocks|disarms|arms)[^\S\n]+(?:it|them"
        rf"|(?:the |your |my |our )?(?:{_LOCK_THING}))\b",
        # "disarm it with 4471", "open the gate using 7731", "disarm with 7316" (no thing: only these two verbs)
        rf"\b(?:(?:disarm|unlock|open)[^\S\n]+(?:it|the (?:{_LOCK_THING}))|disarm|unlock)[^\S\n]+"
        rf"(?:with|using|by entering)[^\S\n]+{_THINGS_DIGITS}",
    )
)
# Each statement with the kind and the detector name its value is reported under.
_KEYPAD_STATEMENTS = (
    *((pattern, FindingKind.PASSWORD, "context:keypad") for pattern in _KEYPAD_OPENERS),
    (_CODE_IN_SENTENCE, FindingKind.SECRET, "context:code-of-a-lock"),
)
# A combination lock's numbers, which no run of four digits finds: "the safe opens with 4-19-27".
_COMBINATION = re.compile(
    rf"\b(?:{_LOCK_THING})[^\S\n]+(?:opens|unlocks|releases)[^\S\n]+(?:with|using|on)[^\S\n]+"
    r"(?P<value>\d{1,2}(?:-\d{1,2}){2,3})(?![\w\-])"
)
# The same numbers stated for a thing only a combination opens: "safe = 24-11-08", "padlock: 74 19 33", "my
# locker's combo, if you need it, is 19-23-7" (a remark between commas may stand before the link).
_COMBINATION_THINGS = (
    "safe",
    "padlock",
    "locker",
    "lockbox",
    "strongbox",
    "vault",
    "bike lock",
    "combo",
    "combination",
)
_STATED_COMBINATION = (
    re.compile(  # read after each of the things (`after_words`): ten words tried everywhere cost 90 µs
        r"(?![a-z])(?:['\u2019]s)?(?: (?:combo|combination|code|numbers))?(?:,[^,\n]{1,30},)?"
        r"(?:[^\S\n]*[:=]|[^\S\n]+(?:is|was|is now|are))[^\S\n]*"
        r"(?P<value>\d{1,2}(?:-\d{1,2}){2,3}|\d\d(?:[^\S\n]\d\d){2,3})(?![\w\-:./])" + _NOT_A_MEASURE
    )
)

# A second code in the same list, after a first one was read: "the alarm is 2468 and the side gate 1357",
# "Front door 1122, back door 3344". The thing needs no link here; the list gave it one.
_NEXT_IN_LIST = re.compile(
    rf"(?P<previous>[*#]?\d{{4,8}}[#*]?)[^\S\n]*(?:[,;&]|and|,[^\S\n]*and)[^\S\n]+(?:for[^\S\n]+)?"
    rf"(?:the[^\S\n]+)?(?:{_LOCK_THING})(?:[^\S\n]*[:=]|[^\S\n]+(?:is|was|one is)|['\u2019]s)?[^\S\n]*"
    rf"{_THINGS_DIGITS}"
)

# A value noted for oneself, alone at the end of its line: "Remember: Gr33nT3a!", "Note to self - bank:
# Ferret!Run42". These words start any reminder, so the value must be shaped like a password with digits.
_NOTED = re.compile(
    r"(?![\w])[^\S\n]*(?:[:=]|[\-\u2013\u2014]{1,2})"
    r"[^\S\n]*(?:[\w+&'.][\w+&'. ]{0,28}?[^\S\n]*[:=][^\S\n]*)?[\"'`\u201c\u2018]?(?P<value>[^\s\"'`\u201d\u2019]+)"
    r"[\"'`\u201d\u2019]?[^\S\n]*(?:\([^)\n]{0,30}\)[^\S\n]*)?(?=\r?\n|$)"  # "In case I forget: X (portal)"
)
_NOTED_WORDS = ("to self", "remember", "reminder", "forget")  # "note to self", "memo to self", "don't forget"

# Handing a value over: "Keep this safe: Orchid#2026", "don't share this - Orchid#2026".
_HANDED_OVER = re.compile(
    r"\b(?:keep (?:this|it|that) (?:safe|secret|private|to yourself|confidential|somewhere safe)"
    r"|(?:don['\u2019]?t|do not|never) (?:share|lose|forward|post|give out|write down|tell anyone|show anyone)"
    r" (?:this|it|that)(?: one)?(?: with anyone)?"
    r"|for your eyes only|just between us"
    r"|(?:memori[sz]e|remember) (?:this|it)(?: one)? and (?:delete|destroy|burn)"
    r" (?:this|it|the)(?: mail| message| e-?mail)?)"
    r"[^\S\n]*(?:[:=]|[\-\u2013\u2014]{1,2}|,[^\S\n]*(?:it['\u2019]?s|it is|here it is:?))[^\S\n]*"
    r"[\"'`\u201c\u2018]?(?P<value>[^\s\"'`\u201d\u2019]+)"
)

# "new password below:" and the value alone on the next line.
_ON_THE_NEXT_LINE = re.compile(
    r"\b(?:pass(?:word|code|phrase)?|pwd|pin|kennwort|mot de passe|contrase(?:n|\u00f1)a|senha|login|credentials)s?\b"
    r"[^\n]{0,30}?\b(?:below|as follows|follows|here)[^\S\n]*:?[^\S\n]*\r?\n[^\S\n]*(?:\r?\n[^\S\n]*)?"
    r"(?:[\w.@+\-]+[^\S\n]*[/|][^\S\n]*)?[\"'`\u201c\u2018]?(?P<value>[^\s\"'`\u201d\u2019]+)[\"'`\u201d\u2019]?"
    r"[^\S\n]*(?=\r?\n|$)"
)
# Words every handed-over phrase holds, looked for first (thirteen substrings cost 7 µs per 2 KB mail).
_HANDED_OVER_GATES = (
    "keep", "share", "lose ", "forward", "post ", "give out", "write down", "anyone", "eyes only", "between us",
    "delete", "destroy", "burn",
)  # fmt: skip
# The phrase starts at most this far before its gate word ("remember this one and delete"), and ends
# with its value.
_GATE_BEFORE, _GATE_AFTER = 32, 160
# A product or licence key as printed: four to eight groups of one length, four to six letters and digits.
_GROUPED_KEY = re.compile(r"(?:[A-Z0-9]{4,6}-){3,7}[A-Z0-9]{4,6}")
# A middle group between two hyphens, looked for first: the whole pattern costs ten times as much per text.
_MIDDLE_GROUP = re.compile(r"-[A-Z0-9]{4,6}-")


def handed_over_values(text: str, lower: str) -> Iterator[Hit]:
    """Values handed over by what they open, by "keep this safe", on the next line, or in a key's shape."""
    yield from _keypad_values(text, lower)
    if "opens" in lower or "unlocks" in lower or "releases" in lower:
        for m in _COMBINATION.finditer(lower):
            yield hit(m.start("value"), m.end("value"), FindingKind.PASSWORD, "context:combination")
    for m in after_words(lower, _COMBINATION_THINGS, _STATED_COMBINATION):
        yield hit(m.start("value"), m.end("value"), FindingKind.PASSWORD, "context:combination")
    yield from _handed_over(text, lower)
    yield from _noted_values(text, lower)
    yield from _next_line_values(text, lower)
    yield from _grouped_keys(text)


# Where a keypad code may be: four or more digits (the patterns above decide; most mail has few such runs).
# (spelt out: half the time of \d{4,} on prose), or four or more digits one at a time ("7-3-1-9").
_DIGIT_RUN = re.compile(r"[0-9](?:[0-9][0-9][0-9]+|(?:[\-. ][0-9](?![0-9])){3,})")
# A word one of the patterns needs, looked for in the window first: most runs of digits have none.
_KEYPAD_WORDS = re.compile(
    r"alarm|lock|safe|gate|garage|door|key|intercom|buzzer|punch|tap|dial|arm|open|get in|vault|box|atm|cash"
)
_KEYPAD_WINDOW_BEFORE, _KEYPAD_WINDOW_AFTER = 90, 60


def _keypad_values(text: str, lower: str) -> Iterator[Hit]:
    """Each run of four to eight digits, read against the keypad patterns in a window around it: a pass
    of every pattern over the whole text cost a twentieth of redaction on ordinary mail."""
    read: set[int] = set()  # where each code read so far ends, for the next one in a list
    for run in _DIGIT_RUN.finditer(lower):
        start, end = run.span()
        if sum(c.isdigit() for c in run.group()) > 8 or (end < len(lower) and lower[end].isalpha()):
            continue
        if start and (lower[start - 1] in "-_" or lower[start - 1].isdigit()):
            continue  # part of a longer number: "555 1 2 3 4" is no code read digit by digit
        if _part_of_a_number(lower, start, end):
            continue  # "2026-12-08", "10:00", "1,250.50": a date, a time or an amount
        start -= start > 0 and lower[start - 1] in "*#"
        lo, hi = max(0, start - _KEYPAD_WINDOW_BEFORE), min(len(lower), end + _KEYPAD_WINDOW_AFTER)
        if _KEYPAD_WORDS.search(lower, lo, hi) is None:
            continue
        for pattern, kind, detector in _KEYPAD_STATEMENTS:
            m = next((m for m in pattern.finditer(lower, lo, hi) if m.start("value") == start), None)
            if m is not None:
                if not is_placeholder_at(text, start) and not _clock_time(m.group("value"), lower, m.start()):
                    read.add(m.end("value"))
                    yield hit(start, m.end("value"), kind, detector)
                break
        else:
            listed = (m for m in _NEXT_IN_LIST.finditer(lower, lo, hi) if m.start("value") == start)
            if (m := next(listed, None)) is not None and m.end("previous") in read:
                read.add(m.end("value"))
                yield hit(start, m.end("value"), FindingKind.PASSWORD, "context:keypad-list")


def _part_of_a_number(lower: str, start: int, end: int) -> bool:
    after = end + 1 < len(lower) and lower[end] in "-:./," and lower[end + 1].isdigit()
    before = start >= 2 and lower[start - 1] in ":./," and lower[start - 2].isdigit()
    return after or before


def _clock_time(value: str, lower: str, start: int) -> bool:
    """ "the alarm: 0630" is an alarm clock's time, not a code: four digits that read as HHMM after "alarm"."""
    digits = "".join(c for c in value if c.isdigit())
    if len(digits) != 4 or "alarm" not in lower[start : start + 20]:
        return False
    return int(digits[:2]) < 24 and int(digits[2:]) < 60


def _next_line_values(text: str, lower: str) -> Iterator[Hit]:
    if "below" not in lower and "follows" not in lower and "here" not in lower:
        return
    for m in _ON_THE_NEXT_LINE.finditer(lower):
        if ABOUT_PASSWORDS.intersection(m.group().split()):
            continue  # "the password requirements are as follows:" states rules, not the value
        value = text[m.start("value") : m.end("value")].rstrip(TRAILING)
        numeric = NAMED_NUMBER.search(m.group()) is not None
        if password_or_number(value, numeric) and not is_placeholder_at(text, m.start("value")):
            yield hit(m.start("value"), m.start("value") + len(value), FindingKind.PASSWORD, "context:next-line")


def _handed_over(text: str, lower: str) -> Iterator[Hit]:
    """ "Keep this safe: X", read in a window around each gate word: a pass of the phrase pattern over
    a mail that merely says "keep" cost 34 µs per 2 KB, the window a few."""
    matches: dict[int, re.Match[str]] = {}
    for gate in _HANDED_OVER_GATES:
        at = lower.find(gate)
        while at != -1:
            lo, hi = max(0, at - _GATE_BEFORE), min(len(lower), at + _GATE_AFTER)
            matches.update((m.start("value"), m) for m in _HANDED_OVER.finditer(lower, lo, hi))
            at = lower.find(gate, at + 1)
    for m in matches.values():
        end = m.end("value")
        if end < len(lower) and not lower[end].isspace() and lower[end] not in "\"'`\u201d\u2019":
            continue  # cut by the window's end: the token goes on, longer than any password
        value = text[m.start("value") : m.end("value")].rstrip(TRAILING)
        if password_shaped(value) and not is_placeholder_at(text, m.start("value")):
            yield hit(m.start("value"), m.start("value") + len(value), FindingKind.PASSWORD, "context:handed-over")


def _noted_values(text: str, lower: str) -> Iterator[Hit]:
    for m in after_words(lower, _NOTED_WORDS, _NOTED):
        value = text[m.start("value") : m.end("value")].rstrip(TRAILING)
        if (
            strongly_password_shaped(value)
            and any(c.isdigit() for c in value)
            and not is_placeholder_at(text, m.start("value"))
        ):
            yield hit(m.start("value"), m.start("value") + len(value), FindingKind.PASSWORD, "context:noted")


def _grouped_keys(text: str) -> Iterator[Hit]:
    if _MIDDLE_GROUP.search(text) is None:
        return
    for m in _GROUPED_KEY.finditer(text):
        if (m.start() and (text[m.start() - 1].isalnum() or text[m.start() - 1] in "_-")) or (
            m.end() < len(text) and (text[m.end()].isalnum() or text[m.end()] in "_-")
        ):
            continue
        groups = m.group().split("-")
        if len({len(group) for group in groups}) != 1:
            continue  # "2026-1234-ABCD": a date, a number and a word, not one key
        mixed = sum(1 for group in groups if any(c.isdigit() for c in group) and any(c.isalpha() for c in group))
        if mixed >= max(2, len(groups) / 2):  # random keys mix in most groups; "BOLT-M8X1-2500-ZINC" in one
            yield hit(m.start(), m.end(), FindingKind.SECRET, "format:product-key")
