"""Split a (redacted) e-mail into parts by authorship, and parts into sentences.

Authority follows authorship: only the mailbox owner's own words may become the owner's
preferences. Quoted replies, forwarded mail, signature blocks and text hidden in HTML are someone
else's words even inside the owner's message, so they are marked external. When in doubt a part is
external: a missed preference is cheaper than an attacker's text carrying the owner's authority.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from enum import StrEnum
from html.parser import HTMLParser

from services.worker.domain.relayed_words import announces_someone_elses_words


class PartKind(StrEnum):
    SUBJECT = "subject"
    BODY = "body"
    QUOTED = "quoted"
    FORWARDED = "forwarded"
    SIGNATURE = "signature"
    HIDDEN = "hidden"


@dataclass(frozen=True)
class EmailPart:
    """A run of text with one authorship; ``by_owner`` only for the owner's own visible words."""

    kind: PartKind
    text: str
    by_owner: bool


# Mail clients mark where another message begins in their user's language; each marker below is
# one client's wording (Gmail, Outlook, Apple Mail, Thunderbird) in the languages we meet.
_FORWARD = re.compile(
    r"^\s*(?:[-_=*]{2,}\s*)?(?:forwarded message|weitergeleitete nachricht|message transf[eé]r[eé]"
    r"|mensaje reenviado|messaggio inoltrato|doorgestuurd bericht|mensagem encaminhada|wiadomo[sś][cć] przekazana"
    r"|vidarebefordrat meddelande|videresendt (?:melding|meddelelse)|v[aä]litetty viesti|пересланное сообщение)"
    r"\s*(?:[-_=*]{2,})?\s*$"
    r"|^\s*(?:begin forwarded message|anfang der weitergeleiteten nachricht|d[eé]but du message (?:r[eé]exp[eé]di[eé]"
    r"|transf[eé]r[eé])|inicio del mensaje reenviado|inizio messaggio inoltrato|begin doorgestuurd bericht)\s*:",
    re.I,
)
# "On <date>, <name> wrote:" and its translations; the attribution may wrap, so only its end is matched.
_ATTRIBUTION = re.compile(
    r"\b(?:wrote|writes|schrieb|a [eé]crit|escribi[oó]|ha scritto|schreef|escreveu|napisa[lł](?:\(a\))?|skrev"
    r"|kirjoitti|[ií]rta|napsal|napísal|написал(?:\(\u0430\))?|писал|пише|έγραψε|yazd[\u0131i]|menulis|đã viết)"
    r"\s*[:\uff1a]\s*$"
    r"|(?:写道|寫道|のメッセージ|님이 작성|כתב|كتب)\s*[:\uff1a]\s*$"  # scripts where \b finds no word's edge
    r"|\b(?:schrieb|schreef)\b.{0,160}:\s*$",  # German and Dutch put the name after the verb
    re.I,
)
# A banner line ("-----Original Message-----", "----- Ursprüngliche Nachricht -----", or any other
# short text between dashes): what follows is another message, or at least not plainly the owner's.
_BANNER = re.compile(r"^\s*[-_=*]{3,}\s*[^-_=*\n]{3,60}?\s*[-_=*]{3,}\s*$")
# "From:" in the languages of the clients we meet.
_FROM = r"(?:from|von|de|da|van|od|fr[aå]n|fra|l[aä]hett[aä]j[aä]|remitente|от)"
_REPLY_HEADER = re.compile(rf"^\s*{_FROM}\s*:\s.+\s(?:sent|date):\s", re.I)
# The first line of an Outlook-style header block, and the line after it.
_OUTLOOK_FROM = re.compile(rf"^\s*{_FROM}\s*:\s", re.I)
_OUTLOOK_NEXT = re.compile(
    r"^\s*(?:sent|date|to|gesendet|datum|an|envoy[eé]|[aà]|enviado|fecha|para|inviato|data|verzonden|aan"
    r"|wys[lł]ano|skickat|till|sendt|til|l[aä]hetetty|отправлено|кому)\s*:\s",
    re.I,
)
_SIGNATURE_DELIMITER = re.compile(r"^\s*(?:--|—|_{3,}|-{3,})\s*$")
_SIGN_OFF = re.compile(
    r"^\s*(?:best|best regards|kind regards|warm regards|regards|cheers|thanks|many thanks|thank you|"
    r"sincerely|yours|br|talk (?:soon|then)|see you|sent from my \w+)\b[\w\s!.,]*$",
    re.I,
)


