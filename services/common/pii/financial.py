"""Payment card numbers (Luhn-checked), IBANs (mod-97-checked) and labelled domestic bank details.

Cards and IBANs carry checksums, which keep order numbers safe without any context. Domestic
account numbers, routing numbers and sort codes carry none that works across banks, so they are
recognised by the words written before them ("account number", "sort code", "Kontonummer"...).
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterator

from services.common.pii.model import FindingKind, Hit, bounded, hit, luhn_ok
from services.common.text_folding import fold_words

# Patterns start with a character class (no look-behind, no \b) so the engine can skip ahead fast;
# boundaries are checked in code.
_CARD = re.compile(r"\d(?:[ \-.]?\d){12,18}")
_CARD_TWO_SPACES = re.compile(r"\d{4}(?:  \d{4}){3}(?:  \d{1,3})?")  # "4111  1111  1111  1111"
_DIGITS_TWO_SPACES_APART = re.compile(r"\d  \d")
_ORDER_BEFORE = re.compile(r"(?:order|tracking|shipment|invoice|ticket)\s*(?:#|no\.?|number)?\s*$", re.IGNORECASE)
# Words (lower case) that name a domestic bank detail. A bare "account" is not enough: "account 4471"
# is as often a customer number at a shop; a bank's word or "number/no./#" must come with it. Every
# branch starts with a literal, so the engine can skip ahead on first letters.
_ACCOUNT_LABEL = re.compile(
    r"bank\s+account|checking\s+account|chequing\s+account|savings\s+account|current\s+account"
    r"|deposit\s+account|business\s+account|joint\s+account"
    r"|account\s*(?:number|no\.?|nr\.?|#)|acct\.?\s*(?:number|no\.?|#)|acc\.?\s*(?:number|no\.?|#)"
    r"|a/c\s*(?:no\.?|#)?"
    r"|routing|aba\s+(?:number|routing|no\.?|#)|aba|sort\s*code|bsb|transit\s+number|institution\s+number"
    r"|kontonummer|konto-?nr|bankleitzahl|blz|numero\s+de\s+compte|de\s+compte|rib"
    r"|numero\s+de\s+cuenta|numero\s+di\s+conto|rekeningnummer|numero\s+da\s+conta"
    # Japanese, Korean and Chinese, whose words have no spaces to end them
    r"|口座番号|口座|계좌번호|계좌|银行账号|银行帐号|银行账户|账号|帐号|帳號|账户"
    r"|numer\s+konta|nr\s+konta|numer\s+rachunku|nr\s+rachunku|clabe(?:\s+interbancaria)?|conta\s+corrente|conta\s+poupanca|agencia"
    r"|\bdda\b|\brtn\b|ifsc|" + fold_words("खाता संख्या")
)
# Between the label and the digits: "number", "no.", "is", ":", "#" and the like, nothing else.
_ACCOUNT_LINK = re.compile(
    r"(?:\s*(?:number|no\.?|nr\.?|transit\s+number|is|was|est|ist|lautet|es|e|are)\b|\s*[:#=\-\u2013(.]"
    r"|\s*(?:普通|当座|貯蓄|是|为|為|는|은))*\s*"  # a Japanese account's kind ("普通"), "is" in CJK
)
# At least six digits, in groups.
_ACCOUNT_DIGITS = re.compile(r"\d(?:[ \-]?\d){5,29}(?!\w)")  # up to Poland's 26 digits with their spaces
_ACCOUNT_WINDOW = 48
# A bare "account" names a bank account where the sentence is about one: "routing 021000021 account
# 000123456789", "wire it to Chase, account: 4471902231".
_BARE_ACCOUNT = re.compile(r"(?<![\w\-])(?:account|acct|acc|konto|compte|cuenta|conto|rekening|conta)\.?\s*[:#]?\s*$")
_BANK_CONTEXT = re.compile(
    r"routing|sort\s*code|\bbsb\b|\biban\b|\bswift\b|\bbic\b|\bbank|\baba\b|\bwire\b|\bblz\b|\btransit\b"
    r"|\binstitution\b|\bifsc\b|\bcheque\b"
)
_BANK_CONTEXT_WINDOW = 120
_IBAN = re.compile(r"[A-Z]{2}\d{2}(?: ?[A-Z0-9]{4}){2,7}(?: ?[A-Z0-9]{1,4})?")


def _iban_ok(compact: str) -> bool:
    if not 15 <= len(compact) <= 34:
        return False
    rearranged = compact[4:] + compact[:4]
    return int("".join(str(int(c, 36)) for c in rearranged)) % 97 == 1


def cards(text: str) -> Iterator[Hit]:
    spaced = _CARD_TWO_SPACES.finditer(text) if _DIGITS_TWO_SPACES_APART.search(text) else ()
    for m in itertools.chain(_CARD.finditer(text), spaced):
        digits = m.group().replace(" ", "").replace("-", "").replace(".", "")
        if _ORDER_BEFORE.search(text, max(0, m.start() - 20), m.start()):
            continue  # "Order #112-4829103-7718263": an order's number may pass Luhn's check by chance
        if bounded(text, m.start(), m.end()) and luhn_ok(digits):
            yield hit(m.start(), m.end(), FindingKind.CARD, "card:luhn")


_ASCII_UPPER = str.maketrans("abcdefghijklmnopqrstuvwxyz", "ABCDEFGHIJKLMNOPQRSTUVWXYZ")


def ibans(text: str, lower: str) -> Iterator[Hit]:
    """IBANs as banks print them; written in lower case too where the text says "iban" (the
    checksum still decides). Upper-casing ASCII only keeps every offset where it was."""
    yield from _ibans(text)
    if "iban" in lower:  # one scan of the lower-cased text scan.py already made
        upper = text.translate(_ASCII_UPPER)
        yield from (h for h in _ibans(upper) if not text[h[0] : h[1]].isupper())


def _ibans(text: str) -> Iterator[Hit]:
    for m in _IBAN.finditer(text):
        if m.start() and text[m.start() - 1].isalnum():
            continue
        raw = m.group()
        # The greedy match may swallow a following upper-case token: try shorter endings too.
        for cut in range(len(raw), 14, -1):
            candidate = raw[:cut].rstrip()
            if _iban_ok(candidate.replace(" ", "")):
                yield hit(m.start(), m.start() + len(candidate), FindingKind.IBAN, "iban:mod97")
                break


def bank_accounts(text: str, lower: str) -> Iterator[Hit]:
    """An account number, routing number or sort code written after a word that names one.

    Anchored on the digits (cheap to find, and prose has few long runs): the label is looked for
    only just before each run, as `identity.labelled_ids` does for identity numbers.
    """
    for run in _ACCOUNT_DIGITS.finditer(text):
        before = text[run.start() - 1] if run.start() else " "
        if (before.isascii() and before.isalnum()) or before in "-_":
            continue  # "A12345678"; but "账号是6222…": CJK writes no space before the digits
        lo = max(0, run.start() - _ACCOUNT_WINDOW)
        for label in _ACCOUNT_LABEL.finditer(lower, lo, run.start()):
            if label.start() and lower[label.start() - 1].isascii() and lower[label.start() - 1].isalnum():
                continue
            if lower[label.end() - 1].isascii() and lower[label.end() : label.end() + 1].isalpha():
                continue  # "ribbon", "routings" (a CJK label runs into the next word with no space)
            link = _ACCOUNT_LINK.match(lower, label.end(), run.start())
            if link is not None and link.end() == run.start():
                yield hit(run.start(), run.end(), FindingKind.BANK_ACCOUNT, "bank:labelled")
                break
        else:
            if _BARE_ACCOUNT.search(lower, lo, run.start()) and _BANK_CONTEXT.search(
                lower, max(0, run.start() - _BANK_CONTEXT_WINDOW), min(len(lower), run.end() + _BANK_CONTEXT_WINDOW)
            ):
                yield hit(run.start(), run.end(), FindingKind.BANK_ACCOUNT, "bank:account-in-bank-context")


# A payment address that names one person's account: India's UPI ids ("rahul.mehta94@okicici", "98xxxxxx@ybl")
# at the payment apps' own handles, and Brazil's Pix key after its name (a random key, a CPF, a phone, a mail).
_UPI_HANDLES = (
    "okicici|okaxis|oksbi|okhdfcbank|ybl|ibl|axl|paytm|ptyes|ptaxis|pthdfc|ptsbi|apl|yapl|rapl|upi|axisbank|icici"
    "|sbi|hdfcbank|kotak|idfcfirst|aubank|indus|federal|fbl|jupiteraxis|freecharge|mbk|ikwik|waaxis|wahdfcbank"
    "|wasbi|waicici|pingpay|airtel|jio|barodampay|unionbankofindia|pnb|cnrb|boi|kbl|rbl|yesbank|naviaxis|superyes"
)
# Found from the "@" and its handle (a literal the engine skips to), then the id's start looked for behind it.
_UPI_AT = re.compile(rf"@(?:{_UPI_HANDLES})(?![\w.@-])")
_UPI_LOCAL = re.compile(r"(?<![\w.\-])[a-z0-9][\w.\-]{1,63}\Z")
_PIX_KEY = re.compile(
    r"(?:chave pix|pix key|chave(?: pix)? aleatoria|pix)(?: aleatoria| \(aleatoria\))?\s*(?:[:=]|\be\b|\bis\b)\s*"
    r"(?P<value>[\w.@+\-/()]{6,80}?)(?=[\s,;]|[.!?](?:\s|$)|$)"
)


def payment_handles(text: str, lower: str) -> Iterator[Hit]:
    """A UPI id at a payment app's handle, and the value after the name of a Pix key."""
    if "@" in lower:
        for m in _UPI_AT.finditer(lower):
            if local := _UPI_LOCAL.search(lower, max(0, m.start() - 64), m.start()):
                yield hit(local.start(), m.end(), FindingKind.BANK_ACCOUNT, "bank:upi-id")
    if "pix" in lower:
        for m in _PIX_KEY.finditer(lower):
            yield hit(m.start("value"), m.end("value"), FindingKind.BANK_ACCOUNT, "bank:pix-key")
