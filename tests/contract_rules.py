"""Which proto changes break a client generated from an older version of the contracts.

A subset of buf's breaking rules (WIRE_JSON plus names, since generated Python code addresses
fields, enum values and methods by name): nothing the old contract declares may disappear or
change meaning. Adding messages, fields, enum values, methods or services is compatible.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from google.protobuf import descriptor_pb2

Fdp = descriptor_pb2.FieldDescriptorProto


def breaking_changes(old: descriptor_pb2.FileDescriptorSet, new: descriptor_pb2.FileDescriptorSet) -> list[str]:
    """Every way `new` breaks a client of `old`, one line each (empty: compatible)."""
    new_messages, new_enums, new_services = _index(new)
    problems: list[str] = []
    old_messages, old_enums, old_services = _index(old)
    for name, message in old_messages.items():
        if name not in new_messages:
            problems.append(f"message {name} deleted")
        else:
            problems += _fields(name, message, new_messages[name])
    for name, enum in old_enums.items():
        if name not in new_enums:
            problems.append(f"enum {name} deleted")
            continue
        now = {v.number: v.name for v in new_enums[name].value}
        for value in enum.value:
            if value.number not in now:
                problems.append(f"enum value {name}.{value.name} = {value.number} deleted")
            elif now[value.number] != value.name:
                problems.append(f"enum value {name} {value.number} renamed {value.name} -> {now[value.number]}")
    for name, service in old_services.items():
        if name not in new_services:
            problems.append(f"service {name} deleted")
            continue
        methods = {m.name: m for m in new_services[name].method}
        for method in service.method:
            current = methods.get(method.name)
            if current is None:
                problems.append(f"rpc {name}.{method.name} deleted")
                continue
            for attribute in ("input_type", "output_type", "client_streaming", "server_streaming"):
                if getattr(method, attribute) != getattr(current, attribute):
                    was, now_ = getattr(method, attribute), getattr(current, attribute)
                    problems.append(f"rpc {name}.{method.name} {attribute} changed {was} -> {now_}")
    return problems


def _fields(name: str, old: descriptor_pb2.DescriptorProto, new: descriptor_pb2.DescriptorProto) -> list[str]:
    problems = []
    now = {f.number: f for f in new.field}
    for field in old.field:
        current = now.get(field.number)
        where = f"field {name}.{field.name} = {field.number}"
        if current is None:
            problems.append(f"{where} deleted")
            continue
        if current.name != field.name:
            problems.append(f"{where} renamed to {current.name}")
        if (current.type, current.type_name) != (field.type, field.type_name):
            was = field.type_name or Fdp.Type.Name(field.type)
            problems.append(f"{where} type changed {was} -> {current.type_name or Fdp.Type.Name(current.type)}")
        if current.label != field.label:
            problems.append(f"{where} cardinality changed")
        if _oneof(old, field) != _oneof(new, current):
            problems.append(f"{where} moved between oneofs")
    return problems


def _oneof(message: descriptor_pb2.DescriptorProto, field: descriptor_pb2.FieldDescriptorProto) -> str:
    if not field.HasField("oneof_index") or field.proto3_optional:
        return ""
    return message.oneof_decl[field.oneof_index].name


def _index(
    fds: descriptor_pb2.FileDescriptorSet,
) -> tuple[
    dict[str, descriptor_pb2.DescriptorProto],
    dict[str, descriptor_pb2.EnumDescriptorProto],
    dict[str, descriptor_pb2.ServiceDescriptorProto],
]:
    messages: dict[str, descriptor_pb2.DescriptorProto] = {}
    enums: dict[str, descriptor_pb2.EnumDescriptorProto] = {}
    services: dict[str, descriptor_pb2.ServiceDescriptorProto] = {}
    for file in fds.file:
        prefix = f".{file.package}" if file.package else ""
        for enum in file.enum_type:
            enums[f"{prefix}.{enum.name}"] = enum
        for message, full in _messages(prefix, file.message_type):
            messages[full] = message
            for enum in message.enum_type:
                enums[f"{full}.{enum.name}"] = enum
        for service in file.service:
            services[f"{prefix}.{service.name}"] = service
    return messages, enums, services


def _messages(
    prefix: str, messages: Iterable[descriptor_pb2.DescriptorProto]
) -> Iterator[tuple[descriptor_pb2.DescriptorProto, str]]:
    for message in messages:
        full = f"{prefix}.{message.name}"
        yield message, full
        yield from _messages(full, list(message.nested_type))
