"""The S3 fault front: an HTTP proxy on loopback between a sink and the S3 server that names
each request's S3 operation and, by rule, fails it, delays it, hangs it until released, answers
it with an error inside a 200, or applies it and drops the response. It records every exchange
and, per rule, whether and when it fired.

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
import fnmatch
import http.client
import itertools
import json
import socket
import tempfile
import threading
import time
import urllib.parse
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, BinaryIO, Mapping
from xml.sax.saxutils import escape

from adapters.observation import FaultEvent

LOOPBACK = "127.0.0.1"
ACTIONS = ("fail", "delay", "hang", "drop-response", "error-200")
# S3 error codes by HTTP status, for "fail" (a rule's `code` overrides)
ERROR_CODES = {500: "InternalError", 503: "SlowDown", 404: "NoSuchKey", 403: "AccessDenied",
               412: "PreconditionFailed", 400: "BadRequest", 409: "OperationAborted",
               501: "NotImplemented", 502: "BadGateway", 504: "GatewayTimeout", 408: "RequestTimeout",
               429: "SlowDown", 416: "InvalidRange", 411: "MissingContentLength"}
# S3's own messages for the codes the front answers with (S3's error responses reference):
# clients read them; the AWS SDK v1 retries a CompleteMultipartUpload whose 200 carries
# InternalError only when the message says "Please try again." (CompleteMultipartUploadRetryCondition)
S3_MESSAGES = {"InternalError": "We encountered an internal error. Please try again.",
               "SlowDown": "Please reduce your request rate.",
               "ServiceUnavailable": "Please reduce your request rate.",
               "RequestTimeout": "Your socket connection to the server was not read from or written to within "
                                 "the timeout period.",
               "AccessDenied": "Access Denied", "NoSuchKey": "The specified key does not exist.",
               "PreconditionFailed": "At least one of the pre-conditions you specified did not hold",
               "OperationAborted": "A conflicting conditional operation is currently in progress against this "
                                   "resource. Please try again.",
               "NotImplemented": "A header you provided implies functionality that is not implemented"}
_HOP_BY_HOP = {"connection", "keep-alive", "proxy-connection", "proxy-authenticate",
               "proxy-authorization", "te", "trailer", "upgrade", "expect"}
_CHUNK = 1 << 20
_SPOOL_MAX = 8 << 20


def _now_ms() -> int:
    return int(time.time() * 1000)


@dataclass(frozen=True)
class S3Request:
    """What a rule matches on: one request, its S3 operation named."""

    operation: str  # CreateMultipartUpload | UploadPart | CompleteMultipartUpload | ... | Other
    bucket: str
    key: str | None
    upload_id: str | None
    part_number: int | None
    method: str

    def describe(self) -> str:
        s = f"{self.operation} bucket={self.bucket} key={self.key}"
        if self.upload_id:
            s += f" upload={self.upload_id}"
        if self.part_number is not None:
            s += f" part={self.part_number}"
        return s


def classify(method: str, path: str, headers: Mapping[str, str] | None = None) -> S3Request:
    """Name the S3 operation of a path-style request (`/bucket/key?query`)."""
    method = method.upper()
    u = urllib.parse.urlsplit(path)
    q = urllib.parse.parse_qs(u.query, keep_blank_values=True)
    parts = urllib.parse.unquote(u.path).lstrip("/").split("/", 1)
    bucket = parts[0]
    key = parts[1] if len(parts) > 1 and parts[1] else None
    upload_id = q.get("uploadId", [None])[0]
    pn = q.get("partNumber", [None])[0]
    part = int(pn) if pn and pn.isdigit() else None
    copy = bool(headers and any(k.lower() == "x-amz-copy-source" for k in headers))
    op = "Other"
    if not bucket:
        op = "ListBuckets" if method == "GET" else "Other"
    elif key is None:
        if method == "GET":
            if "uploads" in q:
                op = "ListMultipartUploads"
            elif q.get("list-type", [""])[0] == "2":
                op = "ListObjectsV2"
            elif not (set(q) - {"prefix", "delimiter", "marker", "max-keys", "encoding-type"}):
                op = "ListObjects"
        elif method == "HEAD":
            op = "HeadBucket"
        elif method == "PUT" and not q:
            op = "CreateBucket"
        elif method == "DELETE" and not q:
            op = "DeleteBucket"
        elif method == "POST" and "delete" in q:
            op = "DeleteObjects"
    elif method == "POST" and "uploads" in q:
        op = "CreateMultipartUpload"
    elif upload_id:
        op = {"PUT": "UploadPartCopy" if copy else "UploadPart", "POST": "CompleteMultipartUpload",
              "DELETE": "AbortMultipartUpload", "GET": "ListParts"}.get(method, "Other")
    elif not (set(q) - {"versionId", "partNumber", "response-content-type", "response-content-disposition",
                        "response-cache-control", "response-content-encoding", "response-expires",
                        "response-content-language", "x-id"}):
        op = {"PUT": "CopyObject" if copy else "PutObject", "GET": "GetObject", "HEAD": "HeadObject",
              "DELETE": "DeleteObject"}.get(method, "Other")
    return S3Request(op, bucket, key, upload_id, part, method)


@dataclass
class FaultRule:
    """A fault by rule. `operation` is an S3 operation name (or "*" for any); `key` an exact
    key or an fnmatch glob; `nth` the first matching request it fires on (1 = the first);
    `times` how many matching requests it fires on (0 = unlimited)."""

    operation: str
    action: str  # fail | delay | hang | drop-response | error-200
    key: str | None = None
    upload_id: str | None = None
    part_number: int | None = None
    nth: int = 1
    times: int = 1
    status: int = 503  # for "fail": the HTTP status, with an S3 XML error body
    delay_s: float = 0.0  # for "delay"
    name: str = ""
    code: str | None = None  # for "fail"/"error-200": the S3 error code (default by status / InternalError)
    bucket: str | None = None
    # for "error-200": S3 starts its answer to a CompleteMultipartUpload with 200 OK and sends the
    # outcome later, so the error can come after S3 has applied the request (forward, the default:
    # the object is there and the client hears of an error) or instead of it (not applied)
    forward: bool = True

    def __post_init__(self) -> None:
        if self.action not in ACTIONS:
            raise ValueError(f"unknown S3 fault action {self.action!r}; one of {', '.join(ACTIONS)}")
        if self.nth < 1 or self.times < 0:
            raise ValueError(f"nth must be >= 1 and times >= 0 (got nth={self.nth}, times={self.times})")
        if self.action == "fail" and not 300 <= int(self.status) <= 599:
            raise ValueError(f"a 'fail' rule needs an error status (got {self.status})")
        if self.delay_s < 0:
            raise ValueError("delay_s must be >= 0")

    def matches(self, r: S3Request) -> bool:
        if self.operation not in ("*", r.operation):
            return False
        if self.bucket is not None and r.bucket != self.bucket:
            return False
        if self.key is not None and not (r.key is not None and (r.key == self.key
                                                                or fnmatch.fnmatchcase(r.key, self.key))):
            return False
        if self.upload_id is not None and r.upload_id != self.upload_id:
            return False
        if self.part_number is not None and r.part_number != self.part_number:
            return False
        return True

    def error_code(self) -> str:
        if self.code:
            return self.code
        return "InternalError" if self.action == "error-200" else ERROR_CODES.get(int(self.status), "InternalError")


@dataclass
class _Firing:
    request: S3Request
    seen: int  # which matching request this was
    at_ms: int
    until_ms: int | None = None
    released: threading.Event = field(default_factory=threading.Event)
    note: str = ""

    def to_json(self) -> dict[str, Any]:
        d = {"operation": self.request.operation, "key": self.request.key, "upload_id": self.request.upload_id,
             "part_number": self.request.part_number, "at_ms": self.at_ms, "until_ms": self.until_ms}
        if self.note:
            d["note"] = self.note
        return d


@dataclass
class _RuleState:
    rule_id: str
    rule: FaultRule
    added_ms: int
    seen: int = 0
    retired: bool = False  # a released hang fires no more
    firings: list[_Firing] = field(default_factory=list)


@dataclass(frozen=True)
class S3Exchange:
    """One proxied request: `status` is what the client got (0: no answer, the connection was
    dropped or the client went away); `upstream_status` what the S3 server answered (None: not
    forwarded)."""

    at_ms: int
    end_ms: int
    request: S3Request
    status: int
    upstream_status: int | None
    rule_id: str | None = None
    action: str | None = None
    error: str = ""

    def to_json(self) -> dict[str, Any]:
        d = dataclasses.asdict(self)
        d["request"] = dataclasses.asdict(self.request)
        return d


class _Dropped(Exception):
    """The client connection was closed without an answer (on purpose or by the client)."""


class FaultRules:
    """S3 fault rules and their firings: which rule a request matches, whether it is due, and
    one FaultEvent per rule (fired or not). The HTTP fault front applies them to requests on the
    wire; the Python sink's simulated S3 (adapters.memory_s3) to calls in memory."""

    def __init__(self, now: Any = None):
        self.now = now or _now_ms
        self._rules: dict[str, _RuleState] = {}
        self._ids = itertools.count(1)
        self._lock = threading.Lock()
        self._changed = threading.Condition(self._lock)
        self._stopping = False

    # --- rules -----------------------------------------------------------------------------
    def add_rule(self, rule: FaultRule) -> str:
        """Arm a rule (it counts matching requests from now on); returns its id."""
        with self._lock:
            rid = f"r{next(self._ids)}"
            self._rules[rid] = _RuleState(rid, dataclasses.replace(rule), self.now())
            return rid

    def remove_rule(self, rule_id: str) -> None:
        """Disarm a rule (its hung requests go on); it stays in events()."""
        self.release(rule_id)
        with self._lock:
            self._rules[rule_id].retired = True

    def release(self, rule_id: str | None = None) -> None:
        """Let hung requests go on to the S3 server: those of `rule_id`, or of every hang rule.
        A released hang rule fires no more."""
        with self._lock:
            if rule_id is not None and rule_id not in self._rules:
                raise KeyError(f"no rule {rule_id!r}; rules: {sorted(self._rules)}")
            for rid, st in self._rules.items():
                if rule_id is not None and rid != rule_id:
                    continue
                if st.rule.action == "hang":
                    st.retired = True
                for f in st.firings:
                    f.released.set()

    def wait_fired(self, rule_id: str, timeout_s: float) -> bool:
        """Wait at most `timeout_s` for the rule to fire; True when it has."""
        deadline = time.monotonic() + timeout_s
        with self._changed:
            if rule_id not in self._rules:
                raise KeyError(f"no rule {rule_id!r}; rules: {sorted(self._rules)}")
            while not self._rules[rule_id].firings:
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self._changed.wait(left)
            return True

    def hung(self) -> list[S3Request]:
        """Requests hanging right now."""
        with self._lock:
            return [f.request for st in self._rules.values() if st.rule.action == "hang"
                    for f in st.firings if not f.released.is_set()]

    def events(self) -> list[FaultEvent]:
        """One FaultEvent per rule, in the order added: fired or not; `at_ms` when it first fired,
        `until_ms` when its last firing ended (a hang released, a delay over; None while hung)."""
        with self._lock:
            return [self._event(st) for st in self._rules.values()]

    def _event(self, st: _RuleState) -> FaultEvent:
        r = st.rule
        params: dict[str, Any] = dataclasses.asdict(r)
        params.update(rule_id=st.rule_id, fired_count=len(st.firings), matched=st.seen,
                      firings=[f.to_json() for f in st.firings[:50]])
        label = f"{r.name}: " if r.name else ""
        if not st.firings:
            what = r.operation + (f" key={r.key}" if r.key else "") + (
                f" part={r.part_number}" if r.part_number is not None else "")
            detail = (f"{label}{r.action} on {what} never fired: {st.seen} matching request(s) seen, "
                      f"it waited for request {r.nth}")
            return FaultEvent("s3", params, False, None, None, detail)
        first = st.firings[0]
        detail = f"{label}{r.action} on {first.request.describe()} (matching request {first.seen})"
        if r.action == "fail":
            detail += f" -> {r.status} {r.error_code()}"
        elif r.action == "error-200":
            detail += (f" -> applied by S3, answered 200 with {r.error_code()}" if r.forward
                       else f" -> not applied, answered 200 with {r.error_code()}")
        if len(st.firings) > 1:
            detail += f"; fired {len(st.firings)} times"
        notes = sorted({f.note for f in st.firings if f.note})
        if notes:
            detail += "; " + "; ".join(notes)
        untils = [f.until_ms for f in st.firings]
        until = None if any(u is None for u in untils) else max(u for u in untils if u is not None)
        return FaultEvent("s3", params, True, first.at_ms, until, detail)

    def _fire(self, req: S3Request) -> tuple[_RuleState, _Firing] | None:
        """Count the request against every live rule it matches; the first due fires."""
        chosen = None
        with self._lock:
            for st in self._rules.values():
                if st.retired or not st.rule.matches(req):
                    continue
                st.seen += 1
                due = st.seen >= st.rule.nth and (st.rule.times == 0 or len(st.firings) < st.rule.times)
                if due and chosen is None:
                    f = _Firing(req, st.seen, self.now())
                    if self._stopping:
                        f.released.set()
                    st.firings.append(f)
                    chosen = (st, f)
            if chosen:
                self._changed.notify_all()
        return chosen


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
            if st is not None and (action == "fail" or (action == "error-200" and not st.rule.forward)):
                body.drain()
                status = st.rule.status if action == "fail" else 200
                firing.until_ms = _now_ms()
                self._send_error(h, status, st.rule.error_code(), req, before=lambda: record(status))
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
                if st is not None and action == "error-200":
                    resp.read()  # applied upstream, whatever S3 said; the client hears of an error
                    firing.until_ms = _now_ms()
                    self._send_error(h, 200, st.rule.error_code(), req, before=lambda: record(200))
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
    def _drop(h: BaseHTTPRequestHandler) -> None:
        h.close_connection = True
        try:
            h.connection.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass

    @staticmethod
    def _send_error(h: BaseHTTPRequestHandler, status: int, code: str, req: S3Request,
                    message: str | None = None, before: Any = None) -> None:
        """An S3 error body as S3 writes it (its message for the code; the request id names
        the front, so a log shows where the error came from)."""
        message = message or S3_MESSAGES.get(code, f"{code} (injected by the sinkcheck S3 fault front)")
        resource = "/" + req.bucket + (f"/{req.key}" if req.key else "")
        body = ('<?xml version="1.0" encoding="UTF-8"?>\n'
                f"<Error><Code>{escape(code)}</Code><Message>{escape(message)}</Message>"
                f"<Resource>{escape(resource)}</Resource><RequestId>sinkcheck-s3front</RequestId>"
                "<HostId>sinkcheck</HostId></Error>").encode()
        h._s3front_sent = True  # type: ignore[attr-defined]
        h.send_response(status)
        h.send_header("Content-Type", "application/xml")
        h.send_header("x-amz-request-id", "sinkcheck-s3front")
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