def _is_sign_off(line: str) -> bool:
    """ "Best,", "Thanks!", "Talk then" — but not "Thanks for the update." (a sentence goes on)."""
    stripped = line.strip()
    return bool(_SIGN_OFF.match(stripped)) and len(stripped.split()) <= 3 and not stripped.endswith(".")


_HTML_HINT = re.compile(r"<(?:html|body|div|p|span|br|table|td|font|style|blockquote)\b", re.I)
# What clients put before the subject of a reply or a forward, in the languages we meet ("Re[2]:",
# "AW:", "WG:", "TR:", "RV:", "SV:", "Odp:", "回复:"), and the tags gateways add to outside mail
# ("[External]", "[SPAM]"). Such a subject was written by whoever wrote the first message.
_REPLY_OR_FORWARD = (
    r"re|fw|fwd|aw|wg|tr|rv|sv|vs|vb|odp|pd|enc|res|antw|doorst|vl|ynt|ilt|fs|rif|r|i|\u043e\u0442\u0432\u0435\u0442"
    r"|\u043e\u0442\u0432|\u043f\u0435\u0440\u0435\u0441\u043b"  # Russian: ответ, отв, пересл
)
_CJK_REPLY_OR_FORWARD = "回复|回覆|答复|转发|轉寄|返信|転送|답장|전달"
_GATEWAY_TAG = (
    r"external|ext|extern|externe|externo|esterno|spam|suspected spam|possible spam|suspicious|phishing|caution"
)
_FORWARD_PREFIX = re.compile(
    r"(?<![^\W\d_])(?:fw|fwd|wg|tr|rv|enc|pd|vl|doorst|i|vb|\u043f\u0435\u0440\u0435\u0441\u043b)\s*(?:\[\d+\])?\s*[:\uff1a]"
    r"|转发|轉寄|転送|전달",
    re.I,
)
_OTHERS_PARTS = frozenset({PartKind.QUOTED, PartKind.FORWARDED})
_SUBJECT_PREFIX = re.compile(
    rf"^\s*(?:(?:{_REPLY_OR_FORWARD})\s*(?:\[\d+\]|\(\d+\)|\^\d+)?\s*[:\uff1a]\s*"
    rf"|(?:{_CJK_REPLY_OR_FORWARD})\s*[:\uff1a]\s*"
    rf"|\[\**(?:{_GATEWAY_TAG})\**\]\s*)+",
    re.I,
)


def split_email(subject: str, body: str, from_owner: bool) -> list[EmailPart]:
    """Parts of an e-mail in reading order. Empty parts are dropped."""
    parts: list[EmailPart] = []
    prefix = _SUBJECT_PREFIX.match(subject)
    subject_text = subject[prefix.end() :].strip() if prefix else subject.strip()
    if subject_text:  # a reply's or a forward's subject is the first sender's words, not the owner's
        parts.append(EmailPart(PartKind.SUBJECT, subject_text, from_owner and prefix is None))
    if _HTML_HINT.search(body):
        html = html_to_text(body)
        parts += _split_plain(html.visible, from_owner)
        if html.quoted:
            parts.append(EmailPart(PartKind.QUOTED, html.quoted, False))
        parts += [EmailPart(PartKind.HIDDEN, text, False) for text in html.hidden if text.strip()]
    else:
        parts += _split_plain(body, from_owner)
    if prefix and _FORWARD_PREFIX.match(prefix.group().lstrip()) and not any(p.kind in _OTHERS_PARTS for p in parts):
        # A forward (its outermost prefix: "Re: Fwd:" is the owner's reply) whose client marked nothing
        # in the body: the body is the forwarded message, not the owner's words.
        parts = [EmailPart(PartKind.FORWARDED, p.text, False) if p.kind is PartKind.BODY else p for p in parts]
    return parts


