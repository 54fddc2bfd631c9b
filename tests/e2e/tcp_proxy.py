"""A TCP proxy in front of one service whose answers a test can hold back, to lose a response.

`hold()` drops every byte the service sends from then on (the call has reached the service and may
commit, the caller hears nothing); when the service dies its connections close, and the caller
sees the connection drop, as it would when a server crashes after committing. `release()` lets
new connections through unharmed.
"""

from __future__ import annotations

import contextlib
import socket
import threading

from services.common.infra.processes import free_port


class HoldingProxy:
    def __init__(self, upstream_port: int) -> None:
        self._upstream = ("127.0.0.1", upstream_port)
        self.port = free_port()
        self._holding = threading.Event()
        self._listener = socket.create_server(("127.0.0.1", self.port))
        self._closed = False
        threading.Thread(target=self._accept, name="proxy-accept", daemon=True).start()

    @property
    def target(self) -> str:
        return f"127.0.0.1:{self.port}"

    def hold(self) -> None:
        self._holding.set()

    def release(self) -> None:
        self._holding.clear()

    def close(self) -> None:
        self._closed = True
        with contextlib.suppress(OSError):
            self._listener.close()

    def _accept(self) -> None:
        while not self._closed:
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            try:
                upstream = socket.create_connection(self._upstream, timeout=5)
            except OSError:
                client.close()  # the service is down: the caller sees the connection refused
                continue
            upstream.settimeout(None)
            for source, sink, holdable in ((client, upstream, False), (upstream, client, True)):
                threading.Thread(target=self._pump, args=(source, sink, holdable), daemon=True).start()

    def _pump(self, source: socket.socket, sink: socket.socket, holdable: bool) -> None:
        try:
            while data := source.recv(65536):
                if holdable and self._holding.is_set():
                    continue
                sink.sendall(data)
        except OSError:
            pass
        finally:
            for end in (source, sink):
                with contextlib.suppress(OSError):
                    end.shutdown(socket.SHUT_RDWR)
                with contextlib.suppress(OSError):
                    end.close()
