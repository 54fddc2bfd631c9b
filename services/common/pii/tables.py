"""A credential column in a pasted table: every row's cell under a "Password" (or "api_key") header.

A spreadsheet pasted into a mail, a CSV export or a Markdown table states its passwords with no
link at all: the header names the column once, and each row's value sits below it in the same
position. `credentials` finds the header word as it finds any credential word; this module reads
the column under it, row by row, while the rows keep the header's shape (as many cells, the same
separator). Markdown's "|---|---|" rule under the header is skipped.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

_SEPARATORS = "|\t;,"
_RULE_CELL = re.compile(r"\s*:?-{3,}:?\s*")
_MAX_ROWS = 500
_BOX_RULE = re.compile(r"[ \t]*\+[+\-=]*\+[ \t]*")


def _cells(line: str, separator: str) -> list[tuple[int, int]]:
    """Cell spans of `line` (stripped of spaces), without Markdown's empty outer cells."""
    spans: list[tuple[int, int]] = []
    start = 0
    for index in range(len(line) + 1):
        if index == len(line) or line[index] == separator:
            cell = line[start:index]
            left = start + len(cell) - len(cell.lstrip())
            spans.append((left, left + len(cell.strip())))
            start = index + 1
    if separator == "|" and len(spans) > 1:
        if spans[0][0] == spans[0][1]:
            spans = spans[1:]
        if spans and spans[-1][0] == spans[-1][1]:
            spans = spans[:-1]
    return spans


def _is_header_cell(cell: str) -> bool:
    return len(cell) <= 40 and len(cell.split()) <= 4


def column_values(text: str, start: int, end: int, rows_read: list[int]) -> Iterator[tuple[int, int]]:
    """If text[start:end] is a header cell of a table, the spans of the non-empty cells under it.

    The offset where the rows begin and the one where they end are appended to `rows_read`, so the
    caller reads no row as a header again ("pin;" on every line once cost a scan of 500 rows each).
    """
    line_start = text.rfind("\n", 0, start) + 1
    line_end = text.find("\n", end)
    if line_end == -1:
        return
    line = text[line_start:line_end]
    separator = next((s for s in _SEPARATORS if s in line), None)
    if separator is None:
        return
    header = _cells(line, separator)
    cell = (start - line_start, end - line_start)
    position = next((i for i, (s, e) in enumerate(header) if s <= cell[0] and cell[1] <= e), None)
    if position is None or len(header) < 2 or not all(_is_header_cell(line[s:e]) for s, e in header):
        return  # a sentence with commas ("reset your password, then log in") is no header
    if len(line[header[position][0] : header[position][1]].split()) > 2:
        return  # "Password", "DB password", "API key" name a column; "Reset your password" is a row's cell
    row_start = line_end + 1
    rows_read += [row_start, row_start]
    for _ in range(_MAX_ROWS):
        row_end = text.find("\n", row_start)
        row_end = len(text) if row_end == -1 else row_end
        row = text[row_start:row_end]
        if _BOX_RULE.fullmatch(row) and row_end < len(text):
            row_start = row_end + 1  # "+------+------+": a database shell's rule between rows
            continue
        cells = _cells(row, separator)
        if len(cells) != len(header):
            return
        rows_read[-1] = row_end
        if not all(_RULE_CELL.fullmatch(row[s:e] or "---") for s, e in cells):
            value_start, value_end = cells[position]
            if value_end > value_start:
                yield row_start + value_start, row_start + value_end
        if row_end >= len(text):
            return
        row_start = row_end + 1
