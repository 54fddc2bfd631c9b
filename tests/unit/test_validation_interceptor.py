"""The validation interceptor in a real in-process gRPC server: refusals reach the client as
INVALID_ARGUMENT naming the field (never RESOURCE_EXHAUSTED, whatever the input's size), the
servicer never sees a refused request, and page sizes arrive clamped."""

from __future__ import annotations

from collections.abc import Iterator
from concurrent import futures
from typing import Any

import grpc
import pytest

from services.common.gen.memloop.v1 import memory_service_pb2 as pb
from services.common.gen.memloop.v1 import memory_service_pb2_grpc as pb_grpc
from services.common.grpc_errors import error_details
from services.common.validation import ValidationInterceptor


class _Recorder(pb_grpc.MemoryServiceServicer):
    """A servicer that only remembers what reached it."""

    def __init__(self) -> None:
        self.seen: list[Any] = []

    def GetMemory(self, request: pb.GetMemoryRequest, context: grpc.ServicerContext) -> pb.GetMemoryResponse:
        self.seen.append(request)
        return pb.GetMemoryResponse(memory=pb.Memory(memory_id=request.memory_id))

    def ListMemories(self, request: pb.ListMemoriesRequest, context: grpc.ServicerContext) -> pb.ListMemoriesResponse:
        self.seen.append(request)
        return pb.ListMemoriesResponse()


@pytest.fixture
def channel_and_recorder() -> Iterator[tuple[grpc.Channel, _Recorder]]:
    recorder = _Recorder()  # type: ignore[abstract]  # the generated base answers UNIMPLEMENTED for the rest
    server = grpc.server(
        futures.ThreadPoolExecutor(max_workers=2), interceptors=[ValidationInterceptor("memory.memloop")]
    )
    pb_grpc.add_MemoryServiceServicer_to_server(recorder, server)
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    channel = grpc.insecure_channel(f"127.0.0.1:{port}")
    try:
        yield channel, recorder
    finally:
        channel.close()
        server.stop(None)


@pytest.fixture
def served(channel_and_recorder: tuple[grpc.Channel, _Recorder]) -> tuple[pb_grpc.MemoryServiceStub, _Recorder]:
    channel, recorder = channel_and_recorder
    return pb_grpc.MemoryServiceStub(channel), recorder


@pytest.mark.parametrize("value", ["m\x00", "m" * 100_000])
def test_a_refused_request_never_reaches_the_servicer_and_the_client_sees_the_field(
    served: tuple[pb_grpc.MemoryServiceStub, _Recorder], value: str
) -> None:
    stub, recorder = served
    # When a NUL or a 100k-character id is sent
    with pytest.raises(grpc.RpcError) as refused:
        stub.GetMemory(pb.GetMemoryRequest(tenant="acme", memory_id=value), timeout=10)
    # Then the client gets INVALID_ARGUMENT with ErrorInfo and the field, and the servicer saw nothing
    assert refused.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert error_details(refused.value) == ("INVALID_ARGUMENT", ["memory_id"])
    assert len(refused.value.details() or "") < 600
    assert recorder.seen == []


def test_a_valid_request_passes_with_its_page_size_clamped(served: tuple[pb_grpc.MemoryServiceStub, _Recorder]) -> None:
    stub, recorder = served
    # When a valid request asks for more than the documented maximum page
    stub.ListMemories(pb.ListMemoriesRequest(tenant="acme", page_size=100_000), timeout=10)
    stub.GetMemory(pb.GetMemoryRequest(tenant="acme", memory_id="m1"), timeout=10)
    # Then the servicer gets it, clamped to 500 (the proto comment's maximum), and the other untouched
    assert [type(r).__name__ for r in recorder.seen] == ["ListMemoriesRequest", "GetMemoryRequest"]
    assert recorder.seen[0].page_size == 500 and recorder.seen[1].memory_id == "m1"


@pytest.mark.parametrize(
    ("data", "field"),
    [
        (
            pb.GetMemoryRequest(tenant="acme", memory_id="m\u2603")
            .SerializeToString()
            .replace("\u2603".encode(), b"\xff\xfe\xfd"),
            "memory_id",
        ),
        (pb.GetMemoryRequest(tenant="acme", memory_id="m1").SerializeToString()[:-1], "memory_id"),
        (b"\xff\xff\xff", "request"),
    ],
)
def test_bytes_that_do_not_parse_are_invalid_argument_not_internal(
    channel_and_recorder: tuple[grpc.Channel, _Recorder], data: bytes, field: str
) -> None:
    channel, recorder = channel_and_recorder
    raw = channel.unary_unary("/memloop.v1.MemoryService/GetMemory", None, None)  # bytes in, bytes out
    # When the bytes on the wire are not a GetMemoryRequest (bad UTF-8, cut short, noise)
    with pytest.raises(grpc.RpcError) as refused:
        raw(data, timeout=10)
    # Then gRPC's INTERNAL ("Exception deserializing request!") is replaced by INVALID_ARGUMENT naming the field
    assert refused.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert error_details(refused.value) == ("INVALID_ARGUMENT", [field])
    assert recorder.seen == []
