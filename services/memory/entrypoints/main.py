"""`python -m services.memory.entrypoints.main`: migrate, load indexes, join NATS, serve until SIGTERM."""

from __future__ import annotations

from services.common import telemetry
from services.common.gen.memloop.v1 import (
    consolidation_service_pb2,
    consolidation_service_pb2_grpc,
    learned_procedure_service_pb2,
    learned_procedure_service_pb2_grpc,
    memory_service_pb2,
    memory_service_pb2_grpc,
)
from services.common.grpc_server import Registration, full_service_name, serve_until_signalled
from services.memory.bootstrap import bootstrap
from services.memory.settings import MemorySettings


def main() -> None:
    settings = MemorySettings.from_env()
    telemetry.configure(settings.common)
    app = bootstrap(settings)
    app.start()
    registration = Registration(
        memory_service_pb2_grpc.add_MemoryServiceServicer_to_server,
        app.servicer,
        full_service_name(memory_service_pb2, "MemoryService"),
    )
    procedures = Registration(
        learned_procedure_service_pb2_grpc.add_LearnedProcedureServiceServicer_to_server,
        app.procedures,
        full_service_name(learned_procedure_service_pb2, "LearnedProcedureService"),
    )
    consolidation = Registration(
        consolidation_service_pb2_grpc.add_ConsolidationServiceServicer_to_server,
        app.consolidation.servicer,
        full_service_name(consolidation_service_pb2, "ConsolidationService"),
    )
    app.consolidation.start_scheduler()  # sleep-time consolidation, off the request path (issue 8)

    def stop() -> None:
        app.consolidation.stop_scheduler()
        app.stop()

    serve_until_signalled(settings.common, [registration, procedures, consolidation], on_stop=stop)


if __name__ == "__main__":
    main()
