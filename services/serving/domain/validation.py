"""Input limits of `HandleRequest`, checked before anything is redacted or written.

The limits are part of the contract (a client can rely on them):

* identifiers (request_id, tenant, user, thread, route, feedback_ref, tool names) ≤ 256 characters;
  request_id, tenant, user, thread and route are required; the identifiers kept as sent (all but
  an attachment's filename, which is redacted like text) hold no credential;
* procedure_versions: at most 64 entries, each a non-empty name and a positive integer version
  written in decimal without sign or leading zeros (1 … 2 147 483 647); the one reserved name
  `memloop.context` instead carries the context version `GetContext` returned (32 hex digits);
* content: body ≤ 256 KiB (UTF-8), subject ≤ 1 KiB, each address ≤ 320 characters;
  attachments: at most 32, together ≤ 10 MiB (they are hashed, never stored);
* tool_outcomes: at most 100, each with a tool and a status, summary ≤ 4 KiB;
* reply ≤ 64 KiB.

Every violation is reported at once, each naming its field the way the proto spells it
(`content.body`, `tool_outcomes[2].tool`, `procedure_versions[reply_style]`), so a rejected call
says all that is wrong with it and has written nothing.
"""

from __future__ import annotations

import re

from services.common.context_version import CONTEXT_VERSION_KEY, is_context_version
from services.common.errors import FieldViolation, InvalidArgument
from services.common.pii.scan import states_a_secret
from services.serving.domain.model import HandleRequestCommand

KIB = 1024
MIB = 1024 * KIB

ID_MAX_CHARS = 256
PROCEDURE_VERSIONS_MAX = 64
VERSION_MAX = 2**31 - 1
BODY_MAX_BYTES = 256 * KIB
SUBJECT_MAX_BYTES = 1 * KIB
ADDRESS_MAX_CHARS = 320
ATTACHMENTS_MAX_COUNT = 32
ATTACHMENTS_MAX_TOTAL_BYTES = 10 * MIB
TOOL_OUTCOMES_MAX = 100
TOOL_SUMMARY_MAX_BYTES = 4 * KIB
REPLY_MAX_BYTES = 64 * KIB

_VERSION = re.compile(r"[1-9][0-9]{0,9}")


def validate_handle_request(command: HandleRequestCommand) -> HandleRequestCommand:
    """Return the command unchanged when it is within the limits; raise InvalidArgument otherwise."""
    problems: list[FieldViolation] = []
    for name in ("request_id", "tenant", "user", "thread", "route"):
        problems += _identifier(name, getattr(command, name), required=True)
    problems += _identifier("feedback_ref", command.feedback_ref, required=False)
    problems += _identifier(
        "owner_address", command.owner_address, required=False, limit=ADDRESS_MAX_CHARS, kept_as_sent=False
    )
    problems += _procedure_versions(command.procedure_versions)
    problems += _tool_outcomes(command)
    problems += _content(command)
    problems += _max_bytes("reply", command.reply, REPLY_MAX_BYTES)
    if problems:
        raise InvalidArgument(problems[0].field, problems[0].description, *problems[1:])
    return command


def is_positive_version(version: str) -> bool:
    """Decimal positive integer without sign, spaces or leading zeros, at most 2**31 - 1."""
    return _VERSION.fullmatch(version) is not None and int(version) <= VERSION_MAX


def _identifier(
    field: str, value: str, *, required: bool, limit: int = ID_MAX_CHARS, kept_as_sent: bool = True
) -> list[FieldViolation]:
    """`kept_as_sent`: the field is stored and forwarded verbatim (not redacted like text), so a
    credential in it would be kept: refused, never echoed."""
    if not value.strip():
        return [FieldViolation(field, "is required")] if required else []
    if len(value) > limit:
        return [FieldViolation(field, f"must be at most {limit} characters")]
    if kept_as_sent and states_a_secret(value):
        return [FieldViolation(field, "holds a credential (a password, key or token): send a reference to it")]
    return []


def _max_bytes(field: str, value: str, limit: int) -> list[FieldViolation]:
    if len(value.encode("utf-8", errors="surrogatepass")) > limit:
        return [FieldViolation(field, f"must be at most {limit} bytes (UTF-8)")]
    return []


def _procedure_versions(versions: dict[str, str]) -> list[FieldViolation]:
    if len(versions) > PROCEDURE_VERSIONS_MAX:
        return [FieldViolation("procedure_versions", f"must have at most {PROCEDURE_VERSIONS_MAX} entries")]
    problems: list[FieldViolation] = []
    for name, version in sorted(versions.items()):
        field = f"procedure_versions[{name}]"
        if not name.strip() or len(name) > ID_MAX_CHARS:
            problems.append(FieldViolation(field, f"procedure name must be 1 to {ID_MAX_CHARS} characters"))
        elif name == CONTEXT_VERSION_KEY:
            if not is_context_version(version):
                problems.append(FieldViolation(field, f"{version[:40]!r} is not a context version from GetContext"))
        elif not is_positive_version(version):
            problems.append(FieldViolation(field, f"version {version[:20]!r} is not a positive integer"))
    return problems


def _tool_outcomes(command: HandleRequestCommand) -> list[FieldViolation]:
    if len(command.tool_outcomes) > TOOL_OUTCOMES_MAX:
        return [FieldViolation("tool_outcomes", f"must have at most {TOOL_OUTCOMES_MAX} entries")]
    problems: list[FieldViolation] = []
    for index, outcome in enumerate(command.tool_outcomes):
        prefix = f"tool_outcomes[{index}]"
        problems += _identifier(f"{prefix}.tool", outcome.tool, required=True)
        problems += _identifier(f"{prefix}.status", outcome.status, required=True)
        problems += _identifier(f"{prefix}.ref", outcome.ref, required=False)
        problems += _max_bytes(f"{prefix}.summary", outcome.summary, TOOL_SUMMARY_MAX_BYTES)
    return problems


def _content(command: HandleRequestCommand) -> list[FieldViolation]:
    email = command.content
    problems = _max_bytes("content.body", email.body, BODY_MAX_BYTES)
    problems += _max_bytes("content.subject", email.subject, SUBJECT_MAX_BYTES)
    for name in ("from_address", "to_address"):
        if len(getattr(email, name)) > ADDRESS_MAX_CHARS:
            problems.append(FieldViolation(f"content.{name}", f"must be at most {ADDRESS_MAX_CHARS} characters"))
    attachments = command.attachments
    if len(attachments) > ATTACHMENTS_MAX_COUNT:
        problems.append(FieldViolation("content.attachments", f"must have at most {ATTACHMENTS_MAX_COUNT} entries"))
    elif sum(len(a.data) for a in attachments) > ATTACHMENTS_MAX_TOTAL_BYTES:
        limit_mib = ATTACHMENTS_MAX_TOTAL_BYTES // MIB
        problems.append(FieldViolation("content.attachments", f"must total at most {limit_mib} MiB"))
    for index, attachment in enumerate(attachments):
        problems += _identifier(
            f"content.attachments[{index}].filename", attachment.filename, required=False, kept_as_sent=False
        )
        problems += _identifier(f"content.attachments[{index}].media_type", attachment.media_type, required=False)
    return problems