# The same shapes in any language, for the clients and languages the lists above do not know: an
# attribution is a line that ends in a colon and names an address, or a date and a time; a header
# block is a short label, a colon and an address, then another "label: value" line.
_ADDRESS = r"(?:<[^<>\n]*@[^<>\n]*>|\[EMAIL[^\]\n]*\])"
_ENDS_IN_COLON = re.compile(r"[:\uff1a]\s*$")
_NAMES_ADDRESS = re.compile(_ADDRESS)
_DATE_AND_TIME = re.compile(
    r"(?<!\d)(?:19|20)\d{2}(?!\d).*?(?<!\d)\d{1,2}[:.]\d{2}(?!\d)|(?<!\d)\d{1,2}[:.]\d{2}(?!\d).*?(?<!\d)(?:19|20)\d{2}(?!\d)"
)
_LABEL = r"^\s*[^\W\d_][^\W\d_ .'-]*(?:[ .'-][^\W\d_]+){0,2}\s*[:\uff1a]"
_LABELLED_ADDRESS = re.compile(rf"{_LABEL}[^\n]*{_ADDRESS}")
_LABELLED_VALUE = re.compile(rf"{_LABEL}\s*\S")


def _is_attribution_in_any_language(line: str, following: str) -> bool:
    if len(line) > 300:
        return False
    if _ENDS_IN_COLON.search(line) and (_NAMES_ADDRESS.search(line) or _DATE_AND_TIME.search(line)):
        return True
    return bool(_LABELLED_ADDRESS.match(line) and _LABELLED_VALUE.match(following))


def _starts_another_message(line: str, following: str, previous_blank: bool) -> bool:
    if _REPLY_HEADER.match(line) or _BANNER.match(line):
        return True
    if len(line) <= 200 and _announces_block(line):
        return True
    if len(line) <= 300 and _ATTRIBUTION.search(line):
        return True
    if _OUTLOOK_FROM.match(line) and (previous_blank or _OUTLOOK_NEXT.match(following)):
        return True
    return _is_attribution_in_any_language(line, following)


# A Markdown code fence or a forum's [quote] tag opening a pasted block, and what closes each.
_OPENS_BLOCK_QUOTE = re.compile(r"^\s*(```|~~~|\[quote(?:=[^\]]*)?\])", re.I)
_CLOSING = {"```": re.compile(r"```"), "~~~": re.compile(r"~~~"), "[qu": re.compile(r"\[/quote\]", re.I)}


def _announces_block(line: str) -> bool:
    """A line of the owner's that introduces someone else's text below it: "Copying their text
    verbatim:", "Message from Bob below", "Here is what the bank sent:". The line goes with the text
    it introduces, as an attribution does ("On Monday, Bob wrote:")."""
    stripped = line.strip()
    if not stripped or not (_ENDS_IN_COLON.search(stripped) or re.search(r"\bbelow\W*$", stripped, re.I)):
        return False
    return announces_someone_elses_words(stripped)


