from __future__ import annotations

import pytest
from google.rpc import code_pb2, error_details_pb2

from services.common.errors import InvalidArgument, NotFound, validate_page_size
from services.common.grpc_errors import to_status


def test_invalid_argument_names_the_field_in_a_bad_request_detail() -> None:
    status = to_status(InvalidArgument("content.body", "must be at most 262144 bytes"), domain="serving.memloop")
    assert status.code == code_pb2.INVALID_ARGUMENT
    info, bad = error_details_pb2.ErrorInfo(), error_details_pb2.BadRequest()
    status.details[0].Unpack(info)
    status.details[1].Unpack(bad)
    assert (info.reason, info.domain) == ("INVALID_ARGUMENT", "serving.memloop")
    assert [v.field for v in bad.field_violations] == ["content.body"]


def test_a_domain_error_keeps_its_own_reason() -> None:
    status = to_status(NotFound("no such memory", reason="MEMORY_NOT_FOUND"), domain="memory.memloop")
    info = error_details_pb2.ErrorInfo()
    status.details[0].Unpack(info)
    assert status.code == code_pb2.NOT_FOUND and info.reason == "MEMORY_NOT_FOUND"


@pytest.mark.parametrize(("given", "expected"), [(0, 50), (10, 10), (500, 500), (10_000, 500)])
def test_page_size_defaults_and_clamps(given: int, expected: int) -> None:
    assert validate_page_size(given, default=50, maximum=500) == expected


def test_negative_page_size_is_invalid() -> None:
    with pytest.raises(InvalidArgument) as caught:
        validate_page_size(-1, default=50, maximum=500)
    assert caught.value.violations[0].field == "page_size"


class _Context:
    """Just enough of grpc.ServicerContext to observe what a servicer aborted with."""

    def __init__(self) -> None:
        self.status: object = None

    def abort_with_status(self, status: object) -> None:
        self.status = status
        raise Exception()  # what grpc raises from abort, caught by the test


def test_a_lost_database_connection_is_unavailable_not_internal() -> None:
    # Given a servicer whose database is restarting (the connection is refused mid-call)
    import grpc
    from sqlalchemy.exc import OperationalError

    from services.common.grpc_errors import grpc_method

    class Servicer:
        @grpc_method("test.memloop")
        def Call(self, request: object, context: object) -> None:
            raise OperationalError("SELECT 1", {}, ConnectionRefusedError("connection refused"))

    context = _Context()
    # When it is called
    with pytest.raises(Exception):  # noqa: B017 - grpc's abort raises a bare Exception
        Servicer().Call(None, context)
    # Then the caller is told to retry (UNAVAILABLE, DATABASE_UNAVAILABLE), not that memloop has a bug
    assert context.status is not None
    assert context.status.code == grpc.StatusCode.UNAVAILABLE  # type: ignore[attr-defined]
    assert "DATABASE_UNAVAILABLE" in str(context.status.trailing_metadata)  # type: ignore[attr-defined]


def test_a_database_error_s_log_line_names_its_sqlstate_and_first_line(caplog: pytest.LogCaptureFixture) -> None:
    # Given a servicer whose statement met a server-side system error (a file PostgreSQL could not open)
    import psycopg
    from sqlalchemy.exc import OperationalError

    from services.common.grpc_errors import grpc_method

    server_error = psycopg.errors.UndefinedFile('could not open file "base/16384/2619": No such file\nDETAIL: more')

    class Servicer:
        @grpc_method("test.memloop")
        def Call(self, request: object, context: object) -> None:
            raise OperationalError("SELECT 1", {}, server_error)

    # When it is called
    with caplog.at_level("WARNING"), pytest.raises(Exception):  # noqa: B017 - grpc's abort raises a bare Exception
        Servicer().Call(None, _Context())
    # Then the one log line says which error, its SQLSTATE and the server's first line, for the next diagnosis
    line = caplog.records[-1].getMessage()
    assert 'UndefinedFile 58P01: could not open file "base/16384/2619": No such file' in line
    assert "DETAIL" not in line
