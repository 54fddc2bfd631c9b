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
    r"|private) address(?: is| was|:| -)|\b(?:i|we|she|he|they) (?:now |still )?li(?:ve|ves) at|\blives at"
    r"|anschrift:?|wohne (?:in der|in|am)|j'habite (?:au|a|rue)|mon adresse est|vivo en|mi direccion es"
    r"|abito in|woon op|mijn adres is|moro na|\bhome:)\s*"
)
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
_TOWNS_THEN_POSTCODE = re.compile(
    r"(?:,?\s+(?:Dublin\s+)?\d{1,2}(?=,))?"  # a postal district: "Dublin 2", or the 2 after a town just read
    r"(?:,\s*" + _TOWN + r"){0,2},?\s+(?:" + _REGION_POSTCODE + r")"
)
_JAPANESE_WARDS = ("-ku", "-shi", "-cho", "-machi", "-mura", "-gun", "-ken")
# Japanese block addresses written in Latin letters: "1-2-3 Shibuya, Shibuya-ku, Tokyo 150-0002".
_JAPANESE = re.compile(
    r"\d{1,4}(?:-\d{1,4}){1,2},?\s+[A-Z][\w\-]+(?:,\s*[A-Z][\w\-]+-(?:ku|shi|cho|machi|mura|gun|ken))+"
    r"(?:,\s*[A-Z][\w\-]+)?(?:,?\s+\d{3}-\d{4})?"
)
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
    if any(stem in lower for stem in _CONTEXT_STEMS):
        for m in _CONTEXT.finditer(lower):
            end = m.end()
            stop = re.search(r"\.(?:\s|$)|\n|;|\)|$", text[end : end + 120])
            value_end = end + (stop.start() if stop else min(120, len(text) - end))
            value = text[end:value_end].rstrip(" ,")
            if any(c.isdigit() for c in value) and "@" not in value and len(value) >= 6:
                yield hit(end, end + len(value), FindingKind.ADDRESS, "address:context")
    if "box" in lower or "post" in lower or "apartado" in lower or "casella" in lower:
        for m in _PO_BOX.finditer(text):
            yield hit(m.start(), m.end(), FindingKind.ADDRESS, "address:po-box")
