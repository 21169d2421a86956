"""S3 fault rules: naming a path-style request's S3 operation, and rules that pick requests by
operation, key, upload and part and fire on the n-th match (fail, delay, hang until released,
an error inside a 200, drop the response), each recording whether and when it fired. The HTTP
front (adapters.s3.front) and the in-memory S3 of the simulation (adapters.s3.memory) both apply
them, so a rule means the same thing in real time and in simulation."""
from __future__ import annotations

import dataclasses
import fnmatch
import itertools
import threading
import time
import urllib.parse
from dataclasses import dataclass, field
from typing import Any, Mapping

from adapters.observation import FaultEvent

# fail: an S3 error answer; delay/hang: the answer comes late or when released; drop-response: S3
# applies the request and the connection closes before the answer; error-200: an error inside a
# 200; reset: the connection is reset mid-exchange (before S3 has the whole request, or, with
# `forward`, in the middle of the answer to a request S3 applied); stall: S3 applies the request,
# its answer starts and then stops mid-body until released (or the client gives up)
ACTIONS = ("fail", "delay", "hang", "drop-response", "error-200", "reset", "stall")
# S3 error codes by HTTP status, for "fail" (a rule's `code` overrides)
ERROR_CODES = {500: "InternalError", 503: "SlowDown", 404: "NoSuchKey", 403: "AccessDenied",
               412: "PreconditionFailed", 400: "BadRequest", 409: "OperationAborted",
               501: "NotImplemented", 502: "BadGateway", 504: "GatewayTimeout", 408: "RequestTimeout",
               429: "SlowDown", 416: "InvalidRange", 411: "MissingContentLength", 301: "PermanentRedirect"}
# The answers S3 and S3-compatible stores give in production (issue 34), as (status, code): what
# the generator draws and the coverage table counts. 429 is what S3-compatible stores (and S3
# behind some gateways) answer a throttled client; S3 itself says 503 SlowDown.
S3_STATUSES: tuple[tuple[int, str], ...] = (
    (400, "RequestTimeout"), (400, "IncompleteBody"), (400, "EntityTooSmall"), (400, "InvalidPart"),
    (403, "AccessDenied"), (403, "ExpiredToken"), (403, "RequestTimeTooSkewed"), (403, "SignatureDoesNotMatch"),
    (404, "NoSuchUpload"), (404, "NoSuchBucket"), (404, "NoSuchKey"),
    (409, "ConditionalRequestConflict"), (409, "OperationAborted"),
    (412, "PreconditionFailed"),
    (429, "SlowDown"), (503, "SlowDown"),
    (500, "InternalError"), (501, "NotImplemented"), (502, "BadGateway"), (504, "GatewayTimeout"),
)
# The calls S3 gives a code on, for the codes it gives on some calls only (S3's error responses
# reference and each call's API reference); any other code may answer any call. A condition
# (If-None-Match, If-Match) is carried only by a conditional PutObject or
# CompleteMultipartUpload; a body shorter than its Content-Length, or not sent in time, only by a
# call with a body; a part list only by Complete; an upload id only by the calls that name one;
# NoSuchKey only by a call that reads a key (a HEAD's answer has no body, its status says it).
S3_CODE_CALLS: dict[str, tuple[str, ...]] = {
    "PreconditionFailed": ("CompleteMultipartUpload", "PutObject"),
    "ConditionalRequestConflict": ("CompleteMultipartUpload", "PutObject"),
    "EntityTooSmall": ("CompleteMultipartUpload",),
    "InvalidPart": ("CompleteMultipartUpload",),
    "IncompleteBody": ("UploadPart", "PutObject", "CompleteMultipartUpload"),
    "RequestTimeout": ("UploadPart", "PutObject", "CompleteMultipartUpload"),
    "NoSuchUpload": ("UploadPart", "CompleteMultipartUpload", "AbortMultipartUpload", "ListParts"),
    "NoSuchKey": ("HeadObject", "GetObject"),
}


def s3_answers(code: str, operation: str) -> bool:
    """Whether S3 answers `operation` with `code` at all (S3_CODE_CALLS): a run in which it does
    is not one production can have."""
    return operation in S3_CODE_CALLS.get(code, (operation,))


# the operations a sink makes (Confluent's: the multipart ones, HeadObject after a 412, HeadBucket
# at start on SDK v2 and GetBucketAcl on SDK v1; Aiven, Lenses and Camel: PutObject, ListObjectsV2,
# GetObject)
S3_OPERATIONS = ("CreateMultipartUpload", "UploadPart", "CompleteMultipartUpload", "AbortMultipartUpload",
                 "PutObject", "HeadBucket", "GetBucketAcl", "HeadObject", "ListObjectsV2", "GetObject")
