"""A password written with markup around its label: Markdown, HTML cells, an emoji, a pipe (the eleventh
probe's fourth round).

Written before the code: 25 shapes of how chat, HTML mail and exports set a label off from its value,
in twelve languages. 5 came through: "**Password:** `Orchid#2026`" (Markdown's bold closes after the
colon), "<td>Password</td><td>Winter#2025</td>" (a table cell ends between them), "🔑 Tulip!2027"
(a key's emoji as the label), "pw 👉 Kestrel77!" (a pointing hand as the link) and
"password|Winter#2025" (a pipe). All five are now caught, with their neighbours: "<b>Password</b>: X",
"<dt>Password</dt><dd>X</dd>", "password ➡ X". The look-alikes are header rows, hints and field lists.
"""

from __future__ import annotations

import pytest

from services.common.pii.model import FindingKind
from services.common.redaction import RedactionMode, Redactor
from tests.helpers import assert_value_replaced

MODES = pytest.mark.parametrize("mode", list(RedactionMode))


@MODES
@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("**Password:** `Orchid#2026`", "Orchid#2026"),
        ("<td>Password</td><td>Winter#2025</td>", "Winter#2025"),
        ("<b>Password</b>: Winter#2025", "Winter#2025"),
        ("<dt>Password</dt><dd>Winter#2025</dd>", "Winter#2025"),
        ("\U0001f511 Tulip!2027", "Tulip!2027"),
        ("\U0001f511: Tulip!2027", "Tulip!2027"),
        ("pw \U0001f449 Kestrel77!", "Kestrel77"),
        ("password \u27a1 Kestrel77!", "Kestrel77"),
        ("password|Winter#2025", "Winter#2025"),
        ("alice|password|Winter#2025", "Winter#2025"),
    ],
)
def test_the_value_is_redacted(mode: RedactionMode, text: str, value: str) -> None:
    # Given a password set off from its label by markup  When redacted  Then it is gone
    assert_value_replaced(mode, text, FindingKind.PASSWORD, value)


@MODES
@pytest.mark.parametrize(
    "text",
    [
        "<tr><th>Password</th><th>Notes</th></tr>",
        "<th>Password</th><th>Expires</th>",
        "<td>Password</td><td>required</td>",
        "<td>Password</td><td>Changed yesterday</td>",
        "<b>Password</b>: see the vault",
        '<label>Password</label><span class="hint">at least 12 characters</span>',
        "<b>Token</b> expired",
        "**Password:** required",
        "\U0001f511 Keys are on the hook",
        "\U0001f511 Key takeaways: growth 20%",
        "name|password|email",
        "user|password|last_login_2024",
    ],
)
def test_look_alikes_come_through(mode: RedactionMode, text: str) -> None:
    # Given markup around a credential word with no value after it  When redacted  Then nothing is found
    assert Redactor(mode).redact(text).findings == ()
