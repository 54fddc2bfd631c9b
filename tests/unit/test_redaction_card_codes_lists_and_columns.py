"""A card's code and expiry, recovery code lists, ids in table columns, published values kept (a sixteenth probe).

Written before the code by a helper that had read neither the detectors nor the earlier probes: 398 secrets
and 175 ordinary texts with values that pass their checksums. On `5788c44` 52 secrets came through and 41
ordinary texts were damaged. This file's families, in cases of its own:

* a card's security code after its name in five languages ("CID", "código de seguridad", "セキュリティコード",
  "the three digits on the back are …") and its expiry after its name where the text is about a card;
* every code of a list of recovery codes under its name, a line of advice between ("Keep these safe");
* a one-time code in brackets ("[482913]", "【認証コード】"), after what it is for ("de Signal es"), in Russian,
  Turkish and Vietnamese, and before "as your one-time password";
* identity numbers after passport and licence labels in Chinese, Japanese, Korean and German, Aadhaar after
  its Hindi name, a W-9's taxpayer identification number, a Mexican CURP by its shape; an id, a birth date or
  an expiry in the column under its header; a UPI id at a payment app's handle, a Pix key after its name, a
  US routing number after "ABA"; OpenLDAP's bind password after "-w".

Kept: a commit named to git ("git show <sha>", "uses: actions/checkout@<sha>"), a request's id in a log, a
Go module's hash, an SSH key's fingerprint, a published JSON Web Key, base64 that decodes to prose or JSON, a
cloud resource's id, a documentation's blank in a key's format ("ghp_xxxx…", "AKIAXXXX…"), a number's decimals,
a robot's no-reply address, the unspecified and loopback addresses, an empty assignment's next line, a DOI's
last part (not a phone), a log's message id or a page's cursor, base64 of a settings file, a setting about a
credential ("token_ttl_seconds", "max_new_tokens", "password_file"), a parameter's type, an epoch or a constant or
a barcode (not a phone), "see page 12"
after "backup codes", "the security code from 2021".
"""

from __future__ import annotations

import pytest

from services.common.pii.model import FindingKind
from services.common.redaction import RedactionMode, Redactor
from tests.helpers import assert_value_replaced

