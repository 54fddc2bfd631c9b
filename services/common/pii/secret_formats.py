"""Secrets that are recognisable by their shape alone: provider key formats, JWTs, PEM blocks, URL credentials.

Each provider format starts with a literal, which lets the regex engine skip ahead with a fast
search; one alternation of them all would be several times slower. The list covers the providers
detect-secrets knows (AWS, Artifactory, Azure, Cloudant, Discord, GitHub, GitLab, JWT, Mailchimp,
npm, OpenAI, PyPI, SendGrid, Slack, SoftLayer, Square, Stripe, Telegram, Twilio) and more.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from services.common.pii.model import FindingKind, Hit, hit
from services.common.pii.stated_values import TEMPLATE_BLANK

_AWS_PREFIXES = ("AKIA", "ASIA", "AGPA", "AIDA", "AROA", "AIPA", "ANPA", "ANVA", "APKA", "ABIA", "ACCA")
#: Ids of key pairs whose secret half is often pasted beside them without a label, each with the literals
#: a text must hold for it to match (a substring test is far cheaper than a regex search).
KEY_ID_FORMATS: tuple[tuple[tuple[str, ...], re.Pattern[str]], ...] = (
    (_AWS_PREFIXES, re.compile(r"(?:" + "|".join(_AWS_PREFIXES) + r")[0-9A-Z]{16}")),  # AWS
    (("A3T",), re.compile(r"A3T[A-Z0-9][0-9A-Z]{16}")),  # AWS (older)
    (("LTAI",), re.compile(r"LTAI[A-Za-z0-9]{12,20}")),  # Alibaba Cloud AccessKey id
    (("AKID",), re.compile(r"AKID[A-Za-z0-9]{13,40}")),  # Tencent Cloud SecretId
    (("GOOG",), re.compile(r"GOOG[A-Z0-9]{10,40}")),  # Google Cloud Storage HMAC access id
    (("AC",), re.compile(r"AC[a-f0-9]{32}")),  # Twilio account SID (its auth token is 32 hex)
)
_PROVIDER_SOURCE = r"""
    gh[pousr]_[A-Za-z0-9_]{30,} github_pat_\w{22,}
    glpat-[\w\-]{20,} gldt-[\w\-]{20,} glft-[\w\-]{20,} glsoat-[\w\-]{20,} glrt-[\w\-]{20,} glcbt-[\w\-]{20,}
    glimt-[\w\-]{25} glptt-[\w\-]{40} glagent-[\w\-]{50,} gloas-[\w\-]{64} GR1348941[\w\-]{20,}
    xox[abposre]-[\w\-]{10,} xapp-[\w\-]{20,} hooks\.slack\.com/services/T\w+/B\w+/\w+
    sk_(?:live|test)_[0-9A-Za-z]{16,} rk_(?:live|test)_[0-9A-Za-z]{16,} whsec_[0-9A-Za-z]{20,}
    sk-ant-[\w\-]{20,} sk-[A-Za-z0-9_\-]{20,}
    AIza[0-9A-Za-z_\-]{35} GOCSPX-[\w\-]{20,} ya29\.[\w\-]{20,}
    npm_[A-Za-z0-9]{36} pypi-AgE[\w\-]{50,}
    SG\.[\w\-]{16,32}\.[\w\-]{30,50}
    sq0csp-[\w\-]{40,} sq0atp-[\w\-]{22,} EAAA[\w\-]{60,}
    AccountKey=[A-Za-z0-9+/=]{40,} SharedAccessSignature=[^\s;]{20,} sig=[A-Za-z0-9%]{30,}
    shpat_[a-fA-F0-9]{32} shpss_[a-fA-F0-9]{32} shpca_[a-fA-F0-9]{32}
    dop_v1_[a-f0-9]{64} hvs\.[\w\-]{24,} hvb\.[\w\-]{24,} ATATT3[\w\-=]{50,} lin_api_\w{32,}
    secret_[A-Za-z0-9]{43} ntn_[A-Za-z0-9]{40,} hf_[A-Za-z]{30,} PMAK-[a-f0-9]{24}-[a-f0-9]{34}
    sntrys_[\w=+/]{40,} glsa_\w{32}_[a-f0-9]{8} dp\.st\.\w+\.\w{40,} AGE-SECRET-KEY-1[0-9A-Z]{50,60}
    key-[0-9a-f]{32} SK[0-9a-f]{32} AKCp[A-Za-z0-9]{60,}
    [0-9a-f]{32}-us[0-9]{1,2} [A-Za-z0-9_~.\-]{3}\dQ~[A-Za-z0-9_~.\-]{31,34}
    \d{8,10}:AA[0-9A-Za-z_\-]{33} [MNO][A-Za-z\d_\-]{23,25}\.[A-Za-z\d_\-]{6}\.[A-Za-z\d_\-]{27,}
    api\.softlayer\.com/soap/v3[\d.]*/[a-z0-9]{64}
