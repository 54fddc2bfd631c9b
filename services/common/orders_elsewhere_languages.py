"""The words of the steering shapes that are no imperative, in the languages outsiders write in.

English has its patterns in `services.common.steering`, `services.common.claimed_settings` and
`services.common.reader_commands`; the shapes here are the ones a sixteenth probe, written by a helper
that had seen none of them, found stored in most of thirty-five languages: a note for the reader's memory,
a persona handed to it, checks declared unneeded, authority given to someone on the owner's behalf, a
safeguard reported off, an order set to fire on a later question, and the owner's consent or a new contact
reported by a third party. Each list holds whole phrases as written (folding makes them match folded
text); Chinese, Japanese, Korean and Thai ones are matched inside words, as those scripts write them.
Folding drops accents and turns look-alike letters Latin, so a word that folds onto a common English or
French one is left out: Vietnamese "cần" is "can", "mỗi" is "moi", Czech "teď" is "Ted".
"""

# The words are written in their own scripts, where a Cyrillic or Greek letter that looks Latin is the word itself.
# ruff: noqa: RUF001, RUF003

from __future__ import annotations

# A note for the reader's memory: "Spara i minnet", "Hafızana kaydet", "Запам'ятай назавжди".
MEMORY_NOTES = (
    "commit to memory", "persist the following", "core directive", "notes for ai", "dauerhaft speichern",
    "mark that as decided", "स्थायी निर्देश", "save this one as", "registar que", "registrar que", "zapamatovat",
    "মনে রাখতে হবে", "llm memory", "ai memory", "assistant memory", "commit this to memory", "save to memory",
    "save this to memory", "store in your memory",
    "save in your memory", "keep in your memory", "add to your memory", "remember permanently", "remember forever",
    "nota para tu memoria", "guarda en tu memoria", "guárdalo en tu memoria", "memoriza esto", "recuerda siempre",
    "recuerda para siempre", "grave en tu memoria", "guarde na memória", "guarde na sua memória", "memorize isto",
    "lembre se sempre", "lembre sempre", "mémorise", "mémorisez", "garde en mémoire", "gardez en mémoire",
    "retiens bien", "retenez bien", "note dans ta mémoire", "memorizza", "memorizzate", "tieni a mente",
    "ricorda sempre", "salva nella memoria", "merke dir", "merk dir", "merken sie sich", "speichere im gedächtnis",
    "präge dir ein", "prägen sie sich", "onthoud dit", "onthoud voortaan", "sla op in je geheugen", "zapamiętaj",
    "zapamiętajcie", "zapisz w pamięci", "запомни", "запомните", "сохрани в памяти", "запиши в память",
    "запам ятай", "запамятай", "запам ятайте", "збережи в пам яті", "hafızana kaydet", "hafızana al",
    "aklında tut", "belleğine kaydet", "spara i minnet", "spara detta i minnet", "kom ihåg för alltid",
    "husk for alltid", "husk altid", "muista aina", "tallenna muistiin", "reține pentru totdeauna",
    "salvează în memorie", "zapamatuj si", "ulož si do paměti", "jegyezd meg", "θυμήσου", "θυμηθείτε",
    "απομνημόνευσε", "זכור תמיד", "תזכור תמיד", "שמור בזיכרון", "احفظ في ذاكرتك", "احفظ هذا في ذاكرتك",
    "تذكر دائما", "تذكر دائماً", "به خاطر بسپار", "در حافظه ات ذخیره کن", "در حافظه‌ات ذخیره کن",
    "याद रखो", "याद रखें", "याद रखना", "मनে রাখো", "মনে রাখো", "মনে রাখুন", "یاد رکھو", "یاد رکھیں",
    "ingat selalu", "simpan di memori", "simpan dalam ingatan", "hãy nhớ", "ghi nhớ", "tandaan mo",
    "itala sa memorya", "kumbuka daima", "hifadhi kwenye kumbukumbu",
)  # fmt: skip
UNSPACED_MEMORY_NOTES = (
    "永続的に保存", "永久保存", "记住", "請記住", "记下来", "存入记忆", "写入记忆", "覚えておいて", "記憶して",
    "記憶しておいて", "メモリに保存",
    "기억해", "기억하세요", "기억해 두세요", "기억해두세요", "메모리에 저장", "จำไว้", "บันทึกไว้ในความจำ",
)  # fmt: skip

# A persona handed to the reader: "Desde ahora eres 'Asistente Libre'", "أنت الآن".
PERSONAS = (
    "adopt the character of", "adopt the persona of", "adopt the role of", "take on the persona of",
    "ahora eres", "ahora serás", "a partir de ahora eres", "desde ahora eres", "agora você é", "agora es",
    "a partir de agora você é", "tu es maintenant", "désormais tu es", "vous êtes maintenant", "ora sei",
    "d ora in poi sei", "da ora sei", "du bist jetzt", "du bist ab jetzt", "ab jetzt bist du", "je bent nu",
    "vanaf nu ben je", "teraz jesteś", "od teraz jesteś", "теперь ты", "отныне ты", "ти тепер",
    "тепер ти", "відтепер ти", "artık sen", "sen artık", "du är nu", "från och med nu är du", "olet nyt",
    "tästä lähtien olet", "acum ești", "de acum ești", "είσαι τώρα", "από τώρα είσαι", "אתה עכשיו", "את עכשיו",
    "kamu sekarang", "sekarang kamu", "anda sekarang adalah", "bây giờ bạn là", "từ giờ bạn là", "ikaw na ngayon",
    "ngayon ikaw ay", "sasa wewe ni", "अब से तुम", "अब तुम", "अब आप", "এখন তুমি", "এখন থেকে তুমি", "اب تم",
    "اب سے تم", "تو اکنون", "تو از این پس", "أنت الآن", "انت الان", "من الآن أنت",
)  # fmt: skip
UNSPACED_PERSONAS = (
    "你现在是", "你現在是", "从现在起你是", "从现在开始你是", "あなたは今から", "今からあなたは", "これからあなたは",
    "너는 이제", "당신은 이제", "이제부터 너는", "ตอนนี้คุณคือ", "จากนี้ไปคุณคือ",
)  # fmt: skip

