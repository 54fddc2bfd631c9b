"""One validation layer at the gRPC edge, for every RPC of every service, derived from the contract.

The rules are not written per servicer. They come from two places next to the contract:

* the descriptors themselves: a string may not hold NUL (PostgreSQL refuses it), a double must be
  finite (JSON and Struct cannot carry NaN or infinity, including inside a `google.protobuf.Struct`),
  an enum value must be one the enum defines, a `google.protobuf.Timestamp` must lie in the range
  the type documents (0001-01-01 to 9999-12-31, nanos in [0, 1e9));
* the limits the proto comments state, which `scripts/gen_protos.py` extracts into
  `field_limits.py`: "At most N characters." per string field (also each map key and value, and each
  string inside a Struct), "At most N items." per repeated or map field, and "0 means D, above M
  is clamped" for page sizes (negative is INVALID_ARGUMENT, above M is lowered to M in the request).

Every violation names its field the way the proto spells it (`decisions[0].candidate.text`,
`procedure_versions[reply_style]`, `details[limits].cap`) and quotes at most `QUOTE_CHARS` characters
of the input, and at most `MAX_VIOLATIONS` are reported, so a rejected call's status always fits in
gRPC's metadata limits whatever the client sent. The checks run before the servicer, so a rejected
call has written nothing. Semantic rules (required fields, formats, cross-field rules) stay with the
request mapping of each service; this layer is the structural wall every request passes first.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import grpc
from google.protobuf.descriptor import FieldDescriptor
from google.protobuf.message import Message

from services.common.errors import FieldViolation, InvalidArgument
from services.common.gen.memloop.v1 import field_limits
from services.common.grpc_errors import abort_with
from services.common.wire_check import UndecodableRequest, tolerant

QUOTE_CHARS = 64
MAX_VIOLATIONS = 10
DEFAULT_MAX_CHARS = 256  # a string field whose comment states no limit; tests/unit/test_validation.py keeps it unused
MAX_STRUCT_DEPTH = 32
TIMESTAMP_MIN_SECONDS = -62_135_596_800  # 0001-01-01T00:00:00Z
TIMESTAMP_MAX_SECONDS = 253_402_300_799  # 9999-12-31T23:59:59Z
_NANOS = 1_000_000_000
_TIMESTAMP = "google.protobuf.Timestamp"
_STRUCT = "google.protobuf.Struct"
_VALUE = "google.protobuf.Value"
_LIST_VALUE = "google.protobuf.ListValue"
_FLOATS = (FieldDescriptor.TYPE_DOUBLE, FieldDescriptor.TYPE_FLOAT)


def quote(value: str) -> str:
    """At most QUOTE_CHARS characters of untrusted input, escaped, with the full length when cut."""
    if len(value) <= QUOTE_CHARS:
        return repr(value)
    return f"{value[:QUOTE_CHARS]!r}… ({len(value)} characters)"


def validate(request: Message) -> None:
    """Check a request against its contract; clamp nothing. Raises InvalidArgument naming the fields."""
    found: list[FieldViolation] = []
    _message(request, "", DEFAULT_MAX_CHARS, found)
    if found:
        raise InvalidArgument(found[0].field, found[0].description, *found[1:MAX_VIOLATIONS])


@dataclass(frozen=True)
class _Rule:
    """What the contract says about one field, worked out once per field (validation is on every call)."""

    kind: int  # one of the _KIND_* below
    max_chars: int
    max_items: int | None
    repeated: bool
    enum_values: frozenset[int]
    value_field: FieldDescriptor | None  # a map's value field


_KIND_OTHER, _KIND_STRING, _KIND_FLOAT, _KIND_ENUM, _KIND_MESSAGE, _KIND_MAP, _KIND_PAGE = range(7)


@functools.cache
def _rule(field: FieldDescriptor) -> _Rule:
    full = field.full_name
    entry = field.message_type
    if entry is not None and entry.GetOptions().map_entry:
        kind, value_field = _KIND_MAP, entry.fields_by_name["value"]
    else:
        value_field = None
        if field.type == FieldDescriptor.TYPE_STRING:
            kind = _KIND_STRING
        elif field.type in _FLOATS:
            kind = _KIND_FLOAT
        elif field.type == FieldDescriptor.TYPE_ENUM:
            kind = _KIND_ENUM
        elif field.type == FieldDescriptor.TYPE_MESSAGE:
            kind = _KIND_MESSAGE
        elif full in field_limits.PAGE_SIZES:
            kind = _KIND_PAGE
        else:
            kind = _KIND_OTHER
    values = frozenset(field.enum_type.values_by_number) if field.enum_type is not None else frozenset()
    return _Rule(
        kind=kind,
        max_chars=field_limits.MAX_CHARS.get(full, DEFAULT_MAX_CHARS),
        max_items=field_limits.MAX_ITEMS.get(full),
        repeated=field.is_repeated,
        enum_values=values,
        value_field=value_field,
    )


def _message(message: Message, path: str, limit: int, found: list[FieldViolation]) -> None:
    """`limit` is the holding field's character limit, which a Struct applies to every string in it."""
    kind = message.DESCRIPTOR.full_name
    if kind == _TIMESTAMP:
        _timestamp(message, path, found)
    elif kind == _STRUCT:
        _struct_fields(message, path, 0, limit, found)
    elif kind == _VALUE:
        _struct_value(message, path, 0, limit, found)
    elif kind == _LIST_VALUE:
        for index, item in enumerate(message.values):  # type: ignore[attr-defined]
            _struct_value(item, f"{path}[{index}]", 1, limit, found)
    else:
        for field, value in message.ListFields():
            if len(found) >= MAX_VIOLATIONS:
                return
            _field(field, _rule(field), value, f"{path}.{field.name}" if path else field.name, found)


