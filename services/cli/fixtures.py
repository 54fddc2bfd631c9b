"""Load the shared Alice fixture and turn its requests into serving calls."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from services.common.gen.memloop.v1 import learning_event_pb2, serving_service_pb2


def shared_dir() -> Path:
    """`../shared` beside the checkout, or MEMLOOP_SHARED_DIR."""
    configured = os.environ.get("MEMLOOP_SHARED_DIR")
    if configured:
        return Path(configured)
    return Path(__file__).resolve().parents[3] / "shared"


def load_fixture(name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((shared_dir() / "fixtures" / name).read_text())
    return data


def handle_request_from_fixture(
    fixture: dict[str, Any], request: dict[str, Any], *, request_id: str | None = None, tenant: str | None = None
) -> serving_service_pb2.HandleRequestRequest:
    content = request["content"]
    return serving_service_pb2.HandleRequestRequest(
        request_id=request_id or request["request_id"],
        tenant=tenant or fixture["tenant"],
        user=fixture["user"],
        thread=request["thread"],
        route=request["route"],
        procedure_versions=request["procedure_versions"],
        tool_outcomes=[
            learning_event_pb2.ToolOutcome(tool=t["tool"], status=t["status"], ref=t["ref"], summary=t["summary"])
            for t in request["tool_outcomes"]
        ],
        content=serving_service_pb2.EmailContent(
            from_address=content["from"], to_address=content["to"], subject=content["subject"], body=content["body"]
        ),
        reply=request["reply"],
        owner_address=fixture["owner_address"],
    )
