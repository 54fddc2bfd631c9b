"""National identity numbers and dates of birth.

Ids with a checksum or a distinctive shape are found anywhere (US SSN, UK National Insurance,
Spanish DNI/NIE, Italian codice fiscale, French NIR, Brazilian CPF); ids that are just digits or
letters and digits (passports, Dutch BSN, German tax id, Indian Aadhaar, Canadian SIN, driving
licences...) only next to a word that names them, so order numbers, tracking ids and ISBNs survive.
A date is a date of birth only next to a word that says so ("born", "DOB", "geboren am", "né le").
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from services.common.pii.model import FindingKind, Hit, bounded, hit, luhn_ok
from services.common.text_folding import fold_words

_SSN = re.compile(r"\d\d\d([\- ])\d\d\1\d{4}")
# UK NI number: two prefix letters (not D F I Q U V; second not O; not BG GB NK KN TN NT ZZ), six digits, A-D.
_UK_NINO = re.compile(r"[A-CEGHJ-PR-TW-Z][A-CEGHJ-NPR-TW-Z] ?\d\d ?\d\d ?\d\d ?[A-D]")
_NINO_BAD_PREFIXES = frozenset({"BG", "GB", "NK", "KN", "TN", "NT", "ZZ"})
_DNI = re.compile(r"\d{8}-?[A-Z]|[XYZ]-?\d{7}-?[A-Z]")
_DNI_LETTERS = "TRWAGMYFPDXBNJZSQVHLCKE"
_CODICE_FISCALE = re.compile(r"[A-Z]{6}\d\d[A-EHLMPR-T]\d\d[A-Z]\d{3}[A-Z]")
_NIR = re.compile(r"[12] ?\d\d ?(?:0[1-9]|1[0-2]|[2-9]\d) ?(?:\d\d|2[AB]) ?\d{3} ?\d{3} ?\d\d")
_CPF = re.compile(r"\d{3}\.\d{3}\.\d{3}-\d\d")
# Mexico's CURP: four letters, the birth date, sex, state, three consonants, a check pair (18 in all).
_CURP = re.compile(
    r"(?<![A-Z0-9])[A-Z][AEIOUX][A-Z]{2}\d{6}[HMX](?:AS|B[CS]|C[CLHMS]|D[FG]|G[RT]|HG|JC|M[CNS]|N[ETL]"
    r"|OC|PL|Q[TR]|S[PLR]|T[CSL]|VZ|YN|ZS|NE)[B-DF-HJ-NP-TV-Z]{3}[A-Z0-9]\d(?![A-Z0-9])"
)
_CURP_NAMED = re.compile(r"CURP|[Cc]urp")  # where it is named: read by its shape alone it cost 25 µs per 2 KB
# Mexico's RFC (tax id): four letters of the name, the birth date, a three-character suffix. "RFC" alone also
# names every internet standard ("RFC 2616 section 10"), so the value's own shape is required after it.
_MX_RFC = re.compile(
    r"(?i:\brfc)\b[\s:#=\-]{0,4}(?:(?i:is|es)\s+)?(?P<value>[A-ZÑ&]{3,4}\d\d(?:0[1-9]|1[0-2])(?:0[1-9]|[12]\d|3[01])[A-Z\d]{3})\b"
)
# A line of a passport's or an identity card's machine-readable zone (30, 36 or 44 characters of capitals,
# digits and "<" fillers): it holds the document's number, the holder's name, birth date and nationality.
_MRZ_LINE = re.compile(r"(?<![A-Z0-9<])[A-Z0-9<]{28,46}(?![A-Z0-9<])")

# Labels in scripts without spaces (longest first: "身份证号码" before "身份证"), and Russian ones, folded as
# the text is (Cyrillic look-alikes become Latin letters).
_IN_OTHER_SCRIPTS = "|".join(
    [fold_words(w) for w in ("주민등록번호", "주민번호", "身份证号码", "身份证号", "身份证", "身份證號碼", "身份證號")]
    + [fold_words(w) for w in ("身份證", "マイナンバー", "個人番号")]
    + [
        fold_words(w)
        for w in ("护照号码", "护照号", "護照號碼", "護照號", "旅券番号", "パスポート番号", "여권번호", "여권 번호")
    ]
    + [
        fold_words(w)
        for w in ("운전면허번호", "驾驶证号", "駕駛執照號碼", "免許証番号", "आधार नंबर", "आधार संख्या", "आधार")
    ]
    + [fold_words(w) + r"\b" for w in ("снилс", "инн")]
    + [fold_words(w) for w in ("מספר זהות", "תעודת זהות", "ת.ז", "رقم الهوية", "الرقم القومي", "کد ملی")]
)
# Words (folded, lower case) that name an identity document or number. No alternative starts with \b, so
# the engine can skip ahead on their first letters; `_word_start` checks the boundary instead.
_ID_LABELS = (
    r"passport|passeport|pasaporte|passaporto|paspoort|passaporte|reisepass|pass nr|pass-nr|paszport"
    r"|national insurance|nino\b|ni (?:number|no)|social security|ssn\b|sin\b|social insurance"
    r"|national id|identity (?:card|number|no)|id card|id number|id no|personalausweis|ausweis"
    r"|carte d.identite|carte nationale|numero de securite sociale|securite sociale|insee\b|nir\b"
    r"|dni\b|nie\b|nif\b|documento nacional|bsn\b|burgerservicenummer|sofinummer|steuer.?id"
    r"|steueridentifikationsnummer|identifikationsnummer|steuernummer|tax id|tax file number|tfn\b|tin\b|pps\b|pesel\b"
    r"|personnummer|henkilotunnus|cpr|codice fiscale|cpf\b|cnpj\b|curp\b|aadhaar|aadhar|pan\b|nhs\b|ppsn\b|ohip\b"
    r"|taxpayer identification|krankenversichertennummer|krankenversicherungsnummer"
    r"|sozialversicherungsnummer|rentenversicherungsnummer|versicherungsnummer|medicare"
    r"|medical record|mrn\b|patient (?:id|number|no)|health (?:insurance|card|plan) (?:number|no|id)"
    r"|member id|insurance id|versichertennummer|numero de securite|tessera sanitaria"
    r"|driver.?s? licen[cs]e|driving licen[cs]e|licence number|license number|itin\b|ein\b|employer identification"
    r"|dl ?(?:#|no\b|number|nr\b)"
    r"|fuhrerschein|permis de conduire"
    r"|residence permit|aufenthaltstitel|green card|alien number|a-number"
    # Asia, the Middle East, Latin America and Eastern Europe, in their own words where they are written
    r"|nric\b|hkid\b|hong kong id|my ?number card|individual number|resident registration|citizen id"
    r"|emirates id|teudat zehut|israeli id|cnic\b|nik\b|ktp\b|rut\b|cuil\b|cuit\b|tckn\b|kimlik"
    r"|ahv\b|cnp\b|egn\b|oib\b|jmbg\b|rodne cislo|f.dselsnummer|f.dselsnr\b\.?"
    r"|social(?= is\b| number| no\b| #|:)|personal (?:id|identity|identification)"
    r"|voter id|umid\b|philhealth|sss\b|carte vitale"
    r"|rijksregister|registre national|niss\b|insz\b|isikukood|asmens kodas|personas kods|emso\b|taj\b"
    r"|mykad\b|ic (?:number|no)|thai id|cccd\b|can cuoc|cmnd\b|nhi\b|ird (?:number|no)|mbi\b"
    r"|beneficiary (?:identifier|id)|known travell?er|ktn\b|redress (?:number|no)|global entry|nexus (?:id|number)"
    r"|"
    + _IN_OTHER_SCRIPTS
    # numbers an employer, a school or an insurer gives a person: each names one person to whoever holds it
    + r"|employee (?:id|number|no)|staff (?:id|number|no)|personnel number|personalnummer"
    r"|student (?:id|number|no)|matriculation number|matrikelnummer|policy (?:number|no)"
)
_LABEL = re.compile(_ID_LABELS)
# After the label: "number", "no.", "#", ":", "is" and the like, then the id itself (upper case and digits,
# in groups of up to 18, a Chinese resident id's length; a group without a digit may only be a short
# prefix or a check letter).
_LABELLED_VALUE = re.compile(
    r"(?i:(?:\s+(?:details|info|information|data|document|doc|booklet)[:,]?)?"
    r"(?:(?:\s+[a-z]+){1,3}?(?=\s+(?:number|nummer|numero|numer|no\.|nr\.?)\b))?"
    # a word or two for whom, then a colon ("PESEL pacjenta: …"), or the card's name in brackets ("(eGK)")
    r"(?:(?:\s+[^\W\d_]{2,12}){1,2}(?=\s*:))?(?:\s*\([^\W\d_]{2,8}\))?"
    r"(?:\s*(?:number|numbers|nr\.?|no\.?|num\.?|#|card|id|numero|nummer|numer|n°|no:|szam)"
    r"|\s*(?:(?:is|was|est|ist|lautet|es|e|reads)(?=\s)|['\u2019]s(?=\s)|[:=\-(#)]))*)\s*"
    r"(?P<value>(?:[A-Z]{1,3}[ \-])?(?i:[A-Z]{0,5}\d[A-Z0-9]{0,17}"
    r"(?:[ \-./](?:[A-Z]{0,2}\d[A-Z0-9]*|[A-Z](?=[ \-./]\d))){0,7}"
    r"(?:[ \-][A-Z](?![A-Za-z0-9]))?))(?![A-Za-z0-9])"
)
_MONTHS = (
    r"jan(?:uary|vier|uar|uari|eiro|naio)?|enero|gennaio|feb(?:ruary|ruar|ruari|rero|braio)?|fev(?:rier|ereiro)?"
    r"|mar(?:ch|s|z|zo|co)?|maerz|maart"
    r"|apr(?:il|ile)?|avr(?:il)?|abr(?:il)?|may|mai|mayo|maggio|maio|mei|jun(?:e|i|io|ho)?|juin|giugno"
    r"|jul(?:y|i|io|ho)?|juil(?:let)?|luglio|aug(?:ust|ustus)?|aout|ago(?:sto)?|sep(?:t|tember|tembre|tiembre)?"
    r"|set(?:tembre|embro)?|oct(?:ober|obre|ubre)?|okt(?:ober)?|ott(?:obre)?|out(?:ubro)?|nov(?:ember|embre|iembre)?"
    r"|dec(?:ember|embre)?|dez(?:ember|embro)?|dic(?:embre|iembre)?"
)
_DATE = re.compile(
    r"(?:\d{1,2}[./\-]\d{1,2}[./\-](?:\d{4}|\d\d)(?!\d)"  # 14/03/1985, 03-14-85, 14.3.1985
    r"|\d{4}[./\-]\d{1,2}[./\-]\d{1,2}(?!\d)"  # 1985-03-14
    r"|\d{1,2}(?:st|nd|rd|th|er|\.)?\s+(?:of\s+|de\s+)?(?:" + _MONTHS + r")\.?,?\s+(?:de\s+)?\d{4}"  # 14 March 1985
    r"|(?:" + _MONTHS + r")\.?\s+\d{1,2}(?:st|nd|rd|th)?,?\s+\d{4}"  # March 14, 1985
    r"|\d{4}\s*年\s*\d{1,2}\s*月\s*\d{1,2}\s*日"
    rf"|\d{{4}}\s*{fold_words('년')}\s*\d{{1,2}}\s*{fold_words('월')}\s*\d{{1,2}}\s*{fold_words('일')}"
    r"|\d{1,2}[\-/. ](?:" + _MONTHS + r")[\-/. ]\d{2,4}"  # 14-Mar-1985
    r"|\d{1,2}(?:st|nd|rd|th|er|\.)?\s+(?:of\s+|de\s+)?(?:" + _MONTHS + r")\b"  # birthday: 14 March
    r"|(?:" + _MONTHS + r")\.?\s+\d{1,2}(?:st|nd|rd|th)?\b"  # birthday: March 14
    r")",
)
# Birth in Chinese, Japanese and Korean, folded as the text is (Hangul as its letters), and written with no
# space before it ("私の生年月日は…").
_BIRTH_WORDS_CJK = ("生年月日", "出生日期", "出生年月日", "出生日", "誕生日", "生日", "생년월일", "출생일", "생일")
_BIRTH_IN_OTHER_SCRIPTS = "|".join(
    fold_words(word) for word in (*_BIRTH_WORDS_CJK, "дата рождения", "дата народження", "родился", "родилась")
)
_BIRTH = re.compile(
    r"date of birth|birth ?date|birthday|b-?day\b|d\.?o\.?b\b|born\b|nee? (?:le|en)\b|date de naissance"
    r"|geburtsdatum|geburtstag|geboren\b|geb\.|fecha de nacimiento|nacid[oa]\b|data di nascita"
    r"|nat[oa]\b|geboortedatum|data de nascimento|fodelsedatum|fodd|urodzon[ya]|data urodzenia|syntymaaika"
    r"|year of birth|b\.(?=\s*\d)|date_of_birth|dateofbirth|birth_?date|naci el\b|nasci em\b|nasci a\b"
    r"|dogum tarih\w*|" + _BIRTH_IN_OTHER_SCRIPTS
)
_BIRTH_WINDOW = 40
_BIRTH_VERBS = frozenset({"born", "geboren", "geb.", "ne le", "nee le", "ne en", "nee en", "nacido", "nacida",
                          "nato", "nata", "urodzony", "urodzona"})  # fmt: skip


def _word_start(lower: str, index: int) -> bool:
    """Labels are matched without a leading \\b (which would stop the regex engine skipping ahead).

    Chinese and Japanese write a label against the word before it ("您的身份证号码"): any place starts one.
    """
    return index == 0 or not lower[index - 1].isalnum() or _CJK.match(lower, index) is not None


_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]")


def _dni_ok(value: str) -> bool:
    compact = value.replace("-", "")
    digits = compact[:-1].replace("X", "0").replace("Y", "1").replace("Z", "2")
    return digits.isdigit() and _DNI_LETTERS[int(digits) % 23] == compact[-1]


def _nir_ok(value: str) -> bool:
    compact = value.replace(" ", "").replace("2A", "19").replace("2B", "18")
    return compact.isdigit() and len(compact) == 15 and 97 - int(compact[:13]) % 97 == int(compact[13:])


def _cpf_ok(value: str) -> bool:
    digits = [int(c) for c in value if c.isdigit()]
    if len(set(digits)) == 1:
        return False
    for n in (9, 10):
        check = sum(d * w for d, w in zip(digits[:n], range(n + 1, 1, -1), strict=False)) * 10 % 11 % 10
        if check != digits[n]:
            return False
    return True


def national_ids(text: str) -> Iterator[Hit]:
    """Ids whose shape or checksum is enough on their own."""
    for m in _SSN.finditer(text):
        area, group, serial = m.group()[:3], m.group()[4:6], m.group()[7:]
        valid = area not in ("000", "666") and area[0] != "9" and group != "00" and serial != "0000"
        if valid and bounded(text, m.start(), m.end()):
            yield hit(m.start(), m.end(), FindingKind.GOV_ID, "id:ssn")
    for m in _UK_NINO.finditer(text):
        if m.group()[:2] not in _NINO_BAD_PREFIXES and bounded(text, m.start(), m.end()):
            yield hit(m.start(), m.end(), FindingKind.GOV_ID, "id:uk-nino")
    for regex, check, name in (
        (_DNI, _dni_ok, "id:es-dni"),
        (_CODICE_FISCALE, lambda _: True, "id:it-codice-fiscale"),
        (_NIR, _nir_ok, "id:fr-nir"),
        (_CPF, _cpf_ok, "id:br-cpf"),
    ):
        for m in regex.finditer(text):
            if bounded(text, m.start(), m.end()) and check(m.group()):
                yield hit(m.start(), m.end(), FindingKind.GOV_ID, name)
    for m in _CURP.finditer(text) if _CURP_NAMED.search(text) else ():
        yield hit(m.start(), m.end(), FindingKind.GOV_ID, "id:mx-curp")
    for m in _MRZ_LINE.finditer(text) if "<<" in text else ():
        if "<<" in m.group() and sum(c.isalnum() for c in m.group()) >= 8:
            yield hit(m.start(), m.end(), FindingKind.GOV_ID, "id:mrz")
    for m in _MX_RFC.finditer(text) if "RFC" in text or "rfc" in text or "Rfc" in text else ():
        yield hit(m.start("value"), m.end("value"), FindingKind.GOV_ID, "id:mx-rfc")


# Two digits, or one between capitals where another follows: a licence's "ZK3U4VYOGV4" has no two in a row
# (every lone digit of prose looked for a label cost 11 µs a paragraph).
_DIGIT_RUN = re.compile(r"\d{2,}")
_LONE_DIGIT = re.compile(r"(?<=[A-Z])\d(?=[A-Z]{1,3}\d)")
_LONE_DIGIT_GATE = re.compile(r"[A-Z][0-9][A-Z]")  # no look-behind to try at every character
_BIRTH_STEMS = (
    "birth", "born", "bday", "b-day", "dob", "d.o.b", "b.", "nee ", "ne le", "ne en", "naissance", "geburt",
    "geboren", "geb.",
    "nacimiento", "nacid",
    "nascita", "nata ", "nato ", "geboorte", "nascimento", "fodelse", "fodd", "urodz", "syntym", "naci el",
    "nasci ", "dogum", *(fold_words(word) for word in (*_BIRTH_WORDS_CJK, "рожд", "народж", "родил")),
)  # fmt: skip


def labelled_ids(text: str, lower: str) -> Iterator[Hit]:
    """An id written after a word that names an identity document or number.

    Anchored on the id's digits: the label is looked for only just before each run of digits.
    """
    done = -1
    runs = list(_DIGIT_RUN.finditer(text))
    if _LONE_DIGIT_GATE.search(text) and _LONE_DIGIT.search(text):
        runs = sorted([*runs, *_LONE_DIGIT.finditer(text)], key=lambda run: run.start())
    for run in runs:
        if run.start() < done:
            continue
        lo = max(0, run.start() - 50)
        labels = [m for m in _LABEL.finditer(lower, lo, run.start()) if _word_start(lower, m.start())]
        if not labels:
            continue
        m = _LABELLED_VALUE.match(text, labels[-1].end())
        if m is None or not m.start("value") <= run.start() < m.end("value"):
            continue
        done = m.end("value")
        value = m.group("value")
        if sum(c.isalnum() for c in value) >= 6:
            start = m.start("value")
            yield hit(start, start + len(value), FindingKind.GOV_ID, "id:labelled")
    for m in re.finditer(r"\d{3}[ \-]\d{3}[ \-]\d{3}(?!\d)", text):  # Canadian SIN, in context
        if luhn_ok(m.group().replace(" ", "").replace("-", "")) and re.search(
            r"\bsin\b|social insurance|nas\b", lower[max(0, m.start() - 40) : m.start()]
        ):
            yield hit(m.start(), m.end(), FindingKind.GOV_ID, "id:ca-sin")
    if "my number" in lower:
        for m in _MY_NUMBER.finditer(lower):
            yield hit(m.start("value"), m.end("value"), FindingKind.GOV_ID, "id:jp-my-number")
    yield from _parts_of_ids(text, lower)
    yield from _vehicle_ids(text, lower)


# Japan's individual number, called "My Number" in English, written without "card": twelve digits, in
# threes of four as printed. Other numbers a person calls theirs are not twelve digits long.
_MY_NUMBER = re.compile(
    r"(?<![\w])my number\b(?:[^\S\n]*(?:is|was|:|#|=|-))?[^\S\n]*(?P<value>\d{4}([ \-]?)\d{4}\2\d{4})(?![\d\-])"
)


# "the last four of my SSN are 6789", "SSN ending in 6789": part of an id is enough to confirm an identity
# to a bank's phone line, so it is redacted like the whole.
_PART_OF_AN_ID = re.compile(
    r"(?:(?:last|final) (?:4|four|5|five)(?: digits| numbers)?|end(?:s|ing)?(?: in| with)?)\b"
    r"[^\d\n]{0,40}?(?<![\d\-])(?P<digits>\d{4,5})(?![\d\-])"
)


# "the last four of my social": the social security number, by its everyday short name.
_OWNED_SOCIAL = re.compile(r"\b(?:my|your|his|her|their|the client's|the customer's) social\b(?! media| club| event)")


def _parts_of_ids(text: str, lower: str) -> Iterator[Hit]:
    if "last" not in lower and "final" not in lower and "end" not in lower:
        return
    for m in _PART_OF_AN_ID.finditer(lower):
        window = max(0, m.start() - 50)
        labelled = any(_word_start(lower, label.start()) for label in _LABEL.finditer(lower, window, m.start("digits")))
        if labelled or _OWNED_SOCIAL.search(lower, window, m.start("digits")):
            yield hit(m.start("digits"), m.end("digits"), FindingKind.GOV_ID, "id:last-digits")


# A vehicle identification number names a car and so its keeper; 17 characters without I, O and Q.
# Only where a word names it: order ids of that shape are common, and only North America's VINs
# carry a check digit.
_VIN = re.compile(r"(?<![A-Za-z0-9])[A-HJ-NPR-Z0-9]{17}(?![A-Za-z0-9])")
_VIN_LABEL = re.compile(
    r"\b(?:vin|vehicle identification(?: number| no)?|chassis(?: number| no)?|fahrgestellnummer|fin"
    r"|numero de (?:chassis|serie)|telaio|bastidor)\b[^\n]{0,24}\Z"
)


# A number plate, after a word that names it: letters and digits in up to four groups ("M-AB 1234",
# "AB12 CDE", "7ABC123").
_PLATE = re.compile(
    r"\b(?:(?:car|licen[cs]e|number|registration|vehicle|reg) plate(?: number| no\.?)?|plate (?:number|no\.?)"
    r"|kennzeichen|nummernschild|plaque d.immatriculation|immatriculation|kenteken|matricula|targa)"
    r"(?:\s*(?:is|was|ist|est|es|e|:|#|=|-)\s*|\s+)(?P<value>[a-z0-9]{1,8}(?:[ \-][a-z0-9]{1,4}){0,3})(?![\w\-])"
)
_PLATE_GATES = ("plate", "kennzeichen", "nummernschild", "immatriculation", "kenteken", "matricula", "targa")


def _vehicle_ids(text: str, lower: str) -> Iterator[Hit]:
    if any(gate in lower for gate in _PLATE_GATES):
        for m in _PLATE.finditer(lower):
            value = m.group("value")
            alnum = [c for c in value if c.isalnum()]
            if 4 <= len(alnum) <= 10 and any(c.isdigit() for c in alnum) and any(c.isalpha() for c in alnum):
                yield hit(m.start("value"), m.end("value"), FindingKind.GOV_ID, "id:plate")
    for m in _VIN.finditer(text):
        value = m.group()
        if value.isdigit() or value.isalpha():
            continue
        if _VIN_LABEL.search(lower, max(0, m.start() - 60), m.start()):
            yield hit(m.start(), m.end(), FindingKind.GOV_ID, "id:vin")


def dates_of_birth(text: str, lower: str) -> Iterator[Hit]:
    """A date next to a word that makes it a birth date, in numeric and written formats of several languages."""
    if not any(stem in lower for stem in _BIRTH_STEMS):
        return
    for label in _BIRTH.finditer(lower):
        if not _word_start(lower, label.start()) and label.group()[0].isascii():
            continue  # a word in a script written without spaces has no edge to look for
        window_end = min(len(text), label.end() + _BIRTH_WINDOW)
        for m in _DATE.finditer(lower, label.end(), window_end):
            between = lower[label.end() : m.start()]
            if "." in between.replace("d.o.b.", "").strip(" .") and not re.fullmatch(r"[\s:.]*", between):
                break  # a sentence ended: the date belongs to something else
            yield hit(m.start(), m.end(), FindingKind.DATE_OF_BIRTH, "dob:context")
            break
        else:
            # "14/03/1985 (date of birth)": the label after the date
            if label.group().strip() in _BIRTH_VERBS:
                continue  # "14 March 2026, born of necessity": a verb after a date says nothing about it
            lo = max(0, label.start() - 30)
            for m in _DATE.finditer(lower, lo, label.start()):
                if re.fullmatch(r"[\s(,\-\u2013:]*(?:my |her |his |their )?", lower[m.end() : label.start()]):
                    yield hit(m.start(), m.end(), FindingKind.DATE_OF_BIRTH, "dob:context")
