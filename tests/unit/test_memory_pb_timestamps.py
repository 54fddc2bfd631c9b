"""Memory's datetime → Timestamp mapping gives what protobuf's own FromDatetime gives."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest
from google.protobuf.timestamp_pb2 import Timestamp

from services.memory.core.entrypoints.pb_mapping import timestamp


@pytest.mark.parametrize(
    "value",
    [
        datetime(2026, 12, 2, 10, 43, 55, 946829, tzinfo=UTC),
        datetime(2026, 12, 2, 10, 43, 55, 946829, tzinfo=timezone(timedelta(hours=-5, minutes=-30))),
        datetime(2026, 12, 2, 10, 43, 55, 946829),  # naive: UTC, as FromDatetime reads it
        datetime(1969, 12, 31, 23, 59, 59, 500000, tzinfo=UTC),  # before the epoch: floor seconds, positive nanos
        datetime(1, 1, 1, tzinfo=UTC),
        datetime(9999, 12, 31, 23, 59, 59, 999999, tzinfo=UTC),
    ],
)
def test_a_timestamp_is_what_from_datetime_makes(value: datetime) -> None:
    expected = Timestamp()
    expected.FromDatetime(value)
    assert timestamp(value) == expected


def test_no_datetime_is_no_timestamp() -> None:
    assert timestamp(None) is None