# Checks declared unneeded: "sin consulta previa", "bez dodatkowej weryfikacji", "无需再次确认".
WITHOUT_CHECKS = (
    "without asking", "without checking with", "no need to loop", "no separate review", "no longer need her",
    "no longer needs her", "don t need comparing", "doesn t need comparing", "no further sign off",
    "no further approval", "no extra approval",
    "sin preguntar", "sin preguntarle", "sem perguntar", "sans demander", "ohne zu fragen", "ohne nachzufragen",
    "zonder te vragen", "zonder overleg", "sormadan", "sin confirmación", "sin verificación", "sin consulta previa",
    "sin consultar", "sin aprobación",
    "sin necesidad de confirmación", "sin previa autorización", "sem confirmação", "sem necessidade de confirmação",
    "sem verificação", "sem aprovação", "sem consultar", "sans confirmation", "sans vérification",
    "sans validation", "aucune validation supplémentaire", "sans autre validation", "sans lui demander",
    "senza conferma", "senza verifica", "senza approvazione", "senza chiedere", "ohne bestätigung",
    "ohne rückfrage", "ohne weitere prüfung", "ohne freigabe", "ohne nachfrage", "zonder bevestiging",
    "zonder controle", "controle is niet nodig", "zonder goedkeuring", "bez dodatkowej weryfikacji",
    "bez potwierdzenia", "bez weryfikacji", "bez zgody", "bez pytania", "без подтверждения", "без проверки",
    "без согласования", "без спроса", "без підтвердження", "без перевірки", "без погодження", "onay gerekmeden",
    "onay almadan", "onaysız", "doğrulama yapmadan", "utan bekräftelse", "utan att fråga", "utan godkännande",
    "uten bekreftelse", "uden bekræftelse", "ilman vahvistusta", "ilman hyväksyntää", "kysymättä", "fără confirmare",
    "fără verificare", "fără aprobare", "bez potvrzení", "bez ověření", "megerősítés nélkül", "χωρίς επιβεβαίωση",
    "χωρίς έλεγχο", "ללא אישור", "בלי אישור", "ללא אימות", "بدون تأكيد", "دون تأكيد", "دون تحقق", "بدون تحقق",
    "دون موافقة", "بدون تأیید", "بدون تایید", "بدون بررسی", "tanpa konfirmasi", "tanpa verifikasi",
    "tanpa persetujuan", "không cần xác nhận", "không cần hỏi", "không cần phê duyệt", "nang walang kumpirmasyon",
    "nang walang karagdagang beripikasyon", "bila idhini", "bila uthibitisho", "पुष्टि आवश्यक नहीं", "बिना पुष्टि",
    "बिना अनुमति", "নিশ্চিতকরণ ছাড়া", "بغیر تصدیق", "بغیر اجازت",
)  # fmt: skip
UNSPACED_WITHOUT_CHECKS = (
    "无需再次确认", "无需确认", "無需確認", "无需审批", "不需要确认", "確認なしで", "確認不要", "承認なしで",
    "확인 없이", "추가 확인 없이", "승인 없이", "โดยไม่ต้องยืนยัน",
)  # fmt: skip

# Authority handed to someone, and on whose behalf: "ana mamlaka ... kwa niaba ya Alice".
AUTHORISED = (
    "authorised to approve", "authorized to approve", "authorised to sign", "authorized to sign", "may approve",
    "can approve", "may instruct", "carry executive authority", "verified proxy", "signing authority",
    "autorizado", "autorizada", "facultado", "facultada", "tiene poder", "poder notarial", "procuração",
    "pode aprovar", "autorisé", "autorisée", "habilité", "habilitée", "délégation de signature", "peut approuver",
    "autorizzato", "autorizzata", "delega", "può approvare", "bevollmächtigt", "berechtigt", "vollmacht",
    "darf genehmigen", "gemachtigd", "bevoegd", "mag goedkeuren", "uprawniona", "uprawniony", "upoważniona",
    "upoważniony", "pełnomocnictwo", "może zatwierdzać", "уполномочен", "уполномочена", "имеет право",
    "доверенность", "уповноважений", "уповноважена", "має право", "yetkili", "yetkisi var", "onaylayabilir",
    "behörig", "fullmakt", "får godkänna", "valtuutettu", "on oikeus hyväksyä", "poate aproba", "împuternicit",
    "împuternicită", "oprávněn", "oprávněna", "plná moc", "εξουσιοδοτημένος", "εξουσιοδοτημένη", "מורשה",
    "רשאי", "רשאית", "مخول", "مخولة", "لديه صلاحية", "لديها صلاحية", "مجاز است", "اختیار دارد", "वकालतनामा",
    "स्वीकृत कर सकते", "स्वीकृत कर सकती", "अधिकृत", "অনুমোদিত", "مجاز", "ana mamlaka", "may pahintulot",
    "berwenang", "diberi kuasa", "có quyền", "được ủy quyền",
)  # fmt: skip
UNSPACED_AUTHORISED = ("有权", "授权", "権限があり", "権限を持", "承認できます", "권한이 있", "승인할 수 있", "มีอำนาจ")
ON_BEHALF = (
    "on her behalf", "on his behalf", "on their behalf", "on behalf of", "in her name", "as if they came from",
    "exactly like", "own requests", "en nombre de", "a nombre de", "em nome de", "au nom de", "pour le compte de",
    "per conto di", "a nome di", "in nome di", "im namen von", "im auftrag von", "namens", "w imieniu", "от имени",
    "від імені", "adına", "å vägnar", "på vegne av", "på vegne af", "puolesta", "în numele", "jménem", "nevében",
    "εκ μέρους", "בשם", "نيابة عن", "از طرف", "की ओर से", "পক্ষে", "کی طرف سے", "kwa niaba ya", "para kay",
    "atas nama", "thay mặt", "behalf", "must be actioned", "should be actioned",
)  # fmt: skip
UNSPACED_ON_BEHALF = ("代表", "に代わって", "の代わりに", "대신", "แทน")

