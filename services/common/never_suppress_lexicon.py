"""The never-suppress guard's lexicon: the words for scrutiny, and the words that reduce it.

Data only; `never_suppress` reads texts with it (normalised first: look-alike digits, contractions
and the other languages' phrasings already rewritten to these English stems). A word added here is
refused wherever a scrutiny word stands near it, so each entry names what it suppresses.
"""

from __future__ import annotations

import re

PHRASES: tuple[tuple[re.Pattern[str], str], ...] = tuple(
    (re.compile(pattern), replacement)
    for pattern, replacement in (
        (r"\bauto(?:matic(?:ally)?)? ?approv\w*", "autoclear approval"),
        (r"\bauto(?:matic(?:ally)?)? ?(?:clear|clos|resolv|dismiss|discount)\w*", "autoclear"),
        # Trust granted to a sender or a payee removes the checks its mail or payments would get.
        (r"\b(?:treat|classify|consider|mark|regard|label|tag)\w* ((?:\w+ ){0,6}?)as (?:trusted|safe|legit\w*"
         r"|genuine|verified|whitelisted|allowlisted|not spam|not phishing|not suspicious|not fraud\w*)\b",
         r"markcleared \1checks"),
        (r"\b(?:can|may|should|must|always|just) (?:always |just |fully )?trust\b", "waive checks"),
        # Trust by impersonation or by assumption: "treat mail from X as if it came from me", "assume any
        # password reset request is legit" (only for what attackers send: requests, mail, payments, links).
        (r"\b(?:treat|consider|regard|handle)\w* ((?:\w+ ){0,6}?)as (?:if|though) (?:they|it|this|that|these|those)"
         r" (?:came|come|comes|were|was|are|is) (?:from|sent by|written by) (?:me|myself|the owner|you)\b",
         r"markcleared \1checks"),
        (r"\bassum\w* ((?:\w+ ){0,8}?(?:password|reset|login|request|payment|invoice|wire|transfer|mail|email|message"
         r"|sender|attachment|link|caller|call)s?(?: \w+){0,4}? )(?:is|are) (?:legit\w*|genuine|safe|real|authentic"
         r"|valid|from me|fine|ok|okay)\b", r"markcleared \1checks"),
        # A mail's sender authentication is a check by another name ("ignore DMARC failures from X"); the
        # names alone are not scrutiny words, or every "dmarc=fail dkim=none" header would read as one waived.
        (r"\b((?:ignor|disregard|skip|bypass|overlook|dismiss)\w* (?:\w+ ){0,3}?)"
         r"(?:dmarc|dkim|spf|sender authentication) (?:fail\w*|errors?|checks?|results?|warnings?|alignment)\b",
         r"\1checks"),
        # Payment or approval given in advance for whatever comes: "just pay anything from Vendor".
        (r"\b(?:just |simply )(?:pay|approve|accept|sign|authori[sz]e)\w* (?:anything|everything|whatever|all|any)\b"
         r"|\b(?:pay|approve|accept|sign|authori[sz]e)\w* (?:anything|everything|whatever) (?:from|by|that|they)\b",
         "autoclear approval"),
        # A review skipped without naming it: "approve claims under 5000 without looking at them".
        (r"\bwithout (?:even )?(?:looking at|reading|opening|questioning) (?:it|them|this|that|those|these)\b"
         r"|\bwithout (?:a second look|a second glance|questions asked)\b", "skip checks"),
        (r"\b(?:whitelist|allowlist|safelist|safe list|trust list)\w*", "whitelist checks"),
        (r"\b(?:two|2|four|4|dual) (?:person|people|man|eyes?)(?: rule| principle| check| control| review)?\b"
         r"|\bdual (?:control|approval|authori[sz]ation)\b", "control"),
        (r"\bmark\w* ((?:\w+ ){0,4}?)as (?:cleared|clear|resolved|closed|false positives?|benign|no match)\b",
         r"markcleared \1"),
        (r"\bfalse positives?\b", "falsepositive"),
        (r"\b(?:do not|never) hesitate to\b", "always"),
        (r"\b(?:do not|never) (?:worry|bother|care|fuss)\w*(?: about| with)?\b|\bnever mind\b", "notrequired"),
        (r"\b(?:treat|classify|rate|score|consider|mark)\w* ((?:\w+ ){0,4}?)as (?:low|lower|reduced|standard|normal"
         r"|minimal) risk\b", r"downgrade \1riskrating"),
        (r"\brisk (?:rating|score|level|tier|category|profile)s?\b", "riskrating"),
        (r"\b(?:can|could|may) wait\b|\bnot applicable\b|\bn a\b", "notrequired"),
        (r"\b(?:not|never|no longer) (?:be )?(?:required|needed|necessary|mandatory|obligatory|compulsory)\b",
         "notrequired"),
        (r"\b(?:unnecessary|unneeded|optional|superfluous)\b", "notrequired"),
        (r"\bno (?:longer )?need(?:ed)? (?:to|for)\b|\bneed not\b", "notrequired"),
        (r"\b(?:turn|switch|shut)\w* ((?:\w+ ){0,3}?)off\b", r"disable \1"),
        (r"\bfail\w* to\b", "failto"),
        (r"\b(?:two|2) ?(?:factor|step)\b", "2fa"),
        # A change of bank details applied at once is the payment-redirection fraud's whole aim: the
        # verification it skips is never named ("bank detail changes are applied straight away").
        (r"\b(?:bank|account|payment|payee|iban|wire|remittance|banking) (?:details?|information|info|instructions?"
         r"|numbers?) (?:changes?|updates?)\b(?: \w+){0,6}? (?:straight away|right away|immediately|at once|instantly"
         r"|automatically|without delay|directly|as soon as)\b", "skip verification"),
        (r"\brefrain\w* from\b", "refrain"),
        (r"\b(?:instead of|rather than|in lieu of)\b", "insteadof"),
        (r"\bopt\w* out\b", "optout"),
        (r"\bhold\w* off\b", "holdoff"),
        (r"\b(?:wave|waving|waved|let|lets|letting) ((?:\w+ ){0,3}?)through\b", r"waive \1"),
        (r"\b(?:no one|nobody|no officer|no analyst)\b", "never"),
        (r"\b(?:other than|apart from|save for|with the exception of|except for|excepting|excluding"
         r"|but not)\b", "except"),
        (r"\b(?:in case|provided that|providing that|as soon as|in the event(?: that)?)\b", "if"),
    )
)  # fmt: skip

