"""Secrets found by their look rather than their name: long random tokens, hex digests outside code
talk, and passphrases (which have spaces, so they run to the end of their sentence).

Split from `credentials`, which reads values stated for a credential's name.
"""

from __future__ import annotations

import base64
import re
from collections.abc import Iterator

from services.common.pii.credentials import STEMS
from services.common.pii.model import FindingKind, Hit, after_words, hit, is_placeholder_at, shannon_entropy
from services.common.pii.stated_values import NOT_IN_A_PASSPHRASE

_LONG_TOKEN = re.compile(r"[A-Za-z0-9+/=_\-]{20,}")
_HEX_TOKEN = re.compile(r"[0-9a-fA-F]{32,}")
_UUID = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")
_SUBRESOURCE_INTEGRITY = re.compile(r"sha(?:256|384|512)-[A-Za-z0-9+/]{40,}={0,2}$")
# Names of a log's or a link's ids: "request_id", "msg-id", "trace.id", "cf ray id".
_ID_WORDS = (
    r"(?:msg|message|request|req|trace|span|page|object|event|correlation|order|job|task|run|build|commit|ray)"
    r"[_\-. ]?id"
)
_CODE_CONTEXT = re.compile(
    r"commit|sha|hash|revision|\brev\b|merge|cherry|rebase|checksum|digest|md5|build|fingerprint|\bref\b|diff"
    r"|\bgit\b|bisect|\buses:|request.?id|correlation.?id|\brid\b"
    r"|blob|tree|tag|release|image|docker|\bpr\b|pull request|etag|trace|span|\btx\b|\btxn\b|transaction",
)
# A digest named as one, of any length ("md5: …", "ETag", a trace's id, a transaction's hash).
_DIGEST_CONTEXT = re.compile(
    r"md5|sha-?\d*|checksum|digest|hash|etag|trace|span.?id|\btx\b|\btxn\b|transaction|request.?id|correlation.?id"
    r"|\brid\b|\bgit (?:show|log|diff|checkout|revert|cherry-pick|reset|bisect)|bisect|\buses:"
)
_CHECKSUM_LINE = re.compile(r"  \*?[\w./\-]{1,200}$", re.MULTILINE)
# What comes before a published token: an SSH public key's type, a data URI's encoding, a form's boundary.
_PUBLIC_BEFORE = re.compile(
    r"(?:ssh-(?:rsa|ed25519|dss)|ecdsa-sha2-nistp\d{3}|sk-ssh-ed25519@openssh\.com)[ \t]+$|base64,$|boundary=$"
    r"|(?i:public[ _\-]?key|pubkey)[\"']?[ \t]*[:=][ \t]*[\"']?$"
    # an SSH key's fingerprint ("SHA256:3gvF…"), a Go module's hash ("h1:z45j…="), a request's id in a log
    rf"|(?:SHA256|SHA1|MD5|h1):$|(?i:{_ID_WORDS}|cf-ray|\brid)[\"']?[ \t]*[:=][ \t]*[\"']?$"
)
# A JSON Web Key's public members (the modulus "n", the exponent "e", a curve point's "x" and "y"); "d" is private.
_JWK_PUBLIC_MEMBER = re.compile(r"\"(?:n|e|x|y)\"[ \t]*:[ \t]*\"$")
# A token written as "name=value" in a log line or a link, and names that say the value is an id or a position.
_NAMED_VALUE = re.compile(r"[A-Za-z_][\w\-]{0,30}=[^=]")
_ID_NAME = re.compile(rf"(?i:{_ID_WORDS}|cursor|next_?page|page_?token|after|before|offset)$")
# GitHub's no-reply address for an account: "41898282+github-actions[bot]@users.noreply.github.com".
_NO_REPLY_AFTER = re.compile(r"(?:\[bot\])?@users\.noreply\.github\.com")
# A cloud resource's id ("vpc-0a1b2c3d4e5f67890", "sg-0123…", "i-0abc…"): it names a thing, not a key to it.
_RESOURCE_ID = re.compile(
    r"(?:vpc|subnet|sg|i|ami|vol|snap|eni|igw|nat|rtb|acl|eipalloc|lt|tgw|vpce|pcx)-[0-9a-f]{8,17}"
)
# A key saved as a JSON array of its 64 bytes (a Solana keypair's id.json).
_BYTE_ARRAY_KEY = re.compile(r"\[[ \t\n]{0,4}(?:\d{1,3}[ \t\n]{0,4},[ \t\n]{0,4}){63}\d{1,3}[ \t\n]{0,4}\]")
_AGE_RECIPIENT = re.compile(r"age1[02-9ac-hj-np-z]{50,}$")
_PUBLIC_BLOCK = re.compile(
    r"-----BEGIN (?:CERTIFICATE|PUBLIC KEY|PGP PUBLIC KEY BLOCK|X509 CRL|CERTIFICATE REQUEST|NEW CERTIFICATE REQUEST"
    r"|SSH2 PUBLIC KEY|RSA PUBLIC KEY)-----[\s\S]{0,20000}?-----END [A-Z0-9 ]{1,40}-----"
)
# A build's "passed" is no password near the digest: the stem "pass" is read in it, and in "bypass".
_PASS_IN_OTHER_WORDS = re.compile(r"pass(?:ed|es|ing)\b|bypass\w*|compass\w*")