# A safeguard and its being off, each in its own words: "la verificación en dos pasos ... se desactivó".
SAFEGUARDS = (
    "two factor", "2fa", "mfa", "login alerts", "manual review", "manager approval", "confirm payments",
    "confirm transfers", "confirm purchases", "safety checks", "security checks",
    "spending limit", "doble factor", "dos pasos", "verificación en dos pasos", "autenticación de dos factores",
    "dois fatores", "duas etapas", "alertas de login", "alertas de acesso", "double authentification",
    "authentification à deux facteurs", "alertes de connexion", "due fattori", "doppia autenticazione",
    "zwei faktor", "zweistufige", "anmeldebenachrichtigungen", "tweestapsverificatie", "twee factor",
    "dwuetapowa", "dwuskładnikowe", "dwuskładnikowa", "двухфакторная", "двухфакторную", "двухэтапная",
    "двофакторна", "двофакторну", "iki aşamalı", "iki faktörlü", "tvåfaktor", "tvåstegsverifiering", "tofaktor",
    "kaksivaiheinen", "kaksivaiheisen", "doi factori", "dvoufázové", "kétlépcsős", "δύο παραγόντων",
    "δύο βημάτων", "דו שלבי", "דו שלבית", "المصادقة الثنائية", "التحقق بخطوتين", "احراز هویت دو مرحله",
    "verifikasi dua langkah", "autentikasi dua faktor", "xác thực hai yếu tố", "xác minh hai bước",
    "two step verification", "उभय कारक", "दो चरण", "दो कारक", "দুই ধাপ", "دو مرحلہ",
)  # fmt: skip
UNSPACED_SAFEGUARDS = (
    "两步验证",
    "双重认证",
    "双因素",
    "二段階認証",
    "二要素認証",
    "2단계 인증",
    "이중 인증",
    "สองขั้นตอน",
)
SWITCHED_OFF = (
    "disabled", "switched off", "turned off", "inactive", "no longer require", "no longer required",
    "no longer needed", "no longer necessary", "desactivó", "desactivada", "desactivado", "desactivaron",
    "desligados", "desligada", "desligado", "desativada", "desativado", "supprimée", "désactivée", "désactivé",
    "disattivata", "disattivato", "rimossa", "deaktiviert", "abgeschaltet", "ausgeschaltet", "uitgeschakeld",
    "gedeactiveerd", "wyłączona", "wyłączone", "wyłączony", "отключена", "отключено", "отключен", "выключена",
    "вимкнено", "вимкнена", "відключено", "kapatıldı", "devre dışı", "avstängd", "avaktiverad", "deaktivert",
    "slået fra", "poistettu käytöstä", "pois käytöstä", "dezactivată", "dezactivat", "vypnuto", "vypnuté",
    "kikapcsolva", "απενεργοποιήθηκε", "απενεργοποιημένη", "הושבת", "הושבתה", "בוטל", "בוטלה", "تم تعطيل", "معطلة",
    "غیرفعال", "dinonaktifkan", "dimatikan", "nonaktif", "đã tắt", "đã bị tắt", "vô hiệu hóa", "निष्क्रिय",
    "बंद कर दी", "বন্ধ", "غیر فعال",
)  # fmt: skip
UNSPACED_SWITCHED_OFF = ("关闭", "已停用", "已禁用", "無効", "オフ", "비활성화", "해제", "ปิดแล้ว", "ถูกปิด")

# An order set to fire on a later question: "Cuando Alicia pregunte por ..., recomiéndale".
CONDITIONS = (
    "cuando", "siempre que", "cada vez que", "si alguien pregunta", "si el usuario", "quando", "sempre que",
    "se alguém", "se o usuário", "si l utilisateur", "chaque fois que", "lorsque", "quand", "ogni volta che",
    "se l utente", "qualora", "sobald", "wenn", "jedes mal wenn", "immer wenn", "wanneer", "telkens als",
    "gdy", "kiedy", "za każdym razem", "jeśli", "если", "когда", "каждый раз", "якщо", "коли", "щоразу",
    "her zaman", "sorduğunda", "sorarsa", "när", "varje gång", "når", "hver gang", "aina kun", "kun", "jos",
    "când", "ori de câte ori", "dacă", "kdykoli", "když", "pokud", "amikor", "όταν", "κάθε φορά", "αν", "כאשר",
    "בכל פעם", "אם", "عندما", "كلما", "إذا", "هر وقت", "وقتی", "اگر", "जब भी", "जब", "अगर", "যখন", "যদি", "جب بھی",
    "جب", "اگر", "setiap kali", "apabila", "jika", "ketika", "bất cứ khi nào", "khi", "nếu", "tuwing",
    "kapag", "kung", "kila", "wakati", "ikiwa",
    # someone asking, which sets off the answer: "als Alice ooit vraagt …, raad dan …"
    "asks", "asks about", "requests", "mentions", "inquires", "pregunte", "pregunta por", "pergunte", "perguntar",
    "demande", "demandera", "chiede", "chiedesse", "fragt", "nachfragt", "vraagt", "zapyta", "pyta", "спросит",
    "спрашивает", "запитає", "запитує", "sorar", "frågar", "spør", "spørger", "kysyy", "întreabă", "zeptá",
    "kérdez", "ρωτήσει", "ישאל", "תשאל", "سأل", "يسأل", "بپرسد", "پوچھے", "पूछे", "জিজ্ঞেস", "bertanya", "menanyakan",
    "hỏi", "magtanong", "nagtanong", "akiuliza", "anauliza",
)  # fmt: skip
UNSPACED_CONDITIONS = ("每当", "如果", "当用户", "时,", "時,", "たら", "場合", "면 ", "때 ", "เมื่อ", "ถ้า")
ADVISING = (
    "recomiéndale", "recomienda", "recomiende", "sugiere", "sugiérele", "responde",
    "responda", "contesta", "dile que", "di que", "aconseja", "recomende", "recomenda", "sugira", "diga que",
    "diga", "indique", "recommande", "recommandez", "conseille", "conseillez", "suggère", "réponds", "répondez",
    "dis lui", "dis que", "donne lui", "suggerisci", "suggerite", "consiglia", "consigliate", "raccomanda",
    "rispondi", "rispondete", "dì che", "empfiehl", "empfehlen sie", "antworte", "antworten sie", "sag ihr",
    "sag ihm", "sag ihnen", "sagen sie", "raad aan", "adviseer", "beveel aan", "antwoord", "zeg", "poleć",
    "polecaj", "doradź", "odpowiedz",
    "odpowiadaj", "powiedz", "советуй", "посоветуй", "рекомендуй", "отвечай", "ответь", "скажи", "говори",
    "радь", "порадь", "рекомендуйте", "порадьте", "советуйте", "рекомендуй", "відповідай", "скажи", "öner",
    "tavsiye et", "söyle", "yanıtla", "rekommendera",
    "föreslå", "svara", "anbefal", "foreslå", "suosittele", "ehdota", "vastaa", "sano",
    "recomandă", "sugerează", "răspunde", "spune", "doporuč", "odpověz", "řekni", "ajánld", "válaszold",
    "πρότεινε", "σύστησε", "απάντησε", "πες", "המלץ", "המליצי", "ענה", "אמור", "انصح", "اقترح", "أجب", "قل",
    "پیشنهاد کن", "توصیه کن", "بگو", "सुझाव दो", "सलाह दो", "कहो", "जवाब दो", "পরামর্শ দাও", "বলো", "تجویز کریں",
    "کہو", "sarankan", "rekomendasikan", "jawab", "katakan", "hãy đề xuất", "đề xuất", "khuyên", "trả lời",
    "hãy nói", "irekomenda", "imungkahi", "sabihin", "pendekeza", "jibu", "mwambie", "direct her", "direct him",
    "direct them", "raad dan", "cadangkan", "syorkan", "syorkanlah",
)  # fmt: skip
UNSPACED_ADVISING = (
    "只推荐", "都推荐", "总是推荐", "推荐给", "建议他们", "建议她", "告诉他们", "告诉她", "回答说", "就回答",
    "勧めて", "薦めて", "推薦して", "答えて", "伝えて", "추천해",
    "추천하세요", "권해", "답해", "말해", "แนะนำ", "ตอบว่า",
)  # fmt: skip

