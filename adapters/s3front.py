"""The S3 fault front: an HTTP proxy on loopback between a sink and the S3 server that names
each request's S3 operation and, by rule, fails it, delays it, hangs it until released, or
applies it and drops the response. It records when each rule fired."""
from __future__ import annotations

import fnmatch
import http.client
import itertools
import socket
import threading
import time
import urllib.parse
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from adapters.observation import FaultEvent

LOOPBACK = "127.0.0.1"
_ERRORS = {500: "InternalError", 503: "SlowDown", 404: "NoSuchKey", 403: "AccessDenied",
           412: "PreconditionFailed", 400: "BadRequest", 409: "OperationAborted"}


def _now_ms() -> int:
    return int(time.time() * 1000)


@dataclass(frozen=True)
class S3Request:
    operation: str
    bucket: str
    key: str | None
    upload_id: str | None
    part_number: int | None
    method: str


def classify(method: str, path: str) -> S3Request:
    """Name the S3 operation of a path-style request."""
    u = urllib.parse.urlsplit(path)
    q = urllib.parse.parse_qs(u.query, keep_blank_values=True)
    parts = urllib.parse.unquote(u.path).lstrip("/").split("/", 1)
    bucket = parts[0]
    key = parts[1] if len(parts) > 1 and parts[1] else None
    upload_id = q.get("uploadId", [None])[0]
    pn = q.get("partNumber", [None])[0]
    part = int(pn) if pn and pn.isdigit() else None
    if key is None:
        op = {"GET": "ListMultipartUploads" if "uploads" in q else "ListObjectsV2",
              "HEAD": "HeadBucket", "PUT": "CreateBucket", "DELETE": "DeleteBucket"}.get(method, "Other")
    elif method == "POST" and "uploads" in q:
        op = "CreateMultipartUpload"
    elif method == "PUT" and upload_id:
        op = "UploadPart"
    elif method == "POST" and upload_id:
        op = "CompleteMultipartUpload"
    elif method == "DELETE" and upload_id:
        op = "AbortMultipartUpload"
    elif method == "GET" and upload_id:
        op = "ListParts"
    else:
        op = {"PUT": "PutObject", "GET": "GetObject", "HEAD": "HeadObject", "DELETE": "DeleteObject"}.get(method, "Other")
    return S3Request(op, bucket, key, upload_id, part, method)


@dataclass
class FaultRule:
    operation: str
    action: str  # fail | delay | hang | drop-response | error-200
    key: str | None = None
    upload_id: str | None = None
    part_number: int | None = None
    nth: int = 1
    times: int = 1
    status: int = 503
    delay_s: float = 0.0
    name: str = ""
    # state
    seen: int = field(default=0, init=False)
    fired: int = field(default=0, init=False)
    first_at: int | None = field(default=None, init=False)
    until: int | None = field(default=None, init=False)
    detail: str = field(default="", init=False)

    def matches(self, r: S3Request) -> bool:
        if r.operation != self.operation:
            return False
        if self.key is not None and not (r.key == self.key or (r.key and fnmatch.fnmatchcase(r.key, self.key))):
            return False
        if self.upload_id is not None and r.upload_id != self.upload_id:
            return False
        if self.part_number is not None and r.part_number != self.part_number:
            return False
        return True


