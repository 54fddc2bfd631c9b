"""An identity number, a birth date or a card's expiry in a pasted table, under its column's header.

Every row's cell under an "SSN", "PESEL", "DOB" or "Expiry" header.

A table states its values with no label beside them: "| Maya Collins | 123-45-6789 | 2000-07-12 |" under
"| Name | SSN | DOB |", or a CSV export's "Liu Yang,330106197507214123,…" under "姓名,身份证号,手机号". The
header names the column once (`tables.column_values` reads the cells below it); a cell is taken when it
holds a digit, so a column of names under a mislabelled header stays.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterator

from services.common.pii.model import FindingKind, Hit, hit
from services.common.pii.tables import column_values
from services.common.text_folding import fold_words

_ID_HEADERS = (
    "ssn", "social security", "social security number", "sin", "nino", "ni number", "national insurance",
    "national id", "id number", "pesel", "personnummer", "cpf", "cnpj", "curp", "rfc", "dni", "nie", "nif", "bsn",
    "aadhaar", "aadhar", "pan", "passport", "passport no", "passport number", "tax id", "tin", "itin", "nric",
    "codice fiscale", "steuer-id", "steuerid", "tc kimlik", "tckn", "mrn", "patient id", "nhs number",
    "medicare", "身份证号", "身份证号码", "身份证", "身份證號", "身份證", "マイナンバー", "個人番号", "주민등록번호",
    "护照号", "护照号码", "旅券番号", "여권번호", "снилс", "инн", "паспорт",
)  # fmt: skip
_BIRTH_HEADERS = (
    "dob", "date of birth", "birth date", "birthdate", "birthday", "born", "geburtsdatum", "geb.",
    "fecha de nacimiento",
    "data de nascimento", "date de naissance", "data di nascita", "geboortedatum", "data urodzenia", "生年月日",
    "出生日期", "生日", "생년월일", "дата рождения",
)  # fmt: skip
_EXPIRY_HEADERS = (
    "expiry",
    "exp",
    "exp_date",
    "expiry_date",
    "expiration",
    "expiration date",
    "valid thru",
    "cvv",
    "cvc",
)


def _cell_names(names: tuple[str, ...]) -> str:
    return "|".join(re.escape(fold_words(name)) for name in sorted(names, key=len, reverse=True))


# A header cell that is the name, maybe with "no."/"number"/"#", between separators or a line's ends.
_HEADER_CELL = re.compile(
    rf"(?:^|(?<=[|\t;,]))[^\S\n]*(?P<cell>(?P<id>{_cell_names(_ID_HEADERS)})|(?P<birth>{_cell_names(_BIRTH_HEADERS)})"
    rf"|(?P<card>{_cell_names(_EXPIRY_HEADERS)}))"
    r"(?:[^\S\n]*(?:no\.?|number|nr\.?|#))?[^\S\n]*(?=[|\t;,]|$)",
    re.MULTILINE,
)
_SEPARATOR = re.compile(r"[|\t;,]")
_RULE = re.compile(r"[\s+\-=|:]*-[\s+\-=|:]*")


def _table_heads(lower: str) -> Iterator[tuple[int, int]]:
    """Lines whose next line has as many of one separator: where a table may begin (prose's commas rarely agree)."""
    lines = lower.split("\n")
    start = 0
    for index, (line, following) in enumerate(itertools.pairwise(lines)):
        end = start + len(line)
        if _RULE.fullmatch(following) and index + 2 < len(lines):
            following = lines[index + 2]  # "+------+------+" under a header, as a database's shell draws it
        for separator in "|\t;,":
            if (count := line.count(separator)) and following.count(separator) == count:
                yield start, end
                break
        start = end + 1


def id_columns(text: str, lower: str) -> Iterator[Hit]:
    """Each cell holding a digit under a header that names an identity number or a birth date."""
    if "\n" not in text or _SEPARATOR.search(text) is None:
        return
    rows_read: list[int] = []
    for m in (m for start, end in _table_heads(lower) for m in _HEADER_CELL.finditer(lower, start, end)):
        if any(start <= m.start() < end for start, end in zip(rows_read[::2], rows_read[1::2], strict=True)):
            continue
        kind = (
            FindingKind.GOV_ID if m.group("id") else FindingKind.DATE_OF_BIRTH if m.group("birth") else FindingKind.CARD
        )
        for start, end in column_values(text, m.start("cell"), m.end("cell"), rows_read):
            if any(c.isdigit() for c in text[start:end]):
                yield hit(start, end, kind, "context:id-column")
