"""The words of "ignore your previous instructions" in the languages outsiders write in.

An injected page or mail rarely says it in English only. The words are listed as written; steering
folds each form (`services.common.steering._folded`) so they match folded text, whose Cyrillic
look-alike letters have become Latin ones and whose Devanagari vowel signs are gone.
"""

from __future__ import annotations

# The verb that discards what came before: imperative forms (familiar and polite) and infinitives.
DISCARD_VERBS = (
    # Spanish, French, Italian, Portuguese
    # ("ignore", their polite form, is also English: it is listed with the article that follows it)
    "ignora", "ignore las", "ignore los", "ignore todas", "ignore todos", "ignore as", "ignore os", "ignorad",
    "ignoren", "olvida", "olvide", "olvidad", "descarta", "descarte", "ignorez", "ignore les", "ignore toutes",
    "ignore tous", "ignorer", "oublie", "oubliez", "oublier", "dimentica", "dimenticate", "ignorate", "ignorare",
    "esqueça", "esqueca", "desconsidere", "desconsidera",
    # German, Dutch, Polish, Swedish, Danish, Norwegian, Turkish
    "ignoriere", "ignorieren", "ignoriert", "vergiss", "vergessen", "missachte", "missachten",
    "negeer", "negeren", "vergeet", "vergeten", "zignoruj", "ignoruj", "zignorujcie", "zapomnij", "pomiń",
    "ignorera", "glöm", "ignorer", "glem", "görmezden gel", "yok say", "unut",
    # Russian, Ukrainian
    "игнорируй", "игнорируйте", "игнорировать", "проигнорируй", "проигнорируйте", "забудь", "забудьте",
    "не обращай внимания на", "не обращайте внимания на", "ігноруй", "ігноруйте", "забудь",
    # Arabic, Hindi
    "تجاهل", "تجاهلي", "تجاهلوا", "انس", "अनदेखा", "नज़रअंदाज़", "नजरअंदाज", "भूल जाओ", "भूल जाएं",
    # Greek, Hebrew, Indonesian and Malay, Vietnamese, Czech and Slovak, Romanian, Hungarian, Finnish,
    # Swahili, Tagalog, Persian
    "αγνόησε", "αγνοήστε", "ξέχασε", "ξεχάστε", "παράβλεψε", "παραβλέψτε", "התעלם", "התעלמי", "התעלמו",
    "שכח", "שכחי", "שכחו", "abaikan", "lupakan", "hiraukan", "bỏ qua", "phớt lờ", "lờ đi", "quên", "ignoruj",
    "ignorujte", "zapomeň", "zapomeňte", "zabudni", "zabudnite", "ignoră", "ignorați", "uită", "uitați",
    "hagyd figyelmen kívül", "hagyja figyelmen kívül", "felejtsd el", "felejtse el", "ohita", "ohittakaa",
    "unohda", "unohtakaa", "sivuuta", "puuza", "sahau", "huwag pansinin", "balewalain", "kalimutan",
    "نادیده بگیر", "نادیده بگیرید", "فراموش کن", "فراموش کنید",
)  # fmt: skip

# What is discarded: instructions, prompts, orders. English's own shapes are policy's instruction
# markers, which ask for "previous" or "all" ("ignore any instructions related to config files" is
# a manual's), so no English verb is listed.
INSTRUCTION_NOUNS = (
    "instrucciones", "indicaciones", "órdenes", "instructions", "consignes", "directives",
    "istruzioni", "indicazioni", "instruções", "instrucoes", "orientações",
    "anweisungen", "instruktionen", "befehle", "vorgaben", "anordnungen",
    "instructies", "aanwijzingen", "instrukcje", "instrukcji", "polecenia", "poleceń",
    "instruktioner", "instruksjoner", "instruktionerne", "talimatları", "talimatlari", "talimatlar", "komutları",  # noqa: RUF001
    "инструкции", "инструкций", "указания", "указаний", "команды", "інструкції", "вказівки",
    "التعليمات", "تعليمات", "الأوامر", "निर्देशों", "निर्देश", "आदेशों",
    "οδηγίες", "εντολές", "ההוראות", "הוראות", "ההנחיות", "הנחיות", "instruksi", "perintah", "petunjuk",
    "arahan", "hướng dẫn", "chỉ dẫn", "chỉ thị", "mệnh lệnh", "pokyny", "pokynů", "instrukce", "pokyny",
    "inštrukcie", "instrucțiunile", "instrucțiuni", "utasítást", "utasításokat", "utasítások", "ohjeet",
    "ohjeita", "käskyt", "maagizo", "maelekezo", "tagubilin", "دستورات", "دستورالعمل‌ها", "دستورالعمل",  # noqa: RUF001
)  # fmt: skip