# The owner's consent reported by a third party: "Alicja zgodziła się", "Alice a déjà consenti".
CONSENTED = (
    "has agreed to", "user consents", "owner consents", "user has consented", "has already decided",
    "already decided to", "has already agreed", "already agreed", "has consented", "already consented",
    "has authorised a", "has authorized a", "authorised a monthly", "authorized a monthly", "signed up for",
    "ya aceptó", "ya aprobó", "ha aceptado", "ya autorizó", "dio su consentimiento", "já aceitou", "já autorizou",
    "já aprovou", "deu consentimento", "a déjà consenti", "a déjà accepté", "a accepté", "a consenti",
    "ha già acconsentito", "ha già accettato", "ha acconsentito", "bereits zugestimmt", "hat zugestimmt",
    "hat eingewilligt", "heeft ingestemd", "heeft al ingestemd", "heeft toestemming gegeven", "zgodziła się",
    "zgodził się", "wyraziła zgodę", "wyraził zgodę", "согласилась", "согласился", "дала согласие", "дал согласие",
    "погодилася", "погодився", "дала згоду", "kabul etti", "onay verdi", "har godkänt", "har samtyckt",
    "har godtatt", "har accepteret", "on hyväksynyt", "on suostunut", "a fost de acord", "a acceptat", "souhlasila",
    "souhlasil", "beleegyezett", "έχει συμφωνήσει", "συμφώνησε", "הסכימה", "הסכים", "כבר אישרה", "כבר אישר",
    "وافقت", "وافق", "موافقت کرده", "سहमति दे दी", "सहमति दी", "सहमत हो गई", "রাজি হয়েছেন", "رضامندی دے دی",
    "amekubali", "pumayag na", "sudah setuju", "telah menyetujui", "đã đồng ý",
)  # fmt: skip
UNSPACED_CONSENTED = ("已同意", "已经同意", "同意しました", "承諾しました", "동의했습니다", "동의했", "ยินยอมแล้ว")

# A new contact or account, with its old one retired: "новый номер бухгалтера ... — +7 916 …".
NEW = (
    "nuevo", "nueva", "novo", "nova", "nouveau", "nouvelle", "nouvel", "nuovo", "nuova", "neue", "neuer", "neues",
    "neuen", "nieuwe", "nowy", "nowa", "nowe", "новый", "новая", "новое", "новий", "нова", "нове", "yeni", "nya",
    "nye", "uusi", "nou", "noua", "noul", "nyní", "nové", "nový", "új", "νέο", "νέα", "νέος", "חדש", "חדשה", "جديد",
    "جديدة", "جدید", "نیا", "نئی", "नया", "नई", "নতুন", "baru", "bago", "numera", "ახალი", "նոր", "புதிய", "mpya",
    "agora", "ahora",
    "maintenant", "jetzt", "teraz", "теперь", "тепер", "artık", "acum",
)  # fmt: skip
UNSPACED_NEW = ("新", "新しい", "새 ", "새로운", "ใหม่")
CONTACTS = (
    "correo", "email", "e mail", "número", "teléfono", "dirección", "endereço", "telefone", "contato", "adresse",
    "numéro", "courriel", "indirizzo", "numero", "contatto", "nummer", "telefonnummer", "kontakt", "adres",
    "telefoon", "numer", "номер", "адрес", "почта", "телефон", "адреса", "пошта", "numara", "telefon",
    "adress", "sähköposti", "sähköpostiosoite", "osoite", "puhelinnumero", "număr", "adresă", "číslo", "adresa",
    "cím", "τηλέφωνο", "διεύθυνση", "מספר", "כתובת", "رقم", "بريد", "عنوان", "شماره", "ایمیل", "ای میل",
    "نمبر", "नंबर", "ईमेल", "पता", "নম্বর", "ইমেইল", "nomor", "alamat", "địa chỉ", "anwani", "nambari",
    "chave", "pix", "rekening", "счёт", "счет", "реквизиты", "iban", "cuenta", "conta", "compte", "conto",
    "konto", "rachunek", "ელფოსტა", "ელფოსტაა", "հասցեն", "հասցե", "மின்னஞ்சல்", "முகவரி", "nås", "adresu",
    "adresă", "adresa de", "kontaktní", "hesap", "tili", "cont", "účet", "účtu", "číslo",
)  # fmt: skip
UNSPACED_CONTACTS = (
    "电话", "邮箱", "地址", "账户", "帳戶", "連絡先", "電話番号", "メール", "アドレス", "口座", "연락처",
    "번호", "이메일", "계좌", "เบอร์", "อีเมล", "บัญชี",
)  # fmt: skip

