"""The edge validation layer over every RPC of every service, generated from the descriptors.

Each case is derived from the contract itself: every string, double, enum, Timestamp, Struct,
repeated and page-size field reachable from every RPC's request type gets a hostile value, and the
layer must refuse it naming exactly that field, with a status small enough for gRPC's trailers.
A new RPC or field is covered without touching this file.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from google.protobuf.descriptor import Descriptor, FieldDescriptor
from google.protobuf.message import Message
from google.protobuf.message_factory import GetMessageClass

from services.common.errors import InvalidArgument
from services.common.gen.memloop.v1 import (
    consolidation_service_pb2,
    field_limits,
    learned_procedure_service_pb2,
    memory_service_pb2,
    policy_service_pb2,
    serving_service_pb2,
)
from services.common.grpc_errors import to_status
from services.common.validation import DEFAULT_MAX_CHARS, QUOTE_CHARS, clamp_page_sizes, validate

SERVICES: tuple[ModuleType, ...] = (
    memory_service_pb2,
    serving_service_pb2,
    policy_service_pb2,
    consolidation_service_pb2,
    learned_procedure_service_pb2,
)
_SPECIAL = ("google.protobuf.Timestamp", "google.protobuf.Struct")


def request_types() -> dict[str, Descriptor]:
    """Every RPC's request type, by `Service.Method`."""
    found = {}
    for module in SERVICES:
        for service in module.DESCRIPTOR.services_by_name.values():
            for method in service.methods:
                found[f"{service.name}.{method.name}"] = method.input_type
    return found


@dataclass(frozen=True)
class Leaf:
    """One field reachable from a request type, and how to reach it."""

    rpc: str
    request: Descriptor
    route: tuple[FieldDescriptor, ...]

    @property
    def field(self) -> FieldDescriptor:
        return self.route[-1]

    def __str__(self) -> str:
        return f"{self.rpc}:{'.'.join(f.name for f in self.route)}"


def _leaves(descriptor: Descriptor, route: tuple[FieldDescriptor, ...] = ()) -> Iterator[tuple[FieldDescriptor, ...]]:
    for field in descriptor.fields:
        nested = field.message_type
        if nested is not None and not nested.GetOptions().map_entry and nested.full_name not in _SPECIAL:
            yield (*route, field)  # the repeated or singular message field itself
            yield from _leaves(nested, (*route, field))
        else:
            yield (*route, field)


def leaves() -> list[Leaf]:
    return [Leaf(rpc, d, route) for rpc, d in request_types().items() for route in _leaves(d)]


def _is_map(field: FieldDescriptor) -> bool:
    return field.message_type is not None and field.message_type.GetOptions().map_entry


def build(leaf: Leaf, value: Any) -> tuple[Message, str]:
    """A request with `value` at the leaf (the one element of each repeated step) and its field path."""
    request = GetMessageClass(leaf.request)()
    message, path = request, []
    for step in leaf.route[:-1]:
        if step.is_repeated:
            message = getattr(message, step.name).add()
            path.append(f"{step.name}[0]")
        else:
            message = getattr(message, step.name)
            path.append(step.name)
    last = leaf.field
    if _is_map(last):
        getattr(message, last.name)["key"] = value
        path.append(f"{last.name}[key]")
    elif last.is_repeated and last.message_type is None:
        getattr(message, last.name).append(value)
        path.append(f"{last.name}[0]")
    elif last.message_type is not None and last.message_type.full_name == "google.protobuf.Timestamp":
        target = getattr(message, last.name).add() if last.is_repeated else getattr(message, last.name)
        target.seconds = value
        path.append(f"{last.name}[0]" if last.is_repeated else last.name)
    elif last.message_type is not None and last.message_type.full_name == "google.protobuf.Struct":
        getattr(message, last.name).update(value)
        path.append(last.name)
    else:
        setattr(message, last.name, value)
        path.append(last.name)
    return request, ".".join(path)


def refusal(request: Message) -> InvalidArgument:
    with pytest.raises(InvalidArgument) as refused:
        validate(request)
    return refused.value


def of_type(kind: int) -> list[Leaf]:
    return [leaf for leaf in leaves() if leaf.field.type == kind and not _is_map(leaf.field)]


def _struct_leaves() -> list[Leaf]:
    return [
        leaf
        for leaf in leaves()
        if leaf.field.message_type is not None and leaf.field.message_type.full_name == "google.protobuf.Struct"
    ]


def _timestamp_leaves() -> list[Leaf]:
    return [
        leaf
        for leaf in leaves()
        if leaf.field.message_type is not None and leaf.field.message_type.full_name == "google.protobuf.Timestamp"
    ]


