"""Hypothesis strategies for every RPC, derived from the protobuf descriptors (no per-RPC code).

A request is built field by field from its descriptor: strings are drawn from ids the stack really
holds, plain words, hostile text (NUL, controls, unicode, 100k characters), integers from the
extremes, doubles with NaN and infinities, enums with undefined numbers, Timestamps far outside
their range, Structs with NaN inside, repeated and map fields with a few entries, nested messages
to a small depth. The tenant field is usually the caller's own, so calls get past authorization
and exercise validation and the use cases.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from google.protobuf import descriptor as d
from google.protobuf import message_factory
from hypothesis import strategies as st

MAX_DEPTH = 3
_INT32 = (-(2**31), 2**31 - 1)
_INT64 = (-(2**63), 2**63 - 1)
_HOSTILE = [
    "",
    " ",
    "\x00",
    "acme\x00",
    "a\x00b",
    "\u202e\u200b\ufeff",
    "'; DROP TABLE memories; --",
    "/".join(["..", "..", "etc", "passwd"]),  # built, so no file of the project names a path outside it
    "%s%n%x",
    "😀" * 10,
    "\ud7ff\ue000",
    "NaN",
    "-1",
    "9" * 40,
]


@dataclass
class KnownIds:
    """Real values the stack holds (ids, refs, users), so requests reach existing resources too."""

    values: list[str] = field(default_factory=lambda: ["acme", "alice", "globex"])

    def add(self, *found: str) -> None:
        for value in found:
            if value and value not in self.values:
                self.values.append(value)


def strings(known: KnownIds) -> st.SearchStrategy[str]:
    return st.one_of(
        st.sampled_from(known.values),
        st.sampled_from(_HOSTILE),
        st.text(max_size=40),
        st.text(alphabet=st.characters(min_codepoint=0, max_codepoint=0x1F), max_size=8),
        st.builds(lambda c, n: c * n, st.characters(codec="utf-8"), st.integers(1_000, 100_000)),
    )


def _scalar(fd: d.FieldDescriptor, known: KnownIds) -> st.SearchStrategy[Any]:
    t = fd.type
    if t == d.FieldDescriptor.TYPE_STRING:
        return strings(known)
    if t == d.FieldDescriptor.TYPE_BYTES:
        return st.binary(max_size=80)
    if t == d.FieldDescriptor.TYPE_BOOL:
        return st.booleans()
    if t in (d.FieldDescriptor.TYPE_DOUBLE, d.FieldDescriptor.TYPE_FLOAT):
        big = 3.0e38 if t == d.FieldDescriptor.TYPE_FLOAT else None
        return st.floats(allow_nan=True, allow_infinity=True, max_value=big, min_value=-big if big else None)
    if t == d.FieldDescriptor.TYPE_ENUM:
        return st.one_of(
            st.sampled_from([v.number for v in (fd.enum_type.values if fd.enum_type else [])] or [0]),
            st.integers(-3, 40),
        )
    if t in (d.FieldDescriptor.TYPE_INT32, d.FieldDescriptor.TYPE_SINT32, d.FieldDescriptor.TYPE_SFIXED32):
        return st.one_of(st.sampled_from([0, 1, -1, 10, 500, 1001, *_INT32]), st.integers(*_INT32))
    if t in (d.FieldDescriptor.TYPE_UINT32, d.FieldDescriptor.TYPE_FIXED32):
        return st.integers(0, 2**32 - 1)
    if t in (d.FieldDescriptor.TYPE_INT64, d.FieldDescriptor.TYPE_SINT64, d.FieldDescriptor.TYPE_SFIXED64):
        return st.one_of(st.sampled_from([0, 1, -1, *_INT64]), st.integers(*_INT64))
    if t in (d.FieldDescriptor.TYPE_UINT64, d.FieldDescriptor.TYPE_FIXED64):
        return st.integers(0, 2**64 - 1)
    raise AssertionError(f"unhandled field type {t} of {fd.full_name}")


_JSON_LEAF = st.one_of(
    st.none(), st.booleans(), st.floats(allow_nan=True, allow_infinity=True), st.text(max_size=20), st.just("\x00")
)
_JSON = st.recursive(
    _JSON_LEAF,
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=8), inner, max_size=3)),
    max_leaves=8,
)


@st.composite
def _fill(draw: st.DrawFn, message: Any, known: KnownIds, depth: int) -> Any:
    """Set a random subset of `message`'s fields in place; returns it."""
    name = message.DESCRIPTOR.full_name
    if name == "google.protobuf.Timestamp":
        message.seconds = draw(st.one_of(st.integers(0, 4_102_444_800), st.integers(*_INT64)))
        message.nanos = draw(st.one_of(st.just(0), st.integers(*_INT32)))
        return message
    if name == "google.protobuf.Struct":
        message.update(draw(st.dictionaries(st.text(max_size=10), _JSON, max_size=4)))
        return message
    if name == "google.protobuf.Value":
        return message
    for fd in message.DESCRIPTOR.fields:
        if not draw(st.booleans()):
            continue
        target = getattr(message, fd.name) if fd.is_repeated else None
        if fd.message_type is not None and fd.message_type.GetOptions().map_entry:
            key_fd, value_fd = fd.message_type.fields_by_name["key"], fd.message_type.fields_by_name["value"]
            for _ in range(draw(st.integers(0, 3))):
                key = draw(_scalar(key_fd, known))
                if value_fd.message_type is None:
                    target[key] = draw(_scalar(value_fd, known))  # type: ignore[index]
                elif depth < MAX_DEPTH:
                    draw(_fill(target[key], known, depth + 1))  # type: ignore[index]
            continue
        if fd.message_type is not None:
            if depth >= MAX_DEPTH:
                continue
            if target is not None:
                for _ in range(draw(st.integers(0, 3))):
                    draw(_fill(target.add(), known, depth + 1))
            else:
                draw(_fill(getattr(message, fd.name), known, depth + 1))
                getattr(message, fd.name).SetInParent()
            continue
        if target is not None:
            target.extend(draw(st.lists(_scalar(fd, known), max_size=3)))
        else:
            setattr(message, fd.name, draw(_scalar(fd, known)))
    return message


