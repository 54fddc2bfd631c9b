"""Requests whose bytes do not parse as their message become INVALID_ARGUMENT naming the field.

gRPC's Python server turns a deserializer's exception into INTERNAL ("Exception deserializing
request!"), which tells a client with a bug, or a fuzzer, that the server broke when it was the
input. So the edge swaps each generated `FromString` for one that returns an `UndecodableRequest`
instead of raising; the validation interceptor answers it with INVALID_ARGUMENT before any servicer
runs, so nothing is written.

protobuf's error says only which message failed. To name the field, `locate` walks the wire format
against the descriptor and reports the first place that breaks it: a string that is not UTF-8
(proto3 requires it), a length or varint that runs past the end, a group or a reserved wire type,
nesting deeper than protobuf accepts. Names follow the validator's spelling
(`decisions[2].candidate.text`). When the walk finds nothing, the violation names `request`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from google.protobuf.descriptor import Descriptor, FieldDescriptor
from google.protobuf.message import DecodeError, Message

from services.common.errors import FieldViolation

# protobuf's own recursion limit for parsing; a deeper message is refused the same way.
MAX_DEPTH = 100
_VARINT, _FIXED64, _LENGTH, _GROUP_START, _GROUP_END, _FIXED32 = 0, 1, 2, 3, 4, 5


@dataclass(frozen=True)
class UndecodableRequest:
    """Stands in for a request that did not parse: what was expected and where it broke."""

    message_name: str
    violation: FieldViolation


def tolerant(deserializer: Callable[[bytes], Any]) -> Callable[[bytes], Any]:
    """Wrap a generated `FromString` so a parse failure yields an UndecodableRequest, not an exception."""
    message_class = getattr(deserializer, "__self__", None)
    if not (isinstance(message_class, type) and issubclass(message_class, Message)):
        return deserializer
    descriptor: Any = message_class.DESCRIPTOR
    parse = deserializer

    def deserialize(data: bytes) -> Any:
        try:
            return parse(data)
        except (DecodeError, RecursionError, ValueError, UnicodeDecodeError) as exc:
            return UndecodableRequest(descriptor.full_name, locate(descriptor, data, exc))

    return deserialize


class _Broken(Exception):
    def __init__(self, field: str, description: str) -> None:
        super().__init__(description)
        self.violation = FieldViolation(field, description)


def locate(descriptor: Descriptor, data: bytes, error: BaseException | None = None) -> FieldViolation:
    """The first field at which `data` breaks `descriptor`'s wire format, or `request` when none is found."""
    try:
        _walk(descriptor, memoryview(data), "", 0)
    except _Broken as broken:
        return broken.violation
    except Exception:  # naming the field is a courtesy: a walk that trips still answers INVALID_ARGUMENT
        pass
    cause = f": {error}" if error is not None and str(error) else ""
    return FieldViolation("request", f"is not a valid {descriptor.full_name} message{cause}"[:200])


def _walk(descriptor: Descriptor, data: memoryview, prefix: str, depth: int) -> None:
    if depth > MAX_DEPTH:
        raise _Broken(prefix or "request", f"nests messages deeper than {MAX_DEPTH} levels")
    counts: dict[int, int] = {}
    position, end = 0, len(data)
    while position < end:
        tag, position = _varint(data, position, prefix or "request", "a field tag")
        number, wire_type = tag >> 3, tag & 7
        field = descriptor.fields_by_number.get(number)
        index = counts.get(number, 0)
        counts[number] = index + 1
        name = _name(prefix, field, index) if field is not None else _join(prefix, f"<field {number}>")
        if number == 0:
            raise _Broken(prefix or "request", "holds a field numbered 0, which no message may use")
        if wire_type == _VARINT:
            _, position = _varint(data, position, name, "a varint")
        elif wire_type in (_FIXED64, _FIXED32):
            position = _skip(data, position, 8 if wire_type == _FIXED64 else 4, name)
        elif wire_type == _LENGTH:
            size, position = _varint(data, position, name, "a length")
            start, position = position, _skip(data, position, size, name)
            if field is not None:
                _check_payload(field, data[start:position], name, depth)
        else:
            kind = "a group" if wire_type in (_GROUP_START, _GROUP_END) else f"wire type {wire_type}"
            raise _Broken(name, f"is encoded as {kind}, which proto3 messages do not use")


def _check_payload(field: FieldDescriptor, payload: memoryview, name: str, depth: int) -> None:
    if field.type == FieldDescriptor.TYPE_STRING:
        try:
            str(payload, "utf-8")
        except UnicodeDecodeError as exc:
            raise _Broken(name, f"is not valid UTF-8 (byte {exc.start} of {len(payload)})") from None
    elif field.type == FieldDescriptor.TYPE_MESSAGE and field.message_type is not None:
        _walk(field.message_type, payload, name, depth + 1)


def _varint(data: memoryview, position: int, name: str, what: str) -> tuple[int, int]:
    value, shift = 0, 0
    while True:
        if position >= len(data):
            raise _Broken(name, f"ends inside {what}: the message is truncated")
        byte = data[position]
        position += 1
        value |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return value, position
        shift += 7
        if shift >= 70:
            raise _Broken(name, f"holds {what} longer than ten bytes")


def _skip(data: memoryview, position: int, size: int, name: str) -> int:
    if position + size > len(data):
        raise _Broken(name, f"claims {size} bytes but {len(data) - position} remain: the message is truncated")
    return position + size


def _name(prefix: str, field: FieldDescriptor, index: int) -> str:
    return _join(prefix, f"{field.name}[{index}]" if field.is_repeated else field.name)


def _join(prefix: str, name: str) -> str:
    return f"{prefix}.{name}" if prefix else name