STRINGS = of_type(FieldDescriptor.TYPE_STRING)
DOUBLES = of_type(FieldDescriptor.TYPE_DOUBLE) + of_type(FieldDescriptor.TYPE_FLOAT)
ENUMS = of_type(FieldDescriptor.TYPE_ENUM)
MAPS = [leaf for leaf in leaves() if _is_map(leaf.field)]
REPEATED = [leaf for leaf in leaves() if leaf.field.is_repeated]
TOP_LEVEL_REPEATED = [leaf for leaf in REPEATED if len(leaf.route) == 1]
PAGES = [leaf for leaf in leaves() if leaf.field.full_name in field_limits.PAGE_SIZES]


def test_the_cases_cover_every_rpc_of_every_service() -> None:
    # Given the request types of every service's RPCs
    rpcs = request_types()
    # Then every service module of the contracts is covered, and every RPC has a string field under test
    generated = Path(memory_service_pb2.__file__).parent
    assert {m.__name__.rsplit(".", 1)[-1] for m in SERVICES} == {p.stem for p in generated.glob("*_service_pb2.py")}
    assert len(rpcs) >= 29
    assert {leaf.rpc for leaf in STRINGS} == set(rpcs)
    assert DOUBLES and ENUMS and MAPS and PAGES and _struct_leaves() and _timestamp_leaves()


def test_every_string_and_repeated_field_a_request_can_carry_states_its_limit_in_the_proto() -> None:
    # Given every string and repeated field reachable from a request
    # Then each one's proto comment states its limit (so the default limit is never what applies)
    assert [str(s) for s in STRINGS + MAPS if s.field.full_name not in field_limits.MAX_CHARS] == []
    assert [str(r) for r in REPEATED if r.field.full_name not in field_limits.MAX_ITEMS] == []
    assert DEFAULT_MAX_CHARS == 256


@pytest.mark.parametrize("leaf", STRINGS, ids=str)
def test_a_nul_in_any_string_field_is_refused_naming_it(leaf: Leaf) -> None:
    # Given a request with a NUL in this one field
    request, path = build(leaf, "ok\x00then")
    # When / Then: it is refused, naming the field, and nothing else
    refused = refusal(request)
    assert [v.field for v in refused.violations] == [path]
    assert "NUL" in refused.violations[0].description


@pytest.mark.parametrize("leaf", STRINGS, ids=str)
def test_a_string_one_above_its_documented_limit_is_refused_and_at_the_limit_accepted(leaf: Leaf) -> None:
    # Given the limit the field's proto comment states
    limit = field_limits.MAX_CHARS[leaf.field.full_name]
    at_limit, _ = build(leaf, "x" * limit)
    above, path = build(leaf, "x" * (limit + 1))
    # When / Then: the limit itself passes, one more character is refused naming the field
    validate(at_limit)
    assert [v.field for v in refusal(above).violations] == [path]


@pytest.mark.parametrize("leaf", STRINGS, ids=str)
def test_a_huge_field_yields_a_status_that_fits_grpc_trailers_and_quotes_little(leaf: Leaf) -> None:
    # Given a value of 100,000 characters, or more when the field allows that many
    request, _ = build(leaf, "A" * max(100_000, field_limits.MAX_CHARS[leaf.field.full_name] + 1))
    # When the refusal becomes the status sent to the client
    refused = refusal(request)
    status = to_status(refused, domain="test.memloop")
    # Then the status is small (gRPC's hard limit on trailers is 16 KiB) and quotes at most ~64 characters
    assert len(status.SerializeToString()) < 2048
    assert "A" * (QUOTE_CHARS + 1) not in refused.violations[0].description


@pytest.mark.parametrize("leaf", DOUBLES, ids=str)
@pytest.mark.parametrize("value", [math.nan, math.inf, -math.inf])
def test_a_number_that_is_not_finite_is_refused_naming_it(leaf: Leaf, value: float) -> None:
    request, path = build(leaf, value)
    assert [v.field for v in refusal(request).violations] == [path]


@pytest.mark.parametrize("leaf", ENUMS, ids=str)
def test_an_enum_value_the_enum_does_not_define_is_refused_naming_it(leaf: Leaf) -> None:
    request, path = build(leaf, 999)
    assert [v.field for v in refusal(request).violations] == [path]
    defined, _ = build(leaf, max(v.number for v in leaf.field.enum_type.values))  # type: ignore[union-attr]
    validate(defined)