def _split_plain(body: str, from_owner: bool) -> list[EmailPart]:
    mode = PartKind.BODY
    runs: list[tuple[PartKind, list[str]]] = []
    previous_blank = True
    lines = body.replace("\r\n", "\n").split("\n")
    pasted_until: re.Pattern[str] | None = None  # the closing fence or tag of a pasted block
    for index, line in enumerate(lines):
        kind = mode
        following = lines[index + 1] if index + 1 < len(lines) else ""
        if pasted_until is not None:  # inside a code fence or a [quote]: pasted, not said
            kind = PartKind.QUOTED
            pasted_until = None if pasted_until.search(line) else pasted_until
        elif mode is PartKind.BODY and (opening := _OPENS_BLOCK_QUOTE.match(line)):
            kind = PartKind.QUOTED
            closing = _CLOSING[opening.group(1).lower()[:3]]
            pasted_until = None if closing.search(line, opening.end()) else closing
        elif mode is not PartKind.FORWARDED and _FORWARD.match(line):
            mode = kind = PartKind.FORWARDED
        elif mode is PartKind.BODY and _starts_another_message(line, following, previous_blank):
            mode = kind = PartKind.QUOTED
        elif mode is PartKind.BODY and _SIGNATURE_DELIMITER.match(line):
            mode = kind = PartKind.SIGNATURE
            line = ""
        elif mode is PartKind.BODY and _is_sign_off(line):
            mode = kind = PartKind.SIGNATURE
        elif line.lstrip().startswith(">"):
            kind = PartKind.QUOTED
            line = line.lstrip().lstrip("> ")
        previous_blank = not line.strip()
        if runs and runs[-1][0] is kind:
            runs[-1][1].append(line)
        else:
            runs.append((kind, [line]))
    return [
        EmailPart(kind, "\n".join(lines).strip(), from_owner and kind is PartKind.BODY)
        for kind, lines in runs
        if "".join(lines).strip()
    ]


_HIDDEN_STYLE = re.compile(
    r"display\s*:\s*none|visibility\s*:\s*hidden|font-size\s*:\s*0(?![.\d]*[1-9])|opacity\s*:\s*0(?![.\d]*[1-9])"
    r"|max-height\s*:\s*0(?![.\d]*[1-9])|color\s*:\s*(?:#fff(?:fff)?|white|transparent)\b",
    re.I,
)
_BLOCK_TAGS = frozenset({"p", "div", "br", "li", "tr", "h1", "h2", "h3", "h4", "h5", "h6", "table", "blockquote"})
_VOID_TAGS = frozenset({"br", "img", "hr", "meta", "link", "input", "wbr", "col", "area", "base", "source"})
_SKIPPED_TAGS = frozenset({"script", "style", "head", "title"})
# Classes and ids mail clients give the quoted message or its header (Gmail, Outlook, Thunderbird,
# Yahoo, Proton, Zoho); Outlook's web client prefixes them with "x_" when it forwards.
_QUOTE_MARKERS = frozenset(
    {
        "gmail_quote", "gmail_attr", "gmail_quote_container", "moz-cite-prefix", "moz-forward-container",
        "yahoo_quoted", "protonmail_quote", "zmail_extra", "OutlookMessageHeader", "divRplyFwdMsg",
        "appendonsend", "mail-editor-reference-message-container", "AppleOriginalContents",
    }
)  # fmt: skip


