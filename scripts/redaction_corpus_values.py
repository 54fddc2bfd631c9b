"""Synthetic values and templates for `make_redaction_corpus.py`: positives per kind, look-alike negatives.

Ids are built with their real checksums (UK NI prefixes, Spanish DNI letter, French NIR key, CPF
digits, Luhn) so a detector that checks them is tested, and look-alikes are built to *fail* them.
"""

from __future__ import annotations

import random
import string

_B64 = string.ascii_letters + string.digits + "+/"
_ALNUM = string.ascii_letters + string.digits
_UPPER_DIGITS = string.ascii_uppercase + string.digits


def _rand(rng: random.Random, alphabet: str, n: int) -> str:
    return "".join(rng.choice(alphabet) for _ in range(n))


def _mixed(rng: random.Random, n: int) -> str:
    """A random token with lower, upper and digits (so it is not accidentally a word)."""
    while True:
        token = _rand(rng, _ALNUM, n)
        if any(c.islower() for c in token) and any(c.isupper() for c in token) and any(c.isdigit() for c in token):
            return token


def _password(rng: random.Random) -> str:
    words = ["Sunset", "River", "Maple", "Orbit", "Falcon", "Cobalt", "Winter", "Harbor", "Lemon", "Tiger"]
    return rng.choice(words) + str(rng.randint(10, 9999)) + rng.choice("!#$%&*?")


