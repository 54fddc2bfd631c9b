"""The demo's Alice fixture, shipped as package data, and its requests turned into serving calls.

The demo must run from an installed package with nothing beside it, so it reads `services/cli/data/`;
tests and benchmarks read the same scenario from `tests/fixtures/` (a test keeps the copies equal).
"""

from __future__ import annotations

import json
from importlib import resources
from typing import Any

from services.common.gen.memloop.v1 import learning_event_pb2, serving_service_pb2


def load_fixture(name: str) -> dict[str, Any]:
    """A scenario shipped with the package (today: `alice.json`)."""
    resource = resources.files("services.cli").joinpath("data", name)
    data: dict[str, Any] = json.loads(resource.read_text(encoding="utf-8"))
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
        sender_authentication=learning_event_pb2.SenderAuthentication(
            authentication_results=request.get("authentication_results", "")
        ),
    )
