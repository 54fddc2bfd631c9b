"""Personal data of a special category: health, beliefs, sexuality, politics, origin, union, records.

Data-protection law (GDPR Art. 9 and 10, and its counterparts elsewhere) sets these apart: holding
them needs a reason the person can see, and a leak harms more than an address does. An assistant
that learns "I have diabetes, so no sweets at the offsite" silently keeps a health record. Such a
candidate is still useful, so it is not refused; a person approves it first (policy's REVIEW).
An allergy or an intolerance is left out on purpose: it is what an assistant booking a table
needs, and owners state it to have it used.

What is read: a statement about a condition, a faith, an orientation, a vote, an origin, a union
card or a criminal record, in the words people use about themselves and others. What is not:
the same words in their ordinary senses ("a blind spot", "Church Street", "the party on Friday",
"the sales union of two lists", "a trans-Atlantic flight"), which the patterns leave out by
requiring the personal sense (a possessive, a diagnosis verb, "I'm", a religious practice).
Matched on folded text, so look-alike letters and invisible characters do not hide a word. Read in
English, and in the languages the extractor reads an owner's preferences in (French, Spanish,
German, Italian, Portuguese, Dutch, Polish): every category but genetic and biometric data there.
A party is read abroad only in a party's form ("die Grünen", "les verts"), never as a colour.
"""

from __future__ import annotations

import functools
import re

from services.common.text_folding import PLAIN_LETTERS, fold_for_matching

_SELF = r"(?:i ?am|i ?m|im|i ?was|i ?ve been|(?:he|she|they) (?:is|are|was|were)|(?:he|she)s|theyre|is|are)"
_FAITHS = (
    "muslim|jewish|jew|christian|catholic|protestant|hindu|buddhist|sikh|jain|mormon|atheist|agnostic|baptist"
    "|methodist|anglican|lutheran|quaker|wiccan"
)
_PARTIES = "democrats?|republicans?|labou?r|tory|tories|conservatives?|liberals?|greens?|lib ?dems?|[a-z]+ party"
_LEANINGS = "democrat|republican|conservative|socialist|communist|libertarian"
_ORGANS = (
    r"(?:breast|lungs?|liver|pancreas|colon|prostate|skin|bones?|blood|brain|stomach|throat|cervix|ovary|ovaries"
    r"|kidneys?|bladder|thyroid|mouth|uterus|bowel|o?esophagus|tongue|larynx|testicles?|rectum|eyes?|spine)"
)
# Parties and leanings in the languages of `_ELSEWHERE`, folded; colours and common words only in
# the form a party takes ("les verts", "die grunen"), never alone ("die grune Jacke").
_PARTIES_ELSEWHERE = (
    r"socialist\w*|sozialdemokrat\w*|ecologist\w*|republicain\w*|communist\w*|kommunist\w*|comunist\w*"
    r"|conservat\w*|konservativ\w*|les verts|die grunen|den grunen|los verdes|i verdi|groenlinks|cdu|csu|spd|fdp"
    r"|afd|die linke|psoe|podemos|vox|sumar|lega|m5s|pvv|vvd|d66|pis|konfederacj\w*|lewic\w*|chega"
    r"|rassemblement national|front national|france insoumise|lfi|fratelli d italia|forza italia"
    r"|parti \w+|partido \w+|partito \w+|partei|partij|partii|partia\w*"
)
# Groups people belong to by descent, not by passport (a nationality is no special category).
_ETHNIC_GROUPS = "kurdish|kurd|roma|romani|romany|gypsy|sinti|uyghur|sami|aboriginal|maori|inuit|first nations"


def _any(*alternatives: str) -> str:
    return r"\b(?:" + "|".join(alternatives) + r")\b"