class _HtmlText(HTMLParser):
    """Visible text with block breaks, and hidden text kept apart (it is nobody's visible words)."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.visible: list[str] = []
        self.hidden: list[str] = []
        self.quoted: list[str] = []
        self._stack: list[tuple[str, bool, bool]] = []  # tag, hidden, skipped
        # How many open elements hide or skip their text: kept as counts, since unclosed tags ("Bob
        # <b@x.c>" read as a tag) pile up and a scan of the stack per tag made long bodies quadratic.
        self._hiding = 0
        self._skipping = 0
        self._open: Counter[str] = Counter()  # so an end tag nothing opened ("</z>" x 10,000) scans nothing
        self._quoting = False  # from the first quote marker on, every visible word is someone else's

    def _state(self) -> tuple[bool, bool]:
        return self._hiding > 0, self._skipping > 0

    @property
    def _text(self) -> list[str]:
        return self.quoted if self._quoting else self.visible

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        attributes = dict(attrs)
        self._quoting = self._quoting or _starts_quote(tag, attributes)
        if tag in _BLOCK_TAGS:
            self._text.append("\n")
        if tag in _VOID_TAGS:
            return
        hidden = (
            "hidden" in attributes
            or attributes.get("aria-hidden") == "true"
            or bool(_HIDDEN_STYLE.search(attributes.get("style") or ""))
        )
        skipped = tag in _SKIPPED_TAGS
        self._stack.append((tag, hidden, skipped))
        self._open[tag] += 1
        self._hiding += hidden
        self._skipping += skipped
        if hidden:
            self.hidden.append("")

    def handle_endtag(self, tag: str) -> None:
        for depth in range(len(self._stack) - 1, -1, -1) if self._open[tag] else ():
            if self._stack[depth][0] == tag:
                self._hiding -= sum(hidden for _, hidden, _ in self._stack[depth:])
                self._skipping -= sum(skipped for _, _, skipped in self._stack[depth:])
                self._open.subtract(name for name, _, _ in self._stack[depth:])
                del self._stack[depth:]
                break
        if tag in _BLOCK_TAGS:
            self._text.append("\n")

    def handle_data(self, data: str) -> None:
        hidden, skipped = self._state()
        if skipped:
            return
        if hidden:
            self.hidden[-1] += data
        else:
            self._text.append(data)


def _starts_quote(tag: str, attributes: dict[str, str | None]) -> bool:
    """A blockquote, or an element a mail client puts around (or before) the message replied to."""
    if tag == "blockquote":
        return True
    names = {*(attributes.get("class") or "").split(), attributes.get("id") or ""}
    return any(name.removeprefix("x_") in _QUOTE_MARKERS for name in names)


@dataclass(frozen=True)
class HtmlText:
    """An HTML body's text by authorship: the author's visible words, hidden fragments, quoted text."""

    visible: str
    hidden: list[str]
    quoted: str = ""


def _tidy(text: str) -> str:
    text = re.sub(r"[ \t]+", " ", text)
    return re.sub(r"\n\s*\n+", "\n\n", text).strip()


def html_to_text(html: str) -> HtmlText:
    """The text of an HTML body, split by authorship (standard library parser, lenient)."""
    parser = _HtmlText()
    parser.feed(html)
    parser.close()
    hidden = [re.sub(r"\s+", " ", fragment).strip() for fragment in parser.hidden]
    return HtmlText(_tidy("".join(parser.visible)), [f for f in hidden if f], _tidy("".join(parser.quoted)))


_PS = re.compile(r"^\s*(?:p\.?\s?p\.?\s?s|p\.?\s?s)\b\.?\s*:?\s*", re.I)
_GREETING_LINE = re.compile(
    r"^\s*(?:hi|hello|hey|dear|good (?:morning|afternoon|evening))\b[^.?!\n]{0,40}[,!:]?\s*$", re.I
)
_BULLET = re.compile(r"^\s*(?:[-*•·]|\d{1,2}[.)])\s+")
# Latin scripts end a sentence with a stop, a space and a capital; Chinese and Japanese with a
# full-width stop and no space at all.
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[\"'(\[]?[A-Z0-9])|(?<=[\u3002\uff01\uff1f])\s*(?=\S)")
_ABBREVIATION = re.compile(r"\b(?:e\.g|i\.e|etc|mr|mrs|ms|dr|vs|approx|no|cf)\.$", re.I)


def sentences(text: str) -> list[str]:
    """Sentences of a part: paragraphs split on blank lines, soft-wrapped lines joined.

    Each bullet and greeting line is its own sentence; bullets and "P.S." markers are stripped so
    they neither start sentences nor split them.
    """
    result: list[str] = []
    chunks: list[list[str]] = []
    for paragraph in re.split(r"\n\s*\n", text):
        chunks.append([])
        for line in paragraph.split("\n"):
            if _BULLET.match(line) or _GREETING_LINE.match(line):  # a bullet or greeting stands alone
                chunks.append([_BULLET.sub("", line).strip()])
                chunks.append([])
            elif line.strip():
                chunks[-1].append(line.strip())
    for chunk in chunks:
        joined = _PS.sub("", " ".join(chunk))
        pending = ""
        for fragment in _SENTENCE_END.split(joined):
            pending = f"{pending} {fragment}".strip() if pending else fragment.strip()
            if not _ABBREVIATION.search(pending):
                result.append(pending)
                pending = ""
        if pending:
            result.append(pending)
    return [sentence for sentence in result if sentence]
