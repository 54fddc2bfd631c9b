"""Credentials in pasted tables and in looser forms (held-out probes: 10 of 50, then 8 of 48, came through).

A table states its passwords once, in the header; each row's value sits under it with no link.
The other shapes: a PIN read out digit by digit, a code named by what it disarms, a phone's
unlock pattern, a value after a spaced dash, an employer id. Each look-alike must stay unchanged.
"""

from __future__ import annotations

import pytest

from services.common.pii.model import FindingKind
from services.common.redaction import RedactionMode, Redactor

MODES = pytest.mark.parametrize("mode", list(RedactionMode))


@MODES
@pytest.mark.parametrize(
    ("text", "kind", "values"),
    [
        (
            "| Username | Password |\n|---|---|\n| alice | Table$Pw22 |\n| bob | Second#Row7 |",
            FindingKind.PASSWORD,
            ["Table$Pw22", "Second#Row7"],
        ),
        ("username,password\nalice,Csv$Pass33\nbob,Other!Pass4", FindingKind.PASSWORD, ["Csv$Pass33", "Other!Pass4"]),
        ("Service\tUser\tPassword\nnas\tadmin\tGr4nite!\nrouter\troot\tT0or$88", FindingKind.PASSWORD, ["Gr4nite!"]),
        ("name;pin;note\nBob;4471;front door\nAmy;9921;back", FindingKind.PASSWORD, ["4471", "9921"]),
        ("id,api_key,expires\n1,9f8e7d6c5b4a39281706f5e4d3c2b1a0,2026-01-01", FindingKind.SECRET, ["9f8e7d6c5b4a3928"]),
        ("The PIN for my card is 4 4 7 1", FindingKind.PASSWORD, ["4 4 7 1"]),
        ("Here's the code to disarm: 9911", FindingKind.PASSWORD, ["9911"]),
        ("Phone unlock pattern: 1-5-9-6-3", FindingKind.SECRET, ["1-5-9-6-3"]),
        ("the new password you asked for -- Copper!Kettle9", FindingKind.PASSWORD, ["Copper!Kettle9"]),
        ("Tax ID (EIN): 12-3456789", FindingKind.GOV_ID, ["12-3456789"]),
        # config and command-line formats (a fourth probe, 48 shapes: these 8 came through)
        # (a wifi QR code's key is a password: "WPA" names one)
        ("WIFI:S:HomeNet;T:WPA;P:Sunflower!88;;", FindingKind.PASSWORD, ["Sunflower!88"]),
        ("db.example.com:5432:app:alice:PgPass!2026", FindingKind.SECRET, ["PgPass!2026"]),
        ("alice:$apr1$r31.....$HqJZimcKQFAMYayBlzkrA/", FindingKind.SECRET, ["HqJZimcKQFAMYayBlzkrA"]),
        ("redis-cli -a RedisPw!31 -h cache", FindingKind.PASSWORD, ["RedisPw!31"]),
        ("sshpass -p 'SshPass!5' ssh root@host", FindingKind.PASSWORD, ["SshPass!5"]),
        ("docker login -u alice -p DockerPw!7 registry.example.com", FindingKind.PASSWORD, ["DockerPw!7"]),
        ("PGPASSWORD=PgEnv!6 psql -h db", FindingKind.PASSWORD, ["PgEnv!6"]),
        ("wifi password? it's Lemonade77", FindingKind.PASSWORD, ["Lemonade77"]),
        ("password \u2192 Arrow!Pw11", FindingKind.PASSWORD, ["Arrow!Pw11"]),
        # more command lines (a probe of 36 config and command-line shapes: these 4 came through)
        ("keytool -storepass Ch4ng3d!t -keystore app.jks", FindingKind.PASSWORD, ["Ch4ng3d!t"]),
        ("smbclient //srv/share -U alice%Hx5*kP9m", FindingKind.PASSWORD, ["Hx5*kP9m"]),
        ("net user admin Pa55word!x /add", FindingKind.PASSWORD, ["Pa55word!x"]),
        ("echo 'Qw3Er4Ty5' | sudo -S apt update", FindingKind.PASSWORD, ["Qw3Er4Ty5"]),
        ("echo Tk7#pW2q | docker login -u alice --password-stdin", FindingKind.PASSWORD, ["Tk7#pW2q"]),
        ("backup.sh --db-password Vr5!nK8m --host db", FindingKind.PASSWORD, ["Vr5!nK8m"]),
        # a user name and its password joined by a colon, with no host after them
        ("jdoe:Gr8Scott!", FindingKind.PASSWORD, ["Gr8Scott!"]),
        ("the default is admin:Password123! until first login", FindingKind.PASSWORD, ["Password123!"]),
        ("use bob:Summer2024 on the NAS", FindingKind.PASSWORD, ["Summer2024"]),
    ],
)
def test_the_values_are_replaced_by_their_kind(
    mode: RedactionMode, text: str, kind: FindingKind, values: list[str]
) -> None:
    # Given a table column or a form stating credentials  When redacted
    result = Redactor(mode).redact(text)
    # Then every value is gone and the kind's placeholder stands in for it
    assert all(value not in result.text for value in values)
    assert kind in result.kinds


@MODES
@pytest.mark.parametrize(
    "text",
    [
        "| Field | Password policy |\n|---|---|\n| length | 14 |",
        "| Step | Action |\n|---|---|\n| 1 | Reset your password |\n| 2 | Log in |",
        "Hi Bob, reset your password, then log in.\nThanks, Alice",
        "name,password_changed,last_login\nbob,yes,2026-01-01",
        "Feature | Status\nPassword reset | done\nSSO | pending",
        "pin,label\n,blank\n,blank2",
        "The pattern library is on the wiki.",
        "A knitting pattern: 3 rows of 12.",
        "unlock the door at 9 -- the guard arrives at 10",
        "We arm the alarm at 22:00.",
        "the PIN is printed on page 4 4 of the manual",
        "our password rules -- see the wiki",
        "The EIN field is optional.",
        "Note:12:30:meeting:room",
        "WIFI: the office network is fast; P: see IT",
        "docker login registry.example.com",
        "redis-cli -h cache -p 6379",
        "the password? it's required",
        "Step 1 \u2192 Step 2",
        "ssh-keygen -p -f key",
        "run it with --bypass cache",
        "mytool --password $DB_PASS --verbose",
        "net user alice /delete",
        "echo $PW | sudo -S ls",
        "echo hello | grep h",
        "the -U flag sets 50% of users",
        "use --passes 3 for a finer grid",
        "Certtool now accepts --password for --key-info and encrypted keys.",
        "(gpg --change-passphrase your-user-id)",
        "specify -onepass (for djpeg) to reduce memory usage",
        "socat ABSTRACT-LISTEN:temp,accept-timeout=0.1,user=$USER FILE:/dev/null",
        "Note:Important!",
        "Fwd:Invoice#4411",
        "FROM python:3.12-slim",
        "see class:MyClass2D in the docs",
        "time 12:30:45",
    ],
)
def test_tables_and_prose_that_only_look_like_it_stay(mode: RedactionMode, text: str) -> None:
    # Given a table about passwords, or prose sharing a word with the forms above  When redacted
    # Then it comes through unchanged
    assert Redactor(mode).redact(text).text == text