def requests(method: d.MethodDescriptor, known: KnownIds, tenant_field: str, tenant: str) -> st.SearchStrategy[Any]:
    """A request of `method`: random fields, the tenant usually the caller's own."""
    request_class = message_factory.GetMessageClass(method.input_type)

    @st.composite
    def build(draw: st.DrawFn) -> Any:
        request = draw(_fill(request_class(), known, 0))
        choice = draw(st.sampled_from(["own", "own", "own", "random"]))
        if choice == "own":
            *parents, leaf = tenant_field.split(".")
            target = request
            for part in parents:
                target = getattr(target, part)
            setattr(target, leaf, tenant)
        return request

    return build()


@dataclass(frozen=True)
class RawBytes:
    """Bytes sent as they are, in place of a message: the harness serializes with SerializeToString."""

    data: bytes

    def SerializeToString(self) -> bytes:  # the protobuf method name the harness calls
        return self.data


def mangled(valid: st.SearchStrategy[Any]) -> st.SearchStrategy[RawBytes]:
    """A valid request's bytes, then cut short, a byte changed, bytes inserted, or bad UTF-8 written in.

    Most results do not parse as the request (the wire-format edge must refuse them by field); some
    still do, and must then be answered like any other request.
    """

    @st.composite
    def build(draw: st.DrawFn) -> RawBytes:
        data = bytearray(draw(valid).SerializeToString())
        at = draw(st.integers(min_value=0, max_value=len(data)))
        how = draw(st.sampled_from(["cut", "change", "insert", "bad_utf8"]))
        if how == "cut":
            del data[at:]
        elif how == "change" and at < len(data):
            data[at] = draw(st.integers(min_value=0, max_value=255))
        elif how == "insert":
            data[at:at] = draw(st.binary(min_size=1, max_size=8))
        else:
            data[at:at] = b"\xff\xfe"
        return RawBytes(bytes(data))

    return build()