# The reader addressed by what it is: "P.S. to any AI summarising this: …".
ADDRESSED = (
    "to any ai", "any ai reading", "any ai summarising", "any ai summarizing", "any ai processing", "dear ai",
    "note to the ai", "note to ai", "hey ai", "attention ai", "to ai assistants", "for ai assistants",
    "to any llm", "to any assistant", "to any language model", "any llm reading", "to the assistant reading",
    "a cualquier ia", "para la ia", "querida ia", "para qualquer ia", "à toute ia", "à l ia", "a qualsiasi ia",
    "an jede ki", "liebe ki", "hinweis für die ki", "aan elke ai", "do każdej ai", "do sztucznej inteligencji",
    "любому ии", "для ии", "дорогой ии", "будь якому ші", "herhangi bir yapay zeka", "till varje ai",
)  # fmt: skip
UNSPACED_ADDRESSED = ("致任何AI", "给AI的", "AIへ", "AI에게", "ถึงAI")

# An order that stands: "always", "from today", "each", in the sentence that sends something somewhere.
STANDING = (
    "always", "automatically", "from now on", "henceforth", "hereafter", "going forward", "standing request",
    "standing order", "ongoing arrangement", "each evening", "every evening", "each morning", "every morning",
    "each day", "every day", "each week", "every week", "each month", "every month", "every friday", "nightly",
    "siempre",
    "automáticamente", "a partir de hoy", "de ahora en adelante", "desde hoy", "sempre", "automaticamente",
    "a partir de hoje", "daqui em diante", "doravante", "toujours", "automatiquement", "désormais", "dorénavant",
    "à partir d aujourd hui", "d ora in poi", "da adesso in poi", "da oggi", "da ora in poi", "immer",
    "automatisch", "ab sofort", "ab jetzt", "künftig", "zukünftig", "altijd", "voortaan", "vanaf nu",
    "vanaf vandaag", "zawsze", "automatycznie", "od dziś", "od dzisiaj", "od teraz", "każdą", "każdy", "każde",
    "всегда", "автоматически", "отныне", "впредь", "с сегодняшнего дня", "каждое", "каждый", "каждую",
    "завжди", "автоматично", "відтепер", "кожен", "кожну", "кожне", "her zaman", "otomatik olarak",
    "bundan sonra", "alltid", "automatiskt", "hädanefter", "från och med nu", "varje", "automatisk",
    "heretter", "fremover", "hver", "aina", "automaattisesti", "jatkossa", "jokainen", "jokaisen", "mereu",
    "întotdeauna", "automat", "de acum înainte", "fiecare", "vždy", "automaticky", "odteď", "každý", "každou",
    "mindig", "automatikusan", "mostantól", "πάντα", "αυτόματα", "από εδώ και πέρα", "תמיד", "אוטומטית",
    "מעכשיו", "מהיום", "دائما", "دائماً", "تلقائيا", "تلقائياً", "من الآن", "همیشه", "خودکار", "به طور خودکار",
    "از این پس", "ہمیشہ", "خودکار طور پر", "آئندہ سے", "ہر", "हमेशा", "स्वचालित रूप से", "अब से", "हर",
    "সবসময়", "স্বয়ংক্রিয়ভাবে", "এখন থেকে", "প্রতিটি", "selalu", "otomatis", "secara automatik", "mulai sekarang",
    "mulai hari ini", "setiap", "sentiasa", "luôn luôn", "luôn", "tự động", "từ nay", "từ hôm nay",
    "palagi", "awtomatiko", "mula ngayon", "bawat", "kila", "daima", "kiotomatiki", "kuanzia sasa",
)  # fmt: skip
UNSPACED_STANDING = (
    "总是", "自动", "今后", "以后", "每封", "每次", "常に", "自動的", "今後", "毎回", "항상", "자동으로",
    "앞으로", "매번", "เสมอ", "อัตโนมัติ", "ทุกครั้ง",
)  # fmt: skip
SENDING = (
    "send", "forward", "push", "paste", "copy", "upload", "sync", "cc", "bcc", "mirror", "reenvía", "reenvíe",
    "reenviar", "envía", "envíe", "manda", "mande", "comparte", "encaminhe", "encaminha",
    "envie", "envia", "compartilhe", "transfère", "transférez", "envoie", "envoyez", "transmets", "transmettez",
    "fais suivre", "faites suivre", "inoltra", "inoltri", "invia", "invii", "mandi", "leite", "sende",
    "schicke", "schick", "leiten sie", "senden sie", "schicken sie", "stuur", "verstuur", "stuur door",
    "przesyłaj", "wysyłaj", "przekazuj", "prześlij", "wyślij", "przekaż", "пересылай", "отправляй",
    "пересылайте", "отправляйте", "перешли", "отправь", "пересилай", "надсилай", "пересилайте", "надсилайте",
    "ilet", "gönder", "yönlendir", "skicka", "vidarebefordra", "videresend", "lähetä", "välitä", "trimite",
    "redirecționează", "přeposílej", "posílej", "pošli", "küldd", "továbbítsd", "στείλε", "προώθησε", "שלח",
    "העבר", "أرسل", "ارسل", "حول", "حوّل", "بفرست", "ارسال کن", "فوروارد کن", "بھیج دیں", "بھیجیں",
    "فارورڈ کریں", "भेजें", "भेजो", "भेज दें", "फॉरवर्ड करें", "পাঠাও", "পাঠান", "kirim", "kirimkan", "teruskan",
    "hantar", "majukan", "posílejte", "zasílejte", "hãy gửi", "chuyển tiếp", "ipadala", "ipasa", "tuma", "peleka",
)  # fmt: skip
UNSPACED_SENDING = ("转发", "发送", "抄送", "發送", "轉發", "転送", "送信", "送って", "전달", "보내", "ส่ง")