"""
# Literals for the formats that do not start with one.
_LITERAL_OVERRIDES = {"[0-9a-f]{32}-us": "-us", "[A-Za-z0-9_~.": "Q~", "\\d{8,10}:AA": ":AA", "[MNO][A-Za-z": "."}


def _leading_literal(pattern: str) -> str:
    for prefix, literal in _LITERAL_OVERRIDES.items():
        if pattern.startswith(prefix):
            return literal
    leading = re.match(r"(?:[^\\\[\](){}.*+?|^$]|\\\.)+", pattern)
    return leading.group().replace("\\.", ".") if leading else ""


_PROVIDER_FORMATS = tuple((_leading_literal(p), re.compile(p)) for p in _PROVIDER_SOURCE.split())
_LITERAL_SECRETS = (
    # JWT: header.payload[.signature]. It starts cleanly and its runs are possessive, so a long run of
    # "eyJeyJ..." is read once, not once per "eyJ" (which cost 1.4 s for 32 KB).
    re.compile(r"(?<![\w\-])eyJ[\w\-=]{8,}+\.[\w\-=]{8,}+(?:\.[\w\-.+/=]*+)?"),
    re.compile(
        r"-----BEGIN[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----.*?(?:-----END[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----|\Z)", re.S
    ),
    re.compile(r"PuTTY-User-Key-File-\d.*?(?:Private-MAC: \w+|\Z)", re.S),
    # OpenVPN's "-----BEGIN OpenVPN Static key V1-----" and other static or secret key blocks
    re.compile(
        r"-----BEGIN [^\n\-]*(?:[Ss]tatic|[Ss]ecret|SECRET|STATIC) [Kk](?:ey|EY)[^\n\-]*-----"
        r".*?(?:-----END[^\n]*-----|\Z)",
        re.S,
    ),
    # user:password in a URL (user may be empty); "<user>:<token>" is documentation's blank
    re.compile(r"(?<=://)(?!<[\w\- ]{1,30}>:<[\w\- ]{1,30}>@)[^\s:/@\[\]]*:[^\s@/\[\]]+(?=@)"),
    re.compile(r"[Bb][Ee][Aa][Rr][Ee][Rr]\s+[A-Za-z0-9._~+/\-]{20,}=*"),
    re.compile(r"(?<=[Aa]uthorization: )[Bb]asic\s+[A-Za-z0-9+/]{8,}={0,2}"),
    re.compile(r"//[^\s/]+/:_authToken=\S+"),  # .npmrc
    # crypt(3)-style password hashes (htpasswd, /etc/shadow, bcrypt, argon2): crackable, so kept nowhere
    re.compile(r"\$(?:apr1|1|2[abxy]?|5|6|y|gy|7|argon2(?:id|i|d)|scrypt|pbkdf2(?:-sha\d+)?)\$[^\s:]{8,}"),
)
# Formats whose secret is one field of a longer line: the password of a Wi-Fi QR code
# ("WIFI:S:net;T:WPA;P:secret;;") and of a .pgpass line ("host:5432:db:user:secret").
# Secrets that one field of a longer text holds, found without a colon: PowerShell's plain-text secure
# string, MySQL's IDENTIFIED BY, a password whose "=" is URL-encoded, an XML credential in CDATA.
_QUOTED_FIELDS = (
    re.compile(r"(?i)ConvertTo-SecureString\s+(?:-String\s+)?(['\"])(?P<value>[^'\"\n]{1,256})\1"),
    re.compile(r"(?i)\bIDENTIFIED\s+(?:WITH\s+\S+\s+)?BY\s+(['\"])(?P<value>[^'\"\n]{1,256})\1"),
    re.compile(
        r"(?i)\b(?:password|passwd|pwd|pass|secret|token|api_?key|access_?token)%3[DA](?P<value>[^&\s\"'<>]{3,256})"
    ),
    re.compile(
        r"(?i)<[\w:\-]*(?:password|passwd|secret|token|key|pwd|credential)[\w:\-]*\s*>\s*<!\[CDATA\["
        r"(?P<value>[^\]\n]{1,256})\]\]>"
    ),
)
_QUOTED_FIELD_GATES = ("securestring", "identified", "%3", "cdata")
_SECRET_FIELDS = (
    re.compile(r"\bWIFI:(?:[^;\n]*;)*?P:(?P<value>(?:\\.|[^;\\\n])+)"),
    re.compile(r"(?m)^(?:localhost|\*|[\w\-]+(?:\.[\w\-]+)+):(?:\d{1,5}|\*):[\w.\-*]+:[\w.\-@*]+:(?P<value>\S{4,})$"),
)


# "admin:Gr8Scott!@192.168.1.1", "deploy:T0k3n!x@build.acme.example": a URL's user and password with no
# scheme before them (ssh, rsync and scp write them so). A scheme's own colon ("mailto:bob2@x.example")
# names no user, and "Email:jane99@example.com" is a label before an address: the value must have a
# symbol no address's local part is written with, or the host be an IP address.
_BARE_USERINFO = re.compile(
    r"(?<![\w.:/@%+\-])(?P<user>[A-Za-z][\w.\-]{0,63}):(?P<value>[^\s:@/<>]{4,128})"
    r"@(?:(?P<ip>\[?[0-9A-Fa-f]*[:.][0-9A-Fa-f:.]+\]?)|[A-Za-z0-9][\w\-]*(?:\.[\w\-]+)+)"
)
_LONGEST_USERINFO = 256
_NOT_IN_AN_ADDRESS = frozenset("!#$%^&*?~|\\()[]{},;'\"`")  # "=" is a message id's ("msg:<CAFx9=a@b.example>")
_SCHEMES = frozenset({
    "mailto", "sip", "sips", "tel", "xmpp", "http", "https", "ftp", "ssh", "git", "news", "urn", "cid", "mid",
    "data", "im", "pres", "smtp", "imap",
})  # fmt: skip


def _bare_userinfo(text: str) -> Iterator[Hit]:
    """Read in each token that holds an "@", once (a search from every position cost 19 us a 2 KB mail)."""
    at, read_until = text.find("@"), 0
    while at != -1:
        if at >= read_until:
            start, end = at, at
            while start and not text[start - 1].isspace() and at - start < _LONGEST_USERINFO:
                start -= 1
            while end < len(text) and not text[end].isspace() and end - at < _LONGEST_USERINFO:
                end += 1
            read_until = end
            yield from _userinfo_in(text, start, end)
        at = text.find("@", at + 1)


def _userinfo_in(text: str, start: int, end: int) -> Iterator[Hit]:
    for m in _BARE_USERINFO.finditer(text, start, end):
        value = m.group("value")
        marked = any(c in _NOT_IN_AN_ADDRESS for c in value) or (
            m.group("ip") is not None and any(c.isdigit() or not c.isalnum() for c in value)
        )
        if m.group("user").lower() not in _SCHEMES and marked and any(c.isalpha() for c in value):
            yield hit(m.start("value"), m.end("value"), FindingKind.PASSWORD, "format:userinfo")


def _starts_cleanly(text: str, start: int) -> bool:
    return start == 0 or not (text[start - 1].isalnum() or text[start - 1] in "_-")


def _ends_cleanly(text: str, end: int) -> bool:
    return end >= len(text) or not (text[end].isalnum() or text[end] == "_")


def key_ids(text: str) -> Iterator[tuple[int, int]]:
    """Spans of key ids (the public half of a pair), standing alone."""
    for literals, regex in KEY_ID_FORMATS:
        if not any(literal in text for literal in literals):
            continue
        for m in regex.finditer(text):
            if _starts_cleanly(text, m.start()) and _ends_cleanly(text, m.end()):
                yield m.start(), m.end()


def provider_tokens(text: str) -> Iterator[Hit]:
    """Provider keys and tokens by their format, key ids included (they name an account)."""
    for start, end in key_ids(text):
        if not TEMPLATE_BLANK.search(text[start:end]):
            yield hit(start, end, FindingKind.SECRET, "format:key-id")
    for literal, regex in _PROVIDER_FORMATS:
        if literal not in text:
            continue
        for m in regex.finditer(text):
            if _starts_cleanly(text, m.start()) and not TEMPLATE_BLANK.search(m.group()):
                yield hit(m.start(), m.end(), FindingKind.SECRET, "format:provider")
    for regex in _LITERAL_SECRETS:
        for m in regex.finditer(text):
            yield hit(m.start(), m.end(), FindingKind.SECRET, "format:literal")
    lower = text.lower()
    if any(gate in lower for gate in _QUOTED_FIELD_GATES):
        for regex in _QUOTED_FIELDS:
            for m in regex.finditer(text):
                yield hit(m.start("value"), m.end("value"), FindingKind.PASSWORD, "format:field")
    if ":" in text:
        if "@" in text:
            yield from _bare_userinfo(text)
        for regex in _SECRET_FIELDS:
            for m in regex.finditer(text):
                yield hit(m.start("value"), m.end("value"), FindingKind.SECRET, "format:field")