_CATEGORIES: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (name, re.compile(pattern))
    for name, pattern in (
        (
            "health",
            _any(
                r"diagnosed|diagnosis|diabet(?:es|ic)|chemo(?:therapy)?|tumou?r|hiv|asthma(?:tic)?",
                # "a cancer on the team", "the cancer of technical debt" are figures of speech; an organ is not
                rf"cancer(?! on\b)(?! of (?:(?:the|our|this|that|a|an|their|its|his|her|my) )?+(?!{_ORGANS}\b)\w+)",
                r"epilep(?:sy|tic)|bipolar|adhd|autis(?:m|tic)|dementia|alzheimers?|parkinsons?|multiple sclerosis",
                r"pregnan(?:t|cy)|miscarriage|psychiatri(?:st|c)|antidepressants?|insulin|migraines?",
                r"celiac|coeliac",
                r"crohns?|schizophreni[ac]|ptsd|ocd|eating disorder|anorexi[ac]|bulimi[ac]|infertil(?:e|ity)",
                r"ivf (?:treatment|cycle|clinic)|chronic (?:pain|illness)|mental health|panic attacks?",
                r"anxiety disorder|(?:in|to|out of) rehab|addiction|alcoholic|sobriety",
                r"(?:have|has|had|with|from|for) (?:clinical |severe |postnatal |postpartum )?depression",
                r"heart (?:condition|attack|surgery)|blood pressure|disabilit(?:y|ies)|wheelchair|hearing aids?",
                r"sick (?:leave|note)|medical (?:condition|leave|history|records?)",
                r"on (?:medication|antidepressants|insulin)",
                r"(?:see|sees|seeing|saw|visit|visits) (?:a|my|his|her|their) (?:therapist|psychiatrist|psychologist"
                r"|counsell?or|psychotherapist)",
                r"my (?:medication|meds|therapist|therapy|doctor|gp|oncologist|surgeon|prescription|illness|symptoms"
                r"|treatment|diagnosis)",
                r"(?:undergoing|recovering from|having|had) (?:surgery|an operation|treatment|chemo)",
            ),
        ),
        (
            "religion or belief",
            _any(
                rf"{_SELF} (?:an? )?(?:{_FAITHS})",
                r"my (?:religion|faith|religious beliefs?|church|mosque|synagogue|temple|imam|rabbi|pastor|priest)",
                r"(?:muslim|jewish|christian|catholic|hindu|buddhist|sikh) (?:faith|holidays?|prayers?)",
                r"(?:only eats?|eat only|keeps?) (?:halal|kosher)",
                r"(?:observes?|fasts? (?:for|during)) (?:ramadan|shabbat|sabbath|lent|yom kippur|passover)",
                r"(?:go|goes|went|going) to (?:church|mosque|synagogue|temple|mass)",
                r"(?:friday|daily|evening|morning) prayers?|religious (?:beliefs?|reasons|holiday|observance)",
            ),
        ),
        (
            "sexual orientation or sex life",
            _any(
                rf"{_SELF} (?:an? )?(?:gay|lesbian|bisexual|homosexual|queer|asexual|pansexual|transgender"
                r"|trans (?:woman|man|person)|non ?binary|intersex)",
                r"sexual orientation|sex life|(?:came|coming) out (?:as|to (?:my|his|her|their) (?:family|parents))",
                r"my (?:gay|lesbian|trans) (?:partner|husband|wife|son|daughter|friend)",
            ),
        ),
        (
            "political opinion",
            _any(
                rf"(?:i|he|she|they) (?:vote|votes|voted|always votes?|will vote) (?:for )?(?:the )?(?:{_PARTIES})",
                r"political (?:views?|opinions?|affiliation|leanings?|beliefs?)",
                r"(?:member|supporter) of the [\w ]{2,30}? party|party member(?:ship)?",
                r"(?:i|we) (?:support|donate to) the [\w ]{2,30}? party",
                rf"(?:i am|im) a (?:registered )?(?:{_LEANINGS})",
            ),
        ),
        (
            "racial or ethnic origin",
            _any(
                r"my (?:ethnicity|race|ethnic (?:origin|background)|heritage|caste)|ethnic origin",
                r"racial (?:origin|background)",
                rf"(?:i ?am|i ?m|im|i was) (?:an? )?(?:{_ETHNIC_GROUPS})",
                rf"(?:{_ETHNIC_GROUPS}) (?:descent|heritage|origin)",
                r"(?:of|from an?) (?:african|asian|arab|hispanic|latino|romani?|indigenous|aboriginal)"
                r" (?:descent|heritage|background|origin)",
            ),
        ),
        (
            "trade union membership",
            _any(
                r"trade union|labou?r union|union (?:member|membership|rep|representative|steward|dues|card)",
                r"shop steward|(?:joined|join) the union",
                # "a member of the GMB union", "member of Unite the union"; not of a union of states or a bank
                r"member of (?:the )?+(?!(?:european|soviet|african|eurasian|postal|credit|student|students|customs"
                r"|monetary|banking|world)\b)[\w ]{2,30}? union",
            ),
        ),
        (
            "genetic or biometric data",
            _any(
                r"genetic (?:test|testing|condition|disorder|data|results?|markers?)|dna (?:test|results?|sample)",
                r"brca[12]?|biometric (?:data|template)",
                r"(?:my|his|her|their) (?:fingerprints?|retina|iris scan|face ?print|voiceprint)",
            ),
        ),
        (
            "criminal record",
            _any(
                r"criminal (?:record|conviction|history|charges?)|(?:was|been|got) (?:convicted|arrested)",
                r"charged with (?:a |an )?(?:crime|felony|misdemeanou?r|assault|theft|fraud|dui|murder)",
                r"(?:on|under) (?:probation|parole)|served time in (?:prison|jail)",
                r"(?:serving|served) a (?:prison |jail )?sentence|dui|dwi|prior convictions?",
            ),
        ),
    )
)