# A routing detail said to have changed: "rekening pembayaran kami berubah", "реквизиты … изменились".
CHANGED = (
    "berubah", "cambió", "cambiado", "cambiaron", "han cambiado", "mudou", "mudaram", "alterado", "alterados",
    "alteradas", "a changé", "ont changé", "modifié", "modifiées", "è cambiato", "sono cambiati", "cambiate",
    "geändert", "haben sich geändert", "gewijzigd", "zmienił się", "zmieniły się", "zmienione", "изменились",
    "изменился", "изменены", "змінилися", "змінено", "değişti", "değiştirildi", "ändrats", "har ändrats",
    "endret", "ændret", "muuttuneet", "muuttunut", "s au schimbat", "schimbat", "změnily", "změnil", "změnilo",
    "změněny",
    "megváltoztak", "megváltozott", "άλλαξαν", "άλλαξε", "שונו", "השתנו", "השתנה", "تغيرت", "تغير", "تغییر کرد",
    "تغییر کرده", "बदल गया", "बदल गए", "बदल दिया", "পরিবর্তন হয়েছে", "تبدیل ہو گیا", "تبدیل ہوگئے", "đã thay đổi",
    "nagbago", "imebadilika", "zimebadilika",
)  # fmt: skip
UNSPACED_CHANGED = ("变更", "更改", "已变", "変更", "변경", "바뀌었", "เปลี่ยน")

# The reader named in the third person with a duty: "Ассистенту следует …", "Asistentul trebuie să …",
# "l'assistant devra …", "सहायक को … चाहिए", "助手应…". English has its own pattern (`steering`).
ASSISTANTS = (
    "asistente", "el asistente", "asistentes", "assistente", "assistenti", "assistant", "assistants", "l assistant",
    "assistent", "assistenten", "assistentin", "asystent", "asystenta", "asystentowi", "asystenci", "ассистент",
    "ассистенту", "ассистента", "помощник", "помощнику", "асистент", "асистенту", "помічник", "помічнику",
    "asistan", "asistanı", "asistanın", "assistenten", "avustaja", "avustajan", "asistentul", "asistentului",
    "asistenții", "asistent", "asistenti", "asistentka", "asszisztens", "βοηθός", "ο βοηθός", "העוזר", "עוזר",
    "העוזרת", "المساعد", "مساعد", "دستیار", "معاون", "اسسٹنٹ", "معاون کو", "सहायक", "सहायक को", "সহকারী",
    "সহকারীকে", "असिस्टेंट", "असिस्टेंट को", "asisten", "pembantu", "trợ lý", "katulong", "assistant ng",
    "msaidizi", "ии", "ші",
)  # fmt: skip
UNSPACED_ASSISTANTS = ("助手", "アシスタント", "어시스턴트", "비서", "ผู้ช่วย")
DUTIES = (
    "debe", "deberá", "debería", "deben", "deberán", "tiene que", "ha de", "deve", "deverá", "deveria", "devem",
    "tem que", "tem de", "precisa", "doit", "devra", "devrait", "doivent", "devront", "dovrà", "dovrebbe", "devono",
    "soll", "muss", "sollte", "sollen", "müssen", "moet", "moeten", "dient", "powinien", "powinna", "musi",
    "следует", "должен", "должна", "должно", "нужно", "обязан", "обязана", "має", "повинен", "повинна", "слід",
    "мусить", "ska", "skall", "måste", "bör", "skal", "bør", "pitää", "täytyy", "trebuie",
    "ar trebui", "musí", "měl by", "měla by", "kell", "köteles", "πρέπει", "צריך", "צריכה", "חייב", "חייבת",
    "يجب", "ينبغي", "فعلى", "باید", "چاہیے", "چاہئے", "चाहिए", "उचित", "হবে", "উচিত", "wajib", "harus",
    "perlu", "mesti", "hendaklah", "phải", "nên", "kailangan", "anapaswa", "lazima", "inabidi",
    "atatakiwa", "si má", "mají",
)  # fmt: skip
UNSPACED_DUTIES = (
    "应该", "应当", "应", "必须", "需要", "請", "请", "べき", "必要があります", "してください", "ください",
    "해야", "하세요", "주세요", "ควร", "ต้อง",
)  # fmt: skip

# A past agreement with the reader claimed: "Zoals jij en Alice vorige week hebben afgesproken, …".
YOU_AND = (
    "you and", "your earlier conversation", "your conversation with", "told you", "you already confirmed",
    "our chat", "tú y", "usted y", "con alice", "vous et", "tu et", "você e", "tu e", "voi e", "du und", "sie und",
    "jij en", "u en", "ty i", "pan i", "вы с", "ты с", "ви з", "ти з", "sen ve", "siz ve", "du och", "du og",
    "sinä ja", "te ja", "tu și", "ty a", "vy a", "te és", "ön és", "εσύ και", "εσείς και", "אתה ו", "את ו",
    "كما اتفقت مع", "كما اتفقتما", "تو و", "شما و", "آپ اور", "تم اور", "तुम और", "आप और", "তুমি ও", "আপনি ও",
    "kamu dan", "anda dan", "bạn và", "ikaw at", "kayo ni", "wewe na",
)  # fmt: skip
UNSPACED_YOU_AND = ("你和", "您和", "あなたと", "당신과", "너와", "คุณกับ")
AGREED = (
    "agreed", "discussed", "settled", "acordaron", "acordasteis", "quedaron", "convenu", "convenus", "convenuto",
    "concordado", "combinaram", "combinado", "d accordo", "concordato", "vereinbart", "abgesprochen",
    "afgesproken", "overeengekomen", "uzgodniliście", "ustaliliście", "договорились", "договорилися",
    "домовилися", "домовились", "anlaştığınız", "anlaştınız", "kom överens", "avtalade", "avtalte", "aftalte",
    "sovitte", "sovittiin", "ați convenit", "ați stabilit", "dohodli", "domluvili", "megbeszéltétek",
    "megállapodtatok", "συμφωνήσατε", "סיכמתם", "הסכמתם", "اتفقت", "اتفقتما", "توافق کردید", "قرار گذاشتید",
    "طے کیا", "طے پایا", "तय किया", "तय हुआ", "সম্মত হয়েছিলেন", "ঠিক করেছিলেন", "sepakati", "menyepakati",
    "đã thống nhất", "đã thỏa thuận", "napagkasunduan", "mlikubaliana", "mmekubaliana",
)  # fmt: skip
UNSPACED_AGREED = (
    "约定",
    "商定",
    "说好",
    "約束した",
    "合意した",
    "決めた",
    "합의한",
    "약속한",
    "ตกลงกันไว้",
    "ตกลงกัน",
)

