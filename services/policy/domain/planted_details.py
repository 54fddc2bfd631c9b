"""A tool outcome that says where money, mail or trust now goes: a claim a person checks before it is kept.

A page or a document a tool fetched may be written by anyone, and the detail an attacker most wants
remembered is a changed one: "Alice's accountant is now Mark Devlin (mark@…)", "the payment portal moved to
https://…", "Payroll update: direct deposits now go to [IBAN]", "the vendor's new beneficiary name is …".
Stored as an episode, it is retrieved later as what happened, and the next payment or mail follows it (the
business-email-compromise pattern, and the memory-poisoning attacks that plant facts rather than orders).
Such a claim is no order, so the instruction readings do not hold it; policy sends it to review as a third
party's unverified claim. An outsider's mail is held so already, and the owner's own text is never read.

A claim needs a detail that routes something (an account, a contact, a portal, a payment handle), a word
that it changed or is the one to use now, and a destination in the text (an address, a link, a number, a
placeholder redaction left, a handle): "Our support team answers within a day" names none, and neither does
a changelog's "the version number is now 2.1".
"""

from __future__ import annotations

import re

from services.common.orders_elsewhere import DESTINATION

_DETAIL = (
    r"(?:iban|bank (?:account|details)|account(?: number)?|remittance details|beneficiary(?: name| details)?"
    r"|payment (?:details|portal|address|link|method|page)|(?:\w+ )?portal|support (?:email|e mail|address|number|line)"
    r"|help ?desk(?: number| email| line)?|phone(?: number)?|mobile(?: number)?|e ?mail(?: address)?"
    r"|login(?: email)?|website|accountant|manager|lawyer|assistant|emergency contact|contact"
    r"|upi id|zelle|venmo(?: handle)?|paypal|pix|till number|paybill|wallet(?: address)?|(?:shared )?drive"
    r"|direct deposits?|salary accounts?|reset line|hotline)"
)
_CHANGED = re.compile(
    rf"\b(?:new|updated|current|official|correct|real|only|now) {_DETAIL}\b(?: \w+){{0,6}} (?:is|are|will be|lives)\b"
    rf"|\b{_DETAIL}\b(?: \w+){{0,6}} (?:is now|are now|now is|should now be|must now be|will now be|now goes to"
    r"|now go to|changed to|updated to|moved to"
    r"|has moved to|have moved to|now accepts|is registered to|will be taken from|now lives)\b"
    r"|\b(?:moved|migrated|relocated) (?:its |their |the |our |his |her )?(?:\w+ ){0,3}(?:portal|site|website|page"
    r"|drive|login|support|helpdesk|payments?|benefits?) to\b"
    r"|\b(?:payment|remittance|bank|billing|beneficiary) details (?:are|were|have been|has been) (?:updated|changed)\b"
    r"|\b(?:old|previous|former) (?:\w+ ){0,2}(?:account|details|number|address|paybill|link|portal|email)"
    r"(?: \w+){0,3} (?:is|was|has been|are|were|have been) (?:closed|retired|void|no longer|deactivated|replaced)\b"
    r"|\b(?:details|account|number) (?:are|is) (?:now )?void\b"
    rf"|\b(?:updated|changed|switched|moved) (?:its|their|his|her|the) (?:\w+ ){{0,2}}{_DETAIL} to\b"
    r"|\bnow accepts? (?:\w+ ){0,2}(?:payments?|transfers?|deposits?)\b"
    # mail rerouted, a person moved to another address, the printed number called out of date
    r"|\b(?:messages|mail|e ?mails?|invoices|payments|calls|replies) (?:are|is|will be) now (?:being )?(?:delivered"
    r"|routed|forwarded|redirected|sent|going) to\b"
    r"|\b(?:switched|changed|moved) to (?:a |an |the |his |her |their )?(?:new |personal |private |different "
    r"|backup )?(?:address|e ?mail(?: address)?|number|phone|account|inbox)\b"
    r"|\b(?:number|address|e ?mail|line|details|account)(?: \w+){0,4} (?:is|are) (?:now )?(?:outdated|out of date"
    r"|obsolete|no longer valid|no longer in use|wrong|incorrect|invalid)\b"
    # where money or a login goes needs no "new": "Alice's UPI ID for refunds is …", "the PIN reset line is …"
    r"|\b(?:upi id|zelle|venmo(?: handle)?|paypal(?: address)?|pix(?: key)?|till number|paybill|iban|bank details"
    r"|account number|sort code|routing number|beneficiary(?: name| account)?|escrow account|login email"
    r"|sign in email|reset (?:line|number)|hotline|help ?desk(?: number| line| email)?)\b(?: \w+){0,6} (?:is|are)\b"
)
# Where money goes, changed, needs no destination beside it: "the vendor's new beneficiary name is …".
_MONEY_CHANGED = re.compile(
    r"\b(?:new|updated|changed) (?:beneficiary|remittance|bank|banking|payment|wire|payee) (?:name|details|account"
    r"|instructions|information)\b"
    r"|\b(?:beneficiary|remittance|bank|banking|payment|wire|payee) (?:name|details|account|instructions|information)"
    r" (?:have|has) (?:been )?(?:changed|updated)\b|\bdetails (?:are|is) (?:now )?(?:void|no longer valid)\b"
)
# A bank detail redaction already removed: whatever the sentence says of it, the money goes there.
_MONEY_PLACEHOLDER = re.compile(r"\[(?:IBAN|BANK_ACCOUNT)\]")


def planted_detail(normalised: str, folded: str) -> bool:
    """Whether a tool outcome claims a routing detail changed, with the new destination in the text.

    ``normalised`` is the text as `services.common.never_suppress.normalise` gives it, ``folded`` as
    `services.common.text_folding.fold_for_matching` does (its addresses and names kept whole).
    """
    if _MONEY_PLACEHOLDER.search(folded) or _MONEY_CHANGED.search(normalised):
        return True
    return _CHANGED.search(normalised) is not None and DESTINATION.search(folded) is not None
