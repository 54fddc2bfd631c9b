"""An e-mail address and its password written as a pair, with no word that names the password.

"alice@example.com:Hunter2!!", "alice@example.com / Hunter2!!", "gmail - alice@gmail.com - Hunter2!!":
how password dumps, notes and spreadsheets keep a login. The address alone says nothing secret; the
token after it, one separator away and shaped like a password (letters with digits or symbols), is
the half that opens the account. A glued ":" or ";" is the combo-list form; a spaced separator or
a tab is the note form. An address followed by another address, a URL, a date or a word is not a
pair.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from services.common.pii.contact import emails
from services.common.pii.model import FindingKind, Hit, hit, is_placeholder_at
from services.common.pii.stated_values import TRAILING, password_shaped

# After the address: a glued ":" or ";", a spaced "/", "|", ":", hyphen, en or em dash, "->", "=>", or tabs.
_SEPARATOR_THEN_VALUE = re.compile(
    r"(?:[:;]|[ \t]+(?:[/|:\-\u2013\u2014]|->|=>)[ \t]+|\t+)(?P<value>[^\s\"'<>]{6,64})(?=\s|$|[\"'<>)\]])"
)


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
