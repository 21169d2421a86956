"""The S3 fault front: an HTTP proxy on loopback between a sink and the S3 server that names
each request's S3 operation and, by rule, fails it, delays it, hangs it until released, answers
it with an error inside a 200, or applies it and drops the response; it resets a connection mid-
request or mid-answer (a TCP RST) or stalls an answer mid-body, and sets up the state an error
implies (the request applied before a 412, the upload aborted before a NoSuchUpload). It records
every exchange and, per rule, whether and when it fired.

    with S3FaultFront(moto.endpoint, run_dir) as front:
        sink_endpoint = front.endpoint
        rid = front.add_rule(FaultRule("CompleteMultipartUpload", "hang", key="topics/t/*"))
        front.wait_fired(rid, 30)      # bounded
        front.release(rid)             # the hung Complete goes on to S3
        front.events()                 # one FaultEvent("s3", ...) per rule, fired or not

Bodies are streamed through as received (Content-Length or chunked framing untouched, headers
kept, Host included, so SigV4 signatures stay valid); a request that is delayed or hung is
received whole first (spooled to a temporary file past 8 MiB), as a server that has the request
and does not answer. Path-style addressing only (`/bucket/key`).
"""
from __future__ import annotations

import dataclasses
import http.client
import json
import socket
import struct
import tempfile
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, BinaryIO
from xml.sax.saxutils import escape

from adapters.s3.rules import (ACTIONS, ERROR_CODES, S3_MESSAGES, FaultRule, FaultRules, S3Exchange,
    S3Request, _Dropped, _now_ms, classify)

LOOPBACK = "127.0.0.1"
# what a rule is and how it picks requests: adapters.s3.rules (re-exported here for callers)
__all__ = ["ACTIONS", "ERROR_CODES", "S3_MESSAGES", "FaultRule", "FaultRules", "S3Exchange", "S3FaultFront",
           "S3Request", "classify"]

_HOP_BY_HOP = {"connection", "keep-alive", "proxy-connection", "proxy-authenticate",
               "proxy-authorization", "te", "trailer", "upgrade", "expect"}
_CHUNK = 1 << 20
_SPOOL_MAX = 8 << 20