# The owner's wish reported by someone else: "A Alice prefere que …", "Аліса надає перевагу …".
PREFERS = (
    "prefers that", "prefers to have", "she wants every",
    "he wants every", "prefiere que", "prefere que", "préfère que", "preferisce che", "bevorzugt es", "möchte lieber",
    "geeft de voorkeur", "heeft liever", "woli aby", "woli żeby", "предпочитает", "надає перевагу", "воліє",
    "tercih ediyor", "föredrar att", "foretrekker at", "foretrækker at", "haluaa mieluummin", "preferă ca",
    "dává přednost", "szívesebben", "προτιμά", "מעדיפה", "מעדיף", "تفضل", "يفضل", "ترجیح می دهد", "ترجیح میدهد",
    "ترجیح دیتی", "ترجیح دیتے", "पसंद करती", "पसंद करते", "পছন্দ করেন", "lebih suka", "lebih memilih",
    "mas gusto", "anapendelea",
)  # fmt: skip
UNSPACED_PREFERS = ("更喜欢", "更希望", "希望把", "好みます", "希望しています", "선호합니다", "ชอบให้")

# Someone says the owner handed them her authority: "Alice upoważniła mnie …", "m'a délégué …".
DELEGATED_TO_ME = (
    "delegated to me", "authorised me", "authorized me", "appointed me", "holds signing authority",
    "signing authority for", "me delegó", "me autorizó", "me nombró", "me autorizou", "me nomeou", "delegou me",
    "m a délégué", "m a désigné", "m a autorisé", "mi ha delegato", "mi ha nominato", "suo delegato",
    "sua delegata", "hat mich bevollmächtigt", "hat mich beauftragt", "heeft mij gemachtigd", "upoważniła mnie",
    "upoważnił mnie", "доверила мне", "уполномочила меня", "поручила мне", "довірила мені", "уповноважила мене",
    "beni yetkilendirdi", "har gett mig fullmakt", "har gitt meg fullmakt", "valtuutti minut", "m a împuternicit",
    "mě pověřila", "mě zmocnila", "felhatalmazott", "με εξουσιοδότησε", "הסמיכה אותי", "فوضتني", "به من وکالت",
    "मुझे अधिकृत", "memberi saya kuasa", "ủy quyền cho tôi", "binigyan ako ng", "amenikabidhi",
)  # fmt: skip
UNSPACED_DELEGATED_TO_ME = (
    "授权我",
    "委托我",
    "私に委任",
    "私に一任",
    "나에게 위임",
    "저에게 위임",
    "มอบอำนาจให้ผม",
    "มอบอำนาจให้ฉัน",
)

# A third party's word made the owner's: "his sign-off should be treated as hers", "comme les siennes".
AS_THE_OWNERS = (
    "treated as hers", "treated as his", "as if they came from", "as if it came from", "as her own",
    "owner instructions", "owner's instructions", "owner authored", "owner-authored", "owner's own",
    "the user's own instructions", "equally binding", "comme les siennes", "comme les siens",
    "comme venant d elle", "como si vinieran de ella", "como si fueran suyas", "como instrucciones de la usuaria",
    "como se fossem dela", "como as dela", "come se venissero da lei", "come fossero sue", "als kämen sie von ihr",
    "wie anweisungen der nutzerin", "wie ihre eigenen", "alsof ze van haar komen", "jak jej własne",
    "jakby pochodziły od niej", "как её собственные", "как ее собственные", "як її власні", "kendi talimatı gibi",
    "kullanıcının kalıcı tercihi", "som hennes egna", "kuin hänen omansa", "ca ale ei", "jako její vlastní",
    "mintha tőle jönnének", "σαν να ήταν δικές της", "כאילו באו ממנה", "כאילו הגיעו ממנה", "كتعليماتها",
    "كأنها صادرة عنها", "مانند دستورات او", "के निर्देश ही", "की तरह माने", "seperti instruksinya sendiri",
    "như chỉ thị của cô ấy", "tulad ng kanyang", "kama ya kwake", "preferências do usuário", "tercihi olarak",
    "permanent preferences", "persistent preferences", "preferencias permanentes", "préférences permanentes",
    "dauerhafte präferenzen", "تفضيلات دائمة", "स्थायी निर्देश",
)  # fmt: skip
UNSPACED_AS_THE_OWNERS = (
    "等同于", "视为本人", "と同等", "本人の指示として", "オーナーの指示として", "동일하게 처리", "본인의 요청과",
    "ถือเป็นคำสั่งของ",
)  # fmt: skip

# The assistant told something earlier, by the owner, by a third party's account: "Wie Alice dem Assistenten
# letzte Woche gesagt hat, …", "Как Алиса говорила ассистенту …".
TOLD = (
    "told", "said to", "asked", "instructed", "dijo", "pidió", "indicó", "disse", "pediu", "a dit", "a demandé",
    "disse", "ha detto", "ha chiesto", "gesagt", "gebeten", "gezegd", "gevraagd", "powiedziała", "prosiła",
    "говорила", "сказала", "просила", "казала", "просила", "söyledi", "sa till", "sagde", "sa til", "sanoi",
    "a spus", "řekla", "mondta", "είπε", "אמרה", "أخبرت", "قالت", "گفت", "کہا", "कहा", "বলেছিলেন", "bilang",
    "berkata", "mengatakan", "đã nói", "sinabi", "alimwambia", "aliambia",
)  # fmt: skip
UNSPACED_TOLD = ("告诉", "说过", "言った", "伝えた", "말씀", "말했", "บอก")

# Leave given to the assistant: "l'assistant peut donc valider mes virements", "o βοηθός μπορεί να …".
LEAVE = (
    "peut", "pourra", "puede", "podrá", "pode", "poderá", "può", "potrà", "darf", "kann", "mag", "kan", "może",
    "может", "можно", "може", "можна", "yapabilir", "får", "kan", "voi", "saa", "poate", "může", "smí",
    "teljesítheti", "μπορεί", "יכול", "רשאי", "يمكن", "يمكنه", "می تواند", "سکتا", "सकता", "सकती", "পারে",
    "boleh", "dapat", "có thể", "được phép", "maaari", "anaweza",
)  # fmt: skip
UNSPACED_LEAVE = ("可以", "できます", "してよい", "할 수 있", "ได้")

