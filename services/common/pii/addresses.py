"""Street addresses, in the shapes several countries write them.

* number first, English street type last: "1600 Pennsylvania Avenue NW", "221B Baker Street, London
  NW1 6XE", "14 Elm Grove, Leeds LS6 2AB";
* street type first, Romance style: "12 rue de la Paix, 75002 Paris", "Calle Mayor 5, 28013 Madrid",
  "Via Roma 10", "Rua Augusta 274";
* street name with a suffix, then the number: "Hauptstraße 12, 10115 Berlin", "Keizersgracht 123,
  1015 CJ Amsterdam", "Lindenstr. 5a";
* any name and number followed by a postcode and a town ("Unter den Linden 77, 10117 Berlin");
* whatever follows "my home address is" or "I live at", if it holds a number; P.O. boxes.

A postcode alone ("the SW1 office", "zip 94107") is an area, not a person, and survives.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from services.common.pii.model import FindingKind, Hit, hit
from services.common.text_folding import fold_words

_EN_TYPES = (
    r"Street|St|Avenue|Ave|Road|Rd|Boulevard|Blvd|Lane|Ln|Drive|Dr|Court|Ct|Way|Place|Pl|Terrace|Terr|Square|Sq"
    r"|Parkway|Pkwy|Highway|Hwy|Close|Crescent|Cres|Gardens|Gdns|Grove|Mews|Hill|Walk|Row|Circle|Cir|Trail|Trl"
    r"|Alley|Rise|Vale|Wharf|Quay|Embankment|Parade|Gate|Green|Heights|Park Road|Loop|Pike|Plaza"
)
_UK_POSTCODE = r"[A-Z]{1,2}\d[A-Z\d]? ?\d[A-Z]{2}"
_EIRCODE = r"[AC-FHKNPRTV-Y]\d[\dW] ?[0-9AC-FHKNPRTV-Y]{4}"
_US_TAIL = r"[A-Z]{2},? \d{5}(?:-\d{4})?"
_TAIL = (
    r"(?:,?\s+(?:Apt|Apartment|Suite|Ste|Unit|Flat|Floor|Fl|#)\.?\s*#?\s*\w+)?"
    r"(?:,\s*(?:Co\.\s*)?[A-Z][a-z][A-Za-z\-]*(?: [A-Z][a-z][A-Za-z\-]*){0,2}){0,2}"
    r"(?:,?\s+(?:" + _UK_POSTCODE + "|" + _US_TAIL + "|" + _EIRCODE + r"))?"
)
_NUMBER_FIRST = re.compile(
    r"\d{1,5}[A-Za-z]?(?:[ \-]\d{1,4})?(?:\s+[A-Z][A-Za-z'\-]+){1,4}\s+(?:" + _EN_TYPES + r")\b\.?"
    r"(?:\s+(?:NW|NE|SW|SE|N|S|E|W)\b)?" + _TAIL
)
# Continental postcodes: 10115, D-10115, 1015 CJ, 1100-048, 111 51.
_POSTCODE = r"(?:[A-Z]{1,2}-)?(?:\d{4}-\d{3}|\d{2}-\d{3}|\d{3} \d{2}|\d{4,5})(?:\s?[A-Z]{2}(?![a-z]))?"
_ROMANCE_TYPES = (
    r"rue|avenue|av\.|boulevard|bd|place|allee|impasse|chemin|quai|route|cours|calle|c/|avenida|avda\.?"
    r"|plaza|paseo|carrer|via|viale|piazza|piazzale|corso|largo|vicolo|rua|travessa|praca|alameda|estrada"
    r"|ul\.|ulica|al\.|aleja|os\.|osiedle"
)
_ROMANCE = re.compile(
    r"(?:(?P<number>\d{1,4}[a-zA-Z]?)(?:\s?(?:bis|ter))?,?\s+)?(?i:" + _ROMANCE_TYPES + r")\s+"
    r"(?:(?:de|del|della|delle|dei|di|da|do|dos|das|des|du|la|le|les|los|las|l'|d')\s*){0,2}"
    r"[A-Z][\w'\-]+(?:\s+(?:de |del |di |da |do |des |du |la |le )?[A-Z][\w'\-]+){0,3}"
    r"(?:,?\s*(?:n[o.º°]?\s*)?(?P<after>\d{1,4}[a-zA-Z]?)\b(?:/\d{1,4}[a-zA-Z]?\b)?)?"
    r"(?:,?\s+" + _POSTCODE + r"\s+[A-Z][\w\-]+)?"
)
_SUFFIXES = (
    r"strasse|straße|str\.|weg|gasse|allee|platz|ring|damm|ufer|chaussee|steig|pfad|markt|gracht|straat|laan"
    r"|plein|kade|singel|dijk|vej|gade|gatan|vagen|gata|veien|vei|katu|tie|utca|ulica"
)
_SUFFIXED = re.compile(
    r"[A-Z][\w'\-]*(?i:" + _SUFFIXES + r")\s+\d{1,4}[a-zA-Z]?(?:\s*[-/]\s*\d{1,4}[a-z]?)?"
    r"(?:,?\s+" + _POSTCODE + r"\s+[A-Z][\w\-]+)?"
)
_CONTEXT = re.compile(
    r"(?:(?:my|our|his|her|their|home|postal|mailing|street|billing|shipping|delivery|new|current|residential"
    r"|private) address(?: is| was|:| -)|\b(?:i|we|she|he|they) (?:now |still )?li(?:ve|ves) (?:at|on)"
    r"|\blives (?:at|on)"
    r"|anschrift:?|wohne (?:in der|in|am)|j'habite (?:au|a|rue)|mon adresse est|vivo en|mi direccion es"
    r"|abito in|woon op|mijn adres is|moro na|\bhome:)\s*"
)
_STREET_TYPE = re.compile(r"\b(?:" + _EN_TYPES + r")\b")
# The unit first, then a street with no number of its own: "Flat 12, MG Road, Bengaluru 560001".
_UNIT_FIRST = re.compile(
    r"\b(?:Flat|Apt|Apartment|Unit|Suite|Plot|House No|H\. ?No|Door No)\.?\s*#?\s*[\w/\-]{1,6},\s*"
    r"(?:[A-Z][\w.'\-]*\s+){1,4}(?:" + _EN_TYPES + r"|Nagar|Marg|Layout|Colony|Sector|Main|Cross)\b\.?"
    r"(?:,\s*[A-Z][\w\-]+){0,2}(?:,?\s+\d{5,6}\b)?"
)
_UNIT_GATES = ("flat", "apt", "apartment", "unit", "suite", "plot", "house no", "h. no", "h.no", "door no")
_PO_BOX = re.compile(
    r"(?:P\.?\s?O\.?\s+Box|Postfach|Apartado(?: de correos)?|Casella postale|Boite postale)\s+\d[\d ]*", re.IGNORECASE
)


_DIGITS = re.compile(r"\d+")
_UNIT_BEFORE = re.compile(
    r"(?i:flat|apt\.?|apartment|unit|suite|appartement|wohnung)\s*\d+[A-Za-z]?(?:,?\s+|\s*/\s*)\Z"
)  # "Flat 3, 12 Baker Street", "Unit 5/22 George St"
# What may follow a street once it is found: towns, then a region code and a postcode (Canada's
# "ON M5H 2N2", "TX 78767", "NSW 2000", an Eircode, "00-514 Warszawa"). Towns count only before a
# postcode: ", Bob will call" after a street is not a town.
_REGION_POSTCODE = (
    r"(?:[A-Z]{2,3}\s+)?(?:[A-Z]\d[A-Z] ?\d[A-Z]\d|\d{4,5}(?:-\d{4})?)(?![\w\-])|"
    + _UK_POSTCODE
    + "|"
    + _EIRCODE
    + r"|\d{2}-\d{3}\s+[A-Z][\w\-]+"
)
_TOWN = r"[A-Z][a-z][\w\-]*(?: [A-Z][a-z][\w\-]*){0,2}"
# Latin America writes a unit, a neighbourhood and a state between the street and the postcode, and the
# town after it: "Av. Insurgentes Sur 1602, Col. Crédito Constructor, 03940 Ciudad de México", "Rua
# Augusta, 1500, apto 42, São Paulo - SP, 01304-001".
_UNIT_OR_DISTRICT = (
    r"(?:apto|apt|depto|dpto|piso|bloco|casa|sala)\.?\s*\w{1,5}"
    r"|(?:Col\.|Colonia|Bairro|Barrio|Fracc\.|Urb\.)\s*" + _TOWN
)
_TOWNS_THEN_POSTCODE = re.compile(
    r"(?:,?\s+(?:Dublin\s+)?\d{1,2}(?=,))?"  # a postal district: "Dublin 2", or the 2 after a town just read
    r"(?:,\s*(?:" + _UNIT_OR_DISTRICT + r"))*"
    r"(?:,\s*" + _TOWN + r"(?:\s*-\s*[A-Z]{2})?){0,2},?\s+"
    r"(?:\d{5}-\d{3}(?![\w\-])|\d{5}\s+" + _TOWN + r"(?: de " + _TOWN + r")?(?![\w\-])|" + _REGION_POSTCODE + r")"
)
_JAPANESE_WARDS = ("-ku", "-shi", "-cho", "-machi", "-mura", "-gun", "-ken")
# Japanese block addresses written in Latin letters: "1-2-3 Shibuya, Shibuya-ku, Tokyo 150-0002".
_JAPANESE = re.compile(
    r"\d{1,4}(?:-\d{1,4}){1,2},?\s+[A-Z][\w\-]+(?:,\s*[A-Z][\w\-]+-(?:ku|shi|cho|machi|mura|gun|ken))+"
    r"(?:,\s*[A-Z][\w\-]+)?(?:,?\s+\d{3}-\d{4})?"
)
# Addresses in Chinese and Japanese characters run without spaces from the largest unit to the block:
# "〒150-0002 東京都渋谷区渋谷2-21-1", "北京市朝阳区建国路88号". Korean writes its units as words:
# "서울특별시 강남구 테헤란로 152". Both are found from the block's numbers backwards, so a text full of
# unit characters and no numbers costs one scan (a pattern that began at every unit cost 0.4 ms a
# character).
_CJK_LETTER = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff]")
_KANA = re.compile(r"[\u3040-\u30ff]")
_CJK_UNITS = "都道府県省市区區町村郡县縣"
_CJK_BLOCK = re.compile(
    r"(?<=[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff])\d{1,5}(?:(?:丁目|番地|番|号|號|之|弄|巷|-)\d{0,5}){1,4}(?:号|號|室)?"
)
_CJK_REACH = 40  # characters from the first unit to the block, at most
_CJK_TAIL = 12  # characters from the last unit to the block, at most
_CJK_NAME = 6  # characters of a unit's own name, at most
_POSTMARK = re.compile(r"\u3012\s?\d{3}-?\d{4}\s*\Z")
# Folding decomposes Hangul syllables into their letters (jamo), so the words are folded alike.
_ROAD_WORDS = (fold_words("로"), fold_words("길"))
_ROAD = re.compile(rf"(?:{fold_words('로')}|{fold_words('길')})\s?\d{{1,5}}(?:-\d{{1,4}})?(?![\d\-])")
_DISTRICT_ENDS = tuple(fold_words(w) for w in ("구", "군", "시"))
_PROVINCE_ENDS = tuple(fold_words(w) for w in ("시", "도"))
_HANGUL_WORD = re.compile(r"[\u1100-\u11ff\d]+\Z")


# Russian addresses: "ул. Тверская, д. 7, кв. 12, Москва 125009". Folding turns look-alike Cyrillic
# letters Latin, so the words are folded as the text is and the pattern runs on the folded lower case.
def _alternation(words: tuple[str, ...]) -> str:
    return "|".join(re.escape(fold_words(w)) for w in sorted(words, key=len, reverse=True))


_RU_STREETS = (
    *("улица", "ул", "проспект", "пр-т", "пр", "переулок", "пер", "шоссе", "набережная", "наб", "бульвар"),
    *("б-р", "площадь", "пл", "проезд", "микрорайон", "мкр", "тупик"),  # noqa: RUF001 - Cyrillic, as written
)
_RU_UNITS = ("квартира", "кв", "корпус", "корп", "строение", "стр", "офис", "оф", "к")
_RU_CAPITAL = r"[A-Z\u0401\u0410-\u042f]"  # a street's name is capitalised (after folding, Latin or Cyrillic)
_RU_ADDRESS = re.compile(
    rf"(?<!\w)(?:\d{{6}},?\s*(?:{_RU_CAPITAL}[\w\-]*,\s*)?)?(?i:{_alternation(_RU_STREETS)})(?:\.\s*|[^\W\d_]{{0,3}}\s+)"
    rf"{_RU_CAPITAL}[\w\-]*(?:\s+{_RU_CAPITAL}[\w\-]*)?,?\s*"
    rf"(?:(?i:{_alternation(('дом', 'д'))})\.?\s*\d{{1,4}}|\d{{1,3}}(?!\d))[^\W\d_]?(?:/\d{{1,4}})?(?![\w.]\d)"
    rf"(?:,?\s*(?i:{_alternation(_RU_UNITS)})\.?\s*\d{{1,4}}[^\W\d_]?)*"
    rf"(?:,\s*{_RU_CAPITAL}[\w\-]*(?:[\s\-]+{_RU_CAPITAL}[\w\-]*)?(?:,?\s*\d{{6}})?)?"
)
_RU_GATES = tuple(fold_words(w) for w in _RU_STREETS if len(w) <= 3 or w in ("шоссе", "бульвар", "тупик"))
_POSTCODE_AFTER = re.compile(r"[a-zA-Z]?,\s*" + _POSTCODE + r"\s+[A-Z][a-z][\w\-]+|[a-zA-Z]?,?\s+" + _UK_POSTCODE)
_NAME_BEFORE = re.compile(r"[A-Z][\w'.\-]+(?:\s+[\w'.\-]+){0,3}\s+\Z")
_ROMANCE_WORDS = frozenset(re.sub(r"\\.|\?", "", _ROMANCE_TYPES).replace(".", "").split("|"))
_SUFFIX_ENDINGS = tuple(re.sub(r"\\", "", _SUFFIXES).split("|"))
_CONTEXT_STEMS = (
    "address", "live", "anschrift", "wohne", "habite", "adresse", "vivo", "direccion", "abito", "woon", "adres",
    "moro", "home:",
)  # fmt: skip


def _clean_start(text: str, start: int) -> bool:
    return not start or not text[start - 1].isalnum()


def _around_numbers(text: str, lower: str) -> Iterator[Hit]:
    """Every street-and-number shape is anchored on its number: try each shape only where one could fit."""
    romance_possible = any(word in lower for word in _ROMANCE_WORDS)
    for number in _DIGITS.finditer(text):
        p, q = number.start(), number.end()
        if q - p > 5 or not _clean_start(text, p):
            continue
        m = _NUMBER_FIRST.match(text, p)
        if m:
            unit = _UNIT_BEFORE.search(text, max(0, p - 30), p)
            yield hit(unit.start() if unit else p, m.end(), FindingKind.ADDRESS, "address:number-first")
        lo = max(0, p - 70)
        words = lower[lo:p].split()
        if romance_possible and any(w.rstrip(".") in _ROMANCE_WORDS for w in words[-6:]):
            for m in _ROMANCE.finditer(text, lo, min(len(text), q + 40)):
                if (
                    m.start() <= p < m.end()
                    and (m.group("number") or m.group("after"))
                    and _clean_start(text, m.start())
                ):
                    yield hit(m.start(), m.end(), FindingKind.ADDRESS, "address:romance")
        elif romance_possible and (m := _ROMANCE.match(text, p)) and m.group("number"):
            yield hit(m.start(), m.end(), FindingKind.ADDRESS, "address:romance")
        if (words and words[-1].rstrip(".").endswith(_SUFFIX_ENDINGS)) or words[-1:] == ["str."]:
            for m in _SUFFIXED.finditer(text, max(0, p - 60), min(len(text), q + 40)):
                if m.start() <= p < m.end() and _clean_start(text, m.start()):
                    yield hit(m.start(), m.end(), FindingKind.ADDRESS, "address:suffixed")
        after = _POSTCODE_AFTER.match(text, q)
        if after:
            name = _NAME_BEFORE.search(text, max(0, p - 50), p)
            if name and _clean_start(text, name.start()):
                yield hit(name.start(), after.end(), FindingKind.ADDRESS, "address:postcode")


def _with_towns(text: str, found: Hit) -> Hit:
    """The hit extended over the towns and postcode written right after it, if a postcode ends them."""
    tail = _TOWNS_THEN_POSTCODE.match(text, found[1])
    return (found[0], tail.end(), *found[2:]) if tail else found


def addresses(text: str, lower: str) -> Iterator[Hit]:
    """Street addresses, whole (street, number, unit, town and postcode when written together)."""
    for found in _street_addresses(text, lower):
        yield _with_towns(text, found)


def _street_addresses(text: str, lower: str) -> Iterator[Hit]:
    yield from _around_numbers(text, lower)
    if any(ward in lower for ward in _JAPANESE_WARDS):
        for m in _JAPANESE.finditer(text):
            if _clean_start(text, m.start()):
                yield hit(m.start(), m.end(), FindingKind.ADDRESS, "address:japanese")
    if not text.isascii():
        yield from _cjk_addresses(text)
        if any(gate in lower for gate in _RU_GATES):
            for m in _RU_ADDRESS.finditer(text):
                yield hit(m.start(), m.end(), FindingKind.ADDRESS, "address:russian")
    if any(stem in lower for stem in _CONTEXT_STEMS):
        for m in _CONTEXT.finditer(lower):
            end = m.end()
            stop = re.search(r"\.(?:\s|$)|\n|;|\)|$", text[end : end + 120])
            value_end = end + (stop.start() if stop else min(120, len(text) - end))
            value = text[end:value_end].rstrip(" ,")
            if not any(c.isdigit() for c in value) or "@" in value or len(value) < 6:
                continue
            if m.group().rstrip().endswith(" on") and not _STREET_TYPE.search(value):
                continue  # "lives on Maple Drive, number 22", not "lives on 3 cups of coffee a day"
            yield hit(end, end + len(value), FindingKind.ADDRESS, "address:context")
    if any(gate in lower for gate in _UNIT_GATES):
        for m in _UNIT_FIRST.finditer(text):
            yield hit(m.start(), m.end(), FindingKind.ADDRESS, "address:unit-first")
    if "box" in lower or "post" in lower or "apartado" in lower or "casella" in lower:
        for m in _PO_BOX.finditer(text):
            yield hit(m.start(), m.end(), FindingKind.ADDRESS, "address:po-box")


def _cjk_addresses(text: str) -> Iterator[Hit]:
    if any(unit in text for unit in _CJK_UNITS):
        for block in _CJK_BLOCK.finditer(text):
            if (start := _cjk_start(text, block.start())) is not None:
                yield hit(start, block.end(), FindingKind.ADDRESS, "address:cjk")
    if any(road in text for road in _ROAD_WORDS):
        for road in _ROAD.finditer(text):
            if (start := _korean_start(text, road.start())) is not None:
                yield hit(start, road.end(), FindingKind.ADDRESS, "address:korean")


def _cjk_start(text: str, digits: int) -> int | None:
    """Where the units before a block's numbers begin, if a unit is near enough to make it an address."""
    first = digits
    while first > max(0, digits - _CJK_REACH) and _CJK_LETTER.match(text, first - 1):
        first -= 1
    units = [i for i in range(first, digits) if text[i] in _CJK_UNITS]
    if not units or digits - units[-1] > _CJK_TAIL:
        return None
    start = units[0]
    while start > max(first, units[0] - _CJK_NAME) and not _KANA.match(text, start - 1):
        start -= 1  # the first unit's name, up to a kana particle ("住所は|大阪府")
    postmark = _POSTMARK.search(text, max(0, start - 12), start)
    return postmark.start() if postmark else start


def _korean_start(text: str, road: int) -> int | None:
    """The district (and province) words before a road's: "부산광역시 해운대구 해운대해변로 264"."""
    words: list[tuple[int, str]] = []
    end = road
    for _ in range(3):
        word = _HANGUL_WORD.search(text, max(0, end - 30), end)
        if word is None:
            break
        words.append((word.start(), word.group()))
        end = word.start()
        if end == 0 or not text[end - 1].isspace():
            break
        end -= 1
    if len(words) < 2 or not words[1][1].endswith(_DISTRICT_ENDS):
        return None  # words[0] is the road's own name; the district's word comes before it
    if len(words) == 3 and words[2][1].endswith(_PROVINCE_ENDS):
        return words[2][0]
    return words[1][0]
