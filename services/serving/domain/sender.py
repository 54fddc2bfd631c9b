"""Owner trust needs a verified sender: the From header alone is a claim anyone can forge.

The mail system states what it verified in an ``Authentication-Results`` header (RFC 8601): DMARC,
DKIM and SPF results. A mail is the owner's only when its From address is the owner's *and* the
verdict authenticates that address:

* DMARC ``pass`` — SPF or DKIM passed *aligned* with the From domain: enough on its own;
* otherwise a DKIM ``pass`` whose signing domain (``header.d``) is the From domain or a parent of it;
* SPF alone is never enough: it vouches for the envelope sender, which need not be the From address.

Anything else (fail, softfail, none, an error, no verdict at all) leaves the mail external, and the
reason travels with the event into memory's audit. Pure functions, standard library only.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from email.utils import parseaddr
from enum import StrEnum

_QUOTED_STRING = re.compile(r'"(?:[^"\\]|\\.)*"')
_COMMENT = re.compile(r"\([^()]*\)")
_ADDRESS_LIKE = re.compile(r"[^\s<>\"(),;:@]+@[^\s<>\"(),;:@]+")


def _without_comments_and_quotes(value: str) -> str:
    """RFC 5322/8601 text with quoted strings and (nested) comments removed: what a parser must not read."""
    value = _QUOTED_STRING.sub('""', value)
    while (stripped := _COMMENT.sub(" ", value)) != value:
        value = stripped
    return value


def bare_address(address: str) -> str:
    """`"Bob Tan" <Bob@Partner.example>` → `bob@partner.example`; "" when there is no single address.

    A From value that names two addresses outside its display name and comments
    (`alice@acme.example <mallory@evil.example>`, `<alice@acme.example>mallory@evil.example`) is read
    differently by different parsers: the mail system may have judged one and we would compare the
    other. Such a value has no address here, so it is never the owner's.
    """
    _, addr = parseaddr(address.strip())
    addr = addr.strip().casefold()
    found = {a.strip("<>").casefold() for a in _ADDRESS_LIKE.findall(_without_comments_and_quotes(address))}
    if found and found != {addr}:
        return ""
    return addr


class AuthResult(StrEnum):
    """One mechanism's result, with the RFC 8601 result words."""

    UNSPECIFIED = ""
    PASS = "pass"
    FAIL = "fail"
    SOFTFAIL = "softfail"
    NEUTRAL = "neutral"
    NONE = "none"
    TEMPERROR = "temperror"
    PERMERROR = "permerror"
    POLICY = "policy"


class OwnerClaim(StrEnum):
    """What serving concluded about who wrote the mail."""

    NOT_OWNER = "not_owner"
    VERIFIED = "verified"
    UNVERIFIED = "unverified"


@dataclass(frozen=True)
class SenderAuthentication:
    """The mail system's verdict on the sender: DMARC, DKIM, SPF and the DKIM signing domain."""

    dmarc: AuthResult = AuthResult.UNSPECIFIED
    dkim: AuthResult = AuthResult.UNSPECIFIED
    spf: AuthResult = AuthResult.UNSPECIFIED
    dkim_domain: str = ""
    #: The From domain DMARC was evaluated for (``header.from``), when the header states it.
    dmarc_domain: str = ""

    def summary(self) -> str:
        """``dmarc=pass dkim=none spf=softfail``: for reasons and audit, never carrying an address."""
        return " ".join(f"{name}={value.value or 'unspecified'}" for name, value in self._results())

    def as_dict(self) -> dict[str, str]:
        return {**{name: value.value for name, value in self._results()}, "dkim_domain": self.dkim_domain}

    def _results(self) -> tuple[tuple[str, AuthResult], ...]:
        return ("dmarc", self.dmarc), ("dkim", self.dkim), ("spf", self.spf)


#: No verdict at all: what a request without sender authentication carries (never verifies an owner).
NO_VERDICT = SenderAuthentication()