class Values:
    """Draws values from one seeded generator, so the corpus is the same on every run."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng

    # --- secrets -----------------------------------------------------------------------------

    def aws_key_id(self) -> str:
        return self.rng.choice(["AKIA", "ASIA"]) + _rand(self.rng, _UPPER_DIGITS, 16)

    def aws_secret(self) -> str:
        return _mixed(self.rng, 30) + _rand(self.rng, _B64, 10)

    aws_pair_templates = (
        "Key: {key_id}\nSecret: {secret}",
        "{key_id} {secret}",
        "here are the creds {key_id} / {secret} - please rotate after the demo",
        "aws_access_key_id={key_id}\naws_secret_access_key={secret}",
        '{{"AccessKeyId": "{key_id}", "SecretAccessKey": "{secret}"}}',
        "access key {key_id}, and the other half is {secret}",
        "{key_id}:{secret}",
        "Use {key_id} with\n{secret}\nfor the backup bucket.",
        "AWS_ACCESS_KEY_ID: {key_id}\nAWS_SECRET_ACCESS_KEY: {secret}",
        "id {key_id}\n\n{secret}",
        "Zugangsschlüssel {key_id} und geheimer Schlüssel {secret}",
        "clé {key_id} secret {secret}",
        "The deploy user is {key_id} (secret {secret}).",
        "export AWS_ACCESS_KEY_ID={key_id} AWS_SECRET_ACCESS_KEY={secret}",
    )

    def other_pairs(self) -> list[tuple[str, str, str]]:
        r = self.rng
        return [
            ("Alibaba key {key_id} secret {secret}", "LTAI" + _mixed(r, 20), _mixed(r, 30)),
            ("AccessKeyId {key_id}\nAccessKeySecret {secret}", "LTAI" + _mixed(r, 16), _mixed(r, 30)),
            ("Tencent SecretId {key_id} SecretKey {secret}", "AKID" + _mixed(r, 32), _mixed(r, 32)),
            ("{key_id} / {secret} for the tencent bucket", "AKID" + _mixed(r, 32), _mixed(r, 32)),
            ("GCS HMAC {key_id} {secret}", "GOOG1E" + _rand(r, _UPPER_DIGITS, 20), _mixed(r, 40)),
            ("interop access id {key_id}, secret {secret}", "GOOG" + _rand(r, _UPPER_DIGITS, 24), _mixed(r, 40)),
            ("Twilio SID {key_id} token {secret}", "AC" + _rand(r, "0123456789abcdef", 32),
             _rand(r, "0123456789abcdef", 32)),
            ("account {key_id}\nauth {secret}", "AC" + _rand(r, "0123456789abcdef", 32),
             _rand(r, "0123456789abcdef", 32)),
        ]  # fmt: skip

    def credential_statements(self) -> list[tuple[str, str]]:
        r = self.rng

        def p() -> str:
            return _password(r)

        def t() -> str:
            return _mixed(r, r.randint(18, 36))

        return [
            ("My VPN password is {value}", p()),
            ("The password for the guest wifi is {value}.", "ocean-breeze-" + str(r.randint(10, 99))),
            ("password: {value}", p()),
            ("DB_PASSWORD={value}", p()),
            ("db_password = '{value}'", p()),
            ('{{"username": "svc", "password": "{value}"}}', p()),
            ("password => {value}", p()),
            ("pwd: {value}", p()),
            ("PIN: {value}", str(r.randint(1000, 9999))),
            ("my PIN is {value}", str(r.randint(1000, 9999))),
            ("the door passcode {value} works after 6pm", str(r.randint(100000, 999999))),
            ("Mein Passwort ist {value}", p()),
            ("Das Kennwort lautet {value}", p()),
            ("Mon mot de passe est {value}", p()),
            ("le mot de passe: {value}", p()),
            ("Mi contraseña es {value}", p()),
            ("Mijn wachtwoord is {value}", p()),
            ("A minha senha é {value}", p()),
            ("La password è {value}", p()),
            ("Hasło: {value}", p()),
            ("Пароль: {value}", p()),
            ("api_key = {value}", t()),
            ("apiKey: '{value}'", t()),
            ("X-API-Key: {value}", t()),
            ('"client_secret": "{value}"', t()),
            ("CLIENT_SECRET={value}", t()),
            ("secret_key: {value}", t()),
            ("auth_token={value}", t()),
            ("aws_secret_access_key = {value}", self.aws_secret()),
            ("refresh token is {value}", t()),
            ("Our signing key: {value}", t()),
            ("https://deploy:{value}@git.internal.example/repo.git", p()),
            ("postgres://app:{value}@db.internal:5432/main", p()),
            ("https://api.example/v1/items?api_key={value}&page=2", t()),
            ("<password>{value}</password>", p()),
            ("--password {value}", p()),
            ("token: {value}", t()),
            ("Here is the secret: {value}", t()),
            ("The passphrase is {value}.", "correct horse battery staple"),
            ("recovery phrase: {value}", "abandon ability able about above absent"),
            ("root pw {value}", p()),
            ("admin / {value} for the router", p()),
            ("The password I use for the VPN is {value}", p()),
            ("I changed my password to {value} yesterday", p()),
            ("my password is the same as before: {value}", p()),
            ("my p4ssw0rd is {value}", p()),
            ("creds ops / {value}", p()),
            ("Your one-time code is {value}.", str(r.randint(100000, 999999))),
            ("OTP {value}", str(r.randint(100000, 999999))),
            ("2FA code: {value}", f"{r.randint(100, 999)} {r.randint(100, 999)}"),
            ("security question answer: {value}", r.choice(["Fluffy", "Biscuit", "Rosebud", "Pickles"])),
            ("My mother's maiden name is {value}", r.choice(["Okonkwo", "Lindqvist", "Moreau", "Tanaka"])),
            ("パスワードは {value} です", p()),
            ("我的密码是{value}", p()),
            ("비밀번호: {value}", p()),
            ("Office Wi-Fi key: {value}", p()),
            ('<add key="ApiSecret" value="{value}" />', t()),
            ("env:\n- name: DB_PASS\n  value: {value}", p()),
            ("u: ops p: {value}", p()),
            ("Username\nops\nPassword\n{value}\n", p()),
            ("the safe combination is {value}", f"{r.randint(10, 39)}-{r.randint(1, 39)}-{r.randint(10, 39)}"),
            ("recovery codes: {value}", " ".join(_mixed(r, 8).lower() for _ in range(3))),
        ]

    def entropy_in_context(self) -> list[tuple[str, str]]:
        def t() -> str:
            return _mixed(self.rng, self.rng.randint(24, 40))

        return [
            ("the staging token - {value} - expires Friday", t()),
            ("API key for prod {value} (rotate monthly)", t()),
            ("new webhook secret {value}", t()),
            ("Access token below\n{value}", t()),
            ("Schlüssel für die API {value}", t()),
            ("credentials attached inline {value} thanks", t()),
        ]

    def provider_tokens(self) -> list[tuple[str, str]]:
        r = self.rng
        return [
            ("token {value} leaked in the log", "ghp_" + _mixed(r, 36)),
            ("use {value} for CI", "glpat-" + _mixed(r, 20)),
            ("slack bot {value}", "xoxb-" + str(r.randint(10**11, 10**12)) + "-" + _mixed(r, 24)),
            ("stripe {value}", "sk_live_" + _mixed(r, 24)),
            ("maps key {value}", "AIza" + _mixed(r, 35)),
            ("sendgrid {value}", "SG." + _mixed(r, 22) + "." + _mixed(r, 43)),
            ("npm {value}", "npm_" + _mixed(r, 36)),
            ("openai {value}", "sk-proj-" + _mixed(r, 40)),
            ("jwt {value}", "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiI" + _mixed(r, 20) + "." + _mixed(r, 30)),
            ("Authorization: Bearer {value}", _mixed(r, 40)),
            ("hf {value}", "hf_" + "".join(r.choice(string.ascii_letters) for _ in range(34))),
            ("Here it is:\n{value}\nBob", "-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIB" + _mixed(r, 40)
             + "\n-----END RSA PRIVATE KEY-----"),
        ]  # fmt: skip

    # --- identity ----------------------------------------------------------------------------

    def nino(self) -> str:
        r = self.rng
        first, second = r.choice("ABCEGHJKLMNPRSTWXYZ"), r.choice("ABCEGHJKLMNPRSTWXYZ")
        if first + second in {"BG", "GB", "NK", "KN", "TN", "NT", "ZZ"}:
            first = "A"
        digits = _rand(r, string.digits, 6)
        if r.random() < 0.5:
            return f"{first}{second} {digits[:2]} {digits[2:4]} {digits[4:]} {r.choice('ABCD')}"
        return f"{first}{second}{digits}{r.choice('ABCD')}"

    def ssn(self) -> str:
        r = self.rng
        return f"{r.randint(100, 665)}-{r.randint(10, 99)}-{r.randint(1000, 9999)}"

    def dni(self) -> str:
        n = self.rng.randint(10**7, 10**8 - 1)
        return f"{n}{'TRWAGMYFPDXBNJZSQVHLCKE'[n % 23]}"

    def nir(self) -> str:
        r = self.rng
        sex, year, month, dept = r.choice("12"), r.randint(50, 99), r.randint(1, 12), r.randint(1, 95)
        body = f"{sex}{year}{month:02d}{dept:02d}{r.randint(1, 999):03d}{r.randint(1, 999):03d}"
        return f"{body}{97 - int(body) % 97:02d}"

    def cpf(self) -> str:
        digits = [self.rng.randint(0, 9) for _ in range(9)]
        for n in (9, 10):
            digits.append(sum(d * w for d, w in zip(digits, range(n + 1, 1, -1), strict=False)) * 10 % 11 % 10)
        s = "".join(map(str, digits))
        return f"{s[:3]}.{s[3:6]}.{s[6:9]}-{s[9:]}"

    def passport(self) -> str:
        return self.rng.choice(string.ascii_uppercase) + _rand(self.rng, string.digits, 8)

    def national_ids(self) -> list[tuple[str, str, str]]:
        r = self.rng
        return [
            ("uk_nino", "My NI number is {value}", self.nino()),
            ("uk_nino", "National Insurance: {value}", self.nino()),
            ("uk_nino", "NINO {value} for payroll", self.nino()),
            ("uk_nino", "payroll needs {value} before Friday", self.nino()),
            ("uk_nino", "{value}", self.nino()),
            ("us_ssn", "SSN {value} for HR", self.ssn()),
            ("us_ssn", "my social security number is {value}", self.ssn()),
            ("us_ssn", "W-2 shows {value}", self.ssn()),
            ("us_ssn", "social security no. {value}", str(r.randint(100, 665)) + str(r.randint(10**5, 10**6 - 1))),
            ("passport", "Passport number: {value}", self.passport()),
            ("passport", "my passport no. is {value}, expires 2031", self.passport()),
            ("passport", "Reisepassnummer {value}", self.passport()),
            ("passport", "Reisepass Nr. {value}", self.passport()),
            ("passport", "numéro de passeport {value}", _rand(r, string.digits, 2) + "AB" + _rand(r, string.digits, 5)),
            ("passport", "pasaporte {value}", "PA" + _rand(r, string.digits, 7)),
            ("passport", "passport {value} (UK)", _rand(r, string.digits, 9)),
            ("passport", "Passport #: {value}", self.passport()),
            ("es_dni", "DNI {value}", self.dni()),
            ("es_dni", "mi documento es {value}", self.dni()),
            ("fr_nir", "numéro de sécurité sociale {value}", self.nir()),
            ("fr_nir", "NIR : {value}", self.nir()),
            ("br_cpf", "CPF {value}", self.cpf()),
            ("br_cpf", "meu CPF é {value}", self.cpf()),
            ("it_cf", "codice fiscale {value}", "RSSMRA85T10A562S"),
            ("de_taxid", "Steuer-ID: {value}", _rand(r, string.digits, 11)),  # labelled only
            ("nl_bsn", "BSN {value}", _rand(r, string.digits, 9)),
            ("in_aadhaar", "Aadhaar {value}", f"{r.randint(2000, 9999)} {r.randint(1000, 9999)} {r.randint(1, 9999):04d}"),  # noqa: E501
            ("driving_licence", "driver's license number {value}", "D" + _rand(r, string.digits, 7)),
            ("national_id", "national ID number {value}", _rand(r, string.digits, 10)),
            ("driving_licence", "my driver licence: {value}", "SMITH" + _rand(r, string.digits, 6) + "AB9CD"),
            ("us_itin", "ITIN {value} for the filing",
             f"9{r.randint(10, 99)}-{r.randint(70, 88)}-{r.randint(1, 9999):04d}"),
            ("medical_record", "MRN {value}", _rand(r, string.digits, 8)),
            ("medical_record", "patient ID: {value}", "P" + _rand(r, string.digits, 7)),
            ("medical_record", "health insurance number {value}", "A" + _rand(r, string.digits, 9)),
        ]  # fmt: skip

    def _date_formats(self) -> list[str]:
        r = self.rng
        y, m, d = r.randint(1950, 2004), r.randint(1, 12), r.randint(1, 28)
        months = ["January", "February", "March", "April", "May", "June", "July", "August", "September",
                  "October", "November", "December"]  # fmt: skip
        de = ["Januar", "Februar", "März", "April", "Mai", "Juni", "Juli", "August", "September", "Oktober",
              "November", "Dezember"]  # fmt: skip
        fr = ["janvier", "février", "mars", "avril", "mai", "juin", "juillet", "août", "septembre", "octobre",
              "novembre", "décembre"]  # fmt: skip
        es = ["enero", "febrero", "marzo", "abril", "mayo", "junio", "julio", "agosto", "septiembre",
              "octubre", "noviembre", "diciembre"]  # fmt: skip
        return [
            f"{d:02d}/{m:02d}/{y}", f"{m}/{d}/{y}", f"{y}-{m:02d}-{d:02d}", f"{d}.{m}.{y}",
            f"{d:02d}-{m:02d}-{y % 100:02d}",
            f"{d} {months[m - 1]} {y}", f"{months[m - 1]} {d}, {y}", f"{d}th of {months[m - 1]} {y}",
            f"{d}. {de[m - 1]} {y}", f"{d} {fr[m - 1]} {y}", f"{d} de {es[m - 1]} de {y}",
            f"{months[m - 1][:3]} {d} {y}",
        ]  # fmt: skip

    def dates_of_birth(self) -> list[tuple[str, str]]:
        labels = [
            "Date of birth: {value}", "DOB {value}", "D.O.B.: {value}", "I was born on {value}", "born {value}",
            "my birthday is {value}", "birth date {value}", "geboren am {value}", "Geburtsdatum: {value}",
            "né le {value}", "date de naissance : {value}", "fecha de nacimiento: {value}", "nacido el {value}",
            "data di nascita {value}", "geboortedatum {value}", "{value} (date of birth)", "my bday: {value}",
        ]  # fmt: skip
        out = []
        for i, label in enumerate(labels * 2):
            formats = self._date_formats()
            out.append((label, formats[i % len(formats)]))
        return out

    def addresses(self) -> list[tuple[str, str, str]]:
        r = self.rng

        def n() -> str:
            return str(r.randint(2, 480))

        return [
            ("us", "I live at {value} now", f"{n()} Maple Avenue"),
            ("us", "Ship to {value}", f"{n()} Pennsylvania Avenue NW, Washington, DC 20500"),
            ("us", "our office: {value}", f"{n()} Market Street, Suite 400"),
            ("us", "send it to {value} please", f"{n()} Oak Ridge Drive, Austin, TX 78701"),
            ("uk", "my address is {value}", f"{n()} Elm Grove, Leeds LS6 2AB"),
            ("uk", "{value}", "221B Baker Street, London NW1 6XE"),
            ("uk", "deliver to {value}", f"Flat 3, {n()} Kingsley Road, Manchester M14 5ZZ"),
            ("uk", "We moved to {value} last month", f"{n()} Victoria Crescent"),
            ("de", "Meine Adresse: {value}", f"Hauptstraße {n()}, 10115 Berlin"),
            ("de", "Lieferadresse {value}", f"Lindenstr. {n()}a, 80331 München"),
            ("de", "wir wohnen in der {value}", f"Goethestraße {n()}"),
            ("de", "{value}", f"Am Mühlenweg {n()}, 50667 Köln"),
            ("de", "Anschrift: {value}", f"Unter den Linden {n()}, 10117 Berlin"),
            ("fr", "mon adresse est {value}", f"{n()} rue de la Paix, 75002 Paris"),
            ("fr", "j'habite au {value}", f"{n()} avenue des Champs-Élysées"),
            ("fr", "{value}", f"{n()} bis boulevard Voltaire, 75011 Paris"),
            ("nl", "ons adres: {value}", f"Keizersgracht {n()}, 1015 CJ Amsterdam"),
            ("nl", "{value}", f"Oudegracht {n()}, 3511 AX Utrecht"),
            ("es", "mi dirección es {value}", f"Calle Mayor {n()}, 28013 Madrid"),
            ("es", "{value}", f"Avenida de la Constitución {n()}, 41001 Sevilla"),
            ("it", "abito in {value}", f"Via Roma {n()}, 00184 Roma"),
            ("it", "{value}", f"Piazza Navona {n()}"),
            ("pt", "{value}", f"Rua Augusta {n()}, 1100-048 Lisboa"),
            ("se", "{value}", f"Drottninggatan {n()}, 111 51 Stockholm"),
            ("po_box", "write to {value}", f"P.O. Box {r.randint(100, 9999)}"),
            ("po_box", "mail it to {value}", f"P.O. Box {r.randint(100, 9999)}, Austin, TX 78767"),
            ("ca", "I'm at {value}", f"{n()} Queen St W, Toronto, ON M5H 2N2"),
            ("au", "{value}", f"Unit 5/{n()} George St, Sydney NSW 2000"),
            ("ie", "send it to {value}", f"{n()} Main St., Dublin 2, D02 XY45"),
            ("pl", "adres: {value}", f"ul. Marszałkowska {n()}/92, 00-514 Warszawa"),
            ("jp", "address is {value}", f"1-{r.randint(1, 9)}-{r.randint(1, 30)} Shibuya, Shibuya-ku, Tokyo 150-0002"),
        ]  # fmt: skip

    def contact_and_payment(self) -> list[tuple[str, str, str]]:
        r = self.rng
        return [
            ("phone", "Call me on {value} if that is easier.", f"(212) 555-0{r.randint(100, 199)}"),
            ("phone", "UK desk: {value}.", "+44 20 7946 0958"),
            ("phone", "Handy: {value}", "+49 30 901820"),
            ("email", "Write to {value} today", "dana.whitfield@acme.example"),
            ("card", "Card {value} on file", "4111 1111 1111 1111"),
            ("card", "charge {value}", "5500-0000-0000-0004"),
            ("iban", "Pay to {value} please", "DE89 3704 0044 0532 0130 00"),
            ("iban", "IBAN {value}", "GB82WEST12345698765432"),
            ("bank_account", "account number {value}", _rand(r, string.digits, r.randint(8, 12))),
            ("bank_account", "Sort code: {value}", f"{r.randint(10, 99)}-{r.randint(10, 99)}-{r.randint(10, 99)}"),
            ("bank_account", "routing number {value}", _rand(r, string.digits, 9)),
            ("bank_account", "my checking account is {value}", _rand(r, string.digits, 10)),
            ("bank_account", "Kontonummer {value}", _rand(r, string.digits, 10)),
            ("bank_account", "BSB {value}", f"{r.randint(10, 99)}{r.randint(0, 9)}-{r.randint(100, 999)}"),
            ("bank_account", "numéro de compte : {value}", _rand(r, string.digits, 11)),
        ]


def negatives(rng: random.Random) -> list[tuple[str, str, list[str]]]:
    """Look-alikes that must survive untouched: (subkind, text, substrings that must remain)."""
    sha = "".join(rng.choice("0123456789abcdef") for _ in range(40))
    uuid = "3f2b6c1e-8a4d-4e2f-9b1c-7d5e6f8a9b0c"
    items: list[tuple[str, str, list[str]]] = [
        ("order_number", "Order #A1B2-99812 has shipped", ["A1B2-99812"]),
        ("order_number", "your order ORD-2026-004512 is confirmed", ["ORD-2026-004512"]),
        ("order_number", "Bestellnummer 302-4417785-2209431", ["302-4417785-2209431"]),
        ("order_number", "commande n° CMD-88412-FR", ["CMD-88412-FR"]),
        ("tracking_id", "UPS tracking 1Z999AA10123456784", ["1Z999AA10123456784"]),
        ("tracking_id", "FedEx 7749 8877 1234", ["7749 8877 1234"]),
        ("tracking_id", "DHL Sendungsnummer JJD000390007829871", ["JJD000390007829871"]),
        ("tracking_id", "Royal Mail AB123456789GB", ["AB123456789GB"]),
        ("isbn", "ISBN 978-3-16-148410-0", ["978-3-16-148410-0"]),
        ("isbn", "ISBN-13: 9780306406157", ["9780306406157"]),
        ("isbn", "see ISBN 0-306-40615-2 for details", ["0-306-40615-2"]),
        ("version", "upgraded to v2.14.3 last night", ["v2.14.3"]),
        ("version", "release 1.0.0-rc.1+build.5114f85", ["1.0.0-rc.1+build.5114f85"]),
        ("version", "Python 3.11.6 and Django 5.0.2", ["3.11.6", "5.0.2"]),
        ("git_sha", f"commit {sha} fixes the flaky test", [sha]),
        ("git_sha", f"Merged in {sha[:7]} and rebased onto main", [sha[:7]]),
        ("git_sha", f"LGTM, approving revision {sha}", [sha]),
        ("invoice", "Invoice INV-2026-00042 is attached", ["INV-2026-00042"]),
        ("invoice", "Rechnung Nr. 2026/11/0042 über 1.250,00 EUR", ["2026/11/0042"]),
        ("invoice", "Invoice INV-4101 from vendor.example, total 1,250.00 EUR, due 2026-12-31", ["INV-4101"]),
        ("date", "Meeting on 14/03/2026 at 10:30", ["14/03/2026"]),
        ("date", "due 2026-12-31, paid on 2027-01-04", ["2026-12-31"]),
        ("date", "We launched on March 14, 2019.", ["March 14, 2019"]),
        ("date", "Le rendez-vous est le 12 mars 2026 à 14h", ["12 mars 2026"]),
        ("date", "the contract was signed 01.02.2024", ["01.02.2024"]),
        ("date", "Our company was born out of a hackathon in 2015", ["2015"]),
        ("meeting_time", "Sync with Bob Tan (partner.example), Tue 2026-12-08 10:30-11:00, accepted by Alice",
         ["2026-12-08 10:30-11:00"]),
        ("meeting_time", "Call at 14:00 CET / 08:00 EST", ["14:00"]),
        ("meeting_time", "Standup moved to 09:15, room 4.12", ["09:15"]),
        ("credential_word", "Send me the password reset link, I forgot it.", ["password reset"]),
        ("credential_word", "Your password is required to sign in.", ["required"]),
        ("credential_word", "token: expired", ["expired"]),
        ("credential_word", "secret: none", ["none"]),
        ("credential_word", "password = ${DB_PASSWORD}", ["${DB_PASSWORD}"]),
        ("credential_word", "The key takeaway is 42% growth", ["42%"]),
        ("credential_word", "Pin the agenda to the channel.", ["Pin the agenda"]),
        ("credential_word", "the secret is to start early", ["start early"]),
        ("credential_word", "API key rotation is scheduled for Monday", ["rotation"]),
        ("credential_word", "Boarding pass: 14A, gate B22", ["14A"]),
        ("credential_word", "Das Passwort ist abgelaufen, bitte zurücksetzen.", ["abgelaufen"]),
        ("credential_word", "le mot de passe est incorrect", ["incorrect"]),
        ("credential_word", "Passport office hours are 9-17 on weekdays", ["9-17"]),
        ("id_word", "NI numbers have two letters, six digits and a letter", ["six digits"]),
        ("id_word", "Bring your passport to the meeting on Friday", ["passport"]),
        ("id_word", "Project ID 2026-Q1-17 is on track", ["2026-Q1-17"]),
        ("uuid", f"request id {uuid}", [uuid]),
        ("amount", "Total: 1,250.00 EUR, VAT 237.50", ["1,250.00"]),
        ("amount", "Budget 48 000 € für Q3", ["48 000"]),
        ("flight", "Flight BA2490 departs 14:05 from T5", ["BA2490"]),
        ("room", "Room 12, floor 3, building B", ["Room 12"]),
        ("postcode_area", "our SW1 office and the EC2 team", ["SW1"]),
        ("street_word", "The Straße is closed for works this week", ["Straße"]),
        ("street_word", "Via email is best, via phone is fine too", ["Via email"]),
        ("street_word", "Take the 3 Main line trains tomorrow", ["3 Main line"]),
        ("product_code", "SKU 4006381333931 is out of stock", ["4006381333931"]),
        ("product_code", "Part number XJ-220-4410-B ordered", ["XJ-220-4410-B"]),
        ("hash", "sha256 checksum e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
         ["e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"]),
        ("ticket", "See JIRA OPS-4412 and ticket #88123", ["OPS-4412"]),
        ("url", "Docs at https://docs.example.com/v2/api-reference/authentication", ["authentication"]),
        ("statistic", "We handled 12,345,678 requests in 2025", ["12,345,678"]),
        ("credential_word", "The password reset ticket is INC-20391 in the queue.", ["INC-20391"]),
        ("credential_word", "Her password manager is 1Password.", ["1Password"]),
        ("credential_word", "2FA is enabled for all staff accounts", ["enabled"]),
        ("credential_word", "We pass 3/4 of the tests now.", ["3/4"]),
        ("credential_word", "Reset your password at https://acme.example/reset?id=42", ["acme.example/reset?id=42"]),
        ("credential_word", "Please change your password to something stronger by Friday.", ["something stronger"]),
        ("credential_word", "The OTP was sent to your phone.", ["sent"]),
        ("account_word", "Account number of attendees is 120.", ["120"]),
        ("account_word", "Ticket #123456 about my bank account was closed.", ["#123456"]),
        ("account_word", "The accounting team meets in room 4.12 at 10:00", ["4.12", "10:00"]),
        ("account_word", "The sort code is on the back of your card", ["sort code"]),
        ("credential_word", "The combination of both plans works best.", ["combination of both plans"]),
        ("credential_word", "Password\nForgot your password?", ["Forgot your password?"]),
        ("credential_word", "Our backup codes policy is in the wiki, see page 12.", ["page 12"]),
    ]  # fmt: skip
    return items
