"""What the never-suppress guard reads in words it has no grammar for: consent dropped, payments
made automatic, warnings ignored, in English paraphrase and in the other languages owners write.

The guard's analysis (`never_suppress`) is English grammar over normalised words. An owner who
writes "Don't ask me before paying Vendor Bank", "Approve their invoices automatically" or
"Überspringe die Freigabe für Zahlungen an Vendor Bank" removes an approval as surely as one who
writes "skip the approval", so these phrases are rewritten to the guard's own words ("skip
approval", "autoclear approval", "ignore warnings") before it reads them. Patterns are written as
normalised text is (lower case, accents gone, look-alike letters folded to Latin), hence built
through `fold_words`. A rewrite can only make the guard refuse more: every replacement holds a
suppressing word and a scrutiny word, never a prohibition.
"""

from __future__ import annotations

import re

from services.common.text_folding import fold_words

# Money leaving, or a commitment made: what consent is about when an owner drops it.
_MONEY = (
    r"pay\w*|invoice\w*|bill\w*|transfer\w*|wire\w*|approv\w*|purchas\w*|refund\w*|sign\w*|contract\w*"
    r"|zahl\w*|bezahl\w*|rechnung\w*|uberweis\w*|genehmig\w*|payer|paie\w*|factur\w*|virement\w*|pag\w*"
    r"|fattur\w*|bonifico|betal\w*|factuur\w*|overschrijv\w*"
)
_ASKED = r"(?:me|us|her|him|them|the owner|anyone)"
# "... before money moves": what makes "do not ask me" drop consent rather than small talk.
_BEFORE_MONEY = rf"(?=(?: \w+){{0,6}} (?:{_MONEY})\b)"


def _folded(pattern: str) -> str:
    """`pattern`'s literal letters folded as normalised text is (regex syntax is ASCII and unchanged)."""
    return fold_words(pattern)