FOUND = [
    ("Amex 3714 496353 98431, CID 7302", "7302", FindingKind.PASSWORD),
    ("Tarjeta terminada en 4821, código de seguridad: 519", "519", FindingKind.PASSWORD),
    ("カード番号は末尾4821、セキュリティコードは 662 です", "662", FindingKind.PASSWORD),
    ("the three digits on the back are 804", "804", FindingKind.PASSWORD),
    ("Visa ending 1881, expiry 09/29", "09/29", FindingKind.CARD),
    ("Karte: gültig bis 11/2030", "11/2030", FindingKind.CARD),
    ("Recovery codes\nKeep these safe\n1. 4821 9930\n2. 7712 0381", "7712 0381", FindingKind.SECRET),
    ("Backup codes: 9f3c1-77a2e, 0b8d4-e91c3", "0b8d4-e91c3", FindingKind.SECRET),
    ("Seu código de verificação do Signal é 552 091", "552 091", FindingKind.SECRET),
    ("인증번호 [604218] 를 입력하세요", "604218", FindingKind.SECRET),
    ("【確認コード】339102", "339102", FindingKind.SECRET),
    ("Ваш код подтверждения: 771204", "771204", FindingKind.SECRET),
    ("Onay kodunuz: 482193", "482193", FindingKind.SECRET),
    ("Mã xác nhận của bạn là 902114", "902114", FindingKind.SECRET),
    ("Use 4471 as your one-time passcode for this payment.", "4471", FindingKind.SECRET),
    ("您的护照号码 G39201774 已登记", "G39201774", FindingKind.GOV_ID),
    ("パスポート番号: TR5528104", "TR5528104", FindingKind.GOV_ID),
    ("여권번호 M12345678", "M12345678", FindingKind.GOV_ID),
    ("Führerscheinnummer B7X2K9QW4M1", "B7X2K9QW4M1", FindingKind.GOV_ID),
    ("आधार नंबर 537428159064 है", "537428159064", FindingKind.GOV_ID),
    ("Taxpayer identification number 912-71-4455 on the W-9", "912-71-4455", FindingKind.GOV_ID),
    ("Su CURP quedó como GOMA850314HDFRRN09 en el registro", "GOMA850314HDFRRN09", FindingKind.GOV_ID),
    ("name;ssn;city\nAna Ruiz;219-09-9999;Austin", "219-09-9999", FindingKind.GOV_ID),
    ("姓名,身份证号\n张伟,440304198805123068", "440304198805123068", FindingKind.GOV_ID),
    ("| Name | PESEL |\n|---|---|\n| Jan | 85031412347 |", "85031412347", FindingKind.GOV_ID),
    ("| Name | DOB |\n|---|---|\n| Jan | 1985-03-14 |", "1985-03-14", FindingKind.DATE_OF_BIRTH),
    ("id,card,expiry\n7,visa,08/27", "08/27", FindingKind.CARD),
    ("Pay me on UPI: meera.k21@oksbi", "meera.k21@oksbi", FindingKind.BANK_ACCOUNT),
    (
        "Chave Pix: 0b9f2c1e-55aa-4e8b-9d3c-7f1a2b3c4d5e",
        "0b9f2c1e-55aa-4e8b-9d3c-7f1a2b3c4d5e",
        FindingKind.BANK_ACCOUNT,
    ),
    ("Wire via ABA 121000358 to the escrow account", "121000358", FindingKind.BANK_ACCOUNT),
    ('ldapmodify -x -D "cn=admin,dc=acme,dc=example" -w Qz8!rT2vLm -f change.ldif', "Qz8!rT2vLm", FindingKind.PASSWORD),
    # (a second probe's shapes, written later by another helper)
    ("sqlplus -s scott/Tiger8841xQ@//db01.acme.example:1521/XEPDB1", "Tiger8841xQ", FindingKind.PASSWORD),
    ('sqlcmd -S db02 -U sa -P "W9r!fLq2#zZ" -Q "SELECT 1"', '"W9r!fLq2#zZ"', FindingKind.PASSWORD),
    ("sshpass -p \\\n    'Birch77Qx!n' \\\n    ssh deploy@10.20.0.4", "'Birch77Qx!n'", FindingKind.PASSWORD),
    ("PESEL matki: 85031412347, proszę wpisać", "85031412347", FindingKind.GOV_ID),
    ("Versichertennummer (eGK): K204617839 bei der AOK", "K204617839", FindingKind.GOV_ID),
    ("PPSN 1234567TW for the tax form", "1234567TW", FindingKind.GOV_ID),
    ("银行卡背面 CVN2：417", "417", FindingKind.PASSWORD),  # noqa: RUF001
    (
        "+-------+------------+\n| name  | dob        |\n+-------+------------+\n"
        "| Ana   | 1990-04-02 |\n+-------+------------+",
        "1990-04-02",
        FindingKind.DATE_OF_BIRTH,
    ),
]
KEPT = [
    "See git show 3f9a1c2be47d8e06a5f4c3b2a1908e7d6c5b4a39 for the fix.",
    "      - uses: actions/setup-node@1e60f620b9541d16bece96c5465dc8ee9832be0b # v4",
    "x-request-id: 4c1d9e7a2b3f48a6b5c0d1e2f3a4b5c6",
    "golang.org/x/sys v0.21.0 h1:rF+pYz3DAGSQAxAu1CbC7catZg4ebC4UIeIhKxBZvws=",
    "ED25519 key fingerprint is SHA256:+DiY3wvvV6TuJJhbpZisF/zLDA0zPMSvHdkr4UvCOqU.",
    '{"keys":[{"kty":"RSA","e":"AQAB","n":"u1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gunVTLw7onLRnrq0_IzW7yWR7QkrmBL7jTKEn5u-qKhbwKfBstIs-bMY2Zkp18gnTxKLxoS2tFczGkPLPgizskuemMghRniWaoLcyehkd3qqGElvW_VDL5AaWTg0nLVkjRo9z-40RQzuVaE8AkAFmxZzow3x-VJYKdjykkJ0iT9wCS0DRTXu269V264Vf_3jvredZiKRkgwlL9xNAwxXFg0x_XFw005UWVRIkdgcKWTjpBP2dPwVZ4WWC-9aGVd-Gyn1o0CLelf4rEjGoXbAAEgAqeGUxrcIlbjXfbcmw"}]}',
    "data:\n  motd.txt: V2VsY29tZSB0byB0aGUgdGVzdCBjbHVzdGVyLCBiZSBuaWNl",
    '{"items": [], "cursor": "eyJvZmZzZXQiOjEwMCwibGltaXQiOjUwfQ=="}',
    "Subnet subnet-0f1e2d3c4b5a69788 sits in vpc-0123456789abcdef0.",
    "export GITHUB_TOKEN=ghp_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
    "aws_access_key_id = AKIAXXXXXXXXXXXXXXXX",
    "sqrt(2) = 1.41421356237309504880168872420969807856967",
    "Author: build-bot <41898282+github-actions[bot]@users.noreply.github.com>",
    "Listening on 0.0.0.0:8080 and 127.0.0.1:9090.",
    "Our backup codes guide is on the intranet, see section 14.",
    "Enter the security code from the 2021 letter.",
    "SMTP_PASSWORD=\nSENTRY_DSN=\n# both are set in the deploy's secret store",
    "Cited as DOI 10.1145/3531146.3533088 in the survey.",
    "worker INFO processed msg_id=7be1c04f9a2d3e5b6c7d8e9f queue=mail",
    "GET /v1/items?cursor=eyJvZmZzZXQiOiAyMDAsICJsaW1pdCI6IDUwfQ==",
    "binaryData:\n  app.ini: bG9nX2xldmVsPWRlYnVnCnRoZW1lPWRhcmsKbGFuZz1lbgo=",
    "256 SHA256:Zq3vR8YyH1p0Wk2mN5tB7cX9dE4fG6hJ8kL0mN2pQ4s ops@jump (ED25519)",
    "token_ttl_seconds = 7200\nmax_new_tokens=512\npassword_file: /run/secrets/app_password",
    "def check_password(password: str) -> bool: ...",
    '{"id": "evt_1", "created": 1717236000}',
    "Planck constant h = 6.62607015e-34 J s",
    "UPC 036000291452 on the shelf label",
]


@pytest.mark.parametrize(("text", "value", "kind"), FOUND)
def test_the_value_is_redacted(text: str, value: str, kind: FindingKind) -> None:
    assert_value_replaced(RedactionMode.THOROUGH, text, kind, value)


@pytest.mark.parametrize("text", KEPT)
def test_a_published_value_or_a_blank_is_kept(text: str) -> None:
    assert Redactor(RedactionMode.THOROUGH).redact(text).text == text
