"""A stand-in service process for the bootstrap tests: the real `services.common.app.run` (auth,
health, reflection, interceptors, SIGTERM drain) around a ServingService whose HandleRequest
takes a known time. It exercises services/common, not serving's logic."""

from __future__ import annotations

import os
import time
from pathlib import Path

import grpc

from services.common.app import App, run
from services.common.auth import authorize_tenant
from services.common.errors import InvalidArgument
from services.common.gen.memloop.v1 import serving_service_pb2, serving_service_pb2_grpc
from services.common.grpc_errors import grpc_method
from services.common.grpc_server import Registration, full_service_name
from services.common.settings import CommonSettings


class SlowServing(serving_service_pb2_grpc.ServingServiceServicer):
    @grpc_method("standin.memloop")
    def HandleRequest(
        self, request: serving_service_pb2.HandleRequestRequest, context: grpc.ServicerContext
    ) -> serving_service_pb2.HandleRequestResponse:
        authorize_tenant(request.tenant)
        if not request.request_id:
            raise InvalidArgument("request_id", "is required")
        started = os.environ.get("STANDIN_STARTED_DIR")
        if started:  # an observable fact for tests: this call is now in flight on the server
            (Path(started) / request.request_id).touch()
        time.sleep(float(os.environ.get("STANDIN_DELAY_SECONDS", "2")))
        return serving_service_pb2.HandleRequestResponse(result_id="done", reply=request.reply)


if __name__ == "__main__":
    settings = CommonSettings.from_env("standin")
    servicer = Registration(
        serving_service_pb2_grpc.add_ServingServiceServicer_to_server,
        SlowServing(),  # type: ignore[abstract]  # the generated base answers UNIMPLEMENTED for the rest
        full_service_name(serving_service_pb2, "ServingService"),
    )
    run(App(settings, servicers=[servicer]))