_REWRITES: tuple[tuple[re.Pattern[str], str], ...] = tuple(
    (re.compile(_folded(pattern)), replacement)
    for pattern, replacement in (
        # English: consent dropped before money moves, and money moved automatically
        (rf"\b(?:do not|never|no longer|stop|quit) (?:ask|asking|check(?:ing)? with|confirm(?:ing)? with|consult"
         rf"(?:ing)?|bother(?:ing)?)(?: {_ASKED})?(?: first| again| anymore| any more)? (?:before|for|about|when|on"
         rf"|prior to|if)\b(?=(?: \w+){{0,5}} (?:{_MONEY})\b)", "skip approval before"),
        (r"\b(?:approv|pay|wire|transfer)\w*((?: \w+){0,6}?) (?:automatically|without asking|straight away)\b",
         r"autoclear approval \1"),
        (r"\bautomatically (?:pay|wire|transfer|approv)\w*", "autoclear approval"),
        # German
        (r"\b(?:uberspring\w*|auslass\w*)\b", "skip"),
        (r"\b(?:freigabe\w*|genehmigung\w*|bestatigung\w*|ruckfrage\w*|prufung\w*|kontrolle\w*)\b", "approval"),
        (rf"\bfrag\w* (?:mich|uns)(?: nicht| nie)(?: mehr)?\b(?=(?: \w+){{0,6}} (?:{_MONEY})\b)", "skip approval"),
        (r"\bohne (?:approval|nachfrage|zu fragen)\b", "without approval"),
        (r"\b(?:ignorier\w*|missacht\w*)\b", "ignore"),
        (r"\b(?:sicherheits)?warnung\w*\b", "warnings"),
        (rf"\b(?:{_MONEY})\b(?: \w+){{0,5}} automatisch\b|\bautomatisch (?:{_MONEY})\b", "autoclear approval"),
        # French
        (rf"\bne (?:me|nous) demande\w* (?:plus|pas|jamais)\b{_BEFORE_MONEY}", "skip approval"),
        (r"\bsans (?:confirmation|validation|verification|autorisation|approbation|me demander|controle|revision"
         r"|relecture)\b", "without approval"),
        (rf"\b(?:{_MONEY})\b(?: \w+){{0,5}} automatiquement\b|\bautomatiquement (?:{_MONEY})\b",
         "autoclear approval"),
        (r"\bignor\w* les (?:alertes|avertissements)\b", "ignore warnings"),
        # Spanish, Italian, Portuguese
        (rf"\bno (?:me|nos) (?:pidas|pida|preguntes|pregunte)\b{_BEFORE_MONEY}", "skip approval"),
        (rf"\bnon (?:chiedermi|chiederci|chiedere)\b{_BEFORE_MONEY}", "skip approval"),
        (rf"\b(?:nao (?:me|nos) pergunt\w*|nao peca)\b{_BEFORE_MONEY}", "skip approval"),
        (r"\b(?:sin|senza|sem) (?:confirmacion|aprobacion|autorizacion|conferma|approvazione|autorizzazione"
         r"|confirmacao|aprovacao|autorizacao|preguntar|chiedere|perguntar|revision|verificacion|control"
         r"|comprobacion|revisione|verifica|controllo|verificacao|revisao|controle|checagem)\b", "without approval"),
        # Polish and Turkish
        (r"\bbez (?:weryfikacji|kontroli|zatwierdzenia|potwierdzenia|sprawdzenia|akceptacji)\b",
         "without approval"),
        (r"\b(?:onaysiz|kontrolsuz|incelemeden|sormadan)\b", "without approval"),
        (rf"\b(?:{_MONEY})\b(?: \w+){{0,5}} automaticamente\b|\bautomaticamente (?:{_MONEY})\b",
         "autoclear approval"),
        (r"\bignor\w* (?:las|le|os|as|gli|i) (?:alertas|advertencias|avvisi|avvertenze|alertas|avisos)\b",
         "ignore warnings"),
        # Dutch
        (rf"\bvraag (?:me|mij|ons) (?:geen|niet)\b{_BEFORE_MONEY}", "skip approval"),
        (r"\bzonder (?:bevestiging|goedkeuring|controle|te vragen)\b", "without approval"),
        (rf"\b(?:{_MONEY})\b(?: \w+){{0,5}} automatisch\b|\bautomatisch (?:{_MONEY})\b", "autoclear approval"),
        # trust granted to a sender: "treat/mark ... as trusted" and "... is not spam" in each language,
        # rewritten to the English the guard already refuses
        (r"\b(?:trusted|safe) (?:senders?|contacts?|domains?|payees?|lists?)\b", "whitelist checks"),
        (r"\b(?:behandl|markier|einstuf|betracht|stuf)\w*((?: \w+){0,6}?) als (?:vertrauenswurdig\w*|sicher\w*"
         r"|seriose?\w*|unbedenklich\w*|legitim\w*)\b", r"treat\1 as trusted"),
        (r"\b(?:trait|consider|marqu|class)\w*((?: \w+){0,6}?) comme (?:fiables?|surs?|sures?|de confiance"
         r"|legitimes?)\b", r"treat\1 as trusted"),
        (r"\b(?:trat|consider|marc|clasific)\w*((?: \w+){0,6}?) como (?:segur[oa]s?|confiables?|fiables?|legitim[oa]s?"
         r"|de confianza)\b", r"treat\1 as trusted"),
        (r"\b(?:tratt|consider|contrassegn|segn|marc)\w*((?: \w+){0,6}?) come (?:attendibil\w*|affidabil\w*|sicur\w*"
         r"|legittim\w*|fidat\w*)\b", r"treat\1 as trusted"),
        (r"\b(?:behandel|markeer|beschouw)\w*((?: \w+){0,6}?) als (?:betrouwbaar|veilig|legitiem)\b",
         r"treat\1 as trusted"),
        (r"\b(?:(?:ist|sind) kein(?:e|en)? spam|ne (?:sont|est) pas (?:du |un )?spam|no (?:es|son) spam"
         r"|non (?:e|sono) spam|(?:is|zijn) geen spam)\b", "markcleared checks"),
        ("надежн\\w*|доверенн\\w*|белый список|не спам", " whitelist checks "),
        ("标记为可信|设为可信|视为可信|加入白名单|白名单|可信发件人", " whitelist checks "),
        ("信頼済み|信頼できる送信者|安全な送信者|ホワイトリスト|迷惑メールではない", " whitelist checks "),
        # Russian, Chinese, Japanese (no spaces: matched anywhere)
        ("не спрашива\\w*|без подтвержден\\w*|без согласован\\w*|без провер\\w*|без одобрен\\w*", "skip approval"),
        ("автоматически (?:плат|оплач|перевод|одобр)\\w*", "autoclear approval"),
        ("игнорир\\w* (?:предупрежден|уведомлен)\\w*", "ignore warnings"),
        ("不要再问我|不用问我|不必问我|无需确认|不需要确认|无需审批|不需要审批|跳过审批|跳过确认", " skip approval "),
        ("无需审核|未经审核|不经审核|无需验证|无需核实|不用审核", " skip approval "),
        ("自动支付|自动付款|自动批准|自动转账", " autoclear approval "),
        ("確認不要|確認なしで|承認不要|承認なしで|聞かないで|確認しないで", " skip approval "),
        ("確認せずに|承認せずに|審査なしで", " skip approval "),
        # Korean (no grammar for it either; words as written, folded to their letters like the text)
        ("검토 없이|확인 없이|승인 없이|검증 없이|묻지 말고", " skip approval "),
        ("自動で支払|自動支払|自動承認|自動で承認|自動で振込|自動振込", " autoclear approval "),
    )
)  # fmt: skip


def rewrite(normalised: str) -> str:
    """`normalised` with every phrase above replaced by the guard's own words."""
    for pattern, replacement in _REWRITES:
        normalised = pattern.sub(replacement, normalised)
    return normalised