def random_tokens(text: str) -> Iterator[Hit]:
    """Long random tokens anywhere; hex digests survive where the text is about code (commit SHAs)."""
    for m in _BYTE_ARRAY_KEY.finditer(text) if "[" in text else ():
        if all(int(b) < 256 for b in re.findall(r"\d+", m.group())):
            yield hit(m.start(), m.end(), FindingKind.SECRET, "format:key-bytes")  # Solana's id.json keypair
    public = [m.span() for m in _PUBLIC_BLOCK.finditer(text)] if "-----BEGIN" in text else []
    for m in _LONG_TOKEN.finditer(text):
        token = m.group()
        if m.start() and (text[m.start() - 1].isalnum() or text[m.start() - 1] in "+/=_-"):
            continue
        if token.startswith("boundary=") or _AGE_RECIPIENT.match(token):
            continue
        if _PUBLIC_BEFORE.search(text, max(0, m.start() - 40), m.start()):
            continue  # a public key, an image's bytes, a form's boundary: published, not secret
        if any(start <= m.start() < end for start, end in public):
            continue
        if '"kty"' in text and _JWK_PUBLIC_MEMBER.search(text, max(0, m.start() - 10), m.start()):
            continue  # a published JSON Web Key Set: the modulus of an RSA key is public
        name, _, value = token.partition("=") if _NAMED_VALUE.match(token) else ("", "", token)
        if _ID_NAME.search(name):
            continue  # "msg_id=32c2f39e…", "cursor=eyJwYWdl…": a row's or a page's id in a log or a link
        if _RESOURCE_ID.fullmatch(value) or _encodes_text(value) or _NO_REPLY_AFTER.match(text, m.end()):
            continue
        if re.fullmatch(r"[0-9a-fA-F]+", token):
            continue  # judged below, with its context
        if _SUBRESOURCE_INTEGRITY.match(token):
            continue  # "sha384-oqVuAfXR…": a published file's hash, in every page that loads it
        if "-" in token and (without_ids := _UUID.sub("", token)) != token:
            token = without_ids  # "request_id=<uuid>", "/users/<uuid>/orders": an id names a row, not a key
            if len(token) < 20:
                continue
        varied = any(c.isdigit() for c in token) and any(c.isalpha() for c in token)
        if varied and shannon_entropy(token) > 4.0:
            yield hit(m.start(), m.end(), FindingKind.SECRET, "entropy:token")
    for m in _HEX_TOKEN.finditer(text):
        token = m.group()
        hex_prefix = text.endswith("0x", max(0, m.start() - 2), m.start())  # an Ethereum key: 0x and 64 hex
        glued_before = m.start() and text[m.start() - 1].isalnum() and not hex_prefix
        if glued_before or (m.end() < len(text) and text[m.end()].isalnum()):
            continue
        if m.start() >= 2 and text[m.start() - 1] == "." and text[m.start() - 2].isdigit() and token.isdigit():
            continue  # "3.14159265358979323846…": a number's decimals
        if shannon_entropy(token) <= 3.0:
            continue
        context = text[max(0, m.start() - 50) : m.start()].lower()
        about_code = _CODE_CONTEXT.search(context) and not STEMS.search(_without_passes(context))
        if about_code and (len(token) in (40, 64) or _DIGEST_CONTEXT.search(context)):
            continue
        if _CHECKSUM_LINE.match(text, m.end()) and (m.start() == 0 or text[m.start() - 1] == "\n"):
            continue  # "<sha256>  ubuntu-24.04.iso": a checksum file's line
        yield hit(m.start(), m.end(), FindingKind.SECRET, "entropy:hex")


# An authenticator's secret as its setup page shows it for typing in: base32 in groups of four ("ylui tar7
# qjvd 77ai 4mew slhn kkes txvn", "JBSW Y3DP EHPK 3PXP"), one case throughout.
# A digit of base32 with a space four characters on: where a run of groups holding digits can be (prose has few).
_GROUP_DIGIT = re.compile(r"[2-7](?=[A-Za-z2-7]{0,3} [A-Za-z2-7]{4})")
_BASE32_GROUPS = re.compile(r"[a-z2-7]{4}(?: [a-z2-7]{4}){3,7}(?![\w\-])|[A-Z2-7]{4}(?: [A-Z2-7]{4}){3,7}(?![\w\-])")
_KEY_BEFORE = re.compile(r"\b(?:key|secret|seed|code|totp|2fa|mfa|authenticator|manually)\b")


