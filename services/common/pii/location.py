"""Geographic coordinates: a point on a map says where a person is, lives or will be.

"We're at 40.7128, -74.0060", "coords 51°30'26"N 0°7'39"W", "lat: 48.8584 lon: 2.2945", a maps
link's "@40.7128,-74.0060,15z". A street address is `addresses`'; this is the same fact written as
numbers, precise to a few metres at four decimals.

Pairs of decimals are common in other mail (scores, prices, measurements), so a decimal pair counts
only when it could be a point (latitude within ±90, longitude within ±180, both with at least four
decimals, standing alone rather than in a longer list) and something says it is one: a word for a
place or a position nearby, "at"/"@" just before it, or a compass letter. Degrees, minutes and
seconds with a compass letter say so on their own.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from services.common.pii.model import FindingKind, Hit, hit

_DECIMAL = r"[+\-]?\d{1,3}\.\d{4,12}"
# Not inside a longer list of decimals: no digit, "." or another decimal beside it ("@40.71,-74.00,15z" is
# a map's point and its zoom).
_DECIMAL_PAIR = re.compile(
    rf"(?<![\w.\-+])(?<!\d,)(?<!\d, )(?P<lat>{_DECIMAL})\s*°?\s*(?P<ns>[NS]\b)?\s*[,;/ ]\s*"
    rf"(?P<lon>{_DECIMAL})\s*°?\s*(?P<ew>[EW]\b)?(?![\w.]|,\s?[+\-]?\d+\.)"
)
_DMS = re.compile(
    r"(?<![\w.])\d{1,3}\s*°\s*\d{1,2}\s*['\u2032\u2019]\s*(?:\d{1,2}(?:\.\d+)?\s*(?:\"|\u2033|''|\u201d)\s*)?[NSEW]\b"
    r"(?:[\s,;/]+\d{1,3}\s*°\s*\d{1,2}\s*['\u2032\u2019]\s*(?:\d{1,2}(?:\.\d+)?\s*(?:\"|\u2033|''|\u201d)\s*)?[NSEW]\b)?"
)
# "lat: 48.8584", "latitude=48.8584", "lng -74.0060": one half of a point, named just before its number.
_NAME_BEFORE = re.compile(
    r"\b(?:lat|latitude|lon|lng|longitude|breitengrad|langengrad|latitud|longitud)[\"']?\s*(?:[:=]|is)?\s*[\"']?"
    r"[+\-]?\d{1,3}$"
)
_HALF = re.compile(r"[+\-]?\d{1,3}\.\d{3,12}(?![\d.])")
_PLACE_WORDS = re.compile(
    r"\b(?:coord\w*|gps|geo\w*|lat|lng|lon|location|located|position|pin(?:ned)?|map\w*|where|address|meet\w*"
    r"|pick\w* (?:me|us) up|find (?:me|us)|we(?:'| a)re|i(?:'| a)m|home|live|staying|parked|standort|ubicaci\w+"
    r"|posizione|emplacement|position)\b"
)
_PLACE_WINDOW = 60
# Every decimal a point can have (three places or more), and every degree sign: what the patterns are
# anchored on, since their look-behinds and word boundaries would otherwise be tried at every character.
_DECIMAL_POINT = re.compile(r"\.\d{3}")


def _in_range(lat: str, lon: str) -> bool:
    return abs(float(lat)) <= 90 and abs(float(lon)) <= 180


def _number_start(text: str, point: int) -> int | None:
    """Where the number whose decimal point is at `point` starts: one to three digits, maybe a sign."""
    start = point
    while start > 0 and point - start < 3 and text[start - 1].isdigit():
        start -= 1
    if start == point:
        return None
    return start - 1 if start and text[start - 1] in "+-" else start


def _said_to_be_a_point(m: re.Match[str], lower: str) -> bool:
    before = lower[max(0, m.start() - _PLACE_WINDOW) : m.start()]
    return bool(
        m.group("ns") or m.group("ew") or re.search(r"(?:\bat|@|=|q=|ll=)\s*$", before) or _PLACE_WORDS.search(before)
    )


def coordinates(text: str, lower: str) -> Iterator[Hit]:
    done = 0
    for point in _DECIMAL_POINT.finditer(text) if "." in text else ():
        start = _number_start(text, point.start())
        if start is None or start < done:
            continue
        if pair := _DECIMAL_PAIR.match(text, start):
            done = pair.end()
            if _in_range(pair.group("lat"), pair.group("lon")) and _said_to_be_a_point(pair, lower):
                yield hit(pair.start(), pair.end(), FindingKind.LOCATION, "location:decimal")
        elif _NAME_BEFORE.search(lower, max(0, start - 30), point.start()) and (half := _HALF.match(text, start)):
            done = half.end()
            yield hit(half.start(), half.end(), FindingKind.LOCATION, "location:named")
    done = 0
    for degree in re.finditer("°", text) if "°" in text else ():
        start = _number_start(text, degree.start())
        if start is not None and start >= done and (dms := _DMS.match(text, start)):
            done = dms.end()
            yield hit(dms.start(), dms.end(), FindingKind.LOCATION, "location:dms")