# where a 301 PermanentRedirect says the bucket lives when its rule names no region: one no sink's
# config here names (the harness's S3 is us-east-1, Confluent's default us-west-2)
OTHER_REGION = "ap-southeast-2"
# what a "fail" rule does to S3 before it answers: nothing (""), apply the request first
# ("applied": a 412 with the object there, an error after the write), or abort the request's
# multipart upload first ("aborted": a NoSuchUpload after an abort or a lifecycle rule)
STATES = ("", "applied", "aborted")
# S3's own messages for the codes the front answers with (S3's error responses reference):
# clients read them; the AWS SDK v1 retries a CompleteMultipartUpload whose 200 carries
# InternalError only when the message says "Please try again." (CompleteMultipartUploadRetryCondition)
S3_MESSAGES = {"InternalError": "We encountered an internal error. Please try again.",
               "SlowDown": "Please reduce your request rate.",
               "ServiceUnavailable": "Please reduce your request rate.",
               "RequestTimeout": "Your socket connection to the server was not read from or written to within "
                                 "the timeout period.",
               "IncompleteBody": "You did not provide the number of bytes specified by the Content-Length HTTP "
                                 "header.",
               "EntityTooSmall": "Your proposed upload is smaller than the minimum allowed object size.",
               "InvalidPart": "One or more of the specified parts could not be found. The part might not have "
                              "been uploaded, or the specified entity tag might not have matched the part's "
                              "entity tag.",
               "AccessDenied": "Access Denied",
               "ExpiredToken": "The provided token has expired.",
               "RequestTimeTooSkewed": "The difference between the request time and the current time is too "
                                       "large.",
               "SignatureDoesNotMatch": "The request signature we calculated does not match the signature you "
                                        "provided. Check your key and signing method.",
               "NoSuchUpload": "The specified upload does not exist. The upload ID may be invalid, or the upload "
                               "may have been aborted or completed.",
               "NoSuchBucket": "The specified bucket does not exist",
               "PermanentRedirect": "The bucket you are attempting to access must be addressed using the "
                                    "specified endpoint. Please send all future requests to this endpoint.",
               "NoSuchKey": "The specified key does not exist.",
               "ConditionalRequestConflict": "The conditional request cannot succeed due to a conflicting "
                                             "operation against this resource.",
               "PreconditionFailed": "At least one of the pre-conditions you specified did not hold",
               "OperationAborted": "A conflicting conditional operation is currently in progress against this "
                                   "resource. Please try again.",
               "NotImplemented": "A header you provided implies functionality that is not implemented",
               "BadGateway": "Bad Gateway",
               "GatewayTimeout": "Gateway Timeout"}

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
            if "acl" in q:
                op = "GetBucketAcl"  # the AWS SDK v1's doesBucketExistV2
            elif "uploads" in q:
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
    # the object is there and the client hears of an error) or instead of it (not applied); for
    # "reset": S3 applied the request and the answer is cut (forward) or the request is (not)
    forward: bool = True
    # for "fail": what S3 is made to do before the answer (STATES)
    state: str = ""
    # for a "fail" with status 301 (PermanentRedirect): the region the bucket is in, which S3 names
    # in the answer's x-amz-bucket-region header (OTHER_REGION when not given)
    region: str | None = None
    # armed before the sink starts (the runner's doing, as for a rule on the start-up bucket
    # check): for a request the sink makes as it starts reading, Lenses' lock written when a
    # partition is assigned, which would otherwise race the rule being armed
    at_start: bool = False

    def __post_init__(self) -> None:
        if self.action not in ACTIONS:
            raise ValueError(f"unknown S3 fault action {self.action!r}; one of {', '.join(ACTIONS)}")
        if self.nth < 1 or self.times < 0:
            raise ValueError(f"nth must be >= 1 and times >= 0 (got nth={self.nth}, times={self.times})")
        if self.action == "fail" and not 300 <= int(self.status) <= 599:
            raise ValueError(f"a 'fail' rule needs an error status (got {self.status})")
        if self.delay_s < 0:
            raise ValueError("delay_s must be >= 0")
        if self.state not in STATES:
            raise ValueError(f"unknown state {self.state!r}; one of {', '.join(map(repr, STATES))}")

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

    def bucket_region(self) -> str | None:
        """The x-amz-bucket-region S3 sends with this rule's answer: a 301 names the bucket's region."""
        return (self.region or OTHER_REGION) if self.action == "fail" and int(self.status) == 301 else None

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
    retired_ms: int | None = None
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
    wire; the Python sink's simulated S3 (adapters.s3.memory) to calls in memory."""

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
            st = self._rules[rule_id]
            st.retired, st.retired_ms = True, st.retired_ms or self.now()

    def release(self, rule_id: str | None = None) -> None:
        """Let hung requests go on to the S3 server: those of `rule_id`, or of every hang rule.
        A released hang rule fires no more."""
        with self._lock:
            if rule_id is not None and rule_id not in self._rules:
                raise KeyError(f"no rule {rule_id!r}; rules: {sorted(self._rules)}")
            for rid, st in self._rules.items():
                if rule_id is not None and rid != rule_id:
                    continue
                if st.rule.action == "hang" and not st.retired:
                    st.retired, st.retired_ms = True, self.now()
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
        params.update(rule_id=st.rule_id, fired_count=len(st.firings), matched=st.seen, armed_ms=st.added_ms,
                      retired_ms=st.retired_ms,
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
            detail += f" -> {r.status} {r.error_code()}" + {"applied": " after S3 applied it",
                                                            "aborted": " after its upload was aborted"}.get(r.state, "")
        elif r.action == "reset":
            detail += " -> connection reset" + (" in the answer (S3 applied it)" if r.forward else " mid-request")
        elif r.action == "stall":
            detail += " -> S3 applied it; the answer stopped mid-body"
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
