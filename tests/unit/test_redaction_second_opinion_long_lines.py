"""detect-secrets reads a long line in overlapping pieces, and still sees every value whole.

Its keyword patterns open with a lookahead that reads to the end of the line, so one line repeating
"Password: <b>" cost 36 s for 256 KB (bench_redaction's adversarial row prints the cost now). A line
over 2,048 characters is read in pieces of 1,024 that overlap by 256: a value on any boundary is in
one piece whole.
"""

from __future__ import annotations

import pytest

from services.common.redaction_second_opinion import detect_secrets_hits

FILLER = "lorem ipsum dolor sit amet " * 200
SECRET = "Zx9Qw8Er7Ty6Ui5Op4"


@pytest.mark.parametrize("shift", range(0, 1_600, 23))
def test_a_keyword_value_is_found_whole_wherever_it_falls_on_a_long_line(shift: int) -> None:
    # Given a line far longer than a piece, with a keyword and its value at every offset across boundaries
    line = FILLER[: 2_100 + shift] + f" api_key: '{SECRET}' " + FILLER[:900]
    # When detect-secrets' patterns read it
    found = [line[start:end] for start, end, *_ in detect_secrets_hits(line)]
    # Then the value is one hit, whole
    assert SECRET in found


def test_a_short_line_is_read_whole() -> None:
    # Given an ordinary config line  When read  Then its value is the one hit
    line = "db_pass = 'Hunter2Hunter2'"
    assert [line[start:end] for start, end, *_ in detect_secrets_hits(line)] == ["Hunter2Hunter2"]