@pytest.mark.parametrize("leaf", _timestamp_leaves(), ids=str)
@pytest.mark.parametrize("seconds", [-62_135_596_801, 253_402_300_800, 2**62])
def test_a_timestamp_outside_the_types_range_is_refused_naming_it(leaf: Leaf, seconds: int) -> None:
    request, path = build(leaf, seconds)
    assert [v.field for v in refusal(request).violations] == [path]


@pytest.mark.parametrize("leaf", _struct_leaves(), ids=str)
@pytest.mark.parametrize(
    ("content", "suffix"),
    [
        ({"cap": math.nan}, "[cap]"),
        ({"deep": {"list": [1, math.inf]}}, "[deep][list][1]"),
        ({"bad\x00key": "v"}, "['bad\\x00key']"),
        ({"text": "a\x00b"}, "[text]"),
        ({"long": "y" * 100_000}, "[long]"),
    ],
)
def test_struct_content_is_checked_to_its_leaves(leaf: Leaf, content: dict[str, Any], suffix: str) -> None:
    request, path = build(leaf, content)
    assert [v.field for v in refusal(request).violations] == [path + suffix]


@pytest.mark.parametrize("leaf", MAPS, ids=str)
def test_map_keys_and_values_are_strings_like_any_other(leaf: Leaf) -> None:
    request, path = build(leaf, "v\x00")
    assert [v.field for v in refusal(request).violations] == [path]


@pytest.mark.parametrize("leaf", TOP_LEVEL_REPEATED, ids=str)
def test_more_items_than_documented_are_refused_naming_the_list(leaf: Leaf) -> None:
    # Given one item more than the field's comment allows
    limit = field_limits.MAX_ITEMS[leaf.field.full_name]
    request = GetMessageClass(leaf.request)()
    target = getattr(request, leaf.field.name)
    for index in range(limit + 1):
        if _is_map(leaf.field):
            target[f"k{index}"] = "1"
        elif leaf.field.message_type is not None:
            target.add()
        elif leaf.field.type == FieldDescriptor.TYPE_STRING:  # a repeated string's default_value is []
            target.append("")
        else:
            target.append(leaf.field.default_value if leaf.field.type != FieldDescriptor.TYPE_ENUM else 0)
    # When / Then
    assert [v.field for v in refusal(request).violations] == [leaf.field.name]


@pytest.mark.parametrize("leaf", PAGES, ids=str)
def test_page_sizes_negative_refused_zero_kept_above_the_maximum_clamped(leaf: Leaf) -> None:
    default, maximum = field_limits.PAGE_SIZES[leaf.field.full_name]
    negative, path = build(leaf, -1)
    assert [v.field for v in refusal(negative).violations] == [path]
    for sent, kept in ((0, 0), (maximum, maximum), (maximum + 1, maximum), (2**31 - 1, maximum)):
        request, _ = build(leaf, sent)
        validate(request)
        clamp_page_sizes(request)
        assert getattr(request, leaf.field.name) == kept
    assert 0 < default <= maximum


@pytest.mark.parametrize("rpc", sorted(request_types()))
def test_an_empty_request_passes_the_structural_layer(rpc: str) -> None:
    # Required fields are each service's business; the edge only refuses what is malformed
    validate(GetMessageClass(request_types()[rpc])())


def test_many_bad_fields_are_reported_but_at_most_ten() -> None:
    request = learned_procedure_service_pb2.BackfillLearnedProceduresRequest(
        tenant="acme", rules=[learned_procedure_service_pb2.LegacyRule(scope="\x00") for _ in range(50)]
    )
    refused = refusal(request)
    assert [v.field for v in refused.violations] == [f"rules[{i}].scope" for i in range(10)]


def _first_violation(make: Callable[[], Message]) -> str:
    return refusal(make()).violations[0].field


def test_the_fuzzing_findings_are_refused_at_the_edge() -> None:
    # ApplyLearning with an event_time past Timestamp's range (was a ValueError → INTERNAL)
    apply = memory_service_pb2.ApplyLearningRequest(tenant="acme", event_id="e", user="u")
    apply.event_time.seconds = 253_402_300_800
    assert _first_violation(lambda: apply) == "event_time"
    # SaveLearnedProcedure with NaN in details (was a Struct serialisation error → INTERNAL)
    save = learned_procedure_service_pb2.SaveLearnedProcedureRequest(tenant="acme", intent_key="k")
    save.details.update({"threshold": math.nan})
    assert _first_violation(lambda: save) == "details[threshold]"
    # A NUL reaching PostgreSQL through ReadContent (was INTERNAL)
    read = serving_service_pb2.ReadContentRequest(tenant="acme", content_ref="cnt_\x00")
    assert _first_violation(lambda: read) == "content_ref"