class S3FaultFront(FaultRules):
    """An S3-aware fault-injecting HTTP proxy on a free loopback port in front of `upstream`."""

    def __init__(self, upstream: str, run_dir: str | Path | None = None, *,
                 upstream_timeout_s: float = 60.0, max_hang_s: float = 600.0,
                 stop_grace_s: float = 5.0, idle_timeout_s: float = 300.0):
        u = urllib.parse.urlsplit(upstream)
        if u.scheme not in ("http", "") or not u.hostname:
            raise ValueError(f"upstream must be http://host:port, got {upstream!r}")
        self.upstream = upstream
        self.upstream_host, self.upstream_port = u.hostname, u.port or 80
        self.run_dir = Path(run_dir) if run_dir else None
        self.upstream_timeout_s = upstream_timeout_s
        self.max_hang_s = max_hang_s
        self.stop_grace_s = stop_grace_s
        self.idle_timeout_s = idle_timeout_s
        super().__init__()
        self._log: list[S3Exchange] = []
        self._log_file: Any = None
        self._handlers: dict[int, tuple[socket.socket, threading.Thread]] = {}
        self._busy = 0
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None
        self.port: int | None = None
        self.endpoint = ""

    # --- lifecycle -------------------------------------------------------------------------
    def start(self) -> "S3FaultFront":
        if self._server is not None:
            return self
        front = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            timeout = self.idle_timeout_s  # an idle keep-alive connection is closed after this

            def setup(self) -> None:
                super().setup()
                front._register(self)

            def finish(self) -> None:
                try:
                    super().finish()
                finally:
                    front._unregister(self)

            def log_message(self, *a: object) -> None:  # quiet; the exchange log says it all
                pass

            def _serve(self) -> None:
                front._handle(self)

            do_GET = do_PUT = do_POST = do_DELETE = do_HEAD = do_OPTIONS = do_PATCH = _serve

        class Server(ThreadingHTTPServer):
            daemon_threads = True  # joined by stop(), bounded
            allow_reuse_address = False

            def handle_error(self, request: Any, client_address: Any) -> None:
                pass  # a client that went away mid-request is no news

        if self.run_dir is not None:
            self.run_dir.mkdir(parents=True, exist_ok=True)
            self._log_file = open(self.run_dir / "requests.jsonl", "a", encoding="utf-8")
        self._stopping = False
        self._server = Server((LOOPBACK, 0), Handler)
        self.port = self._server.server_address[1]
        self.endpoint = f"http://{LOOPBACK}:{self.port}"
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.1},
                                        name=f"s3front:{self.port}", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        """Let hung requests go on (forwarded upstream), wait up to `stop_grace_s` for requests in
        flight, close every client connection and the listening port, join the threads."""
        with self._lock:
            self._stopping = True
            for st in self._rules.values():
                if st.rule.action == "hang":
                    st.retired = True
                for f in st.firings:
                    f.released.set()
            self._changed.notify_all()
        server, self._server = self._server, None
        if server is not None:
            server.shutdown()
            server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None
        deadline = time.monotonic() + self.stop_grace_s
        with self._changed:
            while self._busy and time.monotonic() < deadline:
                self._changed.wait(max(0.0, deadline - time.monotonic()))
            handlers = list(self._handlers.values())
        for sock, _ in handlers:  # wakes idle keep-alive readers; cuts what is still in flight
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
        for _, t in handlers:
            if t is not threading.current_thread():
                t.join(timeout=max(0.1, deadline + 2 - time.monotonic()))
        if self._log_file is not None:
            with self._lock:
                try:
                    self._log_file.close()
                finally:
                    self._log_file = None
            if self.run_dir is not None:
                (self.run_dir / "events.json").write_text(
                    json.dumps([dataclasses.asdict(e) for e in self.events()], indent=1, default=str))

    def __enter__(self) -> "S3FaultFront":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def threads(self) -> list[threading.Thread]:
        """The front's live threads (accept loop and connection handlers); empty after stop()."""
        with self._lock:
            ts = [t for _, t in self._handlers.values()]
        if self._thread is not None:
            ts.append(self._thread)
        return [t for t in ts if t.is_alive()]

    def _register(self, h: BaseHTTPRequestHandler) -> None:
        with self._lock:
            self._handlers[id(h)] = (h.connection, threading.current_thread())

    def _unregister(self, h: BaseHTTPRequestHandler) -> None:
        with self._lock:
            self._handlers.pop(id(h), None)

    def requests(self) -> list[tuple[int, S3Request, int]]:
        """(arrival ms, request, status the client got; 0 = no answer) for every proxied request."""
        with self._lock:
            return [(x.at_ms, x.request, x.status) for x in self._log]

    def exchanges(self) -> list[S3Exchange]:
        with self._lock:
            return list(self._log)

    # --- proxying --------------------------------------------------------------------------
    def _record(self, x: S3Exchange) -> None:
        with self._lock:
            self._log.append(x)
            if self._log_file is not None:
                try:
                    self._log_file.write(json.dumps(x.to_json()) + "\n")
                    self._log_file.flush()
                except (OSError, ValueError):
                    pass

    def _handle(self, h: BaseHTTPRequestHandler) -> None:
        at = _now_ms()
        h._s3front_sent = False  # type: ignore[attr-defined]
        req = classify(h.command, h.path, h.headers)
        fired = self._fire(req)
        st, firing = fired if fired else (None, None)
        action = st.rule.action if st else None
        upstream_status: int | None = None
        recorded = False

        def record(status: int, error: str = "") -> None:
            # logged before the client can see the answer: what a client has seen is in the log
            nonlocal recorded
            if not recorded:
                recorded = True
                self._record(S3Exchange(at, _now_ms(), req, status, upstream_status,
                                        st.rule_id if st else None, action, error))

        with self._lock:
            self._busy += 1
        try:
            body = _BodyReader(h)
            if st is not None and action == "reset" and not st.rule.forward:
                body.drain()  # the request reaches the front whole; S3 never sees it
                firing.until_ms = _now_ms()
                record(0, "connection reset mid-request by rule")
                self._reset(h)
                return
            if st is not None and action == "fail" and st.rule.state == "aborted" and req.upload_id:
                self._abort_upstream(req)  # the upload is gone, as after an abort or a lifecycle rule
            if st is not None and ((action == "fail" and st.rule.state != "applied")
                                   or (action == "error-200" and not st.rule.forward)):
                body.drain()
                status = st.rule.status if action == "fail" else 200
                firing.until_ms = _now_ms()
                self._send_error(h, status, st.rule.error_code(), req, before=lambda: record(status),
                                 region=st.rule.bucket_region())
                return
            spooled: BinaryIO | None = None
            if st is not None and action in ("delay", "hang"):
                spooled = body.spool()  # the server has the request and does not answer
                if action == "delay":
                    self._sleep(st.rule.delay_s)
                else:
                    if not firing.released.wait(self.max_hang_s):
                        firing.note = f"hang ran out after {self.max_hang_s:.0f}s (max_hang_s)"
                firing.until_ms = _now_ms()
            try:
                resp, conn = self._forward(h, body, spooled)
            finally:
                if spooled is not None:
                    spooled.close()
            try:
                upstream_status = resp.status
                if st is not None and action == "drop-response":
                    resp.read()  # the call takes effect upstream in full ...
                    firing.until_ms = _now_ms()
                    record(0, "response dropped by rule")
                    self._drop(h)  # ... and the client never hears of it
                    return
                if st is not None and action in ("error-200", "fail"):
                    resp.read()  # applied upstream, whatever S3 said; the client hears of an error
                    firing.until_ms = _now_ms()
                    status = 200 if action == "error-200" else st.rule.status
                    self._send_error(h, status, st.rule.error_code(), req, before=lambda: record(status),
                                     region=st.rule.bucket_region())
                    return
                if st is not None and action in ("reset", "stall"):
                    head, data = self._serialized(h, resp)  # applied upstream in full
                    answer = head + data
                    # cut in the middle of the body where there is one (an XML answer half read),
                    # else of the headers
                    cut = head + data[: len(data) // 2] if data else head[: max(1, len(head) // 2)]
                    record(0, f"answer cut after {len(cut)} of {len(answer)} bytes by rule ({action})")
                    h._s3front_sent = True  # type: ignore[attr-defined]
                    h.wfile.write(cut)
                    h.wfile.flush()
                    if action == "stall":  # the answer stops; the connection ends when released
                        if not firing.released.wait(self.max_hang_s):
                            firing.note = f"stall ran out after {self.max_hang_s:.0f}s (max_hang_s)"
                        firing.until_ms = _now_ms()
                        self._drop(h)
                        return
                    firing.until_ms = _now_ms()
                    self._reset(h)
                    return
                self._relay(h, resp, before=lambda: record(resp.status))
            finally:
                conn.close()
        except _Dropped as e:
            h.close_connection = True
            record(0, str(e))
        except (OSError, http.client.HTTPException) as e:
            error = f"{type(e).__name__}: {e}"
            h.close_connection = True
            if upstream_status is None and not getattr(h, "_s3front_sent", False):
                # the S3 server could not be reached or did not answer: say so, S3-style
                try:
                    self._send_error(h, 502, "BadGateway", req, f"S3 server {self.upstream}: {error}",
                                     before=lambda: record(502, error))
                except OSError:
                    pass
            record(0, error)  # no-op when already recorded
        finally:
            record(0, "no answer")
            with self._changed:
                self._busy -= 1
                self._changed.notify_all()

    def _sleep(self, seconds: float) -> None:
        deadline = time.monotonic() + seconds
        while not self._stopping:
            left = deadline - time.monotonic()
            if left <= 0:
                return
            time.sleep(min(left, 0.05))

    def _forward(self, h: BaseHTTPRequestHandler, body: "_BodyReader",
                 spooled: BinaryIO | None) -> tuple[http.client.HTTPResponse, http.client.HTTPConnection]:
        conn = http.client.HTTPConnection(self.upstream_host, self.upstream_port, timeout=self.upstream_timeout_s)
        try:
            conn.putrequest(h.command, h.path, skip_host=True, skip_accept_encoding=True)
            for k, v in h.headers.items():
                lk = k.lower()
                if lk in _HOP_BY_HOP:
                    continue
                if spooled is not None and lk in ("content-length", "transfer-encoding"):
                    continue
                conn.putheader(k, v)
            if spooled is not None:
                conn.putheader("Content-Length", str(body.received))
            conn.endheaders()
            if spooled is not None:
                while chunk := spooled.read(_CHUNK):
                    conn.send(chunk)
            else:
                for chunk in body.raw_chunks():  # framing as received (Content-Length or chunked)
                    conn.send(chunk)
            return conn.getresponse(), conn
        except BaseException:
            conn.close()
            raise

    @staticmethod
    def _relay(h: BaseHTTPRequestHandler, resp: http.client.HTTPResponse, before: Any = None) -> None:
        h._s3front_sent = True  # type: ignore[attr-defined]
        h.send_response_only(resp.status, resp.reason)
        length = None
        for k, v in resp.getheaders():
            lk = k.lower()
            if lk in _HOP_BY_HOP or lk == "transfer-encoding":
                continue
            if lk == "content-length":
                length = v
            h.send_header(k, v)
        no_body = h.command == "HEAD" or resp.status in (204, 304) or 100 <= resp.status < 200
        chunked = length is None and not no_body
        if chunked:
            h.send_header("Transfer-Encoding", "chunked")
        if before is not None:
            before()
        h.end_headers()
        if no_body:
            return
        while data := resp.read(_CHUNK):
            h.wfile.write(b"%x\r\n%b\r\n" % (len(data), data) if chunked else data)
        if chunked:
            h.wfile.write(b"0\r\n\r\n")
        h.wfile.flush()

    @staticmethod
    def _serialized(h: BaseHTTPRequestHandler, resp: http.client.HTTPResponse) -> tuple[bytes, bytes]:
        """The upstream answer as the client would have had it: (status line and headers, body)."""
        data = b"" if h.command == "HEAD" else resp.read()
        lines = [f"HTTP/1.1 {resp.status} {resp.reason}"]
        lines += [f"{k}: {v}" for k, v in resp.getheaders()
                  if k.lower() not in _HOP_BY_HOP and k.lower() not in ("transfer-encoding", "content-length")]
        if h.command != "HEAD":
            lines.append(f"Content-Length: {len(data)}")
        return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1"), data

    @staticmethod
    def _reset(h: BaseHTTPRequestHandler) -> None:
        """Close the client connection with a TCP reset (SO_LINGER 0), not an orderly FIN."""
        h.close_connection = True
        try:
            h.wfile.flush()
        except OSError:
            pass
        try:
            h.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            h.connection.close()
        except OSError:
            pass

    def _abort_upstream(self, req: S3Request) -> None:
        """AbortMultipartUpload of the request's upload on the S3 server itself (best effort)."""
        path = "/" + urllib.parse.quote(req.bucket) + "/" + urllib.parse.quote(req.key or "") + \
            "?uploadId=" + urllib.parse.quote(req.upload_id or "")
        conn = http.client.HTTPConnection(self.upstream_host, self.upstream_port, timeout=self.upstream_timeout_s)
        try:
            conn.request("DELETE", path)
            conn.getresponse().read()
        except (OSError, http.client.HTTPException):
            pass
        finally:
            conn.close()

    @staticmethod
    def _drop(h: BaseHTTPRequestHandler) -> None:
        h.close_connection = True
        try:
            h.connection.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass

    @staticmethod
    def _send_error(h: BaseHTTPRequestHandler, status: int, code: str, req: S3Request,
                    message: str | None = None, before: Any = None, region: str | None = None) -> None:
        """An S3 error body as S3 writes it (its message for the code; the request id names
        the front, so a log shows where the error came from). `region`: a 301 PermanentRedirect's,
        which S3 names in x-amz-bucket-region and in the endpoint the body gives."""
        message = message or S3_MESSAGES.get(code, f"{code} (injected by the sinkcheck S3 fault front)")
        resource = "/" + req.bucket + (f"/{req.key}" if req.key else "")
        where = (f"<Bucket>{escape(req.bucket)}</Bucket>"
                 f"<Endpoint>{escape(req.bucket)}.s3.{escape(region)}.amazonaws.com</Endpoint>") if region else ""
        body = ('<?xml version="1.0" encoding="UTF-8"?>\n'
                f"<Error><Code>{escape(code)}</Code><Message>{escape(message)}</Message>{where}"
                f"<Resource>{escape(resource)}</Resource><RequestId>sinkcheck-s3front</RequestId>"
                "<HostId>sinkcheck</HostId></Error>").encode()
        h._s3front_sent = True  # type: ignore[attr-defined]
        h.send_response(status)
        h.send_header("Content-Type", "application/xml")
        h.send_header("x-amz-request-id", "sinkcheck-s3front")
        if region:
            h.send_header("x-amz-bucket-region", region)
        h.send_header("Content-Length", str(len(body)))
        if before is not None:
            before()
        h.end_headers()
        if h.command != "HEAD":
            h.wfile.write(body)
        h.wfile.flush()


class _BodyReader:
    """The request body of one exchange, read from the client once: streamed through as raw
    bytes (framing kept), drained, or spooled (decoded) for a request that waits."""

    def __init__(self, h: BaseHTTPRequestHandler):
        self.rfile = h.rfile
        te = (h.headers.get("Transfer-Encoding") or "").lower()
        self.chunked = "chunked" in te
        cl = h.headers.get("Content-Length")
        self.length = int(cl) if cl and cl.strip().isdigit() else 0
        self.received = 0  # decoded body bytes
        self.done = False

    def raw_chunks(self):
        """The body as sent: Content-Length bytes, or the chunked framing including trailers."""
        if self.done:
            return
        self.done = True
        if not self.chunked:
            left = self.length
            while left > 0:
                data = self.rfile.read(min(_CHUNK, left))
                if not data:
                    raise _Dropped("client closed mid-body")
                left -= len(data)
                self.received += len(data)
                yield data
            return
        while True:
            line = self.rfile.readline(65537)
            if not line:
                raise _Dropped("client closed mid-body")
            size = int(line.split(b";")[0].strip() or b"0", 16)
            if size == 0:
                out = [line]
                while True:  # trailers, up to the empty line
                    t = self.rfile.readline(65537)
                    out.append(t)
                    if t in (b"\r\n", b"\n", b""):
                        break
                yield b"".join(out)
                return
            left, pieces = size, [line]
            while left > 0:
                data = self.rfile.read(min(_CHUNK, left))
                if not data:
                    raise _Dropped("client closed mid-body")
                left -= len(data)
                self.received += len(data)
                pieces.append(data)
                if sum(len(p) for p in pieces) >= _CHUNK:
                    yield b"".join(pieces)
                    pieces = []
            pieces.append(self.rfile.readline(65537))  # the CRLF after the chunk
            yield b"".join(pieces)

    def _decoded(self):
        if not self.chunked:
            yield from self.raw_chunks()
            return
        self.done = True
        while True:
            line = self.rfile.readline(65537)
            if not line:
                raise _Dropped("client closed mid-body")
            size = int(line.split(b";")[0].strip() or b"0", 16)
            if size == 0:
                while self.rfile.readline(65537) not in (b"\r\n", b"\n", b""):
                    pass
                return
            left = size
            while left > 0:
                data = self.rfile.read(min(_CHUNK, left))
                if not data:
                    raise _Dropped("client closed mid-body")
                left -= len(data)
                self.received += len(data)
                yield data
            self.rfile.readline(65537)

    def drain(self) -> None:
        for _ in self._decoded():
            pass

    def spool(self) -> BinaryIO:
        f = tempfile.SpooledTemporaryFile(max_size=_SPOOL_MAX)
        try:
            for data in self._decoded():
                f.write(data)
        except BaseException:
            f.close()
            raise
        f.seek(0)
        return f  # type: ignore[return-value]


__all__ = ["ACTIONS", "ERROR_CODES", "FaultRule", "S3Exchange", "S3FaultFront", "S3Request", "classify"]

