"""A TCP relay on 127.0.0.1 in front of a real server, which can freeze: it then passes no byte
either way and answers no new connection, while the kernel still accepts and acknowledges, as
a server whose process stopped (SIGSTOP, a paused VM) or a firewall that drops packets looks
to a client. Thawed, it relays again."""

from __future__ import annotations

import selectors
import socket
import threading
from types import TracebackType

from tests.ports import free_port


class Relay:
    def __init__(self, port: int) -> None:
        self.target = port
        self.port = free_port()
        self.frozen = threading.Event()
        self._closed = threading.Event()
        self._listener = socket.create_server(("127.0.0.1", self.port))
        self._listener.settimeout(0.1)
        self._threads = [threading.Thread(target=self._accept, daemon=True)]
        self._threads[0].start()

    def _accept(self) -> None:
        while not self._closed.is_set():
            try:
                client, _ = self._listener.accept()
            except TimeoutError:
                continue
            except OSError:  # the listener closed under it
                return
            while self.frozen.is_set() and not self._closed.is_set():
                self._closed.wait(0.05)  # accepted by the kernel, answered by nobody
            try:
                upstream = socket.create_connection(("127.0.0.1", self.target))
            except OSError:  # the server is down: the client sees its connection closed
                client.close()
                continue
            relay = threading.Thread(target=self._pass, args=(client, upstream), daemon=True)
            relay.start()

    def _pass(self, client: socket.socket, upstream: socket.socket) -> None:
        with client, upstream, selectors.DefaultSelector() as sel:
            sel.register(client, selectors.EVENT_READ, upstream)
            sel.register(upstream, selectors.EVENT_READ, client)
            while not self._closed.is_set():
                if self.frozen.is_set():
                    self._closed.wait(0.05)
                    continue
                try:
                    for key, _ in sel.select(0.05):
                        source: socket.socket = key.fileobj  # type: ignore[assignment]
                        data = source.recv(65536)
                        if not data:
                            return
                        key.data.sendall(data)
                except OSError:  # either side reset: the relay of this connection ends
                    return

    def close(self) -> None:
        self._closed.set()
        self._threads[0].join(5)  # its accept waits 0.1 s at most
        self._listener.close()

    def __enter__(self) -> Relay:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        value: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()
