"""A password passed as an argument, in code or on a command line, where its position names it.

No key stands beside these values; the call or the command says which argument is the password:

* a Go driver's DSN: "svc:TMZSu5Vr@tcp(10.0.0.4:3306)/inventory" (user, colon, password, "@tcp(");
* a MySQL client's password glued to its flag, quoted: "mysql -u root -p'N1$C*n3y'" (the bare
  "-pSecret" is `login_pairs`');
* a call that sets a credential's name to a value: "define('DB_PASSWORD', 'x')", "setenv("API_TOKEN",
  "x")", "config.set('smtp_password', 'x')";
* a user and a password handed to an HTTP client: "auth=('svc', 'x')", "HTTPBasicAuth("svc", "x")";
* Windows' "net use Z: \\\\host\\share /user:CORP\\jdoe x" and Apache's "htpasswd -b file user x".

Every run is bounded and each shape opens on its literal, so a long text of near misses stays linear.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from services.common.pii.model import FindingKind, Hit, hit, is_placeholder_at
from services.common.pii.stated_values import plausible

_DSN = re.compile(r"(?<![\w.\-])[\w.\-]{1,64}:(?P<value>[^\s@:/'\"()]{1,128})@(?:tcp|udp|unix)\(")
_MYSQL_QUOTED = re.compile(
    r"\b(?:mysql\w{0,8}|mariadb\w{0,8})\b[^\n|;]{0,200}?[^\S\n]-p(?P<quote>['\"])(?P<value>[^'\"\n]{1,128})(?P=quote)"
)
_CREDENTIAL_NAME = (
    r"[\w.\-]{0,40}(?:pass(?:word|wd|phrase)?|pwd|secret|token|api[_\-]?key|auth[_\-]?key|access[_\-]?key"
    r"|private[_\-]?key|salt)[\w.\-]{0,40}"
)
_NAME_THEN_VALUE = re.compile(
    rf"\([^\S\n]{{0,8}}(?P<q1>['\"])(?P<name>{_CREDENTIAL_NAME})(?P=q1)[^\S\n]{{0,8}},[^\S\n]{{0,8}}"
    r"(?P<q2>['\"])(?P<value>[^'\"\n]{1,256})(?P=q2)[^\S\n]{0,8}[,)]",
    re.I,
)
_USER_THEN_PASSWORD = re.compile(
    r"(?:\bauth|basic_?auth|BasicAuth|DigestAuth|credentials)[^\S\n]{0,4}[=(:][^\S\n]{0,4}[(\[]?[^\S\n]{0,4}"
    r"(?P<q1>['\"])[^'\"\n]{1,64}(?P=q1)[^\S\n]{0,8},[^\S\n]{0,8}(?P<q2>['\"])(?P<value>[^'\"\n]{1,128})(?P=q2)",
    re.I,
)
_NET_USE = re.compile(
    r"\bnet[^\S\n]{1,4}use\b[^\n]{0,200}?[^\S\n]/u(?:ser)?:[^\s/]{1,128}[^\S\n]{1,4}(?P<value>[^\s/*]\S{0,127})(?!\S)",
    re.I,
)
_HTPASSWD = re.compile(
    r"\bhtpasswd(?:[^\S\n]{1,4}-[a-zA-Z]{1,6}){0,4}?[^\S\n]{1,4}-[a-zA-Z]{0,5}b[a-zA-Z]{0,5}"
    r"(?:[^\S\n]{1,4}-[a-zA-Z]{1,6}){0,4}[^\S\n]{1,4}[^\s-]\S{0,255}[^\S\n]{1,4}\S{1,128}[^\S\n]{1,4}"
    r"(?P<value>\S{1,128})(?!\S)"
)
# OpenLDAP's tools take the bind password after "-w" ("ldapsearch -x -D cn=… -w s3cret -b …"; "-W" prompts).
_LDAP_BIND = re.compile(
    r"\bldap(?:search|modify|add|delete|passwd|whoami|compare|modrdn|exop)\b[^\n]{0,300}?[^\S\n]-w[^\S\n]{1,4}"
    r"(?P<value>\"[^\"\n]{1,128}\"|'[^'\n]{1,128}'|[^\s\"'-]\S{0,127})(?!\S)"
)
# Oracle's "sqlplus user/pass@db", SQL Server's tools' "-P pass", sshpass's "-p pass" (maybe after a line's "\").
_SQLPLUS = re.compile(
    r"\bsqlplus(?:[^\S\n]+-[sSlL])*[^\S\n]+[\w.$#]{1,64}/(?P<value>\"[^\"\n]{1,128}\"|[^@\s/\"']{1,128})@"
)
_SQL_SERVER_P = re.compile(
    r"\b(?:sqlcmd|bcp|osql|isql)\b[^\n]{0,300}?[^\S\n]-P[^\S\n]*"
    r"(?P<value>\"[^\"\n]{1,128}\"|'[^'\n]{1,128}'|[^\s\"'-]\S{0,127})(?!\S)"
)
_SSHPASS = re.compile(
    r"\bsshpass[^\S\n]+-p[^\S\n]*(?:\\\n[^\S\n]*)?(?P<value>'[^'\n]{1,128}'|\"[^\"\n]{1,128}\"|[^\s\"'\\-]\S{0,127})"
)
# A template's blank: "password_here", "your-secret", "changeme", "example".
_SAMPLE = re.compile(r"_here$|^your[_\-]|^my[_\-]|changeme|changeit|example|^x+$|^\.\.\.$", re.I)
# Each shape with what must be in the lowered text for it to be tried: prose has "(", "@" and "author"
# everywhere, so each gate is the shape's own opening ("@tcp(", "('", "auth=").
_SHAPES: tuple[tuple[re.Pattern[str], re.Pattern[str]], ...] = (
    (re.compile(r"@(?:tcp|udp|unix)\("), _DSN),
    (re.compile(r"mysql|mariadb"), _MYSQL_QUOTED),
    (re.compile(r"\([^\S\n]{0,8}['\"]"), _NAME_THEN_VALUE),
    (re.compile(r"auth[^\S\n]{0,4}[=(:]|credentials[^\S\n]{0,4}[=(:]"), _USER_THEN_PASSWORD),
    (re.compile(r"net[^\S\n]{1,4}use"), _NET_USE),
    (re.compile(r"htpasswd"), _HTPASSWD),
    (re.compile(r"ldap"), _LDAP_BIND),  # (each new gate one literal: an alternation is tried at every character)
    (re.compile(r"sqlplus"), _SQLPLUS),
    (re.compile(r"sqlcmd"), _SQL_SERVER_P),
    (re.compile(r"bcp "), _SQL_SERVER_P),
    (re.compile(r"osql"), _SQL_SERVER_P),
    (re.compile(r"sshpass"), _SSHPASS),
)


def passwords_as_arguments(text: str, lower: str) -> Iterator[Hit]:
    tried: set[re.Pattern[str]] = set()
    for gate, shape in _SHAPES:
        if shape in tried or gate.search(lower) is None:
            continue
        tried.add(shape)
        for m in shape.finditer(text):
            value = m.group("value")
            if is_placeholder_at(text, m.start("value")) or not plausible(value, True, FindingKind.PASSWORD, True):
                continue
            if _SAMPLE.search(value) or (shape is _NAME_THEN_VALUE and value.lower() == m.group("name").lower()):
                continue  # define('DB_PASSWORD', 'password_here'), ('PASSWORD', 'password'): a template's blank
            yield hit(m.start("value"), m.end("value"), FindingKind.PASSWORD, "context:argument")