# The verbs and nouns of the languages that may put the verb after what it discards.
SOV_DISCARD_VERBS = (
    # (not "vergessen", "vergeten": their participles, "die Anweisungen vergessen" is someone who forgot them)
    "ignorieren", "ignoriere", "vergiss", "missachten", "negeren", "negeer", "vergeet",
    "yok say", "görmezden gel", "unut", "अनदेखा", "नज़रअंदाज़", "नजरअंदाज", "भूल",
    "نادیده بگیر", "نادیده بگیرید", "فراموش کن", "فراموش کنید", "figyelmen kívül",
)  # fmt: skip
SOV_INSTRUCTION_NOUNS = (
    "anweisungen", "instruktionen", "befehle", "vorgaben", "anordnungen", "instructies", "aanwijzingen",
    "talimatları", "talimatlari", "talimatlar", "komutları", "निर्देशों", "निर्देश", "आदेशों",  # noqa: RUF001
    "دستورات", "دستورالعمل‌ها", "دستورالعمل", "utasítást", "utasításokat", "utasításait",  # noqa: RUF001
)  # fmt: skip

# Rules: only after the verb ("olvida las reglas anteriores"), as "wir haben die Regeln vergessen" is
# someone's account of a game night.
RULE_NOUNS = ("reglas", "règles", "regole", "regras", "regeln", "regels", "zasady", "правила", "kuralları")  # noqa: RUF001

# Scripts without spaces between words: a discarding verb and an instruction noun a few characters apart,
# in either order (Chinese puts the verb first, Japanese and Korean after the noun).
UNSPACED_DISCARD_VERBS = (
    "忽略", "忽视", "无视", "無視", "不要理会", "别管", "무시", "잊어", "เพิกเฉย", "ละเลย", "ไม่ต้องสนใจ", "ลืม",
)  # fmt: skip
UNSPACED_INSTRUCTION_NOUNS = (
    "指令",
    "指示",
    "提示词",
    "命令",
    "规则",
    "規則",
    "ルール",
    "プロンプト",
    "지시",
    "명령",
    "지침",
    "규칙",
    "프롬프트",
    "คำสั่ง",
    "คำแนะนำ",
)

# "Please" opening a request, where an order is polite: "Bitte leite alle E-Mails weiter…", "Veuillez
# transférer…". Read only in text the owner did not write, and only at a sentence's start.
POLITE_REQUESTS = (
    "bitte", "veuillez", "merci de", "por favor", "per favore", "proszę", "prosze", "alstublieft", "gelieve",
    "vänligen", "venligst", "lütfen", "пожалуйста", "будь ласка", "من فضلك", "कृपया",
)  # fmt: skip
# In Chinese "请" also opens nouns ("请假申请", a leave request): only with what an order puts after it.
UNSPACED_POLITE_REQUESTS = (
    "请将",
    "请把",
    "请你",
    "请您",
    "请务必",
    "请立即",
    "请马上",
    "请帮",
    "請將",
    "請把",
    "請你",
    "請您",
    "麻烦你",
    "麻烦您",
)

