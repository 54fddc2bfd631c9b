"""The client speaks a declared contract, and a proto change that would break it fails here.

The client carries its own stubs and the FileDescriptorSet they came from (`contract.binpb`,
named by `CONTRACT_VERSION`). protos/ is compiled afresh and compared with that set under
breaking-change rules; a second test keeps the vendored copy exactly what `make protos` writes.
"""

from __future__ import annotations

import filecmp
import re
import subprocess
import sys
from pathlib import Path

import pytest
from google.protobuf import descriptor_pb2
from grpc_tools import protoc  # type: ignore[import-untyped]  # grpcio-tools ships no type hints

from tests.contract_rules import breaking_changes

ROOT = Path(__file__).resolve().parents[2]
CLIENT_GEN = ROOT / "clients" / "python" / "src" / "memloop_client" / "_gen"


def _vendored() -> descriptor_pb2.FileDescriptorSet:
    return descriptor_pb2.FileDescriptorSet.FromString((CLIENT_GEN / "contract.binpb").read_bytes())


def _compiled(tmp_path: Path) -> descriptor_pb2.FileDescriptorSet:
    out = tmp_path / "current.binpb"
    protos = sorted(str(p.relative_to(ROOT / "protos")) for p in (ROOT / "protos" / "memloop" / "v1").glob("*.proto"))
    include = Path(protoc.__file__).parent / "_proto"
    assert protoc.main(["protoc", f"-I{ROOT / 'protos'}", f"-I{include}", f"--descriptor_set_out={out}", *protos]) == 0
    return descriptor_pb2.FileDescriptorSet.FromString(out.read_bytes())


def _message(fds: descriptor_pb2.FileDescriptorSet, name: str) -> descriptor_pb2.DescriptorProto:
    return next(m for f in fds.file for m in f.message_type if m.name == name)


def test_protos_today_do_not_break_the_client_contract(tmp_path: Path) -> None:
    # Given the contract the client was generated from, and protos/ compiled now
    vendored, current = _vendored(), _compiled(tmp_path)
    # Then nothing the client relies on was removed or changed
    assert breaking_changes(vendored, current) == []


def test_the_declared_contract_version_is_the_digest_of_the_vendored_descriptors() -> None:
    import hashlib

    from memloop_client import CONTRACT_VERSION

    digest = hashlib.sha256((CLIENT_GEN / "contract.binpb").read_bytes()).hexdigest()[:16]
    assert f"memloop.v1@{digest}" == CONTRACT_VERSION


def _break(kind: str, fds: descriptor_pb2.FileDescriptorSet) -> None:
    request = _message(fds, "HandleRequestRequest")
    if kind == "field deleted":
        del request.field[0]
    elif kind == "field renamed":
        request.field[0].name = "idempotency_key"
    elif kind == "field type changed":
        request.field[0].type = descriptor_pb2.FieldDescriptorProto.TYPE_BYTES
    elif kind == "field renumbered":
        request.field[0].number = 99
    elif kind == "cardinality changed":
        request.field[0].label = descriptor_pb2.FieldDescriptorProto.LABEL_REPEATED
    elif kind == "rpc deleted":
        service = next(s for f in fds.file for s in f.service if s.name == "MemoryService")
        del service.method[-1]
    elif kind == "rpc input changed":
        service = next(s for f in fds.file for s in f.service if s.name == "ServingService")
        service.method[0].input_type = ".memloop.v1.ReadContentRequest"
    elif kind == "enum value deleted":
        enum = next(e for f in fds.file for e in f.enum_type if e.name == "MemoryType")
        del enum.value[-1]
    elif kind == "message deleted":
        file = next(f for f in fds.file if any(m.name == "GetContextResponse" for m in f.message_type))
        index = next(i for i, m in enumerate(file.message_type) if m.name == "GetContextResponse")
        del file.message_type[index]


@pytest.mark.parametrize(
    "kind",
    [
        "field deleted",
        "field renamed",
        "field type changed",
        "field renumbered",
        "cardinality changed",
        "rpc deleted",
        "rpc input changed",
        "enum value deleted",
        "message deleted",
    ],
)
def test_a_breaking_proto_change_is_caught(kind: str) -> None:
    # Given the client's contract and a copy with one breaking change
    old, new = _vendored(), _vendored()
    _break(kind, new)
    # Then the rules report it
    assert breaking_changes(old, new) != []


def test_additions_are_compatible() -> None:
    # Given a new field, a new enum value and a new message
    old, new = _vendored(), _vendored()
    _message(new, "HandleRequestRequest").field.add(
        name="new_field", number=99, type=descriptor_pb2.FieldDescriptorProto.TYPE_STRING
    )
    next(e for f in new.file for e in f.enum_type if e.name == "MemoryType").value.add(
        name="MEMORY_TYPE_NEW", number=99
    )
    new.file[0].message_type.add(name="Brand")
    # Then nothing breaks
    assert breaking_changes(old, new) == []


def _tree(root: Path) -> dict[str, Path]:
    return {str(p.relative_to(root)): p for p in root.rglob("*") if p.is_file() and "__pycache__" not in p.parts}


def test_vendored_client_stubs_match_a_fresh_generation(tmp_path: Path) -> None:
    # Given a fresh generation of the client's stubs from protos/
    subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "gen_client_protos.py"), "--out", str(tmp_path)],
        check=True,
        capture_output=True,
    )
    # Then the committed copy is byte for byte the same (run `make protos` after a proto change)
    fresh, committed = _tree(tmp_path), _tree(CLIENT_GEN)
    assert sorted(fresh) == sorted(committed)
    stale = [name for name in fresh if not filecmp.cmp(fresh[name], committed[name], shallow=False)]
    assert stale == [], f"stale client stubs, run `make protos`: {stale}"


def test_the_client_imports_nothing_from_the_services() -> None:
    # Given every module and stub of the client package
    source = ROOT / "clients" / "python" / "src"
    importing = re.compile(r"^\s*(from|import)\s+services\b", re.MULTILINE)
    # Then none imports the services package (the fresh-venv e2e test proves it at run time)
    assert [str(p.relative_to(source)) for p in source.rglob("*.py*") if importing.search(p.read_text())] == []