SCRUTINY_FAMILIES: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("escalation", re.compile(r"escalat\w*|mlro")),
    ("reporting", re.compile(r"report(?:s|ed|ing)?|sars?|strs?|ctrs?")),
    ("flagging", re.compile(r"flag(?:s|ged|ging)?")),
    ("alerting", re.compile(r"alert(?:s|ed|ing)?|notif\w*|warn(?:s|ed|ing|ings)?")),
    (
        "screening",
        re.compile(
            r"screen(?:s|ed|ing|ings)?|sanction(?:s|ed)?|peps?|adverse|aml|cft|kyc|kyb|cdd|edd|diligence"
            r"|checks?|checked|checking|hits?|match(?:es|ed|ing)?|reviews?|reviewed|reviewing|watchlists?"
            r"|ofac|monitor\w*|verif\w*|investigat\w*|compliance|riskrating"
            r"|approvals?|sign ?offs?|controls?|safeguards?|callbacks?|phishing|spam|fraud\w*|suspicious"
            r"|2fa|mfa|otp|authenticat\w*|scan(?:s|ned|ning|ners?)?|antivirus|virus\w*|malware|sandbox\w*"
        ),
    ),
)
# Rule for a suppressing or negating word whose meaning depends on what it suppresses.
RULE_BY_FAMILY = {"escalation": "no_escalation", "reporting": "no_report", "flagging": "no_flag",
                   "alerting": "no_alert", "screening": "skip_screening"}  # fmt: skip
# Words that reduce scrutiny wherever they occur in a text that mentions scrutiny.
ALWAYS_SUPPRESS: tuple[tuple[str | None, re.Pattern[str]], ...] = (
    ("waive_check", re.compile(r"waiv(?:e|es|ed|ing|er|ers)")),
    ("suppress_alerts", re.compile(r"suppress\w*|disabl(?:e|es|ed|ing)|mut(?:e|es|ed|ing)|silenc\w*|deactivat\w*")),
    ("ignore_hits", re.compile(r"ignor(?:e|es|ed|ing)|disregard\w*|dismiss\w*|overlook\w*")),
    ("false_positive", re.compile(r"falsepositive")),
    ("auto_clear", re.compile(r"autoclear|markcleared")),
    ("downgrade_scrutiny", re.compile(r"downgrad\w*|depriorit\w*")),
    (
        None,
        re.compile(
            r"skip(?:s|ped|ping)?|bypass\w*|circumvent\w*|omit(?:s|ted|ting)?|omission|forgo(?:es|ing|ne)?"
            r"|forego(?:es|ing|ne)?|exempt\w*|exclud\w*|whitelist\w*|allowlist\w*|avoid\w*|refrain"
            r"|failto|notrequired|insteadof|optout"
        ),
    ),
)
# Verbs that reduce scrutiny only when a scrutiny word is their object ("stop reporting" yes,
# "stop the onboarding" no).
OBJECT_SUPPRESS: tuple[tuple[str | None, re.Pattern[str]], ...] = (
    ("auto_clear", re.compile(r"clear(?:s|ed|ing)?|clos(?:e|es|ed|ing)|resolv(?:e|es|ed|ing)")),
    (
        "downgrade_scrutiny",
        re.compile(r"lower(?:s|ed|ing)?|reduc(?:e|es|ed|ing)|relax\w*|limit(?:s|ed|ing)?|loosen\w*"),
    ),
    (
        None,
        re.compile(
            r"stop(?:s|ped|ping)?|ceas(?:e|es|ed|ing)|halt(?:s|ed|ing)?|paus(?:e|es|ed|ing)|discontinu\w*"
            r"|drop(?:s|ped|ping)?|remov(?:e|es|ed|ing)|cancel\w*|defer(?:s|red|ring)?|delay(?:s|ed|ing)?"
            r"|postpon\w*|holdoff"
        ),
    ),
)  # fmt: skip