# The same statements in the languages the extractor reads preferences in (French, Spanish, German,
# Italian, Portuguese, Dutch, Polish), folded (accents gone): "je suis diabétique", "ich bin schwul".
_I_AM_ELSEWHERE = (
    r"(?:je suis|il est|elle est|ich bin|er ist|sie ist|soy|es|sono|e|sou|ik ben|hij is|zij is|jestem|jest)"
    r" (?:une? |eine? |una? |uno |uma |een )?"
)
_ELSEWHERE: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (name, re.compile(pattern))
    for name, pattern in (
        (
            "health",
            _any(
                r"diabet\w*|enceinte|embarazada|incinta|gravida|schwanger|zwanger|w ciazy|ciezarna",
                r"krebs|cancro|kanker|chimio(?:therapie)?|quimio(?:terapia)?|chemo(?:therapie)?|chemioterapia",
                r"epilep\w*|epiless\w*|depresion|depressione|depressie|depresja|depressionen|depressi(?:f|ve)",
                r"fauteuil roulant|rollstuhl|silla de ruedas|sedia a rotelle|cadeira de rodas|rolstoel",
                r"wozek inwalidzki",
                r"arret maladie|krankgeschrieben|baja medica|ziekteverlof|zwolnienie lekarskie",
                r"(?:mon|ma|mein|meine|mi|il mio|la mia|mijn|moj|moja|meu|minha) (?:psy|psychiatre|therapeute|therapeut"
                r"|therapeutin|terapeuta|psichiatra|psiquiatra|psychiater|psychiatra|medecin|arzt|arztin|medico|dokter"
                r"|lekarz|traitement|behandlung|tratamiento|trattamento|tratamento|behandeling|leczenie)",
            ),
        ),
        (
            "religion or belief",
            _any(
                _I_AM_ELSEWHERE + r"(?:musulman[ae]?|musulmano|muculman[oa]|moslim|muslim[ae]?|muzulmanin\w*"
                r"|muzulmank\w*|juif|juive|jude|judin|judio|judia|ebre[oa]|judeu|joods|zyd\w*|chretien(?:ne)?|christin?"
                r"|cristian[oa]|crista|cristao|christen|chrzescijan\w*|catholique|katholisch|catolic[oa]|cattolic[oa]"
                r"|katholiek|katoli\w*|hindou[e]?|hindoe|bouddhiste|buddhist(?:in)?|budista|buddista|boeddhist"
                r"|athee|atheist(?:in)?|ate[oa]|ateu|ateia|ateist\w*)",
                r"(?:ma|meine|mi|la mia|minha|mijn|moja) (?:religion|religione|religiao|religie|religia|foi|glaube|fe)",
            ),
        ),
        (
            "sexual orientation or sex life",
            _any(
                _I_AM_ELSEWHERE + r"(?:gay|homosexuel(?:le)?|lesbienne|bisexuel(?:le)?|schwul|lesbisch|bisexuell"
                r"|homosexual|lesbiana|omosessuale|lesbica|bisessuale|homossexual|bissexual|homo|biseksue\w*"
                r"|gejem|lesbijk\w*|biseksualn\w*)",
            ),
        ),
        (
            "political opinion",
            _any(
                rf"(?:j ai vote|je vote|je voterai|nous avons vote|vote|he votado|votamos|votare|ho votato|votero"
                rf"|votei|vou votar|ik stemde|ik stem|ik heb|glosowal\w*|zaglosowal\w*|glosuje)(?: \w+){{0,3}}"
                rf" (?:{_PARTIES_ELSEWHERE})",
                rf"(?:ich|wir|er|sie) (?:habe|haben|hat|hab)(?: \w+){{0,3}} (?:{_PARTIES_ELSEWHERE}) gewahlt"
                rf"|(?:ich|wir) (?:wahle|wahlen|wahlte|wahlten)(?: \w+){{0,2}} (?:{_PARTIES_ELSEWHERE})",
                r"(?:membre|adherente?) (?:du|d un) parti|parteimitglied|mitglied (?:der|einer) partei"
                r"|afiliad[oa] (?:al|a un) partido|iscritt[oa] al partito|filiad[oa] (?:ao|no|a um) partido"
                r"|lid van (?:de|een) \w* ?partij|czlon\w* partii",
                r"(?:mes|meine|mis|le mie|minhas|mijn|moje) (?:opinions? politiques?|politischen? (?:ansichten"
                r"|uberzeugungen|meinung)|ideas politicas|opinioni politiche|opinioes politicas|politieke"
                r" (?:opvattingen|voorkeur)|poglady polityczne)",
            ),
        ),
        (
            "racial or ethnic origin",
            _any(
                _I_AM_ELSEWHERE + r"(?:kurde|kurdo|kurda|curdo|curda|kurdin|koerd(?:isch)?|gitan[oae]?|zingar[oa]"
                r"|cygan\w*|tzigane|sinti|sinto|ouighour|ouigour|uigur\w*)",
                r"origine ethnique|origen etnico|ethnische herkunft|origine etnica|origem etnica|etnische afkomst"
                r"|pochodzenie etniczne",
                r"(?:de origen|d origine|di origine|de origem|van) (?:gitan\w*|kurd\w*|curd\w*|rom[ae]?|sinti"
                r"|zingar\w*|indigena|indigene|aborigen\w*)(?: afkomst)?",
                r"(?:mon|ma|mein|meine|mi|la mia|minha|mijn|moje) (?:ethnie|ethnizitat|etnia|etniciteit|etnicznosc)",
            ),
        ),
        (
            "trade union membership",
            _any(
                r"syndique[e]?|gewerkschaftsmitglied|mitglied (?:der|einer) gewerkschaft|sindicalizad[oa]"
                r"|iscritt[oa] al sindacato|lid van de vakbond|czlon\w* zwiazku zawodowego|membre (?:du|d un) syndicat",
            ),
        ),
        (
            "criminal record",
            _any(
                r"casier judiciaire|vorstrafen?|antecedentes (?:penales|criminais)|precedenti penali|strafblad"
                r"|karaln\w*|kartoteka policyjna",
            ),
        ),
    )
)


# Every category's pattern in one alternation, each in a group of its own: one search per text
# instead of thirteen (policy reads each candidate up to twice, memory once more).
_ALL = (*_CATEGORIES, *_ELSEWHERE)
_ANY_CATEGORY = re.compile("|".join(f"(?P<c{index}>{pattern.pattern})" for index, (_, pattern) in enumerate(_ALL)))


@functools.lru_cache(maxsize=4096)
def special_category(text: str) -> str | None:
    """A special category ``text`` speaks of, or None; folded first, so look-alikes count.

    About 17 µs for a sentence; kept, as policy asks twice about a candidate with conflicts.
    """
    m = _ANY_CATEGORY.search(_words_only(fold_for_matching(text)))
    return None if m is None or m.lastgroup is None else _ALL[int(m.lastgroup[1:])][0]


def _words_only(folded: str) -> str:
    """Lower case, apostrophes dropped ("I'm" is "im", "Alzheimer's" is "alzheimers"), punctuation as spaces."""
    lowered = folded.casefold().translate(PLAIN_LETTERS).replace("'", "").replace("\u2019", "")
    return re.sub(r"\s+", " ", re.sub(r"[^\w]+", " ", lowered))
