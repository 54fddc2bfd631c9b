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

import math
from collections.abc import Callable, Iterator
from typing import Any

import grpc
from google.protobuf.descriptor import FieldDescriptor
from google.protobuf.message import Message

from services.common.errors import FieldViolation, InvalidArgument
from services.common.gen.memloop.v1 import field_limits
from services.common.grpc_errors import abort_with

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
    """Check a request against its contract; clamp page sizes in place. Raises InvalidArgument."""
    violations = []
    for violation in _message(request, ""):
        violations.append(violation)
        if len(violations) == MAX_VIOLATIONS:
            break
    if violations:
        raise InvalidArgument(violations[0].field, violations[0].description, *violations[1:])


def _message(message: Message, path: str, limit: int = DEFAULT_MAX_CHARS) -> Iterator[FieldViolation]:
    """`limit` is the holding field's character limit, which a Struct applies to every string in it."""
    descriptor = message.DESCRIPTOR
    if descriptor.full_name == _TIMESTAMP:
        yield from _timestamp(message, path)
        return
    if descriptor.full_name == _STRUCT:
        yield from _struct_fields(message, path, 0, limit)
        return
    if descriptor.full_name == _VALUE:
        yield from _struct_value(message, path, 0, limit)
        return
    if descriptor.full_name == _LIST_VALUE:
        for index, item in enumerate(message.values):  # type: ignore[attr-defined]
            yield from _struct_value(item, f"{path}[{index}]", 1, limit)
        return
    for field, value in message.ListFields():
        name = f"{path}.{field.name}" if path else field.name
        yield from _field(field, value, name)


def _field(field: FieldDescriptor, value: Any, name: str) -> Iterator[FieldViolation]:
    full = field.full_name
    if field.is_repeated:
        limit = field_limits.MAX_ITEMS.get(full)
        if limit is not None and len(value) > limit:
            yield FieldViolation(name, f"must have at most {limit} items, got {len(value)}")
            return
        if _is_map(field):
            yield from _map(field, value, name)
            return
        for index, item in enumerate(value):
            yield from _single(field, item, f"{name}[{index}]")
        return
    yield from _single(field, value, name)


def _single(field: FieldDescriptor, value: Any, name: str) -> Iterator[FieldViolation]:
    if field.type == FieldDescriptor.TYPE_STRING:
        yield from _string(value, name, field_limits.MAX_CHARS.get(field.full_name, DEFAULT_MAX_CHARS))
    elif field.type in _FLOATS:
        if not math.isfinite(value):
            yield FieldViolation(name, f"must be a finite number, got {value!r}")
    elif field.type == FieldDescriptor.TYPE_ENUM and field.enum_type is not None:
        if field.enum_type.values_by_number.get(value) is None:
            yield FieldViolation(name, f"must be a value of {field.enum_type.name}, got {value}")
    elif field.type == FieldDescriptor.TYPE_MESSAGE:
        yield from _message(value, name, field_limits.MAX_CHARS.get(field.full_name, DEFAULT_MAX_CHARS))
    elif field.full_name in field_limits.PAGE_SIZES:
        yield from _page_size(value, name)


def _is_map(field: FieldDescriptor) -> bool:
    entry = field.message_type
    return entry is not None and entry.GetOptions().map_entry


def _map(field: FieldDescriptor, entries: Any, name: str) -> Iterator[FieldViolation]:
    limit = field_limits.MAX_CHARS.get(field.full_name, DEFAULT_MAX_CHARS)
    assert field.message_type is not None  # a map field's entry type
    value_field = field.message_type.fields_by_name["value"]
    for key in sorted(entries, key=str):
        where = f"{name}[{_key(key)}]"
        if isinstance(key, str):
            yield from _string(key, where, limit)
        value = entries[key]
        if value_field.type == FieldDescriptor.TYPE_STRING:
            yield from _string(value, where, limit)
        else:
            yield from _single(value_field, value, where)


def _key(key: object) -> str:
    text = str(key)
    return text if len(text) <= QUOTE_CHARS and text.isprintable() else quote(text)


def _string(value: str, name: str, limit: int) -> Iterator[FieldViolation]:
    if len(value) > limit:
        yield FieldViolation(name, f"must be at most {limit} characters, got {quote(value)}")
    elif "\x00" in value:
        yield FieldViolation(name, f"must not contain a NUL character, got {quote(value)}")


def _timestamp(value: Any, name: str) -> Iterator[FieldViolation]:
    if not TIMESTAMP_MIN_SECONDS <= value.seconds <= TIMESTAMP_MAX_SECONDS:
        yield FieldViolation(name, f"must lie between 0001-01-01 and 9999-12-31, got {value.seconds} seconds")
    elif not 0 <= value.nanos < _NANOS:
        yield FieldViolation(name, f"nanos must be in [0, 999999999], got {value.nanos}")


def _struct_fields(struct: Any, name: str, depth: int, limit: int) -> Iterator[FieldViolation]:
    if depth > MAX_STRUCT_DEPTH:
        yield FieldViolation(name, f"must nest at most {MAX_STRUCT_DEPTH} levels deep")
        return
    for key in sorted(struct.fields):
        where = f"{name}[{_key(key)}]"
        yield from _string(key, where, limit)
        yield from _struct_value(struct.fields[key], where, depth + 1, limit)


def _struct_value(value: Any, name: str, depth: int, limit: int) -> Iterator[FieldViolation]:
    kind = value.WhichOneof("kind")
    if kind == "number_value" and not math.isfinite(value.number_value):
        yield FieldViolation(name, f"must be a finite number, got {value.number_value!r}")
    elif kind == "string_value":
        yield from _string(value.string_value, name, limit)
    elif kind == "struct_value":
        yield from _struct_fields(value.struct_value, name, depth, limit)
    elif kind == "list_value":
        for index, item in enumerate(value.list_value.values):
            yield from _struct_value(item, f"{name}[{index}]", depth + 1, limit)


def _page_size(value: int, name: str) -> Iterator[FieldViolation]:
    if value < 0:
        yield FieldViolation(name, f"must not be negative, got {value}")


def clamp_page_sizes(request: Message) -> None:
    """Lower every page size above its documented maximum to that maximum (AIP-158)."""
    for field, value in request.ListFields():
        bounds = field_limits.PAGE_SIZES.get(field.full_name)
        if bounds is not None and value > bounds[1]:
            setattr(request, field.name, bounds[1])


class ValidationInterceptor(grpc.ServerInterceptor):  # type: ignore[type-arg]
    """Validate every unary request against its contract before the servicer sees it."""

    def __init__(self, domain: str) -> None:
        self._domain = domain

    def intercept_service(self, continuation: Callable[[Any], Any], details: grpc.HandlerCallDetails) -> Any:
        handler = continuation(details)
        if handler is None or handler.unary_unary is None:
            return handler
        inner, domain = handler.unary_unary, self._domain

        def call(request: Any, context: grpc.ServicerContext) -> Any:
            if isinstance(request, Message):
                try:
                    validate(request)
                except InvalidArgument as exc:
                    abort_with(context, exc, domain=domain)
                clamp_page_sizes(request)
            return inner(request, context)

        return grpc.unary_unary_rpc_method_handler(
            call,
            request_deserializer=handler.request_deserializer,
            response_serializer=handler.response_serializer,
        )
