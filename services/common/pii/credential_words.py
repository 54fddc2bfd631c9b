"""The words `credentials` reads a credential by, in the languages we meet (data only, folded, lower case).

Kept apart from the reading itself so that adding a language's words touches no logic.
"""

from __future__ import annotations

from services.common.text_folding import fold_words


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


# Words (folded, lower case) that name a password-like secret, in the languages we meet.
PASSWORD_WORDS = (
    _words(
        "password passwords passwd pwd pw pass passcode passcodes passphrase pin pins pincode cvv cvc cvv2 "
        "cryptogramme "
        "otp otps totp 2fa mfa geheimzahl "
        "passwort passworter kennwort mdp contrasena contrasenas clave senha wachtwoord parola haslo heslo "
        "haslo hasło jelszo losenord losenordet adgangskode adgangskoden kodeord kodeordet passord passordet "
        "salasana sifre lozinka geslo "
        # Turkish adds the owner to the word ("şifrem", "parolamiz" folded: my password, our password)
        "sifrem sifren sifresi sifremiz sifreniz sifreyi parolam parolan parolasi parolamiz parolaniz parolayi "
        "parool lykilord slaptazodis "
        # a wireless network's key by its protocol ("WPA2: X", "PSK = X")
        "wpa wpa2 wpa3 psk wep "
        # misspelt, as people type them in a hurry
        "psswd pswd passwrd pasword paswd passwod passowrd pssword pwrd pword paswrd "
    )
) | {fold_words("пароль"), fold_words("пароли")}

# Words that name any other secret on their own.
SECRET_WORDS = _words(
    "secret secrets token tokens apikey apikeys credential credentials creds privatekey secretkey "
    "accesskey authkey authtoken accesstoken refreshtoken clientsecret appsecret geheimnis "
    "credenciales credenziali credenciais "
)

# Words that make a following "key"/"code"/"token" a secret: "api key", "signing key", "recovery code".
# Those of them that make it a key for software, not a code for a door: "Schlüssel für die API" is an API key.
SOFTWARE_QUALIFIERS = _words(
    "api access secret private signing master encryption license licence auth client app consumer session "
    "bearer refresh recovery backup deploy service webhook shared ssh gpg pgp admin root "
)

QUALIFIERS = SOFTWARE_QUALIFIERS | _words(
    "otp totp 2fa mfa sms login signin authentication auth "
    "alarm door safe gate lock entry garage locker building keypad unlock verification security "
    "wifi wlan porte portail alarme coffre accesso acceso acces zugang tur activation disarm unlock arm screen "
    "setup authenticator opener intercom buzzer lockbox keybox padlock network wireless "
    # a door, a gate, an alarm or a safe in the languages whose "code" words are read ("codigo de la puerta")
    "puerta portal porton entrada alarma caja casa edificio cancello portone porta ingresso allarme cassaforte "
    "portao cofre predio entree immeuble digicode haustur tor eingang alarmanlage tresor haus wohnung deur "
    "digi poort voordeur kluis domofonu domofon drzwi bramy furtki alarmu sejfu klatki "
)

# Words that make only a following "key" a secret: "product key", "serial key" (a "product code" is a SKU).
KEY_ONLY_QUALIFIERS = _words("product serial registration cd windows office")

# "key" in the languages we meet, which may also take its qualifier after it ("clé wifi", "chiave wifi").
KEY_WORDS = _words("schlussel schluessel chiave llave sleutel klucz nyckel")

CODE_WORDS = (["code"], ["codes"], ["codice"], ["codigo"], ["kod"], ["kode"], ["koden"], ["koodi"])

QUALIFIED = frozenset({"key", "keys", "code", "codes", "token", "tokens", "secret", "phrase", "pattern"}) | KEY_WORDS

# Where a credential word may start, in every language we read (matched on folded lower-case text).
STEM_WORDS = (
    r"pass pwd pw\b secret token key cred pin cvv cvc cryptogram combi combo geheimzahl kennwort mdp contrase"
    r" clave senha"
    r" wachtwoord parola codice codigo login signin account anmelde connexion acceso accesso has[l\u0142]o heslo"
    r" jelsz losenord adgangskode salasana sifre lozinka geslo geheim code phrase parool lykilord slaptazod"
    r" kod koodi zugang identifiant inlog schlussel schluessel sleutel klucz nyckel chiave llave pattern psw pssw"
    r" pasw pword pwrd"
    r" wpa psk wep " + fold_words("пароль")
)

# "boarding pass: 14A" is not a password.
NOT_A_PASSWORD_PASS = _words(
    "boarding bus day season hall ski museum travel rail train free visitor guest press backstage annual "
)

# Words that name a secret only when digits follow: "the combination is 12-34-56", not "the combination works".
NUMERIC_SECRET_WORDS = _words("combination combinations combo combinaison kombination combinazione combinacion")

# Words for a secret that is a number: a few digits after them in a clause are its value.
NUMBER_WORDS = _words("pin pins pincode passcode passcodes geheimzahl")

# OpenLDAP's "rootpw" and "bindpw" end in the bare shorthand.
GLUED_PASSWORD_ENDINGS = ("password", "passwd", "passphrase", "pwd", "pw")

PLURALS = _words("codes keys pins passwords passcodes tokens secrets otps")

# Words after which only a user-and-password pair is a credential ("login: alice / Xy7!qq").
PAIR_ONLY_WORDS = _words(
    "login logins signin account anmeldung connexion acceso accesso zugang zugangsdaten anmeldedaten logindaten "
    "identifiant identifiants inloggegevens inlog"
)

# Words for a user name and a password together: "creds -> svc_backup : B4ckup!Now" states both.
PAIR_WORDS = _words("cred creds credential credentials credenciales credenziali credenciais")

#: Digits read out as words: English, German, French and Spanish ("o" alone is too common to count).
DIGIT_NAMES = (
    *("zero", "oh", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine"),
    *("null", "eins", "zwei", "drei", "vier", "funf", "sechs", "sieben", "acht", "neun"),
    *("un", "deux", "trois", "quatre", "cinq", "sept", "huit", "neuf"),
    *("cero", "uno", "dos", "tres", "cuatro", "cinco", "seis", "siete", "ocho", "nueve"),
)

# Passwords people choose most, as the leaked-password lists rank them, without digits (a bare value after a
# password's word needs a digit otherwise: "password manager", "password reset"). Only words that no sentence
# about a password puts after "password": not "access", "reset", "hint", nor a default a manual documents
# ("changeme", "changeit"), nor "shadow" ("password shadow file"), nor a language's word for a password (a
# translated manual's "PASSWORD  contraseña de la conexión").
COMMON_PASSWORDS = frozenset(
    [
        "qwerty", "qwertyuiop", "qwertz", "azerty", "asdfgh", "asdfghjkl", "zxcvbnm", "qazwsx", "letmein",
        "iloveyou", "trustno", "dragon", "monkey", "sunshine", "princess", "football", "baseball", "superman",
        "batman", "starwars", "mustang", "michael", "jennifer", "hunter", "ashley", "charlie",
        "freedom", "pokemon", "tigger", "buster", "harley", "jordan", "soccer", "hockey", "killer",
        "loveme", "iloveu", "abcdef", "abcdefg", "asdf", "qwer",
    ]
)  # fmt: skip