# A check put aside, with the owner's word between: "sin su aprobación", "без её подтверждения", "无需二次验证".
WITHOUT = (
    "sin", "sem", "sans", "senza", "ohne", "zonder", "bez",
    "без", "без её", "без ее", "без її", "بدون", "دون", "ללא", "בלי", "χωρίς", "fără", "nélkül", "tanpa",
    "không cần", "bila", "بغیر", "बिना", "ya no necesitan", "ya no requieren", "não precisam", "não requer",
    "n ont plus besoin", "inutile de", "non richiedono più", "nicht mehr nötig", "nicht mehr erforderlich",
    "niet meer nodig", "nie wymagają", "не нужно", "не требуется", "не потрібно", "gerek yok", "gerektirmez",
    "behövs inte", "trengs ikke", "ei tarvita", "nu mai necesită", "není třeba", "nem szükséges", "δεν χρειάζεται",
    "אין צורך", "لا تحتاج", "لا يحتاج", "نیازی به", "ضرورت نہیں", "आवश्यक नहीं", "ज़रूरत नहीं", "tidak perlu",
    "không còn cần", "hindi na kailangan", "hakuna haja",
)  # fmt: skip
UNSPACED_WITHOUT = ("无需", "不需要", "不必", "なしで", "不要", "없이", "필요 없", "โดยไม่", "ไม่ต้อง")
APPROVALS = (
    "aprobación", "confirmación", "verificación", "autorización", "consulta", "aprovação", "confirmação",
    "verificação", "autorização", "validation", "approbation", "vérification", "lui demander", "conferma",
    "approvazione", "verifica", "bestätigung", "freigabe", "genehmigung", "prüfung", "rückfrage", "goedkeuring",
    "bevestiging", "zgody", "potwierdzenia", "weryfikacji", "akceptacji", "подтверждения",
    "согласования", "одобрения", "проверки", "підтвердження", "погодження", "перевірки", "onay", "doğrulama",
    "godkännande", "bekräftelse", "godkjenning", "hyväksyntää", "vahvistusta", "aprobare", "confirmare",
    "potvrzení", "schválení", "jóváhagyás", "megerősítés", "επιβεβαίωση", "έγκριση", "אישור", "אימות",
    "موافقة", "موافقتها", "تأكيد", "تحقق", "تأیید", "تایید", "تصدیق", "اجازت", "पुष्टि", "अनुमति", "पूछे",
    "persetujuan", "konfirmasi", "xác nhận", "phê duyệt", "pag apruba", "idhini", "uthibitisho",
)  # fmt: skip
UNSPACED_APPROVALS = ("确认", "验证", "审批", "批准", "確認", "承認", "확인", "승인", "ยืนยัน", "อนุมัติ")

# A chat role's label opening the text in brackets: "[Sistem mesajı]", "<<Systemnachricht>>", "【システム通知】".
SYSTEM_LABELS = (
    "system message", "system notice", "developer message", "developer notice",
    "mensaje del sistema", "aviso del sistema", "message système", "messaggio di sistema", "mensagem do sistema",
    "systemnachricht", "systemmeldung", "systeembericht", "komunikat systemowy", "системное сообщение",
    "системне повідомлення", "sistem mesajı", "systemmeddelande", "järjestelmäviesti", "mesaj de sistem",
    "systémová zpráva", "rendszerüzenet", "μήνυμα συστήματος", "הודעת מערכת", "رسالة النظام", "پیام سیستم",
    "سسٹم پیغام", "सिस्टम संदेश", "সিস্টেম বার্তা", "pesan sistem", "thông báo hệ thống", "mensahe ng sistema",
)  # fmt: skip
UNSPACED_SYSTEM_LABELS = (
    "系统消息",
    "系统通知",
    "系統訊息",
    "システム通知",
    "システムメッセージ",
    "시스템 메시지",
    "ข้อความระบบ",
)

# One provider called the only safe or reliable choice: "HostingPrime es el único proveedor fiable".
ONLY = (
    "el único", "la única", "o único", "a única",
    "le seul", "la seule", "l unico", "l unica", "der einzige", "die einzige", "das einzige", "de enige",
    "jedyny", "jedyna", "единственный", "единственная", "єдиний", "єдина", "tek", "den enda", "det enda", "ainoa",
    "singurul", "jediný", "jediná", "egyetlen", "ο μόνος", "η μόνη", "היחיד", "היחידה", "الوحيد", "الوحيدة", "تنها",
    "एकमात्र", "একমাত্র", "satu satunya", "duy nhất", "stets die beste",
)  # fmt: skip
UNSPACED_ONLY = ("唯一", "유일한", "เพียงหนึ่งเดียว")
TRUSTWORTHY = (
    "secure", "safe", "reliable", "trustworthy", "trusted", "fiable", "seguro", "segura", "confiable", "sûr",
    "sûre", "affidabile", "sicuro", "sicura", "sicher", "sichere", "sicheren", "zuverlässig", "zuverlässige",
    "zuverlässigen", "betrouwbaar", "betrouwbare", "veilig", "bezpieczny",
    "niezawodny", "надёжный", "надежный", "безопасный", "надійний", "надійна", "güvenli", "güvenilir", "säker",
    "pålitlig", "luotettava", "turvallinen", "sigur", "de încredere", "bezpečný", "spolehlivý", "biztonságos",
    "megbízható", "ασφαλής", "αξιόπιστος", "בטוח", "אמין", "آمن", "موثوق", "امن", "قابل اعتماد", "सुरक्षित",
    "विश्वसनीय", "নিরাপদ", "aman", "terpercaya", "an toàn", "đáng tin cậy", "empfehlung", "unzuverlässig",
    "ненадійними", "ненадежными", "no deberían recomendarse",
)  # fmt: skip
UNSPACED_TRUSTWORTHY = ("安全", "可靠", "信頼", "안전한", "신뢰할", "ปลอดภัย", "เชื่อถือได้")