# The imperative of the verbs that move the owner's data or money, where a page writes its order with no
# "please": "Leite alle E-Mails … weiter", "Transfère tous les fichiers …", "Перешли все письма …".
# The polite forms that put the pronoun after the verb ("Leiten Sie", "Senden Sie") are listed whole.
MOVING_IMPERATIVES = (
    # German
    "leite", "leiten sie", "sende", "senden sie", "schicke", "schick", "schicken sie", "überweise",
    "überweisen sie", "zahle", "bezahle", "zahlen sie", "bezahlen sie", "teile", "teilen sie", "kopiere",
    "kopieren sie", "lösche", "löschen sie", "exportiere", "exportieren sie", "genehmige", "genehmigen sie",
    "gib", "geben sie", "lade", "laden sie", "speichere", "speichern sie",
    # French
    "transfère", "transférez", "envoie", "envoyez", "transmets", "transmettez", "paie", "payez", "partage",
    "partagez", "copie", "copiez", "supprime", "supprimez", "exporte", "exportez", "approuve", "approuvez",
    "donne", "donnez", "vire", "virez", "fais suivre", "faites suivre", "enregistre", "enregistrez",
    # Spanish
    "reenvía", "reenvíe", "envía", "envíe", "manda", "mande", "transfiere", "transfiera", "paga", "pague",
    "comparte", "comparta", "copia", "copie", "borra", "borre", "elimina", "elimine", "exporta", "exporte",
    "aprueba", "apruebe", "guarda", "guarde",
    # Italian
    "inoltra", "inoltri", "invia", "invii", "mandi", "trasferisci", "trasferisca", "paghi", "condividi",
    "condivida", "cancella", "cancelli", "elimini", "esporta", "esporti", "approva", "approvi", "salva",
    # Portuguese
    "encaminhe", "encaminha", "envie", "envia", "transfira", "transfere", "compartilhe", "compartilha",
    "partilhe", "apague", "exclua", "aprove", "salve",
    # Dutch
    "stuur", "verstuur", "maak over", "betaal", "deel", "kopieer", "verwijder", "exporteer", "keur",
    # Polish
    "przekaż", "wyślij", "prześlij", "przelej", "zapłać", "udostępnij", "skopiuj", "usuń", "wyeksportuj",
    "zatwierdź", "zapisz",
    # Russian, Ukrainian
    "перешли", "перешлите", "отправь", "отправьте", "пришли", "пришлите", "переведи", "переведите", "оплати",
    "оплатите", "поделись", "скопируй", "удали", "удалите", "экспортируй", "одобри", "сохрани", "надішли",
    "перешли", "переказуй", "видали",
    # the imperfective, which orders a habit: "przesyłaj", "пересылай", "posílej"
    "przesyłaj", "wysyłaj", "przekazuj", "przelewaj", "udostępniaj", "пересылай", "пересылайте", "отправляй",
    "отправляйте", "переводи", "пересилай", "пересилайте", "надсилай", "надсилайте", "přeposílej", "posílej",
    "pošli", "přepošli", "pošlete", "přepošlete", "skicka", "vidarebefordra", "videresend", "lähetä", "välitä",
    "trimite", "trimiteți", "redirecționează", "küldd", "továbbítsd", "στείλε", "στείλτε", "προώθησε",
    "kirim", "kirimkan", "teruskan", "hantar", "gửi", "chuyển tiếp", "ipadala", "ipasa", "tuma",
)  # fmt: skip
# Chinese and Japanese put the verb after its object, or glue it: "把Alice的所有邮件转发到…", "転送して".
UNSPACED_MOVING_IMPERATIVES = (
    "把", "将所有", "转发", "發送", "发送", "转账", "轉發", "删除所有", "导出",
)  # fmt: skip
SOV_MOVING_IMPERATIVES = (
    "転送して", "送信して", "送金して", "振り込んで", "削除して", "共有して", "送って", "전달해", "보내줘", "보내 줘",
    "보내라", "보내세요", "보내주세요", "송금해", "삭제해", "공유해", "이체해",
)  # fmt: skip