def spaced_keys(text: str, lower: str) -> Iterator[Hit]:
    """Four to eight groups of base32 with digits in two of them; under six groups only after a word for a key."""
    first = _GROUP_DIGIT.search(text)
    if first is None:
        return  # no group holds a digit: prose's runs of four-letter words are not tried
    for m in _BASE32_GROUPS.finditer(text, max(0, first.start() - 60)):
        if m.start() and (text[m.start() - 1].isalnum() or text[m.start() - 1] in "_-"):
            continue
        groups = m.group().split()
        if sum(any(c.isdigit() for c in g) for g in groups) < 2 or sum(any(c.isalpha() for c in g) for g in groups) < 3:
            continue
        if len(groups) < 6 and _KEY_BEFORE.search(lower, max(0, m.start() - 40), m.start()) is None:
            continue
        if re.fullmatch(r"[0-9A-Fa-f ]+", m.group()):
            continue  # "7C6B 7C5D 5E2B 6356 …": a key's fingerprint is hex, and public
        yield hit(m.start(), m.end(), FindingKind.SECRET, "entropy:spaced-key")


# Words in a text's encoding: base64 that decodes to prose or JSON is a message's or a page's body, not a key
# ("V2VsY29tZSB0byB0aGU…" is "Welcome to the…", "eyJwYWdlIjoz…" is '{"page":3…').
_ENCODED_TEXT = re.compile(r"[ -~\t\r\n]{12,}")
_SECRET_INSIDE = re.compile(r"pass|secret|token|key|auth|cred|pwd|bearer|session|cookie", re.I)


def _encodes_text(token: str) -> bool:
    if len(token) < 16 or not re.fullmatch(r"[A-Za-z0-9+/_\-]+=*", token):
        return False
    try:
        decoded = base64.b64decode(token.replace("-", "+").replace("_", "/") + "=" * (-len(token) % 4), validate=True)
        words = decoded.decode("utf-8")
    except (ValueError, UnicodeDecodeError):
        return False
    config = sum(words.count(mark) for mark in ("\n", "=")) >= 3  # an INI file's "log_level=info\n…"
    prose = words.count(" ") >= 2 or (words.startswith(("{", "[")) and '"' in words) or config
    return prose and _ENCODED_TEXT.fullmatch(words) is not None and _SECRET_INSIDE.search(words) is None


def _without_passes(context: str) -> str:
    return _PASS_IN_OTHER_WORDS.sub(" ", context) if "pass" in context else context


_PASSPHRASE = re.compile(
    r"(?:pass ?phrase|(?:recovery|seed|secret|backup|master|unlock|vault|wallet) phrase|mnemonic(?: phrase)?"
    r"|(?:seed|recovery|mnemonic|backup|wallet) words)s?\s*(?:is|was|are|were|=|:)\s*(?P<value>[^.\n]+)"
)


# Words given as a password, ending their line: "pass: correct horse battery staple", "my wifi password is
# purple monkey dishwasher". Three to eight words of letters; one word is any other password's business.
# Found by these (one str.find each, 1.8 µs per 2 KB); the rest of the word is the pattern's: "pass"
# reads "password", "passwort", "passwd", "passcode" and "mot de passe", "pw" reads "pwd".
_PASSWORD_NAMES = ("pass", "pw")
_WORDS_AS_PASSWORD = re.compile(
    r"(?:word|wort|wd|code|e|d)?(?![\w])[^\S\n]*(?:[:=]|\bis\b|\bwas\b)[^\S\n]*[\"'`\u201c\u2018]?"
    r"(?P<value>[^\W\d_]{2,14}(?:[^\S\n][^\W\d_]{2,14}){2,7})[\"'`\u201d\u2019]?[.!]?[^\S\n]*(?=\r?\n|$)"
)


def passphrases(text: str) -> Iterator[Hit]:
    """A passphrase has spaces: it runs to the end of the sentence."""
    lower = text.lower()
    for m in after_words(lower, _PASSWORD_NAMES, _WORDS_AS_PASSWORD):
        if NOT_IN_A_PASSPHRASE.isdisjoint(m.group("value").split()) and not is_placeholder_at(text, m.start("value")):
            yield hit(m.start("value"), m.end("value"), FindingKind.PASSWORD, "context:words-as-password")
    if "phrase" in lower or "mnemonic" in lower or " words" in lower:
        for m in _PASSPHRASE.finditer(lower):
            if not is_placeholder_at(text, m.start("value")):
                yield hit(m.start("value"), m.end("value"), FindingKind.PASSWORD, "context:passphrase")