_RESULT = re.compile(r"\b(dmarc|dkim|spf)\s*=\s*([a-z]+)(?P<props>[^;]*)", re.IGNORECASE)
_HEADER_D = re.compile(r"\bheader\.[di]\s*=\s*@?([\w.\-]+)", re.IGNORECASE)
_HEADER_FROM = re.compile(r"\bheader\.from\s*=\s*(?:[^@\s;]*@)?([\w.\-]+)", re.IGNORECASE)
_RANK = {AuthResult.PASS: 0, AuthResult.POLICY: 1, AuthResult.NEUTRAL: 2, AuthResult.NONE: 3}


def parse_authentication_results(header: str) -> SenderAuthentication:
    """Read DMARC, DKIM and SPF results from an Authentication-Results header; unknown words are ignored.

    Comments and quoted strings are not results (``dmarc=fail (dmarc=pass)``, ``x-note="dmarc=pass"``),
    and the authentication service's id before the first ";" is not one either. With several DKIM
    signatures the best result wins, and its signing domain is kept (a passing signature of the From
    domain is what authenticates the owner). A message has one DMARC verdict: several that disagree
    mean someone added one, so the first that is not a pass is kept (fail closed).
    """
    readable = _without_comments_and_quotes(header)
    service_id, separator, rest = readable.partition(";")
    results = rest if separator and "=" not in service_id else readable  # a client may send the results alone
    found: dict[str, tuple[AuthResult, str]] = {}
    for m in _RESULT.finditer(results):
        method, word = m.group(1).lower(), m.group(2).lower()
        try:
            result = AuthResult(word)
        except ValueError:
            continue
        domain = _domain_property(method, m.group("props"))
        current = found.get(method)
        if method == "dmarc":
            if current is None or (current[0] is AuthResult.PASS and result is not AuthResult.PASS):
                found[method] = (result, domain)
        elif current is None or _RANK.get(result, 9) < _RANK.get(current[0], 9):
            found[method] = (result, domain)
    empty = (AuthResult.UNSPECIFIED, "")
    return SenderAuthentication(
        dmarc=found.get("dmarc", empty)[0],
        dkim=found.get("dkim", empty)[0],
        spf=found.get("spf", empty)[0],
        dkim_domain=found.get("dkim", empty)[1],
        dmarc_domain=found.get("dmarc", empty)[1],
    )


def _domain_property(method: str, props: str) -> str:
    """DKIM's signing domain (``header.d``) or the From domain DMARC judged (``header.from``)."""
    pattern = _HEADER_D if method == "dkim" else _HEADER_FROM if method == "dmarc" else None
    match = pattern.search(props) if pattern is not None else None
    return match.group(1).lower().strip(".") if match else ""


def _domain(address: str) -> str:
    return address.rpartition("@")[2].lower()


def _aligned(signing_domain: str, from_domain: str) -> bool:
    """Relaxed alignment: the signer is the From domain or one of its parents (never a bare TLD)."""
    signer = signing_domain.lower().strip(".")
    return bool(signer) and "." in signer and (from_domain == signer or from_domain.endswith("." + signer))


def judge_owner_claim(
    from_address: str, owner_address: str, to_address: str, auth: SenderAuthentication
) -> tuple[OwnerClaim, str]:
    """Whether the owner wrote the mail, and why not when the From address claims so. Fails closed.

    The owner defaults to the recipient (`to_address`) when the client names none. Decided on the
    raw addresses, before redaction replaces them with placeholders.
    """
    sender = bare_address(from_address)
    owner = bare_address(owner_address) or bare_address(to_address)
    if not sender or sender != owner:
        return OwnerClaim.NOT_OWNER, ""
    if auth.dmarc is AuthResult.PASS and auth.dmarc_domain in ("", _domain(sender)):
        return OwnerClaim.VERIFIED, ""  # a DMARC pass for another From domain vouches for that one only
    if auth.dkim is AuthResult.PASS and _aligned(auth.dkim_domain, _domain(sender)):
        return OwnerClaim.VERIFIED, ""
    return OwnerClaim.UNVERIFIED, (
        f"mail claims the owner's address without a passing sender verdict ({auth.summary()}); treated as external"
    )