def _field(field: FieldDescriptor, rule: _Rule, value: Any, name: str, found: list[FieldViolation]) -> None:
    if not rule.repeated:
        _single(field, rule, value, name, found)
        return
    if rule.max_items is not None and len(value) > rule.max_items:
        found.append(FieldViolation(name, f"must have at most {rule.max_items} items, got {len(value)}"))
    elif rule.kind == _KIND_MAP:
        _map(rule, value, name, found)
    else:
        for index, item in enumerate(value):
            _single(field, rule, item, f"{name}[{index}]", found)


def _single(field: FieldDescriptor, rule: _Rule, value: Any, name: str, found: list[FieldViolation]) -> None:
    kind = rule.kind
    if kind == _KIND_STRING:
        _string(value, name, rule.max_chars, found)
    elif kind == _KIND_MESSAGE:
        _message(value, name, rule.max_chars, found)
    elif kind == _KIND_FLOAT:
        if not math.isfinite(value):
            found.append(FieldViolation(name, f"must be a finite number, got {value!r}"))
    elif kind == _KIND_ENUM:
        if value not in rule.enum_values:
            enum = field.enum_type.name if field.enum_type is not None else "the enum"
            found.append(FieldViolation(name, f"must be a value of {enum}, got {value}"))
    elif kind == _KIND_PAGE and value < 0:
        found.append(FieldViolation(name, f"must not be negative, got {value}"))


def _map(rule: _Rule, entries: Any, name: str, found: list[FieldViolation]) -> None:
    value_field = rule.value_field
    assert value_field is not None  # a map rule always names its value field
    value_rule = _rule(value_field)
    for key in sorted(entries, key=str):
        where = f"{name}[{_key(key)}]"
        if isinstance(key, str):
            _string(key, where, rule.max_chars, found)
        value = entries[key]
        if value_rule.kind == _KIND_STRING:
            _string(value, where, rule.max_chars, found)
        else:
            _single(value_field, value_rule, value, where, found)


