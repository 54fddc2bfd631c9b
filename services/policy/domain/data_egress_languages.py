"""The words `data_egress` reads a disclosure by in French, Spanish, German, Italian, Portuguese, Dutch and
Polish (data only, folded: accents gone, "ł" read as "l", lower case, punctuation as spaces).

Kept apart from the reading so that adding a language touches no logic; the forwarding words of
those languages stay beside the English ones in `data_egress`, as there are few of them.
"""

from __future__ import annotations

# Giving information away: share, give, tell, pass on, communicate.
GIVE = (
    r"partag\w*|donn\w*|communiqu\w*|dis|dire|transmet\w*"
    r"|teil\w*|gib|geben|sag\w*|nenn\w*|weitergeb\w*|mitteil\w*"
    r"|compart\w*|da|dale|dar|di|decir|comunic\w*|facilit\w*"
    r"|condivid\w*|dai|dare|comunic\w*|fornisc\w*|fornire"
    r"|partilh\w*|compartilh\w*|diz|dizer|fornec\w*"
    r"|deel|delen|geef|geven|zeg|zeggen|noem\w*|doorgeven"
    r"|udostepn\w*|podaj\w*|podac|powiedz\w*|daj\w*|dac|przekaz\w*|podawaj\w*"
)

# The owner's own: "mon", "meine", "mi", "il mio", "minha", "mijn", "moj".
OWN = (
    r"mon|ma|mes|mein|meine|meinen|meiner|mi|mis|mio|mia|miei|mie|meu|minha|meus|minhas|mijn"
    r"|moj|moja|moje|mojego|mojej"
)

# The owner's identifiers and credentials.
IDENTIFIER = (
    r"numero de securite sociale|securite sociale|passeport|date de naissance|adresse|mot de passe|code pin"
    r"|numero de carte|carte bancaire|coordonnees bancaires|iban|rib"
    r"|sozialversicherungsnummer|steuer ?id|steuernummer|(?:reise)?pass(?:nummer)?|geburtsdatum|adresse|passwort|pin"
    r"|kartennummer|bankdaten|kontodaten|iban"
    r"|numero de la seguridad social|seguridad social|dni|nie|pasaporte|fecha de nacimiento|direccion|contrasena"
    r"|numero de tarjeta|tarjeta|datos bancarios|iban"
    r"|codice fiscale|passaporto|data di nascita|indirizzo|password|numero di carta|carta|dati bancari|iban"
    r"|cpf|nif|passaporte|data de nascimento|morada|endereco|senha|numero do cartao|cartao|dados bancarios"
    r"|bsn|paspoort|geboortedatum|adres|wachtwoord|pincode|kaartnummer|bankgegevens|rekeningnummer"
    r"|pesel|paszport\w*|data urodzenia|adres\w*|haslo|hasla|numer karty|karty|dane bankowe|numer konta"
)

# A standing audience: anyone, whoever asks, everyone.
ANYONE = (
    r"n importe qui|a qui(?: que ce soit)?(?: le)? demande|quiconque|tout le monde|a tous"
    r"|jedem|jeder|jedermann|allen|wer (?:auch immer )?(?:fragt|anruft|es will)|egal wem"
    r"|cualquiera|quien (?:lo )?(?:pida|pregunte|llame)|a todos|a todo el mundo"
    r"|chiunque|a chi (?:lo )?(?:chiede|chieda)|a tutti"
    r"|qualquer (?:pessoa|um)|quem (?:pedir|perguntar|ligar)|a todos|toda a gente"
    r"|iedereen|wie (?:er )?(?:om )?vraagt|aan iedereen"
    r"|kazdemu|komukolwiek|wszystkim|kazdy kto (?:zapyta|poprosi)|kto(?:kolwiek)? (?:zapyta|poprosi)"
)

# A standing permission: you may, it's fine, go ahead.
PERMISSION = (
    r"tu peux|vous pouvez|c est bon|pas de probleme|n hesite pas|sans (?:me )?demander"
    r"|du kannst|sie konnen|kein problem|ist ok|ist in ordnung|ohne (?:mich )?zu fragen"
    r"|puedes|puede|no hay problema|esta bien|sin preguntar(?:me)?"
    r"|puoi|puo|va bene|nessun problema|senza chiedere(?:mi)?"
    r"|podes|pode|tudo bem|sem problema|sem (?:me )?perguntar"
    r"|je mag|u mag|geen probleem|prima|zonder (?:het )?te vragen"
    r"|mozesz|moze pan|moze pani|nie ma problemu|smialo|bez pytania"
)
