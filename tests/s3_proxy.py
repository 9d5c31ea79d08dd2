"""A small HTTP proxy in front of a test's own S3 server that can be switched to refuse writes.

moto keeps its buckets in memory, so stopping it to make the store refuse writes would also lose
every blob written before. The proxy stands in front instead: it forwards every request as it came
(headers, signature and body untouched) and, while ``refusing`` is set, answers each PUT with
``503 ServiceUnavailable`` (``mode="503"``) or resets its connection (``mode="reset"``) without
forwarding it. Reads (GET/HEAD/list) always pass. It also remembers the ``Authorization`` headers
it saw, so a test can tell which access key and region a client signed with.
"""

from __future__ import annotations

import http.client
import socket
import struct
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Literal

REFUSED_BODY = (
    b'<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>ServiceUnavailable</Code>'
    b"<Message>writes refused by the test proxy</Message></Error>"
)
NOT_IMPLEMENTED_BODY = (
    b'<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>NotImplemented</Code>'
    b"<Message>A header you provided implies functionality that is not implemented</Message></Error>"
)
HOP_BY_HOP = {"connection", "keep-alive", "transfer-encoding", "proxy-connection"}


class WriteRefusingProxy:
    """``url`` forwards to ``upstream`` (``http://127.0.0.1:PORT``) until told to refuse PUTs."""

    def __init__(self, upstream_port: int) -> None:
        self.upstream_port = upstream_port
        self.refusing = False
        self.mode: Literal["503", "reset"] = "503"
        self.refused = 0
        self.authorizations: list[str] = []
        # answer a conditional PUT (If-None-Match) 501 NotImplemented, as an S3-compatible server
        # without conditional writes does; other requests pass
        self.no_conditional_writes = False
        self.methods: list[str] = []  # every request's method, in order
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _handler_for(self))
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    @contextmanager
    def refusing_writes(self, mode: Literal["503", "reset"] = "503") -> Iterator[None]:
        """Every PUT inside is refused; reads still pass."""
        self.mode, self.refusing = mode, True
        try:
            yield
        finally:
            self.refusing = False

    def count_refusal(self) -> None:
        with self._lock:
            self.refused += 1


def _handler_for(proxy: WriteRefusingProxy) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - the base's name
            pass

        def _body(self) -> bytes:
            """The request body as it came, chunked framing included."""
            if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
                raw = bytearray()
                while True:
                    size_line = self.rfile.readline()
                    raw += size_line
                    size = int(size_line.split(b";")[0].strip() or b"0", 16)
                    if size == 0:
                        while (line := self.rfile.readline()) not in (b"\r\n", b"\n", b""):
                            raw += line  # trailers
                        return bytes(raw + b"\r\n")
                    raw += self.rfile.read(size + 2)
            return self.rfile.read(int(self.headers.get("Content-Length", 0) or 0))

        def _refuse(self) -> None:
            proxy.count_refusal()
            if proxy.mode == "reset":
                # SO_LINGER 0: close sends RST, the client sees "connection reset by peer"
                self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                self.close_connection = True
                return
            self.send_response(503, "Service Unavailable")
            self.send_header("Content-Type", "application/xml")
            self.send_header("Content-Length", str(len(REFUSED_BODY)))
            self.send_header("Retry-After", "1")
            self.end_headers()
            self.wfile.write(REFUSED_BODY)

        def _not_implemented(self) -> None:
            self.send_response(501, "Not Implemented")
            self.send_header("Content-Type", "application/xml")
            self.send_header("Content-Length", str(len(NOT_IMPLEMENTED_BODY)))
            self.end_headers()
            self.wfile.write(NOT_IMPLEMENTED_BODY)

        def _forward(self) -> None:
            body = self._body()
            proxy.authorizations.append(self.headers.get("Authorization", ""))
            proxy.methods.append(self.command)
            if self.command == "PUT" and proxy.refusing:
                self._refuse()
                return
            if self.command == "PUT" and proxy.no_conditional_writes and "If-None-Match" in self.headers:
                self._not_implemented()
                return
            upstream = http.client.HTTPConnection("127.0.0.1", proxy.upstream_port, timeout=30)
            try:
                upstream.putrequest(self.command, self.path, skip_host=True, skip_accept_encoding=True)
                for name, value in self.headers.items():
                    upstream.putheader(name, value)
                upstream.endheaders(body if body else None)
                response = upstream.getresponse()
                payload = response.read()
            finally:
                upstream.close()
            self.send_response(response.status, response.reason)
            for name, value in response.getheaders():
                if name.lower() not in HOP_BY_HOP and name.lower() != "content-length":
                    self.send_header(name, value)
            length = response.getheader("Content-Length") if self.command == "HEAD" else None
            self.send_header("Content-Length", length or str(len(payload)))
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(payload)

        do_GET = do_PUT = do_POST = do_HEAD = do_DELETE = _forward

    return Handler