def _key(key: object) -> str:
    text = str(key)
    return text if len(text) <= QUOTE_CHARS and text.isprintable() else quote(text)


def _string(value: str, name: str, limit: int, found: list[FieldViolation]) -> None:
    if len(value) > limit:
        found.append(FieldViolation(name, f"must be at most {limit} characters, got {quote(value)}"))
    elif "\x00" in value:
        found.append(FieldViolation(name, f"must not contain a NUL character, got {quote(value)}"))


def _timestamp(value: Any, name: str, found: list[FieldViolation]) -> None:
    if not TIMESTAMP_MIN_SECONDS <= value.seconds <= TIMESTAMP_MAX_SECONDS:
        found.append(FieldViolation(name, f"must lie between 0001-01-01 and 9999-12-31, got {value.seconds} seconds"))
    elif not 0 <= value.nanos < _NANOS:
        found.append(FieldViolation(name, f"nanos must be in [0, 999999999], got {value.nanos}"))


def _struct_fields(struct: Any, name: str, depth: int, limit: int, found: list[FieldViolation]) -> None:
    if depth > MAX_STRUCT_DEPTH:
        found.append(FieldViolation(name, f"must nest at most {MAX_STRUCT_DEPTH} levels deep"))
        return
    for key in sorted(struct.fields):
        if len(found) >= MAX_VIOLATIONS:
            return
        where = f"{name}[{_key(key)}]"
        _string(key, where, limit, found)
        _struct_value(struct.fields[key], where, depth + 1, limit, found)


def _struct_value(value: Any, name: str, depth: int, limit: int, found: list[FieldViolation]) -> None:
    kind = value.WhichOneof("kind")
    if kind == "number_value" and not math.isfinite(value.number_value):
        found.append(FieldViolation(name, f"must be a finite number, got {value.number_value!r}"))
    elif kind == "string_value":
        _string(value.string_value, name, limit, found)
    elif kind == "struct_value":
        _struct_fields(value.struct_value, name, depth, limit, found)
    elif kind == "list_value":
        for index, item in enumerate(value.list_value.values):
            _struct_value(item, f"{name}[{index}]", depth + 1, limit, found)


def clamp_page_sizes(request: Message) -> None:
    """Lower every page size above its documented maximum to that maximum (AIP-158)."""
    for field, value in request.ListFields():
        bounds = field_limits.PAGE_SIZES.get(field.full_name)
        if bounds is not None and value > bounds[1]:
            setattr(request, field.name, bounds[1])


class ValidationInterceptor(grpc.ServerInterceptor):  # type: ignore[type-arg]
    """Validate every unary request against its contract before the servicer sees it.

    Bytes that do not parse as the request message are INVALID_ARGUMENT too (services/common/wire_check.py).
    """

    def __init__(self, domain: str) -> None:
        self._domain = domain

    def intercept_service(self, continuation: Callable[[Any], Any], details: grpc.HandlerCallDetails) -> Any:
        handler = continuation(details)
        if handler is None or handler.unary_unary is None:
            return handler
        inner, domain = handler.unary_unary, self._domain

        def call(request: Any, context: grpc.ServicerContext) -> Any:
            if isinstance(request, UndecodableRequest):
                abort_with(
                    context, InvalidArgument(request.violation.field, request.violation.description), domain=domain
                )
            if isinstance(request, Message):
                try:
                    validate(request)
                except InvalidArgument as exc:
                    abort_with(context, exc, domain=domain)
                clamp_page_sizes(request)
            return inner(request, context)

        return grpc.unary_unary_rpc_method_handler(
            call,
            # Outer interceptors copy this deserializer, so bytes that do not parse reach every
            # wrapper as an UndecodableRequest and are answered here, after authentication.
            request_deserializer=(
                tolerant(handler.request_deserializer) if handler.request_deserializer is not None else None
            ),
            response_serializer=handler.response_serializer,
        )