class S3FaultFront:
    def __init__(self, upstream: str, run_dir: str | Path | None = None):
        u = urllib.parse.urlsplit(upstream)
        self.upstream_host, self.upstream_port = u.hostname or LOOPBACK, u.port or 80
        self.run_dir = Path(run_dir) if run_dir else None
        self._rules: dict[str, FaultRule] = {}
        self._ids = itertools.count(1)
        self._lock = threading.Lock()
        self._released = threading.Event()
        self._fired = threading.Condition(self._lock)
        self._log: list[tuple[int, S3Request, int]] = []
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None
        self.endpoint = ""

    # --- lifecycle -------------------------------------------------------------------------
    def start(self) -> "S3FaultFront":
        front = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *a: object) -> None:  # quiet
                pass

            def _serve(self) -> None:
                front._handle(self)

            do_GET = do_PUT = do_POST = do_DELETE = do_HEAD = _serve

        self._server = ThreadingHTTPServer((LOOPBACK, 0), Handler)
        self._server.daemon_threads = True
        self.endpoint = f"http://{LOOPBACK}:{self._server.server_address[1]}"
        self._thread = threading.Thread(target=self._server.serve_forever, name="s3front", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._released.set()
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None
        if self._thread is not None:
            self._thread.join(timeout=10)
            self._thread = None

    def __enter__(self) -> "S3FaultFront":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # --- rules -----------------------------------------------------------------------------
    def add_rule(self, rule: FaultRule) -> str:
        with self._lock:
            rid = f"r{next(self._ids)}"
            self._rules[rid] = rule
            if rule.action == "hang":
                self._released.clear()
            return rid

    def release(self, rule_id: str | None = None) -> None:
        """Let hung requests go on to the S3 server."""
        with self._lock:
            now = _now_ms()
            for rid, r in self._rules.items():
                if r.action == "hang" and r.fired and r.until is None and (rule_id is None or rid == rule_id):
                    r.until = now
        self._released.set()

    def wait_fired(self, rule_id: str, timeout_s: float) -> bool:
        deadline = time.monotonic() + timeout_s
        with self._fired:
            while not self._rules[rule_id].fired:
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self._fired.wait(left)
            return True

    def events(self) -> list[FaultEvent]:
        with self._lock:
            out = []
            for r in self._rules.values():
                params = {"operation": r.operation, "action": r.action, "nth": r.nth, "name": r.name}
                if r.part_number is not None:
                    params["part_number"] = r.part_number
                if r.action == "fail":
                    params["status"] = r.status
                until = r.until if r.action == "hang" else (r.first_at + int(r.delay_s * 1000) if r.first_at and r.action == "delay" else r.first_at)
                out.append(FaultEvent("s3", params, r.fired > 0, r.first_at, until,
                                      r.detail or f"{r.operation} never matched its {r.nth}th request"))
            return out

    def requests(self) -> list[tuple[int, S3Request, int]]:
        with self._lock:
            return list(self._log)

    # --- proxying --------------------------------------------------------------------------
    def _match(self, req: S3Request) -> FaultRule | None:
        with self._lock:
            for r in self._rules.values():
                if not r.matches(req):
                    continue
                r.seen += 1
                if r.seen >= r.nth and (r.times == 0 or r.fired < r.times):
                    r.fired += 1
                    if r.first_at is None:
                        r.first_at = _now_ms()
                        r.detail = (f"{req.operation} key={req.key} upload={req.upload_id} part={req.part_number}"
                                    f" (request {r.seen} of its kind)")
                    self._fired.notify_all()
                    return r
            return None

    def _handle(self, h: BaseHTTPRequestHandler) -> None:
        req = classify(h.command, h.path)
        body = self._read_body(h)
        rule = self._match(req)
        status = 0
        try:
            if rule is not None and rule.action == "fail":
                status = rule.status
                self._error(h, rule.status, _ERRORS.get(rule.status, "InternalError"))
                return
            if rule is not None and rule.action == "error-200":
                status = 200
                self._error(h, 200, "InternalError")
                return
            if rule is not None and rule.action == "delay":
                time.sleep(rule.delay_s)
            if rule is not None and rule.action == "hang":
                while not self._released.wait(0.1):
                    if self._server is None:
                        break
            status, headers, data = self._forward(h, body)
            if rule is not None and rule.action == "drop-response":
                # the call took effect upstream; the client never hears of it
                h.close_connection = True
                try:
                    h.connection.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
                return
            h.send_response(status)
            for k, v in headers:
                if k.lower() not in ("transfer-encoding", "connection", "content-length"):
                    h.send_header(k, v)
            h.send_header("Content-Length", str(len(data)))
            h.end_headers()
            if h.command != "HEAD":
                h.wfile.write(data)
        finally:
            with self._lock:
                self._log.append((_now_ms(), req, status))

    def _read_body(self, h: BaseHTTPRequestHandler) -> bytes:
        if h.headers.get("Transfer-Encoding", "").lower() == "chunked":
            chunks = []
            while True:
                size = int(h.rfile.readline().split(b";")[0].strip() or b"0", 16)
                if size == 0:
                    h.rfile.readline()
                    break
                chunks.append(h.rfile.read(size))
                h.rfile.readline()
            return b"".join(chunks)
        n = int(h.headers.get("Content-Length") or 0)
        return h.rfile.read(n) if n else b""

    def _forward(self, h: BaseHTTPRequestHandler, body: bytes) -> tuple[int, list[tuple[str, str]], bytes]:
        conn = http.client.HTTPConnection(self.upstream_host, self.upstream_port, timeout=120)
        headers = {k: v for k, v in h.headers.items() if k.lower() not in ("transfer-encoding", "connection")}
        headers["Content-Length"] = str(len(body))
        conn.request(h.command, h.path, body=body, headers=headers)
        resp = conn.getresponse()
        data = resp.read()
        conn.close()
        return resp.status, resp.getheaders(), data

    @staticmethod
    def _error(h: BaseHTTPRequestHandler, status: int, code: str) -> None:
        body = (f'<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>{code}</Code>'
                f"<Message>injected by sinkcheck's S3 fault front</Message><RequestId>sinkcheck</RequestId></Error>").encode()
        h.send_response(status)
        h.send_header("Content-Type", "application/xml")
        h.send_header("Content-Length", str(len(body)))
        h.end_headers()
        if h.command != "HEAD":
            h.wfile.write(body)
