"""detect-secrets' regex plugins as a second opinion on every text, affordable on the request path.

Run naively over a whole e-mail, its ~50 patterns cost several milliseconds (the keyword ones try
every position). detect-secrets itself scans line by line, so we do too, and run a pattern on a line
only when the line holds a literal the pattern cannot match without (its key prefix, or one of its
keywords). That changes no match, since a pattern can only match a line that holds its literal, and
it costs a few microseconds for the lines of ordinary prose. Imported lazily from the plugins; used
through their compiled patterns, so the global settings singleton is untouched and no plugin's
network ``verify()`` ever runs.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from functools import cache
from typing import Any

from services.common.pii.model import PLACEHOLDER, FindingKind, Hit, hit, is_placeholder_at
from services.common.pii.stated_values import CODE_REFERENCE, NON_VALUES, TEMPLATE_BLANK, TYPE_NAMES

# What a line must hold (lower case) for a plugin's pattern to have any chance; None: always run.
_KEYWORDS = ("key", "pwd", "pw", "pass", "token")  # (key|pwd|pw|password|pass|token), as their patterns say
_GATES: dict[str, tuple[str, ...] | None] = {
    "Artifactory Credentials": ("akc", "ap"),
    "AWS Access Key": ("a3t", "abia", "acca", "akia", "asia", "aws"),
    "Azure Storage Account access key": ("accountkey=",),
    "Basic Auth Credentials": ("://",),
    "Cloudant Credentials": (*_KEYWORDS, "cloudant"),
    "Discord Bot Token": ("m", "n", "o"),
    "GitHub Token": ("gh",),
    "GitLab Token": ("gl", "gr1348941"),
    "IBM Cloud IAM Key": _KEYWORDS,
    "IBM COS HMAC Credentials": ("secret",),
    "JSON Web Token": ("eyj",),
    "Mailchimp Access Key": ("-us",),
    "NPM tokens": ("_authtoken",),
    "OpenAI Token": ("t3blbkfj",),
    "Private Key": ("begin", "putty"),
    "PyPI Token": ("pypi-",),
    "SendGrid API Key": ("sg.",),
    "Slack Token": ("xox", "hooks.slack.com"),
    "SoftLayer Credentials": (*_KEYWORDS, "softlayer"),
    "Square OAuth Secret": ("sq0csp-",),
    "Stripe Access Key": ("k_live_",),
    "Telegram Bot Token": (":",),
    "Twilio API Key": ("ac", "sk"),
    "Secret Keyword": ("key", "pass", "pwd", "secret", "contrase"),
}
# An IP address is not a secret and breaks meeting text. detect-secrets' JWT pattern backtracks over
# every "eyJ" of a long run (0.8 s for 32 KB of "eyJ"); secret_formats reads every JWT it would, once.
_SKIPPED = {"Public IP (ipv4)", "JSON Web Token"}


_Pattern = tuple[str, re.Pattern[str], int, frozenset[str] | None]


@cache
def _patterns() -> tuple[_Pattern, ...]:
    from detect_secrets.core.plugins.util import get_mapping_from_secret_type_to_class
    from detect_secrets.plugins import keyword
    from detect_secrets.plugins.base import RegexBasedDetector

    patterns: list[_Pattern] = []
    plugin_classes: dict[str, Any] = get_mapping_from_secret_type_to_class()  # typed with an unbound TypeVar
    for secret_type, plugin_class in plugin_classes.items():
        if secret_type not in _SKIPPED and issubclass(plugin_class, RegexBasedDetector):
            gate = _GATES.get(secret_type)
            literals = frozenset(gate) if gate is not None else None
            patterns += [(secret_type, regex, 0, literals) for regex in plugin_class().denylist]
    keywords = frozenset(_GATES["Secret Keyword"] or ())
    for regex, group in keyword.CONFIG_DENYLIST_REGEX_TO_GROUP.items():
        patterns.append(("Secret Keyword", regex, group, keywords))
    return tuple(patterns)


@cache
def _literals() -> tuple[str, ...]:
    """Every gate literal once: a text is searched for each of them once, not once per pattern."""
    return tuple(sorted({literal for *_, gate in _patterns() if gate is not None for literal in gate}))


def _present(lower: str, literals: tuple[str, ...] | frozenset[str]) -> frozenset[str]:
    return frozenset(literal for literal in literals if literal in lower)


# detect-secrets' keyword patterns open with a lookahead that reads to the end of the line, so a line
# that repeats a keyword before a non-word character ("Password: <b>" x 20,000) cost the line's length
# once per keyword: 36 s for 256 KB. A long line is read in overlapping pieces instead; a value is one
# token, far shorter than the overlap, so each is still seen whole in one piece.
_LONG_LINE = 2048
_PIECE = 1024
_OVERLAP = 256


def _lines(text: str) -> Iterator[tuple[int, str]]:
    start = 0
    for line in text.split("\n"):
        if len(line) <= _LONG_LINE:
            yield start, line
        else:
            for piece in range(0, len(line) - _OVERLAP, _PIECE - _OVERLAP):
                yield start + piece, line[piece : piece + _PIECE]
        start += len(line) + 1


# What a setting about a credential holds, never a credential: a small number or a switch.
_A_SETTING = re.compile(r"\d{1,3}|true|false|yes|no|on|off|enabled|disabled", re.I)


def detect_secrets_hits(text: str) -> Iterator[Hit]:
    """Spans detect-secrets' plugins flag, one line at a time, skipping our own placeholders."""
    if len(text) < 8:  # no line of it is long enough to be scanned (below)
        return
    in_text = _present(text.lower(), _literals())
    candidates = [p for p in _patterns() if p[3] is None or not p[3].isdisjoint(in_text)]
    if not candidates:
        return
    for offset, line in _lines(text):
        if len(line) < 8:
            continue
        lower = line.lower()
        in_line = _present(lower, in_text)
        placeholders: list[range] | None = None
        for secret_type, regex, group, gate in candidates:
            if gate is not None and gate.isdisjoint(in_line):
                continue
            for m in regex.finditer(line):
                if placeholders is None:
                    placeholders = [range(p.start(), p.end()) for p in PLACEHOLDER.finditer(line)]
                value = m.group(group) or ""
                start = m.start(group) + len(value) - len(value.lstrip())
                keyword_is_placeholder = any(m.start() in span or m.start() + 1 in span for span in placeholders)
                if value.strip() and not keyword_is_placeholder and not is_placeholder_at(line, start):
                    # Config-file patterns take the rest of the line; in prose the value is one token.
                    token = value.split()[0].rstrip(".,;:)\"'") or value.split()[0]
                    token = re.split(r"&\w+=", token)[0]  # a URL query: the value ends at the next parameter
                    token = re.split(r"</[A-Za-z]", token)[0] or token  # "<p>Secret: X</p>": it ends at the tag
                    if (
                        token.lower() in NON_VALUES or token.lower() in TYPE_NAMES or CODE_REFERENCE.match(token)
                    ):  # "secret: none", os.environ[
                        continue
                    if TEMPLATE_BLANK.search(token.strip("`")):
                        continue  # "OPENAI_API_KEY=YOUR_API_KEY", "sk_test_...": documentation's blanks
                    if _A_SETTING.fullmatch(token):
                        continue  # "password_min_length = 12", "password_require_symbol = true": a rule, no secret
                    yield hit(offset + start, offset + start + len(token), FindingKind.SECRET, f"ds:{secret_type}")
